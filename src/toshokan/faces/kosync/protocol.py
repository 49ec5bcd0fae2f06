"""What KOReader's sync server says and accepts, as koreader-sync-server says and accepts it.

The official server (koreader/koreader-sync-server, on the Gin framework)
answers every failure as ``{"code", "message"}`` with these statuses, and Gin
itself refuses requests without its versioned ``Accept`` header (codes 100-102)
or with a body that is not a JSON object (103, 104). The bounds below are this
host's own: KOReader's ids are 32 hex digits and its progress a page number or
an XPointer, so anything far longer is not KOReader's and is refused as invalid.
"""

import json
import math
import re
from dataclasses import dataclass
from typing import Any

ACCEPT = re.compile(r"application/vnd\.koreader\.v(\d+)\+json")
#: The largest body a KOReader sends is a progress update of a few hundred bytes.
MAX_BODY = 16 * 1024
MAX_DOCUMENT = 128
MAX_PROGRESS = 2048
MAX_DEVICE = 256
MAX_NAME = 64
MAX_KEY = 256


class KosyncError(Exception):
    """A refusal in KOReader's shape."""

    def __init__(self, status: int, code: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.headers = headers or {}


def unauthorized() -> KosyncError:
    return KosyncError(401, 2001, "Unauthorized")


def user_exists() -> KosyncError:
    return KosyncError(402, 2002, "Username is already registered.")


def invalid_fields(why: str = "") -> KosyncError:
    return KosyncError(403, 2003, f"Invalid request{': ' + why if why else ''}")


def document_missing() -> KosyncError:
    return KosyncError(403, 2004, "Field 'document' not provided.")


def registration_disabled() -> KosyncError:
    return KosyncError(402, 2005, "User registration is disabled.")


def check_accept(accept: str | None) -> None:
    """Gin's versioned media type: KOReader sends ``application/vnd.koreader.v1+json``."""
    if not accept:
        raise KosyncError(412, 100, "Accept header not set.")
    match = ACCEPT.search(accept)
    if match is None:
        raise KosyncError(412, 101, "Invalid Accept header format.")
    if match.group(1) != "1":
        raise KosyncError(412, 102, "Unsupported version specified in the Accept header.")


def _no_constants(name: str) -> Any:
    raise ValueError(name)


def parse_body(raw: bytes) -> dict[str, Any]:
    """A JSON object, or Gin's 103/104 (and 413 beyond this face's bound)."""
    if len(raw) > MAX_BODY:
        raise KosyncError(413, 2003, f"Invalid request: the body is over {MAX_BODY} bytes")
    if not raw.strip():
        return {}  # Gin takes an empty body for an empty hash
    try:
        body = json.loads(raw, parse_constant=_no_constants)
    except (ValueError, RecursionError):
        raise KosyncError(400, 103, "Could not parse JSON in body.") from None
    if not isinstance(body, dict):
        raise KosyncError(400, 104, "Body should be a JSON hash.")
    return body


def is_valid_field(value: object, bound: int) -> bool:
    """The server's ``is_valid_field``: a non-empty string (here also bounded)."""
    return isinstance(value, str) and 0 < len(value) <= bound


def is_valid_key_field(value: object, bound: int) -> bool:
    """The server's ``is_valid_key_field``: also no colon, which would split its Redis keys."""
    return is_valid_field(value, bound) and ":" not in str(value)


@dataclass(frozen=True)
class ProgressUpdate:
    """A ``PUT /syncs/progress`` body, checked."""

    document: str
    progress: str
    percentage: float
    device: str
    device_id: str


def progress_update(body: dict[str, Any]) -> ProgressUpdate:
    document = body.get("document")
    if not is_valid_key_field(document, MAX_DOCUMENT):
        raise document_missing()
    percentage = _number(body.get("percentage"))
    progress, device = body.get("progress"), body.get("device")
    device_id = body.get("device_id")
    if percentage is None or progress is None or progress is False or device in (None, False):
        raise invalid_fields()  # the server needs all three (Lua's nil and false alike)
    if not 0 <= percentage <= 1:
        raise invalid_fields("percentage is from 0 to 1")
    progress_text = _text(progress)
    device_text = _text(device)
    device_id_text = "" if device_id is None else _text(device_id)
    if progress_text is None or not 0 < len(progress_text) <= MAX_PROGRESS:
        raise invalid_fields(f"progress is a string of 1 to {MAX_PROGRESS} characters")
    if device_text is None or len(device_text) > MAX_DEVICE:
        raise invalid_fields(f"device is a string of at most {MAX_DEVICE} characters")
    if device_id_text is None or len(device_id_text) > MAX_DEVICE:
        raise invalid_fields(f"device_id is a string of at most {MAX_DEVICE} characters")
    return ProgressUpdate(str(document), progress_text, percentage, device_text, device_id_text)


def _number(value: object) -> float | None:
    """Lua's ``tonumber``: a number, or a string that reads as one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and len(value) <= 64:
        try:
            number = float(value)
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _text(value: object) -> str | None:
    """What Redis would store for a scalar: its text; None for a list or an object."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return str(value)
    return None
