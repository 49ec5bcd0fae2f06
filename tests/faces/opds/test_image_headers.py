"""Every image answer names each header once, whichever route serves it.

A header sent twice (``X-Content-Type-Options: nosniff`` from a route and
again from the edge) is read by some clients as a list, by others as an error.
"""

from collections import Counter
from urllib.parse import urlsplit

import httpx
import pytest

from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio

LOCKED = httpx.BasicAuth("reader", "open sesame")


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + ("?" + parts.query if parts.query else "")


async def first_chapter(
    client: httpx.AsyncClient, slug: str, auth: httpx.Auth | None = None
) -> tuple[dict[str, str], str, list[str]]:
    """The first search result of source ``slug``, its first chapter's slug and page URLs."""
    sort = (await client.get(f"/{slug}", auth=auth)).json()["search"]["sort"][0]
    body = {"page": 1, "sort": sort}
    found = await client.post(f"/{slug}/search", json=body, auth=auth or httpx.USE_CLIENT_DEFAULT)
    entry = found.json()["results"][0]
    chapters = (await client.get(f"/{slug}/{entry['slug']}/chapters", auth=auth)).json()
    chapter = chapters[0]["slug"]
    pages = await client.get(f"/{slug}/{entry['slug']}/chapters/{chapter}", auth=auth)
    return entry, chapter, pages.json()


def assert_each_header_once(answer: httpx.Response, route: str) -> None:
    assert answer.status_code in (200, 206, 304), (route, answer.status_code, answer.text[:200])
    names = Counter(name.lower() for name, _ in answer.headers.raw)
    assert not [n for n, times in names.items() if times > 1], (route, answer.headers.raw)
    assert answer.headers["x-content-type-options"] == "nosniff", route


async def test_page_and_image_answers_name_each_header_once(both_host: ServedHost) -> None:
    client = both_host.client
    pipeline = both_host.core.images
    answers: dict[str, httpx.Response] = {}
    for slug, auth in (("local", None), ("shelf", LOCKED), ("mangadex", None)):
        entry, chapter, pages = await first_chapter(client, slug, auth)
        manga = entry["slug"]
        opds = f"/_/opds/{slug}/series/{manga}/{chapter}/pages/0"
        answers[f"{slug} OPDS stream"] = await client.get(opds, auth=auth)
        answers[f"{slug} OPDS stream resized"] = await client.get(f"{opds}?maxWidth=50", auth=auth)
        signed = pipeline.signed_url("http://testserver", slug, pages[0])
        answers[f"{slug} signed image"] = await client.get(signed)
        app = f"/_/alethia/{slug}"
        app_chapters = (await client.get(f"{app}/{manga}/chapters", auth=auth)).json()
        app_chapter = app_chapters[0]["slug"]
        app_pages = (await client.get(f"{app}/7/chapters/{app_chapter}", auth=auth)).json()
        answers[f"{slug} Alethia page"] = await client.get(app_pages[0])
        if slug == "mangadex":
            continue  # its pages and covers are MangaDex's own URLs, not the host's
        page = path_of(pages[0])
        answers[f"{slug} page"] = first = await client.get(page)
        answers[f"{slug} page range"] = await client.get(page, headers={"Range": "bytes=0-9"})
        etag = {"If-None-Match": first.headers["etag"]}
        answers[f"{slug} page not modified"] = await client.get(page, headers=etag)
        answers[f"{slug} thumbnail"] = await client.get(path_of(entry["cover"]))
        details = (await client.get(f"/{slug}/{manga}", auth=auth)).json()
        answers[f"{slug} cover"] = await client.get(path_of(details["covers"][0]))
    answers["icon"] = await client.get("/_/local/icon.png")
    for route, answer in answers.items():
        assert_each_header_once(answer, route)
