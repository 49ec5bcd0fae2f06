"""What the OPDS face's tests serve: hosts with the tests' secret and the sign-in budget."""

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from tests.sources.mangadex.fake import API, UPLOADS, FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, SourceSpec, serve_host

SECRET = "test-secret-0123456789abcdef0123"


#: Failed sign-ins a client may make a minute on ``readers_host``.
ATTEMPTS = 4

LOCKED = {"auth": "basic", "username": "reader", "password": "open sesame"}


def serving(
    sources: Mapping[str, SourceSpec],
    tmp_path: Path,
    upstream: Any = None,
    database_url: str | None = None,
    **limits: int,
) -> AbstractAsyncContextManager[ServedHost]:
    """``sources`` on a host with the tests' secret and no rate limit; readers and progress
    in ``database_url`` (PostgreSQL) when given, else SQLite in the data directory."""
    return serve_host(
        sources,
        upstream=upstream,
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0, **limits},
        cluster={"database": database_url},
    )


def local(root: Path, **options: Any) -> SourceSpec:
    return (LocalLibrary, LocalSettings(root=root, watch=False, **options))


def long_lists(
    tmp_path: Path, series: int, chapters: int
) -> AbstractAsyncContextManager[ServedHost]:
    """A library of ``series`` one-chapter series and MangaDex with one title of ``chapters``
    chapters: lists longer than a page."""
    library = tmp_path / "library"
    write_demo_library(library, series=series, chapters=1, pages=1)
    fake = FakeMangaDex()
    fake.add_many_chapters(fake.add_manga("long", "Long Voyage"), chapters, fake.add_group("Crew"))
    sources: dict[str, SourceSpec] = {
        "local": local(library),
        "mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS)),
    }
    return serving(sources, tmp_path, upstream=ImageServers(fake))
