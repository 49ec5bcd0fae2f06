"""Wiring one host together: the cache, the cluster, the database, readers and readiness.

Apart from :class:`~toshokan.core.service.Core`, which serves requests with what
is wired here, so that how the host is assembled (which database, whether
Redis shares the cache, what readiness checks) is read in one place and
the core's own module is about answering.
"""

import asyncio
import functools
from collections.abc import Mapping
from dataclasses import dataclass

from toshokan.config import HostSettings
from toshokan.core.access import AttemptGate
from toshokan.core.answers import SHARED_CODECS
from toshokan.core.cache import Kind, ResultCache
from toshokan.core.database import Database, ServerDatabase, open_database
from toshokan.core.database.claims import DatabaseClaims
from toshokan.core.hosted import HostedSources
from toshokan.core.images.pipeline import PAGE_LIST_SECONDS
from toshokan.core.limits import MovingWindowLimit
from toshokan.core.progress import ProgressStore
from toshokan.core.readers import ReaderGate, Readers
from toshokan.core.readiness import CHECK_SECONDS, Readiness
from toshokan.core.shared.cluster import Cluster
from toshokan.core.signing import signed_query

#: Seconds the core memoises configurations, the manifest and authorisation decisions.
MEMO_SECONDS = 30


@dataclass(frozen=True)
class Wiring:
    """The parts of one host, built once, before it serves."""

    settings: HostSettings
    sources: HostedSources
    cache: ResultCache
    #: Shared with every process of the host through Redis when [cluster] redis is set.
    cluster: Cluster
    attempts: AttemptGate
    #: Readers and their progress: one database every face reads and writes; with
    #: [cluster] database, the one the host's services opened for slug claims.
    database: Database
    #: Whether the database is this host's to close (not the services' claims').
    owns_database: bool
    progress: ProgressStore
    readers: ReaderGate
    #: What the host needs to serve, asked by load balancers (/_/ready).
    readiness: Readiness


def wire(
    settings: HostSettings, sources: HostedSources, kept: Mapping[str, Kind] | None = None
) -> Wiring:
    """The host's parts for ``settings``; ``kept``: what the faces keep through the cache."""
    cache_settings = settings.cache
    cache = ResultCache(
        {
            "manifest": MEMO_SECONDS,
            "configuration": MEMO_SECONDS,
            "authorization": MEMO_SECONDS,
            "search": cache_settings.search,
            "manga": cache_settings.manga,
            "chapters": cache_settings.chapters,
            # A file's link is handed out for half its life at most, so it stays valid.
            "download": settings.host.link_ttl // 2,
            # Never longer than a signed page link lives.
            "page-list": min(PAGE_LIST_SECONDS, settings.host.link_ttl),
            # What a source that reads its own pages needs to read one (no links in it).
            "own-pages": PAGE_LIST_SECONDS,
            **(kept or {}),
        },
        cache_settings.max_entries,
    )
    cluster = Cluster(settings)
    cluster.share_cache(cache, SHARED_CODECS)
    cluster.share_services(sources.services)
    attempts = AttemptGate(
        MovingWindowLimit(settings.limits.auth_attempts, "toshokan-auth", cluster.counters)
    )
    sources.services.on_content_changed(cache.invalidate)
    # Every signed link the host hands out, of any face or source, is signed this one way.
    sources.services.provide(
        link_signer=functools.partial(
            signed_query, sources.services.secret, ttl=settings.host.link_ttl
        )
    )
    claims = sources.services.claims
    owns_database = not isinstance(claims, DatabaseClaims)
    database = claims.database if isinstance(claims, DatabaseClaims) else open_database(settings)
    readiness = Readiness()
    cluster.add_checks(readiness)
    if isinstance(database, ServerDatabase):
        # Required: readers, progress and new slug claims fail here without it. Borrowing
        # a connection gives up before the check's own bound, so the answer says why.
        answer = functools.partial(database.answer, CHECK_SECONDS * 0.75)
        readiness.add("postgresql", functools.partial(asyncio.to_thread, answer))
    return Wiring(
        settings=settings,
        sources=sources,
        cache=cache,
        cluster=cluster,
        attempts=attempts,
        database=database,
        owns_database=owns_database,
        progress=ProgressStore(database),
        readers=ReaderGate(Readers(database), attempts, sources.services.secret, cache),
        readiness=readiness,
    )
