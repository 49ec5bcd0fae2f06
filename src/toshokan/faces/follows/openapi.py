"""The follows API in the host's OpenAPI document: its paths, bodies and answers."""

from typing import Any

from toshokan.core.downloads.service import MAX_BACKFILL, MAX_FILTER_LENGTH, MAX_FILTERS
from toshokan.core.follows.notify import MAX_SERIES, MAX_URL
from toshokan.core.follows.service import MAX_MARKED
from toshokan.faces.follows.routes import PREFIX
from toshokan.faces.follows.shapes import MAX_SLUG
from toshokan.models.base import (
    SLUG_PATTERN,
    SLUG_REGEX,
    SOURCE_SLUG_PATTERN,
    SOURCE_SLUG_REGEX,
)

ERROR = {"$ref": "#/components/schemas/ErrorResponse"}
STAMP = {"type": ["string", "null"], "format": "date-time"}
SLUG = {"type": "string", "minLength": 1, "maxLength": MAX_SLUG}

FOLLOW = {
    "type": "object",
    "properties": {
        "source": {"type": "string"},
        "manga": {"type": "string"},
        "title": {"type": "string"},
        "publication": {"type": "string"},
        "since": STAMP,
        "state": {
            "type": "string",
            "enum": ["new", "ok", "gone", "failing"],
            "description": "new: not checked yet; gone: the source says the series no longer "
            "exists (kept, marked); failing: the last check failed (see error).",
        },
        "served": {"type": "boolean", "description": "false: the source is not served now"},
        "lastCheck": STAMP,
        "nextCheck": STAMP,
        "error": {"type": ["string", "null"]},
        "unread": {"type": "integer", "minimum": 0},
    },
}
UPDATE = {
    "type": "object",
    "properties": {
        "source": {"type": "string"},
        "manga": {"type": "string"},
        "chapter": {"type": "string"},
        "title": {"type": "string"},
        "number": {"type": "number"},
        "language": {"type": "string"},
        "scanlator": {"type": "string"},
        "date": STAMP,
        "found": STAMP,
        "kind": {"type": "string", "enum": ["chapter", "version"]},
        "removed": STAMP,
        "seriesTitle": {"type": "string"},
        "unread": {"type": "boolean"},
    },
}
TARGET = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "url": {"type": "string", "description": "redacted: never the URL whole"},
        "series": {"type": "array", "items": {"type": "string"}},
        "delivered": STAMP,
        "failingSince": STAMP,
        "error": {"type": ["string", "null"]},
    },
}
KEEP = {
    "type": "object",
    "properties": {
        "source": {"type": "string"},
        "manga": {"type": "string"},
        "languages": {"type": "array", "items": {"type": "string"}},
        "groups": {"type": "array", "items": {"type": "string"}},
        "backfill": {"type": "integer"},
        "onlyUnread": {"type": "boolean"},
        "since": STAMP,
    },
}
KEEP_EVERY = {
    "type": "object",
    "properties": {
        "source": {"type": "string"},
        "languages": {"type": "array", "items": {"type": "string"}},
        "groups": {"type": "array", "items": {"type": "string"}},
        "onlyUnread": {"type": "boolean"},
        "since": STAMP,
    },
}
FILTER = {"type": "string", "minLength": 1, "maxLength": MAX_FILTER_LENGTH}
CHAPTER_NAME = {
    "type": "object",
    "additionalProperties": False,
    "required": ["source", "manga", "chapter"],
    "properties": {"source": SLUG, "manga": SLUG, "chapter": SLUG},
}
#: What a reader keeps of a series, or of every series of a source, alike.
KEEP_FILTERS: dict[str, Any] = {
    "languages": {
        "type": "array",
        "items": FILTER,
        "maxItems": MAX_FILTERS,
        "description": "languages kept (none: any)",
    },
    "groups": {
        "type": "array",
        "items": FILTER,
        "maxItems": MAX_FILTERS,
        "description": "groups preferred for a number, in order (none: any "
        "group; one version a number either way)",
    },
}
BODIES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "read": (
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "chapters": {"type": "array", "items": CHAPTER_NAME, "maxItems": MAX_MARKED},
                "all": {"type": "boolean"},
            },
        },
        {"all": True},
    ),
    "check": (
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {"source": SLUG, "manga": SLUG},
        },
        {},
    ),
    "keep": (
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                **KEEP_FILTERS,
                "backfill": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": MAX_BACKFILL,
                    "description": "how many of the newest chapters that exist already to keep",
                },
                "onlyUnread": {"type": "boolean"},
            },
        },
        {"languages": ["en"], "groups": ["Straw Hat Scans"], "backfill": 5},
    ),
    "keep-every": (
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                **KEEP_FILTERS,
                "onlyUnread": {"type": "boolean"},
            },
        },
        {"languages": ["en"], "groups": ["Straw Hat Scans"], "onlyUnread": True},
    ),
    "target": (
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["url"],
            "properties": {
                "url": {"type": "string", "minLength": 1, "maxLength": MAX_URL},
                "series": {
                    "type": "array",
                    "maxItems": MAX_SERIES,
                    "items": {"type": "string", "pattern": rf"^{SOURCE_SLUG_REGEX}/{SLUG_REGEX}$"},
                },
            },
        },
        {"url": "ntfy://ntfy.example.org/my-reading"},
    ),
}
SERIES_PARAMETERS = [
    {
        "name": "source",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "pattern": SOURCE_SLUG_PATTERN},
    },
    {
        "name": "manga",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "pattern": SLUG_PATTERN},
    },
]


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _operation(
    summary: str,
    status: int,
    answer: dict[str, Any] | None,
    errors: tuple[int, ...],
    *,
    body: str | None = None,
    parameters: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    described = {
        400: "INVALID_REQUEST: a malformed body or parameter",
        401: "INVALID_CREDENTIALS: sign in as one of the host's readers",
        404: "Not followed, or no such source, series, check or target",
        413: "INVALID_REQUEST: the body is over the host's limit",
        429: "RATE_LIMITED",
        502: "UPSTREAM_ERROR",
        504: "UPSTREAM_TIMEOUT",
    }
    responses: dict[str, Any] = {
        str(status): _json(answer, "Success") if answer else {"description": "Done"}
    }
    for code in (*errors, 401, 429):
        responses[str(code)] = _json(ERROR, described[code])
    operation: dict[str, Any] = {
        "summary": summary,
        "operationId": "follows_" + summary.lower().replace(" ", "_"),
        "tags": ["follows"],
        "parameters": parameters or [],
        "responses": responses,
    }
    if body is not None:
        schema, example = BODIES[body]
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": schema, "example": example}},
        }
    return operation


def _list(name: str, item: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": "array", "items": item}, **more}}


def follows_paths() -> dict[str, Any]:
    """The follows API's paths, for the host's OpenAPI document."""
    limit = {
        "name": "limit",
        "in": "query",
        "schema": {"type": "integer", "minimum": 1, "maximum": 100},
    }
    offset = {
        "name": "offset",
        "in": "query",
        "schema": {"type": "integer", "minimum": 0, "maximum": 10000},
    }
    unread = {"name": "unread", "in": "query", "schema": {"type": "string", "enum": ["0", "1"]}}
    batch = {"name": "batch", "in": "path", "required": True, "schema": {"type": "string"}}
    target = {"name": "target", "in": "path", "required": True, "schema": {"type": "string"}}
    return {
        PREFIX: {"get": _operation("List follows", 200, _list("follows", FOLLOW), ())},
        f"{PREFIX}/series/{{source}}/{{manga}}": {
            "get": _operation("One follow", 200, FOLLOW, (404,), parameters=SERIES_PARAMETERS),
            "put": _operation(
                "Follow", 201, FOLLOW, (400, 404, 502, 504), parameters=SERIES_PARAMETERS
            ),
            "delete": _operation("Unfollow", 204, None, (404,), parameters=SERIES_PARAMETERS),
        },
        f"{PREFIX}/series/{{source}}/{{manga}}/keep": {
            "get": _operation(
                "How a series is kept", 200, KEEP, (404,), parameters=SERIES_PARAMETERS
            ),
            "put": _operation(
                "Keep", 201, KEEP, (400, 404, 413), body="keep", parameters=SERIES_PARAMETERS
            ),
            "delete": _operation("Stop keeping", 204, None, (404,), parameters=SERIES_PARAMETERS),
        },
        f"{PREFIX}/sources/{{source}}/keep": {
            "get": _operation(
                "How every series followed from a source is kept",
                200,
                KEEP_EVERY,
                (404,),
                parameters=SERIES_PARAMETERS[:1],
            ),
            "put": _operation(
                "Keep every series followed from a source",
                201,
                KEEP_EVERY,
                (400, 404, 413),
                body="keep-every",
                parameters=SERIES_PARAMETERS[:1],
            ),
            "delete": _operation(
                "Stop keeping every series followed from a source",
                204,
                None,
                (404,),
                parameters=SERIES_PARAMETERS[:1],
            ),
        },
        f"{PREFIX}/updates": {
            "get": _operation(
                "Updates",
                200,
                _list("updates", UPDATE, more={"type": "boolean"}),
                (400,),
                parameters=[limit, offset, unread],
            )
        },
        f"{PREFIX}/read": {
            "post": _operation(
                "Mark read",
                200,
                {"type": "object", "properties": {"marked": {"type": "integer"}}},
                (400, 404, 413),
                body="read",
            )
        },
        f"{PREFIX}/checks": {
            "post": _operation(
                "Check now",
                202,
                {"type": "object", "properties": {"batch": {"type": "string"}}},
                (400, 404, 413),
                body="check",
            )
        },
        f"{PREFIX}/checks/{{batch}}": {
            "get": _operation("Check status", 200, {"type": "object"}, (404,), parameters=[batch])
        },
        f"{PREFIX}/targets": {
            "get": _operation("Notification targets", 200, _list("targets", TARGET), ()),
            "post": _operation("Add notification target", 201, TARGET, (400, 413), body="target"),
        },
        f"{PREFIX}/targets/{{target}}": {
            "delete": _operation(
                "Remove notification target", 204, None, (404,), parameters=[target]
            )
        },
    }
