"""The upstream HTTP client every adapter shares.

One pooled ``httpx.AsyncClient`` per adapter, with the host's User-Agent,
timeouts, an optional process-wide request budget (:mod:`toshokan.sdk.throttle`,
shared by every client of the same upstream host unless given one), bounded
retries with exponential backoff for idempotent requests (``tenacity``), and
the upstream failure mapping of DECISIONS.md: a timeout is ``UPSTREAM_TIMEOUT``,
401/403 is ``INVALID_CREDENTIALS``, 429 is ``RATE_LIMITED`` carrying the
upstream's retry hint, 404 is whatever not-found the caller names, anything
else is ``UPSTREAM_ERROR`` with the upstream's own detail.
"""

import email.utils
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from toshokan.errors import (
    HostError,
    InvalidCredentials,
    RateLimited,
    UpstreamError,
    UpstreamTimeout,
)
from toshokan.sdk.throttle import Limiter, Throttle

IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
#: Describes an upstream error response for the client; adapters override for their API's shape.
ErrorDetail = Callable[[httpx.Response], str]


class _Retryable(Exception):
    """A transient failure worth another try: carries what to raise if tries run out."""

    def __init__(self, final: HostError, wait: float | None = None):
        super().__init__(final.message)
        self.final = final
        self.wait = wait


def default_error_detail(response: httpx.Response) -> str:
    text = response.text.strip().replace("\n", " ")
    return text[:300] if text else response.reason_phrase


def retry_after_seconds(response: httpx.Response) -> float | None:
    """The upstream's retry hint: ``Retry-After`` (seconds or a date) or ``X-RateLimit-Retry-After`` (epoch)."""
    value = response.headers.get("Retry-After")
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            parsed = email.utils.parsedate_to_datetime(value)
            return max(0.0, parsed.timestamp() - time.time()) if parsed else None
    epoch = response.headers.get("X-RateLimit-Retry-After")
    if epoch:
        try:
            return max(0.0, float(epoch) - time.time())
        except ValueError:
            return None
    return None


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
        limiter: Limiter | None = None,
        max_retry_wait: float = 5.0,
        max_connections: int = 50,
        headers: Mapping[str, str] | None = None,
        error_detail: ErrorDetail = default_error_detail,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        self.retries = retries
        self.backoff = backoff
        self.max_retry_wait = max_retry_wait
        self.error_detail = error_detail
        # ``limiter`` (a shared or combined budget) wins over ``rate_per_second``, which is
        # the process-wide budget of the upstream's host.
        if limiter is None and rate_per_second:
            host = httpx.URL(base_url).host or base_url or "upstream"
            limiter = Throttle.per_second(f"{host} rate", rate_per_second)
        self.limiter: Limiter | None = limiter
        self.requests_sent = 0
        self._http = httpx.AsyncClient(
            base_url=base_url,
            headers={"User-Agent": user_agent, "Accept": "application/json", **(headers or {})},
            timeout=timeout,
            limits=httpx.Limits(max_connections=max_connections),
            transport=transport,
            follow_redirects=True,
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
        """Send one request; return a 2xx response or raise the mapped :class:`HostError`."""
        attempts = 1 + (self.retries if method.upper() in IDEMPOTENT else 0)
        retrying = AsyncRetrying(
            stop=stop_after_attempt(attempts),
            wait=self._wait,
            retry=retry_if_exception(lambda e: isinstance(e, _Retryable)),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._send_once(method, url, not_found, **kwargs)
        except _Retryable as exhausted:
            raise exhausted.final from None
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _wait(self, retry_state: Any) -> float:
        error = retry_state.outcome.exception() if retry_state.outcome else None
        if isinstance(error, _Retryable) and error.wait is not None:
            return error.wait
        return float(wait_exponential_jitter(initial=self.backoff, max=2.0)(retry_state))

    async def _send_once(
        self, method: str, url: str, not_found: type[HostError], **kwargs: Any
    ) -> httpx.Response:
        if self.limiter:
            await self.limiter.acquire()
        self.requests_sent += 1
        try:
            response = await self._http.request(method, url, **kwargs)
        except httpx.TimeoutException:
            raise _Retryable(
                UpstreamTimeout(f"The upstream did not answer {method} {_path(url)} in time.")
            ) from None
        except httpx.TransportError as error:
            raise _Retryable(
                UpstreamError(f"The upstream could not be reached: {type(error).__name__}.")
            ) from None
        if response.is_success:
            return response
        return self._fail(response, not_found)

    def _fail(self, response: httpx.Response, not_found: type[HostError]) -> httpx.Response:
        status = response.status_code
        detail = self.error_detail(response)
        if status == 429:
            wait = retry_after_seconds(response)
            limited = RateLimited(
                f"The upstream is rate-limiting the host: {detail}", retry_after=wait
            )
            if wait is not None and wait <= self.max_retry_wait:
                raise _Retryable(limited, wait=wait)
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
        """GET and parse JSON; unparseable data is ``UPSTREAM_ERROR``."""
        response = await self.request("GET", url, **kwargs)
        try:
            return response.json()
        except ValueError:
            raise UpstreamError(
                f"The upstream sent data that is not JSON for {_path(url)}."
            ) from None

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
        if self.limiter:
            await self.limiter.acquire()
        self.requests_sent += 1
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


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)


def _path(url: str) -> str:
    return httpx.URL(url).path or url
