"""Every link the host hands out, built in one place (as Datasette's ``Urls`` does).

A link is the address the caller reached the host at, a path and a query.
How the host lays out its paths (the spec's ``/<source>/<manga>/chapters/<chapter>``,
everything else under ``/_/``), how a slug or a query value is percent-encoded,
and which links carry a signature are known here and nowhere else, so a face
or an adapter never spells a host URL by hand and never gets the quoting or
the signing of one wrong.

Signed links (``exp`` and ``sig`` in the query) let image loaders that send no
credentials fetch what the host linked to. The host hands each builder its
signer (``[host] secret`` and ``link_ttl``) and the sources whose own routes
need one; the image links of ``/_/image`` are always signed.
"""

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlencode, urlsplit

#: ``message -> {"exp": ..., "sig": ...}``: the host's one signing scheme, under its secret.
LinkSigner = Callable[[str], Mapping[str, str]]
#: Query parameters, in the order they are written.
Query = Mapping[str, str] | Sequence[tuple[str, str]]

#: Where everything the host serves beside the spec's interface lives: no source is ``_``.
HOST_NAMESPACE = "/_"


def segment(text: str) -> str:
    """One path segment, percent-encoded (a ``/`` in it included)."""
    return quote(text, safe="")


def host_path(*parts: str) -> str:
    """The path of ``parts`` under ``/_/``: ``host_path("")`` is ``/_/``, the web reader's."""
    return "/".join([HOST_NAMESPACE, *(segment(part) for part in parts)])


def source_routes_path(source_slug: str) -> str:
    """Where a source's own routes (page images, covers) are mounted: ``/_/<slug>``."""
    return host_path(source_slug)


def image_path(source_slug: str) -> str:
    """The signed, header-free image route of a source: ``/_/image/<slug>``."""
    return host_path("image", source_slug)


def image_message(source_slug: str, url: str, width: str) -> str:
    """What an image link's signature covers: the source, the image and the width asked for."""
    return f"{image_path(source_slug)}\n{url}\n{width}"


def with_query(url: str, query: Query | None = None, template: str = "") -> str:
    """``url`` with ``query`` encoded, then ``template`` (an OpenSearch or URI template tail
    such as ``?q={searchTerms}``, whose braces a reader fills in) written as it is."""
    encoded = urlencode(query or {})
    return f"{url}{'?' if encoded else ''}{encoded}{template}"


@dataclass(frozen=True)
class Urls:
    """The links of one host as one caller reached it: one method per kind of link.

    ``base_url`` is the host's address as the caller used it (a path prefix
    such as ``https://example.org/comics`` included); a trailing slash is ignored.
    """

    base_url: str
    signer: LinkSigner | None = None
    #: Sources whose own routes are linked with a signature (they require authentication).
    signed_sources: Collection[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))

    def path(self, path: str, query: Query | None = None, template: str = "") -> str:
        """The absolute URL of ``path`` on this host (``path`` starts with ``/`` and is
        percent-encoded already: build it with the functions of this module)."""
        return with_query(f"{self.base_url}{path}", query, template)

    def local_path(self, path: str = "/") -> str:
        """``path`` on this host without the address: what a cookie's ``Path`` names, a
        proxy's path prefix included (``/comics/_/`` for ``https://example.org/comics``)."""
        return urlsplit(self.base_url).path + path

    # -- the spec's interface ----------------------------------------------------------

    def source(self, source_slug: str) -> str:
        return self.path(f"/{segment(source_slug)}")

    def manga(self, source_slug: str, manga_slug: str) -> str:
        return self.path(f"/{segment(source_slug)}/{segment(manga_slug)}")

    def chapter(self, source_slug: str, manga_slug: str, chapter_slug: str) -> str:
        return self.path(
            f"/{segment(source_slug)}/{segment(manga_slug)}/chapters/{segment(chapter_slug)}"
        )

    # -- the host's own namespace --------------------------------------------------------

    def face(self, *parts: str, query: Query | None = None, template: str = "") -> str:
        """A face's page under ``/_/``: ``face("opds", "local", "all")``; ``face("")`` is
        the web reader."""
        return self.path(host_path(*parts), query, template)

    def source_route(self, source_slug: str, path: str, query: Query | None = None) -> str:
        """One of a source's own routes (``path`` from its mount, such as ``/pages/a/b/1``).

        Signed when the source requires authentication, so an image loader that
        sends no credentials still gets the image; ``query`` (a version for cache
        busting, say) is kept only on links that are not signed, whose signature
        covers the path alone.
        """
        full = f"{source_routes_path(source_slug)}{path}"
        if source_slug in self.signed_sources:
            return self.path(full, self._signature(full))
        return self.path(full, query)

    def image(self, source_slug: str, url: str, width: int | None = None) -> str:
        """A header-free, expiring link through the host to the image ``url`` of a source,
        at most ``width`` wide."""
        shown = str(width) if width else ""
        query = {"u": url, **({"w": shown} if shown else {})}
        signature = self._signature(image_message(source_slug, url, shown))
        return self.path(image_path(source_slug), {**query, **signature})

    def _signature(self, message: str) -> Mapping[str, str]:
        if self.signer is None:
            raise RuntimeError("The host signs links once it has started; it has not.")
        return self.signer(message)
