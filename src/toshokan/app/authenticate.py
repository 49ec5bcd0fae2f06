"""``POST /:source/authenticate``: credentials in, headers for later requests out.

Failures use the spec's failure form ``{success: false, error: {code,
message}}`` with the status of the code. Failed attempts are counted per
client address and source; past the limit the answer is ``RATE_LIMITED``
before the adapter (and its upstream) is asked again.
"""

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from toshokan.app.routes import configuration_of, read_json, source_for
from toshokan.app.state import app_state
from toshokan.errors import HostError, InvalidRequest, MissingFields, RateLimited
from toshokan.models import AuthResponse, AuthType
from toshokan.models.auth import AUTH_FIELDS, AuthError
from toshokan.sdk.auth import Credentials

router = APIRouter()


def failure(error: HostError) -> JSONResponse:
    body = AuthResponse(success=False, error=AuthError(code=error.code, message=error.message))
    return JSONResponse(
        body.model_dump(exclude_none=True),
        status_code=error.status,
        headers={"Cache-Control": "no-store", **error.headers},
    )


@router.post(
    "/{source}/authenticate",
    response_model=AuthResponse,
    summary="Authenticate",
    openapi_extra={
        "requestBody": {
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/Credentials"}}
            }
        }
    },
)
async def authenticate(request: Request, source: str) -> JSONResponse:
    hosted = source_for(request, source)  # an unknown source is a plain 404 Error object
    config = await configuration_of(request, hosted)
    auth_type = config.auth.type
    try:
        body = await read_json(request)
        if auth_type is AuthType.NONE:
            return JSONResponse(
                {"success": True, "headers": {}}, headers={"Cache-Control": "no-store"}
            )
        credentials = parse_credentials(auth_type, body)
    except HostError as error:
        return failure(error)

    limiter = app_state(request).auth_attempts
    client = request.client.host if request.client else "unknown"
    attempt_key = f"{client}:{source}"
    wait = await limiter.exceeded(attempt_key)
    if wait is not None:
        return failure(
            RateLimited(f"Too many failed attempts; retry in {round(wait)} s.", retry_after=wait)
        )
    try:
        headers = await hosted.source.authenticate(credentials)
    except HostError as error:
        if not isinstance(error, RateLimited):
            await limiter.hit(attempt_key)
        return failure(error)
    return JSONResponse(
        {"success": True, "headers": headers}, headers={"Cache-Control": "no-store"}
    )


def parse_credentials(auth_type: AuthType, body: Any) -> Credentials:
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise InvalidRequest("The authentication body must be a JSON object.")
    missing = Credentials.missing_fields(auth_type, body)
    if missing:
        raise MissingFields(
            f"Missing field(s) for {auth_type.value} authentication: {', '.join(missing)}."
        )
    fields = {name: body[name] for name in AUTH_FIELDS[auth_type]}
    return Credentials(type=auth_type, **fields)
