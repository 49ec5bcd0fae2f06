"""Two replicas on Redis and PostgreSQL keeping the same 50 followed series in one shared
library: every chapter is written once, by one of them, and the fake MangaDex never sees the
host above its published rates (5 API requests a second, 40 page lists a minute), whichever
replica asks, counted on arrival as MangaDex counts them. The upstream and its MangaDex@Home
node are on a loopback port."""

import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from tests.cluster.replicas import replicas
from tests.cluster.upstream import most_in_any_window
from tests.core.downloads.nodes import Node, chapter_hash, mangadex_with_node
from tests.sources.mangadex.fake import FakeMangaDex

SERIES = 50


def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {seconds:g} s"
        time.sleep(0.5)


def test_two_replicas_keep_each_chapter_once_within_the_upstreams_rates(
    tmp_path: Path, redis_url: str, postgres_url: str
) -> None:
    fake = FakeMangaDex()
    group = fake.add_group("Straw Hat Scans")
    for n in range(SERIES):
        fake.add_many_chapters(fake.add_manga(f"series-{n}", f"Series {n}"), 2, group)
    node = Node()
    library = tmp_path / "library"  # the replicas' shared storage
    library.mkdir()
    with mangadex_with_node(fake, node) as upstream:
        config = tmp_path / "toshokan.toml"
        config.write_text(
            f"""
[host]
secret = "one-secret-for-every-replica"

[cluster]
redis = "{redis_url}"
database = "{postgres_url}"

[limits]
rate_limit = 0

[follows]
round = 2

[keep]
concurrency = 4
source_concurrency = 4

[sources.local]
root = "{library}"

[sources.mangadex]
api_url = "{upstream}"
uploads_url = "{upstream}/uploads"
report_url = "{upstream}/report"
""",
            encoding="utf-8",
        )
        with replicas(config, tmp_path, 2) as hosts:
            mangas = list(fake.manga)

            def series(index: int) -> str:
                return f"{hosts[index % 2].url}/_/follows/series/mangadex/{mangas[index]}"

            with ThreadPoolExecutor(4) as pool:
                followed = list(pool.map(lambda i: httpx.put(series(i), timeout=60), range(SERIES)))
            assert {a.status_code for a in followed} == {201}

            def checked() -> bool:
                return all(
                    httpx.get(series(i), timeout=30).json()["state"] == "ok" for i in range(SERIES)
                )

            wait_for(checked, 120, "every first check")
            for index in range(SERIES):  # the newest chapter of each, from either replica
                kept = httpx.put(f"{series(index)}/keep", json={"backfill": 1}, timeout=30)
                assert kept.status_code == 201, kept.text

            def all_kept() -> bool:
                rows = httpx.get(f"{hosts[0].url}/_/downloads?limit=500", timeout=30).json()
                return rows["counts"] == {"done": SERIES}

            wait_for(all_kept, 300, "every chapter kept")
            rows = httpx.get(f"{hosts[1].url}/_/downloads?limit=500", timeout=30).json()
    files = sorted(p.relative_to(library) for p in library.rglob("*.cbz"))
    assert len(files) == SERIES == len({d["path"] for d in rows["downloads"]})
    # Written once: each chapter's pages were fetched once, by one replica.
    served = Counter(path.split("/")[2] for path, _ in node.served)
    newest = [c.id for c in fake.chapters.values() if c.chapter == "2"]
    assert {chapter_hash(c) for c in newest} == set(served)
    assert set(served.values()) == {3}
    # Never above the published rates, from the whole host.
    # (MangaDex@Home reports and covers go to hosts of their own, with no such budget.)
    api = [
        r.at for r in fake.requests if not r.path.startswith(("/at-home/", "/report", "/uploads"))
    ]
    lists = [r.at for r in fake.requests if r.path.startswith("/at-home/")]
    assert len(lists) == SERIES
    # Counted as MangaDex counts them: on arrival, where it enforces its limit. The host grants
    # at most 5 requests in any second (counted in Redis for both replicas); each arrives some
    # time after its grant, up to about a second on a loaded machine (the replicas' sending
    # and the fake's reading are both delayed), so a second's arrivals may hold requests
    # granted in two different seconds, and only windows long beside that delay show the
    # rate: in any w seconds, at most what w + 1 seconds allow. Replicas counting each alone
    # would send nearly twice that.
    assert most_in_any_window(api, 10.0) <= 5 * (10 + 1)
    assert most_in_any_window(lists, 60.0 - 1) <= 40
    print(
        f"{SERIES} chapters kept by two replicas; API requests {len(api)} "
        f"(at most {most_in_any_window(api, 10.0)} arrivals in ten seconds, "
        f"{most_in_any_window(api, 1.0)} in one), page lists {len(lists)} "
        f"(at most {most_in_any_window(lists, 60.0)} arrivals in a minute)"
    )
