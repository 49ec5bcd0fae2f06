"""Reading a chapter in Chromium, on a desktop and a phone: the page is the screen, the toolbar
steps aside, a series opens in the direction its source gives, wide screens show spreads, and a
page that cannot be shown says it is damaged."""

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browsing import (
    DASH,
    DESKTOP,
    PHONE,
    Watched,
    at,
    counter,
    reading_settings,
    shot,
    toolbar,
    wait_for_page_image,
    watched_page,
)

SIZES = {"desktop": DESKTOP, "phone": PHONE}
LANDSCAPE_PHONE = {"width": 844, "height": 390}
#: What Chromium logs by itself for the damaged page's answer, which the reader then shows.
BAD_GATEWAY_LOG = re.compile(r"^Failed to load resource: the server responded with a status of 502")


@pytest.fixture(params=list(SIZES))
def reading(request: pytest.FixtureRequest, browser: Any, pictured_host: str) -> Iterator[Watched]:
    """A browser at each size on the catalogs with pictures."""
    watched = watched_page(browser, pictured_host, SIZES[request.param])
    yield from watched


def open_chapter(watched: Watched, path: str, pages: str | None = None) -> Any:
    page = watched.open(f"/_/#/r/{path}")
    wait_for_page_image(page)
    if pages:
        reading_settings(page).get_by_label("Pages").select_option(pages)
    return page


def tap(page: Any, where: float) -> None:
    """A tap across the page at ``where`` of its width (0 left, 1 right), half-way down."""
    view = page.viewport_size
    page.mouse.click(view["width"] * where, view["height"] / 2)


def box(page: Any, selector: str) -> dict[str, float]:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, selector
    return dict(found)


def test_a_page_that_cannot_be_shown_says_it_is_damaged(reading: Watched) -> None:
    page = open_chapter(reading, "comics/title-000/c4", pages="one")
    tap(page, 0.9)
    at(page, 2)
    damaged = page.get_by_role("img", name="Page 2 is damaged")
    expect(damaged).to_be_visible()
    expect(damaged).to_contain_text("Page 2 is damaged")
    expect(page.locator(".pages img")).to_have_count(0)  # no broken picture in its place
    shot(page, f"reader-damaged-page-{'phone' if page.viewport_size['width'] < 600 else 'desktop'}")
    # Trying again asks again, and still says so; the pages either side read as ever.
    damaged.get_by_role("button", name="Try again").click()
    expect(page.get_by_role("img", name="Page 2 is damaged")).to_be_visible()
    tap(page, 0.9)
    at(page, 3)
    wait_for_page_image(page)

    # Down a strip, the damaged page holds its place between the others.
    reading_settings(page).get_by_label("Mode").select_option("strip")
    strip = page.locator(".pages > *")
    expect(strip).to_have_count(7)
    expect(strip.nth(1)).to_have_attribute("aria-label", "Page 2 is damaged")
    assert [e for e in reading.errors if not BAD_GATEWAY_LOG.match(e)] == []


def test_a_series_opens_as_its_source_says_it_reads_until_the_reader_chooses(
    reading: Watched,
) -> None:
    # Right to left: forward is leftward, by key and by a tap on the left.
    page = open_chapter(reading, "manga/title-000/c1", pages="one")
    expect(page.get_by_label("Direction")).to_have_value("rtl")
    page.keyboard.press("ArrowLeft")
    at(page, 2)
    tap(page, 0.1)
    at(page, 3)

    # A vertical strip (a webtoon): every page, one under the other.
    page.goto(reading.base + "/_/#/r/webtoon/title-000/c1")
    expect(page.locator(".pages.strip img")).to_have_count(7)
    expect(reading_settings(page).get_by_label("Mode")).to_have_value("strip")

    # Nothing said: left to right, page by page.
    page.goto(reading.base + "/_/#/r/comics/title-000/c1")
    wait_for_page_image(page)
    expect(reading_settings(page).get_by_label("Direction")).to_have_value("ltr")
    expect(page.get_by_label("Mode")).to_have_value("paged")

    # The reader's own choice for a series wins over its source's, for that series alone.
    page.goto(reading.base + "/_/#/r/manga/title-000/c1")
    wait_for_page_image(page)
    reading_settings(page).get_by_label("Direction").select_option("ltr")
    page.reload()
    wait_for_page_image(page)
    expect(reading_settings(page).get_by_label("Direction")).to_have_value("ltr")
    page.goto(reading.base + "/_/#/r/manga/title-001/c1")
    wait_for_page_image(page)
    expect(reading_settings(page).get_by_label("Direction")).to_have_value("rtl")
    assert reading.errors == []


def test_the_page_is_the_screen_and_the_toolbar_steps_aside(reading: Watched) -> None:
    page = open_chapter(reading, "comics/title-001/c1")
    view = page.viewport_size
    expect(page.locator("header.bar")).to_be_hidden()  # the site's bar gives the page its room
    bar = toolbar(page)
    # The chapter buttons say they change the chapter.
    expect(bar.get_by_role("button", name="Next chapter")).to_have_text(re.compile("chapter"))
    expect(bar.get_by_role("button", name="Previous chapter")).to_have_text(re.compile("chapter"))
    assert box(page, ".reader-bar")["height"] < 120
    shot(page, f"reader-toolbar-{'phone' if view['width'] < 600 else 'desktop'}")
    reading_settings(page).get_by_label("Pages").select_option("one")

    # Reading on, the toolbar steps aside; a tap in the middle brings it back, and another sends
    # it away again.
    tap(page, 0.9)
    at(page, 2)
    expect(bar).to_be_hidden()
    tap(page, 0.5)
    expect(bar).to_be_visible()
    at(page, 2)
    tap(page, 0.5)
    expect(bar).to_be_hidden()

    # Fit to height fits the page to what the screen shows: all of it, from its top.
    reading_settings(page).get_by_label("Fit").select_option("height")
    tap(page, 0.9)
    at(page, 3)
    wait_for_page_image(page)
    expect(bar).to_be_hidden()
    image = box(page, ".pages img")
    assert image["y"] >= 0 and image["y"] + image["height"] <= view["height"] + 1
    assert image["height"] >= view["height"] - 1
    shot(page, f"reader-fit-height-{'phone' if view['width'] < 600 else 'desktop'}")

    # A strip has no direction nor spreads to choose; down a strip too the toolbar steps aside.
    settings = reading_settings(page)
    settings.get_by_label("Mode").select_option("strip")
    expect(settings.get_by_label("Direction")).to_be_hidden()
    expect(settings.get_by_label("Pages")).to_be_hidden()
    expect(settings.get_by_label("Fit")).to_be_visible()
    page.locator(".pages img").first.wait_for()
    # The strip scrolls itself to the page being read over the next two frames, and that
    # scroll is the reader's own, not the person's: they scroll on once it is done.
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.mouse.wheel(0, view["height"] * 2)
    expect(bar).to_be_hidden()
    tap(page, 0.5)
    expect(bar).to_be_visible()
    assert reading.errors == []


def spread_of(page: Any, first: int, last: int, of: int = 7) -> None:
    expect(counter(page)).to_have_text(f"pages {first}{DASH}{last} of {of}")


def test_a_wide_screen_shows_two_pages_a_lone_cover_first(browser: Any, pictured_host: str) -> None:
    for watched in watched_page(browser, pictured_host, DESKTOP):
        page = open_chapter(watched, "comics/title-000/c2")
        at(page, 1)  # the cover, alone
        page.keyboard.press("ArrowRight")
        spread_of(page, 2, 3)
        images = page.locator(".pages img")
        expect(images).to_have_count(2)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.pages img')].every(i => i.naturalWidth)"
        )
        left, right = box(page, "img[alt='Page 2 of 7']"), box(page, "img[alt='Page 3 of 7']")
        assert left["x"] < right["x"] and abs(left["y"] - right["y"]) < 2
        assert left["x"] + left["width"] <= right["x"] + 1  # side by side
        assert left["height"] >= DESKTOP["height"] - 1  # both fit the screen's height
        shot(page, "reader-spread")
        # Page 5 is a spread already: it stands alone, and so does page 4 before it.
        page.keyboard.press("ArrowRight")
        at(page, 4)
        page.keyboard.press("ArrowRight")
        at(page, 5)
        page.keyboard.press("ArrowRight")
        spread_of(page, 6, 7)
        page.keyboard.press("ArrowLeft")
        at(page, 5)

        # Right to left, the earlier page of a spread is on the right.
        page.goto(watched.base + "/_/#/r/manga/title-002/c1")
        wait_for_page_image(page)
        page.keyboard.press("ArrowLeft")
        spread_of(page, 2, 3)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.pages img')].every(i => i.naturalWidth)"
        )
        earlier, later = box(page, "img[alt='Page 2 of 7']"), box(page, "img[alt='Page 3 of 7']")
        assert earlier["x"] > later["x"]
        shot(page, "reader-spread-right-to-left")
        assert watched.errors == []

    # A phone turned on its side is a wide screen too; upright, it shows one page.
    for watched in watched_page(browser, pictured_host, LANDSCAPE_PHONE):
        page = open_chapter(watched, "comics/title-001/c2")
        page.keyboard.press("ArrowRight")
        spread_of(page, 2, 3)
        page.set_viewport_size(PHONE)
        at(page, 2)
        assert watched.errors == []
