"""The access log is written off the request path, yet nothing of it is lost or reordered: lines
come in order with the host's other lines, promptly without anything else to write them, every
line whole; a process killed outright loses at most its last fraction of a second; and request
ids never repeat, across requests, processes and workers."""

import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.helpers.serving import REPO, free_port, serve_command
from toshokan.edge import request_ids
from toshokan.edge.accesslog import AccessLog, said
from toshokan.logs import (
    FLUSH_SECONDS,
    LOG_FORMAT,
    BatchedLines,
    LineFormatter,
    RequestIds,
    write_deferred,
)
from toshokan.sources.local.demo import write_demo_library

pytestmark = pytest.mark.anyio


@pytest.fixture
def written():
    """Every line the host writes, through its own handler and format, as written."""
    write_deferred()  # lines of earlier tests, to their own handlers
    lines: list[str] = []
    handler = BatchedLines(write=lines.append)
    handler.addFilter(RequestIds())
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def host_lines(lines: list[str]) -> list[str]:
    return [line for text in lines for line in text.splitlines() if " toshokan" in line]


async def test_lines_keep_their_order_with_the_host_s_other_lines(make_host, written):
    async with make_host() as host:
        await host.client.get("/catalog", headers={"X-Request-Id": "first"})
        # An adapter failing with a bug: the host logs it while the first access line waits.
        await host.client.get("/catalog/crash", headers={"X-Request-Id": "second"})
        await host.client.get("/catalog", headers={"X-Request-Id": "third"})
        logging.getLogger("toshokan").warning("after the third")
    lines = host_lines(written)
    access = [i for i, line in enumerate(lines) if "toshokan.access:" in line]
    error = next(i for i, line in enumerate(lines) if "unhandled error" in line)
    assert [lines[i].rsplit(" ", 1)[1] for i in access] == ["first", "second", "third"]
    assert access[0] < error < access[1] < access[2] < len(lines) - 1
    assert lines[-1].endswith("WARNING toshokan: after the third")


def test_lines_are_written_without_anything_else_to_write_them(written):
    """The writer thread writes them: a quiet host's last requests are not held back."""
    logging.getLogger("toshokan.access").setLevel(logging.INFO)
    AccessLog().line("192.0.2.1", "GET", "/quiet", 200, 0.002, b"r-quiet", time.monotonic())
    deadline = time.monotonic() + 10
    while not written and time.monotonic() < deadline:
        time.sleep(0.02)
    [line] = host_lines(written)
    assert line.endswith('INFO toshokan.access: 192.0.2.1 "GET /quiet" 200 2.0ms r-quiet')


def test_a_host_killed_outright_loses_at_most_its_last_lines(tmp_path: Path) -> None:
    """SIGKILL: no handler runs. Lines of answers given more than a flush interval (and a
    margin for a busy machine) before the kill are in the log, whole and in order."""
    write_demo_library(tmp_path / "library", series=1, chapters=1, pages=1)
    port = free_port()
    log = tmp_path / "host.log"
    command = serve_command(
        "--port", str(port), "--library", str(tmp_path / "library"), "--rate-limit", "100000"
    )  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            env={**os.environ, "TOSHOKAN_HOST__DATA_DIR": str(tmp_path / "data")},
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            try:
                if httpx.get(f"{base}/local/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        with httpx.Client(base_url=base) as client:
            ids = [
                client.get("/local", headers={"X-Request-Id": f"before-kill-{n}"}).headers[
                    "x-request-id"
                ]
                for n in range(200)
            ]
        time.sleep(FLUSH_SECONDS + 2)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=20)
    text = log.read_text()
    logged = [line.rsplit(" ", 1)[1] for line in text.splitlines() if "before-kill-" in line]
    assert logged == ids
    bad = [x for x in text.splitlines() if "before-kill" in x and '"GET /local" 200 ' not in x]
    assert not bad, bad[:3]


def test_ids_never_repeat_across_processes_or_a_forked_child() -> None:
    script = "from toshokan.edge import request_ids as r; print(next(r.new_ids), next(r.new_ids))"
    made = [
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(3)
    ]
    ids = [i for pair in made for i in pair]
    assert all(i.startswith("b'") for i in ids)
    ids = [i[2:-1] for i in ids]
    assert len(set(ids)) == 6 and all(len(i) == 32 and i.isalnum() for i in ids)
    assert len({i[:16] for i in ids}) == 3  # a prefix of its own for each process
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child's ids, never its parent's next ones
        os.write(write, next(request_ids.new_ids) + b" " + next(request_ids.new_ids))
        os._exit(0)
    os.waitpid(child, 0)
    from_child = os.read(read, 200).split()
    os.close(read)
    os.close(write)
    from_parent = [next(request_ids.new_ids), next(request_ids.new_ids)]
    assert not set(from_child) & set(from_parent)
    assert from_child[0][:16] != from_parent[0][:16]


def test_ids_never_repeat_across_workers(tmp_path: Path) -> None:
    from tests.helpers.serving import running_host

    env = {"TOSHOKAN_HOST__DATA_DIR": str(tmp_path / "data")}
    (tmp_path / "library").mkdir()
    args = ["--library", str(tmp_path / "library"), "--workers", "2"]
    with running_host(args, "/local/health", env=env, timeout=90) as base:
        ids: list[str] = []
        # A new connection each, until both workers have answered (which one accepts is the
        # kernel's choice).
        while len({i[:16] for i in ids}) < 2 and len(ids) < 500:
            ids.append(httpx.get(f"{base}/local").headers["x-request-id"])
    assert len({i[:16] for i in ids}) == 2
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("replayed", [False, True])
@pytest.mark.parametrize("path", ["/plain", '/a "quoted"\\path\x1b[31m\n', "/" + "long" * 400])
def test_the_host_s_own_lines_are_logging_s_lines(path: str, replayed: bool) -> None:
    """The host's handler writes an access line without making its record (LineFormatter):
    the same line, byte for byte, that logging's own Formatter writes from the record; so is
    a replayed answer's, whose method, path and status were made into text once."""
    logger = logging.getLogger("toshokan.access")
    written: dict[str, list[str]] = {}
    for name, formatter in (("host", LineFormatter()), ("logging", logging.Formatter(LOG_FORMAT))):
        write_deferred()
        lines: list[str] = []
        handler = BatchedLines(write=lines.append)
        handler.addFilter(RequestIds())
        handler.setFormatter(formatter)
        logger.addHandler(handler)
        propagate, level, logger.propagate = logger.propagate, logger.level, False
        logger.setLevel(logging.INFO)
        try:
            if replayed:  # a batch of both kinds of line
                AccessLog().line_said(
                    "192.0.2.1", said("GET", path, 404), 0.01234, b"r-same", time.monotonic()
                )
            AccessLog().line("192.0.2.1", "GET", path, 404, 0.01234, b"r-same", time.monotonic())
            write_deferred()
        finally:
            logger.removeHandler(handler)
            logger.propagate = propagate
            logger.setLevel(level)
        written[name] = "".join(lines).splitlines()
    host, plain = written["host"], written["logging"]
    assert len(host) == len(plain) == 1 + replayed
    # The time differs (two lines, two moments); its form does not, nor anything after it.
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} "
    for ours, theirs in zip(host, plain, strict=True):
        assert re.match(stamp, ours) and re.match(stamp, theirs)
        assert ours[24:] == theirs[24:]
        assert ours[24:].startswith('INFO toshokan.access: 192.0.2.1 "GET /')
        assert ours.endswith('" 404 12.3ms r-same')
