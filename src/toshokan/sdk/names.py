"""What a file or folder name says about a chapter or series, when nothing else does.

Libraries are named by people and by tools (Mylar, Tachiyomi/Mihon downloads,
FMD, HakuNeko...), so the parser is forgiving: it looks for a volume marker, a
chapter marker (or failing that, the last free-standing number), a bracketed
group name, a parenthesised year, and a trailing title after `` - ``. It never
raises: an unparseable name is a chapter with no number, which the rest of the
source treats as 0 (the spec's value for oneshots).
"""

import enum
import functools
import os
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

#: Image types a chapter may contain, by extension, and their media type.
IMAGE_TYPES: dict[str, str] = {
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".jfif": "image/jpeg",
    ".png": "image/png",
    ".webp": "image/webp",
    ".gif": "image/gif",
    ".avif": "image/avif",
    # Served converted to PNG (see toshokan.sdk.archives.displayable).
    ".bmp": "image/bmp",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
}

ZIP_EXTENSIONS = frozenset({".cbz", ".zip"})
SEVENZIP_EXTENSIONS = frozenset({".cb7", ".7z"})
RAR_EXTENSIONS = frozenset({".cbr", ".rar"})
ARCHIVE_EXTENSIONS = ZIP_EXTENSIONS | SEVENZIP_EXTENSIONS | RAR_EXTENSIONS

_NUM = r"(\d+(?:[.,]\d+)?)"
_VOLUME = re.compile(rf"(?<![a-z])(?:vol(?:ume)?|v|tome|t)[ ._-]*{_NUM}", re.I)
_CHAPTER = re.compile(
    rf"(?<![a-z])(?:ch(?:apter|ap)?|c|ep(?:isode)?|e|#|episodio|kapitel|cap(?:itulo|[íi]tulo)?)"
    rf"[ ._-]*{_NUM}",
    re.I,
)
#: Chinese/Japanese ``第01話`` (and 话, 回, 章, 集), Korean ``01화``; volumes ``第1巻``, ``1권``.
_CJK_CHAPTER = re.compile(rf"(?:第\s*)?{_NUM}\s*(?:話|话|回|章|集|화)")
_CJK_VOLUME = re.compile(rf"(?:第\s*)?{_NUM}\s*(?:巻|卷|권)")
_ONESHOT = re.compile(r"\b(?:one[ -_]?shot|oneshot)\b", re.I)
_TAGS = re.compile(r"\[([^\]]*)\]|\(([^)]*)\)|\{([^}]*)\}")
_YEAR = re.compile(r"^\s*((?:19|20)\d\d)\s*$")
_LOOSE_NUMBER = re.compile(rf"(?<![\w.]){_NUM}(?![\w])")
_PURE_NUMBER = re.compile(rf"^\s*#?{_NUM}\s*$")
_NATURAL = re.compile(r"(\d+)")
#: ``[v2]`` in a scanlation name is the release's second version, not volume 2.
_REVISION = re.compile(r"^v\d+$", re.I)
#: Mihon/Tachiyomi downloads: ``<scanlator>_<chapter name>``, as a folder of images or a
#: ``.cbz``, the chapter name starting with any chapter or volume word the parser reads.
_MIHON = re.compile(
    r"^([^_\[\](){}]+?)_((?:(?:vol(?:ume)?|ch(?:apter|ap)?|cap(?:itulo|[íi]tulo)?|"
    r"ep(?:isode|isodio)?|kapitel|one[ -]?shot)\b|#\s*\d).*)$",
    re.I,
)
#: Mihon writes each of ``"*/:<>?\|`` in a chapter name as ``_``: ``Chapter 13_ The Title``.
_MIHON_COLON = re.compile(r"_(?=\s)")
#: Bracketed words that describe the release, not who made it.
_NOT_GROUP = re.compile(
    r"^(?:digital(?:[ -]?(?:edition|rip))?|webrip|web|hq|lq|hd|high ?quality|c2c|"
    r"colou?r(?:ed)?|official|complete|completed|raw|raws|fixed|decensored|uncensored|"
    r"mag(?:azine)?|tankobon|\d{3,4}p|of \d+|\d+ of \d+|v\d+|f\d*|ongoing|end|final|"
    r"[a-z]{2,3}(?:[-_][a-z0-9]{2,4})?-scan)$",
    re.I,
)

#: ISO 639-1 codes a bracket may name, and the language names tools write out.
LANGUAGE_CODES = frozenset(
    [
        "ar",
        "bg",
        "bn",
        "ca",
        "cs",
        "da",
        "de",
        "el",
        "en",
        "es",
        "et",
        "fa",
        "fi",
        "fr",
        "he",
        "hi",
        "hr",
        "hu",
        "id",
        "it",
        "ja",
        "ka",
        "kk",
        "ko",
        "lt",
        "lv",
        "mn",
        "ms",
        "my",
        "nb",
        "ne",
        "nl",
        "no",
        "pl",
        "pt",
        "ro",
        "ru",
        "sk",
        "sl",
        "sq",
        "sr",
        "sv",
        "ta",
        "te",
        "th",
        "tl",
        "tr",
        "uk",
        "ur",
        "uz",
        "vi",
        "zh",
    ]
)
LANGUAGE_NAMES = {
    "english": "en",
    "spanish": "es",
    "espanol": "es",
    "español": "es",
    "french": "fr",
    "francais": "fr",
    "français": "fr",
    "german": "de",
    "deutsch": "de",
    "italian": "it",
    "italiano": "it",
    "portuguese": "pt",
    "portugues": "pt",
    "português": "pt",
    "brazilian": "pt-BR",
    "russian": "ru",
    "japanese": "ja",
    "korean": "ko",
    "chinese": "zh",
    "indonesian": "id",
    "vietnamese": "vi",
    "thai": "th",
    "polish": "pl",
    "turkish": "tr",
    "arabic": "ar",
}
_LANGUAGE_TAG = re.compile(r"^([a-z]{2})(?:[-_]([a-z]{2}|\d{3}|hant|hans))?$", re.I)


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
    #: A language tag such as ``es`` or ``pt-BR`` from ``(es)``/``[pt-BR]``, else "".
    language: str = ""

    @property
    def reading_number(self) -> float | None:
        """The number a reader sees: the chapter's, else the volume's (``v01`` is 1)."""
        return self.number if self.number is not None else self.volume


@functools.lru_cache(maxsize=8192)
def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key giving ``2.jpg`` before ``10.jpg`` (and ``a2`` before ``a10``).

    Remembered: page names repeat from one archive to the next (``001.jpg``), and a
    scan sorts the pages of every chapter it reads."""
    parts = _NATURAL.split(name.lower())
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts if p)


def is_image_name(name: str) -> bool:
    # os.path.splitext(name)[1], without its generic steps: a scan asks this of every
    # entry of every archive.
    start = name.rfind("/") + 1
    dot = name.rfind(".")
    if dot <= start or not name[start:dot].strip("."):
        return False  # no dot in the last part, or only the leading dots of a hidden file
    return name[dot:].lower() in IMAGE_TYPES


def media_type(name: str) -> str:
    return IMAGE_TYPES.get(os.path.splitext(name)[1].lower(), "application/octet-stream")


def _number(text: str) -> float | None:
    try:
        value = float(text.replace(",", "."))
    except ValueError:
        return None
    return value if 0 <= value < 1e9 else None


#: Where a name splits into series, number and title: a spaced dash (also en and em
#: dashes, a tilde) or a colon.
_SEGMENT_BREAK = re.compile(r"\s+[-\u2013\u2014~]\s+|\s*:\s+")
_BREAK_CHARACTER = re.compile(r"[-\u2013\u2014~:]")


def _clean(text: str) -> str:
    # Underscores and runs of white space become single spaces (those at the ends go too,
    # as the strip would take them).
    return " ".join(text.replace("_", " ").split()).strip(" -._~:")


def language_tag(text: str) -> str | None:
    """``es``, ``pt-BR``, ``es-419``, ``zh-Hant`` or a spelled-out name; None if not a language."""
    word = text.strip()
    named = LANGUAGE_NAMES.get(word.lower())
    if named:
        return named
    found = _LANGUAGE_TAG.match(word)
    if not found or found.group(1).lower() not in LANGUAGE_CODES:
        return None
    base, region = found.group(1).lower(), found.group(2)
    if not region:
        return base
    if region.isdigit():
        return f"{base}-{region}"
    return f"{base}-{region.title()}" if len(region) == 4 else f"{base}-{region.upper()}"


@dataclass
class _Tags:
    """What the bracketed parts of a name said."""

    groups: list[str]
    year: int | None = None
    volume: float | None = None
    language: str = ""


def _read_tags(stem: str) -> _Tags:
    tags = _Tags(groups=[])
    later: list[str] = []  # parenthesised candidates, used only when no [group] is given
    for found in _TAGS.finditer(stem):
        square, paren, brace = found.groups()
        inner = (square if square is not None else paren if paren is not None else brace) or ""
        meaning, value = _tag_meaning(inner.strip(), square is not None)
        if meaning is _Tag.YEAR:
            tags.year = value
        elif meaning is _Tag.LANGUAGE:
            tags.language = tags.language or value
        elif meaning is _Tag.VOLUME:
            tags.volume = value
        elif meaning is _Tag.GROUP:
            if square is not None:
                tags.groups.append(value)
            elif paren is not None and found.start() > 0:
                later.append(value)
    if not tags.groups:
        tags.groups = later[-1:]  # Mylar: ``Title 001 (2019) (Digital) (Group)``
    return tags


class _Tag(enum.Enum):
    """What one bracketed part of a name is."""

    NOTHING = "nothing"
    YEAR = "year"
    LANGUAGE = "language"
    VOLUME = "volume"
    GROUP = "group"


@functools.lru_cache(maxsize=1024)
def _tag_meaning(inner: str, square: bool) -> tuple[_Tag, Any]:
    """What a bracketed part (stripped) says, and its value. Remembered: one group's or
    language's tag names every chapter of a series, and a scan reads them all."""
    if not inner:
        return _Tag.NOTHING, None
    year = _YEAR.match(inner)
    if year:
        return _Tag.YEAR, int(year.group(1))
    language = language_tag(inner)
    if language:
        return _Tag.LANGUAGE, language
    volume = _VOLUME.fullmatch(inner)
    if volume and (not square or not _REVISION.match(inner)):
        return _Tag.VOLUME, _number(volume.group(1))
    if _NOT_GROUP.match(inner) or _PURE_NUMBER.match(inner):
        return _Tag.NOTHING, None
    return _Tag.GROUP, inner


def _mark(text: str, match: re.Match[str]) -> str:
    """``text`` with the match blanked out (positions kept)."""
    return text[: match.start()] + " " * (match.end() - match.start()) + text[match.end() :]


def parse_chapter_name(filename: str) -> NameInfo:
    """What ``One Piece - c1000 (v97) [Digital] [1r0n].cbz`` style names say.

    Handles scanlation releases, tool layouts (Mihon ``Group_Chapter 11``, Mylar,
    FMD, HakuNeko), CJK markers (``第01話``), language tags and release tags that
    are not groups. The extension is dropped only when it is an archive's, so a
    folder named ``Ch.1.5`` keeps its decimal. Never raises.
    """
    stem = unicodedata.normalize("NFKC", filename)
    dot = stem.rfind(".")
    suffix = stem[dot:].lower() if dot > 0 else ""  # PurePath's suffix, without a PurePath
    if suffix in ARCHIVE_EXTENSIONS:
        stem = stem[: -len(suffix)]

    mihon_group = ""
    mihon = _MIHON.match(stem) if "_" in stem else None  # it takes an underscore
    if mihon:
        mihon_group, stem = mihon.group(1).strip(), _MIHON_COLON.sub(":", mihon.group(2))

    tags = _read_tags(stem)
    group = mihon_group or (tags.groups[0] if tags.groups else "")
    bare = _TAGS.sub(" ", stem)

    # Every break holds one of these characters; a name without any needs no split.
    segments = _SEGMENT_BREAK.split(bare) if _BREAK_CHARACTER.search(bare) else [bare]
    volume: float | None = tags.volume
    number: float | None = None
    series_parts: list[str] = []
    title = ""
    found_at: int | None = None
    for index, segment in enumerate(segments):
        text = segment
        # The CJK markers are no ASCII: most names need not be searched for them.
        ascii = text.isascii()
        volume_match = _VOLUME.search(text) or (None if ascii else _CJK_VOLUME.search(text))
        chapter_match = _CHAPTER.search(text) or (None if ascii else _CJK_CHAPTER.search(text))
        if volume_match and (
            chapter_match is None or volume_match.start() != chapter_match.start()
        ):
            volume = _number(volume_match.group(1))
            text = _mark(text, volume_match)
        if chapter_match:
            number = _number(chapter_match.group(1))
        marker = volume_match or chapter_match
        if marker:
            first = (
                min(volume_match.start(), chapter_match.start())
                if volume_match and chapter_match
                else marker.start()
            )
            series_parts.append(segment[:first])
            found_at = index
            break
        series_parts.append(segment)
    if found_at is None:
        # No marker: ``Series 097``, ``Series - 012``, ``Series - 012 - Title``.
        series_parts = []
        for index, segment in enumerate(segments):
            pure = _PURE_NUMBER.match(segment)
            if pure and index > 0:
                number, found_at = _number(pure.group(1)), index
                break
            loose = list(_LOOSE_NUMBER.finditer(segment))
            if loose and (index > 0 or len(segments) == 1 or not _has_later_number(segments)):
                last = loose[-1]
                number, found_at = _number(last.group(1)), index
                series_parts.append(segment[: last.start()])
                break
            series_parts.append(segment)
    if found_at is not None and found_at + 1 < len(segments):
        title = _clean(" - ".join(s for s in segments[found_at + 1 :] if _clean(s)))
    # Any match holds "shot" in some case; an ASCII name without it need not be searched.
    oneshot = ("shot" in stem.lower() or not stem.isascii()) and bool(_ONESHOT.search(stem))
    # "Kimi ni Todoke - Oneshot": the marker, set apart, is not the series' name; in
    # "Lone Oneshot" the word is part of the name (a lone file's name is its series').
    cleaned = [_clean(s) for s in series_parts]
    series = _clean(" - ".join([c for c in cleaned if c and not _ONESHOT.fullmatch(c)]))
    if oneshot:
        if number is None:
            number = 0.0
        if title.lower().replace(" ", "").replace("-", "") == "oneshot":
            title = ""
        if found_at is None:
            title = ""
    # NameInfo(...) as its __init__ would make it, but for the instance dict filled at once:
    # a frozen dataclass's __init__ sets each field through object.__setattr__, a tenth of
    # parsing a name. The same object for ==, hash, repr and pickling.
    info = object.__new__(NameInfo)
    info.__dict__.update(
        series=series,
        number=number,
        volume=volume,
        title=title,
        group=group,
        year=tags.year,
        oneshot=oneshot,
        language=tags.language,
    )
    return info


def _has_later_number(segments: list[str]) -> bool:
    return any(_LOOSE_NUMBER.search(s) for s in segments[1:])


@dataclass(frozen=True)
class SeriesName:
    title: str
    year: int | None


def parse_series_name(name: str) -> SeriesName:
    """A series folder's display title: ``One Piece (1997) [Digital]`` -> ``One Piece``, 1997."""
    bare = _clean(_TAGS.sub(" ", name))
    return SeriesName(title=bare or _clean(name) or name, year=_read_tags(name).year)


def format_number(number: float) -> str:
    """``11.5`` -> ``11.5``, ``12.0`` -> ``12`` (for titles and slugs)."""
    return str(int(number)) if float(number).is_integer() else f"{number:g}"
