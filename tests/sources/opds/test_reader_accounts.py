"""Readers signing in with their own catalogue account (``auth = "basic"``).

The toshokan source then requires authentication; each reader's name and
password are checked against the catalogue and sent with that reader's
requests only, so two readers see their own libraries, and the catalogue
refusing an account is that reader's ``INVALID_CREDENTIALS``.
"""

import base64
import logging
from typing import Any
from urllib.parse import urlsplit

import pytest
from pydantic import ValidationError

from tests.sources.opds.fakes import Calibre, Komga
from tests.sources.opds.helpers import pixel, serve_opds
from toshokan.sources.opds.settings import Settings
from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio

KID, KID_PASSWORD = "kid@komga.test", "kid-pass-4711"


def komga_with_two_readers() -> Komga:
    """The reader sees everything; the kid's account does not see "Red Mountain"."""
    komga = Komga()
    komga.users[KID] = KID_PASSWORD
    komga.hidden[KID] = {"Red Mountain"}
    return komga


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


async def sign_in(host: ServedHost, user: str, password: str) -> dict[str, str]:
    answer = await host.client.post(
        "/shelf/authenticate", json={"username": user, "password": password}
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["success"] is True, body
    headers: dict[str, str] = body["headers"]
    return headers


async def titles(host: ServedHost, headers: dict[str, str], query: str) -> list[str]:
    body = {"page": 1, "sort": "relevance", "query": query}
    answer = await host.client.post("/shelf/search", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    return [r["title"] for r in answer.json()["results"]]


async def get(host: ServedHost, path: str, headers: dict[str, str]) -> Any:
    answer = await host.client.get(path, headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_each_reader_signs_in_and_sees_their_own_library(tmp_path):
    komga = komga_with_two_readers()
    async with serve_opds(komga, tmp_path, auth="basic") as host:
        config = (await host.client.get("/shelf")).json()
        anonymous = await host.client.post("/shelf/search", json={"page": 1, "sort": "relevance"})
        refused = await host.client.post(
            "/shelf/authenticate", json={"username": Komga.user, "password": "guess"}
        )
        reader = await sign_in(host, Komga.user, Komga.password)
        kid = await sign_in(host, KID, KID_PASSWORD)
        signed_in = len(komga.authorizations)
        assert await titles(host, reader, "red") == ["Red Mountain"]
        assert await titles(host, kid, "red") == []
        assert await titles(host, kid, "blue") == ["Blue Harbour"]
        config_after = (await host.client.get("/shelf")).json()
    assert config["auth"] == {"type": "basic", "required": True, "fields": ["username", "password"]}
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["code"] == "INVALID_CREDENTIALS"
    assert refused.json()["success"] is False
    assert refused.json()["error"]["code"] == "INVALID_CREDENTIALS"
    assert reader == {"Authorization": basic(Komga.user, Komga.password)}
    # every request made for a reader carried that reader's own account
    sent = set(komga.authorizations[signed_in:])
    assert sent == {basic(Komga.user, Komga.password), basic(KID, KID_PASSWORD)}
    # the catalogue's shelves are read once a reader has signed in
    assert len(config_after["presets"]) == 5


async def test_a_series_hidden_from_a_reader_stays_hidden_behind_another_readers_slug(tmp_path):
    komga = komga_with_two_readers()
    async with serve_opds(komga, tmp_path, auth="basic") as host:
        reader = await sign_in(host, Komga.user, Komga.password)
        kid = await sign_in(host, KID, KID_PASSWORD)
        body = {"page": 1, "sort": "relevance", "query": "red"}
        found = await host.client.post("/shelf/search", json=body, headers=reader)
        slug = found.json()["results"][0]["slug"]
        chapters = await get(host, f"/shelf/{slug}/chapters", reader)
        kids = await host.client.get(f"/shelf/{slug}/chapters", headers=kid)
        kids_pages = await host.client.get(
            f"/shelf/{slug}/chapters/{chapters[0]['slug']}", headers=kid
        )
    assert kids.status_code == 404 and kids.json()["error"]["code"] == "MANGA_NOT_FOUND"
    assert kids_pages.status_code == 404


async def test_page_links_are_signed_expiring_and_carry_no_credentials(tmp_path):
    komga = komga_with_two_readers()
    secrets = [Komga.user, Komga.password, basic(Komga.user, Komga.password).split()[1]]
    async with serve_opds(komga, tmp_path, auth="basic") as host:
        reader = await sign_in(host, Komga.user, Komga.password)
        body = {"page": 1, "sort": "relevance", "query": "red"}
        found = await host.client.post("/shelf/search", json=body, headers=reader)
        slug = found.json()["results"][0]["slug"]
        chapters = await get(host, f"/shelf/{slug}/chapters", reader)
        urls = await get(host, f"/shelf/{slug}/chapters/{chapters[0]['slug']}", reader)
        before = len(komga.authorizations)
        images = [await host.client.get(url) for url in urls]  # an image loader: no credentials
        fetched_with = set(komga.authorizations[before:])
        # the account named in a link is covered by both signatures: another name is refused
        parts = urlsplit(urls[0])
        segments = parts.path.split("/")
        segments[4] = "r" + "0" * 32
        forged = await host.client.get(f"{'/'.join(segments)}?{parts.query}")
        unsigned = await host.client.get(parts.path)
    assert len(urls) == 2
    assert all("exp=" in url and "sig=" in url for url in urls)
    assert not [s for s in secrets for url in urls if s.lower() in url.lower()]
    assert [i.status_code for i in images] == [200, 200]
    assert [pixel(i.content)[0] for i in images] == [0, 1]
    assert fetched_with == {basic(Komga.user, Komga.password)}
    assert forged.status_code in (401, 404) and unsigned.status_code == 401


async def test_a_reader_the_catalogue_stops_accepting_must_sign_in_again(tmp_path):
    komga = komga_with_two_readers()
    async with serve_opds(komga, tmp_path, auth="basic") as host:
        kid = await sign_in(host, KID, KID_PASSWORD)
        assert await titles(host, kid, "blue") == ["Blue Harbour"]
        komga.users[KID] = "changed-upstream"
        answer = await host.client.post(
            "/shelf/search", json={"page": 1, "sort": "relevance", "query": "green"}, headers=kid
        )
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "INVALID_CREDENTIALS"
    assert "configured" not in answer.json()["error"]["message"]


async def test_no_reader_credential_reaches_a_log_line(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    komga = komga_with_two_readers()
    async with serve_opds(komga, tmp_path, auth="basic") as host:
        await host.client.post("/shelf/authenticate", json={"username": KID, "password": "wrong"})
        kid = await sign_in(host, KID, KID_PASSWORD)
        found = await host.client.post(
            "/shelf/search", json={"page": 1, "sort": "relevance", "query": "blue"}, headers=kid
        )
        slug = found.json()["results"][0]["slug"]
        chapters = await get(host, f"/shelf/{slug}/chapters", kid)
        urls = await get(host, f"/shelf/{slug}/chapters/{chapters[0]['slug']}", kid)
        await host.client.get(urls[0])
        komga.fail_with = 500
        broken = await host.client.get(urls[1])
        komga.fail_with = None
        komga.users[KID] = "changed-upstream"
        await host.client.post(
            "/shelf/search", json={"page": 1, "sort": "relevance", "query": "x"}, headers=kid
        )
    assert broken.status_code == 502
    logged = caplog.text + "".join(str(r.args) for r in caplog.records)
    assert "shelf" in logged  # the host did log this session
    for secret in (KID, KID_PASSWORD, basic(KID, KID_PASSWORD).split()[1]):
        assert secret not in logged


async def test_ping_is_ok_while_the_catalogue_asks_for_an_account(tmp_path):
    komga = komga_with_two_readers()
    async with serve_opds(komga, tmp_path, auth="basic") as host:
        ping = (await host.client.get("/shelf/ping")).json()
        komga.fail_with = 503
        down = (await host.client.get("/shelf/ping")).json()
    assert ping["status"] == "ok" and down["status"] == "down"


def test_reader_sign_in_takes_no_operator_account():
    with pytest.raises(ValidationError, match="each reader signs in"):
        Settings(url=Komga.root, auth="basic", username=Komga.user, password=Komga.password)


async def test_readers_sign_in_through_toshokans_own_opds_face(tmp_path):
    komga = komga_with_two_readers()
    async with serve_opds(komga, tmp_path, auth="basic") as host:
        challenged = await host.client.get("/_/opds/shelf/search", params={"q": "red"})
        reader = {"Authorization": basic(Komga.user, Komga.password)}
        kid = {"Authorization": basic(KID, KID_PASSWORD)}
        readers = await host.client.get("/_/opds/shelf/search", params={"q": "red"}, headers=reader)
        kids = await host.client.get("/_/opds/shelf/search", params={"q": "red"}, headers=kid)
    assert challenged.status_code == 401
    assert challenged.headers["www-authenticate"].startswith("Basic")
    assert readers.status_code == 200 and "Red Mountain" in readers.text
    assert kids.status_code == 200 and "Red Mountain" not in kids.text


async def test_a_readers_download_is_paged_through_links_naming_their_account(tmp_path):
    calibre = Calibre()
    calibre.account = ("ann", "ann-pass-2024")
    calibre.formats = {2: ["PDF"]}
    async with serve_opds(calibre, tmp_path, auth="basic") as host:
        ann = await sign_in(host, *calibre.account)
        found = await host.client.post(
            "/shelf/search", json={"page": 1, "sort": "relevance", "query": "star"}, headers=ann
        )
        slug = found.json()["results"][0]["slug"]
        chapters = await get(host, f"/shelf/{slug}/chapters", ann)
        urls = await get(host, f"/shelf/{slug}/chapters/{chapters[0]['slug']}", ann)
        pages = [await host.client.get(url) for url in urls]
        # a host that no longer knows whose link it is (restarted) refuses it; a fresh list works
        host.source("shelf").accounts._readers.clear()
        forgotten = await host.client.get(urls[0])
        fresh = await get(host, f"/shelf/{slug}/chapters/{chapters[0]['slug']}", ann)
        again = await host.client.get(fresh[0])
    assert [p.status_code for p in pages] == [200] * 4
    assert "/book/" in urls[0] and calibre.account[1] not in urls[0]
    assert forgotten.status_code == 404 and "expired" in forgotten.json()["error"]["message"]
    assert again.status_code == 200 and again.content == pages[0].content
    assert calibre.downloads == 1
