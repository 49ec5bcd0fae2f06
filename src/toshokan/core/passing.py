"""How a face's callers' credentials reach a source: each face's way, declared as data.

Readers' apps send what they can, not what each source expects. The spec's
interface and Alethia send a source's own headers (:class:`AsSent`); OPDS
readers can send only HTTP Basic, whose pair stands for the source's own
sign-in (:class:`BasicAsSource`); Komga's apps send the host's readers'
credentials, which a source locked with its own account must not receive
unless it asks for Basic (:class:`ReadersOnly`). A face names its way when it
enters a source (:meth:`toshokan.core.Core.visit`), and the core passes the
caller on that way once, before the visit decides anything: one visit per
request, the mapping in one place.
"""

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import cookie_parser

from toshokan.core.answers import Caller
from toshokan.core.cache import ResultCache
from toshokan.core.credentials import SECRET_FIELDS, basic_credentials, secret_headers
from toshokan.core.readers import SESSION_COOKIE
from toshokan.core.signing import credential_key
from toshokan.models import AuthType, SourceConfiguration
from toshokan.models.auth import AUTH_HEADERS
from toshokan.sdk.context import HostServices

#: Headers that carry a reader's credentials to the host (never a source's, unless it asks).
READER_HEADERS = frozenset({"authorization", "x-api-key", "cookie"})


@dataclass(frozen=True)
class AsSent:
    """The caller's headers go to the source as they came: they are the source's own."""


@dataclass(frozen=True)
class BasicAsSource:
    """A reader's Basic pair stands for the source's own credentials: ``basic`` as it is; the
    password as the key, token or cookie of ``api_key``, ``bearer`` and ``cookie``; for
    ``session``, the pair exchanged through the source's sign-in for its cookies, remembered
    under the cache kind ``sessions`` for ``seconds`` (and, with ``[cluster] redis``, in the
    host's shared secrets, encrypted with its secret, so another process reuses them)."""

    sessions: str
    seconds: int


@dataclass(frozen=True)
class ReadersOnly:
    """The host's readers' credentials, checked by the core for a source that accepts the
    host's readers (the face's own session cookie ``session_cookie`` presented as the host's);
    withheld from any other source, but for the Basic header of a source locked with
    ``basic``, which opens when that account is the one the reader typed."""

    session_cookie: str


Passing = AsSent | BasicAsSource | ReadersOnly
#: The spec's way, and every face's unless it says otherwise.
AS_SENT = AsSent()
#: How a source's sign-in is asked: (slug, body, caller) to the headers it returned.
SignIn = Callable[[str, Any, Caller], Awaitable[dict[str, str]]]


@dataclass(frozen=True)
class PassingParts:
    """What passing credentials on needs of the host."""

    cache: ResultCache
    services: HostServices
    sign_in: SignIn


async def passed(
    passing: Passing,
    parts: PassingParts,
    slug: str,
    accepts_readers: bool,
    config: SourceConfiguration,
    caller: Caller,
) -> Caller:
    """``caller`` as the source ``slug`` should see it, the face's way."""
    if isinstance(passing, BasicAsSource):
        return await _basic_as_source(passing, parts, slug, config, caller)
    if isinstance(passing, ReadersOnly):
        if accepts_readers:
            return _with_host_session(caller, passing.session_cookie)
        return _without_readers(caller, config)
    return caller


async def _basic_as_source(
    passing: BasicAsSource,
    parts: PassingParts,
    slug: str,
    config: SourceConfiguration,
    caller: Caller,
) -> Caller:
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
        return caller  # the core refuses it; the face answers as its readers expect
    username, password = basic
    if auth_type in SECRET_FIELDS:
        headers = secret_headers(auth_type, password)
    else:
        headers = await _session(passing, parts, slug, caller, username, password)
    kept = {k: v for k, v in caller.headers.items() if k.lower() != "authorization"}
    merged = {**kept, **{k.lower(): v for k, v in headers.items()}}
    return replace(caller, headers=Headers(headers=merged))


async def _session(
    passing: BasicAsSource,
    parts: PassingParts,
    slug: str,
    caller: Caller,
    username: str,
    password: str,
) -> dict[str, str]:
    services = parts.services
    digest = credential_key(services.secret, {"username": username, "password": password})
    name = f"{passing.sessions}:{slug}:{digest}"

    async def sign_in() -> dict[str, str]:
        shared = services.shared_secrets
        found = await shared.find(name) if shared is not None else None
        if found is not None:
            kept: dict[str, str] = json.loads(found)
            return kept
        body = {"username": username, "password": password}
        headers = await parts.sign_in(slug, body, caller)
        if shared is not None:
            await shared.keep(name, json.dumps(headers).encode(), passing.seconds)
        return headers

    return await parts.cache.get_or_compute(passing.sessions, (slug, digest), sign_in)


def _with_host_session(caller: Caller, session_cookie: str) -> Caller:
    """The face's session presented as the host's session cookie: the token is the host's
    own, under the face's name, and the core reads the host's name when it checks a reader."""
    token = cookie_parser(caller.headers.get("cookie", "")).get(session_cookie)
    if not token:
        return caller
    kept = {name: value for name, value in caller.headers.items() if name.lower() != "cookie"}
    kept["cookie"] = f"{SESSION_COOKIE}={token}"
    return replace(caller, headers=Headers(kept))


def _without_readers(caller: Caller, config: SourceConfiguration) -> Caller:
    """The caller without the reader's credentials; its Basic header only if the source wants
    it."""
    keep_basic = config.auth.required and config.auth.type is AuthType.BASIC
    kept = {
        name: value
        for name, value in caller.headers.items()
        if name.lower() not in READER_HEADERS or (keep_basic and name.lower() == "authorization")
    }
    return replace(caller, headers=Headers(kept))
