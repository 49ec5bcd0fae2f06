"""Whatever a reader or a stranger sends, the answer is a 4xx, never a 500."""

import pytest

from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/_/opds/local/all?page=0", 400),
        ("/_/opds/local/all?page=abc", 400),
        ("/_/opds/local/all?page=99999999", 400),
        ("/_/opds/local/all?sort=nonsense", 400),
        ("/_/opds/local/search?q=" + "x" * 500, 400),
        ("/_/opds/local/presets/99", 404),
        ("/_/opds/local/presets/-1", 404),
        ("/_/opds/local/series/nosuch/nochapter", 404),
        ("/_/opds/local/series/nosuch/nochapter/pages/0", 404),
        ("/_/opds/local/series/a/b/pages/x", 404),
        ("/_/opds/local/series/a/b/pages/12345678", 404),
        ("/_/opds/LOCAL", 404),
        ("/_/opds/v2/nosuch", 404),
        ("/_/opds/v2/local/all?page=0", 400),
        ("/_/image/local", 400),
        ("/_/image/local?u=" + "h" * 5000, 400),
        ("/_/image/local?u=http://example.org/a.png", 401),
        ("/_/image/local?u=http://example.org/a.png&exp=99999999999&sig=abc", 401),
        ("/_/image/nosuch?u=x", 404),
    ],
)
async def test_bad_requests_are_clean_errors(
    local_host: ServedHost, path: str, status: int
) -> None:
    answer = await local_host.client.get(path)
    assert answer.status_code == status, answer.text[:300]
    assert answer.json()["error"]["code"]


async def test_a_reader_that_leaves_max_width_unfilled_gets_full_size(
    local_host: ServedHost,
) -> None:
    client = local_host.client
    search = await client.post("/local/search", json={"page": 1, "sort": "title"})
    manga = search.json()["results"][0]["slug"]
    chapter = (await client.get(f"/local/{manga}/chapters")).json()[0]["slug"]
    base = f"/_/opds/local/series/{manga}/{chapter}/pages/0"
    full = await client.get(base)
    for junk in ("{maxWidth}", "", "wide", "-3"):
        answer = await client.get(base, params={"maxWidth": junk})
        assert answer.status_code == 200 and answer.content == full.content
