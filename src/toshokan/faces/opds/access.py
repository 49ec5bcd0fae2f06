"""HTTP Basic, the one authentication every OPDS reader can do, mapped onto a source's own.

Readers (Panels, Chunky, KOReader, ComicVerse...) answer a 401 carrying
``WWW-Authenticate: Basic`` by asking the user for a name and password and
sending them on every request of the catalogue, images included. This module
turns those into the headers the source's auth type expects, so the core
authorises an OPDS request exactly as it would the JSON interface's:

- ``basic``: the reader's ``Authorization: Basic`` header is already the one.
- ``api_key``, ``bearer``, ``cookie``: the password is the key, token or cookie.
- ``session``: the name and password are exchanged through the core's
  authenticate for the session's cookies, remembered briefly per credential
  in the core's cache (:data:`SESSIONS`), and with ``[cluster] redis`` in the
  host's shared secrets (encrypted with the host secret), so another process or
  replica reuses them rather than signing in again.
"""

import json
from dataclasses import replace

from starlette.datastructures import Headers

from toshokan.core import Caller, Core, Visit
from toshokan.core.cache import Kind
from toshokan.core.credentials import (
    SECRET_FIELDS,
    basic_challenge,
    basic_credentials,
    secret_headers,
)
from toshokan.core.signing import credential_key
from toshokan.errors import InvalidCredentials
from toshokan.models import AuthType, SourceConfiguration
from toshokan.models.auth import AUTH_HEADERS

#: The kind of the core's cache that keeps the session cookies readers' Basic pairs obtained.
SESSIONS = "opds-session"
#: Seconds a session's cookies are reused before the reader's name and password sign in again.
SESSION_SECONDS = 600
#: What the face keeps through the core's cache.
KEPT = {SESSIONS: Kind(ttl=SESSION_SECONDS)}


def challenge(config: SourceConfiguration, message: str | None = None) -> InvalidCredentials:
    return InvalidCredentials(
        message or f"{config.name} requires a name and password.",
        headers={"WWW-Authenticate": basic_challenge(config.name)},
    )


async def opds_caller(core: Core, visit: Visit, caller: Caller) -> Caller:
    """The caller as the core should see it for the visit's source: Basic mapped to the source's
    auth."""
    config = visit.config
    auth_type = config.auth.type
    if auth_type in (AuthType.NONE, AuthType.BASIC) or not config.auth.required:
        return caller
    if (
        any(caller.headers.get(name) for name in AUTH_HEADERS[auth_type])
        and basic_credentials(caller.headers) is None
    ):
        return caller  # a reader configured to send the source's own headers
    basic = basic_credentials(caller.headers)
    if basic is None:
        return caller  # the core refuses it; the face turns that into a Basic challenge
    username, password = basic
    if auth_type in SECRET_FIELDS:
        headers = secret_headers(auth_type, password)
    else:
        headers = await _session(core, visit, caller, username, password)
    kept = {k: v for k, v in caller.headers.items() if k.lower() != "authorization"}
    merged = {**kept, **{k.lower(): v for k, v in headers.items()}}
    return replace(caller, headers=Headers(headers=merged))


async def _session(
    core: Core, visit: Visit, caller: Caller, username: str, password: str
) -> dict[str, str]:
    digest = credential_key(core.host.services.secret, {"username": username, "password": password})
    name = f"opds-session:{visit.slug}:{digest}"

    async def sign_in() -> dict[str, str]:
        shared = core.host.services.shared_secrets
        found = await shared.find(name) if shared is not None else None
        if found is not None:
            kept: dict[str, str] = json.loads(found)
            return kept
        body = {"username": username, "password": password}
        headers = await core.authenticate(visit.slug, body, caller)
        if shared is not None:
            await shared.keep(name, json.dumps(headers).encode(), SESSION_SECONDS)
        return headers

    return await core.cache.get_or_compute(SESSIONS, (visit.slug, digest), sign_in)
