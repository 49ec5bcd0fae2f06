"""Where the reader is in a publication, in the two progression documents OPDS 2 readers use.

- OPDS Progression 1.0 (draft, ``application/opds-progression+json``): ``modified``,
  ``device {id, name}``, ``progression`` from 0 to 1 and ``references`` such as
  ``#page=17`` (PDF's fragment, pages from 1); comic readers (comiccatcher) add
  ``position``, the page from 1. ``GET`` answers the document, or 200 with an
  empty payload when there is none, as the draft allows; ``PUT`` answers 201
  (created) or 200 (updated) with the stored document, and 409 when its
  ``modified`` is older than the stored position's.
- The Readium progression Komga serves (rel ``http://www.cantook.com/api/progression``,
  ``application/vnd.readium.progression+json``): ``{modified, device, locator}``
  where the locator's ``locations.position`` is the page, from 1. As Komga does,
  ``GET`` answers 204 when there is none and ``PUT`` answers 204, 409 when stale,
  400 for a position outside the chapter.

Both move the one position every face shows (pages from 0 in the store), with
the client's time, so the newest write wins whichever face made it. What a
client sent comes back as it sent it: its device id, its page, and its share of
the chapter (``progression``, ``totalProgression``), since clients turn a share
into a page each their own way (``idx / (count - 1)`` one way, ``int(share *
count)`` back). A share the host computes for a place another face recorded
sits a hundredth of a page into it, so that both ``floor`` and ``round`` of
``share * count`` give the page back (a bare ``page / count`` can fall just short
of it in floating point); a finished chapter is 1. Refusals are problem details
(RFC 9457, ``application/problem+json``), as the OPDS drafts use.
"""

import json
import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request
from starlette.responses import Response

from toshokan.core.cache_control import NO_STORE_HEADERS
from toshokan.core.progress import ChapterRef, Position
from toshokan.faces.opds.context import CatalogueVisit

OPDS_PROGRESSION = "application/opds-progression+json"
REL_PROGRESSION = "http://opds-spec.org/progression"
READIUM_PROGRESSION = "application/vnd.readium.progression+json"
REL_CANTOOK_PROGRESSION = "http://www.cantook.com/api/progression"
PROBLEM = "application/problem+json"
#: A progression document is a few hundred bytes; anything far larger is not one.
MAX_BODY = 16 * 1024
MAX_TEXT = 256
PAGE_REFERENCE = re.compile(r"#page=(\d{1,6})$")
Body = TypeVar("Body", bound=BaseModel)


class Device(BaseModel):
    id: str = Field(min_length=1, max_length=MAX_TEXT)
    name: str = Field(min_length=1, max_length=MAX_TEXT)


class Progression(BaseModel):
    """An OPDS Progression 1.0 document."""

    model_config = ConfigDict(extra="ignore")
    modified: AwareDatetime
    device: Device
    progression: float = Field(ge=0, le=1, allow_inf_nan=False)
    #: The page, from 1 (comiccatcher's addition to the draft).
    position: int | None = Field(None, ge=1)
    references: list[str] = Field(default_factory=list, max_length=16)


class Locations(BaseModel):
    position: int | None = Field(None, ge=1)
    progression: float | None = Field(None, ge=0, le=1, allow_inf_nan=False)
    totalProgression: float | None = Field(None, ge=0, le=1, allow_inf_nan=False)


class Locator(BaseModel):
    href: str = Field(max_length=2048)
    type: str = Field(max_length=MAX_TEXT)
    locations: Locations | None = None


class ReadiumProgression(BaseModel):
    """A Readium progression: a Locator, with when and where it was reached."""

    model_config = ConfigDict(extra="ignore")
    modified: AwareDatetime
    device: Device
    locator: Locator


class Problem(Exception):
    def __init__(self, status: int, title: str, detail: str):
        super().__init__(detail)
        self.status, self.title, self.detail = status, title, detail

    def response(self) -> Response:
        body = {"type": "about:blank", "title": self.title, "status": self.status}
        body["detail"] = self.detail
        return Response(json.dumps(body), self.status, headers=NO_STORE_HEADERS, media_type=PROBLEM)


def progression_links(
    visit: CatalogueVisit, manga_slug: str, chapter_slug: str
) -> list[dict[str, Any]]:
    """The links to both documents of a chapter's publication."""
    chapter = ("series", manga_slug, chapter_slug)
    return [
        {
            "href": visit.v2_url(*chapter, "progression"),
            "type": OPDS_PROGRESSION,
            "rel": REL_PROGRESSION,
        },
        {
            "href": visit.v2_url(*chapter, "readium-progression"),
            "type": READIUM_PROGRESSION,
            "rel": REL_CANTOOK_PROGRESSION,
        },
    ]


def _modified(updated: float) -> str:
    """RFC 3339 to the millisecond, rounded up: a client that sends back what it read is not
    older than the stored position."""
    moment = datetime.fromtimestamp(math.ceil(updated * 1000) / 1000, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _device(position: Position) -> dict[str, str]:
    """The device that wrote the place, as it named itself; a place recorded by a face whose
    protocol names no device id (page streaming, the web reader) gets a URI of the host's."""
    device_id = position.device_id or "urn:toshokan:device:unknown"
    return {"id": device_id, "name": position.device or "Unknown device"}


#: How far into its page a computed share places the reader, in pages.
INTO_PAGE = 0.01


def share(position: Position) -> float:
    """The share of the chapter read: the client's own when it sent one, else one that
    ``floor`` and ``round`` of ``share * count`` both turn back into the page (1 when finished)."""
    if position.progression is not None:
        return position.progression
    if position.finished:
        return 1.0
    return min(1.0, (position.page + INTO_PAGE) / max(position.pages, 1))


def opds_document(position: Position) -> dict[str, Any]:
    shown = position.page + 1
    return {
        "modified": _modified(position.updated),
        "device": _device(position),
        "progression": share(position),
        "position": shown,
        "references": [f"#page={shown}"],
    }


def readium_document(visit: CatalogueVisit, ref: ChapterRef, position: Position) -> dict[str, Any]:
    return {
        "modified": _modified(position.updated),
        "device": _device(position),
        "locator": {
            "href": visit.url("series", ref.manga, ref.chapter, "pages", str(position.page)),
            "type": "image/jpeg",
            "locations": {
                "position": position.page + 1,
                # Within the page, an image: its start.
                "progression": 0.0,
                "totalProgression": share(position),
            },
        },
    }


def _json(document: dict[str, Any], media_type: str, status: int = 200) -> Response:
    return Response(json.dumps(document), status, headers=NO_STORE_HEADERS, media_type=media_type)


async def _body(request: Request, model: type[Body]) -> Body:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise Problem(413, "Too large", f"A progression document is at most {MAX_BODY} bytes.")
    try:
        return model.model_validate_json(raw)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        raise Problem(400, "Not a progression document", f"{where}: {first['msg']}") from None


def _chapter(request: Request, visit: CatalogueVisit) -> ChapterRef:
    params = request.path_params
    return ChapterRef(visit.slug, params["manga"], params["chapter"])


async def _pages(visit: CatalogueVisit, ref: ChapterRef) -> int:
    urls = await visit.source_visit.page_list(ref.manga, ref.chapter)
    if not urls:
        raise Problem(409, "No pages", "This chapter has no pages to be in.")
    return len(urls)


@dataclass(frozen=True)
class _Form:
    """What differs between the two documents; the ``GET``/``PUT`` around them is one."""

    body: type[BaseModel]
    #: The ``GET`` answer when the reader has no position in the chapter.
    missing: Callable[[], Response]
    #: The ``GET`` answer for a stored position.
    document: Callable[[CatalogueVisit, ChapterRef, Position], Response]
    #: The position a sent document names, in a chapter of so many pages (or :class:`Problem`).
    position: Callable[[Any, int], Position]
    #: The ``PUT`` answer, given the position now stored.
    stored: Callable[[CatalogueVisit, ChapterRef, Position], Response]


def _endpoint(form: _Form) -> Callable[[Request, CatalogueVisit], Awaitable[Response]]:
    async def endpoint(request: Request, visit: CatalogueVisit) -> Response:
        try:
            ref = _chapter(request, visit)
            if request.method == "GET":
                position = await visit.core.progress.aposition(visit.reader, ref)
                return form.missing() if position is None else form.document(visit, ref, position)
            sent = await _body(request, form.body)
            moved = form.position(sent, await _pages(visit, ref))
            return await _store(visit, ref, moved, form.stored)
        except Problem as problem:
            return problem.response()

    return endpoint


def _opds_position(sent: Progression, pages: int) -> Position:
    """The page a reference names, else the page ``position`` names, else the share's page."""
    page = _referenced_page(sent.references, pages)
    if page is None and sent.position is not None:
        if sent.position > pages:
            raise Problem(400, "No such page", f"position is from 1 to {pages}.")
        page = sent.position - 1
    if page is None:
        page = min(pages - 1, int(sent.progression * pages))
    finished = sent.progression >= 1 or page + 1 >= pages
    return Position(
        page,
        pages,
        finished,
        sent.modified.timestamp(),
        sent.device.id,
        sent.device.name,
        sent.progression,
    )


def _readium_position(sent: ReadiumProgression, pages: int) -> Position:
    locations = sent.locator.locations
    shown = locations.position if locations else None
    if shown is None or not 1 <= shown <= pages:
        raise Problem(400, "No such page", f"locator.locations.position is from 1 to {pages}.")
    updated = sent.modified.timestamp()
    kept = locations.totalProgression if locations else None
    return Position(
        shown - 1, pages, shown == pages, updated, sent.device.id, sent.device.name, kept
    )


def _opds_answer(visit: CatalogueVisit, ref: ChapterRef, position: Position) -> Response:
    return _json(opds_document(position), OPDS_PROGRESSION)


def _no_content(*_: Any) -> Response:
    return Response(status_code=204, headers=NO_STORE_HEADERS)


#: ``GET``/``PUT`` the OPDS Progression 1.0 document of a chapter.
opds_progression = _endpoint(
    _Form(
        body=Progression,
        missing=lambda: Response(b"", headers=NO_STORE_HEADERS),
        document=_opds_answer,
        position=_opds_position,
        stored=_opds_answer,
    )
)

#: ``GET``/``PUT`` the Readium progression of a chapter, as Komga answers them.
readium_progression = _endpoint(
    _Form(
        body=ReadiumProgression,
        missing=_no_content,
        document=lambda visit, ref, position: _json(
            readium_document(visit, ref, position), READIUM_PROGRESSION
        ),
        position=_readium_position,
        stored=_no_content,
    )
)


async def _store(
    visit: CatalogueVisit,
    ref: ChapterRef,
    moved: Position,
    answer: Callable[[CatalogueVisit, ChapterRef, Position], Response],
) -> Response:
    """Record ``moved`` unless a newer position is stored (409); ``answer`` the stored one."""
    before = await visit.core.progress.aposition(visit.reader, ref)
    if not await visit.core.progress.arecord(visit.reader, ref, moved):
        raise Problem(409, "Stale progression", "A newer position is stored for this chapter.")
    kept = await visit.core.progress.aposition(visit.reader, ref)
    assert kept is not None  # just stored
    response = answer(visit, ref, kept)
    if before is None and response.status_code == 200:
        response.status_code = 201
    return response


def _referenced_page(references: list[str], pages: int) -> int | None:
    """The page (from 0) a ``#page=N`` reference names; a page outside the chapter is refused."""
    for reference in references:
        match = PAGE_REFERENCE.search(reference)
        if match is not None:
            shown = int(match.group(1))
            if not 1 <= shown <= pages:
                raise Problem(400, "No such page", f"#page= is from 1 to {pages}.")
            return shown - 1
    return None
