"""What an operator reads from running hosts: one scrape sums a --workers host's processes,
JSON log lines carry the request id the answer echoes, readiness answers."""

import json
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.cluster.library import library, write_config
from tests.cluster.replicas import replicas

REQUESTS = 40


def requests_counted(text: str, route: str) -> float:
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "toshokan_requests_total"
        and sample.labels["route"] == route
        and sample.labels["status"] == "200"
    )


def test_one_scrape_sums_every_worker_and_lines_are_json(tmp_path: Path) -> None:
    config = write_config(tmp_path / "toshokan.toml", library(tmp_path / "library"))
    env = {"TOSHOKAN_SERVER__LOG_FORMAT": "json"}
    with replicas(config, tmp_path / "workers", 1, workers=2, env=env) as (host,):
        for number in range(REQUESTS):
            # A connection each, so the workers share them out.
            answer = httpx.get(f"{host.url}/local", headers={"X-Request-Id": f"probe-{number}"})
            assert answer.status_code == 200
            assert answer.headers["x-request-id"] == f"probe-{number}"
        scrapes = [httpx.get(f"{host.url}/_/metrics").text for _ in range(6)]
        ready = httpx.get(f"{host.url}/_/ready")
        figures = host.data_dir / "metrics"
        writers = {path.stem.rsplit("_", 1)[-1] for path in figures.glob("counter_*.db")}
        output = host.stop()
    # Whichever worker answers the scrape, it counts what every worker served.
    assert all(requests_counted(text, "/{source}") == REQUESTS for text in scrapes)
    assert len(writers) >= 2, writers  # both workers counted requests into the shared files
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    lines = [json.loads(line) for line in output.splitlines() if line.strip()]
    access = [line for line in lines if line["logger"] == "toshokan.access"]
    ids = {line["request_id"] for line in access if line["path"] == "/local"}
    assert ids == {f"probe-{number}" for number in range(REQUESTS)}
    assert any(line["message"].startswith("web reader at") for line in lines)
