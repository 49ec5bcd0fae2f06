"""Readable API docs at ``/_/docs`` that need no internet: Swagger UI served from the package."""

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

from toshokan.app.openapi import openapi_document

DOCS_PATH = "/_/docs"
ASSETS_PATH = "/_/docs/assets"

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>toshokan API</title>
<link rel="stylesheet" href="{assets}/swagger-ui.css">
<link rel="icon" href="{assets}/favicon-32x32.png"></head>
<body><div id="swagger-ui"></div>
<script src="{assets}/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({{url: "/openapi.json", dom_id: "#swagger-ui"}});</script>
</body></html>"""


def docs_routes() -> list[BaseRoute]:
    document = openapi_document()

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    async def page(request: Request) -> Response:
        return HTMLResponse(PAGE.format(assets=ASSETS_PATH))

    return [
        Route("/openapi.json", openapi, methods=["GET"], name="openapi"),
        Route(DOCS_PATH, page, methods=["GET"], name="docs"),
        Mount(ASSETS_PATH, StaticFiles(directory=swagger_ui_path), name="docs-assets"),
    ]
