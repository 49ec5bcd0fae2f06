"""Building the Error object responses every failure path shares."""

from starlette.responses import JSONResponse

from toshokan.errors import HostError

NO_STORE = {"Cache-Control": "no-store"}


def error_response(
    code: str, message: str, status: int, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message}},
        status_code=status,
        headers={**NO_STORE, **(headers or {})},
    )


def host_error_response(error: HostError) -> JSONResponse:
    return error_response(error.code, error.message, error.status, error.headers)
