"""KOReader's OPDS browser as it fetches feeds: a ``HEAD`` first, its cache, then a ``GET``.

Written from koreader/koreader, ``plugins/opds.koplugin/opdsbrowser.lua``:

- ``fetchFeed(url, headers_only)``: one request, ``HEAD`` or ``GET``, with
  ``Accept-Encoding: identity`` and ``Accept: application/opds+json,
  application/atom+xml;profile=opds-catalog, */*``, and the catalogue's name
  and password as Basic. A ``GET`` answered anything but 200 shows "Cannot get
  catalog. Server response status: ..." (a 401, 403, 404 or 406 its own text).
- ``parseFeed(url)``: the ``HEAD``'s ``Last-Modified``, when there is one, keys
  the parsed feed in ``CatalogCache`` (``"opds|catalog|" .. url .. "|" ..
  last_modified``, 20 slots, least recently used dropped first): a hit needs no
  ``GET``. Without it, the feed is fetched every time and never kept.
- Going back re-parses the feed it returns to (``onReturn`` ->
  ``updateCatalog``), so walking a list's titles one by one asks for the list
  again each time.
- ``genItemTableFromCatalog2``: an OPDS 2.0 feed's ``search`` link becomes the
  search URL: its template (``{...}``) replaced by ``%s`` when the rest names
  ``query``, else by ``?query=%s``.
"""

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

ACCEPT = "application/opds+json, application/atom+xml;profile=opds-catalog, */*"
#: ``CatalogCache``'s slots.
SLOTS = 20
#: Lua's ``{.*}``: from the first brace to the last.
TEMPLATE = re.compile(r"\{.*\}")


@dataclass
class KOReaderOpds:
    client: httpx.AsyncClient
    auth: Any = None
    cache: "OrderedDict[str, bytes]" = field(default_factory=OrderedDict)
    #: Every request made, as (method, url, status).
    requests: list[tuple[str, str, int]] = field(default_factory=list)
    #: What the user was shown instead of a feed.
    messages: list[str] = field(default_factory=list)
    hits: int = 0

    async def _fetch(self, url: str, method: str) -> httpx.Response:
        headers = {"Accept-Encoding": "identity", "Accept": ACCEPT}
        answer = await self.client.request(method, url, headers=headers, auth=self.auth)
        self.requests.append((method, url, answer.status_code))
        return answer

    async def parse_feed(self, url: str) -> bytes | None:
        """The feed at ``url``, from the cache when the ``HEAD`` says it is the one kept."""
        head = await self._fetch(url, "HEAD")
        modified = head.headers.get("last-modified")
        key = f"opds|catalog|{url}|{modified}" if modified else None
        if key is not None and key in self.cache:
            self.cache.move_to_end(key)
            self.hits += 1
            return self.cache[key]
        answer = await self._fetch(url, "GET")
        if answer.status_code != 200:
            self.messages.append(
                f"Cannot get catalog. Server response status: {answer.status_code}"
            )
            return None
        if key is not None:
            self.cache[key] = answer.content
            if len(self.cache) > SLOTS:
                self.cache.popitem(last=False)
        return answer.content


def search_url(link: dict[str, Any], query: str) -> str:
    """An OPDS 2.0 ``search`` link made into the URL KOReader asks with ``query``."""
    href: str = link["href"]
    template = TEMPLATE.sub("", href)
    filler = "%s" if "query" in template else "?query=%s"
    return TEMPLATE.sub(filler, href).replace("%s", quote(query))
