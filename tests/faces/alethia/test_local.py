"""The app reads the local library through /_/alethia, decoding as it does."""

import pytest

from tests.faces.alethia import app_decoder as decode
from tests.faces.alethia.reader import HOST, AppReader, Library
from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio


async def test_the_app_adds_the_host_and_reads_a_chapter(served: ServedHost) -> None:
    seen = await AppReader(served.client).read("local")
    assert seen.pages and len(seen.images) == len(seen.pages)
    for image in seen.images:
        assert image.status_code == 200
        assert image.headers["content-type"].startswith("image/")


async def test_host_object_has_full_sources_in_the_apps_keys(served: ServedHost) -> None:
    host = decode.host((await served.client.get("/_/alethia")).json())
    settings = served.core.settings.host
    assert (host["name"], host["author"], host["repository"]) == (
        settings.name,
        settings.author,
        settings.repository,
    )
    [source] = host["sources"]
    assert source["slug"] == "local"
    assert source["auth"] == {"type": "none", "required": False}
    # The trailing-slash form the app may build answers the same object.
    assert (await served.client.get("/_/alethia/")).json() == host


async def test_unknown_sorts_and_filters_are_left_out(served: ServedHost) -> None:
    spec = (await served.client.get("/local")).json()["search"]
    dialect = (await AppReader(served.client).source("local"))["search"]
    assert "latest" in spec["sort"] and "latest" not in dialect["sort"]
    assert {"genre", "author", "artist", "publisher"} <= set(spec["filters"])
    assert set(dialect["sort"]) == set(spec["sort"]) & decode.SORTS
    assert set(dialect["filters"]) == set(spec["filters"]) & decode.FILTERS
    assert dialect["tags"] == spec["tags"]


async def test_latest_preset_becomes_updated_at(served: ServedHost) -> None:
    presets = {p["name"]: p for p in (await AppReader(served.client).source("local"))["presets"]}
    request = presets["Recently updated"]["request"]
    assert request == {
        "query": "",
        "page": 1,
        "limit": 20,
        "sort": "updatedAt",
        "direction": "desc",
    }


async def test_the_spec_face_is_unchanged(served: ServedHost) -> None:
    manifest = (await served.client.get("/")).json()
    assert manifest["sources"] == ["local"] and "manifest" in manifest
    spec_presets = (await served.client.get("/local")).json()["presets"]
    assert spec_presets[0]["request"]["sort"] == "latest"


async def test_dates_are_utc_to_the_second(served: ServedHost) -> None:
    seen = await AppReader(served.client).read("local")
    for value in [seen.manga["createdAt"], seen.manga["updatedAt"]] + [
        c["date"] for c in seen.chapters
    ]:
        assert decode.date(value)
        assert value.endswith("Z") and "." not in value


async def test_chapter_slugs_name_the_chapter_on_their_own(served: ServedHost) -> None:
    reader = AppReader(served.client)
    titles = (
        await reader.search(
            "local", {"page": 1, "limit": 20, "sort": "title", "query": "", "direction": "asc"}
        )
    )["results"]
    slugs: set[str] = set()
    total = 0
    for entry in titles:
        chapters = await reader.get(f"/local/{entry['slug']}/chapters")
        slugs |= {c["slug"] for c in chapters}
        total += len(chapters)
        spec = (await served.client.get(f"/local/{entry['slug']}/chapters")).json()
        assert len(chapters) == len(spec)
        # Same chapter, same order, same pages whatever the manga segment says.
        for mine, theirs in zip(chapters, spec, strict=True):
            ours = await reader.get(f"/local/0/chapters/{mine['slug']}")
            direct = f"/local/{entry['slug']}/chapters/{theirs['slug']}"
            assert ours == (await served.client.get(direct)).json()
    assert len(slugs) == total  # unique across the whole source


async def test_slugs_are_stable_across_restarts(library: Library) -> None:
    async with library() as first:
        reader = AppReader(first.client)
        entry = (
            await reader.search(
                "local", {"page": 1, "limit": 5, "sort": "title", "query": "", "direction": "asc"}
            )
        )["results"][0]
        before = await reader.get(f"/local/{entry['slug']}/chapters")
    async with library() as second:
        after = await AppReader(second.client).get(f"/local/{entry['slug']}/chapters")
    assert [c["slug"] for c in before] == [c["slug"] for c in after]


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/_/alethia/nosuch", 404, "SOURCE_NOT_FOUND"),
        ("/_/alethia/local/no-such-manga", 404, "MANGA_NOT_FOUND"),
        ("/_/alethia/local/7/chapters/no-such-key", 404, "CHAPTER_NOT_FOUND"),
        ("/_/alethia/local/7/chapters/4_none_ch-1", 404, "MANGA_NOT_FOUND"),
        ("/_/alethia/local/search", 405, "INVALID_REQUEST"),
        ("/_/alethia/local/a/b/c/d/e", 404, "NOT_FOUND"),
    ],
)
async def test_errors_are_the_error_object(
    served: ServedHost, path: str, status: int, code: str
) -> None:
    response = await served.client.get(path)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code


async def test_searches_are_validated_as_on_the_spec_face(served: ServedHost) -> None:
    bad = {"page": 1, "sort": "views", "query": "", "limit": 20, "direction": "desc"}
    for path in ("/local/search", "/_/alethia/local/search"):
        response = await served.client.post(path, json=bad)
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "INVALID_REQUEST"
    missing = await served.client.post("/_/alethia/local/search", json={"query": ""})
    assert missing.json()["error"]["code"] == "MISSING_FIELDS"


async def test_the_address_the_user_types_is_the_prefix(served: ServedHost) -> None:
    assert HOST.endswith("/_/alethia")
    response = await served.client.get(HOST)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"


async def test_browsers_may_ask_from_any_origin(served: ServedHost) -> None:
    preflight = await served.client.options(
        "/_/alethia/local/search",
        headers={"Origin": "https://reader.example", "Access-Control-Request-Method": "POST"},
    )
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == "*"


async def test_unchanged_answers_are_not_sent_again(served: ServedHost) -> None:
    first = await served.client.get("/_/alethia")
    again = await served.client.get("/_/alethia", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
