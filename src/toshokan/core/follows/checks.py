"""One check of one followed series: its lease taken, its source asked once, the result recorded.

Every check asks the upstream through :func:`upstream_work`, under the source's
host-wide budget and the host's upstream deadline, like a request; it is the one
place that marks a check's upstream work as the host's own, not a reader's.
"""

import dataclasses
import logging
import random
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from toshokan.config import HostSettings
from toshokan.core.follows.found import FoundStore, Result, Seen
from toshokan.core.follows.store import LEASE_MARGIN, FollowStore, Series
from toshokan.core.jobs import in_thread
from toshokan.errors import HostError, MangaNotFound
from toshokan.models import Chapter, Publication, SourceStatus
from toshokan.sdk.context import RequestContext
from toshokan.sdk.deadline import upstream_deadline
from toshokan.sdk.source import Listing
from toshokan.sdk.throttle import background

if TYPE_CHECKING:
    from toshokan.core.host import Host

T = TypeVar("T")
log = logging.getLogger("toshokan.follows")

#: Seconds before a failing series is checked again, doubling with each failure.
RETRY_FIRST = 60.0
#: Publications that, unchanged for long, are checked less often.
SETTLED = frozenset({Publication.COMPLETED.value, Publication.CANCELLED.value})


async def upstream_work(seconds: float, work: Callable[[], Awaitable[T]]) -> T:
    """Upstream work no reader waits for (a check), under the host's upstream deadline and
    marked as background: every reader queued for the source's budget goes first."""
    with background():
        async with upstream_deadline(seconds):
            return await work()


@dataclass(frozen=True)
class Outcome:
    """What one check did, for its caller (a command prints it; metrics count it)."""

    source: str
    manga: str
    #: ``ok``, ``gone``, ``failing``; ``busy`` (another process was checking it, or it was not
    #: due any more) and ``unserved`` (its source is not served now) asked nothing.
    state: str
    new: int = 0
    removed: int = 0
    error: str | None = None
    finished_batch: bool = False
    seconds: float = 0.0
    #: The chapters found new.
    chapters: tuple[Seen, ...] = ()


class Checker:
    def __init__(self, settings: HostSettings, host: "Host", store: FollowStore, found: FoundStore):
        self.settings = settings
        self.host = host
        self.store = store
        self.found = found

    @property
    def lease_seconds(self) -> float:
        """How long a check holds its series: its upstream deadline, and a margin to record."""
        return self.settings.server.upstream_timeout + LEASE_MARGIN

    async def check(
        self, source: str, manga: str, *, batch: str | None, scheduled: bool
    ) -> Outcome:
        """Check the series now (``scheduled``: only if it is still due), once across the host."""
        started = time.perf_counter()
        hosted = self.host.sources.get(source)
        if hosted is None or hosted.status is SourceStatus.REMOVED:
            finished = await in_thread(self.found.skip, batch)
            return Outcome(source, manga, "unserved", finished_batch=finished)
        token = uuid.uuid4().hex
        taken = await in_thread(
            self.store.take, source, manga, token, self.lease_seconds, due=scheduled
        )
        if not taken:
            finished = await in_thread(self.found.skip, batch)
            return Outcome(source, manga, "busy", finished_batch=finished)
        series = await in_thread(self.store.series, source, manga)
        ctx = RequestContext(base_url=hosted.source.services.public_url or "")
        timeout = self.settings.server.upstream_timeout
        chapters: list[Seen] = []
        try:
            listing: Listing = await upstream_work(
                timeout, lambda: hosted.source.newest_chapters(manga, ctx)
            )
        except MangaNotFound:
            result = self._result(series, source, manga, token, "gone", batch)
        except HostError as error:
            result = self._result(series, source, manga, token, "failing", batch, error.message)
        except Exception as error:  # an adapter's bug fails this check, never the schedule
            log.exception("checking %s/%s failed", source, manga)
            result = self._result(
                series, source, manga, token, "failing", batch, type(error).__name__
            )
        else:
            chapters = [_seen(chapter) for chapter in listing.chapters]
            result = self._result(series, source, manga, token, "ok", batch)
            result = dataclasses.replace(result, chapters=chapters, complete=listing.complete)
        recorded = await in_thread(self.found.record, result)
        seconds = time.perf_counter() - started
        if recorded is None:
            log.warning(
                "the check of %s/%s outlived its lease; its result was dropped", source, manga
            )
            return Outcome(source, manga, "busy", seconds=seconds)
        if recorded.new or recorded.removed:
            # What the host answered of the source (its chapter lists, cached, replayed by the
            # edge) predates what the check found: a reader opening a new chapter finds it.
            hosted.source.content_changed()
        return Outcome(
            source,
            manga,
            result.state,
            recorded.new,
            recorded.removed,
            result.error,
            recorded.finished_batch,
            seconds,
            recorded.added,
        )

    def _result(
        self,
        series: Series | None,
        source: str,
        manga: str,
        token: str,
        state: str,
        batch: str | None,
        error: str | None = None,
    ) -> Result:
        return Result(
            source,
            manga,
            token,
            state,
            self.next_check(source, series, state),
            error=None if error is None else error[:300],
            batch=batch,
        )

    def interval(self, source: str) -> float:
        section = self.settings.sources.get(source)
        own = section.follow_interval if section is not None else None
        return float(own or self.settings.follows.interval)

    def next_check(self, source: str, series: Series | None, state: str) -> float:
        """When to check again: the interval (less often for a long settled series, sooner
        for a failing one), moved at random by up to the jitter, so checks spread out."""
        follows = self.settings.follows
        now = time.time()
        wait = self.interval(source)
        if state == "failing":
            failures = series.failures if series is not None else 0
            wait = min(wait, RETRY_FIRST * 2 ** min(failures, 16))
        elif series is not None and series.publication in SETTLED:
            changed = series.last_change or 0.0
            if changed < now - follows.settled_after * 86400:
                wait *= follows.settled_factor
        return now + wait * (1 + random.uniform(-follows.jitter, follows.jitter))


def _seen(chapter: Chapter) -> Seen:
    return Seen(
        chapter.slug,
        chapter.title,
        float(chapter.number),
        chapter.language,
        chapter.scanlator,
        chapter.date.timestamp(),
        chapter.pages,
    )
