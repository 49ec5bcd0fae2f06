// The reader: a chapter's pages, paged (one page, or two side by side on a wide screen) or as a
// strip, filling the screen; a toolbar that steps aside while reading and comes back on a tap;
// the place kept by the host as it is read.

import { ApiError, chaptersOf, keepPlace, mangaOf, pagesOf, progressOf, remember, store } from "./api.js";
import { neighbours } from "./chapters.js";
import { chapterLabel, errorBox, h, route, screen, seg, stale } from "./dom.js";

/** A screen where two pages fit side by side: wider than high, and wide enough. */
const WIDE = "(orientation: landscape) and (min-width: 640px)";
/** How far a pointer may move and still be a tap, and must move to be a swipe (CSS pixels). */
const TAP = 10;
const SWIPE = 40;

/**
 * The pages shown together: the cover alone, then pairs, a wide page (a spread already) alone,
 * as printed books are read. `wide(i)` says whether page `i` is wider than high.
 */
export function spreadsOf(count, wide) {
  const spreads = count ? [[0]] : [];
  for (let i = 1; i < count;) {
    const pair = i + 1 < count && !wide(i) && !wide(i + 1);
    spreads.push(pair ? [i, i + 1] : [i]);
    i += pair ? 2 : 1;
  }
  return spreads;
}

/**
 * How this series is read here: the series' own direction when its source says it
 * (`readingDirection`: right to left, or a vertical strip), unless the reader chose otherwise
 * for this series; page fit and spreads are the reader's, for every series.
 */
function settingsFor(src, manga, direction) {
  const told = direction === "vertical" ? { mode: "strip" } : direction ? { mode: "paged", direction } : {};
  const everywhere = store.get("reader", {});
  return { mode: "paged", direction: "ltr", pairs: "auto", fit: everywhere.fit, ...told,
    ...(everywhere.pairs ? { pairs: everywhere.pairs } : {}), ...store.get(`reading:${src}/${manga}`, {}) };
}

function keepSetting(src, manga, key, value) {
  const own = key === "mode" || key === "direction";
  const where = own ? `reading:${src}/${manga}` : "reader";
  store.set(where, { ...store.get(where, {}), [key]: value });
}

function preload(urls, seen) {
  for (const [i, url] of urls) {
    const image = new Image();
    image.decoding = "async";
    image.addEventListener("load", () => seen(i, image), { once: true });
    image.src = url;
  }
}

export async function readerPage(token, src, mangaSlug, chapterSlug) {
  // The series first: one that is gone is one answer saying so, not a failure per request.
  const manga = await mangaOf(src, mangaSlug);
  const [chapters, positions] = await Promise.all([chaptersOf(src, mangaSlug), progressOf(src, mangaSlug)]);
  if (stale(token)) return;
  remember(src, mangaSlug, manga);
  const seriesHref = `#/m/${seg(src)}/${seg(mangaSlug)}`;
  const chapter = chapters.find((c) => c.slug === chapterSlug);
  if (!chapter) {
    const gone = new ApiError(404, "CHAPTER_NOT_FOUND", `${manga.title} no longer has this chapter.`, src);
    screen(manga.title, errorBox(gone, null, "This chapter is no longer there"),
      h("p", {}, h("a", { class: "button primary", href: seriesHref }, `Chapters of ${manga.title}`)));
    return;
  }
  let pages = await pagesOf(src, mangaSlug, chapterSlug);
  if (stale(token)) return;
  const { previous, next } = neighbours(chapters, chapter);
  const settings = settingsFor(src, mangaSlug, manga.readingDirection);
  const chapterHref = (c) => `#/r/${seg(src)}/${seg(mangaSlug)}/${seg(c.slug)}`;
  const go = (c) => { if (c) location.hash = chapterHref(c); };

  // The chapter opens where the reader left it; one they finished stays read as they turn back
  // through it (the places on offer elsewhere lead on to the next chapter instead).
  const saved = positions[chapterSlug];
  const readBefore = Boolean(saved && saved.finished);
  let index = saved && saved.page < pages.length ? saved.page : 0;
  let kept = saved ? saved.page : null;
  function keep(furthest) {
    if (furthest === kept || !pages.length) return;
    kept = furthest;
    keepPlace(src, mangaSlug, chapterSlug, { page: furthest, pages: pages.length,
      finished: readBefore || furthest === pages.length - 1 });
  }

  // Which pages are wide, as their images arrive: a wide page is a spread of its own.
  const wide = new Map();
  const wideScreen = matchMedia(WIDE);
  const double = () => settings.mode === "paged" && (settings.pairs === "two" || (settings.pairs === "auto" && wideScreen.matches));
  const fit = () => settings.fit || (double() ? "height" : "width");
  let spreads = [];
  const layout = () => { spreads = double() ? spreadsOf(pages.length, (i) => wide.get(i) === true) : pages.map((_, i) => [i]); };
  const spreadOf = (i) => spreads.find((spread) => spread.includes(i)) || [i];
  function seen(i, image) {
    const isWide = image.naturalWidth > image.naturalHeight;
    if (wide.get(i) === isWide) return;
    wide.set(i, isWide);
    if (!isWide || !double()) return;
    const before = spreadOf(index).join();
    layout();
    if (spreadOf(index).join() !== before) show(index, false);
  }

  let nextPrefetched = false;
  function prefetchNext() {
    if (!next || nextPrefetched) return;
    nextPrefetched = true;
    pagesOf(src, mangaSlug, next.slug).then((urls) => preload(urls.slice(0, 3).map((url) => [-1, url]), () => {}),
      () => { nextPrefetched = false; });
  }

  // Page URLs may expire: on a failed image, fetch the list again once and retry. A page that
  // still fails is damaged (the host answers an error for a page it cannot decode): said so in
  // its place, with a way to try again.
  let refreshed = false;
  async function refreshPages() {
    if (refreshed) return false;
    refreshed = true;
    try { pages = await pagesOf(src, mangaSlug, chapterSlug); return true; } catch { return false; }
  }
  let observer = null;
  function imageFor(i, attrs) {
    const image = h("img", { src: pages[i], alt: `Page ${i + 1} of ${pages.length}`, decoding: "async",
      draggable: "false", "data-index": i, ...attrs });
    image.addEventListener("load", () => { image.classList.add("loaded"); seen(i, image); });
    let retried = false;
    image.addEventListener("error", async () => {
      if (!retried && await refreshPages()) {
        retried = true;
        image.src = pages[i];
        return;
      }
      const placeholder = damaged(i, attrs);
      image.replaceWith(placeholder);
      if (observer && settings.mode === "strip") observer.observe(placeholder);
    });
    return image;
  }
  function damaged(i, attrs) {
    const again = h("button", { type: "button" }, "Try again");
    const box = h("div", { class: "page damaged", role: "img", "aria-label": `Page ${i + 1} is damaged`, "data-index": i },
      h("p", {}, h("strong", {}, `Page ${i + 1} is damaged`), h("br"), "It cannot be shown: its image is broken or missing."),
      again);
    again.addEventListener("click", (event) => {
      event.stopPropagation();
      const image = imageFor(i, attrs);
      box.replaceWith(image);
      if (observer && settings.mode === "strip") observer.observe(image);
    });
    return box;
  }

  // -- the toolbar -------------------------------------------------------------------------
  // The page counter in the toolbar, and told to assistive technology as pages turn, the
  // toolbar out of sight or not.
  const counter = h("span", { class: "counter" });
  const announced = h("span", { class: "announce", "aria-live": "polite" });
  const count = (text) => {
    counter.textContent = text;
    announced.textContent = text;
  };
  const control = (key, label, options) => {
    const select = h("select", { "aria-label": label, onchange: () => {
      settings[key] = select.value;
      keepSetting(src, mangaSlug, key, select.value);
      draw();
    } }, options.map(([value, text]) => h("option", { value, selected: settings[key] === value }, text)));
    return h("label", { class: `setting ${key}` }, h("span", { class: "muted" }, label + " "), select);
  };
  const controls = {
    mode: control("mode", "Mode", [["paged", "Paged"], ["strip", "Vertical strip"]]),
    direction: control("direction", "Direction", [["ltr", "Left to right"], ["rtl", "Right to left"]]),
    pairs: control("pairs", "Pages", [["auto", "Two on wide screens"], ["one", "One at a time"], ["two", "Two side by side"]]),
    fit: control("fit", "Fit", [["width", "Width"], ["height", "Height"]]),
  };
  const panel = h("div", { class: "reader-settings", id: "reader-settings" }, Object.values(controls));
  const toggle = h("button", { type: "button", class: "settings-toggle", "aria-expanded": "false",
    "aria-controls": "reader-settings", onclick: () => {
      const open = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", String(open));
      panel.classList.toggle("open", open);
    } }, "Settings");
  const bar = h("div", { class: "reader-bar" },
    h("div", { class: "line" },
      h("a", { href: seriesHref, class: "back", "aria-label": `Back to ${manga.title}` }, "←"),
      h("span", { class: "where" }, h("span", { class: "name" }, h("strong", {}, manga.title), " · ", chapterLabel(chapter)),
        counter)),
    h("div", { class: "line" },
      h("button", { type: "button", disabled: !previous, onclick: () => go(previous), "aria-label": "Previous chapter" }, "‹ Previous chapter"),
      h("button", { type: "button", disabled: !next, onclick: () => go(next), "aria-label": "Next chapter" }, "Next chapter ›"),
      toggle),
    panel);
  const area = h("div", { class: "pages" });
  const end = h("div", { class: "chapter-end" },
    previous ? h("a", { class: "button", href: chapterHref(previous) }, `‹ ${chapterLabel(previous)}`) : null,
    next ? h("a", { class: "button primary", href: chapterHref(next) }, `${chapterLabel(next)} ›`)
      : h("span", { class: "muted" }, "This is the latest chapter."));
  const reader = h("div", { class: "reader" }, bar, announced, area, end);
  // The toolbar is there when a chapter opens, steps aside once reading starts, and comes back
  // on a tap in the middle of the page (or the mouse at the top, or the keyboard's focus).
  const chrome = (shown) => {
    reader.classList.toggle("chrome-hidden", !shown);
    if (!shown && toggle.getAttribute("aria-expanded") === "true") toggle.click(); // settings close with it
  };
  bar.addEventListener("focusin", () => chrome(true));

  // -- pages -------------------------------------------------------------------------------
  function show(i, turned = true) {
    const spread = spreadOf(Math.max(0, Math.min(pages.length - 1, i)));
    index = spread[0];
    const last = spread[spread.length - 1];
    count(spread.length > 1 ? `pages ${index + 1}–${last + 1} of ${pages.length}` : `page ${index + 1} of ${pages.length}`);
    if (settings.mode === "paged") {
      area.replaceChildren(...spread.map((page) => imageFor(page, {})));
      preload(pages.slice(last + 1, last + 5).map((url, k) => [last + 1 + k, url]), seen);
      window.scrollTo(0, 0);
      if (turned) chrome(false);
    }
    if (last >= pages.length - 3) prefetchNext();
    keep(last);
  }
  const at = () => spreads.indexOf(spreadOf(index));
  const forward = () => (at() < spreads.length - 1 ? show(spreads[at() + 1][0]) : go(next));
  const backward = () => (index > 0 ? show(spreads[Math.max(0, at() - 1)][0]) : go(previous));
  const leftward = () => (settings.direction === "rtl" ? forward() : backward());
  const rightward = () => (settings.direction === "rtl" ? backward() : forward());

  let ownScroll = false; // the reader scrolling a strip to its place, not the person reading
  function draw() {
    if (observer) observer.disconnect();
    observer = null;
    // What a strip has no use for is not offered with it.
    controls.direction.hidden = settings.mode === "strip";
    controls.pairs.hidden = settings.mode === "strip";
    const shown = { ...settings, fit: fit() };
    for (const [key, label] of Object.entries(controls)) label.querySelector("select").value = shown[key];
    if (!pages.length) {
      area.replaceChildren(h("p", { class: "muted" }, "This chapter has no pages."));
      return;
    }
    layout();
    area.className = `pages ${settings.mode} fit-${fit()}${double() ? " double" : ""}`;
    area.dir = settings.direction;
    if (settings.mode === "strip") {
      const images = pages.map((_, i) => imageFor(i, { loading: i < index + 3 ? "eager" : "lazy" }));
      area.replaceChildren(...images);
      observer = new IntersectionObserver((entries) => {
        for (const entry of entries) {
          if (!entry.isIntersecting) continue;
          index = Number(entry.target.dataset.index);
          count(`page ${index + 1} of ${pages.length}`);
          if (index >= pages.length - 3) prefetchNext();
          keep(index);
        }
      }, { rootMargin: "-45% 0px -45% 0px" });
      images.forEach((image) => observer.observe(image));
      count(`page ${index + 1} of ${pages.length}`);
      if (index > 0) {
        requestAnimationFrame(() => {
          ownScroll = true;
          images[index].scrollIntoView();
          requestAnimationFrame(() => { ownScroll = false; scrolled = window.scrollY; });
        });
      }
      keep(index);
    } else {
      show(index, false);
    }
  }
  const relayout = () => { if (settings.mode === "paged") draw(); };
  wideScreen.addEventListener("change", relayout);
  route.teardown.push(() => { if (observer) observer.disconnect(); wideScreen.removeEventListener("change", relayout); });

  function onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest && event.target.closest("input, select, textarea, button")) {
      if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
      if (event.target.closest("input, select, textarea")) return;
    }
    if (settings.mode === "strip") {
      // The browser scrolls the strip (space, Page Up/Down, Home/End, up/down); sideways keys change chapter.
      if (event.key === "ArrowRight") go(settings.direction === "rtl" ? previous : next);
      else if (event.key === "ArrowLeft") go(settings.direction === "rtl" ? next : previous);
      else return;
      event.preventDefault();
      return;
    }
    const actions = {
      ArrowRight: rightward, ArrowLeft: leftward, PageDown: forward, PageUp: backward, ArrowDown: forward,
      ArrowUp: backward, " ": event.shiftKey ? backward : forward, Home: () => show(0), End: () => show(pages.length - 1),
    };
    const action = actions[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  }
  document.addEventListener("keydown", onKey);
  route.teardown.push(() => document.removeEventListener("keydown", onKey));

  // Touch and mouse: in paged mode a tap on the left or right third turns the page, as does a
  // swipe; a tap in the middle (anywhere on a strip) brings the toolbar back or sends it away.
  let down = null;
  area.addEventListener("pointerdown", (event) => { down = { x: event.clientX, y: event.clientY }; });
  area.addEventListener("pointerup", (event) => {
    if (!down || event.target.closest("button")) return;
    const dx = event.clientX - down.x;
    const dy = event.clientY - down.y;
    down = null;
    const tap = Math.abs(dx) < TAP && Math.abs(dy) < TAP;
    if (settings.mode === "strip") {
      if (tap) chrome(reader.classList.contains("chrome-hidden"));
    } else if (Math.abs(dx) > SWIPE && Math.abs(dx) > Math.abs(dy)) {
      if (dx < 0) rightward(); else leftward();
    } else if (tap) {
      const third = (event.clientX - area.getBoundingClientRect().left) / area.clientWidth;
      if (third < 1 / 3) leftward();
      else if (third > 2 / 3) rightward();
      else chrome(reader.classList.contains("chrome-hidden"));
    }
  });
  // Down a strip, the toolbar steps aside as the reader scrolls on (not as the reader itself
  // scrolls to the place a strip opens at).
  let scrolled = window.scrollY;
  const onScroll = () => {
    if (!ownScroll && settings.mode === "strip" && window.scrollY > scrolled + 40) chrome(false);
    if (ownScroll || Math.abs(window.scrollY - scrolled) > 40) scrolled = window.scrollY;
  };
  const onPointer = (event) => { if (event.pointerType === "mouse" && event.clientY < 48) chrome(true); };
  window.addEventListener("scroll", onScroll, { passive: true });
  window.addEventListener("pointermove", onPointer, { passive: true });
  document.body.classList.add("reading");
  route.teardown.push(() => {
    window.removeEventListener("scroll", onScroll);
    window.removeEventListener("pointermove", onPointer);
    document.body.classList.remove("reading");
  });

  screen(`${manga.title} · ${chapterLabel(chapter)}`, reader);
  draw();
}
