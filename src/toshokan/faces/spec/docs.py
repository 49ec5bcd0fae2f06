"""Readable API docs at ``/_/docs`` that need no internet: Swagger UI 5 served from the package."""

from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from toshokan.core import host_path
from toshokan.core.cache_control import NO_STORE
from toshokan.core.http import entry_of
from toshokan.faces.spec.examples import described
from toshokan.faces.spec.openapi import openapi_document
from toshokan.faces.spec.samples import Samples
from toshokan.faces.spec.swagger_ui import DIST, VERSION

DOCS_PATH = host_path("docs")
ASSETS_PATH = host_path("docs", "assets")
#: Swagger UI's scripts, styles and icons spend the image budget, as the reader's assets do.
DOCS_ASSETS_ROUTE = r"/_/docs/assets/"
OPENAPI_PATH = "/openapi.json"

# The version in the asset URLs changes them when Swagger UI is updated, so a browser never
# mixes a cached old script with a new page.
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toshokan API</title>
<link rel="stylesheet" href="{assets}/swagger-ui.css?v={version}">
<link rel="icon" type="image/png" href="{assets}/favicon-32x32.png"></head>
<body><div id="swagger-ui" data-openapi="{openapi}"></div>
<script src="{assets}/swagger-ui-bundle.js?v={version}"></script>
<script src="{assets}/init.js?v={version}"></script>
</body></html>"""


def docs_routes() -> list[BaseRoute]:
    html = PAGE.format(assets=ASSETS_PATH, version=VERSION, openapi=OPENAPI_PATH)

    samples = Samples()

    async def openapi(request: Request) -> Response:
        entry = entry_of(request)
        core = entry.core
        sample = await samples.get(core, entry.caller.base_url)
        document = openapi_document(core.settings.limits.max_body_bytes)
        # The other faces' JSON endpoints that declare themselves (the follows API).
        faces = getattr(request.app, "faces", ())
        added = {
            path: item for face in faces if face.openapi for path, item in face.openapi().items()
        }
        document = {**document, "paths": {**document["paths"], **added}}
        # The host's own slugs and answers change with its content: asked again, not kept.
        return JSONResponse(described(document, sample), headers={"Cache-Control": NO_STORE})

    async def page(request: Request) -> Response:
        return HTMLResponse(html)

    return [
        Route(OPENAPI_PATH, openapi, methods=["GET"], name="openapi"),
        Route(DOCS_PATH, page, methods=["GET"], name="docs"),
        # Swagger UI's script is 1.7 MB as shipped and about a third of that compressed.
        Mount(ASSETS_PATH, GZipMiddleware(StaticFiles(directory=DIST)), name="docs-assets"),
    ]
