"""Local fakes of OPDS servers, following their documented output.

- :class:`Komga`: OPDS 1.2 Atom under ``/opds/v1.2`` with HTTP Basic, series as
  ``subsection`` links of kind acquisition, books with a PSE stream link
  (``{pageNumber}``, ``zero_based=true``), an OpenSearch description, paged feeds.
- :class:`Kavita`: OPDS 1.2 Atom under ``/api/opds/{apiKey}``, the key in every link,
  navigation-kind series links, PSE image links with query parameters.
- :class:`Calibre`: calibre-server's ``/opds``: a navigation root ("By Newest",
  "By Title"...), book entries with ``urn:uuid`` ids, CBZ acquisitions and covers,
  no page streaming, an Atom search template, sort facets.
- :class:`KomgaV2`: OPDS 2.0 JSON (``application/opds+json``) with navigation,
  groups of publications and ``{?query}`` search.
- :class:`Codex`: Codex's deviations: Atom without namespace served as
  ``application/xml``, 406 to an Atom ``Accept``, a bare ``&`` in its OpenSearch template.

Every fake counts the requests it served (``hits``) and remembers what it was sent.
"""

import asyncio
import base64
import io
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

from PIL import Image
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

ATOM = "application/atom+xml;profile=opds-catalog"
NAV = f"{ATOM};kind=navigation"
ACQ = f"{ATOM};kind=acquisition"
NAMESPACES = (
    'xmlns="http://www.w3.org/2005/Atom" xmlns:opds="http://opds-spec.org/2010/catalog" '
    'xmlns:pse="http://vaemendis.net/opds-pse/ns" xmlns:dc="http://purl.org/dc/terms/"'
)


def png(colour: int, size: tuple[int, int] = (4, 6)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (colour % 256, 40, 90)).save(out, "PNG")
    return out.getvalue()


def cbz(pages: int, seed: int = 0) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for n in range(pages, 0, -1):  # stored out of order: the reader sorts naturally
            archive.writestr(f"page{n}.png", png(seed + n))
        archive.writestr("ComicInfo.xml", "<ComicInfo/>")
    return out.getvalue()


def pdf(pages: int, seed: int = 0) -> bytes:
    """A PDF of ``pages`` pages, page ``n`` one image painted red ``seed + n`` (PIL writes it)."""
    images = [Image.new("RGB", (40, 60), ((seed + n) % 256, 40, 90)) for n in range(1, pages + 1)]
    out = io.BytesIO()
    images[0].save(out, "PDF", save_all=True, append_images=images[1:], resolution=72)
    return out.getvalue()


def epub(pages: int, seed: int = 0, *, images: bool = True) -> bytes:
    """An EPUB, fixed-layout: one XHTML page per image, in a spine whose order is not the
    images' names' order (``images=False``: a text book with no images at all)."""
    spine = [f"p{n}" for n in range(1, pages + 1)]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED
        )
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        manifest = []
        for n, item in enumerate(spine, start=1):
            image = f"images/{pages - n + 1:03d}.png"  # named backwards: spine order rules
            body = f'<img src="{image}" alt=""/>' if images else f"<p>Chapter {n}.</p>"
            archive.writestr(
                f"OEBPS/{item}.xhtml",
                '<html xmlns="http://www.w3.org/1999/xhtml"><body>' + body + "</body></html>",
            )
            if images:
                archive.writestr(f"OEBPS/{image}", png(seed + n))
            manifest.append(
                f'<item id="{item}" href="{item}.xhtml" media-type="application/xhtml+xml"/>'
            )
        archive.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            f"<manifest>{''.join(manifest)}</manifest><spine>"
            + "".join(f'<itemref idref="{item}"/>' for item in spine)
            + "</spine></package>",
        )
    return out.getvalue()


@dataclass
class Book:
    id: str
    title: str
    pages: int
    published: str = "2024-01-01T00:00:00Z"
    authors: list[str] = field(default_factory=list)
    summary: str = ""
    categories: list[str] = field(default_factory=list)


@dataclass
class Series:
    id: str
    title: str
    books: list[Book]
    summary: str = ""


def link(rel: str, href: str, kind: str, **extra: str) -> str:
    attrs = "".join(f" {k.replace('_', ':')}={quoteattr(v)}" for k, v in extra.items())
    return f"<link rel={quoteattr(rel)} href={quoteattr(href)} type={quoteattr(kind)}{attrs}/>"


def feed(
    fid: str, title: str, entries: list[str], links: Sequence[str] = (), ns: str = NAMESPACES
) -> str:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><feed {ns}><id>{escape(fid)}</id>'
        f"<title>{escape(title)}</title><updated>2024-06-01T10:00:00Z</updated>"
        + "".join(links)
        + "".join(entries)
        + "</feed>"
    )


def entry(eid: str, title: str, links: list[str], extra: str = "") -> str:
    return (
        f"<entry><title>{escape(title)}</title><id>{escape(eid)}</id>"
        f"<updated>2024-05-01T00:00:00Z</updated>{extra}{''.join(links)}</entry>"
    )


def book_extra(book: Book) -> str:
    return (
        f"<published>{book.published}</published>"
        + "".join(f"<author><name>{escape(a)}</name></author>" for a in book.authors)
        + (f"<summary>{escape(book.summary)}</summary>" if book.summary else "")
        + "".join(f"<category term={quoteattr(c)} label={quoteattr(c)}/>" for c in book.categories)
    )


def atom_response(text: str, media_type: str = ATOM) -> Response:
    return Response(text, media_type=media_type)


def library() -> list[Series]:
    return [
        Series(
            "0A1",
            "Blue Harbour",
            [
                Book(
                    f"B{n}",
                    f"Blue Harbour Vol. {n}",
                    3 + n,
                    f"2024-0{n}-01T00:00:00Z",
                    ["Aoi Umi"],
                    f"Volume {n}.",
                    ["Slice of Life", "Sea"],
                )
                for n in range(1, 6)
            ],
            "A town by the sea.",
        ),
        Series(
            "0B2", "Red Mountain", [Book("R1", "Red Mountain Ch. 1.5", 2, authors=["Aka Yama"])]
        ),
        Series("0C3", "Green Field", [Book("G1", "Green Field - Oneshot", 1)]),
    ]


class Fake:
    """Common bookkeeping: request count, paths, headers seen."""

    def __init__(self) -> None:
        self.hits = 0
        self.paths: list[str] = []
        self.authorizations: list[str | None] = []
        self.fail_with: int | None = None
        self.delay = 0.0

    def seen(self, request: Request) -> Response | None:
        self.hits += 1
        self.paths.append(
            str(request.url.path) + ("?" + request.url.query if request.url.query else "")
        )
        self.authorizations.append(request.headers.get("authorization"))
        if self.fail_with is not None:
            return Response("upstream broke", status_code=self.fail_with)
        return None


class Komga(Fake):
    """Komga's OPDS v1.2 (``/opds/v1.2``), HTTP Basic, PSE, ``?page=`` paging of 2 books."""

    root = "http://komga.test/opds/v1.2/catalog"
    user, password = "reader@komga.test", "s3cret-pass"
    per_page = 2

    def __init__(self, series: list[Series] | None = None) -> None:
        super().__init__()
        self.series = series if series is not None else library()
        #: Accounts by name; each sees every series but those listed in ``hidden`` for it
        #: (Komga's per-user library restrictions).
        self.users = {self.user: self.password}
        self.hidden: dict[str, set[str]] = {}

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/opds/v1.2/{rest:path}", self.handle)])

    def _user(self, request: Request) -> str | None:
        scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
        if scheme != "Basic":
            return None
        name, _, password = base64.b64decode(encoded).decode().partition(":")
        return name if self.users.get(name) == password else None

    async def handle(self, request: Request) -> Response:
        failed = self.seen(request)
        if failed:
            return failed
        await asyncio.sleep(self.delay)
        user = self._user(request)
        if user is None:
            return Response(
                "", status_code=401, headers={"WWW-Authenticate": 'Basic realm="Komga"'}
            )
        hidden = self.hidden.get(user, set())
        visible = [s for s in self.series if s.title not in hidden]
        rest = request.path_params["rest"]
        base = "/opds/v1.2"
        search_link = link("search", f"{base}/search", "application/opensearchdescription+xml")
        if rest == "catalog":
            shelves = [
                ("keep-reading", "Keep Reading"),
                ("ondeck", "On Deck"),
                ("series/latest", "Latest series"),
                ("books/latest", "Latest books"),
                ("libraries", "All libraries"),
            ]
            entries = [
                entry(f"id-{p}", t, [link("subsection", f"{base}/{p}", NAV)]) for p, t in shelves
            ]
            return atom_response(feed("root", "Komga", entries, [search_link]))
        if rest == "search":
            return Response(
                '<?xml version="1.0"?><OpenSearchDescription xmlns="http://a9.com/-/spec/opensearch/1.1/">'
                f'<Url type="application/atom+xml;profile=opds-catalog;kind=acquisition" '
                f'template="{base}/series?search={{searchTerms}}"/></OpenSearchDescription>',
                media_type="application/opensearchdescription+xml",
            )
        if rest in ("series/latest", "series"):
            query = request.query_params.get("search", "").lower()
            found = [s for s in visible if query in s.title.lower()]
            return self._paged(
                request,
                f"{base}/{rest}",
                "Series",
                [self._series_entry(s) for s in found],
                search_link,
            )
        if rest.startswith("series/"):
            series = next((s for s in visible if s.id == rest.split("/")[1]), None)
            if series is None:
                return Response("not found", status_code=404)
            books = [self._book_entry(b) for b in series.books]
            return self._paged(request, f"{base}/{rest}", series.title, books, search_link)
        if rest.startswith("books/") and "/pages/" in rest:
            book_id, number = rest.split("/")[1], rest.split("/")[3]
            book = next((b for s in visible for b in s.books if b.id == book_id), None)
            if book is None or not number.isdigit() or int(number) >= book.pages:
                return Response("no page", status_code=404)
            assert request.query_params.get("zero_based") == "true"
            return Response(png(int(number)), media_type="image/png")
        if rest.startswith("books/") and rest.endswith("/thumbnail"):
            return Response(png(7), media_type="image/png")
        return Response("not found", status_code=404)

    def _paged(
        self, request: Request, path: str, title: str, entries: list[str], *links: str
    ) -> Response:
        page = int(request.query_params.get("page", "0"))
        chunk = entries[page * self.per_page : (page + 1) * self.per_page]
        nav = list(links)
        if (page + 1) * self.per_page < len(entries):
            params = dict(request.query_params) | {"page": str(page + 1)}
            query = "&amp;".join(f"{k}={v}" for k, v in params.items())
            nav.append(f'<link rel="next" href="{path}?{query}" type="{ACQ}"/>')
        return atom_response(feed(path, title, chunk, nav))

    def _series_entry(self, series: Series) -> str:
        extra = f"<summary>{escape(series.summary)}</summary>" if series.summary else ""
        return entry(
            series.id,
            series.title,
            [link("subsection", f"/opds/v1.2/series/{series.id}", ACQ)],
            extra,
        )

    def _book_entry(self, book: Book) -> str:
        base = f"/opds/v1.2/books/{book.id}"
        return entry(
            book.id,
            book.title,
            [
                link("http://opds-spec.org/image/thumbnail", f"{base}/thumbnail", "image/png"),
                link("http://opds-spec.org/acquisition", f"{base}/file", "application/zip"),
                link(
                    "http://vaemendis.net/opds-pse/stream",
                    f"{base}/pages/{{pageNumber}}?zero_based=true",
                    "image/jpeg",
                    pse_count=str(book.pages),
                ),
            ],
            book_extra(book),
        )


class Kavita(Fake):
    """Kavita's OPDS: the API key in the path of every link; series of chapters with PSE."""

    key = "8c1f-kavita-api-key-2b7e"
    origin = "http://kavita.test"

    def __init__(self) -> None:
        super().__init__()
        self.series = library()

    @property
    def root(self) -> str:
        return f"{self.origin}/api/opds/{self.key}"

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/api/opds/{key}{rest:path}", self.handle)])

    async def handle(self, request: Request) -> Response:
        failed = self.seen(request)
        if failed:
            return failed
        if request.path_params["key"] != self.key:
            return Response("", status_code=401)
        rest, base = request.path_params["rest"], f"/api/opds/{self.key}"
        if rest in ("", "/"):
            entries = [
                entry("onDeck", "On Deck", [link("subsection", f"{base}/on-deck", NAV)]),
                entry("allSeries", "All Series", [link("subsection", f"{base}/series", NAV)]),
            ]
            return atom_response(
                feed(
                    "root",
                    "Kavita",
                    entries,
                    [
                        link("search", f"{base}/search", "application/opensearchdescription+xml"),
                    ],
                )
            )
        if rest == "/search":
            return Response(
                '<OpenSearchDescription xmlns="http://a9.com/-/spec/opensearch/1.1/">'
                f'<Url type="application/atom+xml" template="{base}/series?query={{searchTerms}}"/>'
                "</OpenSearchDescription>",
                media_type="application/xml",
            )
        if rest == "/series":
            query = request.query_params.get("query", "").lower()
            entries = [
                entry(
                    f"series-{i}",
                    s.title,
                    [
                        link("subsection", f"{base}/series/{i}", NAV),
                        link(
                            "http://opds-spec.org/image",
                            f"/api/image/series-cover?seriesId={i}&apiKey={self.key}",
                            "image/png",
                        ),
                    ],
                )
                for i, s in enumerate(self.series)
                if query in s.title.lower()
            ]
            return atom_response(feed("series", "All Series", entries))
        if rest.startswith("/series/"):
            index = int(rest.split("/")[2])
            series = self.series[index]
            entries = [
                entry(
                    f"chapter-{b.id}",
                    b.title,
                    [
                        link(
                            "http://opds-spec.org/acquisition/open-access",
                            f"{base}/series/{index}/chapter/{b.id}/download/file.cbz",
                            "application/zip",
                        ),
                        link(
                            "http://vaemendis.net/opds-pse/stream",
                            f"{base}/image?seriesId={index}&chapterId={b.id}&pageNumber={{pageNumber}}",
                            "image/jpeg",
                            pse_count=str(b.pages),
                        ),
                    ],
                    book_extra(b),
                )
                for b in series.books
            ]
            return atom_response(feed(f"series-{index}", series.title, entries))
        if rest == "/image":
            return Response(png(int(request.query_params["pageNumber"])), media_type="image/png")
        return Response("not found", status_code=404)


class Calibre(Fake):
    """calibre-server's OPDS: books with CBZ acquisitions, no streaming; sort facets."""

    root = "http://calibre.test/opds"

    def __init__(self) -> None:
        super().__init__()
        self.books = [
            Book(
                f"urn:uuid:0000000{n}-aaaa-bbbb-cccc-dddddddddddd",
                title,
                pages,
                f"202{n}-03-01T00:00:00+00:00",
                [author],
                f"<p>About {title}.</p>",
                tags,
            )
            for n, (title, pages, author, tags) in enumerate(
                [
                    ("Moon Letters", 3, "Ann Ink", ["Drama"]),
                    ("Star Atlas", 4, "Bo Pen", ["Sci-Fi", "Drama"]),
                    ("Sun Diary", 2, "Cy Quill", []),
                ],
                start=1,
            )
        ]
        self.downloads = 0
        #: The formats each book (by index from 1) is offered in; every book is a CBZ and
        #: an EPUB unless a test says otherwise. ``TXT`` stands for an EPUB of text.
        self.formats: dict[int, list[str]] = {}
        #: The one account allowed in when set, as ``calibre-server --enable-auth`` does.
        self.account: tuple[str, str] | None = None

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{rest:path}", self.handle)])

    def _book_entry(self, index: int, book: Book) -> str:
        kinds = {"CBZ": "application/x-cbz", "EPUB": "application/epub+zip"}
        kinds |= {"PDF": "application/pdf", "TXT": "application/epub+zip"}
        return entry(
            book.id,
            book.title,
            [
                *(
                    link(
                        "http://opds-spec.org/acquisition",
                        f"/get/{name}/{index}/Calibre_Library",
                        kinds[name],
                    )
                    for name in self.formats.get(index, ["CBZ", "EPUB"])
                ),
                link(
                    "http://opds-spec.org/cover",
                    f"/get/cover/{index}/Calibre_Library",
                    "image/jpeg",
                ),
                link(
                    "http://opds-spec.org/thumbnail",
                    f"/get/thumb/{index}/Calibre_Library",
                    "image/jpeg",
                ),
            ],
            book_extra(book),
        )

    async def handle(self, request: Request) -> Response:
        failed = self.seen(request)
        if failed:
            return failed
        if self.account is not None:
            expected = base64.b64encode(":".join(self.account).encode()).decode()
            if request.headers.get("authorization") != f"Basic {expected}":
                return Response("", status_code=401, headers={"WWW-Authenticate": "Basic"})
        rest = request.path_params["rest"]
        search = link("search", "/opds/search/{searchTerms}", "application/atom+xml")
        if rest == "opds":
            entries = [
                entry(
                    "calibre:Newest",
                    "By Newest",
                    [link("subsection", "/opds/navcatalog/4f6e6577657374", ACQ)],
                ),
                entry(
                    "calibre:Title",
                    "By Title",
                    [link("subsection", "/opds/navcatalog/4f7469746c65", ACQ)],
                ),
                entry(
                    "calibre:Authors",
                    "By Authors",
                    [link("subsection", "/opds/navcatalog/4f617574686f7273", NAV)],
                ),
            ]
            return atom_response(feed("calibre:Root", "calibre Library", entries, [search]))
        facets = [
            link(
                "http://opds-spec.org/facet",
                "/opds/navcatalog/4f7469746c65",
                ACQ,
                opds_facetGroup="Sort by",
                title="Title",
            ),
            link(
                "http://opds-spec.org/facet",
                "/opds/navcatalog/4f6e6577657374",
                ACQ,
                opds_facetGroup="Sort by",
                title="Newest",
            ),
        ]
        if rest.startswith("opds/navcatalog/") or rest.startswith("opds/search/"):
            books = list(enumerate(self.books, start=1))
            if rest == "opds/navcatalog/4f7469746c65":
                books.sort(key=lambda item: item[1].title)
            elif rest.startswith("opds/search/"):
                term = rest.removeprefix("opds/search/").lower()
                books = [(i, b) for i, b in books if term in b.title.lower()]
            else:
                books.sort(key=lambda item: item[1].published, reverse=True)
            return atom_response(
                feed(rest, "Books", [self._book_entry(i, b) for i, b in books], [search, *facets])
            )
        if rest.startswith(("get/CBZ/", "get/PDF/", "get/EPUB/", "get/TXT/")):
            self.downloads += 1
            name, index = rest.split("/")[1], int(rest.split("/")[2])
            if name not in self.formats.get(index, ["CBZ", "EPUB"]):
                return Response("not found", status_code=404)
            pages, seed = self.books[index - 1].pages, index * 10
            body, kind = {
                "CBZ": (lambda: cbz(pages, seed), "application/x-cbz"),
                "PDF": (lambda: pdf(pages, seed), "application/pdf"),
                "EPUB": (lambda: epub(pages, seed), "application/epub+zip"),
                "TXT": (lambda: epub(pages, seed, images=False), "application/epub+zip"),
            }[name]
            return Response(body(), media_type=kind)
        if rest.startswith(("get/cover/", "get/thumb/")):
            return Response(png(3), media_type="image/png")
        return Response("not found", status_code=404)


class KomgaV2(Fake):
    """OPDS 2.0 JSON: navigation, publication groups, ``{?query}`` search, CBZ acquisitions."""

    root = "http://komga2.test/opds/v2/catalog"

    def __init__(self) -> None:
        super().__init__()
        self.series = library()

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{rest:path}", self.handle)])

    def _publication(self, book: Book, series: Series) -> dict:
        return {
            "metadata": {
                "title": book.title,
                "identifier": f"urn:komga:book:{book.id}",
                "author": [{"name": a} for a in book.authors],
                "description": book.summary,
                "subject": book.categories,
                "modified": book.published,
                "language": "ja",
                "belongsTo": {"series": [{"name": series.title, "position": float(book.id[1:])}]},
            },
            "links": [
                {
                    "rel": "http://opds-spec.org/acquisition",
                    "href": f"/opds/v2/books/{book.id}/file",
                    "type": "application/vnd.comicbook+zip",
                }
            ],
            "images": [{"href": f"/opds/v2/books/{book.id}/thumbnail", "type": "image/webp"}],
        }

    async def handle(self, request: Request) -> Response:
        failed = self.seen(request)
        if failed:
            return failed
        rest = request.path_params["rest"]
        search = {
            "rel": "search",
            "href": "/opds/v2/series{?query}",
            "type": "application/opds+json",
            "templated": True,
        }
        kind = "application/opds+json"
        if rest == "opds/v2/catalog":
            return JSONResponse(
                {
                    "metadata": {"title": "Komga"},
                    "links": [{"rel": "self", "href": "/opds/v2/catalog", "type": kind}, search],
                    "navigation": [
                        {"title": "Series", "href": "/opds/v2/series", "type": kind},
                        {"title": "Libraries", "href": "/opds/v2/libraries", "type": kind},
                    ],
                },
                media_type=kind,
            )
        if rest == "opds/v2/series":
            query = request.query_params.get("query", "").lower()
            found = [s for s in self.series if query in s.title.lower()]
            genre, status = request.query_params.get("genre"), request.query_params.get("status")
            if genre:
                found = [s for s in found if any(genre in b.categories for b in s.books)]
            if status:
                found = [s for s in found if (s.id == "0A1") == (status == "ongoing")]
            return JSONResponse(
                {
                    "metadata": {"title": "Series"},
                    "facets": [
                        {
                            "metadata": {"title": "Genre"},
                            "links": [
                                {
                                    "title": "Slice of Life",
                                    "href": "/opds/v2/series?genre=Slice%20of%20Life",
                                    "type": kind,
                                },
                            ],
                        },
                        {
                            "metadata": {"title": "Status"},
                            "links": [
                                {
                                    "title": "Ongoing",
                                    "href": "/opds/v2/series?status=ongoing",
                                    "type": kind,
                                },
                                {
                                    "title": "Completed",
                                    "href": "/opds/v2/series?status=completed",
                                    "type": kind,
                                },
                            ],
                        },
                    ],
                    "links": [search],
                    "navigation": [
                        {"title": s.title, "href": f"/opds/v2/series/{s.id}", "type": kind}
                        for s in found
                    ],
                },
                media_type=kind,
            )
        if rest.startswith("opds/v2/series/"):
            series = next(s for s in self.series if s.id == rest.rsplit("/", 1)[1])
            return JSONResponse(
                {
                    "metadata": {"title": series.title},
                    "groups": [
                        {
                            "metadata": {"title": "Books"},
                            "publications": [self._publication(b, series) for b in series.books],
                        }
                    ],
                },
                media_type=kind,
            )
        if rest.endswith("/file"):
            book_id = rest.split("/")[3]
            book = next(b for s in self.series for b in s.books if b.id == book_id)
            return Response(cbz(book.pages), media_type="application/zip")
        if rest.endswith("/thumbnail"):
            return Response(b"RIFF\x00\x00\x00\x00WEBPVP8 ", media_type="image/webp")
        return Response("not found", status_code=404)


class Codex(Fake):
    """Codex's OPDS v1: no Atom namespace, ``application/xml``, 406 to an Atom Accept, bare ``&``."""

    root = "http://codex.test/opds/v1.2/"

    def __init__(self) -> None:
        super().__init__()
        self.series = library()
        self.refused = 0

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{rest:path}", self.handle)])

    async def handle(self, request: Request) -> Response:
        failed = self.seen(request)
        if failed:
            return failed
        if "application/atom+xml" in request.headers.get("accept", ""):
            self.refused += 1
            return Response("Not Acceptable", status_code=406)
        rest, bare = request.path_params["rest"], 'xmlns:pse="http://vaemendis.net/opds-pse/ns"'
        xml = "application/xml"
        search = link("search", "/opds/v1.2/opensearch/v1", "application/opensearchdescription+xml")
        if rest == "opds/v1.2/opensearch/v1":
            return Response(
                '<?xml version="1.0"?><OpenSearchDescription xmlns="http://a9.com/-/spec/opensearch/1.1/">'
                '<Url type="application/atom+xml;profile=opds-catalog" '
                'template="/opds/v1.2/s/0/1?q={searchTerms}&topGroup=s"/></OpenSearchDescription>',
                media_type=xml,
            )
        if rest == "opds/v1.2/":
            shelves = [
                entry("kr", "👀 Keep Reading", [link("subsection", "/opds/v1.2/r/0/1?orderBy=bookmark_updated_at", ACQ)]),
                entry("pv", "⊙ Publishers View", [link("subsection", "/opds/v1.2/r/0/1?topGroup=p", NAV)]),
                entry("sv", "⊙ Series View", [link("subsection", "/opds/v1.2/s/0/1?topGroup=s", NAV)]),
            ]  # fmt: skip
            return atom_response(feed("codex", "Codex", shelves, [search], ns=bare), xml)
        if rest in ("opds/v1.2/r/0/1", "opds/v1.2/s/0/1"):
            query = request.query_params.get("q", "").lower()
            entries = [
                entry(f"s{s.id}", s.title, [link("subsection", f"/opds/v1.2/s/{s.id}/1", ACQ)])
                for s in self.series
                if query in s.title.lower()
            ]
            # Codex sends the way back and its sort orders as entries, before the works.
            here = f"/{rest}?q={query}&amp;topGroup=s"
            views = [
                entry("/opds/v1.2/", "⌂ Start of catalog", [link("subsection", "/opds/v1.2/", NAV)]),
                entry(f"{here}&amp;orderBy=sort_name", "➠ Order By Name", [link("subsection", f"{here}&amp;orderBy=sort_name", ACQ)]),
                entry(f"{here}&amp;orderReverse=true", "⇕ Order Descending", [link("subsection", f"{here}&amp;orderReverse=true", ACQ)]),
            ]  # fmt: skip
            start = link("start", "/opds/v1.2/", NAV)
            return atom_response(
                feed("codex", "Codex", views + entries, [search, start], ns=bare), xml
            )
        if rest.startswith("opds/v1.2/s/"):
            series = next(s for s in self.series if s.id == rest.split("/")[3])
            entries = [
                entry(
                    b.id,
                    b.title,
                    [
                        link(
                            "http://vaemendis.net/opds-pse/stream",
                            f"/opds/v1.2/c/{b.id}/{{pageNumber}}/page.jpg?bookmark=1",
                            "image/jpeg",
                            pse_count=str(b.pages),
                        )
                    ],
                    book_extra(b),
                )
                for b in series.books
            ]
            return atom_response(feed(series.id, series.title, entries, [search], ns=bare), xml)
        if rest.startswith("opds/v1.2/c/"):
            return Response(png(int(rest.split("/")[4])), media_type="image/jpeg")
        return Response("not found", status_code=404)
