"""Exception handlers: every failure the framework raises becomes the Error object."""

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

from toshokan.app.responses import error_response, host_error_response
from toshokan.errors import HostError

STATUS_CODES = {
    404: "NOT_FOUND",
    405: "INVALID_REQUEST",
    400: "INVALID_REQUEST",
    429: "RATE_LIMITED",
}


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(HostError)
    async def on_host_error(request: Request, error: HostError) -> Response:
        return host_error_response(error)

    @app.exception_handler(HTTPException)
    async def on_http_exception(request: Request, error: HTTPException) -> Response:
        if error.status_code == 404:
            return error_response("NOT_FOUND", f"Nothing is at {request.url.path}.", 404)
        if error.status_code == 405:
            return error_response(
                "INVALID_REQUEST",
                f"{request.method} is not allowed on {request.url.path}.",
                405,
                dict(error.headers or {}),
            )
        code = STATUS_CODES.get(
            error.status_code, "INVALID_REQUEST" if error.status_code < 500 else "INTERNAL_ERROR"
        )
        return error_response(code, str(error.detail), error.status_code)

    @app.exception_handler(RequestValidationError)
    async def on_validation_error(request: Request, error: RequestValidationError) -> Response:
        first = error.errors()[0] if error.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return error_response("INVALID_REQUEST", f"{where}: {first.get('msg')}", 400)
