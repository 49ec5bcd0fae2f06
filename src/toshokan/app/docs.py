"""Readable API docs at ``/_/docs`` that need no internet: Swagger UI served from the package."""

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from starlette.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

from toshokan.models import AuthResponse, SearchRequest
from toshokan.models.status import ErrorResponse
from toshokan.sdk.auth import Credentials

DOCS_PATH = "/_/docs"
ASSETS_PATH = "/_/docs/assets"


def install_docs(app: FastAPI) -> None:
    app.mount(ASSETS_PATH, StaticFiles(directory=swagger_ui_path), name="docs-assets")

    @app.get(DOCS_PATH, include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title="toshokan API",
            swagger_js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_PATH}/favicon-32x32.png",
        )

    original = app.openapi

    def openapi() -> dict:
        if app.openapi_schema:
            return app.openapi_schema
        schema = original()
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in (SearchRequest, Credentials, ErrorResponse, AuthResponse):
            model_schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(model_schema.pop("$defs", {}))
            components[model.__name__] = model_schema
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
