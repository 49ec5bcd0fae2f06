"""The image pipeline: the one place every face gets page images and covers from.

A page or cover URL of any source is either one of the host's own (a route a
source mounts under ``/_/<slug>``, such as the local library's pages) or an
upstream's (MangaDex's at-home servers). The pipeline works for one request's
:class:`~toshokan.core.visit.Visit` (the source, its configuration and the
caller's authorisation, decided once) and fetches either kind the same way for
every face: host URLs are read by the source itself
(:meth:`~toshokan.sdk.Source.read_image`, no HTTP request to the host),
upstream URLs with the host's User-Agent and the source's Referer, under the
request's upstream deadline and with a bound on the bytes read.

It then hands back something every reader can show: formats OPDS-PSE does
not allow (WebP, AVIF...) become JPEG, and so do PNG and GIF where the answer
must be the JPEG a stream link declares; upright whatever its EXIF orientation
says, since PSE readers ignore it; a ``max_width`` resizes keeping the aspect
ratio (never enlarging); thumbnails are at most 300 px wide. Images with more
pixels than :data:`MAX_PIXELS` are refused before they are decoded, so a
decompression bomb costs nothing.

Upstream bytes, and upstream images as they were served, are kept briefly in
memory (bounded in bytes) and concurrent
requests for the same image share one fetch; converted or resized images are
kept on disk under the data directory, with a size cap. Page lists are
remembered for a couple of minutes per caller in the core's cache
(:meth:`~toshokan.core.visit.Visit.page_list`), so a reader fetching a chapter
page by page asks the source for the list once, not once per page (MangaDex
allows only 40 page lists a minute).

:meth:`ImagePipeline.signed_url` makes a header-free link to any image of any
source (``/_/image/<slug>?u=...&exp=...&sig=...``): only the host can make
one, it expires, and it needs no credentials, for image loaders that cannot
send the headers an upstream wants.
"""

from toshokan.core.images.links import (
    image_mount,
    image_response,
    picture_response,
    signed_image,
)
from toshokan.core.images.pictures import (
    MAX_PIXELS,
    THUMBNAIL_WIDTH,
    as_png,
    clamp_width,
    stable_key,
    transform,
)
from toshokan.core.images.pipeline import ImagePipeline
from toshokan.sdk.pictures import Picture

__all__ = [
    "MAX_PIXELS",
    "THUMBNAIL_WIDTH",
    "ImagePipeline",
    "Picture",
    "as_png",
    "clamp_width",
    "image_mount",
    "image_response",
    "picture_response",
    "signed_image",
    "stable_key",
    "transform",
]
