"""The OpenAPI document with this host's examples in it (:mod:`toshokan.faces.spec.samples`).

The path parameters take the sampled slugs as their ``example``, which Swagger
UI's "Try it out" fills in, so Execute sends a request this host answers; each
operation's answer shows what the host answered, and each error status the
Error object it gives, rather than schemas filled with generated strings.
"""

import copy
from typing import Any

from toshokan.faces.spec.samples import Sample

#: The operation each path's sampled answer belongs to.
ANSWERS = {
    "/": "manifest",
    "/{source}": "configuration",
    "/{source}/search": "search",
    "/{source}/{manga}": "manga",
    "/{source}/{manga}/chapters": "chapters",
    "/{source}/{manga}/chapters/{chapter}": "pages",
}
#: What the host answers whatever it serves.
FIXED = {
    "/{source}/health": {"status": "ok"},
    "/{source}/ping": {"status": "ok", "latencyMs": 42},
    "/{source}/authenticate": {"success": True, "headers": {"Authorization": "Basic cmVhZGVy..."}},
    # With nothing sampled, an empty page still shows that pages count from 1.
    "/{source}/search": {"results": [], "page": 1, "more": False},
}
#: The Error object's ``code`` for each status, and a message as the host words one.
ERRORS = {
    400: ("INVALID_REQUEST", "sort 'views' is not supported; allowed: relevance, title."),
    401: ("INVALID_CREDENTIALS", "This source requires authentication."),
    405: ("INVALID_REQUEST", "This path does not accept this method."),
    408: ("INVALID_REQUEST", "The request body did not arrive in time."),
    413: ("INVALID_REQUEST", "The request body is over 65536 bytes."),
    429: ("RATE_LIMITED", "Too many requests; try again in 12 seconds."),
    431: ("INVALID_REQUEST", "The request headers are over the host's limits."),
    500: ("INTERNAL_ERROR", "The host failed to answer; the failure is logged."),
    502: ("UPSTREAM_ERROR", "The upstream failed with HTTP 503."),
    504: ("UPSTREAM_TIMEOUT", "The upstream did not answer in time."),
}
#: A 404 is about the last slug of its path.
NOT_FOUND = {
    "source": ("SOURCE_NOT_FOUND", "No source has the slug 'nowhere'."),
    "manga": ("MANGA_NOT_FOUND", "The source has no manga with this slug."),
    "chapter": ("CHAPTER_NOT_FOUND", "The manga has no chapter with this slug."),
}


def described(document: dict[str, Any], sample: Sample) -> dict[str, Any]:
    """A copy of ``document`` whose parameters, bodies and answers are ``sample``'s."""
    document = copy.deepcopy(document)
    slugs = {"source": sample.source, "manga": sample.manga, "chapter": sample.chapter}
    for path, operations in document["paths"].items():
        if path not in ANSWERS and path not in FIXED:
            continue  # another face's endpoints, which describe themselves
        for operation in operations.values():
            for parameter in operation["parameters"]:
                if slugs.get(parameter["name"]):
                    parameter["example"] = slugs[parameter["name"]]
            if path == "/{source}/search" and sample.searches:
                body = operation["requestBody"]["content"]["application/json"]
                body["examples"] = sample.searches
            for status, response in operation["responses"].items():
                content = response["content"]["application/json"]
                if status == "200":
                    answer = sample.answers.get(ANSWERS.get(path, ""), FIXED.get(path))
                    if answer is not None:
                        content["example"] = answer
                    continue
                content["example"] = error_example(path, operation, int(status))
    return document


def error_example(path: str, operation: dict[str, Any], status: int) -> dict[str, Any]:
    names = [parameter["name"] for parameter in operation["parameters"]]
    code, message = NOT_FOUND[names[-1]] if status == 404 and names else ERRORS[status]
    error = {"code": code, "message": message}
    return (
        {"success": False, "error": error} if path == "/{source}/authenticate" else {"error": error}
    )
