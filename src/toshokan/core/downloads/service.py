"""The download queue: what the faces and the command line ask of the core.

A reader *keeps* a series they follow (with filters: languages, preferred groups,
a backfill, only unread), or every series they follow from a source (the same
filters, no backfill; a series kept on its own keeps its own); the chapters the
checks find are then queued and kept in the local library (:mod:`.runner`). Each reader sees and steers the downloads
of the series they keep, and pauses and resumes them all (a chapter another
reader keeps too still runs for them); an operator (``[keep] operators``,
everyone on a host without readers, and the command line) sees and steers the
whole queue, and alone pauses and resumes it.
"""

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toshokan.core.downloads.runner import FOLDER_REASONS, PRIORITY, SERIES, Runner
from toshokan.core.downloads.store import (
    CANCELLED,
    DONE,
    EVERY_SERIES,
    FAILED,
    RUNNING,
    WAITING,
    Download,
    DownloadStore,
    Keep,
    QueueState,
)
from toshokan.core.jobs import Jobs, in_thread
from toshokan.core.progress.store import IMPLICIT_READER
from toshokan.errors import Conflict, InvalidRequest, NotFound

if TYPE_CHECKING:
    from toshokan.core.downloads.parts import QueueParts
    from toshokan.core.follows.checks import Outcome

log = logging.getLogger("toshokan.downloads")

#: Bounds of what a reader asks for.
MAX_FILTERS = 20
MAX_FILTER_LENGTH = 100
MAX_BACKFILL = 1000
#: Actions on one download, and moves in the queue.
ACTIONS = ("hold", "release", "retry", "cancel")
MOVES = ("top", "up", "down", "bottom")
#: Seconds between two reads of the queue's state for health.
STATE_SECONDS = 10.0


@dataclass(frozen=True)
class Listing:
    """A page of the queue as one person sees it."""

    downloads: list[Download]
    states: dict[str, int]
    failures: dict[str, int]
    queue: QueueState
    operator: bool
    #: Whether the reader paused their own downloads (None: the whole queue was asked for
    #: by the command line, which is no reader).
    own: QueueState | None = None
    #: Keeps of every series followed from a source, of the readers whose downloads are shown.
    every: tuple[Keep, ...] = ()
    #: Chapters kept since the queue was last empty, chapters waiting, and the share of the
    #: waiting chapters' pages kept so far (their progress bars, summed).
    progress: tuple[int, int, float] = (0, 0, 0.0)


class Downloads:
    """Keeps of followed series, and the queue that keeps their chapters."""

    def __init__(self, core: "QueueParts", jobs: Jobs):
        self.core = core
        self.settings = core.settings.keep
        self.store = DownloadStore(core.database)
        self.runner = Runner(core, jobs, self.store)
        self.jobs = jobs
        self._state = QueueState(None, None, None)
        self._watching: asyncio.Task[None] | None = None
        self._deferring: set[asyncio.Task[Any]] = set()
        self.runner.on_state.append(self._noted)
        core.follows.rounds.on_check.append(self._checked)

    # -- life ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Keep the queue's state for health in this process (every process serves health)."""
        self._watching = asyncio.create_task(self._watch(), name="toshokan downloads state")

    async def stop(self) -> None:
        watching, self._watching = self._watching, None
        if watching is not None:
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching
        for task in list(self._deferring):
            task.cancel()

    async def _watch(self) -> None:
        while True:
            with contextlib.suppress(Exception):  # the database away: health says so elsewhere
                self._state = await in_thread(self.store.state)
            await asyncio.sleep(STATE_SECONDS)

    def _noted(self, state: QueueState) -> None:
        self._state = state

    def detail(self) -> str | None:
        """What health says of the queue: paused, and why."""
        state = self._state
        if state.paused is None:
            return None
        if state.paused in FOLDER_REASONS:
            return f"downloads paused: {state.message}"
        return "downloads paused by the operator"

    def _checked(self, outcome: "Outcome") -> None:
        """A check found new chapters: queue what the series' keepers ask for, soon."""
        if not outcome.new:
            return
        with contextlib.suppress(RuntimeError):  # no loop: shutting down
            task = asyncio.get_running_loop().create_task(
                self.jobs.defer(
                    SERIES,
                    {"source": outcome.source, "manga": outcome.manga},
                    key=f"{outcome.source}/{outcome.manga}",
                    priority=PRIORITY,
                )
            )
            self._deferring.add(task)
            task.add_done_callback(self._deferring.discard)

    # -- keeping series ------------------------------------------------------------------------

    def is_operator(self, reader: str) -> bool:
        return reader == IMPLICIT_READER or reader in self.settings.operators

    async def keep(
        self,
        reader: str,
        source: str,
        manga: str,
        *,
        languages: Sequence[str] = (),
        groups: Sequence[str] = (),
        backfill: int = 0,
        only_unread: bool = False,
    ) -> Keep:
        """Keep the series the reader follows, with these filters (replacing earlier ones);
        what is wanted of it is queued at once."""
        self._may_keep(reader, source)
        _check_filters(languages, groups)
        if not 0 <= backfill <= MAX_BACKFILL:
            raise InvalidRequest(f"backfill is 0 to {MAX_BACKFILL} chapters.")
        if not await self.core.follows.is_following(reader, source, manga):
            raise NotFound(f"You do not follow {source}/{manga[:80]}: follow it to keep it.")
        keep = await self._kept(reader, source, manga, languages, groups, backfill, only_unread)
        # What its checks recorded already is queued now; the rest as checks find it.
        await self.runner.series(source, manga)
        return keep

    async def _kept(
        self,
        reader: str,
        source: str,
        manga: str,
        languages: Sequence[str],
        groups: Sequence[str],
        backfill: int,
        only_unread: bool,
    ) -> Keep:
        """Store the reader's keep of ``manga`` (or of every series) with these filters, kept
        since it was first asked for."""
        before = await in_thread(self.store.keep_of, reader, source, manga)
        keep = Keep(
            reader,
            source,
            manga,
            tuple(dict.fromkeys(v.strip() for v in languages)),
            tuple(dict.fromkeys(g.strip() for g in groups)),
            backfill,
            only_unread,
            before.since if before is not None else time.time(),
        )
        await in_thread(self.store.keep, keep)
        return keep

    def _may_keep(self, reader: str, source: str) -> None:
        settings = self.settings
        if not settings.enabled:
            raise InvalidRequest("Keeping copies is turned off on this host ([keep] enabled).")
        self.core.source(source)
        library = self.core.keeper.library
        if library is None:
            raise InvalidRequest("Nothing can be kept: this host serves no local library.")
        if source == library.slug:
            raise InvalidRequest(f"{source} is the library kept copies go to: nothing to keep.")
        if settings.sources is not None and source not in settings.sources:
            raise InvalidRequest(f"Series of {source} are not kept on this host ([keep] sources).")
        if settings.readers is not None and reader not in settings.readers:
            raise InvalidRequest("You may not keep series on this host ([keep] readers).")

    async def unkeep(self, reader: str, source: str, manga: str) -> bool:
        """Stop keeping; what was kept stays, and what waits in the queue for no one else is
        cancelled (a series the reader follows from a source they keep every series of stays
        kept, as that keep says)."""
        removed = await in_thread(self.store.unkeep, reader, source, manga)
        if removed:
            await self._cancel_unkept(source, manga)
        return removed

    async def _cancel_unkept(self, source: str, manga: str) -> None:
        """Cancel what waits in the queue of a series nobody keeps any more."""
        if await in_thread(self.store.keeps, source, manga):
            return
        for row in await in_thread(self.store.listing, None, (*WAITING,), 100_000, 0):
            if (row.source, row.manga) == (source, manga):
                await in_thread(self.store.steer, row.id, "cancel")

    async def keep_of(self, reader: str, source: str, manga: str) -> Keep | None:
        return await in_thread(self.store.keep_of, reader, source, manga)

    # -- keeping every series followed from a source ---------------------------------------------

    async def keep_every(
        self,
        reader: str,
        source: str,
        *,
        languages: Sequence[str] = (),
        groups: Sequence[str] = (),
        only_unread: bool = False,
    ) -> Keep:
        """Keep every series the reader follows from ``source``, now and followed later, with
        these filters (replacing earlier ones); a series kept on its own keeps its own. No
        backfill: what existed before is asked for series by series."""
        self._may_keep(reader, source)
        _check_filters(languages, groups)
        keep = await self._kept(reader, source, EVERY_SERIES, languages, groups, 0, only_unread)
        for manga in await in_thread(self.store.followed_from, reader, source):
            await self.runner.series(source, manga)
        return keep

    async def unkeep_every(self, reader: str, source: str) -> bool:
        """Stop keeping every series followed from ``source``: series kept only so queue
        nothing more (what waits for no one else is cancelled); what was kept stays."""
        removed = await in_thread(self.store.unkeep, reader, source, EVERY_SERIES)
        if removed:
            for manga in await in_thread(self.store.followed_from, reader, source):
                await self._cancel_unkept(source, manga)
        return removed

    async def every_of(self, reader: str, source: str) -> Keep | None:
        """The reader's keep of every series they follow from ``source``, if any."""
        return await in_thread(self.store.keep_of, reader, source, EVERY_SERIES)

    async def every_series(self, reader: str) -> list[Keep]:
        """The reader's keeps of every series they follow from a source, by source."""
        return await in_thread(self.store.every_series, reader)

    # -- the queue -----------------------------------------------------------------------------

    async def listing(
        self,
        reader: str | None,
        *,
        everyone: bool = False,
        finished: bool = True,
        limit: int = 100,
        offset: int = 0,
    ) -> Listing:
        """The queue (``reader``'s series; with ``everyone``, an operator's whole queue), waiting
        rows first in queue order, then failed (and, with ``finished``, cancelled and done),
        newest first."""
        operator = reader is None or self.is_operator(reader)
        whose = None if (reader is None or (everyone and operator)) else reader
        states = (*WAITING, FAILED, CANCELLED, DONE) if finished else (*WAITING, FAILED)
        rows = await in_thread(self.store.listing, whose, states, limit, offset)
        counts, failures = await in_thread(self.store.counts, whose)
        state = await in_thread(self.store.state)
        progress = await in_thread(self.store.progress, whose)
        own = None if reader is None else await in_thread(self.store.reader_state, reader)
        every = tuple(await in_thread(self.store.every_series, whose))
        return Listing(rows, counts, failures, state, operator, own, every, progress)

    async def steer(self, reader: str | None, download: str, action: str) -> Download:
        """``hold``, ``release``, ``retry`` or ``cancel`` one download, or move it (``top``,
        ``up``, ``down``, ``bottom``): a reader their own, an operator (None) any."""
        row = await self.mine(reader, download)
        if action in MOVES:
            changed = await in_thread(self.store.move, download, action)
        elif action in ACTIONS:
            changed = await in_thread(self.store.steer, download, action)
        else:
            raise InvalidRequest(f"action is one of {', '.join((*ACTIONS, *MOVES))}.")
        if not changed:
            now = await in_thread(self.store.get, download)
            state = now.state if now is not None else row.state
            if action in ("hold", "cancel") and (
                state == DONE or (now is not None and state == RUNNING and now.path is not None)
            ):
                raise Conflict(
                    f"Too late to {action} this download: its chapter is kept"
                    f"{' already' if state == DONE else ' (being put into the library)'}."
                )
            raise InvalidRequest(f"A download that is {state} cannot be given {action!r}.")
        await self.runner.kick()
        found = await in_thread(self.store.get, download)
        assert found is not None
        return found

    async def mine(self, reader: str | None, download: str) -> Download:
        """The download, if ``reader`` (None: an operator) may see it."""
        row = None if len(download) > 64 else await in_thread(self.store.get, download)
        if row is None or not (
            reader is None
            or self.is_operator(reader)
            or await in_thread(self.store.keeps_series, reader, row.source, row.manga)
        ):
            raise NotFound("No such download.")
        return row

    async def retry_failed(self, reader: str | None) -> int:
        whose = None if reader is None or self.is_operator(reader) else reader
        retried = await in_thread(self.store.retry_failed, whose)
        if retried:
            await self.runner.kick()
        return retried

    async def pause(self, reader: str | None, *, own: bool | None = None) -> QueueState:
        """Pause the whole queue (an operator's), or with ``own`` (a reader who is no operator
        always) the downloads ``reader`` keeps; the chapters being kept finish."""
        if self._own(reader, own):
            assert reader is not None
            await in_thread(self.store.pause_reader, reader)
            return await in_thread(self.store.reader_state, reader)
        await in_thread(self.store.pause, "operator", "paused by the operator")
        self._state = await in_thread(self.store.state)
        return self._state

    async def resume(self, reader: str | None, *, own: bool | None = None) -> QueueState:
        """Let the queue run again, whatever paused it (a folder still broken pauses it again
        at its next chapter); with ``own``, the downloads ``reader`` paused."""
        if self._own(reader, own):
            assert reader is not None
            await in_thread(self.store.resume_reader, reader)
            await self.runner.kick()
            return await in_thread(self.store.reader_state, reader)
        await in_thread(self.store.resume)
        self._state = await in_thread(self.store.state)
        await self.runner.kick()
        return self._state

    def _own(self, reader: str | None, own: bool | None) -> bool:
        """Whether a pause is of the reader's own downloads (unsaid: unless they are an
        operator); only an operator pauses the host's queue."""
        if own is None:
            own = reader is not None and not self.is_operator(reader)
        if own and reader is None:
            raise InvalidRequest("Name the reader whose downloads to pause.")
        if not own and reader is not None and not self.is_operator(reader):
            raise InvalidRequest("Only an operator ([keep] operators) pauses the host's queue.")
        return own


def _check_filters(languages: Sequence[str], groups: Sequence[str]) -> None:
    for name, values in (("languages", languages), ("groups", groups)):
        if len(values) > MAX_FILTERS or any(
            not value.strip() or len(value) > MAX_FILTER_LENGTH for value in values
        ):
            raise InvalidRequest(
                f"{name}: at most {MAX_FILTERS}, each 1 to {MAX_FILTER_LENGTH} characters."
            )
