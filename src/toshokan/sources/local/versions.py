"""The short token that names one version of a chapter file (or cover image).

Page and cover links carry it (``?v=``) and page ETags are built from it, so a
replaced file gets new links and clients refetch instead of showing stale
images. It is derived from the file's scan signature and nothing else, in one
place, so links built by the source and checked by the page routes agree.
"""

import hashlib


def version_of(sig: str) -> str:
    """Twelve hex digits that change whenever the file's signature changes."""
    return hashlib.sha1(sig.encode()).hexdigest()[:12]
