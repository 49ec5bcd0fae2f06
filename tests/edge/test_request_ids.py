"""Every answer carries its request's id, which every log line of that request shares;
JSON log lines are one object a line, escaped by JSON, without query strings or credentials."""

import json
import logging

import pytest

from toshokan.logs import BatchedLines, RequestIds, json_formatter, write_deferred

pytestmark = pytest.mark.anyio


@pytest.fixture
def json_lines():
    """Every line the host writes during a test, as the JSON format writes it."""
    write_deferred()  # lines of earlier tests, to their own handlers
    lines: list[str] = []
    handler = BatchedLines(write=lines.append)
    handler.addFilter(RequestIds())
    handler.setFormatter(json_formatter())
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.INFO)
    try:
        yield lines, handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def parsed(lines: list[str]) -> list[dict]:
    return [json.loads(line) for text in lines for line in text.splitlines()]


async def test_a_sane_inbound_id_is_echoed(make_host):
    async with make_host() as host:
        answer = await host.client.get("/catalog", headers={"X-Request-Id": "lb-4f2a.9:1"})
    assert answer.headers["x-request-id"] == "lb-4f2a.9:1"


@pytest.mark.parametrize("given", ["", "a b", "x" * 129, "id\u00e9", "<script>"])
async def test_any_other_inbound_id_is_replaced(make_host, given):
    async with make_host() as host:
        answer = await host.client.get("/catalog", headers={"X-Request-Id": given.encode()})
        second = await host.client.get("/catalog")
    made = answer.headers["x-request-id"]
    assert made != given and len(made) == 32 and made.isalnum()
    assert second.headers["x-request-id"] != made


async def test_answers_the_edge_gives_carry_it_too(make_host):
    async with make_host(limits={"rate_limit": 1}) as host:
        await host.client.get("/catalog")
        limited = await host.client.get("/catalog", headers={"X-Request-Id": "r-429"})
        missing = await host.client.get("/nowhere%0A", headers={"X-Request-Id": "r-404"})
    assert limited.status_code == 429 and limited.headers["x-request-id"] == "r-429"
    assert missing.headers["x-request-id"] == "r-404"


async def test_the_access_line_and_the_host_s_own_lines_share_it(make_host, json_lines):
    lines, handler = json_lines
    async with make_host() as host:
        # An adapter failing with a bug: the host logs it, then the access line follows.
        await host.client.get("/catalog/crash", headers={"X-Request-Id": "req-crash"})
        await host.client.get("/catalog?sig=hidden", headers={"Authorization": "Basic c2VjcmV0"})
        handler.flush()
    records = parsed(lines)
    crash = [r for r in records if r.get("request_id") == "req-crash"]
    loggers = {r["logger"] for r in crash}
    assert "toshokan.access" in loggers and len(loggers) >= 2, crash
    access = next(r for r in crash if r["logger"] == "toshokan.access")
    assert access["method"] == "GET" and access["path"] == "/catalog/crash"
    assert access["status"] == 500 and access["client"] == "203.0.113.7"
    assert isinstance(access["ms"], float) and access["level"] == "INFO"
    # The host's lines (the test's own client logs its requests too).
    text = json.dumps([r for r in records if r["logger"] != "httpx"])
    assert "hidden" not in text and "c2VjcmV0" not in text
    # Every request has its own id: the second request's line carries another.
    ids = {r["request_id"] for r in records if r["logger"] == "toshokan.access"}
    assert len(ids) == 2 and "-" not in ids


async def test_a_forged_line_stays_one_json_object(make_host, json_lines):
    lines, handler = json_lines
    async with make_host() as host:
        await host.client.get('/catalog/x%0A{"level": "ERROR"}%22')
        handler.flush()
    access = [r for r in parsed(lines) if r["logger"] == "toshokan.access"]
    assert len(access) == 1
    assert access[0]["path"] == "/catalog/x\\x0a{\\x22level\\x22: \\x22ERROR\\x22}\\x22"
