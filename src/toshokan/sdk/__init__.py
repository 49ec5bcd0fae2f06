"""The source SDK: everything an adapter author imports.

An adapter is a subclass of :class:`Source` that declares its configuration
(:meth:`Source.configuration`) and answers four questions (search, manga,
chapters, pages). The host validates the configuration at start-up, checks
every request against it, handles authentication, caching and errors, and
hands the adapter a shared upstream HTTP client through :class:`HostServices`,
whose request budgets (:class:`Throttle`, :class:`AllOf`) hold process-wide; work nobody
waits for runs inside :func:`background`, so that readers' requests go first.
"""

from typing import TYPE_CHECKING

from toshokan.sdk.lazy import lazy_names

if TYPE_CHECKING:
    from toshokan.errors import (
        ChapterNotFound,
        HostError,
        InvalidCredentials,
        InvalidRequest,
        MangaNotFound,
        NotFound,
        RateLimited,
        UpstreamError,
        UpstreamTimeout,
    )
    from toshokan.models import (
        AuthConfig,
        AuthType,
        Chapter,
        Classification,
        Entry,
        FilterKey,
        Manga,
        Preset,
        Publication,
        ReadingDirection,
        SearchConfig,
        SearchRequest,
        SearchResponse,
        SortOption,
        SourceConfiguration,
        Tag,
    )
    from toshokan.models.content import EPOCH, newest_first
    from toshokan.models.search import Filters
    from toshokan.sdk.auth import Credentials, headers_for
    from toshokan.sdk.claims import Claims
    from toshokan.sdk.commands import pass_services
    from toshokan.sdk.context import SERVE_ID, HostServices, RequestContext
    from toshokan.sdk.deadline import remaining, upstream_deadline
    from toshokan.sdk.digests import partial_md5
    from toshokan.sdk.http import (
        UpstreamClient,
        clean_text,
        default_error_detail,
        retry_after_seconds,
        text_of,
    )
    from toshokan.sdk.keys import DerivedKey
    from toshokan.sdk.payloads import parse_json, parse_model, parse_payload
    from toshokan.sdk.pictures import Picture
    from toshokan.sdk.slugs import slugify
    from toshokan.sdk.source import (
        MARKS_AT_ONCE,
        ChapterFile,
        Download,
        ImageFetch,
        Listing,
        NoSettings,
        OwnPages,
        Source,
        public,
    )
    from toshokan.sdk.throttle import (
        AllOf,
        BudgetPaused,
        Throttle,
        UpstreamLimiter,
        background,
        in_background,
        windows_for_rate,
    )
    from toshokan.sdk.urls import Urls

# Also its module's name: imported now, so that the module, once imported, does not
# stand in for the function.
from toshokan.sdk.gather import gather

__all__ = [
    "EPOCH",
    "MARKS_AT_ONCE",
    "SERVE_ID",
    "AllOf",
    "AuthConfig",
    "AuthType",
    "BudgetPaused",
    "Chapter",
    "ChapterFile",
    "ChapterNotFound",
    "Claims",
    "Classification",
    "Credentials",
    "DerivedKey",
    "Download",
    "Entry",
    "FilterKey",
    "Filters",
    "HostError",
    "HostServices",
    "ImageFetch",
    "InvalidCredentials",
    "InvalidRequest",
    "Listing",
    "Manga",
    "MangaNotFound",
    "NoSettings",
    "NotFound",
    "OwnPages",
    "Picture",
    "Preset",
    "Publication",
    "RateLimited",
    "ReadingDirection",
    "RequestContext",
    "SearchConfig",
    "SearchRequest",
    "SearchResponse",
    "SortOption",
    "Source",
    "SourceConfiguration",
    "Tag",
    "Throttle",
    "UpstreamClient",
    "UpstreamError",
    "UpstreamLimiter",
    "UpstreamTimeout",
    "Urls",
    "background",
    "clean_text",
    "default_error_detail",
    "gather",
    "headers_for",
    "in_background",
    "newest_first",
    "parse_json",
    "parse_model",
    "parse_payload",
    "partial_md5",
    "pass_services",
    "public",
    "remaining",
    "retry_after_seconds",
    "slugify",
    "text_of",
    "upstream_deadline",
    "windows_for_rate",
]

#: Where each public name is defined.
_MODULES = {
    "EPOCH": "toshokan.models.content",
    "MARKS_AT_ONCE": "toshokan.sdk.source",
    "SERVE_ID": "toshokan.sdk.context",
    "AllOf": "toshokan.sdk.throttle",
    "AuthConfig": "toshokan.models",
    "AuthType": "toshokan.models",
    "BudgetPaused": "toshokan.sdk.throttle",
    "Chapter": "toshokan.models",
    "ChapterFile": "toshokan.sdk.source",
    "ChapterNotFound": "toshokan.errors",
    "Claims": "toshokan.sdk.claims",
    "Classification": "toshokan.models",
    "Credentials": "toshokan.sdk.auth",
    "DerivedKey": "toshokan.sdk.keys",
    "Download": "toshokan.sdk.source",
    "Entry": "toshokan.models",
    "FilterKey": "toshokan.models",
    "Filters": "toshokan.models.search",
    "HostError": "toshokan.errors",
    "HostServices": "toshokan.sdk.context",
    "ImageFetch": "toshokan.sdk.source",
    "InvalidCredentials": "toshokan.errors",
    "InvalidRequest": "toshokan.errors",
    "Listing": "toshokan.sdk.source",
    "Manga": "toshokan.models",
    "MangaNotFound": "toshokan.errors",
    "NoSettings": "toshokan.sdk.source",
    "NotFound": "toshokan.errors",
    "OwnPages": "toshokan.sdk.source",
    "Picture": "toshokan.sdk.pictures",
    "Preset": "toshokan.models",
    "Publication": "toshokan.models",
    "RateLimited": "toshokan.errors",
    "ReadingDirection": "toshokan.models",
    "RequestContext": "toshokan.sdk.context",
    "SearchConfig": "toshokan.models",
    "SearchRequest": "toshokan.models",
    "SearchResponse": "toshokan.models",
    "SortOption": "toshokan.models",
    "Source": "toshokan.sdk.source",
    "SourceConfiguration": "toshokan.models",
    "Tag": "toshokan.models",
    "Throttle": "toshokan.sdk.throttle",
    "UpstreamClient": "toshokan.sdk.http",
    "UpstreamError": "toshokan.errors",
    "UpstreamLimiter": "toshokan.sdk.throttle",
    "UpstreamTimeout": "toshokan.errors",
    "Urls": "toshokan.sdk.urls",
    "background": "toshokan.sdk.throttle",
    "clean_text": "toshokan.sdk.http",
    "default_error_detail": "toshokan.sdk.http",
    "headers_for": "toshokan.sdk.auth",
    "in_background": "toshokan.sdk.throttle",
    "newest_first": "toshokan.models.content",
    "parse_json": "toshokan.sdk.payloads",
    "parse_model": "toshokan.sdk.payloads",
    "parse_payload": "toshokan.sdk.payloads",
    "partial_md5": "toshokan.sdk.digests",
    "pass_services": "toshokan.sdk.commands",
    "public": "toshokan.sdk.source",
    "remaining": "toshokan.sdk.deadline",
    "retry_after_seconds": "toshokan.sdk.http",
    "slugify": "toshokan.sdk.slugs",
    "text_of": "toshokan.sdk.http",
    "upstream_deadline": "toshokan.sdk.deadline",
    "windows_for_rate": "toshokan.sdk.throttle",
}


__getattr__ = lazy_names(__name__, _MODULES)
