"""A kept chapter waits for its upstream budget as long as the budget asks: nobody waits on a
download, so its wait for a turn is not the upstream being slow and does not run out the
upstream deadline (which then failed the chapter, to be tried again minutes later)."""

from pathlib import Path
from typing import Any

import pytest

from tests.cluster.upstream import most_in_any_window
from tests.core.downloads.queue import follow_and_keep, pirates, settled
from tests.sources.mangadex.fake import API, REPORT, UPLOADS
from tests.sources.mangadex.image_servers import ImageServers
from tests.sources.mangadex.sample import two_series
from toshokan.sources.local import LocalLibrary, LocalSettings
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import serve_host

pytestmark = pytest.mark.anyio

#: One API request every two seconds, and a second and a half for the upstream to answer
#: what one step of keeping a chapter asks (its page list: two requests).
RATE, TIMEOUT = 0.5, 1.5


async def test_a_chapter_waiting_for_its_budget_longer_than_the_deadline_is_kept(
    tmp_path: Path,
) -> None:
    fake = two_series()
    library = tmp_path / "library"
    library.mkdir()
    sources: dict[str, Any] = {
        "local": (LocalLibrary, LocalSettings(root=library, watch=False)),
        "mangadex": (
            MangaDex,
            Settings(api_url=API, uploads_url=UPLOADS, report_url=REPORT, requests_per_second=RATE),
        ),
    }
    async with serve_host(
        sources,
        upstream=ImageServers(fake),
        data_dir=tmp_path / "data",
        limits={"rate_limit": 0},
        follows={"round": 1},
        server={"upstream_timeout": TIMEOUT},
    ) as host:
        await follow_and_keep(host, pirates(fake), backfill=1)
        (kept,) = await settled(host, 1, ("done", "failed"))
    assert (kept.state, kept.attempts, kept.reason) == ("done", 0, None)
    api = [r.at for r in fake.requests if not r.path.startswith(("/at-home/", "/report"))]
    assert len(api) >= 4  # the check's and the chapter's: each waited about 2 s for its turn
    assert most_in_any_window(api, 1 / RATE - 0.1) == 1
