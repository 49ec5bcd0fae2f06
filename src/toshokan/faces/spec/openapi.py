"""The OpenAPI 3.1 document of the JSON interface, generated from the spec's models.

Each operation lists the status codes it really answers with and their
bodies: the spec object on success, the Error object (or the authenticate
endpoint's failure form) otherwise. Every bound the host enforces on what a
client sends is published: in the schemas where JSON Schema can say it (the
search models carry theirs), in the descriptions where it cannot (body size
and nesting). Each body has examples the host accepts, which the docs page's
"Try it out" sends as they are.
"""

from functools import cache
from typing import Any

from pydantic.json_schema import models_json_schema

from toshokan import __version__
from toshokan.core.bodies import MAX_JSON_DEPTH
from toshokan.models import (
    AuthResponse,
    Chapter,
    ErrorResponse,
    Health,
    HostManifest,
    Manga,
    Ping,
    SearchRequest,
    SearchResponse,
    SourceConfiguration,
)
from toshokan.models.auth import AUTH_FIELDS
from toshokan.models.base import SLUG_PATTERN, SOURCE_SLUG_PATTERN

REF = "#/components/schemas/{model}"
MODELS = (
    HostManifest,
    SourceConfiguration,
    Health,
    Ping,
    SearchRequest,
    SearchResponse,
    Manga,
    Chapter,
    AuthResponse,
    ErrorResponse,
)
ERRORS = {
    400: "Malformed request: INVALID_REQUEST or MISSING_FIELDS",
    401: "INVALID_CREDENTIALS: the source requires authentication",
    404: "SOURCE_NOT_FOUND, MANGA_NOT_FOUND, CHAPTER_NOT_FOUND or NOT_FOUND",
    405: "INVALID_REQUEST: wrong method for this path",
    408: "INVALID_REQUEST: the body did not arrive within the host's time",
    413: "INVALID_REQUEST: the body is over the host's limit",
    431: "INVALID_REQUEST: the request headers are over the host's limits",
    429: "RATE_LIMITED, with Retry-After",
    500: "INTERNAL_ERROR",
    502: "UPSTREAM_ERROR",
    504: "UPSTREAM_TIMEOUT",
}


#: Path parameters are slugs, accepted exactly in the alphabet they are emitted in (else 404).
PATH_PATTERNS = {"source": SOURCE_SLUG_PATTERN, "manga": SLUG_PATTERN, "chapter": SLUG_PATTERN}


def body_bounds(max_body_bytes: int) -> str:
    return (
        f"At most {max_body_bytes} bytes (this host's `[limits] max_body_bytes`; 413 beyond), "
        f"nesting at most {MAX_JSON_DEPTH} levels."
    )


#: What an authenticate body may carry: the fields the source's ``auth.fields`` names.
CREDENTIALS = {
    "type": "object",
    "description": "The fields named by the source's `auth.fields` (GET /{source}), each a "
    "string that is not blank; other fields are ignored. A source of type `none` accepts any "
    "JSON body, `{}` included.",
    "properties": {
        field: {"type": "string", "pattern": r"\S"}
        for field in dict.fromkeys(f for fields in AUTH_FIELDS.values() for f in fields)
    },
}
CREDENTIAL_EXAMPLES = {
    "none": {"summary": "A source of auth type none", "value": {}},
    "basic": {
        "summary": "basic or session: a user name and password",
        "value": {"username": "reader", "password": "correct horse battery staple"},
    },
    "api_key": {"summary": "api_key", "value": {"apiKey": "your-api-key"}},
    "bearer": {"summary": "bearer", "value": {"token": "your-token"}},
    "cookie": {"summary": "cookie", "value": {"cookie": "session=your-session-cookie"}},
}
SEARCH_EXAMPLES = {
    "browse": {
        "summary": "Browse everything, most relevant first",
        "value": {"query": "", "page": 1, "limit": 20, "sort": "relevance", "direction": "desc"},
    },
    "titles": {
        "summary": "Search titles, A to Z",
        "value": {"query": "sample", "page": 1, "sort": "title", "direction": "asc"},
    },
}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": REF.format(model=name)}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _operation(
    summary: str,
    answer: dict[str, Any],
    errors: tuple[int, ...],
    *,
    path_params: tuple[str, ...] = ("source",),
    body: tuple[dict[str, Any], dict[str, Any]] | None = None,
    max_body_bytes: int = 0,
    error_schema: str = "ErrorResponse",
) -> dict[str, Any]:
    """One operation; ``body`` is the request body's schema and its examples."""
    operation: dict[str, Any] = {
        "summary": summary,
        "operationId": summary.lower().replace(" ", "_"),
        "parameters": [
            {
                "name": name,
                "in": "path",
                "required": True,
                "schema": {"type": "string", "pattern": PATH_PATTERNS[name]},
            }
            for name in path_params
        ],
        "responses": {
            "200": _json(answer, "Success"),
            **{str(code): _json(_ref(error_schema), ERRORS[code]) for code in (*errors, 431)},
        },
    }
    if body:
        schema, examples = body
        operation["requestBody"] = {
            "required": True,
            "description": body_bounds(max_body_bytes),
            "content": {"application/json": {"schema": schema, "examples": examples}},
        }
    return operation


@cache
def openapi_document(max_body_bytes: int) -> dict[str, Any]:
    """The OpenAPI document of a host taking bodies of at most ``max_body_bytes``."""
    _, definitions = models_json_schema(
        [(model, "serialization") for model in MODELS], ref_template=REF
    )
    content = (401, 404, 429, 500, 502, 504)
    chapter_list = {"type": "array", "items": _ref("Chapter")}
    page_list = {"type": "array", "items": {"type": "string", "format": "uri"}}
    paths = {
        "/": {"get": _operation("Host manifest", _ref("HostManifest"), (429,), path_params=())},
        "/{source}": {
            "get": _operation("Source configuration", _ref("SourceConfiguration"), (404, 429))
        },
        "/{source}/health": {"get": _operation("Source health", _ref("Health"), (404,))},
        "/{source}/ping": {"get": _operation("Upstream connectivity", _ref("Ping"), (404, 429))},
        "/{source}/authenticate": {
            "post": _operation(
                "Authenticate",
                _ref("AuthResponse"),
                (400, 401, 404, 408, 413, 429, 500, 502, 504),
                body=(CREDENTIALS, CREDENTIAL_EXAMPLES),
                max_body_bytes=max_body_bytes,
                error_schema="AuthResponse",
            )
        },
        "/{source}/search": {
            "post": _operation(
                "Search",
                _ref("SearchResponse"),
                (400, 408, 413, *content),
                body=(_ref("SearchRequest"), SEARCH_EXAMPLES),
                max_body_bytes=max_body_bytes,
            )
        },
        "/{source}/{manga}": {
            "get": _operation(
                "Manga details", _ref("Manga"), (405, *content), path_params=("source", "manga")
            )
        },
        "/{source}/{manga}/chapters": {
            "get": _operation(
                "Chapter list", chapter_list, content, path_params=("source", "manga")
            )
        },
        "/{source}/{manga}/chapters/{chapter}": {
            "get": _operation(
                "Chapter pages", page_list, content, path_params=("source", "manga", "chapter")
            )
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "toshokan",
            "version": __version__,
            "description": "A content host: every source in one JSON interface.",
        },
        "paths": paths,
        "components": {"schemas": definitions.get("$defs", {})},
    }
