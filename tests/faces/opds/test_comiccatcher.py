"""The OPDS 2.0 catalogue as comiccatcher reads it (:mod:`.comiccatcher`): a place saved at any
page reopens there, in both progression forms; the detail view's Download button downloads
the archive; search is offered from the root."""

import io
import math
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

from toshokan.testing import ServedHost

from . import comiccatcher
from .opds2_schema import assert_feed, assert_manifest
from .servers import local, serving
from .test_opds2 import get_json

pytestmark = pytest.mark.anyio

DIVINA = "application/divina+json"
OPDS_RELS = {
    comiccatcher.FLAT: "http://opds-spec.org/progression",
    comiccatcher.LOCATOR: "http://www.cantook.com/api/progression",
}
#: The device id comiccatcher makes once per installation (a UUID).
DEVICE = "bf97c2d4-5a0e-4c1b-9f3e-7d2a61c0e8aa"
PAGE_COUNTS = (3, 7, 10)


def write_chapter(path: Path, pages: int) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for n in range(1, pages + 1):
            image = io.BytesIO()
            Image.new("RGB", (30, 40), (n * 20, 80, 120)).save(image, "JPEG")
            archive.writestr(f"{n:03}.jpg", image.getvalue())


@pytest.fixture
async def counted_host(tmp_path: Path) -> AsyncIterator[ServedHost]:
    """One series whose chapters have 3, 7 and 10 pages."""
    series = tmp_path / "library" / "Page Counts"
    series.mkdir(parents=True)
    for pages in PAGE_COUNTS:
        write_chapter(series / f"Page Counts Ch.{pages:03d}.cbz", pages)
    async with serving({"local": local(tmp_path / "library")}, tmp_path) as served:
        yield served


async def chapters(client: httpx.AsyncClient) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each chapter's publication in the series feed and its manifest, fetched as the detail
    view fetches it."""
    titles = await get_json(client, "/_/opds/v2/local/all")
    series = await get_json(client, titles["navigation"][0]["href"])
    assert_feed(series)
    found = []
    for publication in series["publications"]:
        manifest = await get_json(client, comiccatcher.manifest_link(publication), DIVINA)
        assert_manifest(manifest)
        found.append((publication, manifest))
    assert sorted(len(m["readingOrder"]) for _, m in found) == list(PAGE_COUNTS)
    return found


@pytest.mark.parametrize("form", [comiccatcher.FLAT, comiccatcher.LOCATOR])
async def test_a_page_saved_reopens_at_that_page(counted_host: ServedHost, form: str) -> None:
    """Every page of chapters of 3, 7 and 10 pages, saved in the form the link's rel asks for,
    reopens at that page; the client's share and device come back as it sent them."""
    client = counted_host.client
    for publication, manifest in await chapters(client):
        order = manifest["readingOrder"]
        url, chosen = comiccatcher.progression_link(publication["links"], OPDS_RELS[form])
        assert chosen == form
        for index in range(len(order)):
            sent = comiccatcher.payload(form, DEVICE, index, order[index], len(order))
            answer = await client.put(url, json=sent)
            assert answer.status_code in (200, 201, 204), answer.text
            document = await comiccatcher.read_progression(client, url)
            assert comiccatcher.reopened_index(document, len(order)) == index, (form, index)
            # Without its position, the share alone still lands on the page.
            share, _ = comiccatcher.extract_locations(document)
            assert share == comiccatcher.share_of_page(index, len(order))
            assert comiccatcher.reopened_index({"progression": share}, len(order)) == index
            assert document["device"] == sent["device"]


async def test_a_place_another_face_recorded_reopens_at_its_page(
    counted_host: ServedHost,
) -> None:
    """Pages streamed through OPDS-PSE move the place; both documents then give a share whose
    ``floor(share * count)`` is the page (1 once the last page is read), and a position."""
    client = counted_host.client
    for publication, manifest in await chapters(client):
        order = manifest["readingOrder"]
        count = len(order)
        for index, page in enumerate(order):
            assert (await client.get(page["href"])).status_code == 200  # a page streamed
            for rel in OPDS_RELS.values():
                url, _ = comiccatcher.progression_link(publication["links"], rel)
                document = await comiccatcher.read_progression(client, url)
                assert comiccatcher.reopened_index(document, count) == index
                share, position = comiccatcher.extract_locations(document)
                assert share is not None and position == index + 1
                if index + 1 < count:
                    assert math.floor(share * count) == index == round(share * count)
                else:
                    assert share == 1.0
                assert document["device"]["id"]  # the draft wants one


async def test_the_detail_view_downloads_the_archive(
    counted_host: ServedHost, tmp_path: Path
) -> None:
    client = counted_host.client
    files = {path.read_bytes() for path in (tmp_path / "library").rglob("*.cbz")}
    downloaded = set()
    for _, manifest in await chapters(client):
        url = comiccatcher.download_link(manifest)
        assert url is not None, "the Download button stays disabled"
        answer = await client.get(url)
        assert answer.status_code == 200
        downloaded.add(answer.content)
    assert downloaded == files


async def test_search_from_the_root(counted_host: ServedHost) -> None:
    client = counted_host.client
    root = await get_json(client, "/_/opds/v2")
    assert_feed(root)
    template = comiccatcher.search_template(root)
    assert template is not None, "no search at the root"
    found = await get_json(client, template.url("page counts"))
    assert_feed(found)
    (group,) = found["groups"]
    assert group["metadata"]["title"] == "Local Library"
    (series,) = group["navigation"]
    assert series["title"] == "Page Counts"
    assert_feed(await get_json(client, series["href"]))
    nothing = await get_json(client, template.url("no such words anywhere"))
    assert_feed(nothing)
    assert "groups" not in nothing and nothing["navigation"]
