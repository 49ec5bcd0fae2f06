"""What an unchanged rescan and a page of a local chapter cost, in calls: guards that fail on
added work without timing anything (:mod:`tests.helpers.calls`).

The bench (``bench/local_library.py``) says how fast both are next to their floors; these
say, in CI, that a later change did not quietly add work to either.
"""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.calls import access_log, count_calls, threads_counted, within_budget
from toshokan.sdk import RequestContext
from toshokan.sources.local import LocalLibrary, LocalSettings
from toshokan.sources.local.demo import write_demo_library
from toshokan.sources.local.index import Index
from toshokan.sources.local.scanner import Scanner
from toshokan.testing import ServedHost, serve

pytestmark = pytest.mark.anyio

SERIES, CHAPTERS = 4, 5
#: Calls of a rescan of the demo library of ``SERIES`` series by ``CHAPTERS`` chapters (18
#: chapters found) that finds nothing changed (333 on Python 3.11.7, one of them asking whether a changed
#: series' listing is to be forgotten before its rows change; 335 before the whole library's
#: listing spared reading the series and their listings, 334 when each chapter found was an
#: object, 349 before a series whose listing is unchanged was no longer compared chapter by
#: chapter, 446 before the walk's loop was made to ask no function per file): the walk (a
#: listing per folder, and per file its type, a stat and its name and two numbers kept,
#: five calls), a digest of each series' listing (three calls and three a folder) and of
#: the library's, compared with the stored one in one query, and the few queries that
#: confirm nothing else changed. Nothing is opened or written. A few to spare; 20 more is a
#: regression.
RESCAN_BUDGET = 337
#: Calls of a page of a chapter already served once (172 when this was written, the access
#: log at info), on the event loop and the archive threads: the edge (bounds, the one look in
#: its replay table, route, request id, figures, access line parts), the route's checks, the chapter's row from the index (one thread hop), the
#: archive's directory from the cache, the page read whole on an archive thread, its type
#: sniffed, and the answer's headers (ETag, Last-Modified). A few to spare; 20 more is a
#: regression.
PAGE_BUDGET = 175
#: Calls of reading one zip chapter of the demo library, as a first scan's reading processes do
#: (225.6 with a name's NameInfo made by object.__new__ and one dict.update, counted, in place
#: of its __init__'s setattr for each field, never counted; 225 when this was written: 2 more than the changes before for 3% fewer instructions, the
#: page names' JSON remembered, and KOReader's samples found by bisection; 223 with 5 more than
#: the change before for 5% fewer instructions: a name's white space is made single by str
#: methods and its Mihon and oneshot patterns are tried only on names that can match, a regex
#: replaced by two or three quicker calls; 232 before a plain ComicInfo.xml's texts went into a
#: dict in one call and a name's series part and a slug's parts were joined from lists, not
#: generators; 267 before ComicInfo's lists were remembered by their text, a name's title and
#: series part found without a generator where there is one part, and KOReader's id of an
#: archive in hand was one digest of its samples joined; 287 before a plain zip's listing was
#: made in one pass over its directory, without the general listing's steps for each entry; 296
#: before a page's extension was found without os.path.splitext and a one-name ComicInfo list
#: went unsplit; 314 before a name's bracketed parts were remembered and its series part
#: cleaned once; 481 when each archive was a zipfile.ZipFile, whose own calls are not counted,
#: and ComicInfo.xml went through expat's calls for each element): one read of the archive for
#: its directory, page heads, ComicInfo.xml and KOReader id, the pages' names checked and
#: sorted, ComicInfo.xml read, the file's name parsed, and the chapter's record. A few to
#: spare; 20 more a chapter is a regression.
READ_BUDGET = 228
#: Pages asked before counting: more than the threads either pool may start.
WARM_UP = 40


def test_an_unchanged_rescan_stays_within_its_calls(tmp_path: Path) -> None:
    root = tmp_path / "library"
    write_demo_library(root, series=SERIES, chapters=CHAPTERS, pages=2)
    scanner = Scanner(root, Index(tmp_path / "index.sqlite3"), workers=0)
    first = scanner.scan()
    scanner.scan()  # caches filled, patterns compiled
    with count_calls() as calls:
        again = scanner.scan()
    scanner.index.close()
    within_budget(calls, RESCAN_BUDGET, f"an unchanged rescan of {first.chapters} chapters")
    assert first.chapters >= SERIES * CHAPTERS - SERIES and again.read == 0
    assert (again.series, again.chapters) == (first.series, first.chapters)


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[ServedHost]:
    root = tmp_path / "library"
    write_demo_library(root, series=2, chapters=2, pages=2)
    with threads_counted():
        async with serve(
            LocalLibrary,
            LocalSettings(root=root, watch=False, start_wait=120),
            slug="local",
            data_dir=tmp_path / "data",
        ) as host:
            yield host


async def get(app: Any, path: str) -> list[dict[str, Any]]:
    """The request as a server hands it to the host, so only the host's calls count."""
    sent: list[dict[str, Any]] = []
    route, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "server": ("127.0.0.1", 8080),
        "client": ("127.0.0.1", 50000),
        "scheme": "http",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8080")],
        "method": "GET",
        "path": route,
        "raw_path": route.encode(),
        "query_string": query.encode(),
        "state": {},
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


async def test_a_page_stays_within_its_calls(served: ServedHost) -> None:
    source: LocalLibrary = served.source("local")
    ctx = RequestContext(base_url="http://127.0.0.1:8080")
    url = (await source.pages("iron-garden", "ch-1-gearworks", ctx))[0]
    path = url.removeprefix("http://127.0.0.1:8080")
    for _ in range(WARM_UP):  # the archive's directory cached, the pools' threads started
        first = await get(served.app, path)
    counts = []
    # The access log at info, as the host runs: what the edge keeps of each line is counted
    # whatever logging earlier tests of the session left configured.
    with access_log():
        for _ in range(3):
            with count_calls() as calls:
                answer = await get(served.app, path)
            counts.append(calls)
    # The fewest of three: a request that lands on a thread a pool has just started also
    # pays for that thread's own index connection, once; added work is in all three.
    within_budget(min(counts, key=lambda c: c.total), PAGE_BUDGET, "a page of a local chapter")
    assert first[0]["status"] == answer[0]["status"] == 200
    body = b"".join(m.get("body", b"") for m in answer[1:])
    assert body[:3] == b"\xff\xd8\xff"


def test_reading_chapters_stays_within_its_calls(tmp_path: Path) -> None:
    root = tmp_path / "library"
    write_demo_library(root, series=SERIES, chapters=CHAPTERS, pages=2)
    scanner = Scanner(root, Index(tmp_path / "index.sqlite3"), workers=0)
    found, _ = scanner.walk()
    chapters = [chapter for series in found.values() for chapter in series.chapters]
    zips = [chapter for chapter in chapters if chapter.kind == "zip"]
    list(scanner.read_chapters(chapters))  # caches filled, patterns compiled
    with count_calls() as calls:
        readings = list(scanner.read_chapters(zips))
    scanner.index.close()
    within_budget(calls, READ_BUDGET * len(zips), f"reading {len(zips)} zip chapters")
    assert zips and all(record is not None for record, _, _ in readings)
