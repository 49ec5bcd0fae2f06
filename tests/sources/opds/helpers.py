"""Reading a served OPDS source the way a reader app does."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from toshokan.sources.opds import Opds
from toshokan.testing import ServedHost, serve


@asynccontextmanager
async def serve_opds(fake: Any, data_dir: Path, **options: Any) -> AsyncIterator[ServedHost]:
    settings = {"url": fake.root, "name": "Shelf", **options}
    async with serve(Opds, settings, slug="shelf", upstream=fake.app(), data_dir=data_dir) as host:
        yield host


async def search(host: ServedHost, **request: Any) -> dict[str, Any]:
    body = {"page": 1, "sort": "relevance", **request}
    answer = await host.client.post("/shelf/search", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


async def get_json(host: ServedHost, path: str) -> Any:
    answer = await host.client.get(path)
    assert answer.status_code == 200, answer.text
    return answer.json()


async def read_all_pages(host: ServedHost, manga: str, chapter: str) -> list[bytes]:
    """Every page image of a chapter, fetched from the URLs the host gave, with no credentials."""
    urls = await get_json(host, f"/shelf/{manga}/chapters/{chapter}")
    images = []
    for url in urls:
        assert url.startswith("http://testserver/_/shelf/"), url
        answer = await host.client.get(url, headers={"Authorization": ""})
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("image/")
        images.append(answer.content)
    return images


def pixel(image: bytes) -> tuple[int, int, int]:
    """The first pixel's colour: the fakes paint page ``n`` with red ``n``."""
    import io

    from PIL import Image

    with Image.open(io.BytesIO(image)) as opened:
        return opened.convert("RGB").getpixel((0, 0))  # type: ignore[return-value]
