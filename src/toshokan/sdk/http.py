"""The upstream HTTP client every adapter shares.

One pooled ``httpx.AsyncClient`` per adapter, with the host's User-Agent,
timeouts, an optional process-wide request budget (:mod:`toshokan.sdk.throttle`,
shared by every client of the same upstream host unless given one), bounded
retries with exponential backoff for idempotent requests (``tenacity``), and
the upstream failure mapping of DECISIONS.md: a timeout is ``UPSTREAM_TIMEOUT``,
401/403 is ``INVALID_CREDENTIALS``, 429 is ``RATE_LIMITED`` carrying the
upstream's retry hint, 404 is whatever not-found the caller names, anything
else is ``UPSTREAM_ERROR`` with a short, clean detail (never an HTML page).

Everything an upstream sends is bounded: each attempt (its wait for a rate
budget, the headers and the whole body, however slowly it drips) ends within
the client's timeout and what is left of the request's deadline
(:mod:`toshokan.sdk.deadline`); a retry or a retry hint that does not fit in
that deadline is not waited for, and a long hint (over ``max_retry_wait``)
holds the client's budget, so that until it expires every request, including
those already queued for the budget, is answered ``RATE_LIMITED`` at once instead
of being sent or left to time out; bodies are capped after decompression, so a
gzip bomb is cut like any oversized body, and a body that lies about its
encoding is an upstream error; redirects are followed a few times, not forever.
"""

import asyncio
import email.utils
import math
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import httpx
from pydantic import TypeAdapter
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_any,
    wait_exponential_jitter,
)
from tenacity.stop import stop_base

from toshokan.errors import (
    HostError,
    InvalidCredentials,
    RateLimited,
    UpstreamError,
    UpstreamTimeout,
)
from toshokan.sdk import deadline
from toshokan.sdk.observe import Observers
from toshokan.sdk.payloads import parse_json, parse_payload
from toshokan.sdk.throttle import BudgetPaused, Throttle, UpstreamLimiter, in_background

T = TypeVar("T")
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
#: Describes an upstream error response for the client; adapters override for their API's shape.
ErrorDetail = Callable[[httpx.Response], str]
#: Largest body (after decompression) an upstream may send unless the adapter says otherwise.
MAX_BODY_BYTES = 16 * 1024 * 1024
#: Redirects followed for one request: enough for a moved API, never a loop.
MAX_REDIRECTS = 5
#: Longest retry hint taken at its word (a day); longer ones are told to the client as this.
MAX_HINT_SECONDS = 86_400.0
#: Characters of upstream text kept in a message.
MAX_DETAIL = 200
#: Headers that describe the body as sent, not the decoded body the client keeps.
_WIRE_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


#: Seconds before the request's deadline at which an attempt gives up.
DEADLINE_SLACK = 0.05
#: A budget taken in less than this was free at once; longer, the request waited for it.
BUDGET_WAIT_NOTED = 0.002


class _Retryable(Exception):
    """A transient failure worth another try: carries what to raise if tries run out."""

    def __init__(self, final: HostError, wait: float | None = None):
        super().__init__(final.message)
        self.final = final
        self.wait = wait


def clean_text(text: str, limit: int = MAX_DETAIL) -> str:
    """Upstream text fit for a message: one line, printable, short."""
    printable = "".join(c if c.isprintable() else " " for c in text[: limit * 4])
    words = " ".join(printable.split())
    return words if len(words) <= limit else words[: limit - 1].rstrip() + "…"


def text_of(response: httpx.Response, limit: int = MAX_DETAIL * 4) -> str:
    """The start of a body as text, whatever charset it claims (undecodable bytes replaced)."""
    head = response.content[:limit]
    try:
        return head.decode(response.charset_encoding or "utf-8", errors="replace")
    except (LookupError, UnicodeError):
        return head.decode("utf-8", errors="replace")


def default_error_detail(response: httpx.Response) -> str:
    """The upstream's own words when they are plain text; its status phrase otherwise."""
    fallback = response.reason_phrase or f"HTTP {response.status_code}"
    kind = response.headers.get("Content-Type", "").lower()
    if "html" in kind or "xml" in kind:
        return fallback
    text = clean_text(text_of(response))
    return fallback if not text or text.startswith("<") else text


def _seconds(value: str) -> float | None:
    """A finite, non-negative number of seconds written in ASCII, else None."""
    value = value.strip()
    if not value.isascii():
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def retry_after_seconds(response: httpx.Response) -> float | None:
    """The upstream's retry hint in seconds, at most a day; None when it gave none we can read.

    ``Retry-After`` is seconds or an HTTP date; MangaDex's ``X-RateLimit-Retry-After``
    is an epoch second. ``soon``, ``inf``, ``-1`` or a garbled date are no hint at all.
    """
    value = response.headers.get("Retry-After", "")
    hint = _seconds(value)
    if hint is None and value.strip():
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            moment = None
        if moment is not None and moment.tzinfo is not None:
            hint = max(0.0, moment.timestamp() - time.time())
    if hint is None:
        epoch = _seconds(response.headers.get("X-RateLimit-Retry-After", ""))
        hint = None if epoch is None else max(0.0, epoch - time.time())
    return None if hint is None else min(hint, MAX_HINT_SECONDS)


class UpstreamClient:
    """An async HTTP client for one upstream, speaking the host's error language."""

    def __init__(
        self,
        base_url: str = "",
        *,
        user_agent: str,
        timeout: float = 15.0,
        retries: int = 2,
        backoff: float = 0.25,
        rate_per_second: float | None = None,
        limiter: UpstreamLimiter | None = None,
        paused_by_hints: UpstreamLimiter | None = None,
        max_retry_wait: float = 5.0,
        max_connections: int = 50,
        max_body_bytes: int = MAX_BODY_BYTES,
        max_redirects: int = MAX_REDIRECTS,
        headers: Mapping[str, str] | None = None,
        error_detail: ErrorDetail = default_error_detail,
        transport: httpx.AsyncBaseTransport | None = None,
        source: str = "upstream",
        observers: Observers | None = None,
    ):
        self.timeout = timeout
        # Who the requests are for (a source's slug), as the host's figures count them.
        self.source = source
        self.observers = observers or Observers()
        self.retries = retries
        self.backoff = backoff
        self.max_retry_wait = max_retry_wait
        self.max_body_bytes = max_body_bytes
        self.max_redirects = max_redirects
        self.error_detail = error_detail
        # ``limiter`` (a shared or combined budget) wins over ``rate_per_second``, which is
        # the process-wide budget of the upstream's host.
        if limiter is None and rate_per_second:
            host = httpx.URL(base_url).host or base_url or "upstream"
            limiter = Throttle.per_second(f"{host} rate", rate_per_second)
        self.limiter: UpstreamLimiter | None = limiter
        # A long retry hint holds this budget (by default the whole limiter) until it expires.
        self.paused_by_hints: UpstreamLimiter | None = paused_by_hints or limiter
        self._http = httpx.AsyncClient(
            base_url=base_url,
            headers={"User-Agent": user_agent, "Accept": "application/json", **(headers or {})},
            timeout=timeout,
            limits=httpx.Limits(max_connections=max_connections),
            transport=transport,
            follow_redirects=True,
            max_redirects=max_redirects,
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def request(
        self,
        method: str,
        url: str,
        *,
        not_found: type[HostError] = UpstreamError,
        **kwargs: Any,
    ) -> httpx.Response:
        """Send one request; return a 2xx response, body read, or raise the mapped :class:`HostError`."""
        attempts = 1 + (self.retries if method.upper() in IDEMPOTENT else 0)
        answered: list[HostError] = []  # what the upstream itself failed with, attempt by attempt

        def remember(state: RetryCallState) -> None:
            failed = state.outcome.exception() if state.outcome else None
            if isinstance(failed, _Retryable) and not isinstance(failed.final, UpstreamTimeout):
                answered.append(failed.final)
                deadline.note_failure(failed.final)

        retrying = AsyncRetrying(
            stop=stop_any(stop_after_attempt(attempts), _OutOfTime()),
            wait=self._wait,
            retry=retry_if_exception(lambda e: isinstance(e, _Retryable)),
            before_sleep=remember,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._send_once(method, url, not_found, **kwargs)
        except _Retryable as exhausted:
            # A retry that runs out of time says less than the upstream's own failure before it.
            if isinstance(exhausted.final, UpstreamTimeout) and answered:
                raise answered[-1] from None
            raise exhausted.final from None
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _wait(self, retry_state: RetryCallState) -> float:
        error = retry_state.outcome.exception() if retry_state.outcome else None
        if isinstance(error, _Retryable) and error.wait is not None:
            return error.wait
        return float(wait_exponential_jitter(initial=self.backoff, max=2.0)(retry_state))

    async def _send_once(
        self, method: str, url: str, not_found: type[HostError], **kwargs: Any
    ) -> httpx.Response:
        """One attempt, reported to the host's observers once it went upstream."""
        sent: list[bool] = []
        try:
            response = await self._attempt(method, url, not_found, sent, **kwargs)
        except (_Retryable, HostError) as failed:
            if sent:
                final = failed.final if isinstance(failed, _Retryable) else failed
                self.observers.upstream_request(self.source, final.code)
            raise
        self.observers.upstream_request(self.source)
        return response

    async def _attempt(
        self, method: str, url: str, not_found: type[HostError], sent: list[bool], **kwargs: Any
    ) -> httpx.Response:
        """One attempt; ``sent`` gets an item once the budget is taken and the request goes."""
        # An attempt ends a moment before the request's deadline, so that the client, not the
        # deadline's cancellation, reports what it knows (an earlier attempt's upstream error).
        budget = self._attempt_time()

        def late() -> UpstreamTimeout:  # built on failure only: a success raises nothing
            return UpstreamTimeout(f"The upstream did not answer {method} {_path(url)} in time.")

        if budget <= 0:
            raise _Retryable(late())
        waits_apart = in_background()
        try:
            if waits_apart:
                # Its wait for a turn moves the request's deadline (the throttle's doing), so
                # the attempt's own time starts once the budget is taken.
                await self._take_budget()
                budget = self._attempt_time()
            async with asyncio.timeout(budget):
                if not waits_apart:
                    await self._take_budget()
                sent.append(True)
                response = await self._fetch(method, url, **kwargs)
        except TimeoutError:
            raise _Retryable(late()) from None
        except httpx.TimeoutException:
            raise _Retryable(late()) from None
        except httpx.TooManyRedirects:
            raise UpstreamError(
                f"The upstream redirected {_path(url)} more than {self.max_redirects} times."
            ) from None
        except httpx.DecodingError:
            raise UpstreamError(
                f"The upstream sent a body for {_path(url)} that does not match its encoding."
            ) from None
        except httpx.TransportError as error:
            raise _Retryable(
                UpstreamError(f"The upstream could not be reached: {type(error).__name__}.")
            ) from None
        except httpx.HTTPError as error:
            raise UpstreamError(
                f"The upstream's answer could not be read: {type(error).__name__}."
            ) from None
        if response.is_success:
            return response
        return self._fail(response, not_found)

    def _attempt_time(self) -> float:
        """Seconds one attempt may take now: the client's timeout, within the deadline."""
        left = deadline.remaining()
        return self.timeout if left is None else min(self.timeout, left - DEADLINE_SLACK)

    async def _take_budget(self) -> None:
        """Count one request against the budget; ``RATE_LIMITED`` at once while it is paused."""
        if self.limiter:
            started = time.monotonic()
            try:
                await self.limiter.acquire()
            except BudgetPaused as paused:
                raise RateLimited(
                    "The upstream asked this host to slow down; not asking again before it said to.",
                    retry_after=paused.seconds,
                ) from None
            waited = time.monotonic() - started
            if waited >= BUDGET_WAIT_NOTED:
                self.observers.budget_wait(self.source, waited)

    async def _fetch(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """The response with its whole (decoded) body, refused past ``max_body_bytes``."""

        def too_large() -> UpstreamError:
            return UpstreamError(
                f"The upstream sent more than {self.max_body_bytes} bytes for {_path(url)}."
            )

        async with self._http.stream(method, url, **kwargs) as streamed:
            declared = streamed.headers.get("Content-Length", "")
            if declared.isascii() and declared.isdigit() and int(declared) > self.max_body_bytes:
                raise too_large()
            body = bytearray()
            async for chunk in streamed.aiter_bytes():
                body += chunk
                if len(body) > self.max_body_bytes:
                    raise too_large()
        headers = [
            (name, value)
            for name, value in streamed.headers.multi_items()
            if name.lower() not in _WIRE_HEADERS
        ]
        return httpx.Response(
            streamed.status_code, headers=headers, content=bytes(body), request=streamed.request
        )

    def _fail(self, response: httpx.Response, not_found: type[HostError]) -> httpx.Response:
        status = response.status_code
        detail = clean_text(self.error_detail(response))
        if status == 429:
            wait = retry_after_seconds(response)
            limited = RateLimited(
                f"The upstream is rate-limiting the host: {detail}", retry_after=wait
            )
            # A hint is waited for only when it is short and fits in what is left of the deadline.
            if wait is not None and wait <= deadline.within(self.max_retry_wait):
                raise _Retryable(limited, wait=wait)
            if wait is not None and wait > self.max_retry_wait and self.paused_by_hints:
                self.paused_by_hints.pause(wait)
            raise limited
        if status in (401, 403):
            raise InvalidCredentials(f"The upstream rejected the credentials: {detail}")
        if status in (404, 410):
            raise not_found(f"{not_found.default_message} (upstream: {detail})")
        if status >= 500:
            raise _Retryable(UpstreamError(f"The upstream failed with HTTP {status}: {detail}"))
        raise UpstreamError(f"The upstream refused the request with HTTP {status}: {detail}")

    def stream(self, method: str, url: str, **kwargs: Any) -> Any:
        """The raw streamed response (an async context manager), for bodies read with a bound.

        No retries and no error mapping: the caller reads the status and as many bytes as it allows.
        """
        return self._http.stream(method, url, **kwargs)

    async def get_json(self, url: str, **kwargs: Any) -> Any:
        """GET and parse JSON (of bounded depth); unreadable data is ``UPSTREAM_ERROR``."""
        response = await self.request("GET", url, **kwargs)
        return parse_json(response.content, f"data for {_path(url)}")

    async def get_payload(self, url: str, shape: TypeAdapter[T], what: str, **kwargs: Any) -> T:
        """GET and validate the JSON body as ``shape``; any other shape is ``UPSTREAM_ERROR``."""
        response = await self.request("GET", url, **kwargs)
        return parse_payload(response.content, shape, what)

    async def download(
        self,
        url: str,
        dest: Path,
        *,
        max_bytes: int,
        not_found: type[HostError] = UpstreamError,
        **kwargs: Any,
    ) -> int:
        """Stream a GET to ``dest`` (never whole in memory); refuse more than ``max_bytes``.

        For archives and other large bodies. Failures map as :meth:`request`'s do, and a
        partial file is removed. Returns the number of bytes written.
        """
        await self._take_budget()
        try:
            written = await self._download(url, dest, max_bytes, not_found, **kwargs)
        except HostError as failed:
            self.observers.upstream_request(self.source, failed.code)
            raise
        self.observers.upstream_request(self.source)
        return written

    async def _download(
        self, url: str, dest: Path, max_bytes: int, not_found: type[HostError], **kwargs: Any
    ) -> int:
        written = 0
        try:
            async with self._http.stream("GET", url, **kwargs) as response:
                if not response.is_success:
                    await response.aread()
                    try:
                        self._fail(response, not_found)
                    except _Retryable as failed:
                        raise failed.final from None
                declared = response.headers.get("Content-Length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise UpstreamError(f"The upstream file is larger than {max_bytes} bytes.")
                with dest.open("wb") as out:
                    async for chunk in response.aiter_bytes():
                        written += len(chunk)
                        if written > max_bytes:
                            raise UpstreamError(
                                f"The upstream file is larger than {max_bytes} bytes."
                            )
                        out.write(chunk)
        except httpx.TimeoutException:
            _remove(dest)
            raise UpstreamTimeout(
                f"The upstream did not answer GET {_path(url)} in time."
            ) from None
        except httpx.TransportError as error:
            _remove(dest)
            raise UpstreamError(
                f"The upstream could not be reached: {type(error).__name__}."
            ) from None
        except BaseException:
            _remove(dest)
            raise
        return written


class _OutOfTime(stop_base):
    """Stop retrying when the next wait would not leave time for another attempt."""

    def __call__(self, retry_state: RetryCallState) -> bool:
        left = deadline.remaining()
        return left is not None and (retry_state.upcoming_sleep or 0.0) >= left


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)


def _path(url: str) -> str:
    return clean_text(httpx.URL(url).path or url, 80)
