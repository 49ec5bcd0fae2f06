"""What a kept chapter says about itself: its ``ComicInfo.xml``, and its series' ``series.json``.

ComicInfo.xml (the Anansi Project's schema, v2.1) is what Komga, Kavita, Mihon,
ComicTagger and the local library read inside an archive; its elements are
written in the schema's order, because the schema is a sequence and strict
readers check it. Every field comes from the spec's models as the upstream
source gave them, so the copy reads as its original: the chapter's own title,
number, language, date and group, the series' title, synopsis, people, tags and
rating, the upstream chapter's address (``Web``), and one ``Page`` per image.

``series.json`` is Mylar's series file, which the local library and Komga read
for a series' title, synopsis and status.
"""

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

from toshokan.models import Chapter, Classification, Manga, Publication
from toshokan.sdk.names import format_number

#: Characters a summary keeps (the local library reads ComicInfo files up to 256 KiB).
MAX_SUMMARY = 32 * 1024
#: Names written per list (people, genres).
MAX_NAMES = 100
#: XML 1.0 refuses these characters anywhere.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

#: The spec's classification as ComicInfo's AgeRating, which the local library reads back.
AGE_RATINGS = {
    Classification.SAFE: "Everyone",
    Classification.SUGGESTIVE: "Mature 17+",
    Classification.EXPLICIT: "Adults Only 18+",
    Classification.PORNOGRAPHIC: "X18+",
}
#: Reading direction (the Manga model's ``readingDirection``) as ComicInfo's Manga field.
MANGA_VALUES = {"rtl": "YesAndRightToLeft", "ltr": "No", "vertical": "No"}
#: Tags that say a series reads as a vertical strip, when the source gives no direction.
STRIP_TAGS = frozenset({"long-strip", "webtoon"})
#: The spec's publication as Mylar's status words (and the local library's).
STATUSES = {
    Publication.ONGOING: "Continuing",
    Publication.COMPLETED: "Ended",
    Publication.CANCELLED: "Cancelled",
    Publication.HIATUS: "Hiatus",
}


@dataclass(frozen=True)
class PageInfo:
    """One verified page: its name in the archive, bytes, pixels and format."""

    name: str
    size: int
    width: int
    height: int
    media_type: str


def _text(value: str, limit: int | None = None) -> str:
    text = _NOT_XML.sub("", value)
    return text[:limit] if limit else text


def _names(values: Sequence[str]) -> str:
    # ComicInfo separates names with commas: one inside a name would split it.
    return ", ".join(_text(v).replace(",", " ") for v in list(dict.fromkeys(values))[:MAX_NAMES])


def manga_value(manga: Manga) -> str | None:
    """ComicInfo's ``Manga``: from the source's reading direction where it says one, else
    "No" for a series tagged as a vertical strip; None (not written) when nothing says."""
    if manga.readingDirection is not None:
        return MANGA_VALUES[manga.readingDirection]
    if STRIP_TAGS & set(manga.tags):
        return "No"
    return None


def comicinfo(
    manga: Manga,
    chapter: Chapter,
    pages: Sequence[PageInfo],
    *,
    volume: float | None,
    tag_names: dict[str, str],
) -> bytes:
    """The ComicInfo.xml of one kept chapter; ``tag_names`` name the manga's tag slugs."""
    root = ElementTree.Element("ComicInfo")
    root.set("xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance")
    root.set("xmlns:xsd", "http://www.w3.org/2001/XMLSchema")

    def add(tag: str, value: str | None) -> None:
        if value:
            ElementTree.SubElement(root, tag).text = _text(value)

    group = chapter.scanlator if chapter.scanlator != "Unknown Scanlator" else None
    tags = [tag_names.get(slug, slug) for slug in manga.tags]
    add("Title", chapter.title)
    add("Series", manga.title)
    add("Number", format_number(chapter.number))
    add("Volume", format_number(volume) if volume is not None else None)
    add("AlternateSeries", manga.alternativeTitles[0] if manga.alternativeTitles else None)
    add("Summary", _text(manga.synopsis, MAX_SUMMARY))
    if chapter.date.year > 1970:
        add("Year", str(chapter.date.year))
        add("Month", str(chapter.date.month))
        add("Day", str(chapter.date.day))
    # The spec's model has one list of people and no roles: they are the series' writers (its
    # "authors"); naming each of them Penciller too would be wrong for every adaptation.
    add("Writer", _names(manga.authors))
    add("Translator", group)
    # The spec's model does not tell genres from other tags; Komga and Kavita filter by either.
    add("Genre", _names(tags))
    add("Tags", _names(tags))
    add("Web", chapter.url)
    add("PageCount", str(len(pages)))
    add("LanguageISO", chapter.language)
    add("Manga", manga_value(manga))
    add("ScanInformation", group)
    add("AgeRating", AGE_RATINGS.get(manga.classification))
    listing = ElementTree.SubElement(root, "Pages")
    for index, page in enumerate(pages):
        ElementTree.SubElement(
            listing,
            "Page",
            {
                "Image": str(index),
                "ImageSize": str(page.size),
                "ImageWidth": str(page.width),
                "ImageHeight": str(page.height),
                **({"Type": "FrontCover"} if index == 0 else {}),
            },
        )
    ElementTree.indent(root)
    written: bytes = ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)
    return written


def series_json(manga: Manga, *, source: str, chapters: int | None = None) -> bytes:
    """Mylar's ``series.json`` for a kept series."""
    year = manga.createdAt.year if manga.createdAt.year > 1970 else None
    metadata: dict[str, Any] = {
        "type": "comicSeries",
        "publisher": None,
        "imprint": None,
        "name": manga.title,
        "comicid": f"{source}:{manga.slug}",
        "year": year,
        "description_text": _text(manga.synopsis, MAX_SUMMARY),
        "description_formatted": None,
        "volume": None,
        "booktype": "Print",
        "age_rating": AGE_RATINGS.get(manga.classification),
        "collects": None,
        "ComicImage": manga.covers[0] if manga.covers else None,
        "total_issues": chapters,
        "publication_run": None,
        "status": STATUSES.get(manga.publication),
    }
    text = json.dumps({"version": "1.0.2", "metadata": metadata}, indent=2)
    return f"{text}\n".encode()
