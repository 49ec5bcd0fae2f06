"""Home in Chromium, on a desktop and a phone: "continue reading" leads on from where the reader
is (the next chapter once one is finished) and says what is gone rather than linking to it, one
search looks through every source, and a search is kept in the address."""

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browsing import (
    DESKTOP,
    HTTP_ERROR_LOG,
    PHONE,
    Watched,
    at,
    shot,
    showing,
    wait_for_page_image,
    watched_page,
)
from toshokan.core import Core
from toshokan.core.progress import IMPLICIT_READER, ChapterRef, Position

SIZES = {"desktop": DESKTOP, "phone": PHONE}
#: How a slug looks: what a reader must never be shown in place of a name.
SLUG = re.compile(r"\b[a-z0-9]+(?:-[a-z0-9]+)+\b")


@pytest.fixture(params=list(SIZES))
def visitor(
    request: pytest.FixtureRequest, browser: Any, host: str, nothing_read: None
) -> Iterator[Watched]:
    yield from watched_page(browser, host, SIZES[request.param])


def place(core: Core, source: str, manga: str, chapter: str, page: int, pages: int, **kw: Any):
    """The host's reader was at ``page`` (from 0) of ``chapter``, a moment ago."""
    position = Position(page, pages, kw.get("finished", False), time.time() - kw.get("ago", 0))
    core.progress.record(IMPLICIT_READER, ChapterRef(source, manga, chapter), position)


def known_in_this_browser(page: Any, titles: dict[str, str]) -> None:
    """Series this browser read before, by the title it kept of each."""
    page.evaluate(
        "titles => { for (const [key, title] of Object.entries(titles))"
        " localStorage.setItem('toshokan:title:' + key, JSON.stringify(title)); }",
        titles,
    )


def test_continue_reading_says_what_is_gone_and_never_links_to_it(
    visitor: Watched, served: tuple[str, Core]
) -> None:
    core = served[1]
    place(core, "local", "hoshi-no-tabibito", "ch-1-starlight-scans", 1, 3)
    place(core, "local", "sunken-city", "ch-3-tide", 2, 9, ago=10)  # the library lost it
    place(core, "local", "vanished", "ch-1", 0, 5, ago=20)  # ...and this one, never opened here
    place(core, "local", "iron-garden", "ch-9-rusted", 4, 9, ago=30)  # a chapter taken out
    place(core, "oldshelf", "far-away", "ch-1", 0, 4, ago=40)  # a source the host dropped
    page = visitor.open("/_/")
    known_in_this_browser(
        page, {"local/sunken-city": "Sunken City", "oldshelf/far-away": "Far Away"}
    )
    page.reload()
    continuing = page.get_by_role("region", name="Continue reading")
    entries = continuing.get_by_role("listitem")
    expect(entries).to_have_count(4)
    expect(continuing.locator("[aria-busy]")).to_have_count(0)
    live = continuing.get_by_role("link", name=re.compile("^Hoshi no Tabibito"))
    expect(live).to_have_text("Hoshi no Tabibito · Chapter 1 · page 2 of 3")
    expect(entries.nth(1)).to_have_text("Sunken City · no longer in Local Library")
    expect(entries.nth(1).get_by_role("link")).to_have_count(0)
    lost_chapter = continuing.get_by_role("link", name=re.compile("^Iron Garden"))
    expect(lost_chapter).to_have_text("Iron Garden · that chapter is no longer there")
    expect(entries.nth(3)).to_have_text("Far Away · no longer on this host")
    expect(entries.nth(3).get_by_role("link")).to_have_count(0)
    assert SLUG.findall(continuing.inner_text()) == []
    shot(
        page, f"continue-reading-gone-{'phone' if page.viewport_size['width'] < 600 else 'desktop'}"
    )

    # What is offered opens: no "Not found", and no request that fails on the way. (Home's own
    # checks asked for each lost series once, and Chromium logs those 404s.)
    checked = len(visitor.errors)
    lost_chapter.click()
    expect(page.get_by_role("heading", name="Iron Garden", level=1)).to_be_visible()
    assert visitor.errors[checked:] == []
    page.go_back()
    expect(entries).to_have_count(4)
    expect(continuing.locator("[aria-busy]")).to_have_count(0)
    page.wait_for_load_state("networkidle")
    checked = len(visitor.errors)
    continuing.get_by_role("link", name=re.compile("^Hoshi no Tabibito")).click()
    showing(page, 2)
    wait_for_page_image(page)
    expect(page.get_by_role("alert")).to_have_count(0)
    assert visitor.errors[checked:] == []
    assert all(HTTP_ERROR_LOG.match(error) for error in visitor.errors)


def test_a_finished_chapter_offers_the_next_one(visitor: Watched, served: tuple[str, Core]) -> None:
    place(served[1], "local", "hoshi-no-tabibito", "ch-1-starlight-scans", 2, 3, finished=True)
    place(served[1], "local", "paper-cranes", "ch-4-fold-scans", 2, 3, finished=True, ago=5)
    page = visitor.open("/_/")
    continuing = page.get_by_role("region", name="Continue reading")
    onward = continuing.get_by_role("link", name=re.compile("^Hoshi no Tabibito"))
    expect(onward).to_have_text("Hoshi no Tabibito · Next: Chapter 2")
    # The latest chapter finished: nothing newer to offer, said so, leading to the series.
    expect(continuing.get_by_role("link", name=re.compile("^Paper Cranes"))).to_contain_text(
        "read · no newer chapter yet"
    )
    shot(
        page, f"continue-reading-next-{'phone' if page.viewport_size['width'] < 600 else 'desktop'}"
    )
    # The series' own button leads on the same way.
    page.goto(visitor.base + "/_/#/m/local/hoshi-no-tabibito")
    expect(page.get_by_role("link", name="Next: Chapter 2")).to_be_visible()
    page.go_back()
    onward.click()
    at(page, 1)
    expect(page.locator(".reader-bar .where")).to_contain_text("Chapter 2")
    assert visitor.errors == []


def test_one_search_over_every_source_kept_in_the_address(visitor: Watched) -> None:
    page = visitor.open("/_/")
    page.get_by_role("searchbox", name="Search every source").fill("garden")
    page.get_by_role("searchbox", name="Search every source").press("Enter")
    page.wait_for_url(re.compile(r"#/search\?q=garden$"))
    local = page.get_by_role("list", name="Local Library: results")
    expect(local.locator("a.cover")).to_have_count(1)
    expect(local).to_contain_text("Iron Garden")
    expect(page.get_by_role("list", name="Long Shelf: results")).to_contain_text(
        "Nothing matches here."
    )
    expect(page.get_by_role("link", name="Sign in to Locked Library to search it")).to_be_visible()
    shot(page, f"search-everywhere-{'phone' if page.viewport_size['width'] < 600 else 'desktop'}")
    local.locator("a.cover").first.click()
    expect(page.get_by_role("heading", name="Iron Garden", level=1)).to_be_visible()
    page.go_back()  # Back is the results again
    expect(page.get_by_role("list", name="Local Library: results")).to_contain_text("Iron Garden")
    expect(page.get_by_role("searchbox", name="Search every source")).to_have_value("garden")

    # A source's own search, its sort and filters, lives in the address too.
    page.goto(visitor.base + "/_/#/s/local")
    results = page.get_by_role("list", name="Results").locator("a.cover")
    expect(results).to_have_count(6)
    page.get_by_label("Search", exact=True).fill("hoshi")
    page.get_by_label("Sort by").select_option("title")
    page.get_by_label("Order").select_option("asc")
    page.get_by_role("button", name="Search", exact=True).click()
    page.wait_for_url(re.compile(r"#/s/local\?q=hoshi&sort=title&direction=asc$"))
    expect(results).to_have_count(1)
    results.first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Hoshi no Tabibito")
    page.go_back()
    expect(page.get_by_label("Search", exact=True)).to_have_value("hoshi")
    expect(page.get_by_label("Sort by")).to_have_value("title")
    expect(results).to_have_count(1)
    # An address with a filter opens that search, as a shared link does.
    page.goto(visitor.base + "/_/#/s/local?status=Completed&sort=title")
    expect(page.get_by_role("checkbox", name="Completed")).to_be_checked()
    completed = json.loads(
        page.evaluate(
            "async () => JSON.stringify(await (await fetch('/local/search', {method: 'POST',"
            " headers: {'Content-Type': 'application/json'}, body: JSON.stringify({page: 1,"
            " sort: 'title', filters: {status: ['Completed']}})})).json())"
        )
    )
    expect(results).to_have_count(len(completed["results"]))
    assert visitor.errors == []


def test_what_a_source_does_not_know_shows_as_nothing(browser: Any, pictured_host: str) -> None:
    """The spec's stand-ins ("No Description.", "Unknown Scanlator") are not shown as text."""
    for size in (DESKTOP, PHONE):
        for watched in watched_page(browser, pictured_host, size):
            page = watched.open("/_/#/m/comics/title-000")
            expect(page.get_by_role("heading", name="Title 000", level=1)).to_be_visible()
            chapters = page.get_by_role("list", name="Chapters, newest first")
            expect(chapters.locator(":scope > li")).to_have_count(5)
            # Chapter 5 comes in two versions, one with no group named.
            chapters.locator("details summary").first.click()
            expect(chapters.locator(".versions a")).to_have_count(1)
            text = page.locator("main").inner_text()
            assert "No Description." not in text and "Unknown Scanlator" not in text
            assert page.locator(".synopsis").count() == 0
            assert watched.errors == []
