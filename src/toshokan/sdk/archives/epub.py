"""EPUB chapters: a fixed-layout comic's page images, in spine order.

An EPUB is a zip; its container.xml names the package document, whose spine
lists the documents in reading order. Every one of these files comes from a
stranger, so each read is bounded and the XML parser refuses entity tricks.
"""

import posixpath
import re
from urllib.parse import unquote
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from toshokan.sdk.archives import limits
from toshokan.sdk.archives.base import ArchiveError, Listing, Member, safe_member_name
from toshokan.sdk.archives.zips import ZipReader
from toshokan.sdk.names import is_image_name

#: An EPUB's container.xml and package document are small; larger ones are refused.
MAX_EPUB_PACKAGE_BYTES = 4 * 1024 * 1024
#: A spine document of a fixed-layout EPUB is a few hundred bytes around an image.
MAX_EPUB_DOCUMENT_BYTES = 1024 * 1024
MAX_EPUB_SPINE = 5000
#: Spine document bytes read for one EPUB in all; past it the rest of the spine is ignored.
MAX_EPUB_TEXT_BYTES = 64 * 1024 * 1024
#: The images a spine document shows: ``<img src>`` or SVG ``<image xlink:href>``.
_EPUB_IMAGE = re.compile(
    r"""<(?:img|image|svg:image)\b[^<>]*?\s(?:src|xlink:href|href)\s*=\s*["']([^"'<>]+)["']""",
    re.I,
)


def _local(tag: object) -> str:
    """An XML tag without its namespace: EPUBs in the wild use several prefixes."""
    return str(tag).rsplit("}", 1)[-1]


def _xml(data: bytes, what: str) -> Element:
    try:
        element: Element = fromstring(data)
    except (ParseError, DefusedXmlException, ValueError) as error:
        raise ArchiveError(f"EPUB {what} is not readable XML ({type(error).__name__})") from None
    return element


class EpubReader(ZipReader):
    """An EPUB whose pages are images (a fixed-layout comic), in spine order.

    The spine lists documents in reading order; each one's images (``<img>``, or
    SVG ``<image>`` as most comic converters write) are its pages, and a spine
    item that is itself an image is a page. A text book has no such pages and
    is skipped as containing no images.
    """

    def listing(self, *, comicinfo_limit: int) -> Listing:
        found = super().listing(comicinfo_limit=comicinfo_limit)
        safe = {
            safe_member_name(raw): (raw, size) for raw, size, link in self.members() if not link
        }
        container = _xml(self.read("META-INF/container.xml", 64 * 1024), "container.xml")
        package = next(
            (e.get("full-path") for e in container.iter() if _local(e.tag) == "rootfile"), None
        )
        package_name = safe_member_name(package or "")
        if package_name is None or package_name not in safe:
            raise ArchiveError("EPUB names no package document")
        opf = _xml(self.read(safe[package_name][0], MAX_EPUB_PACKAGE_BYTES), "package document")
        base = posixpath.dirname(package_name)
        items = {
            e.get("id"): (e.get("href") or "", e.get("media-type") or "")
            for e in opf.iter()
            if _local(e.tag) == "item"
        }
        spine = [e.get("idref") for e in opf.iter() if _local(e.tag) == "itemref"]
        pages: list[Member] = []
        seen: set[str] = set()

        def add(href: str, relative_to: str) -> None:
            target = posixpath.normpath(posixpath.join(relative_to, unquote(href.split("#")[0])))
            name = safe_member_name(target)
            if name is None or name in seen or name not in safe or not is_image_name(name):
                return
            raw, size = safe[name]
            if size > limits.MAX_PAGE_BYTES:
                found.warnings.append(
                    f"entry {name[:80]!r} ignored: larger than {limits.MAX_PAGE_BYTES} bytes"
                )
                return
            seen.add(name)
            pages.append(Member(raw, size))

        if len(spine) > MAX_EPUB_SPINE:
            found.warnings.append(
                f"only the first {MAX_EPUB_SPINE} of {len(spine)} spine items read"
            )
        budget = MAX_EPUB_TEXT_BYTES
        for idref in spine[:MAX_EPUB_SPINE]:
            href, kind = items.get(idref, ("", ""))
            document = safe_member_name(posixpath.join(base, unquote(href)))
            if document is None or document not in safe:
                continue
            if kind.startswith("image/"):
                add(href, base)
                continue
            raw, size = safe[document]
            budget -= size
            if budget < 0:
                found.warnings.append(
                    f"spine documents past {MAX_EPUB_TEXT_BYTES} bytes in all ignored"
                )
                break
            try:
                text = self.read(raw, MAX_EPUB_DOCUMENT_BYTES)
            except ArchiveError as error:
                found.warnings.append(f"spine document {document[:80]!r} ignored: {error}")
                continue
            for source in _EPUB_IMAGE.findall(text.decode("utf-8", "replace")):
                add(source, posixpath.dirname(document))
        return Listing(pages=pages, comicinfo=found.comicinfo, warnings=found.warnings)
