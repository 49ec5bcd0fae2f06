"""A keep folder that runs out of room, made without privileges: the host runs in a process of
its own under a file size limit (``RLIMIT_FSIZE``, with ``SIGXFSZ`` ignored), so a chapter too
large for it fails with ``EFBIG`` as one too large for a full disk fails with ``ENOSPC``. The
queue pauses with one clear line (the downloads list, health, metrics), nothing partial is
left, nothing already kept is touched, and once the limit is raised (the room made) the queue
resumes by itself and keeps the chapter. Where mounting is allowed, ``test_queue`` does the
same on a small tmpfs."""

import io
import os
import resource
import signal
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from PIL import Image

from tests.cluster.replicas import start_replica
from tests.core.downloads.nodes import Node, chapter_hash, mangadex_with_node
from tests.sources.mangadex.sample import two_series

#: Bytes any one file of the host may have: its database, its log and a small chapter fit, a
#: chapter of three pages of about 3 MB does not.
LIMIT = 6 * 1024 * 1024


def limited() -> None:
    """In the host's process, before it starts: the limit, which the host may not raise itself
    past the hard one, and no signal that would end the process at the limit."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, resource.RLIM_INFINITY))


def noisy_webp(side: int = 1000) -> bytes:
    """A lossless WebP of noise: about ``side * side * 3`` bytes (noise does not compress)."""
    buffer = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(
        buffer, "WEBP", lossless=True
    )
    return buffer.getvalue()


def wait_for(condition: Callable[[], object], seconds: float, what: str) -> object:
    deadline = time.monotonic() + seconds
    while not (found := condition()):
        assert time.monotonic() < deadline, f"{what}: not within {seconds:g} s"
        time.sleep(0.2)
    return found


def kept(library: Path) -> dict[str, bytes]:
    return {str(p.relative_to(library)): p.read_bytes() for p in library.rglob("*.cbz")}


def test_a_chapter_past_the_file_size_limit_pauses_the_queue_until_there_is_room(
    tmp_path: Path,
) -> None:
    fake = two_series()
    manga = next(m.id for m in fake.manga.values() if m.title["en"] == "Pirate Voyage")
    node = Node()
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
        host = start_replica(config, tmp_path / "data", preexec_fn=limited)
        try:
            series = f"{host.url}/_/follows/series/mangadex/{manga}"
            listing = f"{host.url}/_/downloads"
            assert httpx.put(series, timeout=30).status_code == 201
            wait_for(lambda: httpx.get(series).json()["state"] == "ok", 30, "the first check")
            # The newest chapter, small: kept.
            assert httpx.put(f"{series}/keep", json={"backfill": 1}).status_code == 201
            wait_for(lambda: httpx.get(listing).json()["counts"] == {"done": 1}, 60, "kept")
            before = kept(library)
            assert len(before) == 1

            # The one before it, larger than any file the host may write now.
            node.body = noisy_webp()
            assert 3 * len(node.body) > LIMIT > len(node.body)
            assert httpx.put(f"{series}/keep", json={"backfill": 2}).status_code == 200  # changed
            second = next(
                c.id for c in fake.chapters.values() if c.manga_id == manga and c.chapter == "2"
            )

            def paused() -> dict[str, object] | None:
                body: dict[str, object] = httpx.get(listing).json()
                return body if body["queue"]["paused"] else None  # type: ignore[index]

            body = wait_for(paused, 60, "the queue paused")
            assert isinstance(body, dict)
            message = body["queue"]["message"]
            assert body["queue"]["paused"] == "no-space"
            assert message.startswith("the keep folder is full")
            assert "File too large" in message
            assert sorted(d["state"] for d in body["downloads"]) == ["done", "queued"]
            health = httpx.get(f"{host.url}/mangadex/health").json()
            assert f"downloads paused: {message}" in str(health)
            wait_for(
                lambda: "toshokan_downloads_paused 1.0" in httpx.get(f"{host.url}/_/metrics").text,
                30,
                "the paused figure",
            )
            # Nothing partial where the library looks, nothing aside, nothing kept touched.
            assert kept(library) == before
            drafts = library / ".toshokan-keep"
            assert not any(p.is_file() for p in drafts.rglob("*"))
            # Still paused after the next looks at the folder (every 10 s): a small file would
            # fit, the chapter still would not, and it is not fetched again to find that out.
            fetched = node.pages_of(chapter_hash(second))
            time.sleep(15)
            assert httpx.get(listing).json()["queue"]["paused"] == "no-space"
            assert node.pages_of(chapter_hash(second)) == fetched
            assert kept(library) == before

            # The room is made: the queue resumes by itself and keeps the chapter.
            resource.prlimit(host.process.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
            wait_for(lambda: httpx.get(listing).json()["counts"] == {"done": 2}, 60, "resumed")
            assert httpx.get(listing).json()["queue"]["paused"] is None
            health = httpx.get(f"{host.url}/mangadex/health").json()
            assert "downloads paused" not in str(health)
        finally:
            host.stop()
    after = kept(library)
    assert {p: after[p] for p in before} == before
    assert len(after) == 2
    assert not any(p.is_file() for p in (library / ".toshokan-keep").rglob("*"))
