"""Checks of followed series: their leases taken, their source asked as little as it can be, the
results recorded.

Series of a source checked together (up to :data:`~toshokan.sdk.MARKS_AT_ONCE`)
cost one question where the source gives *marks* (:meth:`toshokan.sdk.Source.marks`):
only those whose mark moved, or not read in full for :data:`FULL_CHECK_SECONDS`,
have their chapters read; a series checked alone is read.

Every check asks the upstream through :func:`upstream_work`, under the source's
host-wide budget and the host's upstream deadline, like a request; it is the one
place that marks a check's upstream work as the host's own, not a reader's.
"""

import asyncio
import dataclasses
import logging
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
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
    from toshokan.core.hosted import HostedSource, HostedSources

T = TypeVar("T")
log = logging.getLogger("toshokan.follows")

#: Seconds before a failing series is checked again, doubling with each failure.
RETRY_FIRST = 60.0
#: A series whose mark has not moved is read in full anyway once this long after it last was
#: (chapters removed upstream, or held back until a later publication date, are seen then).
FULL_CHECK_SECONDS = 86400.0
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
    def __init__(
        self,
        settings: HostSettings,
        sources: "HostedSources",
        store: FollowStore,
        found: FoundStore,
    ):
        self.settings = settings
        self.sources = sources
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
        (outcome,) = await self.check_many(source, [manga], batch=batch, scheduled=scheduled)
        return outcome

    async def check_many(
        self,
        source: str,
        mangas: Sequence[str],
        *,
        batch: str | None,
        scheduled: bool,
        concurrency: int = 4,
    ) -> list[Outcome]:
        """Check series of one source (at most :data:`~toshokan.sdk.MARKS_AT_ONCE`), each once
        across the host: those another process holds (or, ``scheduled``, not due any more)
        are skipped. Of two or more, where the source gives marks, one question asks for
        them all, and only those whose mark moved (or not read in full for
        :data:`FULL_CHECK_SECONDS`) have their chapters read, ``concurrency`` at once."""
        hosted = self.sources.by_slug.get(source)
        if hosted is None or hosted.status is SourceStatus.REMOVED:
            finished = await in_thread(self.found.skip, batch, len(mangas))
            return _skipped(source, mangas, "unserved", finished)
        token = uuid.uuid4().hex
        taken = await in_thread(
            self.store.take_many, source, mangas, token, self.lease_seconds, due=scheduled
        )
        held = set(taken)
        skipped = [manga for manga in mangas if manga not in held]
        outcomes = []
        if skipped:
            finished = await in_thread(self.found.skip, batch, len(skipped))
            outcomes += _skipped(source, skipped, "busy", finished)
        if not taken:
            return outcomes
        ctx = RequestContext(base_url=hosted.source.services.public_url or "")
        marks: Mapping[str, str] = {}
        unmoved: list[Series] = []
        if len(taken) > 1 and hosted.source.offers_marks():
            known = await in_thread(self.store.marks, source, taken)
            try:
                marks = await upstream_work(
                    self.settings.server.upstream_timeout,
                    lambda: hosted.source.marks(taken, ctx),
                )
            except HostError as error:  # the one question failed: every series failed with it
                return outcomes + await self._failed(source, taken, token, batch, error.message)
            except Exception as error:
                log.exception("asking %s for the marks of %d series failed", source, len(taken))
                return outcomes + await self._failed(
                    source, taken, token, batch, type(error).__name__
                )
            fresh = time.time() - FULL_CHECK_SECONDS
            unmoved = [
                known[manga][0]
                for manga in taken
                if manga in known
                and known[manga][1] == marks.get(manga)
                and known[manga][2] > fresh
            ]
        outcomes += await self._unmoved(unmoved, token, batch, marks)
        gate = asyncio.Semaphore(concurrency)

        async def read(manga: str) -> Outcome:
            async with gate:
                return await self._read(hosted, ctx, source, manga, token, batch, marks.get(manga))

        checked = {series.manga for series in unmoved}
        left = [manga for manga in taken if manga not in checked]
        return outcomes + list(await asyncio.gather(*(read(manga) for manga in left)))

    async def _unmoved(
        self, unmoved: Sequence[Series], token: str, batch: str | None, marks: Mapping[str, str]
    ) -> list[Outcome]:
        """Series whose marks had not moved: checked, nothing new, in one transaction."""
        if not unmoved:
            return []
        results = [
            dataclasses.replace(
                self._result(series, series.source, series.manga, token, "ok", batch),
                mark=marks[series.manga],
                read=False,
            )
            for series in unmoved
        ]
        recorded = await in_thread(self.found.record_many, results)
        return [
            Outcome(
                r.source,
                r.manga,
                "ok" if done else "busy",
                finished_batch=done is not None and done.finished_batch,
            )
            for r, done in zip(results, recorded, strict=True)
        ]

    async def _failed(
        self, source: str, mangas: Sequence[str], token: str, batch: str | None, error: str
    ) -> list[Outcome]:
        results = []
        for manga in mangas:
            series = await in_thread(self.store.series, source, manga)
            results.append(self._result(series, source, manga, token, "failing", batch, error))
        recorded = await in_thread(self.found.record_many, results)
        return [
            Outcome(
                source,
                r.manga,
                "failing" if done is not None else "busy",
                error=r.error,
                finished_batch=done is not None and done.finished_batch,
            )
            for r, done in zip(results, recorded, strict=True)
        ]

    async def _read(
        self,
        hosted: "HostedSource",
        ctx: RequestContext,
        source: str,
        manga: str,
        token: str,
        batch: str | None,
        mark: str | None,
    ) -> Outcome:
        """Read the series' chapters (its lease is held) and record what changed."""
        started = time.perf_counter()
        if not await in_thread(self.store.renew, source, manga, token, self.lease_seconds):
            # Held too long waiting its turn in the group: another process checks it now.
            finished = await in_thread(self.found.skip, batch)
            return Outcome(source, manga, "busy", finished_batch=finished)
        series = await in_thread(self.store.series, source, manga)
        timeout = self.settings.server.upstream_timeout
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
            result = dataclasses.replace(
                result, chapters=chapters, complete=listing.complete, mark=mark
            )
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


def _skipped(source: str, mangas: Sequence[str], state: str, finished: bool) -> list[Outcome]:
    """Outcomes of checks that asked nothing; the last says whether that finished the batch."""
    last = len(mangas) - 1
    return [
        Outcome(source, m, state, finished_batch=finished and n == last)
        for n, m in enumerate(mangas)
    ]


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
