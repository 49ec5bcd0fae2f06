"""The reader's routes: the page shell, its hashed assets, and the reader's session and place.

Exact paths rather than a mount on ``/_``, so every other face and source
route under the host's namespace keeps working whatever order they are listed in.
"""

import json

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from toshokan.core import host_path
from toshokan.core.cache_control import IMMUTABLE, REVALIDATE
from toshokan.core.hashing import etag_of
from toshokan.errors import NotFound
from toshokan.faces.web.assets import MODULES, STATIC, Assets
from toshokan.faces.web.progress import positions, recent, record
from toshokan.faces.web.session import sign_in, sign_out, who

READER_PATH = host_path("")
READER_RAW = READER_PATH.encode()
ASSETS_PATH = host_path("assets")
#: The reader's own JSON endpoints (session, progress), apart from the spec's interface.
API_PATH = host_path("web")


def _shell(assets: Assets) -> str:
    """The page, naming each asset by its hashed name. The modules import each other by their
    plain names (``./api.js``), which the page's import map turns into the hashed ones, so a
    module that changes is fetched afresh and the others stay cached; a view's module is
    fetched when the view is first opened."""
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    for logical in assets.by_logical:
        html = html.replace(f"{{{{{logical}}}}}", host_path("assets", assets.hashed(logical)))
    hashed = {host_path("assets", m): host_path("assets", assets.hashed(m)) for m in MODULES}
    imports = json.dumps({"imports": hashed}, indent=None)
    return html.replace("{{modules}}", f'<script type="importmap">{imports}</script>\n')


def _accepts_gzip(request: Request) -> bool:
    return "gzip" in request.headers.get("accept-encoding", "").lower()


def web_routes() -> list[BaseRoute]:
    assets = Assets()
    shell = _shell(assets)
    shell_etag = etag_of(shell.encode())

    async def page(request: Request) -> Response:
        if request.scope.get("raw_path", READER_RAW) != READER_RAW:
            # "/_%2F" decodes to this path too, yet names something else: not the reader.
            raise NotFound(f"Nothing is at {request.url.path[:200]}.")
        headers = {"Cache-Control": REVALIDATE, "ETag": shell_etag}
        if request.headers.get("if-none-match") == shell_etag:
            return Response(status_code=304, headers=headers)
        return HTMLResponse(shell, headers=headers)

    async def asset(request: Request) -> Response:
        found = assets.get(request.path_params["name"])
        if found is None:
            raise NotFound(f"Nothing is at {request.url.path[:200]}.")
        headers = {"Cache-Control": IMMUTABLE, "Vary": "Accept-Encoding"}
        body = found.body
        if _accepts_gzip(request):
            body, headers["Content-Encoding"] = found.gzipped, "gzip"
        return Response(body, media_type=found.media_type, headers=headers)

    return [
        Route(READER_PATH, page, methods=["GET"], name="reader"),
        Route(ASSETS_PATH + "/{name}", asset, methods=["GET"], name="reader-asset"),
        Route(API_PATH + "/session", who, methods=["GET"]),
        Route(API_PATH + "/session", sign_in, methods=["POST"]),
        Route(API_PATH + "/session", sign_out, methods=["DELETE"]),
        Route(API_PATH + "/progress/recent", recent, methods=["GET"]),
        Route(API_PATH + "/progress/{source}/{manga}", positions, methods=["GET"]),
        Route(API_PATH + "/progress/{source}/{manga}/{chapter}", record, methods=["PUT"]),
    ]
