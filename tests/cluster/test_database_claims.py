"""Hosts of one library agree on slugs, chapter dates and hashes, whatever each saw first.

Two hosts here are two in-process hosts with data directories of their own, as
two replicas have: slugs and the dates of undated chapters agree when they share
the host's database (``[cluster] database``), and the manifest hash agrees with
or without one.
"""

import asyncio
import os
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.databases import emptied
from tests.sources.local.helpers import cbz
from toshokan.core.database.claims import DatabaseClaims
from toshokan.core.database.postgres import PostgresDatabase
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.sources.local.index.slug_rows import SharedClaims, claimed_slugs
from toshokan.testing import ServedHost, serve

pytestmark = pytest.mark.anyio

COLLIDING = ("Re Zero", "Re-Zero")
#: 2024-05-01T00:00:00Z: when the test library's files were last changed.
FILES_TIME = 1714521600
HostFactory = Callable[[Path, Path], AbstractAsyncContextManager[ServedHost]]


def hosts(database: str | None) -> HostFactory:
    """Hosts serving one folder as ``local``, sharing the host database ``database`` if any."""

    def start(root: Path, data_dir: Path) -> AbstractAsyncContextManager[ServedHost]:
        settings: dict[str, Any] = {"host": {"secret": "one-secret-for-every-replica"}}
        if database is not None:
            settings["cluster"] = {"database": database}
        return serve(
            LocalLibrary,
            LocalSettings(root=root, watch=False, start_wait=120),
            slug="local",
            data_dir=data_dir,
            **settings,
        )

    return start


@pytest.fixture
def shared_host_for(module_database_url: str) -> HostFactory:
    return hosts(emptied(module_database_url))


@pytest.fixture(params=["sqlite", "postgresql"])
def any_host_for(request: pytest.FixtureRequest) -> HostFactory:
    if request.param == "sqlite":
        return hosts(None)
    return hosts(emptied(request.getfixturevalue("module_database_url")))


async def series_slugs(host: ServedHost) -> dict[str, str]:
    """Folder name -> slug, for every series the host lists."""
    library: LocalLibrary = host.source("local")
    db = library._require_index().reader()
    return {relpath: slug for relpath, slug in db.execute("SELECT relpath, slug FROM series")}


def chapter_times(host: ServedHost) -> dict[str, tuple[float, float]]:
    """Chapter path -> (when it first entered the library, its date), as the host's index has it."""
    db = host.source("local")._require_index().reader()
    return {
        relpath: (first_seen, date)
        for relpath, first_seen, date in db.execute(
            "SELECT relpath, first_seen, date FROM chapters"
        )
    }


async def names_arriving_in_opposite_orders(
    host_for: HostFactory, tmp_path: Path
) -> list[dict[str, str]]:
    """Two hosts, each with its own copy of a library: one sees ``Re Zero`` first, the other
    ``Re-Zero``; then each gets the other name. Their slugs once both are in."""
    async with AsyncExitStack() as stack:
        hosts = []
        for index, first in enumerate(COLLIDING):
            root = tmp_path / f"library-{index}"
            cbz(root / first / "Ch.1.cbz")
            hosts.append(
                await stack.enter_async_context(host_for(root, tmp_path / f"data-{index}"))
            )
        for index, (host, second) in enumerate(zip(hosts, reversed(COLLIDING), strict=True)):
            cbz(tmp_path / f"library-{index}" / second / "Ch.1.cbz")
            await host.source("local").rescan()
        return [await series_slugs(host) for host in hosts]


async def test_colliding_names_get_one_slug_on_every_replica_sharing_the_database(
    shared_host_for: HostFactory, tmp_path: Path
) -> None:
    first, second = await names_arriving_in_opposite_orders(shared_host_for, tmp_path)
    assert first == second
    assert first["Re Zero"] == "re-zero"  # the first claim anywhere holds everywhere
    assert first["Re-Zero"].startswith("re-zero-")


async def test_without_a_shared_database_each_host_claims_alone(tmp_path: Path) -> None:
    """What the shared claims prevent: each host gives the bare slug to the name it saw first."""
    first, second = await names_arriving_in_opposite_orders(hosts(None), tmp_path)
    assert first["Re Zero"] == "re-zero" and second["Re-Zero"] == "re-zero"


async def test_chapter_slugs_claimed_at_once_by_two_replicas_agree(
    shared_host_for: HostFactory, tmp_path: Path
) -> None:
    """Two replicas scanning one folder at the same time, chapters colliding within a series."""
    root = tmp_path / "library"
    cbz(root / "Paper Cranes" / "Ch.1 [G].cbz")
    cbz(root / "Paper Cranes" / "extra" / "Ch.1 [G].cbz")
    for name in COLLIDING:
        cbz(root / name / "Ch.1.cbz")
    async with AsyncExitStack() as stack:
        # Started together: both first scans (worker threads) claim at the same time.
        started = await asyncio.gather(
            *(stack.enter_async_context(shared_host_for(root, tmp_path / n)) for n in "ab")
        )
        slugs = []
        for host in started:
            db = host.source("local")._require_index().reader()
            chapters = {
                relpath: slug for relpath, slug in db.execute("SELECT relpath, slug FROM chapters")
            }
            slugs.append((await series_slugs(host), chapters))
        assert slugs[0] == slugs[1]
        series, chapters = slugs[0]
        assert series["Re Zero"] == "re-zero" and series["Re-Zero"].startswith("re-zero-")
        # The same chapter name in two folders of one series: two slugs.
        assert chapters["Paper Cranes/Ch.1 [G].cbz"] == "ch-1-g"
        assert chapters["Paper Cranes/extra/Ch.1 [G].cbz"].startswith("ch-1-g-")


async def test_indexes_made_before_the_database_was_shared_take_its_claims(
    module_database_url: str, tmp_path: Path
) -> None:
    """Two replicas that each claimed alone (and so disagree) are given one database: the
    first to start keeps its slugs, the other follows; without it again, nothing moves."""
    own, shared = hosts(None), hosts(emptied(module_database_url))
    roots = [tmp_path / "library-0", tmp_path / "library-1"]
    before = []
    for index, root in enumerate(roots):  # each on its own: opposite orders, other slugs
        names = COLLIDING if index == 0 else tuple(reversed(COLLIDING))
        cbz(root / names[0] / "Ch.1.cbz")
        async with own(root, tmp_path / f"data-{index}") as host:
            cbz(root / names[1] / "Ch.1.cbz")
            await host.source("local").rescan()
            before.append((await series_slugs(host), chapter_times(host)))
    assert before[0] != before[1]
    after = []
    for index, root in enumerate(roots):
        async with shared(root, tmp_path / f"data-{index}") as host:
            after.append((await series_slugs(host), chapter_times(host)))
    # The first replica's slugs and chapter dates, for both.
    assert after[0] == after[1] == before[0]
    async with own(roots[1], tmp_path / "data-1") as host:
        cbz(roots[1] / "Re\uff1aZero" / "Ch.1.cbz")  # a newcomer, claimed by the index again
        await host.source("local").rescan()
        alone = await series_slugs(host)
    assert {name: alone[name] for name in COLLIDING} == before[0][0]
    assert alone["Re\uff1aZero"] not in before[0][0].values()


@pytest.mark.parametrize("shared", [False, True], ids=["alone", "shared"])
async def test_replicas_date_a_chapter_by_when_the_first_of_them_saw_it(
    module_database_url: str, tmp_path: Path, shared: bool
) -> None:
    """Chapters with no release date are dated by when they entered the library: on replicas
    sharing the database, when the first replica saw them, so their lists agree."""
    start = hosts(emptied(module_database_url) if shared else None)
    root = tmp_path / "library"
    for number in (1, 2):
        cbz(root / "Paper Cranes" / f"Ch.{number}.cbz")  # no ComicInfo: no release date
    answers = []
    async with AsyncExitStack() as stack:
        for name in ("a", "b"):  # one after the other: each first scan at its own time
            host = await stack.enter_async_context(start(root, tmp_path / name))
            search = {"page": 1, "sort": "createdAt", "direction": "desc"}
            found = (await host.client.post("/local/search", json=search)).json()
            chapters = (await host.client.get("/local/paper-cranes/chapters")).json()
            details = (await host.client.get("/local/paper-cranes")).json()
            answers.append((found, chapters, details))
    if shared:
        assert answers[0] == answers[1]
    else:  # what sharing prevents: each replica dates the chapters by its own first scan
        assert answers[0][1] != answers[1][1]


def test_a_slug_another_replica_claimed_meanwhile_is_chosen_again(
    module_database_url: str,
) -> None:
    """Between reading the claims and claiming, another replica took the slug: the scan
    takes the next one, the one every replica would now give this path."""
    database = PostgresDatabase(emptied(module_database_url))
    shared = DatabaseClaims(database)

    class RacedClaims(SharedClaims):
        raced = False

        def claim(self, scope: str, wanted: Mapping[str, str]) -> dict[str, str]:
            if not self.raced:
                self.raced = True
                shared.claim("local", scope, {"re-zero": "Re-Zero"})  # the other replica
            return super().claim(scope, wanted)

    claims = RacedClaims(shared, "local")
    chosen = claimed_slugs(claims, "", [("Re Zero", "re-zero")])
    assert claims.raced
    assert chosen["Re Zero"].startswith("re-zero-")
    assert shared.held("local", "") == {"re-zero": "Re-Zero", chosen["Re Zero"]: "Re Zero"}
    database.close()


async def manifest_and_configuration(host: ServedHost) -> tuple[str, Any]:
    manifest = (await host.client.get("/")).json()
    return manifest["hash"], (await host.client.get("/local")).json()


async def test_two_hosts_of_one_library_report_one_manifest_hash(
    any_host_for: HostFactory, tmp_path: Path
) -> None:
    root = tmp_path / "library"
    write_demo_library(root)
    for path in root.rglob("*"):  # written long ago: a scan now is far from the files' time
        os.utime(path, (FILES_TIME, FILES_TIME))
    os.utime(
        root / "Iron Garden", (FILES_TIME + 50, FILES_TIME + 50)
    )  # a folder's time: not content
    newest = root / "Iron Garden" / "Iron Garden Ch.002 [Gearworks].cbz"
    os.utime(newest, (FILES_TIME + 10, FILES_TIME + 10))
    async with AsyncExitStack() as stack:
        seen = []
        for name in ("a", "b"):  # one after the other: their scans run at different times
            host = await stack.enter_async_context(any_host_for(root, tmp_path / name))
            seen.append(await manifest_and_configuration(host))
        assert seen[0] == seen[1]
        # The library's time is its files' newest change, not either scan's.
        updated = datetime.fromisoformat(seen[0][1]["updatedAt"].replace("Z", "+00:00"))
        assert updated == datetime.fromtimestamp(FILES_TIME + 10, UTC)
