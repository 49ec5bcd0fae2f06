"""Shared model configuration and field types."""

import re
from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, PlainSerializer, StringConstraints

#: The slug alphabets, unanchored, for patterns that hold a slug (paths, ``source/manga``).
SLUG_REGEX = "[a-z0-9_-]+"
SOURCE_SLUG_REGEX = "[a-z]+"
SLUG_PATTERN = rf"^{SLUG_REGEX}$"
SOURCE_SLUG_PATTERN = rf"^{SOURCE_SLUG_REGEX}$"
#: Compiled once for every check of a slug outside a model (paths, ids, keys).
SLUG = re.compile(SLUG_PATTERN)
SOURCE_SLUG = re.compile(SOURCE_SLUG_PATTERN)

#: A URL-safe slug as DECISIONS.md rules: emitted and accepted exactly as [a-z0-9_-]+.
Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN)]
SourceSlug = Annotated[str, StringConstraints(pattern=SOURCE_SLUG_PATTERN)]


def _aware(value: datetime) -> datetime:
    # A naive timestamp is ambiguous on the wire; we treat it as UTC.
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


#: An ISO 8601 timestamp, always serialised in UTC with a ``Z`` suffix.
Timestamp = Annotated[
    datetime, AfterValidator(_aware), PlainSerializer(_iso, return_type=str, when_used="always")
]


def _compact_number(value: float) -> float | int:
    # 12.0 goes on the wire as 12: readers compare chapter numbers as numbers anyway.
    return int(value) if float(value).is_integer() else value


#: A JSON number that drops a needless ``.0``.
Number = Annotated[float, PlainSerializer(_compact_number, when_used="json")]


class SpecModel(BaseModel):
    """Base of every wire object: camelCase names exactly as the spec spells them."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=False)
