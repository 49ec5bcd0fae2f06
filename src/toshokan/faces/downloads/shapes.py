"""The downloads API's bodies: what a client sends (bounded, strict) and what it is answered."""

import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from toshokan.core.downloads import Download, Keep, Listing, QueueState

Action = Literal["hold", "release", "retry", "cancel", "top", "up", "down", "bottom"]


class Steer(BaseModel):
    """What to do with one download."""

    model_config = ConfigDict(extra="forbid", strict=True)
    action: Action


class Pause(BaseModel):
    """Pause (true) or resume (false) the whole queue, or (``own``) the reader's own downloads;
    unsaid, a reader's own unless they are an operator."""

    model_config = ConfigDict(extra="forbid", strict=True)
    paused: bool
    own: bool | None = None


def when(moment: float | None) -> str | None:
    if moment is None:
        return None
    return datetime.datetime.fromtimestamp(moment, datetime.UTC).isoformat().replace("+00:00", "Z")


def download_body(download: Download) -> dict[str, Any]:
    return {
        "id": download.id,
        "source": download.source,
        "manga": download.manga,
        "chapter": download.chapter,
        "seriesTitle": download.series_title,
        "title": download.title,
        "number": download.number,
        "language": download.language,
        "scanlator": download.scanlator,
        "state": download.state,
        "pages": download.pages,
        "pagesDone": download.pages_done,
        "bytes": download.bytes,
        "attempts": download.attempts,
        "nextTry": when(download.next_try) if download.state == "queued" else None,
        "reason": download.reason,
        "error": download.error,
        "path": download.path,
        "added": when(download.added),
        "finished": when(download.finished),
    }


def queue_body(state: QueueState) -> dict[str, Any]:
    return {"paused": state.paused, "message": state.message, "since": when(state.since)}


def every_series_body(keep: Keep) -> dict[str, Any]:
    """A reader's keep of every series they follow from a source, with its filters."""
    return {
        "reader": keep.reader,
        "source": keep.source,
        "languages": list(keep.languages),
        "groups": list(keep.groups),
        "onlyUnread": keep.only_unread,
        "since": when(keep.since),
    }


def listing_body(listing: Listing) -> dict[str, Any]:
    done, waiting, partly = listing.progress
    return {
        "queue": queue_body(listing.queue),
        "own": None if listing.own is None else queue_body(listing.own),
        "operator": listing.operator,
        "counts": listing.states,
        "failures": listing.failures,
        "progress": {
            "kept": done,
            "waiting": waiting,
            "share": round((done + partly) / (done + waiting), 4) if waiting else 1.0,
        },
        "everySeries": [every_series_body(k) for k in listing.every],
        "downloads": [download_body(d) for d in listing.downloads],
    }
