"""A local stand-in for api.mangadex.org that behaves like the real one.

A Starlette app reached through :class:`FakeTransport` (``httpx.ASGITransport``
plus the read timeout a real socket would enforce). It speaks the documented
API: ``name[]`` array parameters, ``order[field]`` sorts, ``includes[]``
reference expansion, offset/limit pagination with the real caps (100 for
lists, 500 for feeds, ``offset + limit <= 10000``), unknown parameters
refused, and the real error body. It records every request (path, query,
arrival time) so tests can count and time them, and can be told to be slow
or to fail (429 with retry headers, 5xx, ...). With ``validate=True`` every
JSON body it serves is checked against the documented schema (:mod:`schema`)
before it leaves, so the adapter is only ever tested against real shapes.
"""

import asyncio
import re
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from toshokan.sources.mangadex.tags import shipped_catalogue

from . import schema

API = "https://api.fake-mangadex.test"
UPLOADS = "https://uploads.fake-mangadex.test"
AT_HOME = "https://abc123.fake-mangadex.network"
#: MangaDex@Home's report endpoint (``https://api.mangadex.network/report`` for real).
REPORT = "https://api.fake-mangadex.network/report"
WINDOW = 10_000
DEFAULT_RATINGS = ["safe", "suggestive", "erotica"]
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S+00:00")


def tag_id(slug: str) -> str:
    """The MangaDex id behind one of the shipped tag slugs."""
    tag = shipped_catalogue().by_slug(slug)
    assert tag is not None, f"no shipped tag {slug!r}"
    return tag.id


def new_id(seed: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, seed))


@dataclass
class Person:
    id: str
    name: str


@dataclass
class Group:
    id: str
    name: str


@dataclass
class Cover:
    id: str
    file_name: str
    volume: str | None


@dataclass
class Chapter:
    id: str
    manga_id: str
    chapter: str | None
    volume: str | None = None
    title: str | None = None
    language: str = "en"
    publish_at: datetime = T0
    groups: list[str] = field(default_factory=list)
    pages: int = 3
    external_url: str | None = None
    unavailable: bool = False


@dataclass
class Manga:
    id: str
    title: dict[str, str]
    alt_titles: list[dict[str, str]] = field(default_factory=list)
    description: dict[str, str] = field(default_factory=dict)
    status: str = "ongoing"
    content_rating: str = "safe"
    year: int | None = 2020
    original_language: str = "ja"
    demographic: str | None = "shounen"
    tags: list[str] = field(default_factory=list)
    authors: list[str] = field(default_factory=list)
    artists: list[str] = field(default_factory=list)
    covers: list[Cover] = field(default_factory=list)
    created_at: datetime = T0
    updated_at: datetime = T0
    follows: int = 0
    rating: float = 0.0


@dataclass
class Recorded:
    method: str
    path: str
    query: list[tuple[str, str]]
    at: float
    user_agent: str = ""

    def values(self, name: str) -> list[str]:
        return [v for k, v in self.query if k == name]

    def value(self, name: str) -> str | None:
        found = self.values(name)
        return found[0] if found else None


@dataclass
class Scripted:
    """A scripted misbehaviour for requests whose path matches ``pattern``.

    ``raw``: answer with exactly these bytes, ``status`` and ``headers`` (``{path}`` in a
    header value is the request's path: a redirect to itself loops);
    ``status >= 400``: answer with that error (``body`` or a real-shaped error body);
    ``status < 400`` with a ``body``: answer with that (broken) body; otherwise only ``delay``.
    ``wire`` misbehaves below HTTP, as a socket would: ``"reset"`` (connection reset before
    an answer), ``"truncate"`` (headers and half the promised body, then the connection
    drops) or ``"drip"`` (a 200 whose body comes one byte every ``delay`` seconds).
    """

    pattern: str
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    times: int = 1
    body: Any = None
    raw: bytes | None = None
    wire: str | None = None


class BadRequest(Exception):
    def __init__(self, detail: str, status: int = 400):
        super().__init__(detail)
        self.detail = detail
        self.status = status


TITLES = {
    400: "Bad Request",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


def error_body(status: int, detail: str) -> dict[str, Any]:
    return {
        "result": "error",
        "errors": [
            {
                "id": str(uuid.uuid4()),
                "status": status,
                "title": TITLES.get(status, "Error"),
                "detail": detail,
                "context": None,
            }
        ],
    }


#: Query parameters each endpoint accepts (anything else is refused, as the real API does).
_MANGA_PARAMS = {
    "limit",
    "offset",
    "title",
    "authorOrArtist",
    "authors[]",
    "artists[]",
    "year",
    "includedTags[]",
    "includedTagsMode",
    "excludedTags[]",
    "excludedTagsMode",
    "status[]",
    "originalLanguage[]",
    "excludedOriginalLanguage[]",
    "availableTranslatedLanguage[]",
    "publicationDemographic[]",
    "ids[]",
    "contentRating[]",
    "createdAtSince",
    "updatedAtSince",
    "includes[]",
    "hasAvailableChapters",
    "group",
}
_MANGA_ORDERS = {
    "title",
    "year",
    "createdAt",
    "updatedAt",
    "latestUploadedChapter",
    "followedCount",
    "relevance",
    "rating",
}
_FEED_PARAMS = {
    "limit",
    "offset",
    "translatedLanguage[]",
    "originalLanguage[]",
    "excludedOriginalLanguage[]",
    "contentRating[]",
    "excludedGroups[]",
    "excludedUploaders[]",
    "includeFutureUpdates",
    "createdAtSince",
    "updatedAtSince",
    "publishAtSince",
    "includes[]",
    "includeEmptyPages",
    "includeFuturePublishAt",
    "includeExternalUrl",
    "includeUnavailable",
}
_FEED_ORDERS = {"createdAt", "updatedAt", "publishAt", "readableAt", "volume", "chapter"}


def _number(value: str | None) -> float:
    try:
        return float(value) if value else -1.0
    except ValueError:
        return -1.0


class FakeMangaDex:
    """The fake API: add content with ``add_*``, script trouble with :meth:`script`."""

    def __init__(self, *, latency: float = 0.0, validate: bool = True, now: datetime | None = None):
        self.latency = latency
        #: The MangaDex@Home node the page lists name (a served one, for hosts in processes).
        self.at_home = AT_HOME
        self.validate = validate
        self.now = now or datetime(2025, 6, 1, tzinfo=UTC)
        self.manga: dict[str, Manga] = {}
        self.chapters: dict[str, Chapter] = {}
        self.groups: dict[str, Group] = {}
        self.people: dict[str, Person] = {}
        self.tags: list[dict[str, Any]] = [
            {
                "id": t.id,
                "type": "tag",
                "attributes": {
                    "name": {"en": t.name},
                    "description": {},
                    "group": t.group,
                    "version": 1,
                },
                "relationships": [],
            }
            for t in shipped_catalogue().tags
        ]
        self.requests: list[Recorded] = []
        #: How many bodies of each kind were served after passing schema validation.
        self.validated: Counter[str] = Counter()
        self.scripts: list[Scripted] = []
        self.ping_text = "pong"
        #: Claim this many search results (MangaDex's catalogue is far bigger than a test's).
        self.pretend_total: int | None = None
        #: Bodies MangaDex@Home's report endpoint took, in arrival order.
        self.reports: list[dict[str, Any]] = []
        self.app = Starlette(
            routes=[
                Route("/report", self._report, methods=["POST"]),
                Route("/{path:path}", self._dispatch, methods=["GET"]),
            ]
        )
        self._routes: list[tuple[re.Pattern[str], Callable[..., Any], str]] = [
            (re.compile(r"^/ping$"), self._ping, ""),
            (re.compile(r"^/manga$"), self._manga_list, "manga_list"),
            (re.compile(r"^/manga/tag$"), self._tag_list, "tags"),
            (re.compile(r"^/manga/([^/]+)/feed$"), self._feed, "feed"),
            (re.compile(r"^/manga/([^/]+)$"), self._manga_one, "manga"),
            (re.compile(r"^/chapter/([^/]+)$"), self._chapter_one, "chapter"),
            (re.compile(r"^/at-home/server/([^/]+)$"), self._at_home, "at_home"),
            (re.compile(r"^/cover$"), self._covers, "covers"),
            (re.compile(r"^/author$"), self._authors, "authors"),
        ]

    # -- content ---------------------------------------------------------------------

    def transport(self) -> "FakeTransport":
        return FakeTransport(self.app, self)

    def wire_fault(self, path: str) -> Scripted | None:
        """The scripted misbehaviour below HTTP for ``path``, if any (and counts the request)."""
        for scripted in self.scripts:
            if scripted.wire and scripted.times > 0 and re.search(scripted.pattern, path):
                scripted.times -= 1
                self.requests.append(Recorded("GET", path, [], time.monotonic()))
                return scripted
        return None

    def add_person(self, name: str) -> Person:
        person = Person(new_id(f"person:{name}"), name)
        self.people[person.id] = person
        return person

    def add_group(self, name: str) -> Group:
        group = Group(new_id(f"group:{name}"), name)
        self.groups[group.id] = group
        return group

    def add_manga(self, key: str, title: str | dict[str, str], **attributes: Any) -> Manga:
        manga_id = new_id(f"manga:{key}")
        titles = title if isinstance(title, dict) else {"en": title}
        covers = attributes.pop("covers", None)
        if covers is None:
            covers = [Cover(new_id(f"cover:{key}:1"), f"{new_id(f'file:{key}')}.jpg", "1")]
        manga = Manga(id=manga_id, title=titles, covers=covers, **attributes)
        self.manga[manga_id] = manga
        return manga

    def add_chapter(self, manga: Manga, chapter: str | None, **attributes: Any) -> Chapter:
        key = f"chapter:{manga.id}:{len(self.chapters)}"
        item = Chapter(id=new_id(key), manga_id=manga.id, chapter=chapter, **attributes)
        self.chapters[item.id] = item
        return item

    def add_many_chapters(
        self, manga: Manga, count: int, group: Group | None = None
    ) -> list[Chapter]:
        made = []
        for n in range(1, count + 1):
            made.append(
                self.add_chapter(
                    manga,
                    str(n),
                    volume=str((n - 1) // 10 + 1),
                    title=f"Chapter {n}",
                    publish_at=T0 + timedelta(hours=n),
                    groups=[group.id] if group else [],
                )
            )
        return made

    def script(self, pattern: str, **how: Any) -> Scripted:
        scripted = Scripted(pattern, **how)
        self.scripts.append(scripted)
        return scripted

    def calls(self, path_pattern: str) -> list[Recorded]:
        return [r for r in self.requests if re.search(path_pattern, r.path)]

    # -- plumbing ----------------------------------------------------------------------

    async def _dispatch(self, request: Request) -> Response:
        path = "/" + request.path_params["path"]
        query = list(request.query_params.multi_items())
        agent = request.headers.get("user-agent", "")
        self.requests.append(Recorded(request.method, path, query, time.monotonic(), agent))
        if self.latency:
            await asyncio.sleep(self.latency)
        for scripted in self.scripts:
            if scripted.times > 0 and re.search(scripted.pattern, path):
                scripted.times -= 1
                if scripted.delay:
                    await asyncio.sleep(scripted.delay)
                if scripted.raw is not None:
                    headers = {k: v.replace("{path}", path) for k, v in scripted.headers.items()}
                    return Response(scripted.raw, status_code=scripted.status, headers=headers)
                if scripted.status < 400 and scripted.body is None:
                    break  # only slow
                if scripted.status < 400:  # a broken answer, served as is
                    return JSONResponse(
                        scripted.body, status_code=scripted.status, headers=scripted.headers
                    )
                body = scripted.body or error_body(scripted.status, f"Scripted failure for {path}.")
                return self._json(body, "error", scripted.status, scripted.headers)
        for pattern, handler, kind in self._routes:
            match = pattern.match(path)
            if match:
                try:
                    result = handler(request, *match.groups())
                except BadRequest as bad:
                    return self._json(error_body(bad.status, bad.detail), "error", bad.status)
                if isinstance(result, Response):
                    return result
                return self._json(result, kind)
        return self._json(error_body(404, f"No route for {path}."), "error", 404)

    def _json(
        self, body: Any, kind: str, status: int = 200, headers: dict[str, str] | None = None
    ) -> Response:
        if self.validate and kind:
            schema.validate(kind, body)
            self.validated[kind] += 1
        return JSONResponse(body, status_code=status, headers=headers)

    @staticmethod
    def _check_params(request: Request, allowed: set[str], orders: set[str]) -> None:
        for name, value in request.query_params.multi_items():
            order = re.fullmatch(r"order\[(\w+)\]", name)
            if order:
                if order.group(1) not in orders or value not in ("asc", "desc"):
                    raise BadRequest(f"Invalid order parameter {name}={value}.")
            elif name not in allowed:
                raise BadRequest(f"Unknown query parameter {name!r}.")

    @staticmethod
    def _page(request: Request, maximum: int) -> tuple[int, int]:
        try:
            limit = int(request.query_params.get("limit", "10"))
            offset = int(request.query_params.get("offset", "0"))
        except ValueError:
            raise BadRequest("limit and offset must be integers.") from None
        if not 0 <= limit <= maximum:
            raise BadRequest(f"limit must be between 0 and {maximum}.")
        if offset < 0:
            raise BadRequest("offset must be >= 0.")
        if offset + limit > WINDOW:
            raise BadRequest(f"Result window is too large, offset + limit must be <= {WINDOW}.")
        return offset, limit

    @staticmethod
    def _is_uuid(value: str) -> bool:
        try:
            uuid.UUID(value)
        except ValueError:
            return False
        return True

    @staticmethod
    def _collection(data: list[Any], offset: int, limit: int, total: int) -> dict[str, Any]:
        return {
            "result": "ok",
            "response": "collection",
            "data": data,
            "limit": limit,
            "offset": offset,
            "total": total,
        }

    # -- payloads ----------------------------------------------------------------------

    def _person_payload(self, person: Person, kind: str) -> dict[str, Any]:
        socials = (
            "imageUrl",
            "twitter",
            "pixiv",
            "melonBook",
            "fanBox",
            "booth",
            "nicoVideo",
            "skeb",
            "fantia",
            "tumblr",
            "youtube",
            "weibo",
            "naver",
            "namicomi",
            "website",
        )
        attributes: dict[str, Any] = {
            "name": person.name,
            "biography": {},
            **dict.fromkeys(socials),
            "version": 1,
            "createdAt": iso(T0),
            "updatedAt": iso(T0),
        }
        return {"id": person.id, "type": kind, "attributes": attributes}

    def _group_payload(self, group: Group) -> dict[str, Any]:
        return {
            "id": group.id,
            "type": "scanlation_group",
            "attributes": {
                "name": group.name,
                "altNames": [],
                "website": None,
                "ircServer": None,
                "ircChannel": None,
                "discord": None,
                "contactEmail": None,
                "description": None,
                "twitter": None,
                "mangaUpdates": None,
                "focusedLanguage": ["en"],
                "locked": False,
                "official": False,
                "verified": False,
                "inactive": False,
                "publishDelay": "P0D",
                "version": 1,
                "createdAt": iso(T0),
                "updatedAt": iso(T0),
            },
        }

    def _cover_payload(
        self, manga: Manga, cover: Cover, with_manga: bool = False
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "id": cover.id,
            "type": "cover_art",
            "attributes": {
                "volume": cover.volume,
                "fileName": cover.file_name,
                "description": "",
                "locale": "ja",
                "version": 1,
                "createdAt": iso(T0),
                "updatedAt": iso(T0),
            },
        }
        if with_manga:
            payload["relationships"] = [{"id": manga.id, "type": "manga"}]
        return payload

    def _latest_chapter(self, manga: Manga, own: list[Chapter] | None = None) -> Chapter | None:
        """The chapter uploaded last (``latestUploadedChapter``): the latest published, the
        one added last of those published at once. ``own``: the title's chapters, when known."""
        if own is None:
            own = [c for c in self.chapters.values() if c.manga_id == manga.id]
        return max(reversed(own), key=lambda c: c.publish_at, default=None)

    def _chapters_of(self, manga: list[Manga]) -> dict[str, list[Chapter]]:
        """The chapters of each of ``manga``, in one pass (a list's page of titles)."""
        wanted: dict[str, list[Chapter]] = {m.id: [] for m in manga}
        for chapter in self.chapters.values():
            if chapter.manga_id in wanted:
                wanted[chapter.manga_id].append(chapter)
        return wanted

    def _manga_payload(
        self, manga: Manga, includes: set[str], own: list[Chapter] | None = None
    ) -> dict[str, Any]:
        tag_items = {t["id"]: t for t in self.tags}
        if own is None:
            own = [c for c in self.chapters.values() if c.manga_id == manga.id]
        languages = sorted({c.language for c in own})
        latest = self._latest_chapter(manga, own)
        relationships: list[dict[str, Any]] = []
        for kind, ids in (("author", manga.authors), ("artist", manga.artists)):
            for pid in ids:
                relationships.append(
                    self._person_payload(self.people[pid], kind)
                    if kind in includes
                    else {"id": pid, "type": kind}
                )
        if manga.covers:
            main = manga.covers[-1]
            relationships.append(
                self._cover_payload(manga, main)
                if "cover_art" in includes
                else {"id": main.id, "type": "cover_art"}
            )
        return {
            "id": manga.id,
            "type": "manga",
            "attributes": {
                "title": manga.title,
                "altTitles": manga.alt_titles,
                "description": manga.description,
                "isLocked": False,
                "links": {},
                "originalLanguage": manga.original_language,
                "lastVolume": None,
                "lastChapter": None,
                "publicationDemographic": manga.demographic,
                "status": manga.status,
                "year": manga.year,
                "contentRating": manga.content_rating,
                "chapterNumbersResetOnNewVolume": False,
                "latestUploadedChapter": latest.id if latest else new_id("none"),
                "availableTranslatedLanguages": languages,
                "tags": [tag_items[t] for t in manga.tags],
                "state": "published",
                "version": 1,
                "createdAt": iso(manga.created_at),
                "updatedAt": iso(manga.updated_at),
            },
            "relationships": relationships,
        }

    def _chapter_payload(self, chapter: Chapter, expand_groups: bool) -> dict[str, Any]:
        relationships: list[dict[str, Any]] = [
            self._group_payload(self.groups[g])
            if expand_groups
            else {"id": g, "type": "scanlation_group"}
            for g in chapter.groups
        ]
        relationships.append({"id": chapter.manga_id, "type": "manga"})
        relationships.append({"id": new_id("uploader"), "type": "user"})
        return {
            "id": chapter.id,
            "type": "chapter",
            "attributes": {
                "title": chapter.title,
                "volume": chapter.volume,
                "chapter": chapter.chapter,
                "pages": 0 if chapter.external_url else chapter.pages,
                "translatedLanguage": chapter.language,
                "externalUrl": chapter.external_url,
                "isUnavailable": chapter.unavailable,
                "version": 1,
                "createdAt": iso(chapter.publish_at),
                "updatedAt": iso(chapter.publish_at),
                "publishAt": iso(chapter.publish_at),
                "readableAt": iso(chapter.publish_at),
            },
            "relationships": relationships,
        }

    # -- endpoints ---------------------------------------------------------------------

    async def _report(self, request: Request) -> Response:
        """MangaDex@Home's report endpoint: one JSON object with exactly the documented fields."""
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"result": "error"}, status_code=400)
        shape = {"url": str, "success": bool, "bytes": int, "duration": int, "cached": bool}
        if not isinstance(body, dict) or set(body) != set(shape):
            return JSONResponse({"result": "error"}, status_code=400)
        if any(type(body[name]) is not kind for name, kind in shape.items()):
            return JSONResponse({"result": "error"}, status_code=400)
        self.reports.append(body)
        return JSONResponse({"result": "ok"})

    def _ping(self, request: Request) -> Response:
        return PlainTextResponse(self.ping_text)

    def _tag_list(self, request: Request) -> dict[str, Any]:
        return self._collection(self.tags, 0, len(self.tags), len(self.tags))

    def _manga_list(self, request: Request) -> dict[str, Any]:
        self._check_params(request, _MANGA_PARAMS, _MANGA_ORDERS)
        offset, limit = self._page(request, 100)
        q = request.query_params
        found = list(self.manga.values())
        title = (q.get("title") or "").casefold()
        if title:
            found = [
                m
                for m in found
                if any(title in t.casefold() for d in [m.title, *m.alt_titles] for t in d.values())
            ]
        included, excluded = q.getlist("includedTags[]"), q.getlist("excludedTags[]")
        if included:
            test = all if q.get("includedTagsMode", "AND") == "AND" else any
            found = [m for m in found if test(t in m.tags for t in included)]
        if excluded:
            test = any if q.get("excludedTagsMode", "OR") == "OR" else all
            found = [m for m in found if not test(t in m.tags for t in excluded)]
        ratings = q.getlist("contentRating[]") or DEFAULT_RATINGS
        found = [m for m in found if m.content_rating in ratings]
        ids = set(q.getlist("ids[]"))
        if len(ids) > 100 or not all(self._is_uuid(i) for i in ids):
            raise BadRequest("ids[] holds at most 100 UUIDs.")
        if ids:
            found = [m for m in found if m.id in ids]
        for param, attribute in (
            ("status[]", "status"),
            ("publicationDemographic[]", "demographic"),
            ("originalLanguage[]", "original_language"),
        ):
            wanted = q.getlist(param)
            if wanted:
                found = [m for m in found if getattr(m, attribute) in wanted]
        if q.get("year"):
            found = [m for m in found if m.year == int(q["year"])]
        for param, attribute in (("authors[]", "authors"), ("artists[]", "artists")):
            wanted = q.getlist(param)
            if wanted:
                found = [m for m in found if any(p in getattr(m, attribute) for p in wanted)]
        languages = q.getlist("availableTranslatedLanguage[]")
        if languages:
            found = [
                m
                for m in found
                if any(
                    c.manga_id == m.id and c.language in languages for c in self.chapters.values()
                )
            ]
        for name, direction in q.multi_items():
            order = re.fullmatch(r"order\[(\w+)\]", name)
            if order:
                key = self._manga_order(order.group(1), title)
                found.sort(key=key, reverse=direction == "desc")
                break
        includes = set(q.getlist("includes[]"))
        page = found[offset : offset + limit]
        chapters = self._chapters_of(page)
        total = max(len(found), self.pretend_total or 0)
        return self._collection(
            [self._manga_payload(m, includes, chapters[m.id]) for m in page], offset, limit, total
        )

    def _manga_order(self, field_name: str, title: str) -> Callable[[Manga], Any]:
        def latest(m: Manga) -> datetime:
            chapter = self._latest_chapter(m)
            return chapter.publish_at if chapter else T0

        keys: dict[str, Callable[[Manga], Any]] = {
            "title": lambda m: next(iter(m.title.values()), "").casefold(),
            "year": lambda m: m.year or 0,
            "createdAt": lambda m: m.created_at,
            "updatedAt": lambda m: m.updated_at,
            "latestUploadedChapter": latest,
            "followedCount": lambda m: m.follows,
            "rating": lambda m: m.rating,
            "relevance": lambda m: (
                -min((t.casefold().find(title) % 1000 for t in m.title.values()), default=0)
            ),
        }
        return keys[field_name]

    def _manga_one(self, request: Request, manga_id: str) -> dict[str, Any]:
        self._check_params(request, {"includes[]"}, set())
        if not self._is_uuid(manga_id):
            raise BadRequest("id must be a UUID.")
        manga = self.manga.get(manga_id)
        if manga is None:
            raise BadRequest(f"Manga with ID {manga_id!r} could not be found.", 404)
        includes = set(request.query_params.getlist("includes[]"))
        return {"result": "ok", "response": "entity", "data": self._manga_payload(manga, includes)}

    def _feed(self, request: Request, manga_id: str) -> dict[str, Any]:
        self._check_params(request, _FEED_PARAMS, _FEED_ORDERS)
        if not self._is_uuid(manga_id):
            raise BadRequest("id must be a UUID.")
        offset, limit = self._page(request, 500)
        q = request.query_params
        manga = self.manga.get(manga_id)
        ratings = q.getlist("contentRating[]") or DEFAULT_RATINGS
        if manga is None or manga.content_rating not in ratings:
            return self._collection([], offset, limit, 0)  # the real API: an empty feed, not a 404
        found = [c for c in self.chapters.values() if c.manga_id == manga_id]
        languages = q.getlist("translatedLanguage[]")
        if languages:
            found = [c for c in found if c.language in languages]
        if q.get("includeExternalUrl") == "0":
            found = [c for c in found if not c.external_url]
        if q.get("includeFuturePublishAt") == "0":
            found = [c for c in found if c.publish_at <= self.now]
        if q.get("includeUnavailable", "0") == "0":
            found = [c for c in found if not c.unavailable]
        found.sort(key=lambda c: c.id)  # the real API's tie-breaker, then the requested orders
        orders = [
            (m.group(1), d) for n, d in q.multi_items() if (m := re.fullmatch(r"order\[(\w+)\]", n))
        ]
        for name, direction in reversed(orders):
            key: Callable[[Chapter], Any] = {
                "volume": lambda c: _number(c.volume),
                "chapter": lambda c: _number(c.chapter),
            }.get(name, lambda c: c.publish_at)
            found.sort(key=key, reverse=direction == "desc")
        expand = "scanlation_group" in q.getlist("includes[]")
        page = found[offset : offset + limit]
        return self._collection(
            [self._chapter_payload(c, expand) for c in page], offset, limit, len(found)
        )

    def _chapter_one(self, request: Request, chapter_id: str) -> dict[str, Any]:
        self._check_params(request, {"includes[]"}, set())
        chapter = self.chapters.get(chapter_id)
        if chapter is None:
            raise BadRequest(f"Chapter with ID {chapter_id!r} could not be found.", 404)
        expand = "scanlation_group" in request.query_params.getlist("includes[]")
        return {
            "result": "ok",
            "response": "entity",
            "data": self._chapter_payload(chapter, expand),
        }

    def _at_home(self, request: Request, chapter_id: str) -> dict[str, Any]:
        self._check_params(request, {"forcePort443"}, set())
        chapter = self.chapters.get(chapter_id)
        if chapter is None:
            raise BadRequest(f"Chapter with ID {chapter_id!r} could not be found.", 404)
        count = 0 if chapter.external_url else chapter.pages
        return {
            "result": "ok",
            "baseUrl": self.at_home,
            "chapter": {
                "hash": f"hash{chapter.id[:8]}",
                "data": [f"{n}-full{n:03d}.png" for n in range(1, count + 1)],
                "dataSaver": [f"{n}-saver{n:03d}.jpg" for n in range(1, count + 1)],
            },
        }

    def _covers(self, request: Request) -> dict[str, Any]:
        self._check_params(
            request,
            {"limit", "offset", "manga[]", "ids[]", "uploaders[]", "locales[]", "includes[]"},
            {"createdAt", "updatedAt", "volume"},
        )
        offset, limit = self._page(request, 100)
        wanted = set(request.query_params.getlist("manga[]"))
        found = [(m, c) for m in self.manga.values() if m.id in wanted for c in m.covers]
        found.sort(key=lambda mc: _number(mc[1].volume))
        page = found[offset : offset + limit]
        return self._collection(
            [self._cover_payload(m, c, True) for m, c in page], offset, limit, len(found)
        )

    def _authors(self, request: Request) -> dict[str, Any]:
        self._check_params(request, {"limit", "offset", "ids[]", "name", "includes[]"}, {"name"})
        offset, limit = self._page(request, 100)
        name = (request.query_params.get("name") or "").casefold()
        found = [p for p in self.people.values() if name in p.name.casefold()]
        found.sort(key=lambda p: (p.name.casefold() != name, p.name))
        page = found[offset : offset + limit]
        return self._collection(
            [self._person_payload(p, "author") for p in page], offset, limit, len(found)
        )


class FakeTransport(httpx.AsyncBaseTransport):
    """ASGI transport that enforces the client's read timeout, as a socket would.

    The timeout bounds the wait for the answer's headers; a body that keeps
    coming (a byte at a time) is never cut by it, as with a real socket.
    """

    def __init__(self, app: Starlette, fake: FakeMangaDex | None = None):
        self.inner = httpx.ASGITransport(app=app)
        self.fake = fake

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        scripted = self.fake.wire_fault(request.url.path) if self.fake else None
        if scripted is not None:
            return _misbehave(scripted, request)
        timeout = (request.extensions.get("timeout") or {}).get("read")
        try:
            async with asyncio.timeout(timeout) if timeout else nullcontext():
                return await self.inner.handle_async_request(request)
        except TimeoutError:
            raise httpx.ReadTimeout(
                "fake upstream did not answer in time", request=request
            ) from None


_FEED_BODY = b'{"result":"ok","response":"collection","data":[],"limit":10,"offset":0,"total":0}'


class _Drip(httpx.AsyncByteStream):
    def __init__(self, body: bytes, every: float, fail_after: int | None = None):
        self.body, self.every, self.fail_after = body, every, fail_after

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for index in range(len(self.body)):
            if self.fail_after is not None and index >= self.fail_after:
                raise httpx.RemoteProtocolError("peer closed connection mid-body")
            if self.every:
                await asyncio.sleep(self.every)
            yield self.body[index : index + 1]


def _misbehave(scripted: Scripted, request: httpx.Request) -> httpx.Response:
    if scripted.wire == "reset":
        raise httpx.ReadError("connection reset by peer", request=request)
    headers = {"Content-Type": "application/json", "Content-Length": str(len(_FEED_BODY))}
    if scripted.wire == "truncate":
        stream = _Drip(_FEED_BODY, 0.0, fail_after=len(_FEED_BODY) // 2)
    elif scripted.wire == "drip":
        stream = _Drip(_FEED_BODY, scripted.delay or 1.0)
    else:
        raise ValueError(f"unknown wire fault {scripted.wire!r}")
    return httpx.Response(200, headers=headers, stream=stream, request=request)
