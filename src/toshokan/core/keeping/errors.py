"""Why a chapter could not be kept, as the download queue tells them apart.

Each error names a ``reason`` the queue shows and acts on: ``no-space`` and
``not-writable`` are the folder's, so the queue pauses until the operator
fixes it (nothing kept is touched meanwhile); ``bad-image`` and ``too-large``
are the chapter's, so it fails with the reason; ``unavailable`` means keeping
is not set up. The message is one line a person can act on.
"""


class KeepError(Exception):
    """A chapter that could not be kept; ``reason`` says which kind of failure."""

    reason = "failed"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class NoSpace(KeepError):
    """The keep folder's disk is full (or a quota or file size limit was reached)."""

    reason = "no-space"


class NotWritable(KeepError):
    """The keep folder cannot be written (read-only, or not the host's to write)."""

    reason = "not-writable"


class BadImage(KeepError):
    """A page is not an image the host can read, or is larger than the bounds allow."""

    reason = "bad-image"


class TooLarge(KeepError):
    """The chapter is larger than ``[keep] max_chapter_bytes``."""

    reason = "too-large"


class KeepUnavailable(KeepError):
    """Keeping is not set up: no local library serves the keep folder."""

    reason = "unavailable"
