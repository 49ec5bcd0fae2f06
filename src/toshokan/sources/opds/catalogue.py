"""Fetching catalogue pages: credentials, content negotiation, parsing, caching, errors.

Real servers deviate (Codex answers 406 to an Atom ``Accept``, serves Atom as
``application/xml`` without its namespace); each deviation is read leniently
and logged once per source as a warning. Every failure leaves here as one of
the spec's errors with the key and passwords taken out of its message. Each
request carries one :class:`~.accounts.Account`: a refusal of the operator's
credentials is ``UPSTREAM_ERROR`` naming the setting to fix, a refusal of a
reader's own is that reader's ``INVALID_CREDENTIALS``. Pages are cached per
account, since two readers' accounts may see different libraries.
"""

import json
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import httpx
from cachetools import TTLCache

from toshokan.sdk import HostError, InvalidCredentials, UpstreamClient, UpstreamError
from toshokan.sources.opds import atom, opds2
from toshokan.sources.opds.accounts import Account
from toshokan.sources.opds.feed import Feed
from toshokan.sources.opds.redaction import keep_out_of_logs
from toshokan.sources.opds.settings import Settings

log = logging.getLogger("toshokan.sources.opds")

ACCEPT = (
    "application/atom+xml;profile=opds-catalog, application/opds+json, application/atom+xml, "
    "application/xml;q=0.9, application/json;q=0.9, */*;q=0.5"
)
#: A catalogue page larger than this is refused rather than parsed.
MAX_FEED_BYTES = 8 * 1024 * 1024


class Catalogue:
    """One OPDS server, seen through the operator's or a reader's account."""

    def __init__(self, slug: str, settings: Settings, client: UpstreamClient):
        self.slug = slug
        self.settings = settings
        self.client = client
        self.root = settings.root_url()
        self._pages: TTLCache[tuple[str, str], Feed] = TTLCache(
            maxsize=256, ttl=settings.feed_cache_seconds or 1e-9
        )
        self._templates: TTLCache[str, str | None] = TTLCache(maxsize=64, ttl=3600)
        self._warned: set[str] = set()
        #: Set once the server answered 406 to OPDS media types: from then on, ask for any.
        self._any_type = False
        keep_out_of_logs(settings.api_key.get_secret_value(), settings.password.get_secret_value())

    def warn(self, message: str) -> None:
        """Log a deviation of the server once per source."""
        if message not in self._warned and len(self._warned) < 100:
            self._warned.add(message)
            log.warning("source %s: %s", self.slug, self.settings.redact(message))

    @contextmanager
    def mapped(self, account: Account) -> Iterator[None]:
        """Errors with the secrets taken out; the catalogue refusing the operator's credentials
        is a misconfiguration of this source, refusing a reader's is theirs to fix."""
        try:
            yield
        except InvalidCredentials:
            if not account.configured:
                raise InvalidCredentials(
                    "The catalogue refused this account; sign in again."
                ) from None
            raise UpstreamError(
                f"The catalogue refused the credentials configured for source '{self.slug}' "
                "(check username, password or api_key in its settings)."
            ) from None
        except HostError as error:
            error.message = self.settings.redact(error.message, *account.secrets)
            error.args = (error.message,)
            raise

    async def get(
        self, url: str, account: Account, *, not_found: type[HostError] = UpstreamError
    ) -> httpx.Response:
        """One GET with ``account``'s credentials (only ever sent to the catalogue's own server)."""
        auth = account.auth if _same_server(url, self.root) else None
        with self.mapped(account):
            if not self._any_type:
                try:
                    return await self.client.request(
                        "GET", url, not_found=not_found, headers={"Accept": ACCEPT}, auth=auth
                    )
                except UpstreamError as error:
                    if "HTTP 406" not in error.message:
                        raise
                self.warn(
                    "the server refuses OPDS media types in Accept (406); asking for any type"
                )
                self._any_type = True
            return await self.client.request(
                "GET", url, not_found=not_found, headers={"Accept": "*/*"}, auth=auth
            )

    async def page(
        self, url: str, account: Account, *, not_found: type[HostError] = UpstreamError
    ) -> Feed:
        """The catalogue page at ``url`` as ``account`` sees it, reused for ``feed_cache_seconds``."""
        cached = self._pages.get((account.key, url))
        if cached is not None:
            return cached
        response = await self.get(url, account, not_found=not_found)
        feed = self.parse(response, url)
        self._pages[account.key, url] = feed
        return feed

    def parse(self, response: httpx.Response, url: str) -> Feed:
        if len(response.content) > MAX_FEED_BYTES:
            raise UpstreamError(f"The catalogue sent a page over {MAX_FEED_BYTES} bytes.")
        kind = response.headers.get("Content-Type", "").lower()
        body = response.content.lstrip()
        try:
            if "json" in kind or body.startswith(b"{"):
                feed = opds2.parse_feed(json.loads(body), url)
            else:
                if "atom" not in kind:
                    self.warn(f"Atom served as {kind.split(';')[0] or 'no type'}")
                feed = atom.parse_feed(body, url)
        except (ValueError, atom.NotXml, opds2.NotOpds2) as error:
            raise UpstreamError(
                self.settings.redact(f"The catalogue sent a page that is not OPDS: {error}.")
            ) from None
        for warning in feed.warnings:
            self.warn(warning)
        return feed

    async def pages(
        self, url: str, account: Account, *, not_found: type[HostError] = UpstreamError
    ) -> AsyncIterator[Feed]:
        """``url`` and the pages after it, fetched only as the caller asks for them."""
        seen: set[str] = set()
        next_url: str | None = url
        while (
            next_url is not None
            and next_url not in seen
            and len(seen) < self.settings.max_feed_pages
        ):
            seen.add(next_url)
            feed = await self.page(
                next_url, account, not_found=not_found if next_url == url else UpstreamError
            )
            yield feed
            next_url = feed.next

    async def search_template(self, feed: Feed, account: Account) -> str | None:
        """Where a query goes: the page's own template, or its OpenSearch description's."""
        if feed.search_template or not feed.search_description:
            return feed.search_template
        description = feed.search_description
        if description not in self._templates:
            response = await self.get(description, account)
            warnings: list[str] = []
            try:
                template = atom.parse_opensearch(response.content, description, warnings)
            except atom.NotXml:
                self.warn("the OpenSearch description cannot be read; search is off")
                template = None
            for warning in warnings:
                self.warn(f"OpenSearch description: {warning}")
            self._templates[description] = template
        return self._templates[description]


def _same_server(url: str, root: str) -> bool:
    a, b = httpx.URL(url), httpx.URL(root)
    return (a.scheme, a.host, a.port) == (b.scheme, b.host, b.port)
