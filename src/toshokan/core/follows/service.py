"""Following series: what every face and the command line ask of the core.

A face names the reader (as it tells who reads) and translates these answers
into its own shapes; nothing here knows a face. A follow is checked to name a
series the source has (one upstream request, under the host's deadline); a
source removed from the configuration keeps its follows, shown as such, and they
are checked again when it returns.
"""

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toshokan.core.answers import check_slug
from toshokan.core.follows.checks import Checker, Outcome, upstream_work
from toshokan.core.follows.found import FoundStore, Update
from toshokan.core.follows.notify import HOST_WIDE, MAX_SERIES, Target, Targets
from toshokan.core.follows.rounds import Rounds, groups
from toshokan.core.follows.store import Followed, FollowStore
from toshokan.core.ids import JOINED, MANGA
from toshokan.core.jobs import Jobs, in_thread
from toshokan.core.progress import ChapterRef, Position
from toshokan.errors import InvalidRequest, MangaNotFound, NotFound
from toshokan.models import SourceStatus
from toshokan.sdk.context import RequestContext

if TYPE_CHECKING:
    from toshokan.core.parts import CoreParts

#: The upstream series (source, manga) a series is the kept copy of; None for any other.
Originals = Callable[[str, str], Awaitable[tuple[str, str] | None]]
#: Most updates one answer lists; most chapters one "mark read" names.
MAX_UPDATES = 100
MAX_MARKED = 500


@dataclass(frozen=True)
class Follow:
    """A reader's follow as faces show it."""

    followed: Followed
    unread: int
    #: Whether the source is served now (a follow of a removed source stays, marked).
    served: bool
    #: When a check last found a chapter new to the reader (None: none since they followed).
    last_found: float | None = None


class Follows:
    """Follows, updates, checks on demand and notification targets, over the host's database."""

    def __init__(self, core: "CoreParts", jobs: Jobs, originals: Originals | None = None):
        """``originals``: the upstream series a series is the kept copy of (the keeper's
        :meth:`~toshokan.core.keeping.Keeper.original_series`), to follow it as that."""
        self.core = core
        self._originals = originals
        self.settings = core.settings
        database = core.database
        self.store = FollowStore(database)
        self.found = FoundStore(database)
        self.targets = Targets(database, core.sources.services.secret)
        self.checker = Checker(core.settings, core.sources, self.store, self.found)
        self.jobs = jobs
        self.rounds = Rounds(
            core.sources,
            jobs,
            self.checker,
            self.store,
            self.found,
            self.targets,
            core.settings.follows.round,
            core.settings.follows.concurrency,
        )
        #: Targets failing now, redacted, as health tells them; kept by the deliveries this
        #: process makes and read again every round (another process's deliveries).
        self._failing: dict[str, str] = {}
        self.rounds.on_delivery.append(self._delivered)
        self.rounds.on_check.append(self._found)
        self.rounds.after_round.append(self.refresh)

    def _found(self, outcome: Outcome) -> None:
        """A check found new chapters: what the cache holds of the source's listings is stale
        (a reader opening the series, and the download queue keeping the chapter, see it)."""
        if outcome.new:
            self.core.sources.services.content_changed(outcome.source)

    def _delivered(self, shown: str, ok: bool) -> None:
        if ok:
            self._failing.pop(shown, None)
        else:
            self._failing[shown] = "failing"

    async def refresh(self) -> None:
        """Read again which targets are failing (every round, and for a status)."""
        targets = await in_thread(self.targets.all)
        self._failing = {t.shown: t.error or "failing" for t in targets if t.failing_since}

    def detail(self) -> str | None:
        """What health says of the follows: notification targets that fail (redacted)."""
        if not self._failing:
            return None
        shown = ", ".join(sorted(self._failing)[:3])
        more = len(self._failing) - 3
        return f"notifications failing: {shown}" + (f" and {more} more" if more > 0 else "")

    # -- life ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Work the follows' jobs in this process (the host serving), when they are enabled."""
        if self.settings.follows.enabled:
            await self.jobs.start(self.settings.follows.concurrency)

    async def open(self) -> None:
        """Be able to queue jobs without working them (a command)."""
        await self.jobs.open()

    async def stop(self) -> None:
        await self.jobs.stop()

    # -- a reader's follows -----------------------------------------------------------------

    async def followed_as(self, source: str, manga: str) -> tuple[str, str]:
        """The series a follow of ``source``/``manga`` is: a kept series' upstream original
        (one chapter wherever it is read, one series wherever it is followed), else itself."""
        original = None if self._originals is None else await self._originals(source, manga)
        return original or (source, manga)

    async def follow(self, reader: str, source: str, manga: str) -> Follow:
        """Follow a series the source has (asked now); ``MANGA_NOT_FOUND`` for any other. A
        kept series is followed as its original, which need not be upstream any more."""
        hosted = self.core.source(source)
        check_slug(manga, MangaNotFound)
        if hosted.configuration().auth.required and not hosted.accepts_readers:
            raise InvalidRequest(
                f"The source {source!r} asks each reader for credentials of its own: its "
                "series cannot be checked in the background, so they cannot be followed."
            )
        ctx = RequestContext(base_url=hosted.source.services.public_url or "")
        details = await upstream_work(
            self.settings.server.upstream_timeout, lambda: hosted.source.manga(manga, ctx)
        )
        source, manga = await self.followed_as(source, manga)
        await in_thread(
            self.store.follow, reader, source, manga, details.title, details.publication.value
        )
        await self.rounds.queue([(source, manga, time.time())], "first", scheduled=True)
        return await self.follow_of(reader, source, manga)

    async def follow_of(self, reader: str, source: str, manga: str) -> Follow:
        source, manga = await self.followed_as(source, manga)
        followed = await in_thread(self.store.followed, reader, source, manga)
        if followed is None:
            raise NotFound(f"You do not follow {source}/{manga[:80]}.")
        unread = await in_thread(self.found.unread_counts, reader)
        return Follow(followed, unread.get((source, manga), 0), self._served(source))

    async def is_following(self, reader: str, source: str, manga: str) -> bool:
        source, manga = await self.followed_as(source, manga)
        return await in_thread(self.store.followed, reader, source, manga) is not None

    async def unfollow(self, reader: str, source: str, manga: str) -> bool:
        source, manga = await self.followed_as(source, manga)
        return await in_thread(self.store.unfollow, reader, source, manga)

    async def follows_of(self, reader: str) -> list[Follow]:
        followed = await in_thread(self.store.follows_of, reader)
        unread = await in_thread(self.found.unread_counts, reader)
        found = await in_thread(self.found.last_found, reader)
        follows = []
        for f in followed:
            key = (f.series.source, f.series.manga)
            follows.append(Follow(f, unread.get(key, 0), self._served(key[0]), found.get(key)))
        return follows

    def _served(self, source: str) -> bool:
        hosted = self.core.sources.by_slug.get(source)
        return hosted is not None and hosted.status is not SourceStatus.REMOVED

    # -- updates and unread -------------------------------------------------------------------

    async def updates(
        self, reader: str, limit: int = 50, offset: int = 0, *, unread_only: bool = False
    ) -> list[Update]:
        """New chapters of the reader's series, newest found first, unread ones marked."""
        if not 1 <= limit <= MAX_UPDATES or offset < 0:
            raise InvalidRequest(f"limit is 1 to {MAX_UPDATES}, offset 0 or more.")
        return await in_thread(self.found.updates, reader, limit, offset, unread_only=unread_only)

    async def mark_read(self, reader: str, chapters: Sequence[ChapterRef]) -> int:
        """Record each chapter finished in the progress store (so every face shows it read);
        how many were not finished before."""
        if len(chapters) > MAX_MARKED:
            raise InvalidRequest(f"At most {MAX_MARKED} chapters at once.")
        return await in_thread(self._mark, reader, chapters)

    async def mark_all_read(self, reader: str) -> int:
        unread = await in_thread(self.found.updates, reader, 10_000, 0, unread_only=True)
        refs = [ChapterRef(u.source, u.manga, u.chapter) for u in unread]
        return await in_thread(self._mark, reader, refs)

    def _mark(self, reader: str, chapters: Sequence[ChapterRef]) -> int:
        progress = self.core.progress
        marked = 0
        now = time.time()
        for ref in chapters:
            stored = progress.position(reader, ref)
            if stored is not None and stored.finished:
                continue
            seen = self.found.chapter(ref.source, ref.manga, ref.chapter)
            pages = (stored.pages if stored else None) or (seen[0] if seen else None) or 1
            position = Position(pages - 1, pages, True, now, "", "marked read")
            marked += progress.record(reader, ref, position)
        return marked

    # -- checks --------------------------------------------------------------------------------

    async def check_now(self, reader: str | None, series: tuple[str, str] | None = None) -> str:
        """Queue a check of the reader's series (one, or all of them; None: every followed
        series) as one batch, skipping those checked within the last round (so readers
        asking again and again never ask an upstream more often than that); its id."""
        wanted = await self._to_check(reader, series, float(self.settings.follows.round))
        return await self.rounds.queue(
            [(s, m, time.time()) for s, m in wanted], "manual", scheduled=False
        )

    async def check_here(
        self, series: tuple[str, str] | None = None, concurrency: int = 4
    ) -> tuple[str, list[Outcome]]:
        """Check now, in this process (a command), as one batch; its id and each outcome."""
        import uuid

        wanted = await self._to_check(None, series, recheck=0.0)
        batch = uuid.uuid4().hex
        await in_thread(self.found.open_batch, batch, "command")
        await in_thread(self.found.seal, batch, len(wanted))
        gate = asyncio.Semaphore(concurrency)

        async def one(source: str, group: Sequence[tuple[str, str, float]]) -> list[Outcome]:
            mangas = [manga for _, manga, _ in group]
            async with gate:
                found = await self.checker.check_many(
                    source, mangas, batch=batch, scheduled=False, concurrency=concurrency
                )
            for outcome in found:
                self.rounds.checked(outcome)
            return found

        now = time.time()
        grouped = groups(self.core.sources, [(s, m, now) for s, m in wanted])
        outcomes = [o for found in await asyncio.gather(*(one(*g) for g in grouped)) for o in found]
        if any(o.finished_batch for o in outcomes):
            await self.rounds.announce(batch, here=True)
        return batch, list(outcomes)

    async def _to_check(
        self, reader: str | None, series: tuple[str, str] | None, recheck: float
    ) -> list[tuple[str, str]]:
        serving = self.rounds.serving()
        if series is not None:
            self.core.source(series[0])
            source, manga = await self.followed_as(*series)
            followed = await in_thread(self.store.series, source, manga)
            if followed is None or (
                reader is not None
                and await in_thread(self.store.followed, reader, source, manga) is None
            ):
                raise NotFound(f"{source}/{manga[:80]} is not followed.")
            wanted = [(source, manga)]
        else:
            wanted = await in_thread(self.store.serving_follows, reader, serving)
        if not recheck:
            return wanted
        fresh = [
            (s, m)
            for s, m in wanted
            if not await in_thread(self.store.recently_checked, s, m, recheck)
        ]
        return fresh

    async def batch(self, batch: str) -> dict[str, Any] | None:
        return await in_thread(self.found.batch, batch)

    # -- notification targets ------------------------------------------------------------------

    async def add_target(self, reader: str | None, url: str, series: Sequence[str] = ()) -> Target:
        """Keep an Apprise URL for ``reader`` (None: the host's, told of every series); a kept
        series among ``series`` is its original, as a follow of it is (and as a target set
        before the copy was known as one becomes: :func:`~.store.merge_series`)."""
        if len(series) <= MAX_SERIES:
            series = [await self._target_series(named) for named in series]
        return await in_thread(self.targets.add, reader or HOST_WIDE, url, series)

    async def _target_series(self, named: str) -> str:
        slugs = MANGA.unpack(JOINED, named)
        if slugs is None:
            return named  # refused as it is named
        return MANGA.pack(JOINED, *await self.followed_as(*slugs))

    async def targets_of(self, reader: str | None) -> list[Target]:
        return await in_thread(self.targets.of, reader or HOST_WIDE)

    async def remove_target(self, reader: str | None, which: str) -> bool:
        return await in_thread(self.targets.remove, reader or HOST_WIDE, which)

    # -- for the operator ----------------------------------------------------------------------

    async def status(self) -> dict[str, Any]:
        follows, series, next_check = await in_thread(self.store.counts)
        jobs = await self.jobs.status()
        targets = await in_thread(self.targets.all)
        failing = [t for t in targets if t.failing_since is not None]
        return {
            "follows": follows,
            "series": series,
            "next_check": next_check,
            "engine": jobs,
            "targets": len(targets),
            "failing_targets": failing,
        }
