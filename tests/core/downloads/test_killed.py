"""A host killed by SIGKILL in the middle of keeping a chapter: no partial file in the library,
and once it is started again it keeps the chapter by itself (no check asked), once."""

import time
from pathlib import Path

import httpx

from tests.cluster.replicas import start_replica
from tests.core.downloads.nodes import Node, chapter_hash, mangadex_with_node
from tests.sources.mangadex.sample import two_series


def wait_for(condition: object, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"{what}: not within {seconds:g} s"
        time.sleep(0.2)


def test_a_chapter_killed_midway_is_kept_whole_after_the_restart(tmp_path: Path) -> None:
    fake = two_series()
    manga = next(m.id for m in fake.manga.values() if m.title["en"] == "Pirate Voyage")
    newest = next(c.id for c in fake.chapters.values() if c.manga_id == manga and c.chapter == "3")
    node = Node(delay=1.5)  # three pages: four and a half seconds a chapter
    library = tmp_path / "library"
    library.mkdir()
    with mangadex_with_node(fake, node) as upstream:
        config = tmp_path / "toshokan.toml"
        config.write_text(
            f"""
[host]
secret = "a-secret-for-the-test"

[limits]
rate_limit = 0

[follows]
round = 1

[sources.local]
root = "{library}"

[sources.mangadex]
api_url = "{upstream}"
uploads_url = "{upstream}/uploads"
report_url = "{upstream}/report"
""",
            encoding="utf-8",
        )
        data = tmp_path / "data"
        host = start_replica(config, data)
        try:
            series = f"{host.url}/_/follows/series/mangadex/{manga}"
            assert httpx.put(series, timeout=30).status_code == 201
            wait_for(lambda: httpx.get(series).json()["state"] == "ok", 30, "the first check")
            kept = httpx.put(f"{series}/keep", json={"backfill": 1}, timeout=30)
            assert kept.status_code == 201, kept.text
            wait_for(lambda: node.pages_of(chapter_hash(newest)) == 1, 30, "a page kept")
            host.kill()
        finally:
            host.stop()
        assert list(library.rglob("*.cbz")) == []  # nothing half-written in the library
        drafts = library / ".toshokan-keep"
        assert any(drafts.iterdir())  # the dead process's draft, aside

        again = start_replica(config, data)
        try:

            def kept_again() -> bool:
                rows = httpx.get(f"{again.url}/_/downloads").json()["downloads"]
                return [r["state"] for r in rows] == ["done"]

            wait_for(kept_again, 90, "the chapter kept after the restart")
            (row,) = httpx.get(f"{again.url}/_/downloads").json()["downloads"]
        finally:
            again.stop()
    files = sorted(str(p.relative_to(library)) for p in library.rglob("*.cbz"))
    assert (
        files
        == [row["path"]]
        == ["Pirate Voyage/Pirate Voyage Vol.1 Ch.3 - Chapter 3 [Straw Hat Scans].cbz"]
    )
    assert row["pagesDone"] == row["pages"] == 3
    assert list(drafts.iterdir()) == []  # the dead process's draft was removed at the start
    assert node.pages_of(chapter_hash(newest)) >= 4  # begun again from its first page
