"""Acquisition links: a chapter's original file, for readers that keep chapters offline.

Only a source that offers downloads (a library of archives) is asked, through
the core, once per chapter shown; the link it returns is signed when the
source requires authentication, so a reader's download manager needs no
credentials of its own.
"""

import asyncio
from collections.abc import Sequence

from toshokan.core import Caller, Core
from toshokan.errors import HostError
from toshokan.faces.opds.atom import REL_ACQUISITION, Link
from toshokan.models import Chapter
from toshokan.sdk import Download


async def downloads_of(
    core: Core, slug: str, caller: Caller, manga_slug: str, chapters: Sequence[Chapter]
) -> dict[str, Download]:
    """The downloads of these chapters, by chapter slug; chapters without one are left out."""
    if not chapters or not core.offers_downloads(slug):
        return {}

    async def one(chapter: Chapter) -> tuple[str, Download | None]:
        try:
            found = await core.download(slug, manga_slug, chapter.slug, caller)
        except HostError:  # gone since the list was made: the entry simply has no link
            found = None
        return chapter.slug, found

    found = await asyncio.gather(*(one(chapter) for chapter in chapters))
    return {slug: download for slug, download in found if download is not None}


def acquisition_link(download: Download) -> Link:
    extra = {"length": str(download.size)} if download.size is not None else {}
    return Link(REL_ACQUISITION, download.url, download.media_type, "Download", extra=extra)
