"""The host's figures at /_/metrics: requests by face and route template, cache lookups,
upstream requests and budget waits, scans; never a concrete path in a label."""

import pytest
import respx
from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from toshokan.core.metrics import LATENCY_BUCKETS, HostMetrics
from toshokan.sdk import Throttle, UpstreamClient
from toshokan.sdk.observe import Observers
from toshokan.sources.local import LocalLibrary
from toshokan.sources.local.demo import write_demo_library
from toshokan.testing import serve

pytestmark = pytest.mark.anyio


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(figures, name: str, **labels: str) -> float:
    return figures.get((name, frozenset(labels.items())), 0.0)


async def scrape(host) -> dict:
    answer = await host.client.get("/_/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    assert answer.headers["cache-control"] == "no-store"
    return samples(answer.text)


async def test_requests_are_counted_by_face_route_template_and_status(make_host):
    async with make_host() as host:
        await host.client.get("/catalog/title-001")
        await host.client.get("/catalog/title-002")
        await host.client.get("/catalog/no-such-title")
        await host.client.get("/_/alethia/catalog/title-001/chapters")
        await host.client.get("/nowhere/at/all/really/deep")
        figures = await scrape(host)
        text = (await host.client.get("/_/metrics")).text
    manga = {"face": "spec", "route": "/{source}/{manga}", "method": "GET"}
    assert value(figures, "toshokan_requests_total", **manga, status="200") == 2
    assert value(figures, "toshokan_requests_total", **manga, status="404") == 1
    chapters = {"face": "alethia", "route": "/_/alethia/{source}/{manga}/chapters"}
    assert value(figures, "toshokan_requests_total", **chapters, method="GET", status="200") == 1
    unrouted = {"face": "none", "route": "unrouted", "method": "GET", "status": "404"}
    assert value(figures, "toshokan_requests_total", **unrouted) == 1
    timed = {"face": "spec", "route": "/{source}/{manga}"}
    assert value(figures, "toshokan_request_duration_seconds_count", **timed) == 3
    # Slugs a client chose never become labels.
    assert "title-001" not in text and "no-such-title" not in text and "nowhere" not in text


async def test_a_replayed_answer_counts_under_its_route(make_host):
    async with make_host() as host:
        for _ in range(3):
            assert (await host.client.get("/catalog")).status_code == 200
        figures = await scrape(host)
    labels = {"face": "spec", "route": "/{source}", "method": "GET", "status": "200"}
    assert value(figures, "toshokan_requests_total", **labels) == 3


async def test_methods_outside_http_s_own_share_one_label(make_host):
    async with make_host() as host:
        await host.client.request("BREW", "/catalog")
        await host.client.request("WHEN", "/catalog")
        figures = await scrape(host)
    labels = {"face": "spec", "route": "/{source}", "method": "other", "status": "405"}
    assert value(figures, "toshokan_requests_total", **labels) == 2


async def test_cache_hits_and_misses(make_host):
    async with make_host() as host:
        for _ in range(3):
            # Each with a body of its own key: the edge does not replay them, the core's cache answers.
            answer = await host.client.get("/catalog/title-003", headers={"Authorization": "x"})
            assert answer.status_code == 200
        figures = await scrape(host)
    assert value(figures, "toshokan_cache_lookups_total", kind="manga", result="miss") == 1
    assert value(figures, "toshokan_cache_lookups_total", kind="manga", result="hit") == 2


async def test_scrapes_and_readiness_spend_no_budget(make_host):
    async with make_host(limits={"rate_limit": 1}) as host:
        assert (await host.client.get("/catalog")).status_code == 200
        assert (await host.client.get("/catalog")).status_code == 429
        for _ in range(5):
            assert (await host.client.get("/_/metrics")).status_code == 200
            assert (await host.client.get("/_/ready")).status_code == 200


async def test_figures_can_be_turned_off(make_host):
    async with make_host(metrics={"enabled": False}) as host:
        answer = await host.client.get("/_/metrics")
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "NOT_FOUND"


@respx.mock
async def test_upstream_requests_errors_and_budget_waits_by_source():
    figures = HostMetrics()
    observers = Observers()
    observers.add(figures)
    respx.get("https://up.example/ok").respond(json={})
    respx.get("https://up.example/gone").respond(404)
    respx.get("https://up.example/down").respond(500)
    client = UpstreamClient(
        "https://up.example",
        user_agent="t",
        retries=1,
        backoff=0.01,
        limiter=Throttle("metrics-test budget", 2, 1),
        source="shelf",
        observers=observers,
    )
    try:
        await client.get_json("/ok")
        with pytest.raises(Exception, match="upstream"):
            await client.get_json("/gone")
        with pytest.raises(Exception, match="HTTP 500"):
            await client.get_json("/down")  # tried twice
    finally:
        await client.aclose()
    got = samples(figures.exposition().decode())
    assert value(got, "toshokan_upstream_requests_total", source="shelf") == 4
    errors = "toshokan_upstream_errors_total"
    assert value(got, errors, source="shelf", code="UPSTREAM_ERROR") == 3
    # Four requests on a budget of two a second: the last two waited for it.
    assert value(got, "toshokan_upstream_budget_waits_total", source="shelf") >= 1
    assert value(got, "toshokan_upstream_budget_wait_seconds_total", source="shelf") > 0.3


async def test_scan_progress_of_a_library(tmp_path):
    library = tmp_path / "library"
    write_demo_library(library, series=2, chapters=3, pages=1)
    options = {"root": str(library), "start_wait": 30}
    async with serve(LocalLibrary, options, slug="shelf", data_dir=tmp_path) as host:
        first = samples((await host.client.get("/_/metrics")).text)
        indexed = host.source("shelf").snapshot.chapters
        (library / "Extra Series").mkdir()
        (library / "Extra Series" / "c1.cbz").write_bytes(
            (next(library.glob("*/*.cbz"))).read_bytes()
        )
        await host.source("shelf").rescan()
        second = samples((await host.client.get("/_/metrics")).text)
    # The first scan read every chapter the index holds; the next, only the one added.
    assert indexed > 1
    assert value(first, "toshokan_scan_read", source="shelf") == indexed
    assert value(first, "toshokan_scan_to_read", source="shelf") == indexed
    assert value(second, "toshokan_scan_read", source="shelf") == 1
    assert value(second, "toshokan_scan_running", source="shelf") == 0


def test_a_scrape_counts_every_request_answered_before_it():
    """Requests are counted in plain numbers and folded into the collectors when scraped; a
    scrape sees each one, with the same counts, sums and buckets as observing each latency as
    it came, however many scrapes came between."""
    figures = HostMetrics()
    registry = CollectorRegistry()
    observed = Histogram(
        "toshokan_request_duration_seconds",
        "Each latency observed as it came.",
        ["face", "route"],
        buckets=LATENCY_BUCKETS,
        registry=registry,
    )
    # Bounds themselves fall in their own bucket; past the last, +Inf.
    latencies = [0.0, 0.0005, 0.0005001, 0.003, 0.25, 30.0, 31.0]
    route = {"face": "spec", "route": "/{source}"}
    requests = 300
    for n in range(requests):
        seconds = latencies[n % len(latencies)]
        figures.request("spec", "/{source}", "GET", 200, seconds)
        figures.request("spec", "/{source}", "BREW", 405, seconds)
        observed.labels(**route).observe(seconds)
        if n in (3, 100):
            early = samples(figures.exposition().decode())
            assert (
                value(early, "toshokan_requests_total", **route, method="GET", status="200")
                == n + 1
            )
    got = samples(figures.exposition().decode())
    assert value(got, "toshokan_requests_total", **route, method="GET", status="200") == requests
    assert value(got, "toshokan_requests_total", **route, method="other", status="405") == requests
    want = samples(generate_latest(registry).decode())
    # Both methods' requests share the route's histogram: twice what was observed once.
    twice = {key: 2 * n for key, n in want.items() if not key[0].endswith("_created")}
    assert len(twice) == 2 + len(LATENCY_BUCKETS) + 1  # count, sum and each bucket, +Inf too
    assert {key: got.get(key) for key in twice} == pytest.approx(twice)
