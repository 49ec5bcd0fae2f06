"""Keeping one upstream chapter in the local library: the unit of work the download queue runs.

:meth:`Keeper.keep` reads the chapter through the core as a reader would (one
visit per step, so each has its own upstream deadline), as background work
(:func:`toshokan.sdk.background`: readers' requests go first on every budget),
writes it through the :class:`~.shelf.Shelf` (whole or not at all), ties it to
its original (:class:`~.ties.Ties`) before it is moved into place, and gives
the series its cover and ``series.json`` where the library reads them. Keeping a
chapter kept already is a no-op; keeping one whose writing was interrupted
writes it again under the same name.

The keep folder is the root of a source that serves a folder of chapter files
(the local library: :meth:`~toshokan.sdk.Source.library_folder`), so the
kept files are served by it, on every face, found by its watcher within
seconds. The tie learns the library's slugs for the file when the library
reports a change (:meth:`Keeper.settle`).
"""

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toshokan.config import KeepSection
from toshokan.core.answers import Caller
from toshokan.core.hosted import ConfigurationError, HostedSource
from toshokan.core.jobs import in_thread, settled
from toshokan.core.keeping.errors import KeepError, KeepUnavailable
from toshokan.core.keeping.metadata import comicinfo, series_json
from toshokan.core.keeping.names import chapter_file, numbered, series_folder, volume_and_title
from toshokan.core.keeping.shelf import Bounds, Shelf
from toshokan.core.keeping.ties import Tie, Ties
from toshokan.errors import ChapterNotFound, HostError
from toshokan.models import Chapter, Manga
from toshokan.sdk.throttle import background

if TYPE_CHECKING:
    from toshokan.core.parts import CoreParts
    from toshokan.core.visit import Visit

log = logging.getLogger("toshokan.keep")

#: Numbered alternatives tried for a name another file has.
MAX_ALTERNATIVES = 50
#: Told after each page a chapter being kept: (pages done, pages, bytes so far).
Progress = Callable[[int, int, int], Awaitable[None]]
#: Asked, with the chapter's path, once it is written aside and before it is tied and moved into
#: place: raising there leaves nothing in the library (the download queue's last word).
Publishing = Callable[[str], Awaitable[None]]


def keep_library(
    keep: KeepSection, serving: Sequence[HostedSource]
) -> tuple[HostedSource, Path] | None:
    """The library whose root is ``[keep] folder`` (by default the first that serves a
    folder), and that root; None when no source serves a folder. A folder no library serves
    as its root is a :class:`ConfigurationError`: its files would be seen by nobody."""
    libraries = [
        (hosted, folder.resolve())
        for hosted in serving
        if (folder := hosted.source.library_folder()) is not None
    ]
    if keep.folder is None:
        return libraries[0] if libraries else None
    wanted = keep.folder.expanduser().resolve()
    found = [(hosted, folder) for hosted, folder in libraries if folder == wanted]
    if not found:
        served = ", ".join(f"{h.slug}: {f}" for h, f in libraries) or "none"
        raise ConfigurationError(
            f"keep.folder: {wanted} is not the root of a local library the host serves "
            f"(kept chapters would not be seen; libraries: {served})"
        )
    return found[0]


@dataclass(frozen=True)
class Kept:
    """A chapter kept: its tie, and whether this call wrote it (False: it was kept already)."""

    tie: Tie
    written: bool


class Keeper:
    """Copies of upstream chapters in the keep folder, tied to their originals."""

    def __init__(self, core: "CoreParts"):
        self.core = core
        self.ties = Ties(core.database)
        core.progress.linked = self.ties
        self.library: HostedSource | None = None
        self.shelf: Shelf | None = None
        self._settling: asyncio.Task[None] | None = None
        self._again = False

    # -- life --------------------------------------------------------------------------

    async def startup(self) -> None:
        """Find the library that serves the keep folder; refuse a folder none serves."""
        keep = self.core.settings.keep
        found = keep_library(keep, self.core.sources.serving())
        if found is None:
            return  # no library: nothing can be kept, and :meth:`keep` says so
        self.library, folder = found
        bounds = Bounds(keep.max_image_bytes, keep.max_chapter_bytes, keep.max_image_pixels)
        self.shelf = Shelf(folder, bounds)
        removed = await in_thread(self.shelf.clean)
        if removed:
            log.info("kept copies: removed %d unfinished chapter(s) of a stopped process", removed)
        self.core.sources.services.on_content_changed(self._changed)

    async def shutdown(self) -> None:
        task, self._settling = self._settling, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        # A cancelled settling leaves its thread's call to return: the ties' database is
        # closed after this, never under a thread still using it.
        await settled()

    def _ready(self) -> tuple[HostedSource, Shelf]:
        if self.library is None or self.shelf is None:
            raise KeepUnavailable("nothing can be kept: the host serves no local library")
        return self.library, self.shelf

    # -- keeping -----------------------------------------------------------------------

    async def keep(
        self,
        source: str,
        manga_slug: str,
        chapter_slug: str,
        *,
        caller: Caller | None = None,
        progress: Progress | None = None,
        publishing: Publishing | None = None,
    ) -> Kept:
        """Keep one chapter of ``source`` (as ``caller``; the host by default), telling
        ``progress`` of each page written (the download queue's progress bars) and asking
        ``publishing`` before it is moved into place (whether it still may be).

        Raises the spec's errors for the upstream's failures, :class:`~.errors.KeepError`
        for the folder's and the chapter's own.
        """
        library, shelf = self._ready()
        if source == library.slug:
            raise KeepError("the keep folder's own library needs no copy of its chapters")
        caller = caller or Caller({}, self.core.sources.services.urls().base_url, "host")
        with background():
            visit = await self.core.visit(source, caller)
            manga = (await visit.manga(manga_slug)).value
            chapters = (await visit.chapters(manga_slug)).value
            chapter = next((c for c in chapters if c.slug == chapter_slug), None)
            if chapter is None:
                raise ChapterNotFound()
            tie = await in_thread(self.ties.of_chapter, source, manga_slug, chapter_slug)
            if tie is not None and await in_thread((shelf.folder / tie.path).is_file):
                return Kept(tie, written=False)
            folder = await self._series_folder(source, manga, library.slug, shelf.folder)
            path = tie.path if tie is not None else await self._free_path(folder, manga, chapter)
            tie = await self._write(visit, caller, manga, chapter, path, progress, publishing)
            await self._series_files(source, manga, folder, caller)
        self._settle_soon()
        return Kept(tie, written=True)

    async def _write(
        self,
        visit: "Visit",
        caller: Caller,
        manga: Manga,
        chapter: Chapter,
        path: str,
        progress: Progress | None = None,
        publishing: Publishing | None = None,
    ) -> Tie:
        library, shelf = self._ready()
        urls = (
            await (await self.core.visit(visit.slug, caller)).pages(manga.slug, chapter.slug)
        ).value
        tag_names = {tag.slug: tag.name for tag in visit.config.search.tags}
        volume, _ = volume_and_title(chapter)
        async with shelf.draft() as draft:
            for done, url in enumerate(urls, start=1):
                page_visit = await self.core.visit(visit.slug, caller)  # a deadline per page
                async with self.core.images.original(page_visit, url) as chunks:
                    await draft.add_page(chunks)
                if progress is not None:
                    await progress(done, len(urls), draft.size)
            info = comicinfo(
                manga, chapter, draft.named_pages(), volume=volume, tag_names=tag_names
            )
            staged = await draft.assemble(info)
            if publishing is not None:
                await publishing(path)
            tie = Tie(
                visit.slug,
                manga.slug,
                chapter.slug,
                library.slug,
                path,
                staged.document,
                "",
                "",
                staged.pages,
                staged.size,
                time.time(),
            )
            # Tied before it is in place: a process killed in between leaves a tie to a file
            # that is whole, or to none, and the chapter kept again takes this same name.
            await in_thread(self.ties.record, tie)
            await draft.publish(staged, path)
        log.info("kept %s/%s/%s as %s", visit.slug, manga.slug, chapter.slug, path)
        return tie

    async def _series_folder(self, source: str, manga: Manga, library: str, root: Path) -> str:
        """The series' folder: the one it was given, else its title (with the source's name,
        then a number, when another series or a person's own folder has that name)."""
        known = await in_thread(self.ties.series_folder, source, manga.slug)
        if known is not None:
            return known
        base = series_folder(manga.title)
        for n in range(1, MAX_ALTERNATIVES + 1):
            name = (
                base if n == 1 else f"{base} ({source})" if n == 2 else f"{base} ({source} {n - 1})"
            )
            if await in_thread((root / name).exists):
                continue
            if await in_thread(self.ties.claim_folder, source, manga.slug, library, name):
                return name
        raise KeepError(f"no free folder name for the series {base!r}")

    async def _free_path(self, folder: str, manga: Manga, chapter: Chapter) -> str:
        library, shelf = self._ready()
        volume, title = volume_and_title(chapter)
        name = chapter_file(manga.title, chapter, volume=volume, title=title)
        for n in range(1, MAX_ALTERNATIVES + 1):
            path = f"{folder}/{name if n == 1 else numbered(name, n)}"
            taken = await in_thread((shelf.folder / path).exists)
            if not taken and await in_thread(self.ties.at_path, library.slug, path) is None:
                return path
        raise KeepError(f"no free file name for the chapter {name!r}")

    async def _series_files(self, source: str, manga: Manga, folder: str, caller: Caller) -> None:
        """``series.json`` (kept up to date) and, where the series has none, a cover."""
        _, shelf = self._ready()
        await shelf.place(f"{folder}/series.json", series_json(manga, source=source))
        has_cover = await in_thread(lambda: any(shelf.folder.joinpath(folder).glob("cover.*")))
        if has_cover or not manga.covers:
            return
        try:
            visit = await self.core.visit(source, caller)
            async with shelf.draft() as draft:
                async with self.core.images.original(visit, manga.covers[0]) as chunks:
                    await draft.add_page(chunks)
                await draft.publish_page(f"{folder}/cover")
        except (HostError, KeepError) as error:  # a series without a cover still reads
            log.warning("kept series %s has no cover: %s", folder, error)

    # -- ties --------------------------------------------------------------------------

    async def original_series(self, source: str, manga: str) -> tuple[str, str] | None:
        """The upstream series (source, manga) that ``source``/``manga`` is the kept copy of;
        None for any other series."""
        if self.library is None or source != self.library.slug:
            return None
        return await in_thread(self.ties.original_series, source, manga)

    def _changed(self, slug: str) -> None:
        if self.library is not None and slug == self.library.slug:
            self._settle_soon()

    def _settle_soon(self) -> None:
        """Settle once the running settling is done, if one runs."""
        if self._settling is not None and not self._settling.done():
            self._again = True
            return
        with contextlib.suppress(RuntimeError):  # no loop: at shutdown
            self._settling = asyncio.get_running_loop().create_task(self._settle_all())

    async def _settle_all(self) -> None:
        while True:
            self._again = False
            try:
                await self.settle()
            except Exception:  # the next change tries again
                log.exception("kept copies: tying files to the library's chapters failed")
            if not self._again:
                return

    async def settle(self) -> int:
        """Tie kept files the library has indexed since to its chapters; how many."""
        library, _ = self._ready()
        settled = 0
        for tie in await in_thread(self.ties.unresolved, library.slug):
            found = await library.source.chapter_of_file(tie.document)
            if found is not None:
                await in_thread(self.ties.resolve, tie, found.manga_slug, found.chapter_slug)
                settled += 1
        return settled
