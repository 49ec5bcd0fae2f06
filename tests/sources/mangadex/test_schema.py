"""The fake serves only what MangaDex documents: every payload kind checked against the schema."""

import httpx
import pytest
from pydantic import ValidationError

from toshokan.errors import MangaNotFound
from toshokan.models import SearchRequest
from toshokan.sdk import RequestContext
from toshokan.sources.mangadex import MangaDex

from . import schema
from .fake import API, Cover, FakeMangaDex, new_id

pytestmark = pytest.mark.anyio
CTX = RequestContext()


async def test_every_payload_the_adapter_reads_is_documented(
    fake: FakeMangaDex, source: MangaDex
) -> None:
    author = fake.add_person("Author")
    manga = fake.add_manga(
        "m",
        {"en": "Title"},
        alt_titles=[{"ja": "タイトル"}],
        description={"en": "About."},
        authors=[author.id],
        artists=[author.id],
        tags=[t["id"] for t in fake.tags[:3]],
        covers=[Cover(new_id("c1"), "one.jpg", "1"), Cover(new_id("c2"), "two.jpg", None)],
        demographic=None,
    )
    group = fake.add_group("Group")
    chapter = fake.add_chapter(manga, "1", groups=[group.id])
    fake.add_chapter(manga, None, groups=[])
    await source.search(SearchRequest(page=1, sort="latest", filters={"author": "Author"}), CTX)
    await source.manga(manga.id, CTX)
    await source.chapters(manga.id, CTX)
    await source.pages(manga.id, chapter.id, CTX)
    with pytest.raises(MangaNotFound):
        await source.manga(new_id("missing"), CTX)
    # The tag list is what `refresh-tags` reads.
    async with httpx.AsyncClient(transport=fake.transport(), base_url=API) as client:
        assert (await client.get("/manga/tag")).status_code == 200
    assert set(fake.validated) == set(schema.ENDPOINTS)


def test_the_schema_is_strict() -> None:
    good = {
        "result": "ok",
        "response": "collection",
        "data": [],
        "limit": 10,
        "offset": 0,
        "total": 0,
    }
    schema.validate("manga_list", good)
    with pytest.raises(ValidationError):
        schema.validate("manga_list", {**good, "unexpected": 1})
    with pytest.raises(ValidationError):
        schema.validate("manga_list", {k: v for k, v in good.items() if k != "total"})
    with pytest.raises(ValidationError):
        schema.validate(
            "at_home", {"result": "ok", "baseUrl": "x", "chapter": {"hash": "h", "data": []}}
        )


def test_relationships_are_minimal_or_fully_expanded() -> None:
    fake = FakeMangaDex()
    manga = fake.add_manga("m", "M", authors=[fake.add_person("P").id])
    minimal = fake._manga_payload(manga, set())
    schema.validate("manga", {"result": "ok", "response": "entity", "data": minimal})
    half_expanded = fake._manga_payload(manga, {"author"})
    half_expanded["relationships"][0]["attributes"] = {
        "name": "P"
    }  # expanded, but not as documented
    with pytest.raises(ValidationError):
        schema.validate("manga", {"result": "ok", "response": "entity", "data": half_expanded})
