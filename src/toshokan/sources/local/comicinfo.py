"""``ComicInfo.xml``: the metadata most comic tools write into archives.

The file comes from strangers' archives, so it is parsed with no DTD at all (so
no entity expansion, no external entities) and only when it is smaller than a
cap; anything refused or malformed becomes a :class:`MetadataError` whose
message the scan summary shows, and the chapter falls back to its file name.

A first scan parses one per chapter, so the parser is expat itself, keeping only
the text of ``<ComicInfo>``'s children: building a tree for each (as ElementTree
and defusedxml do) was a fifth of reading a chapter.
"""

import functools
import re
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
#: Every element read; blanks (whitespace only) count as absent.
_USED = frozenset(
    (
        *_WRITER_ROLES,
        *_ARTIST_ROLES,
        "Series",
        "Number",
        "Volume",
        "Title",
        "Summary",
        "Genre",
        "Tags",
        "Year",
        "Month",
        "Day",
        "LanguageISO",
        "AgeRating",
        "Publisher",
        "ScanInformation",
        "Web",
        "AlternateSeries",
        "Manga",
    )
)


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


class _Refused(Exception):
    """A DTD (or an entity) in a file that has no use for one: refused as hostile."""


def _forbidden(*_: object) -> None:
    raise _Refused()


#: XML's white space (``\s`` is wider); a name with no prefix; a text without markup, an
#: entity, a carriage return (the parser would change it) or a character XML refuses; an
#: attribute's value in either quotes.
_WS = r"[ \t\n]"
_NAME = r"[A-Za-z_][A-Za-z0-9_.-]*"
_TEXT = r"[^<&\r\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]*"
_VALUE = r"""(?:"[^"<&\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]*"|'[^'<&\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]*')"""
_ATTRIBUTE = rf"{_WS}+(?P<attribute>{_NAME}(?::{_NAME})?){_WS}*={_WS}*{_VALUE}"
_DECLARATION = (
    rf"""<\?xml{_WS}+version{_WS}*={_WS}*(?:"1\.0"|'1\.0')"""
    rf"""(?:{_WS}+encoding{_WS}*={_WS}*(?:"(?i:utf-8)"|'(?i:utf-8)'))?"""
    rf"""(?:{_WS}+standalone{_WS}*={_WS}*(?:"(?:yes|no)"|'(?:yes|no)'))?{_WS}*\?>"""
)
#: Only the tag is a group (for its end tag): a group inside a repeat is saved and restored
#: at each turn, and the text is found again by _CHILDREN.
_CHILD = rf"<(?P<tag>{_NAME}){_WS}*>{_TEXT}</(?P=tag){_WS}*>|<{_NAME}{_WS}*/>"
#: A plain ComicInfo.xml: an optional declaration, ``<ComicInfo>`` with attributes at
#: most, and children holding text only, with nothing else but white space.
_PLAIN = re.compile(
    rf"(?:{_DECLARATION})?{_WS}*<ComicInfo(?P<attributes>(?:{_ATTRIBUTE.replace('?P<attribute>', '')})*)"
    rf"{_WS}*>(?P<body>(?:{_WS}*(?:{_CHILD}))*){_WS}*</ComicInfo{_WS}*>{_WS}*"
)
_ATTRIBUTES = re.compile(_ATTRIBUTE)
#: A child of a body ``_PLAIN`` matched, whose texts hold no ``<``: its start tag and text,
#: or an empty element (an end tag is skipped, its name already matched).
_CHILDREN = re.compile(rf"<({_NAME}){_WS}*(?:>([^<]*)|/>)")


def _plain_children(data: bytes) -> tuple[str, dict[str, str]] | None:
    """:func:`_children` of a plain file, read with two patterns instead of the parser's
    calls for every element and text; None when the file is anything else (an entity,
    a comment, a nested element, another encoding...), for the parser to read."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    found = _PLAIN.fullmatch(text)
    if found is None or "]]>" in text:
        return None
    attributes = found["attributes"]
    if attributes:
        names = _ATTRIBUTES.findall(attributes)
        if len(set(names)) != len(names):
            return None  # the parser refuses a repeated attribute
    # The first text of each name: in reverse order, the last one written.
    return "ComicInfo", dict(reversed(_CHILDREN.findall(found["body"])))


def _children(data: bytes) -> tuple[str, dict[str, str]]:
    """The root element's name, and the text of each of its children (the first of each
    name, the text before any element inside it, as ElementTree's ``text`` is)."""
    plain = _plain_children(data)
    return plain if plain is not None else _parsed_children(data)


def _parsed_children(data: bytes) -> tuple[str, dict[str, str]]:
    """:func:`_children` by the XML parser, with no DTD allowed."""
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
    if len(value) <= _REMEMBERED_LENGTH and limit == MAX_LIST_ITEMS:
        return list(_remembered_list(value))
    return _split_list(value, limit)


#: Lists up to this long are split once and remembered: the chapters of a series name the
#: same writers, genres and tags, and a first scan reads every chapter.
_REMEMBERED_LENGTH = 200


@functools.lru_cache(maxsize=1024)
def _remembered_list(value: str) -> tuple[str, ...]:
    return tuple(_split_list(value, MAX_LIST_ITEMS))


def _split_list(value: str, limit: int) -> list[str]:
    if "," not in value and ";" not in value:  # one name (a usual Writer)
        name = " ".join(value.split())[:MAX_ITEM_LENGTH]
        return [name] if name else []
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


@functools.lru_cache(maxsize=256)
def _date(year: int | None, month: int | None, day: int | None) -> datetime | None:
    """Remembered (a datetime is immutable): the chapters of a series mostly share theirs,
    and making one was a twentieth of reading a ComicInfo.xml."""
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
    # Only the fields present are cleaned: a usual file has ten of the twenty-odd read.
    text: dict[str, str] = {}
    for tag, value in fields.items():
        if tag in _USED:
            cleaned = value.strip() if tag == "Summary" else " ".join(value.split())
            if cleaned:
                text[tag] = cleaned
    get = text.get
    writers: list[str] = []
    for role in _WRITER_ROLES:
        writers += split_list(get(role))
    artists: list[str] = []
    for role in _ARTIST_ROLES:
        if role in text:
            artists += [a for a in split_list(text[role]) if a not in artists]
    artists = artists[:MAX_LIST_ITEMS]
    year = _int(get("Year"))
    language = get("LanguageISO")
    web = get("Web")
    return ComicInfo(
        series=get("Series"),
        number=_float(get("Number")),
        volume=_float(get("Volume")),
        title=get("Title"),
        summary=get("Summary"),
        writers=writers,
        artists=artists,
        genres=split_list(get("Genre")),
        tags=split_list(get("Tags")),
        language=language.replace("_", "-")[:20] if language else None,
        date=_date(year, _int(get("Month")), _int(get("Day"))) if year is not None else None,
        year=year if year and 1 <= year <= 9999 else None,
        age_rating=get("AgeRating"),
        publisher=get("Publisher"),
        scanlator=get("ScanInformation"),
        web=next(iter(split_list(web.replace(" ", ","))), None) if web else None,
        alternate_series=get("AlternateSeries"),
        manga=get("Manga"),
    )
