"""Replicas of one library with one configuration answer alike (the harness at work)."""

from pathlib import Path
from typing import Any

from tests.cluster.library import answers, library, write_config
from tests.cluster.replicas import replicas


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
