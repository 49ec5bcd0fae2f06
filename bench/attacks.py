"""The host's memory and health-check latency while one client attacks it.

Why: issue 13's audit found that one unauthenticated client could exhaust
the host's memory or connections. Those are properties of the running
server, not of a unit, so they are measured here rather than asserted in
timed tests: for each attack this prints the answer the attacker got, the
server's resident memory before and after (and its peak so far), how health
checks from another address fared meanwhile, and how many attacking
connections the server still held at the end.

What it does: writes a demo library and a few hostile chapters beside it
(a 7z and a RAR of 5,000 pages, solid 7z and RAR archives with a large
entry before small pages, a PDF drawing a 20,000 x 20,000 image and one whose
1 x 1 image has a 12,000 x 12,000 soft mask), starts ``toshokan serve`` on it
(the loopback client is an ordinary client: no trusted proxies), then runs
each attack in turn while a second address (127.0.0.2) asks ``/local/health``
every 100 ms. PDF pages are drawn in a child process of the server, whose
resident memory is shown apart ("child").

The archive attacks also print a baseline measured in the same run: the time
this script takes to parse the big archives' directories once, against the
time the server takes per page (a page that reparsed the directory would cost
at least that).

Run::

    .venv/bin/python bench/attacks.py               # about 4 minutes
    .venv/bin/python bench/attacks.py --scale 0.2   # smaller attacks, quicker
    .venv/bin/python bench/attacks.py --only 7z RAR PDF   # the archive attacks only

Attacks only ever go to 127.0.0.1 on a port this script chose.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
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
ROOT = Path(__file__).resolve().parent.parent
#: Baselines measured while the hostile chapters are written, printed with the attacks.
BASELINES: dict[str, str] = {}


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


def children_memory(pid: int) -> float:
    """Peak resident MiB of the server's child processes (the PDF renderer), summed."""
    total = 0.0
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in children.read_text().split():
            with contextlib.suppress(OSError, ValueError):
                total += memory(int(child))[1]
    return total


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


# --------------------------------------------------------------------------- archive attacks


def write_hostile_chapters(library: Path, scale: float) -> None:
    """Series of hostile chapters beside the demo library, and the baselines."""
    import py7zr

    sys.path.insert(0, str(ROOT))
    from tests.sdk.archive_files import FIXTURES, image_pdf
    from tests.sources.local.helpers import jpeg, rar4

    count = int(5000 * scale) or 1
    entries = {f"{n:05d}.jpg": jpeg(size=(8, 8), colour=(n % 250, 0, 0)) for n in range(count)}
    many_7z = library / "Attack Many Seven" / "Ch.1.cb7"
    many_7z.parent.mkdir(parents=True)
    with py7zr.SevenZipFile(many_7z, "w") as archive:
        for name, data in entries.items():
            archive.writestr(data, name)
    many_rar = library / "Attack Many Rar" / "Ch.1.cbr"
    many_rar.parent.mkdir(parents=True)
    many_rar.write_bytes(rar4(entries))
    BASELINES["7z"] = parse_time("7z", many_7z)
    BASELINES["rar"] = parse_time("rar", many_rar)

    solid = library / "Attack Solid Seven" / "Ch.1.cb7"
    solid.parent.mkdir(parents=True)
    page = jpeg()
    with py7zr.SevenZipFile(solid, "w") as archive:  # one solid block
        archive.writestr(page + bytes(48 * MiB), "1.jpg")  # within the work bound
        archive.writestr(page, "2.jpg")
        # Past MAX_PAGE_BYTES, so not listed: the chapter's third page is 4.jpg.
        archive.writestr(page + bytes(int(200 * MiB * max(scale, 0.7))), "3.jpg")
        archive.writestr(page, "4.jpg")  # behind more than the bound
    solid_rar = library / "Attack Solid Rar" / "Ch.1.cbr"
    solid_rar.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "solid-100m.rar", solid_rar)
    image_pdf(library / "Attack Huge Pdf" / "Ch.1.pdf", 20_000, 20_000)
    image_pdf(library / "Attack Masked Pdf" / "Ch.1.pdf", 1, 1, mask=12_000)


def parse_time(kind: str, path: Path) -> str:
    """How long reading the archive's directory once takes here, the median of three."""
    import py7zr
    import rarfile

    times = []
    for _ in range(3):
        started = time.perf_counter()
        if kind == "7z":
            with py7zr.SevenZipFile(path) as archive:
                archive.getnames()
        else:
            rarfile.RarFile(path).infolist()
        times.append(time.perf_counter() - started)
    return f"{statistics.median(times) * 1000:.0f} ms"


def page_paths(port: int, series: str) -> list[str]:
    """The page paths of the series' first chapter, from the content API."""
    import httpx

    from toshokan.sdk.slugs import slugify

    base = f"http://127.0.0.1:{port}/{SOURCE}/{slugify(series)}"
    with httpx.Client(timeout=60) as client:
        chapter = client.get(f"{base}/chapters").json()[0]["slug"]
        urls = client.get(f"{base}/chapters/{chapter}").json()
    return [httpx.URL(url).raw_path.decode() for url in urls]


def fetch(port: int, paths: list[str], workers: int) -> str:
    """GET every path, ``workers`` at a time; the answers counted by status."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:

        def one(path: str) -> str:
            try:
                return str(client.get(path).status_code)
            except httpx.HTTPError as error:
                return type(error).__name__

        with ThreadPoolExecutor(workers) as pool:
            return summary(list(pool.map(one, paths)))


def many_pages(series: str, kind: str) -> Attack:
    def attack(port: int, scale: float) -> str:
        paths = page_paths(port, series)
        step = max(1, len(paths) // 300)
        wanted = paths[::step][:300]
        started = time.monotonic()
        answers = fetch(port, wanted, 1)
        per_page = (time.monotonic() - started) / len(wanted) * 1000
        return f"{answers}; {per_page:.1f} ms/page, parse {BASELINES[kind]}"

    return attack


def concurrent_page(series: str, number: int, times: int) -> Attack:
    def attack(port: int, scale: float) -> str:
        path = page_paths(port, series)[number - 1]
        return fetch(port, [path] * times, 8)

    return attack


Attack = Callable[[int, float], "str | tuple[str, list[socket.socket]]"]
ATTACKS: list[tuple[str, Attack]] = [
    ("100 MB search body", huge_body),
    ("30 distinct 2 MB queries", distinct_big_queries),
    ("300 distinct 60 KB queries", distinct_allowed_queries),
    ("10 MB header", huge_header),
    ("100,000 headers", many_headers),
    ("200 slow-header sockets, 30 s", slow_headers),
    ("5,000 idle half-requests", idle_connections),
    ("7z 5,000 pages: 300 read", many_pages("Attack Many Seven", "7z")),
    ("RAR 5,000 pages: 300 read", many_pages("Attack Many Rar", "rar")),
    ("solid 7z, 48 MiB before: 16x", concurrent_page("Attack Solid Seven", 2, 16)),
    ("solid 7z, 200 MiB before: 16x", concurrent_page("Attack Solid Seven", 3, 16)),
    ("solid RAR, 100 MiB before: 16x", concurrent_page("Attack Solid Rar", 2, 16)),
    ("PDF 20000x20000 image: 8x", concurrent_page("Attack Huge Pdf", 1, 8)),
    ("PDF 12000x12000 mask: 1x", concurrent_page("Attack Masked Pdf", 1, 1)),
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
        write_hostile_chapters(workdir / "library", args.scale)
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
                child = children_memory(server.pid)
                remaining = still_open(held) if held else None
                for sock in held:
                    sock.close()
                row = (
                    f"{name:<31} {outcome[:52]:<52} {before:>7.0f} {after:>7.0f} {peak:>7.0f} "
                    f"{child:>6.0f} {seconds:>6.1f}  {'-' if remaining is None else remaining:>5}  "
                    f"{health.describe()}"
                )
                print(row, flush=True)
                rows.append(row)
                time.sleep(2)  # the server lets go of what the attack left
        finally:
            stop(server)
    print()
    print(
        f"{'attack':<31} {'attacker got':<52} {'RSS MiB':>7} {'after':>7} {'peak':>7} "
        f"{'child':>6} {'s':>6}  {'open':>5}  health checks from 127.0.0.2 meanwhile"
    )
    print("\n".join(rows))
    print(
        "\nRSS: server resident memory before and after the attack; peak: highest so far in the"
        "\nprocess's life; child: peak of the server's children (the PDF renderer), MiB."
        "\nopen: attacking connections the server still held at the end. ms/page: the server's"
        "\ntime per page read one at a time; parse: this script reading the directory once."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="attack sizes times this")
    parser.add_argument("--only", nargs="*", help="run the attacks whose name has these words")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
