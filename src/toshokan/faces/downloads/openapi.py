"""The downloads API in the host's OpenAPI document: its paths, bodies and answers."""

from typing import Any

from toshokan.core.downloads import ACTIONS, MOVES
from toshokan.faces.downloads.routes import PREFIX

ERROR = {"$ref": "#/components/schemas/ErrorResponse"}
STAMP = {"type": ["string", "null"], "format": "date-time"}
STATES = ["queued", "running", "held", "done", "failed", "cancelled"]

DOWNLOAD = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "source": {"type": "string"},
        "manga": {"type": "string"},
        "chapter": {"type": "string"},
        "seriesTitle": {"type": "string"},
        "title": {"type": "string"},
        "number": {"type": "number"},
        "language": {"type": "string"},
        "scanlator": {"type": "string"},
        "state": {
            "type": "string",
            "enum": STATES,
            "description": "held: paused by a person; failed: see reason and error (retryable); "
            "cancelled: never queued again by a check",
        },
        "pages": {"type": ["integer", "null"]},
        "pagesDone": {"type": "integer", "description": "the chapter's progress bar"},
        "bytes": {"type": "integer"},
        "attempts": {"type": "integer"},
        "nextTry": STAMP,
        "reason": {
            "type": ["string", "null"],
            "description": "upstream-error, rate-limited, upstream-timeout, gone, bad-image, "
            "too-large, failed",
        },
        "error": {"type": ["string", "null"]},
        "path": {"type": ["string", "null"], "description": "the kept file, in the keep folder"},
        "added": STAMP,
        "finished": STAMP,
    },
}
QUEUE = {
    "type": "object",
    "properties": {
        "paused": {
            "type": ["string", "null"],
            "enum": ["operator", "no-space", "not-writable", "reader", None],
            "description": "why the queue is paused (null: it runs); no-space and not-writable "
            "are the keep folder's, and the queue resumes by itself within a minute of the "
            "folder taking files again; reader: the reader paused their own downloads",
        },
        "message": {"type": ["string", "null"]},
        "since": STAMP,
    },
}
LISTING = {
    "type": "object",
    "properties": {
        "queue": QUEUE,
        "own": {
            **QUEUE,
            "description": "whether you paused your own downloads (paused: reader); a chapter "
            "another reader keeps too still runs for them",
        },
        "operator": {"type": "boolean", "description": "true: the whole queue is shown"},
        "everySeries": {
            "type": "array",
            "description": "keeps of every series a reader follows from a source "
            "(`/_/follows/sources/{source}/keep`), with their filters: yours, or every "
            "reader's when the whole queue is shown",
            "items": {
                "type": "object",
                "properties": {
                    "reader": {"type": "string"},
                    "source": {"type": "string"},
                    "languages": {"type": "array", "items": {"type": "string"}},
                    "groups": {"type": "array", "items": {"type": "string"}},
                    "onlyUnread": {"type": "boolean"},
                    "since": STAMP,
                },
            },
        },
        "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
        "failures": {"type": "object", "additionalProperties": {"type": "integer"}},
        "progress": {
            "type": "object",
            "properties": {
                "kept": {"type": "integer"},
                "waiting": {"type": "integer"},
                "share": {"type": "number", "minimum": 0, "maximum": 1},
            },
            "description": "the overall progress bar: chapters kept since the queue was last "
            "empty, against those and the ones waiting",
        },
        "downloads": {"type": "array", "items": DOWNLOAD},
    },
}
DOWNLOAD_PARAMETER = {
    "name": "download",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "maxLength": 64},
}
DESCRIBED = {
    400: "INVALID_REQUEST: a malformed body or parameter, or an action the download's state "
    "does not allow",
    401: "INVALID_CREDENTIALS: sign in as one of the host's readers",
    404: "No such download (or not one of the series you keep)",
    409: "CONFLICT: too late to cancel or hold: the chapter is being put into the library, "
    "or is kept already",
    413: "INVALID_REQUEST: the body is over the host's limit",
    429: "RATE_LIMITED",
}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _operation(
    summary: str,
    answer: dict[str, Any],
    errors: tuple[int, ...],
    *,
    body: tuple[dict[str, Any], dict[str, Any]] | None = None,
    parameters: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    responses: dict[str, Any] = {"200": _json(answer, "Success")}
    for code in (*errors, 401, 429):
        responses[str(code)] = _json(ERROR, DESCRIBED[code])
    operation: dict[str, Any] = {
        "summary": summary,
        "operationId": "downloads_" + summary.lower().replace(" ", "_"),
        "tags": ["downloads"],
        "parameters": parameters or [],
        "responses": responses,
    }
    if body is not None:
        schema, example = body
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": schema, "example": example}},
        }
    return operation


def downloads_paths() -> dict[str, Any]:
    """The downloads API's paths, for the host's OpenAPI document."""
    query = [
        {
            "name": "limit",
            "in": "query",
            "schema": {"type": "integer", "minimum": 1, "maximum": 500},
        },
        {
            "name": "offset",
            "in": "query",
            "schema": {"type": "integer", "minimum": 0, "maximum": 100000},
        },
        {
            "name": "mine",
            "in": "query",
            "schema": {"type": "string", "enum": ["0", "1"]},
            "description": "1: an operator's own downloads only",
        },
    ]
    steer = {
        "type": "object",
        "additionalProperties": False,
        "required": ["action"],
        "properties": {"action": {"type": "string", "enum": [*ACTIONS, *MOVES]}},
    }
    pause = {
        "type": "object",
        "additionalProperties": False,
        "required": ["paused"],
        "properties": {
            "paused": {"type": "boolean"},
            "own": {
                "type": ["boolean", "null"],
                "description": "true: your own downloads; false: the host's whole queue (an "
                "operator's); unsaid: your own unless you are an operator",
            },
        },
    }
    return {
        PREFIX: {"get": _operation("The queue", LISTING, (400,), parameters=query)},
        f"{PREFIX}/queue": {
            "put": _operation(
                "Pause or resume the queue", QUEUE, (400, 413), body=(pause, {"paused": True})
            )
        },
        f"{PREFIX}/retry": {
            "post": _operation(
                "Retry every failed download",
                {"type": "object", "properties": {"retried": {"type": "integer"}}},
                (),
            )
        },
        f"{PREFIX}/{{download}}": {
            "get": _operation("One download", DOWNLOAD, (404,), parameters=[DOWNLOAD_PARAMETER]),
            "post": _operation(
                "Steer a download",
                DOWNLOAD,
                (400, 404, 409, 413),
                body=(steer, {"action": "top"}),
                parameters=[DOWNLOAD_PARAMETER],
            ),
        },
    }
