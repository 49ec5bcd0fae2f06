"""A chapter kept as a folder of images, downloaded as one CBZ the host writes as it sends it.

OPDS readers acquire a chapter as one file; a folder has none to give. So its
pages, in reading order, are streamed as the stored (uncompressed: they are
images already) entries of a ZIP archive by ``zipstream-ng``, one page file
read at a time in chunks, so memory stays bounded whatever the folder holds.
The archive's length is known before its first byte (``Content-Length``), and
the same folder gives the same bytes on every request: each entry keeps its
page file's modification time.

Only the folder's own pages, as the index lists them, and its
``ComicInfo.xml`` are written, each checked to lie inside the library root, as
every page the library serves is.
"""

from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from zipstream import ZIP_STORED, ZipStream

from toshokan.sdk import NotFound

CBZ = "application/vnd.comicbook+zip"
COMIC_INFO = "ComicInfo.xml"


def folder_cbz(root: Path, relpath: str, pages: list[str]) -> tuple[int, Iterator[bytes]]:
    """The archive of the folder ``relpath`` under ``root`` holding ``pages``: its length, and
    its bytes in chunks (a blocking iterator: run it in a worker thread)."""
    folder = root / relpath
    archive = ZipStream(compress_type=ZIP_STORED, sized=True)
    width = len(str(len(pages)))
    for number, name in enumerate(pages, start=1):
        page = _inside(root, folder / name)
        # Numbered in reading order: readers that sort by name read them in this order.
        archive.add_path(str(page), f"{number:0{width}d}{PurePosixPath(name).suffix.lower()}")
    # The folder's ComicInfo.xml, which readers take a chapter's metadata from, goes along.
    info = folder / COMIC_INFO
    if info.is_file():
        archive.add_path(str(_inside(root, info)), COMIC_INFO)
    return len(archive), iter(archive)


def _inside(root: Path, path: Path) -> Path:
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        raise NotFound("A page of this chapter is no longer in the library.") from None
    if not real.is_relative_to(root) or not real.is_file():
        raise NotFound("A page of this chapter is no longer in the library.")
    return real
