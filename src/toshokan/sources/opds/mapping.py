"""Catalogue entries as the spec's objects: details, chapters, tags.

Numbers come from the book's series position when the catalogue gives one,
else from its title through the name parser every adapter shares, else from
its place in the series (so they stay distinct); dates from the entry
(published, else updated).
"""

from datetime import UTC, datetime

from toshokan.sdk import Chapter, Manga, slugify
from toshokan.sdk.names import parse_chapter_name
from toshokan.sources.opds.feed import FeedEntry

#: The date of a book that gives none.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def tag_slugs(categories: list[str]) -> list[str]:
    """Readable, stable slugs of category names, each once."""
    slugs = dict.fromkeys(slugify(name, fallback="tag", max_length=50) for name in categories)
    return list(slugs)


def chapter_number(entry: FeedEntry, position: int) -> float:
    if entry.position is not None:
        return entry.position
    number = parse_chapter_name(entry.title).reading_number
    return number if number is not None else float(position)


def entry_date(entry: FeedEntry) -> datetime:
    return entry.published or entry.updated or EPOCH


def chapter(
    entry: FeedEntry, *, slug: str, url: str, position: int, language: str, scanlator: str
) -> Chapter:
    return Chapter(
        slug=slug,
        url=url,
        title=entry.title,
        number=chapter_number(entry, position),
        date=entry_date(entry),
        language=entry.language or language,
        scanlator=scanlator,
    )


def manga(
    *,
    slug: str,
    url: str,
    title: str,
    about: FeedEntry | None,
    books: list[FeedEntry],
    cover: str | None,
    updated: datetime | None,
) -> Manga:
    """A series from what its listing entry said (``about``) and its first books."""
    authors = dict.fromkeys(a for e in ([about] if about else []) + books for a in e.authors)
    categories = [c for e in ([about] if about else []) + books for c in e.categories]
    dates = [entry_date(book) for book in books if book.published or book.updated]
    summary = (about.summary if about else "") or (books[0].summary if len(books) == 1 else "")
    return Manga(
        slug=slug,
        url=url,
        title=title,
        authors=list(authors),
        synopsis=summary or "No Description.",
        covers=[cover] if cover else [],
        tags=tag_slugs(categories),
        createdAt=min(dates) if dates else (updated or EPOCH),
        updatedAt=max(dates + ([updated] if updated else [])) if dates or updated else EPOCH,
    )
