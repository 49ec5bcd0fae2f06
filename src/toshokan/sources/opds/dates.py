"""Catalogue dates, read forgivingly: a date that cannot be read is no date, never a failure."""

from datetime import UTC, datetime


def parse_date(text: object) -> datetime | None:
    """An aware datetime from ISO 8601 text (``2024-05-01``, ``...T10:00:00Z``, ``+02:00``)."""
    if not isinstance(text, str) or not text.strip():
        return None
    value = text.strip()
    if len(value) == 4 and value.isdigit():
        value = f"{value}-01-01"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.year < 1900:  # calibre's "unknown" is the year 101
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
