"""The pieces of every OPDS 2.0 document: the response, link objects, addresses, pagination."""

import json
from typing import Any

from starlette.responses import Response

from toshokan.core import with_query
from toshokan.faces.opds.context import CatalogueVisit, cache_control

OPDS_JSON = "application/opds+json"
DIVINA = "application/divina+json"
OPEN_ACCESS = "http://opds-spec.org/acquisition/open-access"
WEBPUB_CONTEXT = "https://readium.org/webpub-manifest/context.jsonld"
DIVINA_PROFILE = "https://readium.org/webpub-manifest/profiles/divina"


def json_response(document: dict[str, Any], media_type: str, private: bool) -> Response:
    return Response(
        json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode(),
        media_type=media_type,
        headers=cache_control(private),
    )


def link(href: str, type_: str = OPDS_JSON, rel: str | None = None, **extra: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"href": href, "type": type_}
    if rel:
        found["rel"] = rel
    found.update(extra)
    return found


def search_link(visit: CatalogueVisit) -> dict[str, Any]:
    """The source's search as OPDS 2.0 has it: a templated link (``{?query}``)."""
    return link(visit.v2_url("search", template="{?query}"), rel="search", templated=True)


def pagination(
    url: str, page: int, more: bool, query: list[tuple[str, str]]
) -> list[dict[str, Any]]:
    def at(number: int) -> str:
        return with_query(url, [*query, ("page", str(number))])

    links = [link(at(1), rel="first")]
    if page > 1:
        links.append(link(at(page - 1), rel="previous"))
    if more:
        links.append(link(at(page + 1), rel="next"))
    return links


def way_back(
    visit: CatalogueVisit, url: str, page: int, query: list[tuple[str, str]]
) -> dict[str, Any]:
    """What an empty page offers instead of entries (the schema wants a feed to hold something):
    the feed's first page when this one is past its end, else the source's menu."""
    if page > 1:
        return link(with_query(url, [*query, ("page", "1")]), title="First page", rel="first")
    return link(visit.v2_url(), title=f"Nothing here: back to {visit.config.name}", rel="up")
