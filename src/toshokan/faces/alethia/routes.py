"""The Alethia app's dialect at ``/_/alethia``: the address a user adds in the app.

The app asks the questions of the spec's interface, under this prefix, and
decodes the answers in its own shapes (:mod:`.shapes`). Every request goes
through the same core as the spec's face: the same validation, authorisation,
cache and errors. Two paths differ in what they mean: the host object lists
full source objects, and the pages path carries the app's own row id where the
manga slug would be, so chapter slugs here are chapter keys
(:mod:`.keys`) that name a chapter on their own.
"""

import time
from collections.abc import Callable

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route

from toshokan.core import Caller, Core, host_path
from toshokan.core.answers import PAGE_LIST
from toshokan.core.bodies import read_json
from toshokan.core.cache_control import NO_STORE, cache_control_of
from toshokan.core.hashing import etag_of
from toshokan.core.http import POST_ONLY, authenticate, enter, entry_of, source_slug
from toshokan.errors import MethodNotAllowed
from toshokan.faces.alethia.images import header_free, needs_headers
from toshokan.faces.alethia.keys import chapter_of
from toshokan.faces.alethia.rendered import rendered
from toshokan.faces.alethia.shapes import AppHost, app_chapter, app_manga, app_source
from toshokan.models import Chapter, SearchResponse, SourceConfiguration

PREFIX = host_path("alethia")


def respond(body: bytes, cache_control: str) -> Response:
    return Response(
        body,
        media_type="application/json",
        headers={"Cache-Control": cache_control, "ETag": etag_of(body)},
    )


def model_json(model: BaseModel) -> bytes:
    return model.model_dump_json().encode()


def images_for(
    core: Core, config: SourceConfiguration, caller: Caller
) -> Callable[[list[str]], list[str]]:
    def images(urls: list[str]) -> list[str]:
        return header_free(core, config, urls, caller.base_url)

    return images


def link_window() -> int:
    """Part of the key of a translation holding signed links, so none is kept past a minute."""
    return int(time.time()) // 60


class AlethiaFace:
    """The dialect's handlers; the translations they keep are in the core's cache."""

    async def host(self, request: Request) -> Response:
        core = entry_of(request).core
        configs = [await core.configuration(h) for h in core.sources.serving()]

        def render() -> bytes:
            settings = core.settings.host
            return model_json(
                AppHost(
                    name=settings.name,
                    author=settings.author,
                    repository=settings.repository,
                    sources=[app_source(config) for config in configs],
                )
            )

        body = await rendered(core, ("host", *(c.hash for c in configs)), render)
        return respond(body, cache_control_of(request, "configuration", False))

    async def source(self, request: Request) -> Response:
        core = entry_of(request).core
        config = await core.configuration(core.source(source_slug(request)))
        body = await rendered(core, ("source", config.hash), lambda: model_json(app_source(config)))
        return respond(body, cache_control_of(request, "configuration", False))

    async def search(self, request: Request) -> Response:
        slug = source_slug(request)
        body = await read_json(request)
        entry = await enter(request, slug)
        core, caller, visit = entry.core, entry.caller, entry.visit
        assert visit is not None
        answer = await visit.search(body)
        cache_control = cache_control_of(request, "search", answer.private)
        config = visit.config
        if not needs_headers(config):
            return respond(answer.body, cache_control)  # the spec's shape is the app's

        def render() -> bytes:
            images = images_for(core, config, caller)
            found = answer.value
            results = [
                entry.model_copy(update={"cover": images([entry.cover])[0]})
                if entry.cover
                else entry
                for entry in found.results
            ]
            return model_json(SearchResponse(results=results, page=found.page, more=found.more))

        key = ("search", answer.etag, config.hash, caller.base_url, link_window())
        return respond(await rendered(core, key, render), cache_control)

    async def manga(self, request: Request) -> Response:
        slug = source_slug(request)
        manga_slug = request.path_params["manga"]
        if manga_slug in POST_ONLY:
            raise MethodNotAllowed(f"{PREFIX}/{slug}/{manga_slug} accepts POST only.")
        entry = await enter(request, slug)
        core, caller, visit = entry.core, entry.caller, entry.visit
        assert visit is not None
        answer = await visit.manga(manga_slug)
        config = visit.config

        def render() -> bytes:
            return model_json(app_manga(answer.value, images_for(core, config, caller)))

        key = ("manga", answer.etag, config.hash, caller.base_url, link_window())
        body = await rendered(core, key, render)
        return respond(body, cache_control_of(request, "manga", answer.private))

    async def chapters(self, request: Request) -> Response:
        slug = source_slug(request)
        manga_slug = request.path_params["manga"]
        entry = await enter(request, slug)
        assert entry.visit is not None
        core, answer = entry.core, await entry.visit.chapters(manga_slug)
        urls = entry.urls

        def shaped(chapter: Chapter) -> bytes:
            return model_json(
                app_chapter(chapter, manga_slug, urls.chapter(slug, manga_slug, chapter.slug))
            )

        def render() -> bytes:
            return b"[" + b",".join(shaped(c) for c in answer.value) + b"]"

        key = ("chapters", answer.etag, slug, manga_slug, urls.base_url)
        body = await rendered(core, key, render)
        return respond(body, cache_control_of(request, "chapters", answer.private))

    async def pages(self, request: Request) -> Response:
        """The manga segment is the app's own row id, not a slug: the chapter key says it all."""
        entry = await enter(request, source_slug(request))
        core, caller, visit = entry.core, entry.caller, entry.visit
        assert visit is not None
        answer = await visit.pages(*chapter_of(request.path_params["chapter"]))
        urls = header_free(core, visit.config, answer.value, caller.base_url)
        body = answer.body if urls == answer.value else PAGE_LIST.dump_json(urls)
        # Page URLs may be temporary: never cached, by the host or anyone else.
        return Response(body, media_type="application/json", headers={"Cache-Control": NO_STORE})


def routes() -> list[BaseRoute]:
    """The dialect's routes: its root, and everything under it."""
    face = AlethiaFace()
    return [
        Route(PREFIX, face.host, methods=["GET"], name="alethia-host"),
        Mount(
            PREFIX,
            routes=[
                Route("/", face.host, methods=["GET"]),
                Route("/{source}", face.source, methods=["GET"]),
                Route("/{source}/authenticate", authenticate, methods=["POST"]),
                Route("/{source}/search", face.search, methods=["POST"]),
                Route("/{source}/{manga}", face.manga, methods=["GET"]),
                Route("/{source}/{manga}/chapters", face.chapters, methods=["GET"]),
                Route("/{source}/{manga}/chapters/{chapter}", face.pages, methods=["GET"]),
            ],
            name="alethia",
        ),
    ]
