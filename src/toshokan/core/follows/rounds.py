"""The follows' background jobs: rounds of what is due, checks, and announcing what they found.

- ``follows.round``, every ``[follows] round`` seconds, once for the whole host:
  the series due within the round (of sources served now) are queued for a check
  each, at its own due time (so they spread over the round), as one *batch*.
- ``follows.check``: one series (keyed by it, so it is queued once at most); see
  :class:`~toshokan.core.follows.checks.Checker`.
- ``follows.checks``: up to :data:`~toshokan.sdk.MARKS_AT_ONCE` series of a source
  that gives marks (:meth:`toshokan.sdk.Source.marks`), due within the round,
  queued at the latest of their times: one question tells which of them changed,
  and only those are read. A series queued twice (two rounds) is checked once,
  by whichever takes its lease while it is due.
- ``follows.announce``: once a batch's last check is recorded, one log line for
  the batch, and a delivery queued for every target with news in it.
- ``follows.deliver``: one message to one target, retried with backoff when the
  target fails; a failure is recorded (health, metrics, the log) and never holds
  up a check.
"""

import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from toshokan.core.follows.checks import Checker, Outcome
from toshokan.core.follows.found import FoundStore, Update
from toshokan.core.follows.notify import HOST_WIDE, Targets, message, send, wanted
from toshokan.core.follows.store import FollowStore
from toshokan.core.ids import JOINED, MANGA
from toshokan.core.jobs import Backoff, Jobs, Task, in_thread
from toshokan.sdk import MARKS_AT_ONCE

if TYPE_CHECKING:
    from toshokan.core.hosted import HostedSources

log = logging.getLogger("toshokan.follows")

ROUND, CHECK, CHECKS, ANNOUNCE, DELIVER = (
    "follows.round",
    "follows.check",
    "follows.checks",
    "follows.announce",
    "follows.deliver",
)
#: Most series one round queues; the rest are due in the next.
ROUND_MOST = 5000
#: A batch whose queueing never finished (its process died) is closed after this many seconds.
ABANDONED_SECONDS = 600
#: Retrying a target that failed: 30 s, 1 min, 2 min... up to an hour, eight times.
DELIVERY_RETRY = Backoff(attempts=8, first=30.0, most=3600.0)
#: Priorities: a reader's own "check now" before scheduled checks; deliveries after checks.
MANUAL, SCHEDULED, DELIVERY = 10, 0, -10


class DeliveryFailed(Exception):
    """A target did not take its message (retried with backoff by the engine)."""


class Rounds:
    def __init__(
        self,
        sources: "HostedSources",
        jobs: Jobs,
        checker: Checker,
        store: FollowStore,
        found: FoundStore,
        targets: Targets,
        round_seconds: int,
        concurrency: int = 4,
    ):
        self.sources = sources
        self.jobs = jobs
        self.checker = checker
        self.store = store
        self.found = found
        self.targets = targets
        self.round_seconds = round_seconds
        #: Series one job of a group reads at once.
        self.concurrency = concurrency
        #: Called with every check's outcome, and every delivery's (target, ok).
        self.on_check: list[Callable[[Outcome], None]] = []
        self.on_delivery: list[Callable[[str, bool], None]] = []
        #: Called after every round with (follows, followed series, next check due).
        self.on_round: list[Callable[[int, int, float | None], None]] = []
        #: Awaited after every round.
        self.after_round: list[Callable[[], Awaitable[None]]] = []
        jobs.every(Task(ROUND, self.round), round_seconds)
        jobs.add(Task(CHECK, self.check))
        jobs.add(Task(CHECKS, self.check_many))
        jobs.add(Task(ANNOUNCE, self.announce))
        jobs.add(Task(DELIVER, self.deliver, retry=DELIVERY_RETRY))

    def serving(self) -> list[str]:
        return [hosted.slug for hosted in self.sources.serving()]

    # -- queueing ----------------------------------------------------------------------------

    async def round(self) -> None:
        now = time.time()
        due = await in_thread(self.store.due, now + self.round_seconds, self.serving(), ROUND_MOST)
        if due:
            await self.queue([(s, m, at) for s, m, at in due], "round", scheduled=True)
        for batch in await in_thread(self.found.seal_abandoned, now - ABANDONED_SECONDS):
            await self._announce_later(batch)
        if self.on_round:
            follows, series, next_check = await in_thread(self.store.counts)
            for listener in self.on_round:
                listener(follows, series, next_check)
        for after in self.after_round:
            await after()

    async def queue(
        self, series: Sequence[tuple[str, str, float]], kind: str, *, scheduled: bool
    ) -> str:
        """Queue a check of each series (at its time) as one batch; the batch's id."""
        batch = uuid.uuid4().hex
        await in_thread(self.found.open_batch, batch, kind)
        queued = 0
        priority = SCHEDULED if scheduled else MANUAL
        for source, group in groups(self.sources, series):
            if len(group) > 1:
                mangas = [manga for _, manga, _ in group]
                await self.jobs.defer(
                    CHECKS,
                    {"source": source, "mangas": mangas, "batch": batch, "scheduled": scheduled},
                    priority=priority,
                    at=max(at for _, _, at in group),
                )
                queued += len(group)
                continue
            ((_, manga, at),) = group
            arguments = {"source": source, "manga": manga, "batch": batch, "scheduled": scheduled}
            if await self.jobs.defer(
                CHECK, arguments, key=f"{source}/{manga}", priority=priority, at=at
            ):
                queued += 1
        if await in_thread(self.found.seal, batch, queued):
            await self._announce_later(batch)
        return batch

    # -- jobs --------------------------------------------------------------------------------

    async def check(self, source: str, manga: str, batch: str, scheduled: bool) -> None:
        outcome = await self.checker.check(source, manga, batch=batch, scheduled=scheduled)
        self.checked(outcome)
        if outcome.finished_batch:
            await self._announce_later(batch)

    async def check_many(self, source: str, mangas: list[str], batch: str, scheduled: bool) -> None:
        outcomes = await self.checker.check_many(
            source, mangas, batch=batch, scheduled=scheduled, concurrency=self.concurrency
        )
        for outcome in outcomes:
            self.checked(outcome)
        if any(outcome.finished_batch for outcome in outcomes):
            await self._announce_later(batch)

    def checked(self, outcome: Outcome) -> None:
        for listener in self.on_check:
            listener(outcome)

    async def _announce_later(self, batch: str) -> None:
        await self.jobs.defer(ANNOUNCE, {"batch": batch}, key=batch)

    async def announce(self, batch: str, *, here: bool = False) -> None:
        """Log the batch; queue a delivery to each target with news in it (``here``: deliver
        in this process now, a command's batch, and queue only the retries of failures)."""
        summary = await in_thread(self.found.batch, batch)
        if summary is None:
            return
        spent = (summary["finished"] or time.time()) - summary["started"]
        log.info(
            "follows: %s batch checked %d series in %.1f s: %d new chapter(s), %d failed",
            summary["kind"],
            summary["checked"],
            spent,
            summary["found"],
            summary["failed"],
        )
        if not summary["found"]:
            return
        for target in await in_thread(self.targets.all):
            if not await in_thread(self._news_for, batch, target.reader, target.series):
                continue
            at = None
            if here:
                try:
                    await self.deliver(batch, target.id)
                    continue
                except DeliveryFailed:
                    at = time.time() + DELIVERY_RETRY.delay(1)
            await self.jobs.defer(
                DELIVER,
                {"batch": batch, "target": target.id},
                key=f"{batch}/{target.id}",
                priority=DELIVERY,
                at=at,
            )

    def _news_for(self, batch: str, reader: str, series: tuple[str, ...]) -> list[Update]:
        if reader == HOST_WIDE:
            news = self.found.news(batch)
        else:
            news = self.found.readers_with_news(batch).get(reader, [])
        if not series:
            return news
        chosen = set(series)
        return [u for u in news if MANGA.pack(JOINED, u.source, u.manga) in chosen]

    async def deliver(self, batch: str, target: str) -> None:
        opened = await in_thread(self.targets.opened, target)
        if opened is None:
            return  # removed since (or unusable, and so reported)
        found, url = opened
        news = wanted(found, await in_thread(self._news_for, batch, found.reader, ()))
        if not news:
            return
        title, body = message(news)
        reason = await send(url, title, body)
        for listener in self.on_delivery:
            listener(found.shown, reason is None)
        if reason is not None:
            await in_thread(self.targets.failed, target, reason)
            log.warning("follows: notification to %s failed: %s", found.shown, reason)
            raise DeliveryFailed(reason)
        await in_thread(self.targets.delivered, target)


def groups(
    sources: "HostedSources", series: Sequence[tuple[str, str, float]]
) -> list[tuple[str, list[tuple[str, str, float]]]]:
    """``series`` (source, manga, due) by source, in groups of up to
    :data:`~toshokan.sdk.MARKS_AT_ONCE` due one after another for a source that gives marks,
    alone for any other."""
    by_source: dict[str, list[tuple[str, str, float]]] = {}
    for one in sorted(series, key=lambda one: one[2]):
        by_source.setdefault(one[0], []).append(one)
    found = []
    for source, due in by_source.items():
        hosted = sources.by_slug.get(source)
        if hosted is None or not hosted.source.offers_marks():
            found += [(source, [one]) for one in due]
            continue
        found += [
            (source, due[start : start + MARKS_AT_ONCE])
            for start in range(0, len(due), MARKS_AT_ONCE)
        ]
    return found
