"""HTTP throughput of toshokan against a bare ASGI app serving the same bytes.

Why: the numbers that matter to a deployment are requests per second and tail
latency over real sockets, and they only mean something next to a floor. The
floor here is a few lines of raw ASGI that replay byte-identical responses
(recorded from toshokan itself a moment earlier) inside the *same* uvicorn
process, driven by the same load generator in the same run. The ratio
toshokan/bare is then the share of the server's capacity that is left once the
framework, the middleware stack, validation and the source are paid for.

What it does:

1. writes a demo library (``write_demo_library``) into a temporary directory;
2. starts one uvicorn process (this script with ``--serve``) whose ASGI app
   sends ``/_bare/...`` to the replaying app and everything else to toshokan
   (local source on the demo library, default configuration: access log on,
   rate limiter and image budget on with a limit no request of the run reaches);
3. calls each measured endpoint once over HTTP and loads the answers into the
   replaying app;
4. drives every endpoint, toshokan then bare, with ``wrk`` when it is on PATH,
   else with an asyncio load generator in separate processes;
5. prints a table and stops the server, also on Ctrl-C or errors.

Run::

    .venv/bin/python bench/host_http.py                       # defaults, about 2 minutes
    .venv/bin/python bench/host_http.py --duration 5 --connections 32
    .venv/bin/python bench/host_http.py --loadgen python      # force the fallback client

All traffic goes to 127.0.0.1. The server-side cache is left on, as deployed:
repeated identical requests are answered from it, which the ``cache`` column
says; the ``search (varied)`` row sends a different body on every request so
that each one runs a real search.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BARE_PREFIX = "/_bare/"
LOAD_PATH = BARE_PREFIX + "_load"
SOURCE = "local"
SEARCH_BODY = {"page": 1, "sort": "title", "limit": 20}
#: Varied-search responses recorded for the bare app, which replays them in turn.
VARIED_SAMPLES = 64
#: Response headers uvicorn writes itself; the bare app must not send them twice.
SERVER_HEADERS = frozenset({"date", "server", "transfer-encoding", "connection"})
#: Headers that differ from one answer to the next (the bare app replays recorded ones).
PER_ANSWER = frozenset({b"date", b"x-request-id"})
REQUEST_TIMEOUT = 10.0

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


# --------------------------------------------------------------------------- server side


class BareApp:
    """Replays recorded responses with no framework: the floor for the same bytes.

    It still reads the whole request body, as toshokan must, so a POST costs
    both apps the same receive work; as toshokan's edge, it reads none for a
    GET or HEAD (under granian a ``receive`` is a trip to the server's own
    threads: reading an empty body would make the floor, not the host, slower). Recordings arrive by ``PUT /_bare/_load``
    because they can only be made once the real app is up in this process.
    """

    def __init__(self) -> None:
        self.replies: dict[str, list[tuple[int, list[tuple[bytes, bytes]], bytes]]] = {}
        self.static: dict[str, str] = {}
        self.turn: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = b"" if scope["method"] in ("GET", "HEAD") else await read_body(receive)
        path = scope["path"]
        if path == LOAD_PATH:
            self.load(json.loads(body))
            await respond(send, 204, [], b"")
            return
        replies = self.replies.get(path)
        if not replies:
            await respond(send, 404, [(b"content-type", b"text/plain")], b"not recorded")
            return
        turn = self.turn.get(path, 0)
        self.turn[path] = turn + 1
        status, headers, content = replies[turn % len(replies)]
        static = self.static.get(path)
        if static is not None:
            # The floor for page images: a static file server, answering from disk each time.
            from starlette.responses import FileResponse

            await FileResponse(static, headers=dict(_text(headers)), stat_result=None)(
                scope, receive, send
            )
            return
        await respond(send, status, headers, content)

    def load(self, recordings: dict[str, list[dict[str, Any]]]) -> None:
        self.replies = {
            BARE_PREFIX + name: [
                (
                    reply["status"],
                    [(k.encode("latin-1"), v.encode("latin-1")) for k, v in reply["headers"]],
                    base64.b64decode(reply["body"]),
                )
                for reply in replies
            ]
            for name, replies in recordings.items()
        }
        self.static = {
            BARE_PREFIX + name: replies[0]["file"]
            for name, replies in recordings.items()
            if replies[0].get("file")
        }


def _text(headers: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    """Headers for a Starlette response, minus those FileResponse computes from the file."""
    computed = {b"content-length", b"last-modified", b"etag", b"accept-ranges"}
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers if k not in computed]


async def read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def respond(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def combined(toshokan: ASGIApp, bare: BareApp) -> ASGIApp:
    """One app for one process: both sides share the server, loop and HTTP parser.

    Both are called as bound methods, as the host's ``served_app`` hands its edge to the
    server: calling an object goes through its type's call slot, which costs more.
    """
    bare_call = bare.__call__

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(BARE_PREFIX):
            await bare_call(scope, receive, send)
        else:  # lifespan too: toshokan starts its sources
            await toshokan(scope, receive, send)

    return app


def bench_settings(library: Path, data_dir: Path, limit: int) -> Any:
    from toshokan.config import load_settings

    return load_settings(
        None,
        host={"data_dir": str(data_dir)},
        limits={"rate_limit": limit, "image_rate_limit": limit},
        sources={SOURCE: {"root": str(library)}},
    )


def serve(
    library: Path,
    data_dir: Path,
    port_file: Path,
    log_level: str,
    limit: int,
    engine: str = "uvicorn",
) -> None:
    """The ``--serve`` subprocess: toshokan as ``toshokan serve`` runs it, plus the bare app.

    Default configuration: the access log on (at info), the rate limiter and the image
    budget on, with a limit (``--rate-limit``) no request of the run exceeds.
    """
    if engine == "granian":
        serve_granian(library, data_dir, port_file, log_level, limit)
        return
    import uvicorn

    from toshokan.logs import configure_logging
    from toshokan.serving import served_app, uvicorn_options

    settings = bench_settings(library, data_dir, limit)
    configure_logging(log_level)
    # Binding here and handing the socket over leaves no window for another process to take the port.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port_file.write_text(str(sock.getsockname()[1]))
    options = {
        **uvicorn_options(settings, log_level),  # as `toshokan serve`: its protocol and bounds
        "timeout_keep_alive": 30,
        "workers": None,
    }
    for bound in ("host", "port"):
        options.pop(bound)
    config = uvicorn.Config(combined(served_app(settings), BareApp()), **options)
    uvicorn.Server(config).run(sockets=[sock])


#: How the granian server hands the bench's settings to its worker process.
GRANIAN_ENV = "TOSHOKAN_BENCH_GRANIAN"


def serve_granian(
    library: Path, data_dir: Path, port_file: Path, log_level: str, limit: int
) -> None:
    """The same two apps in one granian worker process (granian's main process supervises it).

    Granian binds the port itself: a free one is picked first (a small window for another
    process to take it, acceptable for a bench).
    """
    from granian.constants import HTTPModes, Interfaces
    from granian.log import LogLevels
    from granian.server import Server

    port = free_port()
    os.environ[GRANIAN_ENV] = json.dumps([str(library), str(data_dir), log_level, limit])
    server = Server(
        "host_http:granian_app",
        address="127.0.0.1",
        port=port,
        interface=Interfaces.ASGI,
        workers=1,
        http=HTTPModes.http1,
        factory=True,
        log_level=LogLevels(log_level),
    )
    port_file.write_text(str(port))
    server.serve()


def granian_app() -> ASGIApp:
    """The granian worker's application, from the settings its parent passed."""
    from toshokan.logs import configure_logging
    from toshokan.serving import served_app

    library, data_dir, log_level, limit = json.loads(os.environ[GRANIAN_ENV])
    configure_logging(log_level)
    settings = bench_settings(Path(library), Path(data_dir), limit)
    app: ASGIApp = combined(served_app(settings), BareApp())
    return app


# --------------------------------------------------------------------------- load generation


@dataclass(frozen=True)
class Load:
    """One measured run: where to send what, how hard and for how long."""

    method: str
    path: str
    bodies_file: Path | None  # one JSON body a line; several are sent in turn
    offset: int
    connections: int
    duration: int  # whole seconds: what wrk accepts


@dataclass(frozen=True)
class Result:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int
    sent: int  # requests started, for counting the distinct bodies of a varied run

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


WRK_SCRIPT = """\
-- generated by bench/host_http.py
wrk.method = "{method}"
local bodies = {{}}
local file = "{bodies_file}"
if file ~= "" then
  wrk.headers["Content-Type"] = "application/json"
  for line in io.lines(file) do bodies[#bodies + 1] = line end
end
if #bodies == 1 then wrk.body = bodies[1] end
n = 0
local threads = {{}}
function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end
if #bodies > 1 then
  function request()
    local i = ({offset} + n * {threads} + id) % #bodies
    n = n + 1
    return wrk.format(nil, nil, nil, bodies[i + 1])
  end
end
function done(summary, latency, requests)
  local sent = 0
  for _, t in ipairs(threads) do sent = sent + (t:get("n") or 0) end
  local e = summary.errors
  io.write(string.format("WRK_RESULT %d %d %.1f %.1f %d %d\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout, sent))
end
"""


def run_wrk(load: Load, base: str, threads: int, workdir: Path) -> Result:
    """Closed-loop load with wrk; its Lua ``done`` hook prints the numbers we need."""
    threads = max(1, min(threads, load.connections))
    script = workdir / "load.lua"
    script.write_text(
        WRK_SCRIPT.format(
            method=load.method,
            bodies_file=load.bodies_file or "",
            offset=load.offset,
            threads=threads,
        )
    )
    command = [
        "wrk", f"-t{threads}", f"-c{load.connections}", f"-d{load.duration}s",
        f"--timeout={REQUEST_TIMEOUT:.0f}s", "-s", str(script), base + load.path,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=load.duration + 60)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    line = next(x for x in done.stdout.splitlines() if x.startswith("WRK_RESULT"))
    requests, micros, p50, p99, errors, sent = line.split()[1:]
    return Result(
        int(requests), int(micros) / 1e6, float(p50) / 1e3, float(p99) / 1e3, int(errors), int(sent)
    )


def run_python(load: Load, port: int, processes: int, workdir: Path) -> Result:
    """The fallback: ``processes`` copies of this script in ``--drive`` mode, merged.

    Each writes its result to a file: tens of thousands of latencies are more
    than a pipe should be trusted with while the parent waits on siblings.
    """
    processes = max(1, min(processes, load.connections))
    share = [
        load.connections // processes + (i < load.connections % processes) for i in range(processes)
    ]
    workers = []
    try:
        for index, connections in enumerate(share):
            spec = {
                "port": port, "method": load.method, "path": load.path,
                "bodies_file": str(load.bodies_file or ""), "offset": load.offset + index,
                "stride": processes, "connections": connections, "duration": load.duration,
                "result_file": str(workdir / f"drive-{index}.json"),
            }  # fmt: skip
            workers.append(
                subprocess.Popen([sys.executable, __file__, "--drive", json.dumps(spec)])
            )
        for worker in workers:
            if worker.wait(timeout=load.duration + 60) != 0:
                raise RuntimeError(f"load generator exited with {worker.returncode}")
        outputs = [
            json.loads((workdir / f"drive-{index}.json").read_text()) for index in range(processes)
        ]
    finally:
        for worker in workers:
            stop_process(worker)
    latencies = sorted(x for out in outputs for x in out["latencies"])
    seconds = max(out["seconds"] for out in outputs)
    return Result(
        requests=len(latencies),
        seconds=seconds,
        p50_ms=percentile(latencies, 50),
        p99_ms=percentile(latencies, 99),
        errors=sum(out["errors"] for out in outputs),
        sent=sum(out["sent"] for out in outputs),
    )


def percentile(ordered: list[float], pct: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))]


def drive(spec: dict[str, Any]) -> None:
    """The ``--drive`` subprocess: keep-alive HTTP/1.1 over raw asyncio streams.

    Raw streams rather than an HTTP client library: a Python client is easily
    slower than the server it measures, and this is the cheapest one that still
    parses every response.
    """
    run: Callable[..., Any] = asyncio.run
    with contextlib.suppress(ImportError):
        from uvloop import run
    bodies = Path(spec["bodies_file"]).read_bytes().splitlines() if spec["bodies_file"] else []
    Path(spec["result_file"]).write_text(json.dumps(run(_drive(spec, bodies))))


async def _drive(spec: dict[str, Any], bodies: list[bytes]) -> dict[str, Any]:
    head = f"{spec['method']} {spec['path']} HTTP/1.1\r\nHost: 127.0.0.1:{spec['port']}\r\n"
    if bodies:
        requests = [
            f"{head}Content-Type: application/json\r\nContent-Length: {len(b)}\r\n\r\n".encode() + b
            for b in bodies
        ]
    else:
        requests = [f"{head}\r\n".encode()]
    counter = iter(range(spec["offset"], 1 << 62, spec["stride"]))
    latencies: list[float] = []
    errors = 0
    started = time.perf_counter()
    deadline = started + spec["duration"]

    async def connection() -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection("127.0.0.1", spec["port"])
        try:
            while time.perf_counter() < deadline:
                request = requests[next(counter) % len(requests)]
                sent = time.perf_counter()
                writer.write(request)
                status = await asyncio.wait_for(read_response(reader), REQUEST_TIMEOUT)
                if status == 200:
                    latencies.append((time.perf_counter() - sent) * 1000)
                else:
                    errors += 1
        finally:
            writer.close()

    outcomes = await asyncio.gather(
        *(connection() for _ in range(spec["connections"])), return_exceptions=True
    )
    errors += sum(isinstance(o, BaseException) for o in outcomes)
    sent_total = (next(counter) - spec["offset"]) // spec["stride"]
    return {
        "latencies": latencies,
        "seconds": time.perf_counter() - started,
        "errors": errors,
        "sent": sent_total,
    }


async def read_response(reader: asyncio.StreamReader) -> int:
    """Read one response (toshokan and the bare app always send Content-Length)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    await reader.readexactly(length)
    return int(head[9:12])


# --------------------------------------------------------------------------- orchestration


@dataclass(frozen=True)
class Endpoint:
    """One row of the table: a toshokan request and the bare path replaying its answer."""

    label: str
    name: str  # bare path: /_bare/<name>
    method: str
    path: str
    cache: str  # what serves repeats of this request on the server side
    bodies: tuple[bytes, ...] = ()  # several: sent in turn, never the same twice in a run


def start_server(args: argparse.Namespace, workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Start the ``--serve`` subprocess and wait until toshokan answers ``GET /``."""
    import httpx

    port_file = workdir / "port"
    log = (workdir / "server.log").open("wb")
    command = [
        sys.executable, __file__, "--serve", "--library", str(workdir / "library"),
        "--data-dir", str(workdir / "data"), "--port-file", str(port_file),
        "--log-level", args.log_level, "--rate-limit", str(args.rate_limit),
        "--engine", getattr(args, "engine", "uvicorn"),
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"server exited:\n{tail(workdir / 'server.log')}")
        if port_file.exists() and port_file.read_text():
            port = int(port_file.read_text())
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/", timeout=2).status_code == 200:
                    return server, port
        time.sleep(0.1)
    stop_process(server)
    raise RuntimeError(f"server did not become ready:\n{tail(workdir / 'server.log')}")


def stop_process(process: subprocess.Popen[Any]) -> None:
    """Terminate, then kill if it lingers: nothing we started outlives the benchmark."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def record(
    base: str, endpoints: list[Endpoint], samples: int, workdir: Path
) -> dict[str, list[dict[str, Any]]]:
    """Call each toshokan endpoint over HTTP and keep status, app headers and body verbatim."""
    import httpx

    recordings: dict[str, list[dict[str, Any]]] = {}
    with httpx.Client(base_url=base, headers={"accept-encoding": "identity"}) as client:
        for endpoint in endpoints:
            replies = []
            for body in endpoint.bodies[:samples] or (None,):
                response = client.request(
                    endpoint.method, endpoint.path, content=body, headers=content_type(body)
                )
                if response.status_code != 200:
                    raise RuntimeError(f"{endpoint.label} {body!r}: {response.status_code}")
                replies.append(as_recording(response))
            if endpoint.cache == "file":
                static = workdir / f"{endpoint.name}.static"
                static.write_bytes(response.content)
                replies[0]["file"] = str(static)
            recordings[endpoint.name] = replies
    return recordings


def content_type(body: bytes | None) -> dict[str, str]:
    """The header every load generator here sends with a body."""
    return {"content-type": "application/json"} if body else {}


def as_recording(response: Any) -> dict[str, Any]:
    """Status, the headers the app wrote (not uvicorn's own) and the body, JSON-safe."""
    return {
        "status": response.status_code,
        "headers": [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, v in response.headers.raw
            if k.decode("latin-1").lower() not in SERVER_HEADERS
        ],
        "body": base64.b64encode(response.content).decode(),
    }


def verify(base: str, endpoints: list[Endpoint]) -> None:
    """Both sides must answer with the same status, headers and bytes, or the ratio means nothing."""
    import httpx

    with httpx.Client(base_url=base, headers={"accept-encoding": "identity"}) as client:
        for endpoint in endpoints:
            body = endpoint.bodies[0] if endpoint.bodies else None
            answers = [
                client.request(endpoint.method, path, content=body, headers=content_type(body))
                for path in (endpoint.path, BARE_PREFIX + endpoint.name)
            ]
            real, bare = (
                (
                    r.status_code,
                    [h for h in r.headers.raw if h[0].lower() not in PER_ANSWER],
                    r.content,
                )
                for r in answers
            )
            if endpoint.cache == "file":  # a static file server writes its own headers
                real, bare = (real[0], [], real[2]), (bare[0], [], bare[2])
            if real != bare:
                raise RuntimeError(
                    f"{endpoint.label}: the bare app's answer differs from toshokan's"
                )


def compact(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def typed_queries(titles: list[str]) -> list[str]:
    """What readers type: nothing (browsing), then title words letter by letter from three on.

    Search-as-you-type is what makes a search endpoint see many distinct
    queries; FTS prefix matching means every prefix still finds its series.
    """
    words = {w.lower() for t in titles for w in t.split() if w.isalpha() and len(w) >= 3}
    return ["", *sorted({w[:n] for w in words for n in range(3, len(w) + 1)})]


def varied_searches(sorts: list[str], matches: dict[str, int]) -> list[bytes]:
    """Distinct, valid search bodies in a fixed shuffled order, so none repeats within a run.

    Every query with every declared sort, both directions and limits 1-50,
    and only the pages a scrolling reader reaches (``matches`` per query), so
    answers are as full as real ones: tens of thousands of bodies, more than a
    run here sends. Limit 100, used to count ``matches``, is never among them,
    so the counting requests leave nothing in the cache for this pool; the
    repeated search (``SEARCH_BODY``, spelled out) is left out for the same reason.
    """
    repeated = {"query": "", "direction": "desc", **SEARCH_BODY}
    combinations = (
        {"query": q, "page": page, "limit": limit, "sort": sort, "direction": direction}
        for q, found in matches.items()
        for sort in sorts
        for direction in ("asc", "desc")
        for limit in range(1, 51)
        for page in range(1, max(1, -(-found // limit)) + 1)
    )
    bodies = [compact(body) for body in combinations if body != repeated]
    random.Random(2026).shuffle(bodies)
    return bodies


def plan(base: str) -> list[Endpoint]:
    """The measured endpoints, built from the library: its sorts, titles and a manga slug."""
    import httpx

    search_body = compact(SEARCH_BODY)
    with httpx.Client(base_url=base) as client:
        sorts = client.get(f"/{SOURCE}").json()["search"]["sort"]
        found = client.post(f"/{SOURCE}/search", content=search_body).json()["results"]
        if not found:
            raise RuntimeError("the demo library search found nothing")
        matches = {
            q: len(
                client.post(
                    f"/{SOURCE}/search",
                    content=compact({"query": q, "page": 1, "limit": 100, "sort": "title"}),
                ).json()["results"]
            )
            for q in typed_queries([entry["title"] for entry in found])
        }
    varied = varied_searches(sorts, matches)
    return [
        Endpoint("GET /", "manifest", "GET", "/", "memo 30s"),
        Endpoint(f"GET /{SOURCE}", "configuration", "GET", f"/{SOURCE}", "memo 30s"),
        Endpoint(
            f"POST /{SOURCE}/search", "search", "POST", f"/{SOURCE}/search", "hit", (search_body,)
        ),
        Endpoint(
            f"POST /{SOURCE}/search (varied)",
            "search-varied",
            "POST",
            f"/{SOURCE}/search",
            "miss",
            tuple(varied),
        ),
        Endpoint(f"GET /{SOURCE}/<slug>", "details", "GET", f"/{SOURCE}/{found[0]['slug']}", "hit"),
        Endpoint("GET page image (static file)", "page", "GET", page_path(base, found), "file"),
    ]


def page_path(base: str, found: list[dict[str, Any]]) -> str:
    """The path of the first page image of the first chapter the library lists."""
    from urllib.parse import urlsplit

    import httpx

    with httpx.Client(base_url=base) as client:
        slug = found[0]["slug"]
        chapter = client.get(f"/{SOURCE}/{slug}/chapters").json()[0]["slug"]
        url = client.get(f"/{SOURCE}/{slug}/chapters/{chapter}").json()[0]
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


@dataclass(frozen=True)
class Row:
    endpoint: Endpoint
    size: int
    toshokan: Result
    bare: Result


def measure(
    endpoints: list[Endpoint],
    recordings: dict[str, list[dict[str, Any]]],
    run: Callable[[Load], Result],
    args: argparse.Namespace,
    workdir: Path,
) -> list[Row]:
    """Each endpoint on toshokan, then on the bare app, back to back in the same process."""
    rows = []
    for endpoint in endpoints:
        bodies_file = None
        if endpoint.bodies:
            bodies_file = workdir / f"{endpoint.name}.bodies"
            bodies_file.write_bytes(b"\n".join(endpoint.bodies) + b"\n")
        # Varied bodies start past the recorded ones, which the recording put in the cache.
        offset = VARIED_SAMPLES if len(endpoint.bodies) > 1 else 0
        sides: tuple[list[Result], list[Result]] = ([], [])
        # Alternating rounds, the median of each side: noise from the rest of the machine
        # falls on both sides rather than on whichever happened to run during it.
        for turn in range(args.rounds):
            for side, path in zip(sides, (endpoint.path, BARE_PREFIX + endpoint.name), strict=True):
                share = (len(endpoint.bodies) - offset) // args.rounds
                start = offset + turn * share if len(endpoint.bodies) > 1 else 0
                load = Load(
                    endpoint.method, path, bodies_file, start, args.connections, args.duration
                )
                if args.warmup > 0 and len(endpoint.bodies) <= 1:
                    run(Load(load.method, path, bodies_file, 0, args.connections, args.warmup))
                side.append(run(load))
                print(f"  {endpoint.label:<34} {path:<28} {side[-1].rps:>9.0f} req/s", flush=True)
        replies = recordings[endpoint.name]
        size = sum(len(base64.b64decode(r["body"])) for r in replies) // len(replies)
        rows.append(Row(endpoint, size, median(sides[0]), median(sides[1])))
    return rows


def median(results: list[Result]) -> Result:
    """The run with the median requests per second (the lower middle of an even count)."""
    return sorted(results, key=lambda r: r.rps)[(len(results) - 1) // 2]


def report(rows: list[Row], header: list[str]) -> str:
    """The table, with notes on anything that would make a number mean less than it seems."""
    lines = [*header, ""]
    lines.append(
        f"{'endpoint':<34} {'cache':<8} {'bytes':>6} | {'toshokan rps':>12} {'p50 ms':>7} "
        f"{'p99 ms':>7} | {'bare rps':>9} {'p50 ms':>7} {'p99 ms':>7} | {'ratio':>6}"
    )
    lines.append("-" * len(lines[-1]))
    for row in rows:
        t, b = row.toshokan, row.bare
        ratio = t.rps / b.rps if b.rps else float("nan")
        lines.append(
            f"{row.endpoint.label:<34} {row.endpoint.cache:<8} {row.size:>6} | {t.rps:>12.0f} "
            f"{t.p50_ms:>7.2f} {t.p99_ms:>7.2f} | {b.rps:>9.0f} {b.p50_ms:>7.2f} "
            f"{b.p99_ms:>7.2f} | {ratio:>6.2f}"
        )
    lines += ["", *notes(rows)]
    return "\n".join(lines)


def notes(rows: list[Row]) -> list[str]:
    out = [
        "cache: memo = the host memoises the answer for that long; hit = served from the search/",
        "  manga result cache after the first request; miss = every request runs the search.",
        "bytes: response body size (mean over the bare app's recordings for the varied row).",
        "ratio: toshokan rps / bare rps; the bare app replays the same bytes and headers in the",
        "  same uvicorn process, so 1 - ratio is what the framework, middleware and source cost.",
    ]
    for row in rows:
        if len(row.endpoint.bodies) > 1:
            fresh = len(row.endpoint.bodies) - VARIED_SAMPLES
            distinct = min(row.toshokan.sent, fresh)
            out.append(
                f"{row.endpoint.label}: {distinct} distinct bodies over {row.toshokan.sent} "
                f"requests sent to toshokan (pool {fresh}); "
                + ("every one a cache miss." if row.toshokan.sent <= fresh else "the rest repeat.")
            )
        for side, result in (("toshokan", row.toshokan), ("bare", row.bare)):
            if result.errors:
                out.append(f"WARNING {row.endpoint.label} ({side}): {result.errors} errors")
    return out


def machine_busy_seconds() -> tuple[float, float] | None:
    """Process and hypervisor-steal CPU seconds of the whole machine since boot (Linux).

    Interrupt time is left out: loopback traffic is mostly our own, and the
    kernel does not charge it to any process's usage.
    """
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, _irq, _softirq, steal = map(int, fields[:8])
    tick = os.sysconf("SC_CLK_TCK")
    return (user + nice + system) / tick, steal / tick


def own_cpu_seconds() -> float:
    """CPU seconds of this process and its waited-for children (server, wrk, drivers)."""
    import resource

    return sum(
        usage.ru_utime + usage.ru_stime
        for usage in (
            resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN),
        )
    )


@dataclass(frozen=True)
class Contention:
    """How much CPU the rest of the machine took while we measured: it shows in the tails."""

    busy: tuple[float, float] | None
    own: float
    wall: float

    @classmethod
    def start(cls) -> Contention:
        return cls(machine_busy_seconds(), own_cpu_seconds(), time.monotonic())

    def describe(self) -> str:
        busy = machine_busy_seconds()
        if busy is None or self.busy is None:
            return "other processes' CPU use: unknown (no /proc/stat)"
        wall = time.monotonic() - self.wall
        others = max(0.0, (busy[0] - self.busy[0]) - (own_cpu_seconds() - self.own)) / wall
        steal = (busy[1] - self.busy[1]) / wall
        return (
            f"other processes used {others:.2f} cores on average during the run, hypervisor "
            f"steal {steal:.2f} (both compete with the server and the load generator)"
        )


def describe(args: argparse.Namespace, loadgen: str, contention: str) -> list[str]:
    """The conditions the numbers were taken under, including what else kept the cores busy."""
    import importlib.util

    import uvicorn

    from toshokan import __version__

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    return [
        f"toshokan {__version__} HTTP benchmark  ({time.strftime('%Y-%m-%d %H:%M:%S %Z')})",
        f"machine: {os.cpu_count()} cores ({usable} usable); Python {sys.version.split()[0]}; "
        f"uvicorn {uvicorn.__version__} ({http}, {loop}), 1 process, server log level {args.log_level}",
        f"load: {loadgen}; {args.connections} connections; {args.duration:g} s per run "
        f"(+{args.warmup:g} s warm-up, not for the varied row); closed loop, keep-alive, 127.0.0.1",
        f"library: demo, {args.series} series x {args.chapters} chapters x {args.pages} pages; "
        f"access log at {args.log_level}; rate limit and image budget {args.rate_limit}/min "
        "(never reached); server cache on (defaults)",
        contention,
    ]


def pick_loadgen(
    args: argparse.Namespace, port: int, workdir: Path
) -> tuple[Callable[[Load], Result], str]:
    """wrk when it is installed (and not refused), else the Python fallback."""
    wrk = shutil.which("wrk")
    if args.loadgen == "wrk" and not wrk:
        raise SystemExit("--loadgen wrk: wrk is not on PATH")
    if wrk and args.loadgen in ("auto", "wrk"):
        version = subprocess.run([wrk, "-v"], capture_output=True, text=True).stdout.split()
        label = f"{' '.join(version[:2]) or 'wrk'}, {args.threads} thread(s)"
        base = f"http://127.0.0.1:{port}"

        def with_wrk(load: Load) -> Result:
            return run_wrk(load, base, args.threads, workdir)

        return with_wrk, label
    why = "wrk not on PATH" if not wrk else "--loadgen python"
    label = (
        f"python asyncio client, {args.processes} process(es) ({why}; "
        "on the bare rows the client, not the server, may be the limit)"
    )

    def with_python(load: Load) -> Result:
        return run_python(load, port, args.processes, workdir)

    return with_python, label


def benchmark(args: argparse.Namespace) -> None:
    """Library, server, recordings, runs, table; the server is stopped whatever happens."""
    import httpx

    from toshokan.sources.local.demo import write_demo_library

    contention = Contention.start()
    with tempfile.TemporaryDirectory(prefix="toshokan-bench-") as tmp:
        workdir = Path(tmp)
        started = time.monotonic()
        write_demo_library(
            workdir / "library", series=args.series, chapters=args.chapters, pages=args.pages
        )
        server, port = start_server(args, workdir)
        try:
            base = f"http://127.0.0.1:{port}"
            endpoints = plan(base)
            recordings = record(base, endpoints, VARIED_SAMPLES, workdir)
            httpx.put(base + LOAD_PATH, content=json.dumps(recordings)).raise_for_status()
            verify(base, endpoints)
            run, loadgen = pick_loadgen(args, port, workdir)
            print(
                f"server up on {base} after {time.monotonic() - started:.1f} s; measuring:",
                flush=True,
            )
            rows = measure(endpoints, recordings, run, args, workdir)
        finally:
            stop_process(server)
        workers = measure_workers(args, workdir) if args.workers > 1 else None
        print()
        print(report(rows, describe(args, loadgen, contention.describe())))
        if workers is not None:
            print(workers_line(args, workers, rows[1]))
        print(f"\ntotal {time.monotonic() - started:.0f} s")


def measure_workers(args: argparse.Namespace, workdir: Path) -> Result:
    """``GET /local`` on ``toshokan serve --workers N``, as a user starts it."""
    import httpx

    port = free_port()
    log = (workdir / "workers.log").open("wb")
    env = {**os.environ, "TOSHOKAN_HOST__DATA_DIR": str(workdir / "data-workers")}
    command = [
        sys.executable, "-m", "toshokan", "serve", "--library", str(workdir / "library"),
        "--port", str(port), "--workers", str(args.workers), "--rate-limit", str(args.rate_limit),
        "--log-level", args.log_level,
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    log.close()
    try:
        deadline = time.monotonic() + 90
        while True:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"workers did not start:\n{tail(workdir / 'workers.log')}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/{SOURCE}", timeout=2).status_code == 200:
                    break
            time.sleep(0.2)
        run, _ = pick_loadgen(args, port, workdir)
        load = Load("GET", f"/{SOURCE}", None, 0, args.connections, args.duration)
        if args.warmup > 0:
            run(Load("GET", f"/{SOURCE}", None, 0, args.connections, args.warmup))
        result = run(load)
        print(f"  GET /{SOURCE} --workers {args.workers:<17} {result.rps:>9.0f} req/s", flush=True)
        return result
    finally:
        stop_process(server)


def workers_line(args: argparse.Namespace, result: Result, single: Row) -> str:
    bare = single.bare.rps
    return (
        f"\n--workers {args.workers}: GET /{SOURCE} {result.rps:.0f} req/s, p50 {result.p50_ms:.2f} ms, "
        f"p99 {result.p99_ms:.2f} ms; {result.rps / single.toshokan.rps:.2f} x one process, "
        f"{result.rps / bare:.2f} x the bare app in one process (same run)"
        + ("" if result.errors == 0 else f"; WARNING {result.errors} errors")
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--connections", type=int, default=64, help="concurrent keep-alive connections"
    )
    parser.add_argument("--duration", type=int, default=10, help="seconds per measured run")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating toshokan/bare runs per endpoint; the median is reported")  # fmt: skip
    parser.add_argument(
        "--warmup", type=int, default=1, help="seconds of unmeasured load before each run (0: none)"
    )
    parser.add_argument("--series", type=int, default=20, help="series in the demo library")
    parser.add_argument("--chapters", type=int, default=4, help="chapters per series")
    parser.add_argument("--pages", type=int, default=3, help="pages per chapter")
    parser.add_argument(
        "--loadgen",
        choices=["auto", "wrk", "python"],
        default="auto",
        help="auto: wrk when on PATH, else the Python client",
    )
    parser.add_argument("--threads", type=int, default=1,
                        help="wrk threads; 1 leaves the other core to the single-process server")  # fmt: skip
    parser.add_argument("--processes", type=int, default=1, help="Python load generator processes")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                        help="server logging; 'info' writes toshokan's access log line per request")  # fmt: skip
    parser.add_argument("--rate-limit", type=int, default=100_000_000,
                        help="requests (and images) per minute per client; the default is never reached")  # fmt: skip
    parser.add_argument("--workers", type=int, default=2,
                        help=f"also measure GET /{SOURCE} on `toshokan serve --workers N` (0: skip)")  # fmt: skip
    # Internal: the same file runs as the server and as the fallback load generator.
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--library", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--port-file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--engine", default="uvicorn", help=argparse.SUPPRESS)
    parser.add_argument("--drive", metavar="SPEC", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    if args.serve:
        serve(
            args.library,
            args.data_dir,
            args.port_file,
            args.log_level,
            args.rate_limit,
            args.engine,
        )
    elif args.drive:
        drive(json.loads(args.drive))
    else:
        # SIGTERM unwinds like Ctrl-C, so the finally blocks stop the server.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        try:
            benchmark(args)
        except KeyboardInterrupt:
            sys.exit(130)


if __name__ == "__main__":
    main()
