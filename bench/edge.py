"""What the edge costs: a cached ``GET /local`` on the host next to a bare ASGI app returning the
same bytes, under the same uvicorn process, in one run.

Why: the edge (header bounds, budgets, replay of cached answers, request ids,
metrics, the access log) runs for every request, so its cost is a share of
everything the host can serve. The host runs as an operator runs it: the
access log at its default level (info, text lines, each ending with the
request's id), a request id on every answer, metrics on (``/_/metrics``), the
rate limiter on with a limit never reached. The bench checks each of those
before measuring, and after it that the log holds a line for every answer
counted, with ids that never repeat.

Two figures for each side, toshokan then bare in alternating rounds, the
median of each:

- requests per second under ``wrk`` (one thread, keep-alive);
- requests per CPU-second of the server process (all its threads, the log
  writer's included): what a core gives each side whatever else the
  machine runs at the time, and so the steadier ratio on a shared machine.

The same bench runs under uvicorn (the host's server) and, when it is
installed (``.venv/bin/python -m pip install -e '.[bench]'``), under granian,
one worker process each: its ratio says what the edge costs on a faster
server, not what the host gets from one (docs/performance.md: the host's
connection bounds do not hold under granian, which it does not serve with).
Only ratios within one engine's run compare.

Run::

    .venv/bin/python bench/edge.py                     # about 80 s an engine
    .venv/bin/python bench/edge.py --rounds 7 --duration 8 --engines uvicorn
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from host_http import (
    BARE_PREFIX,
    LOAD_PATH,
    SOURCE,
    Endpoint,
    Load,
    Result,
    pick_loadgen,
    record,
    start_server,
    stop_process,
    verify,
)

ENDPOINT = Endpoint(f"GET /{SOURCE}", "configuration", "GET", f"/{SOURCE}", "replayed")
#: An access line as the host writes it by default, ending with the request's id.
ACCESS_LINE = re.compile(
    rb' INFO toshokan\.access: \S+ "GET /local" 200 \S+ms ([0-9a-f]{32})$', re.M
)


@dataclass(frozen=True)
class Run:
    result: Result
    cpu_seconds: float

    @property
    def per_cpu_second(self) -> float:
        return self.result.requests / self.cpu_seconds if self.cpu_seconds else 0.0


def cpu_seconds(pid: int) -> float:
    """User and system CPU so far of process ``pid``, all its threads and its child processes
    (granian serves from a worker process its main process started)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    children = {int(child) for task in Path(f"/proc/{pid}/task").iterdir() for child in _of(task)}
    return own + sum(cpu_seconds(child) for child in children)


def _of(task: Path) -> list[str]:
    """The child processes a thread started; none once the thread is gone (the log writer's
    come and go)."""
    try:
        return (task / "children").read_text().split()
    except FileNotFoundError:
        return []


def measured(run: Callable[[Load], Result], load: Load, pid: int) -> Run:
    before = cpu_seconds(pid)
    result = run(load)
    return Run(result, cpu_seconds(pid) - before)


def check_everything_is_on(base: str) -> None:
    """The host as an operator runs it, or the figure means something else."""
    import httpx

    answer = httpx.get(base + ENDPOINT.path)
    if not re.fullmatch(r"[0-9a-f]{32}", answer.headers.get("x-request-id", "")):
        raise SystemExit(f"no request id on the answer: {answer.headers}")
    metrics = httpx.get(base + "/_/metrics")
    if metrics.status_code != 200 or "toshokan_requests_total" not in metrics.text:
        raise SystemExit(f"metrics are not on: /_/metrics answered {metrics.status_code}")


def check_the_log(log: Path, answered: int) -> str:
    """A line for every answer wrk counted (the server may have answered a few more), every
    id once."""
    ids = ACCESS_LINE.findall(log.read_bytes())
    if len(ids) < answered:
        raise SystemExit(f"the access log has {len(ids)} lines for {answered} answers")
    if len(set(ids)) != len(ids):
        raise SystemExit("an id appears on two access lines")
    return f"access log: {len(ids)} lines for {answered} answers counted, every id distinct"


def benchmark(args: argparse.Namespace) -> None:
    reports = []
    for engine in args.engines:
        print(f"{engine}:", flush=True)
        reports.append(run_engine(args, engine))
        print()
    print("\n\n".join(reports))


def run_engine(args: argparse.Namespace, engine: str) -> str:
    import httpx

    from toshokan.sources.local.demo import write_demo_library

    args.engine = engine
    with tempfile.TemporaryDirectory(prefix="toshokan-bench-edge-") as tmp:
        workdir = Path(tmp)
        write_demo_library(workdir / "library", series=4, chapters=2, pages=1)
        server, port = start_server(args, workdir)
        try:
            base = f"http://127.0.0.1:{port}"
            recordings = record(base, [ENDPOINT], 1, workdir)
            httpx.put(base + LOAD_PATH, content=json.dumps(recordings)).raise_for_status()
            verify(base, [ENDPOINT])
            check_everything_is_on(base)
            run, loadgen = pick_loadgen(args, port, workdir)
            sides: dict[str, list[Run]] = {"toshokan": [], "bare": []}
            answered = 0
            for _ in range(args.rounds):
                for side, path in (
                    ("toshokan", ENDPOINT.path),
                    ("bare", BARE_PREFIX + "configuration"),
                ):
                    if args.warmup:
                        warm = run(Load("GET", path, None, 0, args.connections, args.warmup))
                        answered += warm.requests if side == "toshokan" else 0
                    done = measured(
                        run, Load("GET", path, None, 0, args.connections, args.duration), server.pid
                    )
                    answered += done.result.requests if side == "toshokan" else 0
                    sides[side].append(done)
                    print(
                        f"  {side:<9} {done.result.rps:>9.0f} req/s  "
                        f"{done.per_cpu_second:>9.0f} req/CPU-s  errors {done.result.errors}",
                        flush=True,
                    )
            time.sleep(1)  # the last batch of lines written
        finally:
            stop_process(server)
        log_check = (
            check_the_log(workdir / "server.log", answered)
            if args.log_level == "info"
            else "access log off (--log-level warning)"
        )
    return report(sides, args, loadgen, log_check)


def report(sides: dict[str, list[Run]], args: argparse.Namespace, loadgen: str, log: str) -> str:
    host, bare = sides["toshokan"], sides["bare"]

    def paired(figure: Callable[[Run], float]) -> tuple[float, float, float]:
        """The median of each round's ratio (its two runs back to back see the same machine),
        and the lowest and highest."""
        ratios = sorted(figure(h) / figure(b) for h, b in zip(host, bare, strict=True))
        return statistics.median(ratios), ratios[0], ratios[-1]

    def med(runs: list[Run], figure: Callable[[Run], float]) -> float:
        return statistics.median(figure(r) for r in runs)

    rows = []
    for name, figure in (
        ("req/s", lambda r: r.result.rps),
        ("req/CPU-second", lambda r: r.per_cpu_second),
    ):
        ratio, low, high = paired(figure)
        rows.append(
            f"{name:<16} {med(host, figure):>10.0f} {med(bare, figure):>10.0f} "
            f"{ratio:>7.2f}  ({low:.2f}-{high:.2f})"
        )
    p99 = (med(host, lambda r: r.result.p99_ms), med(bare, lambda r: r.result.p99_ms))
    errors = sum(r.result.errors for r in host + bare)
    return "\n".join(
        [
            f"edge under {args.engine}: cached GET /{SOURCE}, toshokan next to a bare ASGI app "
            f"with the same bytes, one {args.engine} worker process",
            f"load: {loadgen}; {args.connections} connections; {args.rounds} rounds of "
            f"{args.duration} s a side (+{args.warmup} s warm-up), host then bare",
            f"host: log level {args.log_level} (info: the access log, text, with request ids), "
            "request ids on answers, metrics on, rate limiter on",
            f"machine: {os.cpu_count()} cores ({cpu_model()}); Python {sys.version.split()[0]}; "
            f"{busy()}",
            "",
            f"{'':<16} {'toshokan':>10} {'bare':>10} {'ratio':>7}  (median of the rounds' "
            "ratios; lowest-highest)",
            *rows,
            f"{'p99 ms':<16} {p99[0]:>10.2f} {p99[1]:>10.2f}",
            "",
            log,
            *([f"WARNING {errors} errors"] if errors else []),
        ]
    )


def cpu_model() -> str:
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return "model unknown"
    return next(
        (line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")),
        "model unknown",
    )


def busy() -> str:
    """The machine's load while measuring: other processes' work shows in every figure."""
    try:
        return "load average " + " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "load average unknown"


def granian_installed() -> bool:
    return importlib.util.find_spec("granian") is not None


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--duration", type=int, default=3, help="seconds per measured run")
    parser.add_argument("--rounds", type=int, default=9, help="alternating runs of each side")
    parser.add_argument("--warmup", type=int, default=1, help="seconds before each run (0: none)")
    parser.add_argument("--loadgen", choices=["auto", "wrk", "python"], default="auto")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--processes", type=int, default=1, help="Python load generators")
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["info", "warning"],
        help="info: the default, with the access log; warning: without it, to see its cost",
    )
    parser.add_argument(
        "--engines",
        default="uvicorn,granian" if granian_installed() else "uvicorn",
        help="servers to measure, one after the other (granian: pip install -e '.[bench]')",
    )
    args = parser.parse_args()
    args.engines = args.engines.split(",")
    args.rate_limit = 100_000_000  # as host_http's server takes it: never reached
    return args


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    benchmark(parse_args())
