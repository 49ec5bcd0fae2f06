"""What a cached ``GET /:source`` costs the edge, in calls: a guard that fails on added work
without timing anything (:mod:`tests.helpers.calls`).

The host is built as ``toshokan serve`` builds it, with everything an operator runs on: the
access log at info, metrics, request ids, the rate limiter. The request goes to the ASGI
application as uvicorn hands it over, so only the host's own calls are counted.
"""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from asgi_lifespan import LifespanManager

from tests.helpers.calls import access_log, count_calls, within_budget
from toshokan.config import load_settings
from toshokan.logs import write_deferred
from toshokan.serving import served_app
from toshokan.sources.local.demo import write_demo_library

pytestmark = pytest.mark.anyio

#: Calls of one replayed answer on the request path, with the access log and metrics on
#: (21 with the test's scope, 22 before the access line's parts were kept in line rather than
#: through a call of the log's, 25 before the id came from a batch made ahead with no call of
#: its own, the replay table's answer was read without a call while it need not be checked
#: with the core, and a replay's duration in the first bucket of its figures was counted
#: there without searching the buckets; down from 51: a plain GET of a cached answer takes the edge's
#: one pass, which reads the head once, id included, and calls no helper for the steps it
#: skips; the server calls the edge with no layer of Starlette's in front; the figures are
#: two additions to the answer's own series, in line; 2 of them are the test's own
#: ``send``; 27 when the one pass read the clock a third time for the replay's "now"
#: rather than taking its start's reading, 26 when the access line read the wall clock, not
#: taking the pass's end reading (the writer makes it the wall time); 21 too when the replay key
#: was made in line and the access logger's level read from its cache, each a C call now
#: in place of a Python one): reading the head
#: (bounds, the id), the replay table, the client's budget, the answer with its id, the
#: figures and keeping the access line's parts. A few to spare for a Python release moving a
#: call; 20 more is a regression.
REQUEST_BUDGET = 26
#: Lines in the measured batch of the log's writer thread.
LINES = 20
#: Calls the writer thread makes for a batch of ``LINES`` access lines (49, 52 before a
#: second's text was made on its first lookup rather than the batch's seconds gathered in a
#: set first and a set of texts replaced comparing each line's with None; none of them a
#: line's own: finding the handlers, checking they are the host's own, the lines' parts taken
#: out of the flat list they are kept in as one slice, their times made wall times at once
#: (2 calls more than when each line read the wall clock on the request path), the lines made a column at a time in
#: C with one format for all, one write; 70 when each line's parts were popped from a queue
#: one call a line, 74 when a replayed answer's method, path and status were checked and
#: formatted for each of its lines, not made into text once beside the answer; 138 when each
#: line was made on its own and 367 when each was a record). A call a line is over.
LINES_BUDGET = 53


def request_scope(path: str) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "server": ("127.0.0.1", 8080),
        "client": ("127.0.0.1", 50000),
        "scheme": "http",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8080"), (b"user-agent", b"wrk")],
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "state": {},
    }


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[Any]:
    write_demo_library(tmp_path / "library", series=2, chapters=1, pages=1)
    settings = load_settings(
        None,
        host={"data_dir": str(tmp_path / "data")},
        sources={"local": {"root": str(tmp_path / "library")}},
    )
    assert settings.metrics.enabled
    application = served_app(settings)
    async with LifespanManager(application):
        yield application


async def get(app: Any, path: str) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(request_scope(path), receive, send)
    return sent


async def test_a_replayed_answer_stays_within_its_calls(app: Any) -> None:
    with access_log() as lines:
        for _ in range(3):  # cached, then replayed; patterns compiled, series of figures made
            first = await get(app, "/local")
        write_deferred()
        with count_calls() as calls:
            answer = await get(app, "/local")
        # The access line is made off the request path: nothing of it was written yet.
        written = len(lines)
        write_deferred()
    within_budget(calls, REQUEST_BUDGET, "a replayed GET /local")
    headers = dict(answer[0]["headers"])
    assert answer[1]["body"] == first[1]["body"] and first[0]["status"] == 200
    assert len(lines) == written + 1
    assert ' INFO toshokan.access: 127.0.0.1 "GET /local" 200 ' in lines[-1]
    assert lines[-1].endswith(f"ms {headers[b'x-request-id'].decode()}\n")


async def test_access_lines_stay_within_their_calls(app: Any) -> None:
    with access_log() as lines:
        for _ in range(3):
            await get(app, "/local")
        write_deferred()
        for _ in range(LINES):
            await get(app, "/local")
        with count_calls() as calls:
            write_deferred()
    assert "".join(lines).count('"GET /local" 200') == 3 + LINES
    within_budget(calls, LINES_BUDGET, f"a batch of {LINES} access lines on the writer thread")
