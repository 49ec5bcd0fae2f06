"""The core: the sources and everything every face needs from them.

Faces (the JSON interface, the Alethia dialect, OPDS, the web reader) and the
edge call :class:`Core`; the core calls the adapters through the SDK, and hands faces the few SDK types
they meet (:class:`Credentials`, :class:`Download`, the link builder :class:`Urls`) so no face
reaches past it.
Nothing here knows how a face shapes its answers.
"""

from toshokan.core.hosted import ConfigurationError, HostedSource, HostedSources
from toshokan.core.service import Access, Answer, Caller, Core, check_slug
from toshokan.core.visit import Pages, Visit
from toshokan.sdk.auth import Credentials
from toshokan.sdk.source import Download
from toshokan.sdk.urls import Query, Urls, host_path, with_query

__all__ = [
    "Access",
    "Answer",
    "Caller",
    "ConfigurationError",
    "Core",
    "Credentials",
    "Download",
    "HostedSource",
    "HostedSources",
    "Pages",
    "Query",
    "Urls",
    "Visit",
    "check_slug",
    "host_path",
    "with_query",
]
