"""The API docs page renders the host's OpenAPI 3.1 document in a real browser, with no internet."""

import json

import httpx
from playwright.sync_api import expect

from tests.browser.browsing import Watched, shot


def test_docs_page_renders_every_operation_from_the_package(desktop: Watched) -> None:
    page = desktop.open("/_/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("toshokan")
    expect(page.locator(".opblock-summary-path", has_text="/{source}/search")).to_be_visible()
    # The spec's nine operations, the follows API's seventeen and the downloads API's five.
    expect(page.locator(".opblock")).to_have_count(31)
    expect(page.get_by_text("Unable to render this definition")).to_have_count(0)

    # An operation opens and shows its documented error answers, not just 200.
    page.locator(".opblock-summary-path", has_text="/{source}/search").click()
    responses = page.locator(".opblock.is-open .responses-table .response-col_status")
    expect(responses.filter(has_text="400")).to_have_count(1)
    assert desktop.errors == []
    assert any(url.endswith("/openapi.json") for url in desktop.requests)


def test_docs_assets_are_compressed(host: str) -> None:
    script = httpx.get(f"{host}/_/docs/assets/swagger-ui-bundle.js")
    assert script.status_code == 200 and script.headers["content-encoding"] == "gzip"
    assert script.num_bytes_downloaded < 700_000


def test_try_it_out_runs_every_operation_as_the_page_fills_it_in(desktop: Watched) -> None:
    """Try it out, then Execute, with nothing typed: the spec's operations' parameters hold the
    host's own slugs and the bodies its sources' own searches, so each is answered 200."""
    served = httpx.get(f"{desktop.base}/").json()["sources"]
    page = desktop.open("/_/docs")
    spec = page.locator(".opblock").filter(
        has_not=page.locator(".opblock-summary-path", has_text="/_/")
    )
    expect(spec).to_have_count(9)
    for operation in spec.all():
        path = operation.locator(".opblock-summary-path").inner_text()
        operation.locator(".opblock-summary").click()
        operation.get_by_role("button", name="Try it out").click()
        if "{source}" in path:
            source = operation.locator("input[placeholder='source']")
            assert source.input_value() in served, path
        operation.get_by_role("button", name="Execute").click()
        answer = operation.locator(".live-responses-table tbody tr.response")
        expect(answer.locator(".response-col_status")).to_have_text("200")
        assert '"error"' not in answer.locator(".response-col_description").inner_text(), path
        if path == "/{source}/search":
            shot(page, "docs-try-it-out")
        operation.locator(".opblock-summary").click()
    assert desktop.errors == []


def test_the_host_apis_bodies_run_as_documented(desktop: Watched) -> None:
    """Each example body the host's own APIs document, sent as it is, is answered as documented."""
    document = httpx.get(f"{desktop.base}/openapi.json").json()
    bodied = [
        (method, path)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if "requestBody" in operation and path.startswith("/_/")
    ]
    expected = {
        ("post", "/_/follows/read"): "200",
        ("post", "/_/follows/checks"): "202",
        ("post", "/_/follows/targets"): "201",
        ("put", "/_/downloads/queue"): "200",
        # Their paths name a followed series or a download, which the page cannot fill in.
        ("put", "/_/follows/series/{source}/{manga}/keep"): None,
        # Names a source to keep from; this host serves only its library, which is never kept.
        ("put", "/_/follows/sources/{source}/keep"): None,
        ("post", "/_/downloads/{download}"): None,
    }
    assert sorted(bodied) == sorted(expected)
    page = desktop.open("/_/docs")
    for method, path in bodied:
        if expected[(method, path)] is None:
            continue
        operation = page.locator(f".opblock-{method}").filter(
            has=page.locator(".opblock-summary-path", has_text=path)
        )
        operation.locator(".opblock-summary").click()
        operation.get_by_role("button", name="Try it out").click()
        operation.get_by_role("button", name="Execute").click()
        answer = operation.locator(".live-responses-table tbody tr.response")
        expect(answer.locator(".response-col_status")).to_have_text(expected[(method, path)])
        # No Error object (a target's own "error" field is null).
        assert '"error": {' not in answer.locator(".response-col_description").inner_text()
    assert desktop.errors == []


def test_example_answers_are_the_hosts_own(desktop: Watched) -> None:
    """What the docs page shows as an answer names slugs the host has, and pages from 1."""
    page = desktop.open("/_/docs")
    search = page.locator(".opblock-post").filter(
        has=page.locator(".opblock-summary-path", has_text="/{source}/search")
    )
    search.locator(".opblock-summary").click()
    shown = search.locator(".responses-table .response").first.locator(".example").inner_text()
    example = json.loads(shown)
    assert example["page"] == 1 and example["results"]
    for entry in example["results"]:
        details = httpx.get(f"{desktop.base}/local/{entry['slug']}")
        assert details.status_code == 200 and details.json()["title"] == entry["title"]
    assert desktop.errors == []
