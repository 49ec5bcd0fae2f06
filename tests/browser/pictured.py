"""The test catalog with pictures of its own, for the reader's tests: real page images the host
serves, one page wider than high (a spread already), and one page that cannot be decoded,
answered as the local library answers such a page: 502 with the Error object."""

import io
from collections.abc import Sequence

from PIL import Image, ImageDraw
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from tests.helpers.catalog import Catalog
from toshokan.models import SourceConfiguration
from toshokan.sdk import RequestContext, public

#: Pages in every chapter.
PAGES = 7
#: (chapter, page from 1) of the page that is a spread already, and of the one that is damaged.
WIDE = ("c2", 5)
DAMAGED = ("c4", 2)
COLOURS = ("#27406e", "#7a2f2a", "#2d6a4f", "#6b4e16", "#4a306d", "#1d5e6b", "#6b1d4a")


def picture(text: str, colour: str, wide: bool = False) -> bytes:
    image = Image.new("RGB", (1200 if wide else 600, 900), colour)
    draw = ImageDraw.Draw(image)
    draw.rectangle((12, 12, image.width - 12, image.height - 12), outline="white", width=6)
    draw.text((40, 40), text, fill="white", font_size=72)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


class Pictured(Catalog):
    """The catalog, its pages pictures under ``/_/<slug>/pages/<manga>/<chapter>/<n>``."""

    def routes(self) -> Sequence[BaseRoute]:
        return [
            Route("/pages/{manga}/{chapter}/{n:int}", self.page, methods=["GET"], name="page"),
            public(Route("/icon", self.icon, methods=["GET"], name="icon")),
        ]

    def configuration(self) -> SourceConfiguration:
        config = super().configuration()
        config.icon = self.url_for(None, "icon")
        config.name = f"Catalog {self.slug}"
        return config

    async def pages(self, manga_slug: str, chapter_slug: str, ctx: RequestContext) -> list[str]:
        await super().pages(manga_slug, chapter_slug, ctx)  # an unknown chapter is not found
        return [
            self.url_for(ctx, "page", manga=manga_slug, chapter=chapter_slug, n=n)
            for n in range(1, PAGES + 1)
        ]

    async def page(self, request: Request) -> Response:
        chapter, n = request.path_params["chapter"], request.path_params["n"]
        if (chapter, n) == DAMAGED:
            error = {"code": "UPSTREAM_ERROR", "message": f"Page {n} cannot be decoded."}
            return JSONResponse({"error": error}, status_code=502)
        colour = COLOURS[(n - 1) % len(COLOURS)]
        body = picture(f"{chapter} page {n}", colour, wide=(chapter, n) == WIDE)
        return Response(body, media_type="image/png", headers={"Cache-Control": "max-age=60"})

    async def icon(self, request: Request) -> Response:
        return Response(picture("", "#8b3a3a"), media_type="image/png")
