"""The OpenAPI 3.1 document of the JSON interface, generated from the spec's models.

Each operation lists the status codes it really answers with and their
bodies: the spec object on success, the Error object (or the authenticate
endpoint's failure form) otherwise.
"""

from typing import Any

from pydantic.json_schema import models_json_schema

from toshokan import __version__
from toshokan.core import Credentials
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
    Credentials,
    AuthResponse,
    ErrorResponse,
)
ERRORS = {
    400: "Malformed request: INVALID_REQUEST or MISSING_FIELDS",
    401: "INVALID_CREDENTIALS: the source requires authentication",
    404: "SOURCE_NOT_FOUND, MANGA_NOT_FOUND, CHAPTER_NOT_FOUND or NOT_FOUND",
    405: "INVALID_REQUEST: wrong method for this path",
    413: "INVALID_REQUEST: the body is over the host's limit",
    429: "RATE_LIMITED, with Retry-After",
    500: "INTERNAL_ERROR",
    502: "UPSTREAM_ERROR",
    504: "UPSTREAM_TIMEOUT",
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
    body: str | None = None,
    error_schema: str = "ErrorResponse",
) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "summary": summary,
        "operationId": summary.lower().replace(" ", "_"),
        "parameters": [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in path_params
        ],
        "responses": {
            "200": _json(answer, "Success"),
            **{str(code): _json(_ref(error_schema), ERRORS[code]) for code in errors},
        },
    }
    if body:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": _ref(body)}},
        }
    return operation


def openapi_document() -> dict[str, Any]:
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
                (400, 401, 404, 413, 429, 502, 504),
                body="Credentials",
                error_schema="AuthResponse",
            )
        },
        "/{source}/search": {
            "post": _operation(
                "Search", _ref("SearchResponse"), (400, 413, *content), body="SearchRequest"
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
