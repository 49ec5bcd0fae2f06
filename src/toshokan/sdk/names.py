"""What a file or folder name says about a chapter or series, when nothing else does.

Libraries are named by people and by tools (Mylar, Tachiyomi/Mihon downloads,
FMD, HakuNeko...), so the parser is forgiving: it looks for a volume marker, a
chapter marker (or failing that, the last free-standing number), a bracketed
group name, a parenthesised year, and a trailing title after `` - ``. It never
raises: an unparseable name is a chapter with no number, which the rest of the
source treats as 0 (the spec's value for oneshots).
"""

import re
from dataclasses import dataclass
from pathlib import PurePath

#: Image types a chapter may contain, by extension, and their media type.
IMAGE_TYPES: dict[str, str] = {
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".jfif": "image/jpeg",
    ".png": "image/png",
    ".webp": "image/webp",
    ".gif": "image/gif",
    ".avif": "image/avif",
}

ZIP_EXTENSIONS = frozenset({".cbz", ".zip"})
SEVENZIP_EXTENSIONS = frozenset({".cb7", ".7z"})
RAR_EXTENSIONS = frozenset({".cbr", ".rar"})
ARCHIVE_EXTENSIONS = ZIP_EXTENSIONS | SEVENZIP_EXTENSIONS | RAR_EXTENSIONS

_NUM = r"(\d+(?:[.,]\d+)?)"
_VOLUME = re.compile(rf"(?<![a-z])(?:vol(?:ume)?|v|tome|t)[ ._-]*{_NUM}", re.I)
_CHAPTER = re.compile(
    rf"(?<![a-z])(?:ch(?:apter|ap)?|c|ep(?:isode)?|e|#|episodio|kapitel)[ ._-]*{_NUM}", re.I
)
_ONESHOT = re.compile(r"\b(?:one[ -_]?shot|oneshot)\b", re.I)
_BRACKETS = re.compile(r"\[([^\]]*)\]")
_PARENS = re.compile(r"\(([^)]*)\)")
_YEAR = re.compile(r"^\s*((?:19|20)\d\d)\s*$")
_LOOSE_NUMBER = re.compile(rf"(?<![\w.]){_NUM}(?![\w])")
_NATURAL = re.compile(r"(\d+)")


@dataclass(frozen=True)
class NameInfo:
    """What a chapter file name tells us; every field may be missing."""

    series: str
    number: float | None
    volume: float | None
    title: str
    group: str
    year: int | None
    oneshot: bool


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key giving ``2.jpg`` before ``10.jpg`` (and ``a2`` before ``a10``)."""
    parts = _NATURAL.split(name.lower())
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts if p)


def is_image_name(name: str) -> bool:
    return PurePath(name).suffix.lower() in IMAGE_TYPES


def media_type(name: str) -> str:
    return IMAGE_TYPES.get(PurePath(name).suffix.lower(), "application/octet-stream")


def _number(text: str) -> float | None:
    try:
        value = float(text.replace(",", "."))
    except ValueError:
        return None
    return value if value >= 0 and value == value and value != float("inf") else None


def _clean(text: str) -> str:
    text = re.sub(r"[_]+", " ", text)
    text = re.sub(r"\s+", " ", text)
    return text.strip(" -._~")


def parse_chapter_name(filename: str) -> NameInfo:
    """Parse ``Vol.02 Ch.011.5 - Title [Group].cbz`` style names.

    The extension is dropped only when it is an archive's, so a folder named
    ``Ch.1.5`` keeps its decimal.
    """
    stem = filename
    suffix = PurePath(filename).suffix.lower()
    if suffix in ARCHIVE_EXTENSIONS:
        stem = filename[: -len(suffix)]

    groups = [g.strip() for g in _BRACKETS.findall(stem) if g.strip()]
    year: int | None = None
    for inner in _PARENS.findall(stem):
        found = _YEAR.match(inner)
        if found:
            year = int(found.group(1))
    group = groups[0] if groups else ""
    bare = _PARENS.sub(" ", _BRACKETS.sub(" ", stem))

    title = ""
    head = bare
    if " - " in bare:
        head, _, tail = bare.partition(" - ")
        title = _clean(tail)

    volume_match = _VOLUME.search(head)
    volume = _number(volume_match.group(1)) if volume_match else None
    chapter_match = _CHAPTER.search(head)
    number = _number(chapter_match.group(1)) if chapter_match else None

    series_end = len(head)
    for match in (volume_match, chapter_match):
        if match:
            series_end = min(series_end, match.start())
    if number is None:
        rest = head
        if volume_match:
            rest = (
                head[: volume_match.start()]
                + " " * len(volume_match.group(0))
                + head[volume_match.end() :]
            )
        loose = [m for m in _LOOSE_NUMBER.finditer(rest)]
        if loose:
            last = loose[-1]
            number = _number(last.group(1))
            series_end = min(series_end, last.start())
    if number is None and " - " in bare and not title_has_marker(title):
        # "Series - 012" puts the number after the dash.
        loose_title = _LOOSE_NUMBER.fullmatch(title.strip())
        if loose_title:
            number = _number(loose_title.group(1))
            title = ""
    oneshot_match = _ONESHOT.search(head)
    if oneshot_match:
        series_end = min(series_end, oneshot_match.start())
    oneshot = bool(oneshot_match or _ONESHOT.search(stem))
    if oneshot and number is None:
        number = 0.0
    if oneshot and title.lower().replace(" ", "").replace("-", "") == "oneshot":
        title = ""
    series = _clean(head[:series_end])
    return NameInfo(
        series=series,
        number=number,
        volume=volume,
        title=title,
        group=group,
        year=year,
        oneshot=oneshot,
    )


def title_has_marker(title: str) -> bool:
    return bool(_CHAPTER.search(title) or _VOLUME.search(title))


@dataclass(frozen=True)
class SeriesName:
    title: str
    year: int | None


def parse_series_name(name: str) -> SeriesName:
    """A series folder's display title: ``One Piece (1997) [Digital]`` -> ``One Piece``, 1997."""
    year: int | None = None
    for inner in _PARENS.findall(name):
        found = _YEAR.match(inner)
        if found:
            year = int(found.group(1))
    bare = _clean(_PARENS.sub(" ", _BRACKETS.sub(" ", name)))
    return SeriesName(title=bare or _clean(name) or name, year=year)


def format_number(number: float) -> str:
    """``11.5`` -> ``11.5``, ``12.0`` -> ``12`` (for titles and slugs)."""
    return str(int(number)) if float(number).is_integer() else f"{number:g}"
