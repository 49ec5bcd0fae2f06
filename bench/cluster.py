"""Throughput of one host on one process, on ``--workers 2``, and as two replicas sharing Redis.

Why: an operator choosing between more workers and more replicas needs to know
what each buys on the same machine, for answers the host keeps (cached) and for
answers it computes (uncached), and what a hit in the shared cache costs next
to a hit in the process's own memory. All of it is measured in one run, against
the one-process host measured in the same run as the baseline.

What it does:

1. writes a demo library and one configuration (rate limits off, so the load is
   never refused);
2. for each layout, starts the hosts as ``toshokan serve`` processes on free
   loopback ports, with separate data directories:
   ``one process``, ``--workers 2``, and ``2 replicas + Redis`` (``[cluster] redis``,
   when this checkout has that setting and a Redis answers on 127.0.0.1:6379;
   otherwise the row says why it was skipped);
3. drives each layout with bench/host_http.py's load generator (keep-alive
   HTTP/1.1 connections in separate processes), split evenly over the replicas:
   ``cached`` repeats one manga's details (the edge replays the answer);
   ``uncached`` sends searches that are all different (every one is computed);
4. times, one request at a time, a search answered from the process's own memory
   (asked again on the replica that computed it) and one answered from the shared
   cache (asked on the other replica after the first computed it);
5. prints the table, ratios to the one-process host, and stops every process.

Run::

    .venv/bin/python bench/cluster.py                 # about a minute
    .venv/bin/python bench/cluster.py --duration 10 --connections 32

The machine's cores are shared by the load generator and the hosts: what more
workers or replicas gain here is bounded by the cores left to them, which the
output states.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from host_http import Load, Result, free_port, run_python, stop_process

from toshokan.config import HostSettings
from toshokan.sources.local.demo import write_demo_library

REDIS = ("127.0.0.1", 6379)
#: Redis database the bench uses, flushed before and after (tests claim 1-15 in database 0).
REDIS_DATABASE = 15
TIMED_SEARCHES = 200
WORDS = ["the", "of", "sea", "moon", "blue", "red", "city", "night", "star", "a", "e", "o"]


@dataclass(frozen=True)
class Layout:
    label: str
    replicas: int
    workers: int
    redis: bool


LAYOUTS = [
    Layout("one process", 1, 1, False),
    Layout("--workers 2", 1, 2, False),
    Layout("2 replicas + Redis", 2, 1, True),
]


def redis_problem() -> str | None:
    """Why the Redis layout cannot run here, or None."""
    cluster = HostSettings.model_fields.get("cluster")
    annotation = getattr(cluster, "annotation", None) if cluster else None
    if annotation is None or "redis" not in getattr(annotation, "model_fields", {}):
        return "this checkout has no [cluster] redis"
    try:
        with socket.create_connection(REDIS, timeout=1):
            pass
    except OSError:
        return f"no Redis answers on {REDIS[0]}:{REDIS[1]}"
    return None


def flush_redis() -> None:
    import redis

    with redis.Redis(*REDIS, db=REDIS_DATABASE) as client:
        client.flushdb()


def write_config(path: Path, library: Path, redis: bool) -> Path:
    cluster = (
        f'[cluster]\nredis = "redis://{REDIS[0]}:{REDIS[1]}/{REDIS_DATABASE}"\n' if redis else ""
    )
    path.write_text(
        f"""[host]
secret = "bench-secret-shared-by-every-replica"

[limits]
rate_limit = 0
image_rate_limit = 0

{cluster}
[sources.local]
root = "{library}"
start_wait = 30
watch = false
""",
        encoding="utf-8",
    )
    return path


@contextmanager
def hosts(config: Path, workdir: Path, layout: Layout) -> Iterator[list[int]]:
    """The layout's hosts, started and ready; their ports. Stopped on exit."""
    with ExitStack() as stack:
        ports = []
        for index in range(layout.replicas):
            port = free_port()
            data_dir = workdir / f"replica-{index}"
            data_dir.mkdir(parents=True)
            log = stack.enter_context((data_dir / "serve.log").open("wb"))
            process = subprocess.Popen(
                [sys.executable, "-m", "toshokan", "serve", "--config", str(config),
                 "--port", str(port), "--workers", str(layout.workers), "--log-level", "warning"],
                env={**os.environ, "TOSHOKAN_HOST__DATA_DIR": str(data_dir)},
                stdout=log,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
            stack.callback(stop_process, process)
            wait_ready(port, process, data_dir / "serve.log")
            ports.append(port)
        yield ports


def wait_ready(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the host exited:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/local/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the host on {port} was not ready in time")


def search_bodies(count: int, seed: int) -> list[bytes]:
    """``count`` different searches: a query, a sort and a page, so none repeats."""
    chooser = random.Random(seed)
    bodies = set()
    while len(bodies) < count:
        query = " ".join(chooser.sample(WORDS, chooser.randint(0, 2)))
        page = chooser.randint(1, 2000)
        sort = chooser.choice(["title", "updatedAt"])
        bodies.add(json.dumps({"query": query, "page": page, "sort": sort, "limit": 20}))
    return [body.encode() for body in sorted(bodies)]


def drive(ports: list[int], method: str, path: str, bodies: list[bytes] | None,
          args: argparse.Namespace, workdir: Path) -> Result:  # fmt: skip
    """Load split evenly over ``ports`` at once; requests summed, latencies of the first."""
    # The same load generators and connections in all, whatever the number of replicas.
    share = max(1, args.connections // len(ports))
    generators = max(1, args.processes // len(ports))

    def one(index: int) -> Result:
        where = workdir / f"drive-{index}"
        where.mkdir(parents=True, exist_ok=True)
        bodies_file = None
        if bodies is not None:
            bodies_file = where / "bodies.jsonl"
            # Each replica its own searches: a search asked on both would be a shared hit.
            bodies_file.write_bytes(b"\n".join(bodies[index :: len(ports)]))
        load = Load(method, path, bodies_file, 0, share, args.duration)
        return run_python(load, ports[index], generators, where)

    with ThreadPoolExecutor(len(ports)) as pool:
        results = list(pool.map(one, range(len(ports))))
    first = results[0]
    return Result(
        requests=sum(r.requests for r in results),
        seconds=max(r.seconds for r in results),
        p50_ms=first.p50_ms,
        p99_ms=first.p99_ms,
        errors=sum(r.errors for r in results),
        sent=sum(r.sent for r in results),
    )


def timed_hits(ports: list[int]) -> tuple[float, float | None]:
    """Median ms of a search answered from the replica's own memory, and from the shared
    cache (the other replica computed it); the latter None with one replica."""
    own, shared = [], []
    bodies = search_bodies(TIMED_SEARCHES, seed=7)
    with httpx.Client(timeout=10) as client:
        for body in bodies:
            first = f"http://127.0.0.1:{ports[0]}/local/search"
            headers = {"Content-Type": "application/json"}
            client.post(first, content=body, headers=headers).raise_for_status()
            if len(ports) > 1:
                other = f"http://127.0.0.1:{ports[1]}/local/search"
                started = time.perf_counter()
                client.post(other, content=body, headers=headers).raise_for_status()
                shared.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            client.post(first, content=body, headers=headers).raise_for_status()
            own.append((time.perf_counter() - started) * 1000)
    return statistics.median(own), statistics.median(shared) if shared else None


def manga_path(port: int) -> str:
    found = httpx.post(
        f"http://127.0.0.1:{port}/local/search", json={"page": 1, "sort": "title"}, timeout=10
    ).json()["results"]
    return f"/local/{found[0]['slug']}"


def benchmark(args: argparse.Namespace) -> None:
    skipped = redis_problem()
    with tempfile.TemporaryDirectory(prefix="toshokan-cluster-bench-") as temp:
        workdir = Path(temp)
        library = workdir / "library"
        write_demo_library(library, series=args.series, chapters=3, pages=2)
        print(f"cores: {os.cpu_count()} shared by the hosts and the load generator "
              f"({args.processes} process(es), {args.connections} connections); "
              f"{args.duration} s a measurement; library of {args.series} series")  # fmt: skip
        rows: list[tuple[str, Result | None, Result | None, tuple[float, float | None] | None]] = []
        for layout in LAYOUTS:
            if layout.redis and skipped:
                rows.append((f"{layout.label} (skipped: {skipped})", None, None, None))
                continue
            if layout.redis:
                flush_redis()
            config = write_config(workdir / f"{layout.replicas}-{layout.workers}.toml", library,
                                  layout.redis)  # fmt: skip
            where = workdir / layout.label.replace(" ", "_")
            with hosts(config, where, layout) as ports:
                cached = drive(ports, "GET", manga_path(ports[0]), None, args, where / "cached")
                bodies = search_bodies(args.searches, seed=len(rows))
                uncached = drive(ports, "POST", "/local/search", bodies, args, where / "uncached")
                hits = timed_hits(ports)
            if layout.redis:
                flush_redis()
            rows.append((layout.label, cached, uncached, hits))
        report(rows)


def report(rows: list) -> None:
    base_cached, base_uncached = rows[0][1], rows[0][2]
    print(f"\n{'layout':<22} {'cached rps':>11} {'x':>5} {'p50 ms':>7} "
          f"{'uncached rps':>13} {'x':>5} {'p50 ms':>7} {'errors':>7}")  # fmt: skip
    for label, cached, uncached, _ in rows:
        if cached is None or uncached is None:
            print(label)
            continue
        print(f"{label:<22} {cached.rps:>11.0f} {cached.rps / base_cached.rps:>5.2f} "
              f"{cached.p50_ms:>7.2f} {uncached.rps:>13.0f} "
              f"{uncached.rps / base_uncached.rps:>5.2f} {uncached.p50_ms:>7.2f} "
              f"{cached.errors + uncached.errors:>7}")  # fmt: skip
    print("\none search at a time, median ms:")
    for label, _, _, hits in rows:
        if hits is None:
            continue
        own, shared = hits
        line = f"  {label:<22} own memory {own:.2f}"
        if shared is not None:
            line += (
                f"   shared cache (other replica computed it) {shared:.2f}   x{shared / own:.2f}"
            )
        print(line)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=5, help="seconds per measurement")
    parser.add_argument("--connections", type=int, default=16, help="open connections in all")
    parser.add_argument("--processes", type=int, default=2, help="load generator processes")
    parser.add_argument("--series", type=int, default=40, help="series in the demo library")
    parser.add_argument("--searches", type=int, default=60000, help="distinct uncached searches")
    return parser.parse_args()


if __name__ == "__main__":
    benchmark(parse_args())
