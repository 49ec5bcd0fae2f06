"""The host's memory and health-check latency while one client attacks it.

Why: issue 13's audit found that one unauthenticated client could exhaust
the host's memory or connections. Those are properties of the running
server, not of a unit, so they are measured here rather than asserted in
timed tests: for each attack this prints the answer the attacker got, the
server's resident memory before and after (and its peak so far), how health
checks from another address fared meanwhile, and how many attacking
connections the server still held at the end.

What it does: writes a demo library, starts ``toshokan serve`` on it (the
loopback client is an ordinary client: no trusted proxies), then runs each
attack in turn while a second address (127.0.0.2) asks ``/local/health``
every 100 ms.

Run::

    .venv/bin/python bench/attacks.py               # about 3 minutes
    .venv/bin/python bench/attacks.py --scale 0.2   # smaller attacks, quicker

Attacks only ever go to 127.0.0.1 on a port this script chose.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

SOURCE = "local"
MiB = 1024 * 1024


@dataclass
class Health:
    """Health checks from another address while an attack runs."""

    latencies: list[float] = field(default_factory=list)
    failures: int = 0

    def describe(self) -> str:
        if not self.latencies:
            return f"no answer ({self.failures} failed)"
        ms = sorted(x * 1000 for x in self.latencies)
        p50 = statistics.median(ms)
        return f"p50 {p50:.1f} ms, max {ms[-1]:.0f} ms, {self.failures} failed"


@contextlib.contextmanager
def health_checks(port: int) -> Iterator[Health]:
    import httpx

    health = Health()
    stop = threading.Event()

    def poll() -> None:
        transport = httpx.HTTPTransport(local_address="127.0.0.2")
        with httpx.Client(transport=transport, timeout=5) as client:
            while not stop.is_set():
                started = time.monotonic()
                try:
                    ok = client.get(f"http://127.0.0.1:{port}/{SOURCE}/health").status_code == 200
                except httpx.HTTPError:
                    ok = False
                if ok:
                    health.latencies.append(time.monotonic() - started)
                else:
                    health.failures += 1
                stop.wait(0.1)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        yield health
    finally:
        stop.set()
        thread.join(10)


def memory(pid: int) -> tuple[float, float]:
    """Resident and peak resident MiB of the server process."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    return sock


def status_of(sock: socket.socket, wait: float = 30) -> str:
    """The status line the server answered with, or what happened instead."""
    sock.settimeout(wait)
    try:
        head = sock.recv(200)
    except TimeoutError:
        return "no answer"
    except OSError as error:
        return type(error).__name__
    if not head:
        return "closed"
    return head.split(b"\r\n", 1)[0].decode("latin-1", "replace")[9:]


def still_open(socks: list[socket.socket]) -> int:
    """How many of ``socks`` the server has not closed."""
    count = 0
    for sock in socks:
        sock.setblocking(False)
        try:
            sock.recv(1, socket.MSG_PEEK)  # an answer or the end: the server let go
        except BlockingIOError:
            count += 1
        except OSError:
            pass
    return count


# --------------------------------------------------------------------------- attacks


def huge_body(port: int, scale: float) -> str:
    """POST a search body of 100 MB, sent as fast as the server reads it."""
    size = int(100 * MiB * scale)
    with connect(port) as sock:
        sock.sendall(
            f"POST /{SOURCE}/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {size}\r\n\r\n".encode()
        )
        chunk = b'{"query":"' + b"a" * (MiB - 20)
        sent = 0
        deadline = time.monotonic() + 40
        try:
            while sent < size and time.monotonic() < deadline:
                piece = chunk[: size - sent]
                sock.sendall(piece)
                sent += len(piece)
        except OSError:
            pass
        return f"{status_of(sock)} after {sent // MiB} MiB sent"


def distinct_big_queries(port: int, scale: float) -> str:
    """Thirty searches with distinct 2 MB queries (each would stay in the search cache)."""
    statuses = [search(port, "q" + str(n) + "x" * int(2 * MiB * scale)) for n in range(30)]
    return summary(statuses)


def distinct_allowed_queries(port: int, scale: float) -> str:
    """Three hundred searches with distinct 60 KB queries, under the body limit."""
    statuses = [search(port, f"q{n}" + "y" * 60_000) for n in range(int(300 * scale) or 1)]
    return summary(statuses)


def summary(statuses: list[str]) -> str:
    """How many of each answer, most frequent first."""
    counts: dict[str, int] = {}
    for status in statuses:
        counts[status] = counts.get(status, 0) + 1
    return ", ".join(f"{n} x {status}" for status, n in sorted(counts.items(), key=lambda i: -i[1]))


def search(port: int, query: str) -> str:
    body = json.dumps({"query": query, "page": 1, "sort": "title"}).encode()
    with connect(port) as sock:
        head = (
            f"POST /{SOURCE}/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        with contextlib.suppress(OSError):
            sock.sendall(head + body)
        return status_of(sock)


def huge_header(port: int, scale: float) -> str:
    """One request with a 10 MB header."""
    with connect(port) as sock:
        try:
            sock.sendall(b"GET /local HTTP/1.1\r\nHost: x\r\nX-Big: ")
            sock.sendall(b"a" * int(10 * MiB * scale) + b"\r\n\r\n")
        except OSError:
            pass
        return status_of(sock)


def many_headers(port: int, scale: float) -> str:
    """One request with 100,000 headers."""
    with connect(port) as sock:
        lines = b"".join(b"X-H%d: v\r\n" % n for n in range(int(100_000 * scale)))
        with contextlib.suppress(OSError):
            sock.sendall(b"GET /local HTTP/1.1\r\nHost: x\r\n" + lines + b"\r\n")
        return status_of(sock)


def slow_headers(port: int, scale: float) -> tuple[str, list[socket.socket]]:
    """Two hundred connections sending a header line every 2 s for 30 s."""
    socks = []
    for _ in range(int(200 * scale) or 1):
        with contextlib.suppress(OSError):
            sock = connect(port)
            sock.sendall(b"GET /local HTTP/1.1\r\nHost: x\r\n")
            socks.append(sock)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.sendall(b"X-Slow: 1\r\n")
        time.sleep(2)
    return f"{len(socks)} opened", socks


def idle_connections(port: int, scale: float) -> tuple[str, list[socket.socket]]:
    """Five thousand connections from one client that send half a request, then nothing."""
    socks = []
    refused = 0
    for _ in range(int(5000 * scale) or 1):
        try:
            sock = connect(port)
            sock.sendall(b"GET /local HTTP/1.1\r\n")
            socks.append(sock)
        except OSError:
            refused += 1
    time.sleep(15)
    return f"{len(socks)} opened, {refused} refused", socks


Attack = Callable[[int, float], "str | tuple[str, list[socket.socket]]"]
ATTACKS: list[tuple[str, Attack]] = [
    ("100 MB search body", huge_body),
    ("30 distinct 2 MB queries", distinct_big_queries),
    ("300 distinct 60 KB queries", distinct_allowed_queries),
    ("10 MB header", huge_header),
    ("100,000 headers", many_headers),
    ("200 slow-header sockets, 30 s", slow_headers),
    ("5,000 idle half-requests", idle_connections),
]


# --------------------------------------------------------------------------- running


def start_host(workdir: Path, port: int) -> subprocess.Popen[bytes]:
    import httpx

    env = {
        **os.environ,
        "TOSHOKAN_HOST__DATA_DIR": str(workdir / "data"),
        "TOSHOKAN_SERVER__TRUSTED_PROXIES": "[]",
    }
    log = (workdir / "server.log").open("wb")
    command = [
        sys.executable, "-m", "toshokan", "serve", "--library", str(workdir / "library"),
        "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    log.close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            break
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://127.0.0.1:{port}/{SOURCE}/health").status_code == 200:
                return server
        time.sleep(0.2)
    server.kill()
    raise RuntimeError((workdir / "server.log").read_text()[-3000:])


def stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(args: argparse.Namespace) -> None:
    import resource

    from toshokan.sources.local.demo import write_demo_library

    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with tempfile.TemporaryDirectory(prefix="toshokan-attacks-") as tmp:
        workdir = Path(tmp)
        write_demo_library(workdir / "library", series=20, chapters=4, pages=3)
        port = free_port()
        server = start_host(workdir, port)
        rows = []
        try:
            for name, attack in ATTACKS:
                if args.only and not any(word in name for word in args.only):
                    continue
                before, _ = memory(server.pid)
                started = time.monotonic()
                held: list[socket.socket] = []
                with health_checks(port) as health:
                    outcome = attack(port, args.scale)
                    if isinstance(outcome, tuple):
                        outcome, held = outcome
                    time.sleep(1)
                seconds = time.monotonic() - started
                after, peak = memory(server.pid)
                remaining = still_open(held) if held else None
                for sock in held:
                    sock.close()
                row = (
                    f"{name:<31} {outcome[:38]:<38} {before:>7.0f} {after:>7.0f} {peak:>7.0f} "
                    f"{seconds:>6.1f}  {'-' if remaining is None else remaining:>5}  "
                    f"{health.describe()}"
                )
                print(row, flush=True)
                rows.append(row)
                time.sleep(2)  # the server lets go of what the attack left
        finally:
            stop(server)
    print()
    print(
        f"{'attack':<31} {'attacker got':<38} {'RSS MiB':>7} {'after':>7} {'peak':>7} "
        f"{'s':>6}  {'open':>5}  health checks from 127.0.0.2 meanwhile"
    )
    print("\n".join(rows))
    print(
        "\nRSS: server resident memory before and after the attack; peak: highest so far in the"
        "\nprocess's life. open: attacking connections the server still held at the end."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="attack sizes times this")
    parser.add_argument("--only", nargs="*", help="run the attacks whose name has these words")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
