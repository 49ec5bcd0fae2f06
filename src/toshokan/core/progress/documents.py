"""KOReader's documents as the host's chapters: a file's id resolved to the chapter it is."""

import logging

from toshokan.core.hosted import HostedSources
from toshokan.core.progress.store import ChapterRef

log = logging.getLogger("toshokan.progress")


async def chapter_of_document(sources: HostedSources, digest: str) -> tuple[ChapterRef, int] | None:
    """The chapter (and its page count) whose file KOReader names ``digest``; None for any
    other book, whose progress is then kept under the id alone, as KOReader's server keeps it."""
    for hosted in sources.serving():
        try:
            found = await hosted.source.chapter_of_file(digest)
        except Exception:  # one source failing to look leaves the book unknown, never an error
            log.warning("source %s could not look up a KOReader document", hosted.slug)
            continue
        if found is not None:
            return ChapterRef(hosted.slug, found.manga_slug, found.chapter_slug), found.pages
    return None
