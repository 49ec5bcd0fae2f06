"""``ComicInfo.xml``: the metadata most comic tools write into archives.

The file comes from strangers' archives, so it is parsed with no DTD at all (so
no entity expansion, no external entities) and only when it is smaller than a
cap; anything refused or malformed becomes a :class:`MetadataError` whose
message the scan summary shows, and the chapter falls back to its file name.

A first scan parses one per chapter, so the parser is expat itself, keeping only
the text of ``<ComicInfo>``'s children: building a tree for each (as ElementTree
and defusedxml do) was a fifth of reading a chapter.
"""

from dataclasses import dataclass, field
from datetime import UTC, datetime
from xml.parsers import expat

#: Default cap on the size of a ComicInfo.xml; real ones are a few kilobytes.
MAX_COMICINFO_BYTES = 256 * 1024

#: Names kept per list field (genres, tags, each creator role), and characters per name.
MAX_LIST_ITEMS = 100
MAX_ITEM_LENGTH = 200

_WRITER_ROLES = ("Writer",)
_ARTIST_ROLES = ("Penciller", "Artist", "Inker", "Colorist", "Letterer", "CoverArtist")


class MetadataError(Exception):
    """A metadata file that was refused; the message says why."""


@dataclass
class ComicInfo:
    """The fields of ``ComicInfo.xml`` this source uses; blanks are None or empty."""

    series: str | None = None
    number: float | None = None
    volume: float | None = None
    title: str | None = None
    summary: str | None = None
    writers: list[str] = field(default_factory=list)
    artists: list[str] = field(default_factory=list)
    genres: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    language: str | None = None
    date: datetime | None = None
    year: int | None = None
    age_rating: str | None = None
    publisher: str | None = None
    scanlator: str | None = None
    web: str | None = None
    alternate_series: str | None = None
    manga: str | None = None


def _text(fields: dict[str, str], tag: str) -> str | None:
    text = fields.get(tag)
    if text is None:
        return None
    value = " ".join(text.split()) if tag != "Summary" else text.strip()
    return value or None


class _Refused(Exception):
    """A DTD (or an entity) in a file that has no use for one: refused as hostile."""


def _forbidden(*_: object) -> None:
    raise _Refused()


def _children(data: bytes) -> tuple[str, dict[str, str]]:
    """The root element's name, and the text of each of its children (the first of each
    name, the text before any element inside it, as ElementTree's ``text`` is)."""
    parser = expat.ParserCreate()
    parser.buffer_text = True
    for handler in (
        "StartDoctypeDeclHandler",
        "EntityDeclHandler",
        "UnparsedEntityDeclHandler",
        "ExternalEntityRefHandler",
    ):
        setattr(parser, handler, _forbidden)
    root: list[str] = []
    fields: dict[str, str] = {}
    depth = 0
    current: str | None = None
    chunks: list[str] = []

    def start(name: str, _attributes: object) -> None:
        nonlocal depth, current
        depth += 1
        if depth == 1:
            root.append(name)
        elif depth == 2:
            current, chunks[:] = name, []
        elif current is not None:  # an element inside a field: its text ends there
            fields.setdefault(current, "".join(chunks))
            current = None

    def end(_name: str) -> None:
        nonlocal depth, current
        if depth == 2 and current is not None:
            fields.setdefault(current, "".join(chunks))
            current = None
        depth -= 1

    def text(data: str) -> None:
        if current is not None and depth == 2:
            chunks.append(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    parser.Parse(data, True)
    return (root[0] if root else ""), fields


def split_list(value: str | None, *, limit: int = MAX_LIST_ITEMS) -> list[str]:
    """ComicInfo separates list values with commas (some tools use semicolons).

    Linear in the text's size, and at most ``limit`` distinct names are kept:
    a file listing 36,000 genres costs no more than reading it once.
    """
    if not value:
        return []
    kept: list[str] = []
    seen: set[str] = set()
    for part in value.replace(";", ",").split(","):
        name = " ".join(part.split())[:MAX_ITEM_LENGTH]
        marker = name.lower()
        if name and marker not in seen:
            seen.add(marker)
            kept.append(name)
            if len(kept) >= limit:
                break
    return kept


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(float(value))
    except (ValueError, OverflowError):  # "abc", "nan", "1e400"
        return None


def _float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.replace(",", "."))
    except ValueError:
        return None
    return number if 0 <= number < 1e9 else None


def _date(year: int | None, month: int | None, day: int | None) -> datetime | None:
    if year is None or not 1 <= year <= 9999:
        return None
    try:
        return datetime(year, month if month and 1 <= month <= 12 else 1, day or 1, tzinfo=UTC)
    except (ValueError, OverflowError):
        return datetime(year, month if month and 1 <= month <= 12 else 1, 1, tzinfo=UTC)


def parse_comicinfo(data: bytes, *, max_bytes: int = MAX_COMICINFO_BYTES) -> ComicInfo:
    """Parse ComicInfo.xml bytes; raise :class:`MetadataError` for anything refused."""
    if len(data) > max_bytes:
        raise MetadataError(f"ComicInfo.xml is larger than {max_bytes} bytes")
    try:
        root, fields = _children(data)
    except _Refused:
        raise MetadataError("ComicInfo.xml refused as hostile XML (it has a DTD)") from None
    except (expat.ExpatError, ValueError) as error:
        raise MetadataError(f"ComicInfo.xml is malformed ({error})") from None
    if root != "ComicInfo":
        raise MetadataError(f"ComicInfo.xml has root <{root[:40]}>, not <ComicInfo>")
    writers: list[str] = []
    for role in _WRITER_ROLES:
        writers += split_list(_text(fields, role))
    artists: list[str] = []
    for role in _ARTIST_ROLES:
        artists += [a for a in split_list(_text(fields, role)) if a not in artists]
    artists = artists[:MAX_LIST_ITEMS]
    year = _int(_text(fields, "Year"))
    language = _text(fields, "LanguageISO")
    return ComicInfo(
        series=_text(fields, "Series"),
        number=_float(_text(fields, "Number")),
        volume=_float(_text(fields, "Volume")),
        title=_text(fields, "Title"),
        summary=_text(fields, "Summary"),
        writers=writers,
        artists=artists,
        genres=split_list(_text(fields, "Genre")),
        tags=split_list(_text(fields, "Tags")),
        language=language.replace("_", "-")[:20] if language else None,
        date=_date(year, _int(_text(fields, "Month")), _int(_text(fields, "Day"))),
        year=year if year and 1 <= year <= 9999 else None,
        age_rating=_text(fields, "AgeRating"),
        publisher=_text(fields, "Publisher"),
        scanlator=_text(fields, "ScanInformation"),
        web=next(iter(split_list((_text(fields, "Web") or "").replace(" ", ","))), None),
        alternate_series=_text(fields, "AlternateSeries"),
        manga=_text(fields, "Manga"),
    )
