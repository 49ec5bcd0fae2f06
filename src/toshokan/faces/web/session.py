"""Who is reading in this browser: signing in and out, and the reader a request's cookie names.

With no readers the host is open and the web reader keeps one implicit
reader's place, with no sign-in. With readers, the browser signs in once with
a name and a password or API key (checked by the core, which counts failures
against the attempt budget and answers 429 past it); the host then sets a
session cookie (HttpOnly, so no script reads it; SameSite=Lax, so no other
site's form or script sends it along with a write) holding a signed token that
names the reader, never the password. When sources accept the host's readers
(``auth = "readers"``), it is sent to the host's whole address, so the page's
requests to the JSON interface carry it too and open them; the session's
answer lists them as ``opens``.
"""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from toshokan.core import Core, host_path
from toshokan.core.bodies import read_json
from toshokan.core.cache_control import NO_STORE
from toshokan.core.http import entry_of
from toshokan.core.progress import IMPLICIT_READER
from toshokan.core.readers import SESSION_COOKIE, Sessions
from toshokan.errors import InvalidCredentials, InvalidRequest

#: Longer than any reader's name or API key; a longer body is no sign-in.
MAX_NAME = 64
MAX_SECRET = 4096


class SignIn(BaseModel):
    """A sign-in: the reader's name and their password or one of their API keys."""

    model_config = ConfigDict(extra="forbid", strict=True)
    name: str = Field(min_length=1, max_length=MAX_NAME)
    secret: str = Field(min_length=1, max_length=MAX_SECRET)


def invalid_body(error: ValidationError) -> InvalidRequest:
    """The first problem of a body, in words, as a 400."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the body"
    return InvalidRequest(f"Invalid request body at {where}: {first['msg']}.")


def answer(body: dict[str, Any], status: int = 200) -> JSONResponse:
    """A JSON answer about one reader: never stored by a cache, shared or not."""
    return JSONResponse(body, status_code=status, headers={"Cache-Control": NO_STORE})


async def has_readers(core: Core) -> bool:
    return await core.readers.any_readers()


async def signed_in(request: Request, core: Core) -> str | None:
    """The reader this browser's session names, if it is genuine and they still exist."""
    token = request.cookies.get(SESSION_COOKIE)
    return None if not token else await Sessions(core.readers).reader(token)


async def reader_of(request: Request) -> tuple[Core, str]:
    """The core, and the reader whose place a request reads or moves: the session's, or with no
    readers on the host the implicit reader's; 401 when the host has readers and the browser
    no session."""
    core = entry_of(request).core
    reader = await signed_in(request, core)
    if reader is not None:
        return core, reader
    if not await has_readers(core):
        return core, IMPLICIT_READER
    raise InvalidCredentials("Sign in to keep your place in what you read.")


def cookie_paths(request: Request) -> tuple[str, str]:
    """Where the session cookie may live, as the browser reached the host: its root, and its
    own namespace (``/_/``, behind a proxy's path prefix too)."""
    urls = entry_of(request).urls
    return urls.local_path("/"), urls.local_path(host_path(""))


def cookie_path(request: Request, core: Core) -> str:
    """Where the session is sent: to every face under ``/_/``, and when some source accepts
    the host's readers, to the JSON interface too, where it opens them (the page's content
    requests go there). Only then: a request with a cookie is never answered from the edge's
    replayed answers, which the page's requests to open sources otherwise are."""
    root, namespace = cookie_paths(request)
    return root if any(h.accepts_readers for h in core.sources.serving()) else namespace


def session_answer(core: Core, readers: bool, reader: str | None) -> Response:
    """Who reads here, and the sources a signed-in reader opens with the session alone."""
    opens = [hosted.slug for hosted in core.sources.serving() if hosted.accepts_readers]
    return answer({"readers": readers, "reader": reader, "opens": opens})


async def who(request: Request) -> Response:
    """Whether the host has readers, and who is signed in here (null for no one)."""
    core = entry_of(request).core
    readers = await has_readers(core)
    reader = await signed_in(request, core) if readers else IMPLICIT_READER
    return session_answer(core, readers, reader)


async def sign_in(request: Request) -> Response:
    entry = entry_of(request)
    core = entry.core
    try:
        credentials = SignIn.model_validate(await read_json(request))
    except ValidationError as error:
        raise invalid_body(error) from None
    reader = await core.readers.basic(credentials.name, credentials.secret, entry.caller.client)
    response = session_answer(core, reader != IMPLICIT_READER, reader)
    if reader != IMPLICIT_READER:
        sessions = Sessions(core.readers)
        response.set_cookie(
            SESSION_COOKIE,
            sessions.issue(reader),
            max_age=sessions.seconds,
            path=cookie_path(request, core),
            secure=request.url.scheme == "https",
            httponly=True,
            samesite="lax",
        )
    return response


async def sign_out(request: Request) -> Response:
    core = entry_of(request).core
    response = session_answer(core, await has_readers(core), None)
    for path in cookie_paths(request):
        response.delete_cookie(
            SESSION_COOKIE,
            path=path,
            secure=request.url.scheme == "https",
            httponly=True,
            samesite="lax",
        )
    return response
