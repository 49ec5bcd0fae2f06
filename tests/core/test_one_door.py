"""One door per request: a request for a source's content looks the source up once, reads its
configuration once and authorises the caller once, however many layers it passes (the OPDS
face, the core's page list, the image pipeline, the source's own image routes)."""

import inspect
import io
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

from tests.sources.mangadex.fake import API, AT_HOME, UPLOADS, FakeMangaDex
from toshokan.core import Core, HostedSource
from toshokan.core.authority import Authority
from toshokan.sdk import Source
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, serve_host

pytestmark = pytest.mark.anyio

READER = ("reader", "open sesame")


def jpeg() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 60), (20, 90, 160)).save(buffer, "JPEG")
    return buffer.getvalue()


class AtHome(httpx.AsyncBaseTransport):
    """The fake MangaDex API, and at-home servers answering every page with one JPEG (served to
    a PSE reader as it is)."""

    def __init__(self, fake: FakeMangaDex):
        self.api = fake.transport()
        self.hosts = {httpx.URL(AT_HOME).host, httpx.URL(UPLOADS).host}
        self.pages = 0
        self.body = jpeg()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host not in self.hosts:
            return await self.api.handle_async_request(request)
        self.pages += 1
        return httpx.Response(200, content=self.body, headers={"Content-Type": "image/jpeg"})


@pytest.fixture
def fake() -> FakeMangaDex:
    fake = FakeMangaDex()
    manga = fake.add_manga("pirates", "Pirate Voyage")
    fake.add_many_chapters(manga, 2, fake.add_group("Straw Hat Scans"))
    return fake


@pytest.fixture
async def host(tmp_path: Path, fake: FakeMangaDex) -> AsyncIterator[tuple[ServedHost, AtHome]]:
    """MangaDex, and a library that requires a name and password, on one host."""
    library = tmp_path / "library"
    write_demo_library(library, series=1, chapters=1, pages=2)
    locked = LocalSettings(
        root=library, watch=False, auth="basic", username=READER[0], password=READER[1]
    )
    upstream = AtHome(fake)
    async with serve_host(
        {
            "shelf": (LocalLibrary, locked),
            "mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS)),
        },
        upstream=upstream,
        data_dir=tmp_path / "data",
        limits={"rate_limit": 0},
    ) as served:
        yield served, upstream


@contextmanager
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Counts of the core's source lookups, configuration lookups and reads, and authorisations
    (the core's decision and the adapter's check), while the block runs."""
    counts: Counter[str] = Counter()

    def spy(owner: type, name: str, label: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)
        if inspect.iscoroutinefunction(original):

            @wraps(original)
            async def counting_async(*args: Any, **kwargs: Any) -> Any:
                counts[label] += 1
                return await original(*args, **kwargs)

            monkeypatch.setattr(owner, name, counting_async)
        else:

            @wraps(original)
            def counting(*args: Any, **kwargs: Any) -> Any:
                counts[label] += 1
                return original(*args, **kwargs)

            monkeypatch.setattr(owner, name, counting)

    spy(Core, "source", "lookups")
    spy(Core, "configuration", "configurations")
    spy(HostedSource, "configuration", "configuration reads")
    spy(Authority, "authorize", "authorisations")
    spy(Source, "authorize", "adapter checks")
    spy(Authority, "check_link", "links verified")
    yield counts
    monkeypatch.undo()


async def test_an_opds_page_of_a_mangadex_chapter_passes_each_layer_once(
    host: tuple[ServedHost, AtHome], fake: FakeMangaDex, monkeypatch: pytest.MonkeyPatch
) -> None:
    served, upstream = host
    chapter = next(iter(fake.chapters.values()))
    page = f"/_/opds/mangadex/series/{chapter.manga_id}/{chapter.id}/pages/0"
    with counted(monkeypatch) as counts:
        answer = await served.client.get(page)  # cold: nothing about the chapter is known
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "image/jpeg" and upstream.pages == 1
    assert counts["lookups"] == 1
    assert counts["configurations"] == 1 and counts["configuration reads"] == 1
    assert counts["authorisations"] == 1


async def test_a_locked_library_page_is_read_by_the_source_with_one_authorisation(
    host: tuple[ServedHost, AtHome], monkeypatch: pytest.MonkeyPatch
) -> None:
    served, _ = host
    auth = httpx.BasicAuth(*READER)
    found = await served.client.post("/shelf/search", json={"page": 1, "sort": "title"}, auth=auth)
    manga = found.json()["results"][0]["slug"]
    chapters = await served.client.get(f"/shelf/{manga}/chapters", auth=auth)
    chapter = chapters.json()[0]["slug"]
    served.core.cache.invalidate("shelf")  # the configuration and page list are cold again
    with counted(monkeypatch) as counts:
        answer = await served.client.get(
            f"/_/opds/shelf/series/{manga}/{chapter}/pages/0", auth=auth
        )
    assert answer.status_code == 200, answer.text
    assert answer.content.startswith(b"\xff\xd8")
    assert counts["lookups"] == 1
    assert counts["configurations"] == 1 and counts["configuration reads"] == 1
    assert counts["authorisations"] == 1
    # The page is read by the library itself: no link is signed and checked within the request.
    assert counts["links verified"] == 0
    # The authorisation really ran: a reader without the password gets nothing.
    refused = await served.client.get(f"/_/opds/shelf/series/{manga}/{chapter}/pages/0")
    assert refused.status_code == 401


async def test_a_search_of_a_locked_source_looks_it_up_and_authorises_once(
    host: tuple[ServedHost, AtHome], monkeypatch: pytest.MonkeyPatch
) -> None:
    served, _ = host
    with counted(monkeypatch) as counts:
        answer = await served.client.post(
            "/shelf/search", json={"page": 1, "sort": "title"}, auth=httpx.BasicAuth(*READER)
        )
    assert answer.status_code == 200, answer.text
    assert answer.json()["results"]
    assert counts["lookups"] == 1
    assert counts["configurations"] == 1 and counts["configuration reads"] == 1
    assert counts["authorisations"] == 1 and counts["adapter checks"] == 1
