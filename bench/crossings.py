"""How far three requests wander through the house: calls between its files, files entered,
and calls from the face into the core.

Why: a request that crosses many files costs the next person who follows it;
the figures say whether the way in stays short as faces and features are
added. They are counts, not times, so they are the same on every machine.

How: a profiler trace of an in-process host (sources and a fake MangaDex, no
sockets). Each time a function of ``src/toshokan`` starts (a coroutine counts
once, when it starts, not each time it resumes), its caller is the nearest
frame that is also ``src/toshokan``'s (a library such as Starlette in between
does not hide a crossing). A call whose caller is in another file is a
*crossing*; a crossing from ``faces/`` into ``core/`` is a call *from the face
into the core*. *Files entered* counts the files whose functions started.
Every thread of the process is traced (the image pipeline's work in threads
counts too); each request is traced alone, after the calls that find its ids.

The requests:

- ``POST /local/search`` on the demo library, a search not asked before (another one
  warmed the way);
- the OPDS-PSE page 0 of a MangaDex chapter (a fake), cold: the chapter's page
  list and image never asked before;
- Komga's ``GET /api/v1/books/{id}/pages/1`` of a local chapter never read.

Run::

    .venv/bin/python bench/crossings.py            # a few seconds
    .venv/bin/python bench/crossings.py --detail   # and the busiest crossings of each
"""

import argparse
import asyncio
import dis
import shutil
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from tests.sources.mangadex.fake import API, UPLOADS  # noqa: E402
from tests.sources.mangadex.image_servers import ImageServers  # noqa: E402
from tests.sources.mangadex.sample import two_series  # noqa: E402

import toshokan  # noqa: E402
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library  # noqa: E402
from toshokan.sources.mangadex import MangaDex, Settings  # noqa: E402
from toshokan.testing import serve_host  # noqa: E402

SRC = str(Path(toshokan.__file__).resolve().parent) + "/"
_GENERATORS = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR


@dataclass
class Trace:
    """What one request called: crossings by (caller file, callee file), files entered."""

    crossings: Counter[tuple[str, str]] = field(default_factory=Counter)
    entered: set[str] = field(default_factory=set)

    @property
    def total(self) -> int:
        return sum(self.crossings.values())

    @property
    def face_into_core(self) -> int:
        return sum(
            n
            for (caller, callee), n in self.crossings.items()
            if caller.startswith("faces/") and callee.startswith("core/")
        )


class Tracer:
    """A profile function on every thread, counting only while :meth:`tracing`."""

    def __init__(self) -> None:
        self.trace: Trace | None = None
        self._starts: dict[CodeType, int] = {}
        self._lock = threading.Lock()

    def _first_resume(self, code: CodeType) -> int:
        offset = self._starts.get(code)
        if offset is None:
            offset = next((i.offset for i in dis.get_instructions(code) if i.opname == "RESUME"), 0)
            self._starts[code] = offset
        return offset

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        trace = self.trace
        if trace is None or event != "call":
            return
        code = frame.f_code
        if not code.co_filename.startswith(SRC):
            return
        if code.co_flags & _GENERATORS and frame.f_lasti > self._first_resume(code):
            return  # a coroutine or generator resumed, not started
        callee = code.co_filename.removeprefix(SRC)
        caller_frame = frame.f_back
        while caller_frame is not None and not caller_frame.f_code.co_filename.startswith(SRC):
            caller_frame = caller_frame.f_back
        with self._lock:
            trace.entered.add(callee)
            if caller_frame is not None:
                caller = caller_frame.f_code.co_filename.removeprefix(SRC)
                if caller != callee:
                    trace.crossings[(caller, callee)] += 1

    def install(self) -> None:
        sys.setprofile(self)
        threading.setprofile(self)

    async def measure(self, request: Callable[[], Awaitable[None]]) -> Trace:
        self.trace = Trace()
        try:
            await request()
        finally:
            trace, self.trace = self.trace, None
        return trace


async def main(detail: bool) -> None:
    work = Path(tempfile.mkdtemp(prefix="toshokan-crossings-"))
    tracer = Tracer()
    tracer.install()
    try:
        library = work / "library"
        write_demo_library(library, series=2, chapters=2, pages=3)
        fake = two_series()
        sources = {
            "local": (LocalLibrary, LocalSettings(root=library, watch=False)),
            "mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS)),
        }
        async with serve_host(
            sources,
            upstream=ImageServers(fake),
            data_dir=work / "data",
            limits={"rate_limit": 0, "image_rate_limit": 0},
        ) as host:
            client = host.client

            async def ok(method: str, url: str, **options: Any) -> Any:
                answer = await client.request(method, url, **options)
                assert answer.status_code == 200, (url, answer.status_code, answer.text[:300])
                return answer

            # Warm with one search, trace another: the edge would replay the same one.
            await ok("POST", "/local/search", json={"page": 1, "sort": "title", "query": "a"})
            search = {"page": 1, "sort": "title", "query": "voyage"}
            dex = (
                await ok("POST", "/mangadex/search", json={"page": 1, "sort": "relevance"})
            ).json()["results"][0]
            dex_chapters = (await ok("GET", f"/mangadex/{dex['slug']}/chapters")).json()
            dex_page = f"/_/opds/mangadex/series/{dex['slug']}/{dex_chapters[0]['slug']}/pages/0"
            komga = "/_/komga/api/v1"
            series = (await ok("GET", f"{komga}/series?search=")).json()["content"]
            books = (await ok("GET", f"{komga}/series/{series[0]['id']}/books")).json()
            book = books["content"][0]["id"]
            # Warm the ways both page requests go, on pages they will not ask again.
            other = books["content"][1]["id"]
            await ok("GET", f"{komga}/books/{other}/pages/2")
            await ok("GET", dex_page.replace("/pages/0", "/pages/1"))
            shutil.rmtree(work / "data" / "image-cache", ignore_errors=True)

            rows = [
                ("POST /local/search", lambda: ok("POST", "/local/search", json=search)),
                ("OPDS PSE page, MangaDex, cold", lambda: ok("GET", dex_page)),
                ("Komga book page 1, local", lambda: ok("GET", f"{komga}/books/{book}/pages/1")),
            ]
            traces = [(name, await tracer.measure(request)) for name, request in rows]
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        shutil.rmtree(work, ignore_errors=True)

    print(f"{'request':32} {'crossings':>10} {'files entered':>14} {'face into core':>15}")
    for name, trace in traces:
        print(f"{name:32} {trace.total:10d} {len(trace.entered):14d} {trace.face_into_core:15d}")
    if detail:
        for name, trace in traces:
            print(f"\n{name}: crossings by caller -> callee")
            for (caller, callee), count in trace.crossings.most_common():
                print(f"  {count:4d}  {caller} -> {callee}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--detail", action="store_true", help="every crossing of each request")
    asyncio.run(main(parser.parse_args().detail))
