"""The signed-in reader's place, kept by the host: so a chapter left on a phone opens on a laptop
at the same page.

Three small endpoints of the web face over the core's progress store: the
positions in one manga's chapters, an explicit write of one chapter's position,
and the reader's recently read chapters ("continue reading"). Pages count
from 0, as in the store; the page shows them from 1.
"""

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Core
from toshokan.core.bodies import read_json
from toshokan.core.progress import MAX_DEVICE, ChapterRef, Position
from toshokan.errors import InvalidRequest
from toshokan.faces.web.session import answer, invalid_body, reader_of

#: More pages than any chapter has; a larger count is no chapter's.
MAX_PAGES = 100_000
#: Slugs are far shorter; a longer one names nothing a source serves.
MAX_SLUG = 256
#: How many recently read chapters "continue reading" offers at most.
RECENT_MAX = 50
RECENT_DEFAULT = 12


class Write(BaseModel):
    """A position the reader moved to, with the browser's clock (Unix seconds) as its time."""

    model_config = ConfigDict(extra="forbid", strict=True)
    page: int = Field(ge=0, lt=MAX_PAGES)
    pages: int = Field(ge=1, le=MAX_PAGES)
    finished: bool = False
    updated: float = Field(ge=0, allow_inf_nan=False)
    device: str = Field(default="", max_length=MAX_DEVICE)

    @model_validator(mode="after")
    def _page_in_chapter(self) -> "Write":
        if self.page >= self.pages:
            raise ValueError("page counts from 0 and is less than pages")
        return self


def shown(position: Position) -> dict[str, Any]:
    return {
        "page": position.page,
        "pages": position.pages,
        "finished": position.finished,
        "updated": position.updated,
    }


def slugs(request: Request, core: Core, *names: str) -> list[str]:
    """The path's slugs, bounded; the source must be one the host serves (else 404)."""
    found = [str(request.path_params[name]) for name in names]
    if any(len(slug) > MAX_SLUG for slug in found):
        raise InvalidRequest(f"A slug is at most {MAX_SLUG} characters.")
    core.source(found[0])
    return found


async def positions(request: Request) -> Response:
    """The reader's position in each chapter of one manga they opened, by chapter slug."""
    core, reader = await reader_of(request)
    source, manga = slugs(request, core, "source", "manga")
    found = await core.progress.apositions(reader, source, manga)
    return answer({"chapters": {chapter: shown(at) for chapter, at in found.items()}})


async def record(request: Request) -> Response:
    """Store the position unless a newer one is stored; the stored one either way."""
    core, reader = await reader_of(request)
    source, manga, chapter = slugs(request, core, "source", "manga", "chapter")
    try:
        write = Write.model_validate(await read_json(request))
    except ValidationError as error:
        raise invalid_body(error) from None
    # A browser whose clock runs ahead would otherwise hold the position against every later
    # write from a device with the right time: no write is newer than the host's now.
    updated = min(write.updated, time.time())
    device = write.device or "web reader"
    position = Position(write.page, write.pages, write.finished, updated, "", device)
    store = core.progress
    ref = ChapterRef(source, manga, chapter)
    stored = await store.arecord(reader, ref, position)
    kept = await store.aposition(reader, ref)
    assert kept is not None  # just written, or a newer one was there
    return answer({"stored": stored, "position": shown(kept)})


async def recent(request: Request) -> Response:
    """The reader's most recently read chapters, newest first."""
    core, reader = await reader_of(request)
    raw = request.query_params.get("limit", str(RECENT_DEFAULT))
    if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= RECENT_MAX):
        raise InvalidRequest(f"limit is a whole number from 1 to {RECENT_MAX}.")
    found = await core.progress.arecent(reader, int(raw))
    return answer(
        {
            "chapters": [
                {"source": ref.source, "manga": ref.manga, "chapter": ref.chapter, **shown(at)}
                for ref, at in found
            ]
        }
    )
