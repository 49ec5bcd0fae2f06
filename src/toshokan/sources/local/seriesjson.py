"""``series.json`` (Mylar's format): series-level metadata kept beside the chapters.

It wins over what chapters' ComicInfo.xml say, because it describes the
series as a whole (status, description, year) where ComicInfo describes one issue.
"""

import json
from dataclasses import dataclass

MAX_SERIES_JSON_BYTES = 256 * 1024


class SeriesJsonError(Exception):
    """A series.json that was refused; the message says why."""


@dataclass
class SeriesJson:
    name: str | None = None
    publisher: str | None = None
    imprint: str | None = None
    year: int | None = None
    description: str | None = None
    status: str | None = None
    age_rating: str | None = None
    booktype: str | None = None
    comicid: str | None = None
    total_issues: int | None = None


def _str(value: object) -> str | None:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        text = " ".join(str(value).split())
        return text or None
    return None


def _int(value: object) -> int | None:
    try:
        return int(str(value)) if value is not None and not isinstance(value, bool) else None
    except ValueError:
        return None


def parse_series_json(data: bytes, *, max_bytes: int = MAX_SERIES_JSON_BYTES) -> SeriesJson:
    if len(data) > max_bytes:
        raise SeriesJsonError(f"series.json is larger than {max_bytes} bytes")
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise SeriesJsonError(f"series.json is not valid JSON ({str(error)[:100]})") from None
    meta = document.get("metadata") if isinstance(document, dict) else None
    if not isinstance(meta, dict):
        raise SeriesJsonError('series.json has no "metadata" object')
    description = meta.get("description_text") or meta.get("description_formatted")
    year = _int(meta.get("year"))
    return SeriesJson(
        name=_str(meta.get("name")),
        publisher=_str(meta.get("publisher")),
        imprint=_str(meta.get("imprint")),
        year=year if year and 1 <= year <= 9999 else None,
        description=description.strip()
        if isinstance(description, str) and description.strip()
        else None,
        status=_str(meta.get("status")),
        age_rating=_str(meta.get("age_rating")),
        booktype=_str(meta.get("booktype")),
        comicid=_str(meta.get("comicid")),
        total_issues=_int(meta.get("total_issues")),
    )
