"""The follows API's bodies: what a client sends (bounded, strict) and what it is answered."""

import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from toshokan.core.downloads import Keep
from toshokan.core.downloads.service import MAX_BACKFILL, MAX_FILTERS
from toshokan.core.follows import Follow
from toshokan.core.follows.found import Update
from toshokan.core.follows.notify import MAX_SERIES, MAX_URL, Target
from toshokan.core.follows.service import MAX_MARKED

#: A slug is far shorter; a longer one names nothing a source serves.
MAX_SLUG = 256


class ChapterName(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    source: str = Field(min_length=1, max_length=MAX_SLUG)
    manga: str = Field(min_length=1, max_length=MAX_SLUG)
    chapter: str = Field(min_length=1, max_length=MAX_SLUG)


class MarkRead(BaseModel):
    """Chapters to mark read, or ``all`` of the reader's unread updates."""

    model_config = ConfigDict(extra="forbid", strict=True)
    chapters: list[ChapterName] = Field(default_factory=list, max_length=MAX_MARKED)
    all: bool = False


class CheckNow(BaseModel):
    """One followed series to check now, or (neither given) every series the reader follows."""

    model_config = ConfigDict(extra="forbid", strict=True)
    source: str | None = Field(None, min_length=1, max_length=MAX_SLUG)
    manga: str | None = Field(None, min_length=1, max_length=MAX_SLUG)


class KeepWish(BaseModel):
    """How to keep a followed series: its filters (every one optional)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    languages: list[str] = Field(default_factory=list, max_length=MAX_FILTERS)
    groups: list[str] = Field(default_factory=list, max_length=MAX_FILTERS)
    backfill: int = Field(0, ge=0, le=MAX_BACKFILL)
    onlyUnread: bool = False


class KeepEveryWish(BaseModel):
    """How to keep every series followed from a source: the filters of a series' keep, but
    no backfill."""

    model_config = ConfigDict(extra="forbid", strict=True)
    languages: list[str] = Field(default_factory=list, max_length=MAX_FILTERS)
    groups: list[str] = Field(default_factory=list, max_length=MAX_FILTERS)
    onlyUnread: bool = False


class NewTarget(BaseModel):
    """An Apprise URL, optionally for some followed series only (``source/manga`` each)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    url: str = Field(min_length=1, max_length=MAX_URL)
    series: list[str] = Field(default_factory=list, max_length=MAX_SERIES)


def when(moment: float | None) -> str | None:
    if moment is None:
        return None
    return datetime.datetime.fromtimestamp(moment, datetime.UTC).isoformat().replace("+00:00", "Z")


def follow_body(follow: Follow) -> dict[str, Any]:
    series = follow.followed.series
    return {
        "source": series.source,
        "manga": series.manga,
        "title": series.title,
        "publication": series.publication,
        "since": when(follow.followed.since),
        # new (not checked yet), ok, gone (the upstream says it no longer exists), failing
        "state": series.state,
        "served": follow.served,
        "lastCheck": when(series.last_check),
        "nextCheck": when(series.next_check),
        "error": series.error,
        "unread": follow.unread,
    }


def update_body(update: Update) -> dict[str, Any]:
    return {
        "source": update.source,
        "manga": update.manga,
        "chapter": update.chapter,
        "title": update.title,
        "number": update.number,
        "language": update.language,
        "scanlator": update.scanlator,
        "date": when(update.date),
        "found": when(update.found),
        # chapter (a new number) or version (a new group's or language's of a known number)
        "kind": update.kind,
        "removed": when(update.removed),
        "seriesTitle": update.series_title,
        "unread": update.unread,
    }


def target_body(target: Target) -> dict[str, Any]:
    return {
        "id": target.id,
        "url": target.shown,
        "series": list(target.series),
        "delivered": when(target.delivered),
        "failingSince": when(target.failing_since),
        "error": target.error,
    }


def keep_body(keep: Keep) -> dict[str, Any]:
    return {
        "source": keep.source,
        "manga": keep.manga,
        "languages": list(keep.languages),
        "groups": list(keep.groups),
        "backfill": keep.backfill,
        "onlyUnread": keep.only_unread,
        "since": when(keep.since),
    }


def every_body(keep: Keep) -> dict[str, Any]:
    return {
        "source": keep.source,
        "languages": list(keep.languages),
        "groups": list(keep.groups),
        "onlyUnread": keep.only_unread,
        "since": when(keep.since),
    }
