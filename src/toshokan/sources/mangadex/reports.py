"""Reports of page images fetched from MangaDex@Home nodes, as MangaDex asks of its clients.

MangaDex@Home is a network of volunteers' servers; MangaDex balances it on what
clients tell its report endpoint after each image fetched from a node: the URL,
whether it succeeded, the bytes, the milliseconds the whole transfer took and
whether the node had the image cached (its ``X-Cache`` header starts with
``HIT``). Images from MangaDex's own servers (``uploads.mangadex.org``, covers)
are not reported.

The host tells the source of every upstream image it fetches, for a reader or for a
kept copy (:meth:`~toshokan.sdk.Source.image_fetched`); the reports are queued and
sent one at a time in the background, never delaying a page. They are a courtesy:
one that fails is dropped, and so are reports past a bounded queue.
"""

import asyncio
import contextlib
import logging
from typing import Any

import httpx

from toshokan.sdk import HostError, ImageFetch, UpstreamClient

log = logging.getLogger(__name__)

#: Reports waiting to be sent at most; more are dropped.
QUEUE = 512
#: Seconds the endpoint has to take one report.
TIMEOUT = 5.0
#: Seconds shutdown waits for the queued reports to go.
DRAIN = 2.0


def report_of(fetch: ImageFetch) -> dict[str, Any]:
    """The report endpoint's JSON body for one fetch."""
    cache = next((v for k, v in fetch.headers.items() if k.lower() == "x-cache"), "")
    return {
        "url": fetch.url,
        "success": fetch.success,
        "bytes": fetch.size,
        "duration": round(fetch.seconds * 1000),
        "cached": cache.upper().startswith("HIT"),
    }


class AtHomeReports:
    """Fetches from MangaDex@Home nodes, reported to ``url`` in the background.

    ``own_hosts`` are MangaDex's own image servers, whose fetches are not reported.
    """

    def __init__(self, client: UpstreamClient, url: str, own_hosts: set[str]):
        self.client = client
        self.url = url
        self.own_hosts = own_hosts
        self.dropped = 0
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE)
        self._sender: asyncio.Task[None] | None = None

    def reported(self, url: str) -> bool:
        """Whether a fetch of ``url`` is one MangaDex wants to hear of: from a node, not from
        one of MangaDex's own servers (``*.mangadex.org`` or the configured ones)."""
        host = httpx.URL(url).host
        own = host in self.own_hosts or host == "mangadex.org" or host.endswith(".mangadex.org")
        return bool(self.url) and bool(host) and not own

    def note(self, fetch: ImageFetch) -> None:
        if self._sender is None or not self.reported(fetch.url):
            return
        try:
            self._queue.put_nowait(report_of(fetch))
        except asyncio.QueueFull:
            self.dropped += 1

    async def start(self) -> None:
        if self.url and self._sender is None:
            self._queue = asyncio.Queue(QUEUE)
            self._sender = asyncio.create_task(self._send(), name="toshokan-mangadex-reports")

    async def stop(self) -> None:
        sender, self._sender = self._sender, None
        if sender is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._queue.join(), DRAIN)
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sender

    async def _send(self) -> None:
        while True:
            report = await self._queue.get()
            try:
                await self.client.request("POST", self.url, json=report)
            except HostError as error:
                log.debug("MangaDex@Home report not taken: %s", error.message)
            finally:
                self._queue.task_done()
