"""KOReader's progress sync at ``/_/kosync``, answering as koreader-sync-server answers.

A KOReader user types ``https://host/_/kosync`` as the custom sync server.
KOReader names a book by the partial MD5 of its file; when that is a chapter
the host holds (a library's archive or PDF, or the same bytes downloaded from
the OPDS catalogue), its page number is the store's page of that chapter, so
KOReader moves the position every face shows, and sees theirs. Any other book
is kept under KOReader's id, per reader, as the official server keeps it.

With no readers, the host is open: any name and key is the one implicit reader.
"""

import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from toshokan.core import Core, host_path
from toshokan.core.cache_control import NO_STORE_HEADERS
from toshokan.core.http import client_of, entry_of
from toshokan.core.progress import DocumentPosition, Position
from toshokan.core.progress.documents import chapter_of_document
from toshokan.core.readers import AccountError, ReaderExists
from toshokan.errors import InvalidCredentials, RateLimited
from toshokan.faces.kosync.protocol import (
    MAX_DOCUMENT,
    MAX_KEY,
    MAX_NAME,
    KosyncError,
    check_accept,
    document_missing,
    invalid_fields,
    is_valid_field,
    is_valid_key_field,
    parse_body,
    progress_update,
    registration_disabled,
    unauthorized,
    user_exists,
)

PREFIX = host_path("kosync")
Handler = Callable[[Request, Core], Awaitable[tuple[int, dict[str, Any]]]]


def kosync_endpoint(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Gin's Accept check first, then the handler; every refusal in KOReader's shape."""

    async def endpoint(request: Request) -> Response:
        headers = dict(NO_STORE_HEADERS)
        try:
            check_accept(request.headers.get("accept"))
            status, body = await handler(request, entry_of(request).core)
        except KosyncError as refused:
            status, body = refused.status, {"code": refused.code, "message": refused.message}
            headers.update(refused.headers)
        return JSONResponse(body, status_code=status, headers=headers)

    return endpoint


async def reader_of(request: Request, core: Core) -> str:
    """The reader KOReader's ``x-auth-user`` and ``x-auth-key`` name; 2001 unless they are one."""
    name = request.headers.get("x-auth-user", "")
    key = request.headers.get("x-auth-key", "")
    if not (is_valid_key_field(name, MAX_NAME) and is_valid_field(key, MAX_KEY)):
        name, key = "", ""  # never a reader: refused (and counted) unless the host is open
    try:
        return await core.readers.koreader(name, key, client_of(request))
    except InvalidCredentials:
        raise unauthorized() from None
    except RateLimited as limited:
        wait = str(max(1, round(limited.retry_after or 60)))
        raise KosyncError(429, 2001, limited.message, {"Retry-After": wait}) from None


async def create_user(request: Request, core: Core) -> tuple[int, dict[str, Any]]:
    body = parse_body(await request.body())
    if not core.settings.readers.registration:
        raise registration_disabled()
    username, password = body.get("username"), body.get("password")
    if not (is_valid_key_field(username, MAX_NAME) and is_valid_field(password, MAX_KEY)):
        raise invalid_fields()
    try:
        await core.readers.register_koreader(str(username), str(password))
    except ReaderExists:
        raise user_exists() from None
    except AccountError as error:
        raise invalid_fields(str(error)) from None
    return 201, {"username": username}


async def auth_user(request: Request, core: Core) -> tuple[int, dict[str, Any]]:
    await reader_of(request, core)
    return 200, {"authorized": "OK"}


async def update_progress(request: Request, core: Core) -> tuple[int, dict[str, Any]]:
    body = parse_body(await request.body())
    reader = await reader_of(request, core)
    update = progress_update(body)
    now = time.time()
    found = await chapter_of_document(core.sources, update.document)
    page = _page(update.progress, found[1]) if found is not None else None
    if found is not None and page is not None:
        ref, pages = found
        position = Position(page, pages, page + 1 >= pages, now, update.device_id, update.device)
        await core.progress.arecord(reader, ref, position)
    else:
        kept = DocumentPosition(
            update.progress, update.percentage, now, update.device_id, update.device
        )
        await core.progress.arecord_document(reader, update.document, kept)
    return 200, {"document": update.document, "timestamp": int(now)}


async def get_progress(request: Request, core: Core) -> tuple[int, dict[str, Any]]:
    reader = await reader_of(request, core)
    document: str = request.path_params["document"]
    if not is_valid_key_field(document, MAX_DOCUMENT):
        raise document_missing()
    found = await chapter_of_document(core.sources, document)
    kept = await core.progress.adocument(reader, document)
    chapter = await core.progress.aposition(reader, found[0]) if found is not None else None
    if chapter is not None and (kept is None or chapter.updated >= kept.updated):
        return 200, _shown(document, chapter_progress(chapter), chapter)
    if kept is not None:
        return 200, _shown(document, (kept.progress, kept.percentage), kept)
    return 200, {}


def chapter_progress(position: Position) -> tuple[str, float]:
    """A chapter's position as KOReader's for a paged document: its page number (from 1, where
    the store counts from 0), and the share read."""
    shown = position.page + 1
    return str(shown), round(shown / max(position.pages, 1), 4)


def _page(progress: str, pages: int) -> int | None:
    """The store's page (from 0) of KOReader's progress in a paged document, its page number."""
    if not (progress.isascii() and progress.isdigit() and len(progress) <= len(str(pages))):
        return None
    page = int(progress)
    return page - 1 if 1 <= page <= pages else None


def _shown(
    document: str, progress: tuple[str, float], kept: Position | DocumentPosition
) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "document": document,
        "progress": progress[0],
        "percentage": progress[1],
        "device": kept.device,
        "timestamp": int(kept.updated),
    }
    if kept.device_id:
        shown["device_id"] = kept.device_id
    return shown


async def healthcheck(request: Request, core: Core) -> tuple[int, dict[str, Any]]:
    return 200, {"state": "OK"}


def kosync_routes() -> list[BaseRoute]:
    def route(path: str, handler: Handler, method: str) -> Route:
        return Route(f"{PREFIX}{path}", kosync_endpoint(handler), methods=[method])

    return [
        route("/users/create", create_user, "POST"),
        route("/users/auth", auth_user, "GET"),
        route("/syncs/progress", update_progress, "PUT"),
        route("/syncs/progress/{document}", get_progress, "GET"),
        route("/healthcheck", healthcheck, "GET"),
    ]
