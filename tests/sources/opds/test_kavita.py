"""A Kavita-like catalogue: the API key lives in every URL and must never leave the host."""

import logging

import pytest

from tests.sources.opds.fakes import Kavita
from tests.sources.opds.helpers import get_json, pixel, read_all_pages, search, serve_opds

pytestmark = pytest.mark.anyio


def settings(fake: Kavita) -> dict[str, str]:
    return {"url": f"{fake.origin}/api/opds/{{api_key}}", "api_key": fake.key}


async def test_the_key_reaches_kavita_but_never_a_reader(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    kavita = Kavita()
    seen: list[str] = []
    async with serve_opds(kavita, tmp_path, **settings(kavita)) as host:
        config = await get_json(host, "/shelf")
        seen.append(str(config))
        found = await search(host, query="blue")
        seen.append(str(found))
        slug = found["results"][0]["slug"]
        seen.append(str(await get_json(host, f"/shelf/{slug}")))
        chapters = await get_json(host, f"/shelf/{slug}/chapters")
        seen.append(str(chapters))
        seen.append(str(await get_json(host, f"/shelf/{slug}/chapters/{chapters[0]['slug']}")))
        images = await read_all_pages(host, slug, chapters[-1]["slug"])
    assert found["results"][0]["cover"].startswith("http://testserver/_/shelf/img/")
    assert len(images) == 4 and pixel(images[-1])[0] == 3
    assert [p["name"] for p in config["presets"]] == ["On Deck", "All Series"]
    assert all(Kavita.key in path for path in kavita.paths)
    text = "".join(seen) + caplog.text
    assert Kavita.key not in text
    assert slug not in (Kavita.key,)


async def test_a_wrong_key_is_a_misconfiguration_without_the_key(tmp_path):
    kavita = Kavita()
    options = {"url": f"{kavita.origin}/api/opds/{{api_key}}", "api_key": "not-the-key-123"}
    async with serve_opds(kavita, tmp_path, **options) as host:
        answer = await host.client.post("/shelf/search", json={"page": 1, "sort": "relevance"})
    assert answer.status_code == 502
    assert "api_key" in answer.json()["error"]["message"]
    assert "not-the-key-123" not in answer.text
