"""Building the Error object responses every failure path shares, and the authenticate
endpoint's failure form."""

from starlette.responses import JSONResponse

from toshokan.core.cache_control import NO_STORE_HEADERS
from toshokan.errors import HostError, error_body


def error_response(
    code: str,
    message: str,
    status: int,
    headers: dict[str, str] | None = None,
    *,
    auth_form: bool = False,
) -> JSONResponse:
    return JSONResponse(
        error_body(code, message, auth_form=auth_form),
        status_code=status,
        headers={**NO_STORE_HEADERS, **(headers or {})},
    )


def host_error_response(error: HostError, *, auth_form: bool = False) -> JSONResponse:
    return error_response(
        error.code, error.message, error.status, error.headers, auth_form=auth_form
    )
