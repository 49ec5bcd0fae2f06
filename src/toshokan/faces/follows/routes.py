"""The follows API's routes, under ``/_/follows``: a thin translation of the core's follows.

A reader is told as on the host's other JSON endpoints: the web reader's session
cookie, HTTP Basic (name and password or API key) or ``X-API-Key``; with no
readers on the host, everyone is the implicit reader. Answers concern one
reader and are never stored by a cache. Every failure is the Error object;
a refused request stores nothing (bodies are read and checked before anything
is written).
"""

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from toshokan.core import Core, check_slug
from toshokan.core.cache_control import NO_STORE, PRIVATE_NO_CACHE
from toshokan.core.host_api import answer, body_of, entered, number
from toshokan.core.http import entry_of
from toshokan.core.progress import ChapterRef
from toshokan.errors import InvalidRequest, MangaNotFound, NotFound
from toshokan.faces.follows.atom import updates_feed
from toshokan.faces.follows.shapes import (
    MAX_SLUG,
    CheckNow,
    KeepEveryWish,
    KeepWish,
    MarkRead,
    NewTarget,
    every_body,
    follow_body,
    keep_body,
    target_body,
    update_body,
)

PREFIX = "/_/follows"
Handler = Callable[[Request], Awaitable[Response]]
#: Updates one answer lists by default.
UPDATES_DEFAULT = 50


def series_of(request: Request, core: Core) -> tuple[str, str]:
    source, manga = request.path_params["source"], request.path_params["manga"]
    if len(source) > MAX_SLUG or len(manga) > MAX_SLUG:
        raise InvalidRequest(f"A slug is at most {MAX_SLUG} characters.")
    core.source(source)
    check_slug(manga, MangaNotFound)
    return source, manga


# -- follows -------------------------------------------------------------------------------


async def list_follows(request: Request) -> Response:
    entry, reader = await entered(request)
    found = await entry.core.follows.follows_of(reader)
    return answer({"follows": [follow_body(f) for f in found]})


async def one_follow(request: Request) -> Response:
    entry, reader = await entered(request)
    source, manga = series_of(request, entry.core)
    return answer(follow_body(await entry.core.follows.follow_of(reader, source, manga)))


async def follow(request: Request) -> Response:
    entry, reader = await entered(request)
    source, manga = series_of(request, entry.core)
    follows = entry.core.follows
    already = await follows.is_following(reader, source, manga)
    made = await follows.follow(reader, source, manga)
    return answer(follow_body(made), 200 if already else 201)


async def unfollow(request: Request) -> Response:
    entry, reader = await entered(request)
    source, manga = series_of(request, entry.core)
    if not await entry.core.follows.unfollow(reader, source, manga):
        raise NotFound(f"You do not follow {source}/{manga}.")
    return Response(status_code=204, headers={"Cache-Control": NO_STORE})


# -- keeping -------------------------------------------------------------------------------


async def keep_of(request: Request) -> Response:
    entry, reader = await entered(request)
    source, manga = series_of(request, entry.core)
    found = await entry.core.downloads.keep_of(reader, source, manga)
    if found is None:
        raise NotFound(f"You do not keep {source}/{manga}.")
    return answer(keep_body(found))


async def keep(request: Request) -> Response:
    entry, reader = await entered(request)
    source, manga = series_of(request, entry.core)
    body = await body_of(request, KeepWish)
    downloads = entry.core.downloads
    already = await downloads.keep_of(reader, source, manga)
    made = await downloads.keep(
        reader,
        source,
        manga,
        languages=body.languages,
        groups=body.groups,
        backfill=body.backfill,
        only_unread=body.onlyUnread,
    )
    return answer(keep_body(made), 200 if already else 201)


async def unkeep(request: Request) -> Response:
    entry, reader = await entered(request)
    source, manga = series_of(request, entry.core)
    if not await entry.core.downloads.unkeep(reader, source, manga):
        raise NotFound(f"You do not keep {source}/{manga}.")
    return Response(status_code=204, headers={"Cache-Control": NO_STORE})


def source_of(request: Request, core: Core) -> str:
    source: str = request.path_params["source"]
    if len(source) > MAX_SLUG:
        raise InvalidRequest(f"A slug is at most {MAX_SLUG} characters.")
    core.source(source)
    return source


async def keep_every_of(request: Request) -> Response:
    entry, reader = await entered(request)
    source = source_of(request, entry.core)
    found = await entry.core.downloads.every_of(reader, source)
    if found is None:
        raise NotFound(f"You do not keep every series you follow from {source}.")
    return answer(every_body(found))


async def keep_every(request: Request) -> Response:
    entry, reader = await entered(request)
    source = source_of(request, entry.core)
    body = await body_of(request, KeepEveryWish)
    downloads = entry.core.downloads
    already = await downloads.every_of(reader, source)
    made = await downloads.keep_every(
        reader, source, languages=body.languages, groups=body.groups, only_unread=body.onlyUnread
    )
    return answer(every_body(made), 200 if already else 201)


async def unkeep_every(request: Request) -> Response:
    entry, reader = await entered(request)
    source = source_of(request, entry.core)
    if not await entry.core.downloads.unkeep_every(reader, source):
        raise NotFound(f"You do not keep every series you follow from {source}.")
    return Response(status_code=204, headers={"Cache-Control": NO_STORE})


# -- updates -------------------------------------------------------------------------------


async def updates(request: Request) -> Response:
    entry, reader = await entered(request)
    limit = number(request, "limit", UPDATES_DEFAULT, 1, 100)
    offset = number(request, "offset", 0, 0, 10_000)
    unread = request.query_params.get("unread", "0")
    if unread not in ("0", "1", "true", "false"):
        raise InvalidRequest("unread is 1 (unread updates only) or 0.")
    found = await entry.core.follows.updates(
        reader, limit + 1, offset, unread_only=unread in ("1", "true")
    )
    return answer({"updates": [update_body(u) for u in found[:limit]], "more": len(found) > limit})


async def mark_read(request: Request) -> Response:
    entry, reader = await entered(request)
    body = await body_of(request, MarkRead)
    follows = entry.core.follows
    if body.all == bool(body.chapters):
        raise InvalidRequest("Name the chapters to mark read, or send all: true (not both).")
    if body.all:
        marked = await follows.mark_all_read(reader)
    else:
        for name in body.chapters:
            entry.core.source(name.source)
            check_slug(name.manga, MangaNotFound)
            check_slug(name.chapter, NotFound)
        refs = [ChapterRef(c.source, c.manga, c.chapter) for c in body.chapters]
        marked = await follows.mark_read(reader, refs)
    return answer({"marked": marked})


async def feed(request: Request) -> Response:
    """The reader's updates as Atom, for feed readers: the reader's API key in the URL
    (``?key=``; most feed readers cannot send headers), or Basic."""
    key = request.query_params.get("key")
    if key is not None:
        if len(key) > 256:
            raise InvalidRequest("key is an API key of the host's readers.")
        entry = entry_of(request)
        reader = await entry.core.readers.api_key(key, entry.caller.client)
    else:
        entry, reader = await entered(request)
    core = entry.core
    found = await core.follows.updates(reader, 100)
    address = entry.urls.local_path(PREFIX + "/feed.atom")
    body = updates_feed(found, address, core.settings.host.name)
    return Response(
        body,
        media_type="application/atom+xml;charset=utf-8",
        headers={"Cache-Control": PRIVATE_NO_CACHE},
    )


# -- checks --------------------------------------------------------------------------------


async def check_now(request: Request) -> Response:
    entry, reader = await entered(request)
    body = await body_of(request, CheckNow)
    if (body.source is None) != (body.manga is None):
        raise InvalidRequest("Name a series by source and manga, or neither (all you follow).")
    series = None
    if body.source is not None and body.manga is not None:
        entry.core.source(body.source)
        check_slug(body.manga, MangaNotFound)
        series = (body.source, body.manga)
    batch = await entry.core.follows.check_now(reader, series)
    return answer({"batch": batch}, 202)


async def check_status(request: Request) -> Response:
    entry, _ = await entered(request)
    batch = request.path_params["batch"]
    found = None if len(batch) > 64 else await entry.core.follows.batch(batch)
    if found is None:
        raise NotFound("No such check.")
    return answer(found)


# -- notification targets --------------------------------------------------------------------


async def list_targets(request: Request) -> Response:
    entry, reader = await entered(request)
    found = await entry.core.follows.targets_of(reader)
    return answer({"targets": [target_body(t) for t in found]})


async def add_target(request: Request) -> Response:
    entry, reader = await entered(request)
    body = await body_of(request, NewTarget)
    made = await entry.core.follows.add_target(reader, body.url, body.series)
    return answer(target_body(made), 201)


async def remove_target(request: Request) -> Response:
    entry, reader = await entered(request)
    which = request.path_params["target"]
    if len(which) > 64 or not await entry.core.follows.remove_target(reader, which):
        raise NotFound("No such notification target.")
    return Response(status_code=204, headers={"Cache-Control": NO_STORE})


def follows_routes() -> list[BaseRoute]:
    def route(path: str, handler: Handler, method: str) -> Route:
        return Route(f"{PREFIX}{path}", handler, methods=[method])

    return [
        route("", list_follows, "GET"),
        route("/updates", updates, "GET"),
        route("/read", mark_read, "POST"),
        route("/feed.atom", feed, "GET"),
        route("/checks", check_now, "POST"),
        route("/checks/{batch}", check_status, "GET"),
        route("/targets", list_targets, "GET"),
        route("/targets", add_target, "POST"),
        route("/targets/{target}", remove_target, "DELETE"),
        route("/series/{source}/{manga}", one_follow, "GET"),
        route("/series/{source}/{manga}", follow, "PUT"),
        route("/series/{source}/{manga}", unfollow, "DELETE"),
        route("/series/{source}/{manga}/keep", keep_of, "GET"),
        route("/series/{source}/{manga}/keep", keep, "PUT"),
        route("/series/{source}/{manga}/keep", unkeep, "DELETE"),
        route("/sources/{source}/keep", keep_every_of, "GET"),
        route("/sources/{source}/keep", keep_every, "PUT"),
        route("/sources/{source}/keep", unkeep_every, "DELETE"),
    ]
