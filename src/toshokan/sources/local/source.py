"""The local library source: a folder of comics served through the host's interface.

This class wires the parts together: settings, the SQLite index, the scanner
(run at start-up and again for whatever the folder watcher reports), search,
the page routes and authentication. Every index or disk access runs in a
worker thread so the event loop never blocks on I/O.
"""

import asyncio
import contextlib
import itertools
import json
import logging
import os
import sqlite3
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote_plus

import click
from starlette.routing import BaseRoute

from toshokan.sdk import (
    SERVE_ID,
    AuthConfig,
    Chapter,
    ChapterFile,
    ChapterNotFound,
    Classification,
    Credentials,
    Download,
    Entry,
    FilterKey,
    HostServices,
    Manga,
    MangaNotFound,
    OwnPages,
    Picture,
    Preset,
    Publication,
    RequestContext,
    SearchConfig,
    SearchRequest,
    SearchResponse,
    SortOption,
    Source,
    SourceConfiguration,
    Tag,
)
from toshokan.sdk.archives import DiskCache
from toshokan.sources.local.credentials import LocalAuth
from toshokan.sources.local.discovery import LibraryUnavailable
from toshokan.sources.local.folder_cbz import CBZ
from toshokan.sources.local.index import (
    Index,
    IndexLock,
    IndexUnavailable,
    Snapshot,
    default_index_path,
    host_identity,
)
from toshokan.sources.local.index import search as searching
from toshokan.sources.local.index.update import ScanCancelled
from toshokan.sources.local.metadata import tag_slug, unique
from toshokan.sources.local.pages import PageServer, archive_media_type, scanned_size
from toshokan.sources.local.scan_report import ScanProgress, ScanReport, SkippedFiles
from toshokan.sources.local.scanner import Scanner
from toshokan.sources.local.settings import LocalSettings
from toshokan.sources.local.slugs import is_slug
from toshokan.sources.local.thumbnails import Thumbnails, thumbnail_cache
from toshokan.sources.local.versions import version_of

log = logging.getLogger(__name__)

#: How often a running scan's progress reaches the answers (and the result cache).
PUBLISH_SECONDS = 2.0

BASE_FILTERS = [
    FilterKey.GENRE,
    FilterKey.STATUS,
    FilterKey.CONTENT_RATING,
    FilterKey.YEAR,
    FilterKey.AUTHOR,
    FilterKey.ARTIST,
    FilterKey.PUBLISHER,
    FilterKey.MIN_CHAPTERS,
    FilterKey.ORIGINAL_LANGUAGE,
    FilterKey.TRANSLATED_LANGUAGE,
]


#: The slug a page of results' thumbnail link is first made with, then replaced.
_STAND_IN = "stand-in"
#: Timestamps outside these bounds (a file dated 1e12, a clock gone wrong) are clamped.
_EARLIEST = 0.0
_LATEST = datetime(9999, 12, 31, tzinfo=UTC).timestamp()


def _timestamp(value: float | None) -> datetime:
    """The index's seconds as a datetime; never raises, whatever the disk said."""
    seconds = value or 0.0
    if not _EARLIEST <= seconds <= _LATEST:  # also false for NaN
        seconds = _EARLIEST if not seconds > _LATEST else _LATEST
    return datetime.fromtimestamp(seconds, UTC)


class LocalLibrary(Source[LocalSettings]):
    """Comics and manga from a folder on disk."""

    version: ClassVar[str] = "1.0.0"
    summary: ClassVar[str] = (
        "Comics and manga from a folder: .cbz/.cb7/.cbr archives, PDFs, EPUBs and image folders."
    )

    def __init__(self, slug: str, settings: LocalSettings, services: HostServices):
        super().__init__(slug, settings, services)
        self.root = settings.root.resolve()
        self.index_path = settings.index_path or default_index_path(
            services.data_dir, slug, self.root
        )
        self._lock: IndexLock | None = None
        self.auth = LocalAuth(settings, slug)
        self._index: Index | None = None
        self.scanner: Scanner | None = None
        self.snapshot = Snapshot(tags=[], languages=[], updated_at=0.0, series=0, chapters=0)
        self._stop = asyncio.Event()
        self._watcher: asyncio.Task[None] | None = None
        self._scan_lock = asyncio.Lock()
        self._first_scan: asyncio.Task[None] | None = None
        self.progress = ScanProgress(report=partial(services.observers.scan_progress, slug))
        self.skipped = SkippedFiles(slug, log)
        renders = DiskCache(
            services.data_dir / "local" / f"{slug}-renders", settings.render_cache_bytes
        )
        self.pages_server = PageServer(root=self.root, index=self._require_index, renders=renders)
        self.thumbnails = Thumbnails(
            root=self.root,
            index=self._require_index,
            cache=thumbnail_cache(services.data_dir, slug, settings.thumbnail_cache_bytes),
            renders=renders,
        )

    # -- lifecycle ---------------------------------------------------------------

    def _require_index(self) -> Index:
        if self._index is None:
            raise IndexUnavailable("the library index is not open yet")
        return self._index

    async def startup(self) -> None:
        # Replicas of one host (sharing its secrets through [cluster] redis) and the worker
        # processes of one `serve` may share the index; anything else is another host.
        lock = IndexLock(self.index_path, self._host_identity())
        await asyncio.to_thread(lock.acquire)
        try:
            self._index = await asyncio.to_thread(Index, self.index_path, self.root)
        except BaseException:
            lock.release()
            raise
        self._lock = lock
        self.scanner = Scanner(
            self.root,
            self._index,
            default_language=self.settings.default_language,
            comicinfo_limit=self.settings.max_comicinfo_bytes,
            workers=self.settings.scan_workers,
            shared_claims=self.services.claims,
            source=self.slug,
        )
        if self.settings.watch:
            # Watch before the first scan, so nothing added meanwhile is missed.
            self._stop = asyncio.Event()
            self._watcher = asyncio.create_task(self._watch(), name=f"toshokan-watch-{self.slug}")
            await asyncio.sleep(0.05)
        await self._refresh_snapshot()
        if not self.settings.scan_on_start:  # what the index knows is all there is to say
            await asyncio.to_thread(self._note_problems_in_index)
        if self.settings.scan_on_start:
            # A large library's first scan takes minutes: serve what is indexed meanwhile.
            self._first_scan = asyncio.create_task(
                self._initial_scan(), name=f"toshokan-scan-{self.slug}"
            )
            await asyncio.wait({self._first_scan}, timeout=self.settings.start_wait)

    def _host_identity(self) -> str | None:
        """Who may share this library's index with this process: None for nobody."""
        if self.services.shared_secrets is not None:
            return host_identity(self.services.secret)
        serve = os.environ.get(SERVE_ID)
        return f"serve {serve}" if serve else None

    async def _initial_scan(self) -> None:
        try:
            report = await self.rescan()
            log.info("local library %s: %s", self.slug, report.summary().splitlines()[0])
        except LibraryUnavailable as error:
            log.error("local library %s: %s; serving the existing index", self.slug, error)
        except ScanCancelled:
            log.info("local library %s: scan stopped at shutdown", self.slug)

    async def shutdown(self) -> None:
        self._stop.set()
        if self.scanner is not None:
            self.scanner.stop.set()
        if self._first_scan is not None:
            if self.progress.waiting:  # for another replica's scan, which may take minutes
                self._first_scan.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self._first_scan  # returns at the next chapter boundary
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watcher
            self._watcher = None
        self.pages_server.close()
        self.thumbnails.close()
        if self._index is not None:
            self._index.close()
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    async def rescan(self, only: set[str] | None = None) -> ScanReport:
        """Bring the index up to date (for ``only`` these top-level entries) in a worker thread."""
        scanner = self.scanner
        if scanner is None:
            raise IndexUnavailable("the source has not started")
        # One scanner of this library at a time in the whole host (a lease, with [cluster] redis):
        # each replica reads the files into its own index, one after the other, so they do not
        # all read a shared folder at once nor claim slugs in an interleaved order.
        async with self._scan_lock:
            self.progress.start()
            self.progress.waiting = True
            try:
                async with self.services.exclusive(f"local-scan:{self.slug}"):
                    self.progress.waiting = False
                    publisher = asyncio.create_task(self._publish_while_scanning())
                    try:
                        report = await asyncio.to_thread(scanner.scan, only, self.progress.update)
                    finally:
                        publisher.cancel()
            finally:
                self.progress.waiting = False
                self.progress.finish()
        self.skipped.note(report.skipped, report.warnings)
        before = self.snapshot.updated_at
        await self._refresh_snapshot()
        if report.changed or self.snapshot.updated_at != before:
            # Cached answers and ETags follow the index at once, not when they expire.
            self.content_changed()
        return report

    async def _publish_while_scanning(self) -> None:
        """What a long scan committed so far shows in answers every few seconds."""
        seen = self.snapshot
        for tick in itertools.count(1):
            await asyncio.sleep(PUBLISH_SECONDS)
            await self._refresh_snapshot()
            if self.snapshot != seen:
                seen = self.snapshot
                self.content_changed()
            if tick % 5 == 0:  # a long scan says how far it is, every 10 s
                log.info("local library %s: %s", self.slug, self.progress.summary())

    async def _refresh_snapshot(self) -> None:
        index = self._require_index()
        self.snapshot = await asyncio.to_thread(index.snapshot)

    async def _watch(self) -> None:
        """Re-index the series the file system says changed, until shutdown."""
        from watchfiles import awatch

        try:
            async for changes in awatch(self.root, stop_event=self._stop, debounce=800, step=100):
                touched: set[str] = set()
                own = self.scanner.own_files if self.scanner else frozenset()
                for _change, raw in changes:
                    if raw in own:
                        continue  # our own index, when it lives inside the library
                    try:
                        relative = Path(raw).relative_to(self.root)
                    except ValueError:
                        continue
                    if relative.parts and not relative.parts[0].startswith("."):
                        touched.add(relative.parts[0])
                if touched:
                    try:
                        await self.rescan(touched)
                    except Exception:  # keep watching; the next change retries
                        log.exception("local library %s: rescan after a change failed", self.slug)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the folder vanished, inotify limits...: serve what we have
            log.error("local library %s: stopped watching the folder (%s)", self.slug, error)

    # -- declaration -------------------------------------------------------------

    def configuration(self) -> SourceConfiguration:
        snapshot = self.snapshot
        tags = [Tag(slug=slug, name=name, nsfw=nsfw) for slug, name, nsfw in snapshot.tags]
        filters = list(BASE_FILTERS)
        if tags:
            filters += [FilterKey.INCLUDE_TAG, FilterKey.EXCLUDE_TAG]
        return SourceConfiguration(
            name=self.settings.name,
            slug=self.slug,
            icon=self.url_for(None, "icon"),
            url=self.services.public_url or "",
            languages=snapshot.languages or [self.settings.default_language],
            nsfw=self.settings.nsfw,
            auth=AuthConfig(type=self.auth.type, required=self.auth.required),
            search=SearchConfig(sort=list(searching.SUPPORTED_SORTS), filters=filters, tags=tags),
            presets=[
                Preset(
                    name="Recently updated",
                    description="Series with the newest chapters first.",
                    request=SearchRequest(page=1, sort=SortOption.LATEST, direction="desc"),
                ),
                Preset(
                    name="Recently added",
                    description="Series added to the library most recently.",
                    request=SearchRequest(page=1, sort=SortOption.CREATED_AT, direction="desc"),
                ),
                Preset(
                    name="A to Z",
                    description="Every series by title.",
                    request=SearchRequest(page=1, sort=SortOption.TITLE, direction="asc"),
                ),
            ],
            updatedAt=_timestamp(snapshot.updated_at) if snapshot.updated_at else None,
        )

    @classmethod
    def commands(cls) -> Sequence[click.Command]:
        from toshokan.sources.local.commands import demo_command, hash_secret_command, scan_command

        return (scan_command, demo_command, hash_secret_command)

    @classmethod
    def embedded_default(cls, data_dir: Path, folder: Path | None) -> dict[str, Any] | None:
        """The folder named, or DATA_DIR/library with sample content written on first run."""
        if folder is None:
            folder = data_dir / "library"
            if not folder.exists():
                from toshokan.sources.local.demo import write_demo_library

                click.echo(f"toshokan: writing sample content to {folder} (first run)", err=True)
                write_demo_library(folder)
        return {"root": str(folder)}

    def routes(self) -> Sequence[BaseRoute]:
        return [*self.pages_server.routes(), *self.thumbnails.routes()]

    async def read_image(self, path: str, ctx: RequestContext) -> Picture | None:
        """Pages, covers and thumbnails, read by the code their routes serve them with."""
        route, params = self.own_route(path) or ("", {})
        if route == "thumbnail":
            return await self.thumbnails.read(params["manga"])
        return await self.pages_server.read_image(route, params)

    # -- content -----------------------------------------------------------------

    def _cover(
        self, ctx: RequestContext, slug: str, version: str | None, route: str = "cover"
    ) -> str:
        return self.url_for(ctx, route, query={"v": version} if version else None, manga=slug)

    async def filter_values(self, key: FilterKey) -> list[str]:
        """Publishers and writers, as ComicInfo and series.json gave them to the index."""
        index = self._require_index()
        return await asyncio.to_thread(lambda: searching.filter_values(index.reader(), key))

    async def search(self, request: SearchRequest, ctx: RequestContext) -> SearchResponse:
        index = self._require_index()
        hits, more = await asyncio.to_thread(lambda: searching.run(index.reader(), request))
        # Lists show many covers at once: they get thumbnails, details the full size.
        thumbnail = self._thumbnail_links(ctx)
        results = [
            Entry(
                slug=hit.slug,
                title=hit.title,
                cover=thumbnail(hit.slug, hit.cover_version) if hit.cover_version else None,
            )
            for hit in hits
        ]
        return SearchResponse(results=results, page=request.page, more=more)

    def _thumbnail_links(self, ctx: RequestContext) -> Callable[[str, str], str]:
        """``(slug, version) -> link`` to a series' thumbnail, for one page of results.

        :meth:`url_for` once, with a stand-in slug, then each series' slug and version put
        in the same places: the route takes a slug as it is and the version is encoded
        as ``url_for`` encodes it, so the links are the same, at a twentieth of the cost
        (making each whole was a third of a search). A signed link (the source requires
        authentication) carries a signature of its own path, so is made whole.
        """
        if self.slug in self.urls(ctx).signed_sources:
            return partial(self._cover, ctx, route="thumbnail")
        head, _, tail = self._cover(ctx, _STAND_IN, None, "thumbnail").rpartition(_STAND_IN)
        return lambda slug, version: f"{head}{slug}{tail}?v={quote_plus(version)}"

    async def manga(self, manga_slug: str, ctx: RequestContext) -> Manga:
        if not is_slug(manga_slug):
            raise MangaNotFound()
        index = self._require_index()
        row = await asyncio.to_thread(index.series_by_slug, manga_slug)
        if row is None:
            raise MangaNotFound()
        genres = json.loads(row["genres"])
        tags = json.loads(row["tags"])
        people = unique([*json.loads(row["writers"]), *json.loads(row["artists"])])
        return Manga(
            slug=row["slug"],
            url=self.urls(ctx).manga(self.slug, row["slug"]),
            title=row["title"],
            alternativeTitles=json.loads(row["alt_titles"]),
            authors=people,
            synopsis=row["synopsis"] or "",
            covers=[self._cover(ctx, row["slug"], row["cover_version"])]
            if row["cover_relpath"]
            else [],
            tags=list(dict.fromkeys(tag_slug(name) for name in [*genres, *tags])),
            classification=Classification(row["classification"]),
            publication=Publication(row["status"]),
            createdAt=_timestamp(row["created_at"]),
            updatedAt=_timestamp(row["updated_at"]),
            readingDirection=row["reading_direction"],
        )

    async def chapters(self, manga_slug: str, ctx: RequestContext) -> list[Chapter]:
        if not is_slug(manga_slug):
            raise MangaNotFound()
        index = self._require_index()

        def load() -> list[sqlite3.Row] | None:
            row = index.series_by_slug(manga_slug)
            return None if row is None else index.chapters_of(row["id"])

        rows = await asyncio.to_thread(load)
        if rows is None:
            raise MangaNotFound()
        urls = self.urls(ctx)
        return [
            Chapter(
                slug=row["slug"],
                url=row["web"] or urls.chapter(self.slug, manga_slug, row["slug"]),
                title=row["title"],
                number=row["number"],
                date=_timestamp(row["date"]),
                language=row["language"],
                scanlator=row["scanlator"],
            )
            for row in rows
        ]

    async def pages(self, manga_slug: str, chapter_slug: str, ctx: RequestContext) -> list[str]:
        row = await self._chapter_row(manga_slug, chapter_slug)
        names = json.loads(row["pages"])
        version = version_of(row["sig"])
        return [
            self.url_for(
                ctx, "page", query={"v": version}, manga=manga_slug, chapter=chapter_slug, number=n
            )
            for n in range(1, len(names) + 1)
        ]

    async def own_pages(
        self, manga_slug: str, chapter_slug: str, ctx: RequestContext
    ) -> OwnPages | None:
        """Read by the code the page route serves them with, from one look at the chapter."""
        return self.pages_server.own_pages(await self._chapter_row(manga_slug, chapter_slug))

    async def _chapter_row(self, manga_slug: str, chapter_slug: str) -> sqlite3.Row:
        """The chapter's row in the index; ``CHAPTER_NOT_FOUND``, or ``MANGA_NOT_FOUND`` when
        the series is not there either."""
        if not (is_slug(manga_slug) and is_slug(chapter_slug)):
            raise ChapterNotFound()
        index = self._require_index()
        row = await asyncio.to_thread(index.chapter, manga_slug, chapter_slug)
        if row is None:
            exists = await asyncio.to_thread(index.series_by_slug, manga_slug)
            raise ChapterNotFound() if exists is not None else MangaNotFound()
        return row

    async def download(
        self, manga_slug: str, chapter_slug: str, ctx: RequestContext
    ) -> Download | None:
        if not (is_slug(manga_slug) and is_slug(chapter_slug)):
            raise ChapterNotFound()
        row = await asyncio.to_thread(self._require_index().chapter, manga_slug, chapter_slug)
        if row is None:
            raise ChapterNotFound()
        version = version_of(row["sig"])
        url = self.url_for(
            ctx, "download", query={"v": version}, manga=manga_slug, chapter=chapter_slug
        )
        if row["kind"] == "dir":  # written as a CBZ while it is sent; its length not known here
            return Download(url, CBZ)
        file_type = archive_media_type(row["relpath"], row["kind"])
        if file_type is None:
            return None
        return Download(url, file_type, scanned_size(row["sig"]))

    async def chapter_of_file(self, digest: str) -> ChapterFile | None:
        return await asyncio.to_thread(self._require_index().chapter_of_file, digest)

    def library_folder(self) -> Path | None:
        """The root: its watcher finds the files written there (kept copies among them)."""
        return self.root

    def activity(self) -> str | None:
        """A running scan's progress, and the files the library cannot use."""
        notes = [self.progress.summary() if self.progress.running else None]
        notes.append(self.skipped.summary())
        return "; ".join(note for note in notes if note) or None

    def _note_problems_in_index(self) -> None:
        rows = self._require_index().problems()
        self.skipped.note(
            [(r["relpath"], r["reason"]) for r in rows if r["severity"] != "warning"],
            [(r["relpath"], r["reason"]) for r in rows if r["severity"] == "warning"],
        )

    async def ping(self) -> None:
        def check() -> None:
            if not self.root.is_dir() or not os.access(self.root, os.R_OK | os.X_OK):
                raise LibraryUnavailable(f"the library folder {self.root} is missing or unreadable")
            os.listdir(self.root)
            self._require_index().check()

        await asyncio.to_thread(check)

    # -- authentication ------------------------------------------------------------

    async def verify_credentials(self, credentials: Credentials) -> bool:
        return await asyncio.to_thread(self.auth.verify, credentials)
