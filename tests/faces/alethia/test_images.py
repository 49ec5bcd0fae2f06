"""Which image links the dialect hands to the host's image pipeline."""

from typing import cast

import pytest

from toshokan.core import Core
from toshokan.faces.alethia import images
from toshokan.models import AuthConfig, AuthType, SearchConfig, SortOption, SourceConfiguration

HOST = "https://comics.example.org"
UPSTREAM = "https://images.upstream.example/a/1.png"
OWN = f"{HOST}/_/shelf/pages/1?exp=1&sig=abc"


def config(referer: str = "", required: bool = False) -> SourceConfiguration:
    return SourceConfiguration(
        name="Shelf",
        slug="shelf",
        icon="https://shelf.example/icon.png",
        url="https://shelf.example",
        referer=referer,
        languages=["en"],
        auth=AuthConfig(type=AuthType.BEARER if required else AuthType.NONE, required=required),
        search=SearchConfig(sort=[SortOption.TITLE]),
    )


@pytest.fixture
def through_host(monkeypatch: pytest.MonkeyPatch) -> None:
    def via_host(core: Core, cfg: SourceConfiguration, url: str, base_url: str) -> str:
        return f"{base_url}/_/image/{cfg.slug}?u={url}"

    monkeypatch.setattr(images, "via_host", via_host)


@pytest.mark.usefixtures("through_host")
@pytest.mark.parametrize("cfg", [config(referer="https://shelf.example/"), config(required=True)])
def test_upstream_links_needing_headers_go_through_the_host(cfg: SourceConfiguration) -> None:
    core = cast(Core, None)
    linked = images.header_free(core, cfg, [UPSTREAM, OWN], HOST)
    assert linked == [f"{HOST}/_/image/shelf?u={UPSTREAM}", OWN]


@pytest.mark.usefixtures("through_host")
def test_links_that_need_nothing_are_left_alone() -> None:
    core = cast(Core, None)
    assert images.header_free(core, config(), [UPSTREAM, OWN], HOST) == [UPSTREAM, OWN]
