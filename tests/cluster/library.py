"""The library every replica test serves, and the answers compared between replicas."""

from pathlib import Path
from typing import Any

import httpx

from tests.sources.local.helpers import cbz, comicinfo

SEARCH = {"page": 1, "sort": "title", "direction": "asc"}


def library(root: Path) -> Path:
    """Three series of two chapters, each dated by its ComicInfo.

    Undated chapters are dated by when each replica's own index first saw them,
    which differs between replicas until the index is shared.
    """
    for series in ("Blue Harbour", "Red Lantern", "Green Hill"):
        for chapter in (1, 2):
            info = comicinfo(
                Series=series, Number=str(chapter), Year="2024", Month="5", Day=str(chapter)
            )
            cbz(root / series / f"{series} c{chapter:03d}.cbz", pages=2, info=info)
    return root


def answers(base: str) -> list[Any]:
    """The search, the first series' chapters and its first chapter's pages, as JSON."""
    search = httpx.post(f"{base}/local/search", json=SEARCH, timeout=10).json()
    first = search["results"][0]["slug"]
    chapters = httpx.get(f"{base}/local/{first}/chapters", timeout=10).json()
    pages = httpx.get(f"{base}/local/{first}/chapters/{chapters[0]['slug']}", timeout=10).json()
    return [search, chapters, pages]


def write_config(path: Path, library_root: Path, extra: str = "") -> Path:
    """One configuration for every replica of the library at ``library_root``."""
    path.write_text(
        f"""
[host]
secret = "one-secret-for-every-replica"

[sources.local]
root = "{library_root}"
start_wait = 10
{extra}
""",
        encoding="utf-8",
    )
    return path


def write_shared_config(
    path: Path, library_root: Path, redis_url: str, rate_limit: int = 0
) -> Path:
    """One configuration for replicas of the library at ``library_root`` sharing the Redis at
    ``redis_url``, behind one public address (so their links, and answers, are the same)."""
    path.write_text(
        f"""
[host]
secret = "one-secret-for-every-replica"
public_url = "https://comics.example.org"

[cluster]
redis = "{redis_url}"

[limits]
rate_limit = {rate_limit}

[sources.local]
root = "{library_root}"
start_wait = 10
""",
        encoding="utf-8",
    )
    return path
