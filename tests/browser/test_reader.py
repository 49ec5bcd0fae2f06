"""The web reader at /_/, used the way a person does: in Chromium, by clicks and keys."""

import re
from typing import Any

from playwright.sync_api import expect

from tests.browser.browsing import (
    DESKTOP,
    FAILING_MESSAGE,
    HTTP_ERROR_LOG,
    PASSWORD,
    SHELF_SERIES,
    USERNAME,
    Watched,
    at,
    counter,
    position,
    reading_settings,
    shot,
    wait_for_page_image,
    watched_page,
)

SERIES = "/_/#/m/local/hoshi-no-tabibito"


def no_horizontal_scroll(page: Any) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{page.url} is {width} px wide"


def open_first_chapter(watched: Watched) -> Any:
    page = watched.open(SERIES)
    page.get_by_role("link", name="Start reading").click()
    wait_for_page_image(page)
    return page


def test_home_search_series_read_next_chapter(desktop: Watched) -> None:
    page = desktop.open("/_/")
    sources = page.locator(".sources")
    expect(sources.get_by_role("link", name=re.compile("Local Library"))).to_be_visible()
    expect(sources.get_by_role("link", name=re.compile("Locked Library"))).to_contain_text(
        "sign-in"
    )
    local = sources.get_by_role("link", name=re.compile("Local Library"))
    expect(sources.get_by_role("link", name=re.compile("Long Shelf"))).to_contain_text("NSFW")
    expect(local).not_to_contain_text("NSFW")
    expect(local).to_contain_text("en, es")
    # Each preset of the open library is a shelf of covers; the locked one asks for a sign-in.
    shelf = page.get_by_role("list", name="Local Library: A to Z")
    expect(shelf.locator("a.cover")).to_have_count(6)
    expect(page.get_by_role("link", name="Sign in to Locked Library")).to_be_visible()
    page.wait_for_function("() => [...document.images].every(i => i.complete && i.naturalWidth)")
    shot(page, "home")

    sources.get_by_role("link", name=re.compile("Local Library")).click()
    expect(page.get_by_role("heading", name="Local Library", exact=True)).to_be_visible()
    results = page.get_by_role("list", name="Results").locator("a.cover")
    expect(results).to_have_count(6)
    page.get_by_label("Search", exact=True).fill("hoshi")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(results).to_have_count(1)
    results.first.click()

    expect(page.get_by_role("heading", name="Hoshi no Tabibito", level=1)).to_be_visible()
    expect(page.locator(".synopsis")).to_contain_text("courier")
    expect(page.locator("dl.facts")).to_contain_text("Aoi Minato")
    expect(page.get_by_role("list", name="Tags")).to_contain_text("Space")
    chapters = page.get_by_role("list", name="Chapters, newest first").locator(":scope > li")
    assert chapters.count() >= 2
    page.wait_for_function("() => document.querySelector('.series img')?.naturalWidth > 0")
    shot(page, "series")
    page.get_by_role("link", name="Start reading").click()

    at(page, 1)
    wait_for_page_image(page)
    shot(page, "reader-paged")
    first_chapter = page.url
    page.get_by_role("button", name="Next chapter").click()
    page.wait_for_url(lambda url: url != first_chapter)
    at(page, 1)
    wait_for_page_image(page)
    assert desktop.errors == []


def test_search_filters_are_the_declared_ones_and_narrow_results(desktop: Watched) -> None:
    page = desktop.open("/_/#/s/local")
    results = page.get_by_role("list", name="Results").locator("a.cover")
    expect(results).to_have_count(6)
    sort = page.get_by_label("Sort by")
    declared = desktop.page.evaluate(
        "async () => (await (await fetch('/local')).json()).search.sort"
    )
    assert sort.locator("option").evaluate_all("os => os.map(o => o.value)") == declared
    page.get_by_text("Filters").click()
    expect(page.get_by_role("group", name="Status")).to_be_visible()
    expect(page.get_by_role("group", name="Content rating")).to_be_visible()

    tags = page.get_by_role("group", name="Tags")
    tags.get_by_role("button", name="Space").click()
    expect(tags.get_by_role("button", name="Space, included")).to_have_attribute(
        "aria-pressed", "true"
    )
    page.get_by_role("button", name="Search", exact=True).click()
    expect(results).to_have_count(1)
    expect(results.first).to_contain_text("Hoshi no Tabibito")
    expect(page.get_by_text("End of results.")).to_be_visible()
    expect(page.get_by_role("button", name="More")).to_be_hidden()
    shot(page, "search")

    # Pressed twice, a tag excludes instead.
    tags.get_by_role("button", name="Space, included").click()
    page.get_by_role("button", name="Search", exact=True).click()
    expect(results).to_have_count(5)
    expect(page.get_by_role("list", name="Results")).not_to_contain_text("Hoshi no Tabibito")

    tags.get_by_role("button", name="Space, excluded").click()
    page.get_by_label("Author").fill("Mara Voss")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(results).to_have_count(1)
    expect(results.first).to_contain_text("Iron Garden")
    assert desktop.errors == []


def test_results_load_more_as_the_list_scrolls(desktop: Watched) -> None:
    page = desktop.open("/_/#/s/shelf")
    page.get_by_label("Sort by").select_option("title")
    page.get_by_label("Order").select_option("asc")
    page.get_by_role("button", name="Search", exact=True).click()
    results = page.get_by_role("list", name="Results").locator("a.cover")
    expect(results.first).to_contain_text("Series 01")
    page.mouse.wheel(0, 20_000)
    expect(results).to_have_count(SHELF_SERIES)
    titles = results.evaluate_all("links => links.map(a => a.textContent)")
    assert titles == [f"Series {n:02d}" for n in range(1, SHELF_SERIES + 1)]
    expect(page.get_by_text("End of results.")).to_be_visible()
    assert desktop.errors == []


def requested(watched: Watched, pattern: str) -> bool:
    """Whether the page asked for a URL matching ``pattern``, waiting up to five seconds."""
    for _ in range(50):
        if any(re.search(pattern, url) for url in watched.requests):
            return True
        watched.page.wait_for_timeout(100)
    return False


def test_paged_mode_follows_the_keyboard_and_remembers_the_page(desktop: Watched) -> None:
    page = open_first_chapter(desktop)
    page.get_by_label("Pages").select_option("one")  # a wide screen shows two by default
    first, pages = position(page)
    assert (first, pages >= 3) == (1, True)
    # The next pages load before they are shown, and (three pages from the end, so here at
    # once) the first pages of the next chapter.
    assert requested(desktop, r"/_/local/pages/hoshi-no-tabibito/ch-1-[a-z-]+/2\?")
    page.keyboard.press("ArrowRight")
    at(page, 2)
    page.keyboard.press("Space")
    at(page, 3)
    page.keyboard.press("PageUp")
    at(page, 2)
    page.keyboard.press("End")
    assert position(page) == (pages, pages)
    assert requested(desktop, r"/_/local/pages/hoshi-no-tabibito/ch-2-[a-z-]+/1\?")
    page.keyboard.press("Home")
    at(page, 1)
    page.keyboard.press("PageDown")
    at(page, 2)

    # Right to left: the left arrow goes forward.
    reading_settings(page).get_by_label("Direction").select_option("rtl")
    page.keyboard.press("ArrowLeft")
    at(page, 3)
    page.keyboard.press("ArrowRight")
    at(page, 2)
    # A tap on the left half of a right-to-left page goes forward too.
    box = page.locator(".pages").bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.2, box["y"] + box["height"] / 2)
    at(page, 3)

    # Fit to height keeps the whole page on the screen.
    reading_settings(page).get_by_label("Fit").select_option("height")
    wait_for_page_image(page)
    height = page.evaluate(
        "() => document.querySelector('.pages img').getBoundingClientRect().height"
    )
    assert height <= page.viewport_size["height"]

    page.reload()
    at(page, 3)
    expect(page.get_by_label("Direction")).to_have_value("rtl")
    page.goto(desktop.base + "/_/")
    continuing = page.get_by_role("region", name="Continue reading")
    expect(continuing).to_contain_text("Hoshi no Tabibito")
    # Page 3 of 3 is the chapter's end: what is on offer is the next chapter.
    expect(continuing).to_contain_text("Next: Chapter 2")
    assert desktop.errors == []


def test_strip_mode_shows_every_page_and_leads_to_the_next_chapter(desktop: Watched) -> None:
    page = open_first_chapter(desktop)
    pages = position(page)[1]
    reading_settings(page).get_by_label("Mode").select_option("strip")
    images = page.locator(".pages img")
    expect(images).to_have_count(pages)
    page.wait_for_function("() => document.querySelector('.pages img')?.naturalWidth > 0")
    shot(page, "reader-strip")
    images.first.click()  # off the mode menu, where End would pick an option
    page.keyboard.press("End")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.pages img')].every(i => i.complete && i.naturalWidth)"
    )
    expect(counter(page)).to_have_text(f"page {pages} of {pages}")
    # Sideways keys change chapter in the strip; the browser scrolls it with the others.
    first_chapter = page.url
    page.keyboard.press("ArrowRight")
    page.wait_for_url(lambda url: url != first_chapter)
    # The address changes before the reader draws the chapter it names; keys wait for that.
    page.wait_for_function(
        "() => document.querySelector('.pages img')?.src.includes("
        "'/' + location.hash.split('/').pop() + '/')"
    )
    expect(images.first).to_be_visible()
    page.keyboard.press("ArrowLeft")
    expect(page).to_have_url(first_chapter)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.pages img')].every(i => i.complete && i.naturalWidth)"
    )
    page.mouse.wheel(0, 20_000)
    first_chapter = page.url
    page.locator(".chapter-end a.primary").click()
    page.wait_for_url(lambda url: url != first_chapter)
    expect(images.first).to_be_visible()
    assert desktop.errors == []


def test_chapter_versions_group_under_one_number_with_a_remembered_preference(
    desktop: Watched,
) -> None:
    page = desktop.open("/_/#/m/local/iron-garden")
    chapters = page.get_by_role("list", name="Chapters, newest first")
    expect(chapters.get_by_text(re.compile(r"other version"))).not_to_have_count(0)
    shared = chapters.locator(":scope > li", has=page.locator("details")).first
    shared.locator("summary").click()
    other = shared.locator(".versions a").first.inner_text().split(" · ")[1]
    expect(shared.locator(".meta")).not_to_contain_text(other)
    page.get_by_label("Preferred group").select_option(other)
    expect(shared.locator(".meta")).to_contain_text(other)
    page.reload()
    expect(page.get_by_label("Preferred group")).to_have_value(other)
    expect(shared.locator(".meta")).to_contain_text(other)
    shot(page, "series-versions")
    assert desktop.errors == []


def test_the_phone_width_never_scrolls_sideways(phone: Watched) -> None:
    page = phone.open("/_/")
    expect(page.locator(".sources a").first).to_be_visible()
    no_horizontal_scroll(page)
    shot(page, "phone-home")
    page.goto(phone.base + "/_/#/s/local")
    expect(page.get_by_role("list", name="Results").locator("a.cover")).to_have_count(6)
    page.get_by_text("Filters").click()
    no_horizontal_scroll(page)
    page.goto(phone.base + SERIES)
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    no_horizontal_scroll(page)
    page.get_by_role("link", name="Start reading").click()
    wait_for_page_image(page)
    no_horizontal_scroll(page)
    shot(page, "phone-reader")
    # A swipe to the left turns the page forward.
    box = page.locator(".pages").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.8, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.2, y, steps=5)
    page.mouse.up()
    at(page, 2)
    assert phone.errors == []


def test_sign_in_keeps_the_headers_and_a_refusal_forgets_them(desktop: Watched) -> None:
    page = desktop.open("/_/")
    page.get_by_role("link", name="Sign in to Locked Library").click()
    expect(page.get_by_role("heading", name="Sign in to Locked Library")).to_be_visible()
    page.get_by_label("User name").fill(USERNAME)
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("Sign-in refused")
    shot(page, "sign-in-refused")

    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"#/s/locked$"))
    expect(page.get_by_role("list", name="Results").locator("a.cover")).to_have_count(6)
    stored = page.evaluate("() => JSON.parse(localStorage.getItem('toshokan:auth:locked'))")
    assert stored and stored["Authorization"].startswith("Basic ")

    page.get_by_role("list", name="Results").locator("a.cover").first.click()
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    # Page images are signed links: an <img>, which sends no headers, still loads them.
    page.get_by_role("link", name="Start reading").click()
    wait_for_page_image(page)

    # Headers the host no longer accepts are dropped, and the page says what to do.
    page.evaluate(
        "() => localStorage.setItem('toshokan:auth:locked', JSON.stringify({Authorization: 'Basic eDp5'}))"
    )
    series = page.url
    page.goto(series.replace("#/r/", "#/m/").rsplit("/", 1)[0])
    page.reload()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Sign-in needed")
    assert page.evaluate("() => localStorage.getItem('toshokan:auth:locked')") is None
    # Signing in again leads back to the series that asked for it.
    alert.get_by_role("link", name="Sign in").click()
    page.get_by_label("User name").fill(USERNAME)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"#/m/locked/[a-z0-9-]+$"))
    expect(page.get_by_role("link", name=re.compile(r"^Continue: Chapter"))).to_be_visible()
    assert [e for e in desktop.errors if not HTTP_ERROR_LOG.match(e)] == []


def test_errors_are_readable_messages(desktop: Watched) -> None:
    page = desktop.open("/_/#/m/local/no-such-series")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Not found")
    expect(alert).to_contain_text("MANGA_NOT_FOUND")
    expect(alert.get_by_role("link", name="Home")).to_be_visible()
    shot(page, "error")
    page.goto(desktop.base + "/_/#/nowhere/at/all/here")
    expect(page.get_by_role("alert")).to_contain_text("does not lead anywhere")
    page.goto(desktop.base + "/_/#/s/nosuchsource")
    expect(page.get_by_role("alert")).to_contain_text("SOURCE_NOT_FOUND")
    assert [e for e in desktop.errors if not HTTP_ERROR_LOG.match(e)] == []


def test_a_failed_shelf_says_so_in_one_line_across_it(browser: Any, failing_host: str) -> None:
    for watched in watched_page(browser, failing_host, DESKTOP):
        page = watched.open("/_/")
        working = page.get_by_role("list", name=re.compile(r"^Local Library: "))
        expect(working.first.locator("a.cover").first).to_be_visible()
        failed = page.get_by_role("list", name=re.compile(r"^Down Shelf: "))
        alert = failed.first.get_by_role("alert")
        expect(alert).to_contain_text(FAILING_MESSAGE)
        expect(alert).to_contain_text("UPSTREAM_ERROR")
        shelf, message = failed.first.bounding_box(), alert.bounding_box()
        assert shelf is not None and message is not None
        assert message["width"] >= shelf["width"] * 0.95  # the shelf's width, not a cover's
        line = alert.evaluate("(e) => parseFloat(getComputedStyle(e).lineHeight)")
        padding = alert.evaluate(
            "(e) => parseFloat(getComputedStyle(e).paddingTop)"
            " + parseFloat(getComputedStyle(e).paddingBottom)"
        )
        assert message["height"] - padding < 1.5 * line  # one line
        # Home is where the reader already is: nothing on the page but the menu leads there.
        expect(page.locator("#view").get_by_role("link", name="Home")).to_have_count(0)
        shot(page, "failed-shelf")


def test_keyboard_reaches_every_control_with_a_name(desktop: Watched) -> None:
    page = desktop.open("/_/#/s/local")
    expect(page.get_by_role("list", name="Results").locator("a.cover")).to_have_count(6)
    page.get_by_text("Filters").click()
    unnamed = page.evaluate(
        """() => [...document.querySelectorAll('input, select, button')].filter(c => {
            const label = c.labels && c.labels.length ? c.labels[0].textContent.trim() : '';
            return !(label || c.getAttribute('aria-label') || c.textContent.trim());
        }).map(c => c.outerHTML)"""
    )
    assert unnamed == []
    # After each view is drawn, focus is at its start: the next Tab reaches its first control.
    page.reload()
    expect(page.get_by_role("list", name="Results").locator("a.cover")).to_have_count(6)
    expect(page.locator("main")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_label("Search", exact=True)).to_be_focused()
    page.keyboard.type("garden")
    page.keyboard.press("Enter")
    expect(page.get_by_role("list", name="Results").locator("a.cover")).to_have_count(1)
    assert desktop.errors == []
