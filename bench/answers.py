"""Record what a host answers (demo library and a MangaDex fake), to compare two checkouts.

Why: a change to how the house is put together must not change a byte of what
any face answers. This asks the same requests of every face (the spec's
interface, OPDS, Komga, Alethia, refusals included) and writes status, headers
and bodies as JSON, with what differs between any two runs (dates, the
request id, signatures, ETags of bodies that hold dates) made the same, so two
recordings compare with ``diff``.

Run, from each checkout (``--src`` names the checkout whose code answers)::

    .venv/bin/python bench/answers.py --out /tmp/after.json
    .venv/bin/python bench/answers.py --src /path/to/other/checkout --out /tmp/before.json
    diff /tmp/before.json /tmp/after.json
"""

import argparse
import asyncio
import hashlib
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
options.add_argument("--src", type=Path, default=Path(__file__).resolve().parent.parent)
options.add_argument("--out", type=Path, required=True)
ARGS = options.parse_args()
sys.path[:0] = [str(ARGS.src / "src"), str(ARGS.src)]

from tests.sources.mangadex.fake import API, UPLOADS  # noqa: E402
from tests.sources.mangadex.image_servers import ImageServers  # noqa: E402
from tests.sources.mangadex.sample import two_series  # noqa: E402

from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library  # noqa: E402
from toshokan.sources.mangadex import MangaDex, Settings  # noqa: E402
from toshokan.testing import serve_host  # noqa: E402

#: Headers that differ on every run.
VOLATILE = {"date", "x-request-id", "last-modified", "etag"}
MOMENT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
VARYING = [(MOMENT, "<moment>"), (re.compile(r"([?&](?:v|exp|sig)=)[\w-]+"), r"\1<varies>")]


def steady(text: str) -> str:
    for pattern, replacement in VARYING:
        text = pattern.sub(replacement, text)
    return text


async def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="toshokan-answers-"))
    recorded: list[dict[str, Any]] = []
    try:
        library = work / "library"
        write_demo_library(library, series=2, chapters=2, pages=3)
        sources = {
            "local": (LocalLibrary, LocalSettings(root=library, watch=False)),
            "mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS)),
        }
        async with serve_host(
            sources,
            upstream=ImageServers(two_series()),
            data_dir=work / "data",
            host={"secret": "s" * 32},
            limits={"rate_limit": 0, "image_rate_limit": 0},
        ) as host:

            async def ask(method: str, url: str, **sent: Any) -> Any:
                answer = await host.client.request(method, url, **sent)
                kind = answer.headers.get("content-type", "")
                textual = any(word in kind for word in ("json", "xml", "text"))
                body = answer.text if textual else hashlib.sha256(answer.content).hexdigest()
                if url.startswith("/_/komga") and answer.status_code >= 400:
                    body = re.sub(r'"timestamp":"[^"]*"', '"timestamp":"<moment>"', body)
                recorded.append(
                    {
                        "request": f"{method} {url}",
                        "status": answer.status_code,
                        "headers": {
                            k: steady(v) for k, v in answer.headers.items() if k not in VOLATILE
                        },
                        "body": steady(body),
                    }
                )
                return answer

            await ask("GET", "/")
            for slug, sort in (("local", "title"), ("mangadex", "relevance")):
                await ask("GET", f"/{slug}")
                await ask("GET", f"/{slug}/health")
                found = await ask("POST", f"/{slug}/search", json={"page": 1, "sort": sort})
                await ask("POST", f"/{slug}/search", content=b"{bad")
                await ask("POST", f"/{slug}/search", json={"page": 0})
                manga = found.json()["results"][0]["slug"]
                await ask("GET", f"/{slug}/{manga}")
                chapter = (await ask("GET", f"/{slug}/{manga}/chapters")).json()[0]["slug"]
                await ask("GET", f"/{slug}/{manga}/chapters/{chapter}")
                await ask("GET", f"/{slug}/{manga}/chapters/NOPE")
                await ask("GET", f"/_/opds/{slug}")
                await ask("GET", f"/_/opds/{slug}/series/{manga}")
                await ask("GET", f"/_/opds/{slug}/series/{manga}/{chapter}/pages/0")
                await ask("GET", f"/_/opds/{slug}/series/{manga}/{chapter}/pages/0?maxWidth=100")
                await ask("GET", f"/_/opds/v2/{slug}")
                await ask("GET", f"/_/alethia/{slug}")
                await ask("POST", f"/_/alethia/{slug}/authenticate", json={})
                await ask("POST", f"/{slug}/authenticate", json={})
            await ask("GET", "/_/opds")
            await ask("GET", "/_/opds/search?q=voyage")
            await ask("GET", "/nosuch/thing/here/x")
            await ask("POST", "/nosuch/authenticate", json={})
            await ask("POST", "/_/alethia/nosuch/authenticate", json={})
            komga = "/_/komga/api/v1"
            series = (await ask("GET", f"{komga}/series?search=")).json()["content"]
            for one in series[:3]:
                await ask("GET", f"{komga}/series/{one['id']}")
                books = (await ask("GET", f"{komga}/series/{one['id']}/books")).json()
                book = books["content"][0]["id"]
                await ask("GET", f"{komga}/books/{book}")
                await ask("GET", f"{komga}/books/{book}/pages")
                await ask("GET", f"{komga}/books/{book}/pages/1")
                await ask("GET", f"{komga}/books/{book}/pages/99")
            await ask("GET", f"{komga}/libraries")
            await ask("GET", f"{komga}/series/nothing")
            await ask("DELETE", f"{komga}/libraries")
            await ask("GET", "/_/ready")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ARGS.out.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(f"{len(recorded)} answers written to {ARGS.out}")


if __name__ == "__main__":
    asyncio.run(main())
