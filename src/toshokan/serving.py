"""Running the host under uvicorn: connections bounded, one or several worker processes.

uvicorn bounds idle keep-alive connections but not a connection that never
finishes its request head, nor how much of a head it buffers, nor how many
connections one client holds. :class:`BoundedHttpTools` adds those bounds to
uvicorn's httptools protocol: a deadline for each request head, a cap on its
bytes (414 for an address longer than the cap, 431 for the rest of a head),
and caps on open connections overall and per client address (503; trusted
proxies, which carry many clients, are not capped per address). What is not
HTTP at all, which uvicorn answers with a plain-text 400, gets the Error
object too: every answer the host gives has the spec's shape.

With ``workers`` above 1, uvicorn starts that many processes on one port;
each builds its application from the settings passed in the environment.
"""

import asyncio
import fcntl
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from toshokan.config import HostSettings
from toshokan.edge.proxy import TrustedProxies
from toshokan.errors import error_body
from toshokan.logs import configure_logging

#: How the parent hands its settings and log level to worker processes.
SETTINGS_ENV = "TOSHOKAN_SERVE_SETTINGS"
LOG_LEVEL_ENV = "TOSHOKAN_SERVE_LOG_LEVEL"
#: prometheus-client's variable, read when it is first imported: where each process of a host
#: writes its figures, for a scrape of any of them to sum (toshokan.core.metrics).
METRICS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"


@dataclass(frozen=True)
class ConnectionBounds:
    header_timeout: float
    max_head_bytes: int
    max_connections: int
    per_client: int
    proxies: TrustedProxies

    @classmethod
    def of(cls, settings: HostSettings) -> "ConnectionBounds":
        server = settings.server
        return cls(
            header_timeout=server.header_timeout,
            max_head_bytes=settings.limits.max_header_bytes,
            max_connections=server.max_connections,
            per_client=server.max_connections_per_client,
            proxies=TrustedProxies(server.trusted_proxies),
        )


def raw_error(status: int, reason: str, code: str, message: str, extra: str = "") -> bytes:
    """A whole HTTP answer carrying the Error object, for a connection about to be closed."""
    body = json.dumps(error_body(code, message), separators=(",", ":")).encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\ncache-control: no-store\r\n{extra}"
        "connection: close\r\n\r\n"
    ).encode() + body


BUSY = raw_error(
    503,
    "Service Unavailable",
    "RATE_LIMITED",
    "The host has too many open connections; retry shortly.",
    "retry-after: 1\r\n",
)
CLIENT_BUSY = raw_error(
    429,
    "Too Many Requests",
    "RATE_LIMITED",
    "Too many open connections from this address.",
    "retry-after: 1\r\n",
)
HEAD_TOO_LARGE = raw_error(
    431, "Request Header Fields Too Large", "INVALID_REQUEST", "The request headers are too large."
)
HEAD_TIMEOUT = raw_error(
    408, "Request Timeout", "INVALID_REQUEST", "The request headers did not arrive in time."
)
NOT_HTTP = raw_error(400, "Bad Request", "INVALID_REQUEST", "The request is not valid HTTP/1.1.")
#: The longest address httptools parses; a longer one is refused whatever the host's cap.
MAX_URL_BYTES = 65_535


def uri_too_long(limit: int) -> bytes:
    return raw_error(
        414,
        "URI Too Long",
        "INVALID_REQUEST",
        f"The request's address (path and query) is longer than the host's limit of {limit} bytes.",
    )


class AddressTooLong(Exception):
    """Raised from the parser's callback: the parser stops, and the address is refused."""


class BoundedHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol with the bounds above; configured once per process."""

    bounds: ClassVar[ConnectionBounds | None] = None
    open_per_client: ClassVar[dict[str, int]] = {}
    #: The answer to an address longer than the cap, made once per configuration.
    too_long: ClassVar[bytes] = uri_too_long(MAX_URL_BYTES)

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._awaiting_head = True
        self._head_bytes = 0
        self._head_timer: Any = None
        self._counted: str | None = None

    @classmethod
    def configure(cls, settings: HostSettings) -> None:
        cls.bounds = ConnectionBounds.of(settings)
        cls.open_per_client = {}
        cls.too_long = uri_too_long(min(cls.bounds.max_head_bytes, MAX_URL_BYTES))

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        bounds = self.bounds
        if bounds is None:
            return
        if len(self.connections) > bounds.max_connections:
            self._refuse(BUSY)
            return
        peer = self.client[0] if self.client else None
        if peer is not None and not bounds.proxies.trusts(peer):
            held = self.open_per_client.get(peer, 0)
            if held >= bounds.per_client:
                self._refuse(CLIENT_BUSY)
                return
            self.open_per_client[peer] = held + 1
            self._counted = peer
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        peer, self._counted = self._counted, None
        if peer is not None:
            held = self.open_per_client.get(peer, 1) - 1
            if held > 0:
                self.open_per_client[peer] = held
            else:
                self.open_per_client.pop(peer, None)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        bounds = self.bounds
        if bounds is None or not self._awaiting_head:
            super().data_received(data)
            return
        self._head_bytes += len(data)
        if self._head_timer is None:
            self._arm_head_timer()
        super().data_received(data)
        # Still no complete head after this many bytes: it buffers no more of them.
        if self._awaiting_head and self._head_bytes > bounds.max_head_bytes:
            self._refuse(self._too_large(bounds))

    def _too_large(self, bounds: ConnectionBounds) -> bytes:
        """414 when the address alone is over the cap, else 431."""
        url: bytes = getattr(self, "url", None) or b""
        return self.too_long if len(url) > bounds.max_head_bytes else HEAD_TOO_LARGE

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to what its parser refuses, as the Error object: 414 for an address
        too long (for the cap, or for httptools), else 400."""
        url: bytes = getattr(self, "url", None) or b""
        bounds = self.bounds
        limit = min(bounds.max_head_bytes, MAX_URL_BYTES) if bounds else MAX_URL_BYTES
        self._refuse(self.too_long if len(url) > limit else NOT_HTTP)

    def on_message_begin(self) -> None:
        self._awaiting_head = True
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._awaiting_head = False
        self._head_bytes = 0
        self._disarm_head_timer()
        bounds = self.bounds
        if bounds is not None and len(self.url) > bounds.max_head_bytes:
            raise AddressTooLong  # a head read at once is past the cap of data_received
        super().on_headers_complete()

    def _arm_head_timer(self) -> None:
        if self.bounds is not None:
            self._head_timer = self.loop.call_later(self.bounds.header_timeout, self._head_late)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if self._awaiting_head:
            self._refuse(HEAD_TIMEOUT)

    def _refuse(self, answer: bytes) -> None:
        if not self.transport.is_closing():
            self.transport.write(answer)
            self.transport.close()


def uvicorn_options(settings: HostSettings, log_level: str) -> dict[str, Any]:
    server = settings.server
    return {
        "host": server.host,
        "port": server.port,
        "ssl_certfile": str(server.tls_cert) if server.tls_cert else None,
        "ssl_keyfile": str(server.tls_key) if server.tls_key else None,
        "access_log": False,  # the edge's access log leaves query strings (signatures) out
        "log_config": None,  # uvicorn's lines take the host's format (toshokan.logs)
        "proxy_headers": False,  # the edge believes X-Forwarded-* from trusted_proxies only
        "log_level": log_level,
        "lifespan": "on",
        # Not guessed: uvicorn takes a bound method (served_app) for an ASGI 2 application.
        "interface": "asgi3",
        "http": BoundedHttpTools,
        "timeout_keep_alive": server.keep_alive_timeout,
        "workers": server.workers,
    }


def run(settings: HostSettings, log_level: str, app: Any) -> None:
    """Serve ``app`` (built by :func:`served_app`) until interrupted, in this process; or,
    with ``[server] workers`` above 1, as many processes each building its own."""
    import uvicorn

    if settings.server.workers == 1:
        uvicorn.run(app, **uvicorn_options(settings, log_level))
        return
    os.environ[SETTINGS_ENV] = settings.model_dump_json()
    os.environ[LOG_LEVEL_ENV] = log_level
    uvicorn.run("toshokan.serving:worker_app", factory=True, **uvicorn_options(settings, log_level))


def share_metrics_between_processes(data_dir: Path) -> None:
    """Have every worker process write its figures under ``data_dir/metrics``.

    Called in the parent before anything imports prometheus-client; the
    workers inherit the variable. The directory is emptied first: figures of
    a previous run would otherwise be summed with this one's.
    """
    directory = data_dir / "metrics"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True, exist_ok=True)
    os.environ[METRICS_DIR_ENV] = str(directory)


def worker_app() -> Any:
    """The application of one worker process, from the settings its parent passed."""
    settings = HostSettings.model_validate_json(os.environ[SETTINGS_ENV])
    configure_logging(os.environ.get(LOG_LEVEL_ENV, "info"), settings.server.log_format)
    return one_startup_at_a_time(served_app(settings), settings.host.data_dir / "startup.lock")


def one_startup_at_a_time(app: Any, lock_path: Path) -> Any:
    """Start the sources of one worker at a time.

    Sources prepare their data when they start (the local library indexes
    its folder into SQLite); workers doing so at once on the same files fail
    with "database is locked". An exclusive lock on a file in the data
    directory, held from the start of the lifespan until it completes,
    makes the workers take turns; serving is not serialised.
    """

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await app(scope, receive, send)
            return
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with lock_path.open("a") as lock:
            held = False

            async def receive_locked() -> Any:
                nonlocal held
                message = await receive()
                if message["type"] == "lifespan.startup" and not held:
                    await asyncio.to_thread(fcntl.flock, lock, fcntl.LOCK_EX)
                    held = True
                return message

            async def send_released(message: Any) -> None:
                nonlocal held
                if message["type"].startswith("lifespan.startup.") and held:
                    fcntl.flock(lock, fcntl.LOCK_UN)
                    held = False
                await send(message)

            try:
                await app(scope, receive_locked, send_released)
            finally:
                if held:
                    fcntl.flock(lock, fcntl.LOCK_UN)

    return wrapped


def served_app(settings: HostSettings) -> Any:
    """The application a server runs for ``settings``: its edge, Starlette behind it.

    The edge's bound ``__call__``, not the edge object: a server calls either as it calls a
    function, and an object's call goes through its type's call slot, which packs the
    arguments into a tuple and looks ``__call__`` up for every request (~700 instructions of
    a replayed answer's ~35,000). A server cannot tell a bound method's interface by itself:
    :func:`uvicorn_options` names it.
    """
    from toshokan.application import create_app

    BoundedHttpTools.configure(settings)
    edge: Any = create_app(settings).edge()
    return edge.__call__
