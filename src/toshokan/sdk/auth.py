"""Credentials per auth type, and the headers each type returns to the client."""

import base64
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from toshokan.models.auth import AUTH_FIELDS, AUTH_HEADERS, AuthType


class Credentials(BaseModel):
    """What the client sent to ``POST /:source/authenticate``, checked for its type.

    Only the fields of ``type`` are set. ``repr`` never shows secret values,
    so a credential object that reaches a log line or traceback leaks nothing.
    """

    model_config = ConfigDict(frozen=True)

    type: AuthType
    username: str | None = Field(default=None, repr=False)
    password: str | None = Field(default=None, repr=False)
    apiKey: str | None = Field(default=None, repr=False)
    token: str | None = Field(default=None, repr=False)
    cookie: str | None = Field(default=None, repr=False)

    @classmethod
    def missing_fields(cls, auth_type: AuthType, body: Mapping[str, object]) -> list[str]:
        """The fields of this type that the body lacks or leaves blank."""
        return [
            name
            for name in AUTH_FIELDS[auth_type]
            if not isinstance(body.get(name), str) or not str(body.get(name)).strip()
        ]


def headers_for(credentials: Credentials) -> dict[str, str]:
    """The headers a client sends on later requests after these credentials succeed.

    ``session`` has no fixed form (the upstream's cookies), so its adapter
    builds the headers itself.
    """
    match credentials.type:
        case AuthType.NONE:
            return {}
        case AuthType.BASIC:
            raw = f"{credentials.username}:{credentials.password}".encode()
            return {"Authorization": "Basic " + base64.b64encode(raw).decode()}
        case AuthType.API_KEY:
            return {"X-API-Key": str(credentials.apiKey)}
        case AuthType.BEARER:
            return {"Authorization": f"Bearer {credentials.token}"}
        case AuthType.COOKIE:
            return {"Cookie": str(credentials.cookie)}
    raise NotImplementedError(f"auth type {credentials.type} has no fixed header form")


def auth_headers_from(auth_type: AuthType, headers: Mapping[str, str]) -> dict[str, str]:
    """The request headers that carry credentials for ``auth_type``, and nothing else."""
    wanted = AUTH_HEADERS[auth_type]
    return {name: headers[name] for name in wanted if headers.get(name)}


def credentials_from_headers(auth_type: AuthType, headers: Mapping[str, str]) -> Credentials | None:
    """Recover credentials from forwarded auth headers (the reverse of :func:`headers_for`)."""
    sent = auth_headers_from(auth_type, headers)
    if not sent:
        return None
    value = next(iter(sent.values()))
    match auth_type:
        case AuthType.BASIC:
            scheme, _, encoded = value.partition(" ")
            if scheme.lower() != "basic":
                return None
            try:
                decoded = base64.b64decode(encoded.strip(), validate=True).decode()
            except ValueError:
                return None
            username, sep, password = decoded.partition(":")
            return (
                Credentials(type=auth_type, username=username, password=password) if sep else None
            )
        case AuthType.BEARER:
            scheme, _, token = value.partition(" ")
            ok = scheme.lower() == "bearer" and token
            return Credentials(type=auth_type, token=token) if ok else None
        case AuthType.API_KEY:
            return Credentials(type=auth_type, apiKey=value)
        case AuthType.COOKIE | AuthType.SESSION:
            return Credentials(type=auth_type, cookie=value)
    return None
