"""The edge: one plain ASGI layer in front of the application, doing in one pass what
every request needs before and after it.

In order: header bounds (431), forwarded headers from trusted proxies,
CORS preflights, the client's budget (requests, or images), paths that
match no route exactly (404), the body read
within its size and time bounds (413, 408), replay of a cached public
answer, and otherwise the application, whose answer gets CORS headers, a
304 when the client already has it, and is kept for replay when the core
says which cache entry it came from. Every request ends in one access line
and, with the host's figures on, in its count by face and route template.
Every request has an id (a sane ``X-Request-Id`` it came with, or a new
one): its log lines carry it and its answer echoes it.
An exception the application lets escape becomes the 500 Error object.
Failures answered here on the authenticate endpoint take its own form,
``{"success": false, "error": {...}}``, as the application's do.

Requests carrying credentials, cookies or forwarded headers never replay
and are never kept: what they get may depend on who sends them.
"""

import asyncio
import json
import logging
import re
import time
from bisect import bisect_left
from collections.abc import Hashable, Iterable, Sequence
from enum import Enum
from time import monotonic
from typing import TYPE_CHECKING, Final

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toshokan.config import HostSettings
from toshokan.core.cache import ResultCache
from toshokan.core.face import Face
from toshokan.core.hashing import etag_of
from toshokan.core.served import SERVED, Served
from toshokan.core.shared import SharedRedis
from toshokan.edge import request_ids
from toshokan.edge.accesslog import AccessLog, said
from toshokan.edge.cors import Cors
from toshokan.edge.paths import BudgetKind, PathBudgets, reaches_no_route
from toshokan.edge.proxy import FORWARDED, TrustedProxies
from toshokan.edge.ratelimit import FULL, LIGHT, LocalBudget, budget
from toshokan.edge.replay import ReplayTable, Stored
from toshokan.edge.routes import LABELS, UNROUTED, RouteLabels
from toshokan.errors import error_body
from toshokan.logs import REQUEST_ID
from toshokan.models.auth import AUTH_HEADERS

if TYPE_CHECKING:
    from toshokan.core.metrics import HostMetrics

log = logging.getLogger("toshokan.errors")
Headers = list[tuple[bytes, bytes]]
CREDENTIALS = frozenset(
    {b"authorization", b"cookie"}
    | {name.lower().encode() for names in AUTH_HEADERS.values() for name in names}
)
PRIVATE = CREDENTIALS | FORWARDED | {b"forwarded"}
#: Every header the edge reads besides ``host``; a request's others are only counted.
NOTED = PRIVATE | {
    b"origin",
    b"if-none-match",
    b"if-modified-since",
    b"content-length",
    b"x-request-id",
    b"access-control-request-method",
}
REPLAYED_METHODS = frozenset({"GET", "POST"})
BODILESS = frozenset({"GET", "HEAD", "OPTIONS"})
#: On every answer: a browser must not guess a type other than the one the host declares
#: (an "image" from a hostile archive rendered as HTML).
NOSNIFF = (b"x-content-type-options", b"nosniff")
#: Status shown in the access log for a client that went away before its answer.
GONE = 499
#: An inbound request id taken as it is (a proxy's or a client's); any other is replaced.
SANE_REQUEST_ID = re.compile(rb"[A-Za-z0-9._:/+=-]{1,128}")
#: Scope key of the scope the application saw, when the edge resolved a trusted proxy's headers.
RESOLVED = "toshokan.resolved"
#: Scope key of the budget a conditional GET still owes, should its answer be a full one.
UNPAID = "toshokan.unpaid"


class _Shared(Enum):
    """A budget the one pass cannot count: the shared store's, which needs awaiting."""

    SHARED = "shared"


SHARED: Final = _Shared.SHARED


def error_answer(
    status: int,
    code: str,
    message: str,
    extra: Sequence[tuple[bytes, bytes]] = (),
    *,
    auth_form: bool = False,
) -> tuple[int, Headers, bytes]:
    """An Error object answer (or the authenticate endpoint's failure form), built once where
    it can be."""
    body = json.dumps(error_body(code, message, auth_form=auth_form)).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        NOSNIFF,
        *extra,
    ]
    return status, headers, body


def matches(if_none_match: bytes, etag: bytes) -> bool:
    candidates = {t.strip().removeprefix(b"W/") for t in if_none_match.split(b",")}
    return etag in candidates or b"*" in candidates


def not_modified(headers: Headers) -> Headers:
    return [(k, v) for k, v in headers if k not in (b"content-length", b"content-type")]


class Edge:
    def __init__(
        self,
        app: ASGIApp,
        settings: HostSettings,
        faces: Iterable[Face],
        cache: ResultCache | None = None,
        counters: SharedRedis | None = None,
        *,
        metrics: "HostMetrics | None" = None,
        labels: RouteLabels | None = None,
    ):
        self.app = app
        self.metrics = metrics
        # How a tally of the figures is laid out (toshokan.core.metrics is imported only
        # where the figures are on: prometheus-client reads its settings when imported).
        self._buckets: Sequence[float] = metrics.buckets if metrics is not None else ()
        self._sum_at = metrics.sum_at if metrics is not None else 0
        # Where almost every replay's duration falls, found without searching the buckets.
        self._first_bucket = self._buckets[0] if self._buckets else float("inf")
        self.labels = labels or RouteLabels()
        paths = PathBudgets(faces)
        self.budget_of = paths.of
        self.answers_auth_failures = paths.answers_auth_failures
        limits, server = settings.limits, settings.server
        self.proxies = TrustedProxies(server.trusted_proxies)
        self.cors = Cors(
            settings.cors.origins,
            settings.cors.tools_origin,
            sorted({h for names in AUTH_HEADERS.values() for h in names}),
        )
        self.requests = budget(limits.rate_limit, counters, "toshokan")
        self.images = budget(limits.image_rate_limit, counters, "toshokan-images")
        self.max_headers = limits.max_headers
        self.max_header_bytes = limits.max_header_bytes
        self.max_body = limits.max_body_bytes
        self.body_timeout = server.body_timeout
        self.log = AccessLog()
        # The budget of each kind counted in this process (or none): a replayed answer's,
        # counted without awaiting anything.
        by_kind = {BudgetKind.REQUESTS: self.requests, BudgetKind.IMAGES: self.images}
        self._fast_budgets: dict[BudgetKind, LocalBudget | None] = {}
        for kind in BudgetKind:
            limiter = by_kind.get(kind)
            if limiter is None or isinstance(limiter, LocalBudget):
                self._fast_budgets[kind] = limiter
        self.replay = ReplayTable(settings.cache.max_entries if cache is not None else 0)
        # Looked up once here rather than on every request of the one pass.
        self._replays = self.replay.max_entries > 0
        self._replayed = self.replay.get
        self._answers = self.replay.answers
        self._line_said = self.log.line_said
        if cache is not None:
            cache.on_invalidate(self.replay.invalidate)
        # Keyed by whether the answer takes the authenticate endpoint's failure form.
        self._too_large = {
            form: error_answer(
                413,
                "INVALID_REQUEST",
                f"The request body is larger than the host's limit of {self.max_body} bytes.",
                auth_form=form,
            )
            for form in (False, True)
        }
        self._too_many_headers = {
            form: error_answer(
                431,
                "INVALID_REQUEST",
                f"The request headers exceed the host's limits ({self.max_headers} headers, "
                f"{self.max_header_bytes} bytes).",
                auth_form=form,
            )
            for form in (False, True)
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = monotonic()
        inbound = origin = if_none_match = host = declared = None
        private = preflight = since = forwarded = False
        # No header that could change the answer or keep it from replaying (one that
        # sets origin, if_none_match, since, declared or private).
        plain = True
        size = 0
        headers: Headers = scope["headers"]
        for name, value in headers:
            size += len(name) + len(value)
            if name == b"host":
                host = value
            elif name not in NOTED:
                continue
            elif name == b"x-request-id":
                if inbound is None:
                    inbound = value
            elif name == b"access-control-request-method":
                preflight = True
            else:
                plain = False
                if name == b"origin":
                    origin = value
                elif name == b"if-none-match":
                    if_none_match = value
                elif name == b"if-modified-since":
                    since = True
                elif name == b"content-length":
                    declared = value
                else:
                    private = True
                    forwarded = forwarded or name in FORWARDED
        # The id a proxy or client gave the request, when it is sane; else a new one.
        request_id = (
            inbound
            if inbound is not None and SANE_REQUEST_ID.fullmatch(inbound)
            else next(request_ids.new_ids)
        )
        echo = (b"x-request-id", request_id)
        client = scope.get("client")
        method: str = scope["method"]
        missed: Hashable = None  # the replay key the one pass looked up and did not find
        if (
            plain
            and method == "GET"
            and self._replays
            and size <= self.max_header_bytes
            and len(headers) <= self.max_headers
        ):
            # What most requests to a host are, a plain GET of a cached public answer, in one
            # pass: the steps of _handle that such a request takes, and no others. The clock
            # read at its start is the replay's and the budget's "now". Its key is made here,
            # as ReplayTable.key makes a bodiless request's (the same tuple, without a call).
            key = (method, scope["scheme"], host, scope["path"], scope["query_string"], b"")
            stored = self._answers.get(key)
            if stored is not None and started >= stored.checked_until:
                stored = self._replayed(key, started)  # the core asked whether it still lives
            if stored is None:
                missed = key
            elif (limiter := self._fast_budgets.get(stored.budget, SHARED)) is not SHARED:
                if client:
                    who = peer = client[0]
                else:
                    who, peer = "unknown", "-"
                wait = None if limiter is None else limiter.take(who, started, FULL)
                if wait is None:
                    await send(
                        {
                            "type": "http.response.start",
                            "status": 200,
                            "headers": [*stored.headers, echo],
                        }
                    )
                    await send(stored.ending)
                    ended = monotonic()
                    seconds = ended - started
                    tally = stored.tally
                    if tally is not None:  # the answer's figures: metrics.count, in line
                        tally[
                            0
                            if seconds <= self._first_bucket
                            else bisect_left(self._buckets, seconds)
                        ] += 1
                        tally[self._sum_at] += seconds
                    elif self.metrics is not None:  # figures not kept in this process
                        self.metrics.request(*stored.labels, "GET", 200, seconds)
                    self._line_said(peer, stored.said, seconds, request_id, ended)
                    return
                status = await _answer(send, self._refused(wait, False), [echo])
                self._ended(scope, client, UNROUTED, status, started, request_id)
                return
        if forwarded and not (client and self.proxies.trusts(client[0])):
            forwarded = False
        facts = (host, origin, if_none_match, since, declared, preflight, private, forwarded)
        token = REQUEST_ID.set(request_id.decode())
        try:
            status = await self._handle(scope, receive, send, echo, size, facts, missed)
            unpaid = scope.get(UNPAID)
            if unpaid is not None and status not in (304, 429):
                limiter, who = unpaid
                await limiter.hit(who, FULL - LIGHT)  # the rest of a full answer's cost
        finally:
            REQUEST_ID.reset(token)
        labels = self.labels.of(scope.get(RESOLVED, scope))
        # The client a trusted proxy forwarded for, when it did; else the peer.
        client = scope.get("toshokan.client") or client
        self._ended(scope, client, labels, status, started, request_id)

    def _ended(
        self,
        scope: Scope,
        client: tuple[str, int] | None,
        labels: tuple[str, str],
        status: int,
        started: float,
        request_id: bytes,
    ) -> None:
        """A request not replayed in the one pass: its figures and its access line."""
        ended = monotonic()
        seconds = ended - started
        method: str = scope["method"]
        if self.metrics is not None:
            self.metrics.request(labels[0], labels[1], method, status, seconds)
        peer = client[0] if client else "-"
        self.log.line(peer, method, scope["path"], status, seconds, request_id, ended)

    async def _handle(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        echo: tuple[bytes, bytes],
        size: int,
        facts: tuple[
            bytes | None, bytes | None, bytes | None, bool, bytes | None, bool, bool, bool
        ],
        missed: Hashable,
    ) -> int:
        """Answer one request, ``echo`` (its id) on the answer, from what its headers said
        (``size``, ``facts``); the status the access log shows. ``missed`` is the replay key
        the one pass of :meth:`__call__` just looked up in vain, if it did."""
        host, origin, if_none_match, since, declared, preflight, private, forwarded = facts
        headers: Headers = scope["headers"]
        # Headers every answer gets besides its own: CORS's (a call skipped for what most
        # requests are, with no origin), then the request's id.
        added = [*self.cors.headers(origin), echo] if origin is not None else [echo]
        method: str = scope["method"]
        path: str = scope["path"]
        auth_form = method == "POST" and self.answers_auth_failures(method, path)
        if len(headers) > self.max_headers or size > self.max_header_bytes:
            return await _answer(send, self._too_many_headers[auth_form], added)
        if forwarded:
            outer = scope
            scope = self.proxies.resolve(scope)
            outer["toshokan.client"] = scope["client"]
            outer[RESOLVED] = scope
            host = next((v for k, v in scope["headers"] if k == b"host"), host)

        if method == "OPTIONS" and preflight:
            allowed = self.cors.preflight(origin)
            if allowed is None:
                refused = error_answer(403, "INVALID_REQUEST", "This origin may not call the host.")
                return await _answer(send, refused, [echo])
            return await _answer(send, (204, [*allowed, NOSNIFF], b""), [echo])

        kind = self.budget_of(path) if method != "OPTIONS" else BudgetKind.EXEMPT
        limiter = (
            self.requests
            if kind is BudgetKind.REQUESTS
            else self.images
            if kind is BudgetKind.IMAGES
            else None
        )
        if limiter is not None:
            client = scope.get("client")
            who = client[0] if client else "unknown"
            # No content sent back costs a tenth (see ratelimit); a conditional GET pays the
            # rest after its answer when that answer is a full one.
            conditional = method == "GET" and (if_none_match is not None or since)
            cost = LIGHT if method == "HEAD" or conditional else FULL
            if conditional:
                scope[UNPAID] = (limiter, who)
            # In memory the count is a plain call; only the shared store needs awaiting.
            if isinstance(limiter, LocalBudget):
                wait = limiter.take(who, time.monotonic(), cost)
            else:
                wait = await limiter.hit(who, cost)
            if wait is not None:
                return await _answer(send, self._refused(wait, auth_form), added)

        if reaches_no_route(path):
            nowhere = error_answer(404, "NOT_FOUND", f"Nothing is at {path[:200]!r}.")
            return await _answer(send, nowhere, added)

        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            if not declared.isdigit():
                bad = error_answer(
                    400, "INVALID_REQUEST", "Content-Length is not a number.", auth_form=auth_form
                )
                return await _answer(send, bad, added)
            return await _answer(send, self._too_large[auth_form], added)
        body = b""
        if method not in BODILESS:
            read = await self._read_body(receive)
            if isinstance(read, int):
                if read == GONE:
                    return GONE
                return await _answer(
                    send,
                    self._too_large[auth_form]
                    if read == 413
                    else error_answer(
                        408,
                        "INVALID_REQUEST",
                        f"The request body did not arrive within {self.body_timeout:g} s.",
                        auth_form=auth_form,
                    ),
                    added,
                )
            body = read
            receive = _replaying(body, receive)

        key: Hashable = missed
        if (
            missed is None
            and not private
            and method in REPLAYED_METHODS
            and self.replay.max_entries
        ):
            key = self.replay.key(scope, host, body)
            stored = self.replay.get(key, time.monotonic())
            if stored is not None:
                scope[LABELS] = stored.labels
                if (
                    if_none_match is not None
                    and method == "GET"
                    and matches(if_none_match, stored.etag)
                ):
                    return await _answer(send, (304, not_modified(stored.headers), b""), added)
                return await _answer(send, (200, stored.headers, stored.body), added)

        return await self._full(scope, receive, send, added, if_none_match, key, auth_form)

    async def _full(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        added: Headers,
        if_none_match: bytes | None,
        key: Hashable,
        auth_form: bool,
    ) -> int:
        """Through the application; its answer kept for replay when the core says it may be."""
        status = 500
        started = dropping = False
        start: Message | None = None
        untagged: Message | None = None
        chunks: list[bytes] = []
        conditional = if_none_match is not None and scope["method"] in ("GET", "HEAD")
        reading = scope["method"] in ("GET", "HEAD")
        served = Served()
        token = SERVED.set(served)

        async def edge_send(message: Message) -> None:
            nonlocal status, started, dropping, start, untagged
            if message["type"] == "http.response.start":
                status = message["status"]
                started = True
                raw: Headers = [*message.get("headers", ()), NOSNIFF]
                if status == 200 and (reading or key is not None):
                    etag = next((v for k, v in raw if k == b"etag"), None)
                    if etag is None and reading and _is_json(raw):
                        # Tagged once its body is known, then sent through here again.
                        untagged = message
                        return
                    if conditional and etag is not None and matches(if_none_match or b"", etag):
                        dropping = True
                        status = 304
                        await send(
                            {**message, "status": 304, "headers": [*not_modified(raw), *added]}
                        )
                        await send({"type": "http.response.body", "body": b""})
                        return
                    if key is not None and etag is not None:
                        start = {**message, "headers": raw}
                await send({**message, "headers": [*raw, *added]})
                return
            if dropping:
                return
            if untagged is not None and message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                body = b"".join(chunks)
                tagged: Headers = [
                    *untagged.get("headers", ()),
                    (b"etag", etag_of(body).encode()),
                ]
                untagged, start = None, None
                await edge_send({"type": "http.response.start", "status": 200, "headers": tagged})
                if not dropping:
                    await send({"type": "http.response.body", "body": body})
                return
            if start is not None and message["type"] == "http.response.body":
                self._keep(key, scope, start, message, served)
                start = None
            await send(message)

        try:
            await self.app(scope, receive, edge_send)
        except ClientDisconnect:
            return GONE
        except Exception:
            # The path is logged, never headers or bodies, which may carry credentials.
            log.exception("unhandled error on %s %s", scope["method"], scope["path"][:200])
            if not started:
                failed = error_answer(
                    500,
                    "INTERNAL_ERROR",
                    "The host failed to answer this request.",
                    auth_form=auth_form,
                )
                return await _answer(send, failed, added)
            return status if status >= 500 else 500
        finally:
            SERVED.reset(token)
        return status

    def _refused(self, wait: float, auth_form: bool) -> tuple[int, Headers, bytes]:
        """The 429 of a client whose budget is spent, for ``wait`` seconds."""
        seconds = max(1, round(wait))
        return error_answer(
            429,
            "RATE_LIMITED",
            f"Too many requests from this address; retry in {seconds} s.",
            [(b"retry-after", str(seconds).encode())],
            auth_form=auth_form,
        )

    def _keep(
        self, key: Hashable, scope: Scope, start: Message, message: Message, served: Served
    ) -> None:
        entry = served.entry
        body = message.get("body", b"")
        if entry is None or message.get("more_body") or body != entry.answer.body:
            return
        headers: Headers = start["headers"]
        public = any(k == b"cache-control" and v.startswith(b"public") for k, v in headers)
        json_body = _is_json(headers)
        etag = next((v for k, v in headers if k == b"etag"), None)
        if public and json_body and etag is not None:
            method, path, labels = scope["method"], scope["path"], self.labels.of(scope)
            tally = (
                self.metrics.tally(*labels, method, 200)
                if self.metrics is not None and method == "GET"
                else None
            )
            stored = Stored(
                entry,
                headers,
                body,
                etag,
                labels,
                self.budget_of(path),
                said(method, path, 200),
                tally,
            )
            self.replay.put(key, stored)

    async def _read_body(self, receive: Receive) -> bytes | int:
        """The whole body within the size and time bounds; 413, 408 or GONE when not."""
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.body_timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return GONE
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.max_body:
                        return 413
                    chunks.append(chunk)
                    if not message.get("more_body"):
                        return b"".join(chunks)
        except TimeoutError:
            return 408


def _is_json(headers: Headers) -> bool:
    return any(k == b"content-type" and v.startswith(b"application/json") for k, v in headers)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the application the body already read, then the client's events."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _answer(
    send: Send, answer: tuple[int, Headers, bytes], added: Sequence[tuple[bytes, bytes]]
) -> int:
    status, headers, body = answer
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, *added],
        }
    )
    await send({"type": "http.response.body", "body": body})
    return status
