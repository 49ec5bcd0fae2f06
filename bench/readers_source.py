"""What the host's readers as a source's accounts (``auth = "readers"``) cost a request.

Why: such a source is checked by the core on every request: the reader's
credentials (argon2 once, then a remembered check beside two indexed queries
in a worker thread) or a session token (a signature and one indexed query).
The floor is the same cached search of the same library open to anyone,
served by the same host in the same run.

Rows (in-process ASGI, no sockets, sequential like one reader; each warmed once;
the edge's replay is off for every row, since the readers' requests carry
credentials and are never replayed):

- ``open``: ``POST /open/search`` with a cookie the host ignores;
- ``reader, Basic``: ``POST /shelf/search`` with the reader's Basic header;
- ``reader, session``: the same with the web reader's session cookie alone.

Run::

    .venv/bin/python bench/readers_source.py
    .venv/bin/python bench/readers_source.py --rounds 1000
"""

import argparse
import asyncio
import base64
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from bench.timing import median_ms, p99_ms, seconds_each  # noqa: E402

from toshokan.core.readers import SESSION_COOKIE, Sessions  # noqa: E402
from toshokan.sources.local import LocalLibrary, write_demo_library  # noqa: E402
from toshokan.testing import serve_host  # noqa: E402

SEARCH = {"page": 1, "sort": "title", "direction": "asc"}


async def main(rounds: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="toshokan-readers-source-"))
    try:
        library = work / "library"
        write_demo_library(library, series=20, chapters=1, pages=1)
        options = {"root": library, "watch": False}
        sources = {
            "open": (LocalLibrary, {**options, "index_path": work / "open.sqlite3"}),
            "shelf": (LocalLibrary, {**options, "auth": "readers"}),
        }
        async with serve_host(sources, data_dir=work / "data", limits={"rate_limit": 0}) as host:
            await asyncio.to_thread(host.core.readers.readers.add, "ayumi", "correct horse")
            token = Sessions(host.core.readers).issue("ayumi")
            client = host.client

            async def search(path: str, headers: dict[str, str]) -> None:
                answer = await client.post(path, json=SEARCH, headers=headers)
                assert answer.status_code == 200, answer.text[:200]

            pair = base64.b64encode(b"ayumi:correct horse").decode()

            async def open_source() -> None:
                await search("/open/search", {"Cookie": "unrelated=1"})

            async def basic() -> None:
                await search("/shelf/search", {"Authorization": f"Basic {pair}"})

            async def session() -> None:
                await search("/shelf/search", {"Cookie": f"{SESSION_COOKIE}={token}"})

            rows = [
                (median_ms(times), p99_ms(times))
                for times in await seconds_each([open_source, basic, session], rounds)
            ]
        print(f"cached search of 20 titles, {rounds} rounds, ms per request")
        print(f"{'row':18} {'median':>8} {'p99':>8} {'ratio':>6}")
        for name, (median, p99) in zip(
            ("open", "reader, Basic", "reader, session"), rows, strict=True
        ):
            print(f"{name:18} {median:8.2f} {p99:8.2f} {median / rows[0][0]:6.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300, help="timed requests per row")
    asyncio.run(main(parser.parse_args().rounds))
