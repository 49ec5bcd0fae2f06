"""Finding what is on disk, without opening anything.

The walk lists every series and chapter candidate under the library root
with a cheap signature (size and mtime, or for an image folder, the sizes and
mtimes of its files), so a rescan can tell which chapters changed without
reading them. Anything that cannot be a chapter is noted with a reason
instead of raising: one odd file must not hide the rest of the library. Only
an unreadable root is an error, because then there is nothing to report on.

Symlinks are followed only while they stay inside the root, and every real
folder is entered once, so a link loop or a link to ``/`` cannot make a scan
endless or expose files the user did not put in the library.
"""

import gc
import hashlib
import json
import os
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from pathlib import Path
from typing import TypeAlias

from toshokan.sdk.archives import kind_of
from toshokan.sdk.names import is_image_name

#: How many folder levels below a series folder are still searched for chapters.
MAX_DEPTH = 6
#: Image names (without extension) taken as a series cover rather than a page.
COVER_STEMS = ("cover", "folder", "poster")


class LibraryUnavailable(Exception):
    """The library root itself cannot be read."""


@dataclass(slots=True)
class FoundChapter:
    """A chapter candidate: an archive, or a folder holding page images."""

    relpath: str
    #: ``dir`` for an image folder, otherwise the archive kind from :func:`kind_of`.
    kind: str
    #: Changes whenever the chapter's content may have changed; equal means "skip it".
    sig: str
    mtime: float

    def __reduce__(self) -> tuple[type["FoundChapter"], tuple[str, str, str, float]]:
        # Pickled for a scan's reading processes as the call that makes it: a slotted
        # dataclass's own state functions cost the scan a microsecond a chapter.
        return FoundChapter, (self.relpath, self.kind, self.sig, self.mtime)


_NO_META_SIG = json.dumps([None, None])


#: The archives that are plain files in one folder, as its listing and stat gave them, in
#: its order: the folder's relpath, the files' names joined by ``/`` (which no name holds),
#: and each file's modification time (nanoseconds) and size in turn. Three objects a
#: folder, not several a file, for a rescan to make, free and have collected.
Archives: TypeAlias = "tuple[str, str, array[int]]"


def seconds(mtime_ns: int) -> float:
    """A modification time in seconds, the same float as ``os.stat_result.st_mtime``."""
    whole, fraction = divmod(mtime_ns, 1_000_000_000)
    return whole + fraction * 1e-9


@dataclass
class FoundSeries:
    """A top-level folder (or a lone archive in the root) and the chapters under it."""

    relpath: str
    #: A single archive directly in the root, which is its own series.
    is_file: bool
    #: Most chapters, kept as the walk found them: a rescan digests these raw values and
    #: makes a :class:`FoundChapter` of each only for a series whose digest changed.
    archives: list[Archives] = field(default_factory=list)
    #: The other chapters (image folders, archives reached through a link), in a tuple: a
    #: series seldom has any, and an empty tuple is no new object.
    others: tuple[FoundChapter, ...] = ()
    #: ``(relpath, signature)`` of the series folder's series.json, if any.
    series_json: tuple[str, str] | None = None
    #: ``(relpath, signature)`` of the series folder's cover image, if any.
    cover: tuple[str, str] | None = None

    @cached_property
    def chapters(self) -> list[FoundChapter]:
        """Every chapter candidate: each folder's archives by name, then the others."""
        return [
            FoundChapter(
                f"{rel}/{name}", _kind(name) or "", signature(size, mtime_ns), seconds(mtime_ns)
            )
            for rel, names, numbers in self.archives
            for name, mtime_ns, size in sorted(
                zip(names.split("/"), numbers[::2], numbers[1::2], strict=True)
            )
        ] + list(self.others)

    @property
    def meta_sig(self) -> str:
        """Changes when series.json or the cover changed, so the series row is rebuilt."""
        if self.series_json is None and self.cover is None:
            return _NO_META_SIG  # most series: no call to the encoder for each
        return json.dumps([self.series_json, self.cover])


#: :func:`kind_of` of each extension met so far, as spelled: the walk asks it of every
#: file, and a dictionary look-up costs less than a call.
_SUFFIX_KINDS: dict[str, str | None] = {}
#: Those of them that are an archive's, for the walk's loop to test with ``in`` (no call).
_ARCHIVE_SUFFIXES: set[str] = set()
#: Extensions remembered at most; past that the walk asks :func:`kind_of` itself.
MAX_SUFFIXES = 512


def _kind(name: str) -> str | None:
    """:func:`kind_of`, remembered per extension."""
    dot = name.rfind(".")
    if dot <= 0:
        return None
    suffix = name[dot:]
    if suffix in _SUFFIX_KINDS:
        return _SUFFIX_KINDS[suffix]
    kind = kind_of("x" + suffix.lower())
    if len(_SUFFIX_KINDS) < MAX_SUFFIXES:
        _SUFFIX_KINDS[suffix] = kind
        if kind:
            _ARCHIVE_SUFFIXES.add(suffix)
    return kind


def signature(size: int, mtime_ns: int) -> str:
    """A file's cheap change signature: size and nanosecond mtime. The one spelling of
    it, whether the numbers come from a stat or from a walk's raw listing, so a chapter
    found either way compares equal with the index. It takes the two numbers, not a
    stat, so a stat is signed in one call too (a rescan signs every cover and series.json)."""
    return f"{size}:{mtime_ns}"


def signature_mtime(sig: str) -> float:
    """The modification time (seconds) a :func:`signature` holds."""
    return int(sig.rsplit(":", 1)[1]) / 1e9


def is_inside(path: Path, root: Path) -> bool:
    """Whether ``path``, with links resolved, lies under ``root`` (itself resolved)."""
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):
        return False


def link_problem(entry: os.DirEntry[str], root: Path) -> str | None:
    """Why a symlink must not be followed, or None when it is fine (or not a link)."""
    if not entry.is_symlink():
        return None
    target = Path(entry.path)
    if not target.exists():
        return "broken symlink"
    if not is_inside(target, root):
        return "symlink points outside the library root; not followed"
    return None


def _real_path(entry: os.DirEntry[str]) -> str:
    """A folder's path with links resolved. Walks start at the resolved root, so a
    folder reached without a link is already there: no lstat of every path part."""
    return str(Path(entry.path).resolve()) if entry.is_symlink() else entry.path


_by_name = attrgetter("name")


def _sorted_entries(folder: Path | str) -> list[os.DirEntry[str]]:
    """A folder's entries by name, so walks (and so reports) are deterministic."""
    return sorted(os.scandir(folder), key=_by_name)


@dataclass
class _LoosePages:
    """Images and ComicInfo.xml directly in one folder: together, one ``dir`` chapter."""

    images: list[tuple[str, int, int]] = field(default_factory=list)
    comicinfo: tuple[int, int] | None = None

    def as_chapter(self, relpath: str) -> FoundChapter | None:
        if not self.images:
            return None
        listing = json.dumps([self.images, self.comicinfo]).encode()
        digest = hashlib.sha1(listing).hexdigest()[:20]
        mtime = max(m for _, _, m in self.images) / 1e9
        return FoundChapter(relpath, "dir", f"dir:{digest}", mtime)


class LibraryWalk:
    """One walk of the library root; :meth:`run` returns what was found and what was skipped."""

    def __init__(
        self,
        root: Path,
        own_files: frozenset[str],
        on_series: Callable[[FoundSeries], None] | None = None,
    ):
        self.root = root
        #: The index's own files, never taken for library content if kept inside the root.
        self.own_files = own_files
        #: Their names, of those inside the root: a path is compared only when its name is
        #: one of them, and no name is looked up when none is inside (the usual case).
        inside = str(root) + os.sep
        self.own_names = frozenset(
            os.path.basename(path) for path in own_files if path.startswith(inside)
        )
        self.found: dict[str, FoundSeries] = {}
        #: relpath -> why it was skipped while walking.
        self.problems: dict[str, str] = {}
        #: Real paths of folders already entered, to break symlink loops.
        self.visited: set[str] = set()
        #: The other chapters (see :attr:`FoundSeries.others`) of the series folder being
        #: walked, in a list while it grows: made a tuple once, at the folder's end, not
        #: one tuple more each (a series of hundreds of image folders made hundreds).
        self.others: list[FoundChapter] = []
        #: Called with each series as soon as it is found whole, in the walk's order.
        self.on_series = on_series

    def run(self, only: set[str] | None = None) -> tuple[dict[str, FoundSeries], dict[str, str]]:
        """Every series and chapter candidate, and the files skipped while walking.

        ``only`` limits the walk to these top-level names.
        """
        try:
            entries = _sorted_entries(self.root)
        except OSError as error:
            raise LibraryUnavailable(
                f"the library folder {self.root} cannot be read ({error.strerror})"
            ) from None
        self.visited.add(str(self.root))
        for entry in entries:
            if entry.name.startswith(".") or (only is not None and entry.name not in only):
                continue
            if entry.path in self.own_files:
                continue
            try:
                self._top_level_entry(entry)
            except OSError as error:
                self.problems[entry.name] = f"cannot be read ({error.strerror})"
        return self.found, self.problems

    def _top_level_entry(self, entry: os.DirEntry[str]) -> None:
        """A folder in the root is a series; an archive in the root is a one-chapter series."""
        rel = entry.name
        problem = link_problem(entry, self.root)
        if problem:
            self.problems[rel] = problem
        elif entry.is_dir():
            self._series_folder(entry, rel)
        elif entry.is_file():
            kind = kind_of(entry.name)
            if kind:
                stat = entry.stat()
                chapter = FoundChapter(
                    rel, kind, signature(stat.st_size, stat.st_mtime_ns), stat.st_mtime
                )
                series = FoundSeries(rel, True, others=(chapter,))
                self.found[rel] = series
                if self.on_series is not None:
                    self.on_series(series)
            elif is_image_name(entry.name):
                self.problems[rel] = "image directly in the library root; put pages in a folder"
            else:
                self.problems[rel] = "not a chapter: unsupported file type"

    def _series_folder(self, entry: os.DirEntry[str], rel: str) -> None:
        series = FoundSeries(rel, False)
        self.others = []  # none left by a series folder whose walk was cut short
        self.visited.add(_real_path(entry))
        self._walk_folder(entry.path, rel, series, 0)
        if self.others:
            series.others = tuple(self.others)
        if series.archives or series.others:
            self.found[rel] = series
            if self.on_series is not None:
                self.on_series(series)
        elif not self._has_problem_under(rel):
            # Say why an empty-looking series is missing, unless its contents already do.
            self.problems[rel] = "series folder has no chapters"

    def _has_problem_under(self, rel: str) -> bool:
        return any(p == rel or p.startswith(rel + "/") for p in self.problems)

    def _walk_folder(self, folder: str, rel: str, series: FoundSeries, depth: int) -> None:
        """Collect chapters from ``folder`` (``depth`` levels below the series folder)."""
        try:
            entries = list(os.scandir(folder))
        except OSError as error:
            self.problems[rel] = f"folder cannot be listed ({error.strerror})"
            return
        own_files, own_names = self.own_files, self.own_names
        names: list[str] = []
        numbers = array("q")
        add_name, add_number = names.append, numbers.append
        others: list[os.DirEntry[str]] = []
        archive_suffixes = _ARCHIVE_SUFFIXES
        for entry in entries:
            name = entry.name
            if name[0] == "." or (own_names and name in own_names and entry.path in own_files):
                continue
            try:
                # The common case, an archive that is a plain file, inline and in the
                # listing's order: a rescan of an unchanged library is mostly this loop,
                # 100,000 times, and keeps only the name and the stat's two numbers (see
                # Archives). Most chapters end in a four-character extension (.cbz, .zip,
                # .cbr, .pdf): their last four characters are looked up among the
                # archives' extensions, which they can only match when they are one. A
                # regular file, not a link: the file type the listing gave, no system call.
                if (name[-4:] in archive_suffixes or _kind(name)) and entry.is_file(
                    follow_symlinks=False
                ):
                    stat = entry.stat()
                    add_number(stat.st_mtime_ns)  # first: a time past 2262 fits no array
                    add_number(stat.st_size)
                    add_name(name)
                else:
                    others.append(entry)
            except OverflowError:
                others.append(entry)
            except OSError as error:
                self.problems[f"{rel}/{name}"] = f"cannot be read ({error.strerror})"
        if names:
            series.archives.append((rel, "/".join(names), numbers))
        if others:
            self._other_entries(sorted(others, key=_by_name), rel, series, depth)

    def _other_entries(
        self, entries: list[os.DirEntry[str]], rel: str, series: FoundSeries, depth: int
    ) -> None:
        """What else a folder holds, by name (the first cover by name wins): subfolders,
        pages, a cover, series.json, ComicInfo.xml, links, unusable files."""
        pages = _LoosePages()
        for entry in entries:
            erel = f"{rel}/{entry.name}"
            try:
                self._folder_entry(entry, erel, series, pages, depth)
            except OSError as error:
                self.problems[erel] = f"cannot be read ({error.strerror})"
        chapter = pages.as_chapter(rel)
        if chapter is not None:
            self.others.append(chapter)

    def _folder_entry(
        self,
        entry: os.DirEntry[str],
        erel: str,
        series: FoundSeries,
        pages: _LoosePages,
        depth: int,
    ) -> None:
        problem = link_problem(entry, self.root)
        if problem:
            self.problems[erel] = problem
        elif entry.is_dir():
            self._subfolder(entry, erel, series, depth)
        elif not entry.is_file():
            self.problems[erel] = "not a regular file"
        else:
            self._file_in_folder(entry, erel, series, pages, depth)

    def _subfolder(
        self, entry: os.DirEntry[str], erel: str, series: FoundSeries, depth: int
    ) -> None:
        real = _real_path(entry)
        if real in self.visited:
            self.problems[erel] = "folder already scanned (symlink loop); skipped"
        elif depth >= MAX_DEPTH:
            self.problems[erel] = f"folder nested deeper than {MAX_DEPTH} levels; skipped"
        else:
            self.visited.add(real)
            self._walk_folder(entry.path, erel, series, depth + 1)

    def _file_in_folder(
        self,
        entry: os.DirEntry[str],
        erel: str,
        series: FoundSeries,
        pages: _LoosePages,
        depth: int,
    ) -> None:
        """An archive chapter, a page, a cover, series.json, ComicInfo.xml, or a problem."""
        name = entry.name
        stat = entry.stat()
        lower = name.lower()
        kind = kind_of(name)
        if kind:
            self.others.append(
                FoundChapter(erel, kind, signature(stat.st_size, stat.st_mtime_ns), stat.st_mtime)
            )
        elif is_image_name(name):
            stem = lower.rsplit(".", 1)[0]
            if depth == 0 and stem in COVER_STEMS:
                # "cover" wins over "folder"/"poster"; otherwise the first by name.
                if series.cover is None or stem == "cover":
                    series.cover = (erel, signature(stat.st_size, stat.st_mtime_ns))
                return
            pages.images.append((name, stat.st_size, stat.st_mtime_ns))
        elif depth == 0 and lower == "series.json":
            series.series_json = (erel, signature(stat.st_size, stat.st_mtime_ns))
        elif lower == "comicinfo.xml":
            pages.comicinfo = (stat.st_size, stat.st_mtime_ns)
        else:
            self.problems[erel] = "not a chapter or page: unsupported file type"


def walk(
    root: Path,
    own_files: frozenset[str],
    only: set[str] | None = None,
    on_series: Callable[[FoundSeries], None] | None = None,
) -> tuple[dict[str, FoundSeries], dict[str, str]]:
    """Every series and chapter candidate under ``root``, and the files skipped while walking.

    ``on_series`` is called with each series as soon as the walk has it whole, by name
    (a first scan starts reading its chapters then, while the walk goes on).

    The cycle collector is paused meanwhile: a walk makes no cycles, and the collections
    its allocations set off (over the whole process, the host's objects included) were
    about a tenth of an unchanged rescan when it kept an object per chapter (it keeps a
    few per folder now). What other threads leave meanwhile is collected when it is back
    on, within the walk's second or so.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return LibraryWalk(root, own_files, on_series).run(only)
    finally:
        if collecting:
            gc.enable()
