"""Every answer carries each security header once, whoever makes it: the application, a
replay, a 304, or the edge's own refusals.

A header sent twice is read by some clients as a list and by others as an error; one
missing lets a browser guess a type (an "image" from a hostile archive rendered as HTML).
"""

from collections import Counter

import httpx
import pytest

pytestmark = pytest.mark.anyio

#: The security headers the host sends, with the one value each carries.
SECURITY_HEADERS = {"x-content-type-options": "nosniff"}
ORIGIN = "https://reader.example"
SEARCH = {"page": 1, "sort": "title"}


async def test_every_answer_carries_each_security_header_once(make_host):
    answers: dict[str, httpx.Response] = {}
    settings = {
        "limits": {"rate_limit": 40, "max_body_bytes": 2048, "max_headers": 20},
        "cors": {"origins": [ORIGIN]},
    }
    async with make_host(**settings) as host:
        client = host.client
        answers["manifest"] = await client.get("/")
        answers["source"] = first = await client.get("/catalog")
        answers["source replayed"] = await client.get("/catalog")
        etag = {"If-None-Match": first.headers["etag"]}
        answers["source not modified"] = await client.get("/catalog", headers=etag)
        answers["search"] = await client.post("/catalog/search", json=SEARCH)
        answers["health"] = await client.get("/catalog/health")
        answers["unknown manga"] = await client.get("/catalog/no-such-manga")
        answers["no route"] = await client.get("/catalog/a/b/c/d/e")
        answers["wrong method"] = await client.delete("/catalog/search")
        answers["authenticate refused"] = await client.post(
            "/catalog/authenticate", content=b"not json"
        )
        answers["body too large"] = await client.post("/catalog/search", content=b" " * 4096)
        answers["too many headers"] = await client.get(
            "/catalog", headers={f"x-h{n}": "v" for n in range(30)}
        )
        answers["preflight"] = await client.options(
            "/catalog/search",
            headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST"},
        )
        answers["cross-origin"] = await client.get("/catalog", headers={"Origin": ORIGIN})
        answers["source's image"] = await client.get("/_/catalog/pages/1")
        answers["web reader"] = await client.get("/_/web")
        answers["OPDS"] = await client.get("/_/opds")
        answers["Alethia"] = await client.get("/_/alethia")
        answers["docs"] = await client.get("/_/docs")
        answers["OpenAPI"] = await client.get("/openapi.json")
        for _ in range(40):
            limited = await client.get("/catalog")
        answers["rate limited"] = limited
    assert answers["rate limited"].status_code == 429
    assert answers["source not modified"].status_code == 304
    assert answers["preflight"].status_code == 204
    for route, answer in answers.items():
        names = Counter(name.lower() for name, _ in answer.headers.raw)
        for name, value in SECURITY_HEADERS.items():
            assert names[name.encode()] == 1, (route, answer.status_code, answer.headers.raw)
            assert answer.headers[name] == value, route
