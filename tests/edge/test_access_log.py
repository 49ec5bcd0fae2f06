"""One escaped line per request, without query strings or credentials."""

import logging
import time

import pytest

from toshokan.edge import AccessLog
from toshokan.edge.accesslog import escaped
from toshokan.logs import write_deferred

pytestmark = pytest.mark.anyio


async def logged(make_host, caplog, requests, access_lines) -> str:
    caplog.set_level(logging.INFO, logger="toshokan.access")
    lines, handler = access_lines
    async with make_host() as host:
        for method, url, headers in requests:
            await host.client.request(method, url, headers=headers)
        handler.flush()
    return "".join(lines)


async def test_one_line_per_request_with_status(make_host, caplog, access_lines):
    text = await logged(
        make_host,
        caplog,
        [("GET", "/catalog", {}), ("GET", "/catalog/nothing-here", {})],
        access_lines,
    )
    lines = text.splitlines()
    assert len(lines) == 2
    assert '203.0.113.7 "GET /catalog" 200' in lines[0]
    assert '"GET /catalog/nothing-here" 404' in lines[1]
    assert "INFO toshokan.access:" in lines[0]


async def test_the_line_is_a_record_of_the_access_logger(make_host, caplog):
    """So logging's configuration routes, filters or formats it like any other line."""
    caplog.set_level(logging.INFO, logger="toshokan.access")
    async with make_host() as host:
        await host.client.get("/catalog?sig=secret")
    write_deferred()  # the access log's records are made off the request path
    records = [r for r in caplog.records if r.name == "toshokan.access"]
    assert len(records) == 1 and records[0].levelno == logging.INFO
    assert records[0].getMessage().startswith('203.0.113.7 "GET /catalog" 200 ')


async def test_encoded_newline_cannot_forge_a_line(make_host, caplog, access_lines):
    text = await logged(
        make_host,
        caplog,
        [("GET", '/catalog/x%0A2026-01-01 INFO toshokan.access: 1.2.3.4 "GET /%22a', {})],
        access_lines,
    )
    assert len(text.splitlines()) == 1
    assert "\\x0a2026-01-01" in text and "\\x22a" in text


async def test_no_query_string_and_no_credentials(make_host, caplog, access_lines):
    text = await logged(
        make_host,
        caplog,
        [
            (
                "GET",
                "/_/catalog/pages/1?exp=99&sig=secret-signature",
                {"Authorization": "Bearer tok-abcdef", "Cookie": "c=secret-cookie"},
            )
        ],
        access_lines,
    )
    assert '"GET /_/catalog/pages/1" 200' in text
    for secret in ("secret-signature", "tok-abcdef", "secret-cookie", "exp="):
        assert secret not in text


async def test_nothing_written_when_the_log_is_off(make_host, caplog, access_lines):
    caplog.set_level(logging.WARNING, logger="toshokan.access")
    lines, handler = access_lines
    async with make_host() as host:
        await host.client.get("/catalog")
        handler.flush()
    assert lines == []


async def test_the_log_follows_its_level_and_switches_as_they_change(
    make_host, caplog, access_lines
):
    """The request path reads the access logger's cached answer to isEnabledFor: a level
    changed, the logger disabled, or logging disabled while the host runs, each holds at once."""
    logger = logging.getLogger("toshokan.access")
    caplog.set_level(logging.INFO, logger="toshokan.access")
    lines, handler = access_lines
    async with make_host() as host:

        async def written(path: str) -> bool:
            await host.client.get(path)  # replayed from the second on: the edge's one pass
            handler.flush()
            said = any(f'"GET {path}"' in line for line in lines)
            lines.clear()
            return said

        assert await written("/catalog") and await written("/catalog")
        logger.setLevel(logging.WARNING)
        assert not await written("/catalog")
        logger.setLevel(logging.INFO)
        assert await written("/catalog")
        logger.disabled = True
        try:
            assert not await written("/catalog")
        finally:
            logger.disabled = False
        assert await written("/catalog")
        logging.disable(logging.INFO)
        try:
            assert not await written("/catalog")
        finally:
            logging.disable(logging.NOTSET)
        assert await written("/catalog")


def test_escaping_covers_every_unprintable_character():
    assert escaped("/plain/path") == "/plain/path"
    assert escaped("a\r\nb\x1b[31m\u2028\x7f") == "a\\x0d\\x0ab\\x1b[31m\\u2028\\x7f"
    assert escaped('q"\\') == "q\\x22\\x5c"
    assert escaped("\udcff") == "\\udcff"
    assert escaped("日本") == "日本"


async def test_lines_are_buffered_until_flushed(caplog, access_lines):
    caplog.set_level(logging.INFO, logger="toshokan.access")
    lines, handler = access_lines
    log = AccessLog()
    log.line("1.2.3.4", "GET", "/a", 200, 0.001, b"r-a", time.monotonic())
    log.line("1.2.3.4", "GET", "/b", 200, 0.001, b"r-b", time.monotonic())
    assert lines == []
    handler.flush()
    assert len(lines) == 1 and lines[0].count("\n") == 2


def test_a_line_s_time_is_the_wall_clock_s_when_its_request_ended(caplog):
    """The request gives the monotonic clock's reading; the record's time is still the wall
    time at that moment (as logging gives it, to the millisecond), lines in their order."""
    caplog.set_level(logging.INFO, logger="toshokan.access")
    log = AccessLog()
    before = time.time()
    for name in ("a", "b", "c"):
        log.line("1.2.3.4", "GET", f"/{name}", 200, 0.001, b"r-" + name.encode(), time.monotonic())
        time.sleep(0.002)
    after = time.time()
    time.sleep(0.05)  # written well after: its time is still when it was kept
    write_deferred()
    created = [r.created for r in caplog.records if r.name == "toshokan.access"]
    assert len(created) == 3 and created == sorted(created)
    assert before - 0.001 <= created[0] and created[-1] <= after - 0.002 + 0.001
    assert created[1] - created[0] >= 0.002
