"""Every upstream fault of the audit, as scripts for the fake MangaDex.

Shared by the fault tests (``test_faults.py``) and ``bench/upstream_faults.py``:
each :class:`Fault` is a :meth:`FakeMangaDex.script` recipe, the spec status and
code the host must answer with, and the content endpoints it applies to.
"""

from dataclasses import dataclass, field
from typing import Any

import httpx

from toshokan.testing import ServedHost

ENDPOINTS = ("search", "manga", "chapters", "pages")
#: The first upstream request each endpoint makes.
FIRST_CALL = {
    "search": r"^/manga$",
    "manga": r"^/manga/[^/]+$",
    "chapters": r"/feed$",
    "pages": r"^/chapter/",
}
COLLECTION = b'{"result":"ok","response":"collection","limit":10,"offset":0,'
DEEP = b"[" * 100_000 + b"]" * 100_000


@dataclass
class Fault:
    name: str
    how: dict[str, Any]
    status: int
    code: str
    endpoints: tuple[str, ...] = ENDPOINTS
    #: Per endpoint, a body replacing the fault's own ``raw`` (shapes differ by endpoint).
    raw_for: dict[str, bytes] = field(default_factory=dict)

    def recipe(self, endpoint: str) -> dict[str, Any]:
        """:meth:`FakeMangaDex.script` keywords for this fault at ``endpoint``."""
        how = dict(self.how)
        if endpoint in self.raw_for:
            how["raw"] = self.raw_for[endpoint]
        return how


def entity(attributes: bytes) -> bytes:
    return b'{"result":"ok","response":"entity","data":{"id":"x","type":"t","attributes":' + (
        attributes + b',"relationships":[]}}'
    )


FAULTS = [
    Fault(
        "retry-after soon", {"status": 429, "headers": {"Retry-After": "soon"}}, 429, "RATE_LIMITED"
    ),
    Fault(
        "retry-after inf", {"status": 429, "headers": {"Retry-After": "inf"}}, 429, "RATE_LIMITED"
    ),
    Fault(
        "retry-after nan", {"status": 429, "headers": {"Retry-After": "nan"}}, 429, "RATE_LIMITED"
    ),
    Fault(
        "retry-after 1e400",
        {"status": 429, "headers": {"Retry-After": "1e400"}},
        429,
        "RATE_LIMITED",
    ),
    Fault(
        "retry-after an hour",
        {"status": 429, "headers": {"Retry-After": "3600"}},
        429,
        "RATE_LIMITED",
    ),
    Fault(
        "retry-after past the deadline",
        {"status": 429, "headers": {"Retry-After": "3"}},
        429,
        "RATE_LIMITED",
    ),
    Fault(
        "gzip header on a plain body",
        {
            "status": 200,
            "raw": COLLECTION + b'"data":[],"total":0}',
            "headers": {"Content-Encoding": "gzip"},
        },
        502,
        "UPSTREAM_ERROR",
    ),
    Fault(
        "redirect loop",
        {"status": 302, "raw": b"", "headers": {"Location": "{path}"}},
        502,
        "UPSTREAM_ERROR",
    ),
    Fault("JSON nested 100,000 deep", {"status": 200, "raw": DEEP}, 502, "UPSTREAM_ERROR"),
    Fault(
        "total of 1e400",
        {"status": 200, "raw": COLLECTION + b'"data":[],"total":1e400}'},
        502,
        "UPSTREAM_ERROR",
        ("search", "chapters"),
    ),
    Fault(
        'total of "abc"',
        {"status": 200, "raw": COLLECTION + b'"data":[],"total":"abc"}'},
        502,
        "UPSTREAM_ERROR",
        ("search", "chapters"),
    ),
    Fault(
        "items of the wrong shape",
        {"status": 200, "raw": COLLECTION + b'"data":[1,"two",null,[]],"total":4}'},
        502,
        "UPSTREAM_ERROR",
        ("search", "chapters"),
    ),
    Fault(
        "attributes is a string",
        {"status": 200, "raw": b""},
        502,
        "UPSTREAM_ERROR",
        raw_for={
            "search": COLLECTION
            + b'"data":[{"id":"x","type":"manga","attributes":"oops"}],"total":1}',
            "manga": entity(b'"oops"'),
            "chapters": COLLECTION
            + b'"data":[{"id":"x","type":"chapter","attributes":"oops"}],"total":1}',
            "pages": entity(b'"oops"'),
        },
    ),
    Fault(
        "not UTF-8",
        {"status": 200, "raw": COLLECTION + b'"data":[],"total":0,"x":"\xff"}'},
        502,
        "UPSTREAM_ERROR",
    ),
    Fault(
        "error body in a charset it is not",
        {
            "status": 500,
            "raw": b"oops\xff",
            "headers": {"Content-Type": "text/plain; charset=utf-16"},
        },
        502,
        "UPSTREAM_ERROR",
    ),
    Fault(
        "HTML error page",
        {
            "status": 503,
            "raw": b"<html><body><h1>503 Service Unavailable</h1><script>x()</script></body></html>",
            "headers": {"Content-Type": "text/html"},
        },
        502,
        "UPSTREAM_ERROR",
    ),
    Fault(
        "an upstream that never answers", {"status": 200, "delay": 60.0}, 504, "UPSTREAM_TIMEOUT"
    ),
    Fault("a byte a second", {"wire": "drip", "delay": 1.0}, 504, "UPSTREAM_TIMEOUT"),
    Fault("connection reset", {"wire": "reset"}, 502, "UPSTREAM_ERROR"),
    Fault("truncated body", {"wire": "truncate"}, 502, "UPSTREAM_ERROR"),
]


async def ask(host: ServedHost, endpoint: str, manga_id: str, chapter_id: str) -> httpx.Response:
    """One request to a content ``endpoint`` of the source served as ``mangadex``."""
    client = host.client
    if endpoint == "search":
        return await client.post("/mangadex/search", json={"page": 1, "sort": "latest"})
    if endpoint == "manga":
        return await client.get(f"/mangadex/{manga_id}")
    if endpoint == "chapters":
        return await client.get(f"/mangadex/{manga_id}/chapters")
    return await client.get(f"/mangadex/{manga_id}/chapters/{chapter_id}")
