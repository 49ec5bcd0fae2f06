"""Pydantic models of every object in the content host specification.

The models apply the spec's defaults (``Unknown Title``, ``No Description.``,
``No Title``, ``Unknown Scanlator``, empty ``referer``, ``nsfw: false``) so
that adapters never have to repeat them.
"""

from toshokan.models.auth import (
    AuthConfig,
    AuthError,
    AuthResponse,
    AuthType,
)
from toshokan.models.content import (
    Chapter,
    Classification,
    Entry,
    Manga,
    Publication,
    ReadingDirection,
    Tag,
)
from toshokan.models.host import HostManifest, SourceManifestEntry, SourceStatus
from toshokan.models.search import (
    FILTER_TYPES,
    Direction,
    FilterKey,
    SearchRequest,
    SearchResponse,
    SortOption,
)
from toshokan.models.source import Preset, SearchConfig, SourceConfiguration
from toshokan.models.status import ErrorBody, ErrorResponse, Health, Ping

__all__ = [
    "FILTER_TYPES",
    "AuthConfig",
    "AuthError",
    "AuthResponse",
    "AuthType",
    "Chapter",
    "Classification",
    "Direction",
    "Entry",
    "ErrorBody",
    "ErrorResponse",
    "FilterKey",
    "Health",
    "HostManifest",
    "Manga",
    "Ping",
    "Preset",
    "Publication",
    "ReadingDirection",
    "SearchConfig",
    "SearchRequest",
    "SearchResponse",
    "SortOption",
    "SourceConfiguration",
    "SourceManifestEntry",
    "SourceStatus",
    "Tag",
]
