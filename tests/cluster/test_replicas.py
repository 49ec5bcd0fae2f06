"""Replicas of one library with one configuration answer alike (the harness at work)."""

from pathlib import Path
from typing import Any

import httpx

from tests.cluster.replicas import replicas
from tests.local.helpers import cbz, comicinfo

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


def write_config(path: Path, library_root: Path, extra: str = "") -> Path:
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


def answers(base: str) -> list[Any]:
    """The search, the first series' chapters and its first chapter's pages, as JSON."""
    search = httpx.post(f"{base}/local/search", json=SEARCH, timeout=10).json()
    first = search["results"][0]["slug"]
    chapters = httpx.get(f"{base}/local/{first}/chapters", timeout=10).json()
    pages = httpx.get(f"{base}/local/{first}/chapters/{chapters[0]['slug']}", timeout=10).json()
    return [search, chapters, pages]


def relative(value: Any, base: str) -> Any:
    """Links made absolute with each replica's own address, made comparable."""
    if isinstance(value, dict):
        return {k: relative(v, base) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [relative(v, base) for v in value]
    return value.replace(base, "") if isinstance(value, str) else value


def test_replicas_and_a_workers_host_answer_alike(tmp_path: Path) -> None:
    config = write_config(tmp_path / "toshokan.toml", library(tmp_path / "library"))
    with (
        replicas(config, tmp_path / "replicas", 2) as started,
        replicas(config, tmp_path / "workers", 1, workers=2) as (workers_host,),
    ):
        seen = [relative(answers(r.url), r.url) for r in [*started, workers_host]]
    assert len(seen[0][0]["results"]) == 3
    assert seen[0] == seen[1] == seen[2]
