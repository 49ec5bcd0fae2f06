// The reader: a chapter's pages, paged or as a strip, its place kept by the host as it is read.

import { chaptersOf, configuration, keepPlace, mangaOf, namesKey, pagesOf, progressOf, store } from "./api.js";
import { chapterLabel, h, route, screen, seg, stale } from "./dom.js";
import { pick } from "./series.js";

function neighbours(chapters, current) {
  const numbers = [...new Set(chapters.map((c) => c.number))].sort((a, b) => a - b);
  const at = numbers.indexOf(current.number);
  const prefer = { language: current.language, scanlator: current.scanlator };
  const versionsOf = (number) => chapters.filter((c) => c.number === number);
  return {
    previous: at > 0 ? pick(versionsOf(numbers[at - 1]), prefer) : null,
    next: at >= 0 && at < numbers.length - 1 ? pick(versionsOf(numbers[at + 1]), prefer) : null,
  };
}

function preload(urls) {
  for (const url of urls) {
    const image = new Image();
    image.decoding = "async";
    image.src = url;
  }
}

export async function readerPage(token, src, mangaSlug, chapterSlug) {
  const [config, manga, chapters, firstPages, positions] = await Promise.all([configuration(src), mangaOf(src, mangaSlug),
    chaptersOf(src, mangaSlug), pagesOf(src, mangaSlug, chapterSlug), progressOf(src, mangaSlug)]);
  if (stale(token)) return;
  let pages = firstPages;
  const chapter = chapters.find((c) => c.slug === chapterSlug) || { slug: chapterSlug, number: -1, title: "", language: "", scanlator: "" };
  const { previous, next } = neighbours(chapters, chapter);
  const settings = { mode: "paged", direction: "ltr", fit: "width", ...store.get("reader", {}) };
  const saved = positions[chapterSlug];
  let index = saved && saved.page < pages.length ? saved.page : 0;
  const chapterHref = (c) => `#/r/${seg(src)}/${seg(mangaSlug)}/${seg(c.slug)}`;

  store.set(namesKey(src, mangaSlug, chapterSlug), { title: manga.title, label: chapterLabel(chapter) });
  let kept = saved ? saved.page : null;
  function remember() {
    if (index === kept || !pages.length) return;
    kept = index;
    keepPlace(src, mangaSlug, chapterSlug, { page: index, pages: pages.length, finished: index === pages.length - 1 });
  }

  let nextPrefetched = false;
  function prefetchNext() {
    if (!next || nextPrefetched) return;
    nextPrefetched = true;
    pagesOf(src, mangaSlug, next.slug).then((urls) => preload(urls.slice(0, 3)), () => { nextPrefetched = false; });
  }

  // Page URLs may expire: on a failed image, fetch the list again once and retry.
  let refreshed = false;
  async function refreshPages() {
    if (refreshed) return false;
    refreshed = true;
    try { pages = await pagesOf(src, mangaSlug, chapterSlug); return true; } catch { return false; }
  }
  function imageFor(i, attrs) {
    const image = h("img", { src: pages[i], alt: `Page ${i + 1} of ${pages.length}`, decoding: "async", draggable: "false", ...attrs });
    image.addEventListener("load", () => image.classList.add("loaded"));
    image.addEventListener("error", async () => {
      if (await refreshPages()) image.src = pages[i];
    }, { once: true });
    return image;
  }

  const counter = h("span", { "aria-live": "polite" });
  const area = h("div", { class: "pages" });
  const go = (c) => { if (c) location.hash = chapterHref(c); };
  const select = (key, label, options) => h("label", {}, h("span", { class: "muted" }, label + " "),
    h("select", { "aria-label": label, onchange: (event) => {
      settings[key] = event.target.value;
      store.set("reader", settings);
      draw();
    } }, options.map(([value, text]) => h("option", { value, selected: settings[key] === value }, text))));
  const bar = h("div", { class: "reader-bar" },
    h("a", { href: `#/m/${seg(src)}/${seg(mangaSlug)}`, "aria-label": `Back to ${manga.title}` }, "←"),
    h("span", { class: "where" }, h("strong", {}, manga.title), " · ", chapterLabel(chapter), " · ", counter),
    h("button", { type: "button", disabled: !previous, onclick: () => go(previous), "aria-label": "Previous chapter" }, "‹ Prev"),
    h("button", { type: "button", disabled: !next, onclick: () => go(next), "aria-label": "Next chapter" }, "Next ›"),
    select("mode", "Mode", [["paged", "Paged"], ["strip", "Vertical strip"]]),
    select("direction", "Direction", [["ltr", "Left to right"], ["rtl", "Right to left"]]),
    select("fit", "Fit", [["width", "Width"], ["height", "Height"]]));
  const end = h("div", { class: "chapter-end" },
    previous ? h("a", { class: "button", href: chapterHref(previous) }, `‹ ${chapterLabel(previous)}`) : null,
    next ? h("a", { class: "button primary", href: chapterHref(next) }, `${chapterLabel(next)} ›`)
      : h("span", { class: "muted" }, "This is the latest chapter."));

  function show(i) {
    index = Math.max(0, Math.min(pages.length - 1, i));
    counter.textContent = `page ${index + 1} of ${pages.length}`;
    if (settings.mode === "paged") {
      area.replaceChildren(imageFor(index, {}));
      preload(pages.slice(index + 1, index + 4));
      window.scrollTo(0, 0);
    }
    if (index >= pages.length - 3) prefetchNext();
    remember();
  }
  const forward = () => (index < pages.length - 1 ? show(index + 1) : go(next));
  const backward = () => (index > 0 ? show(index - 1) : go(previous));
  const leftward = () => (settings.direction === "rtl" ? forward() : backward());
  const rightward = () => (settings.direction === "rtl" ? backward() : forward());

  let observer = null;
  function draw() {
    if (observer) observer.disconnect();
    if (!pages.length) {
      area.replaceChildren(h("p", { class: "muted" }, "This chapter has no pages."));
      return;
    }
    area.className = `pages ${settings.mode} fit-${settings.fit}`;
    area.dir = settings.direction;
    if (settings.mode === "strip") {
      const images = pages.map((_, i) => imageFor(i, { loading: i < index + 3 ? "eager" : "lazy", "data-index": i }));
      area.replaceChildren(...images);
      observer = new IntersectionObserver((entries) => {
        for (const entry of entries) {
          if (entry.isIntersecting) {
            index = Number(entry.target.dataset.index);
            counter.textContent = `page ${index + 1} of ${pages.length}`;
            if (index >= pages.length - 3) prefetchNext();
            remember();
          }
        }
      }, { rootMargin: "-45% 0px -45% 0px" });
      images.forEach((image) => observer.observe(image));
      counter.textContent = `page ${index + 1} of ${pages.length}`;
      if (index > 0) requestAnimationFrame(() => images[index].scrollIntoView());
      remember();
    } else {
      show(index);
    }
  }
  route.teardown.push(() => observer && observer.disconnect());

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

  // Touch and mouse in paged mode: a tap on the left or right half turns the page, as does a swipe.
  let down = null;
  area.addEventListener("pointerdown", (event) => { down = { x: event.clientX, y: event.clientY }; });
  area.addEventListener("pointerup", (event) => {
    if (settings.mode !== "paged" || !down) return;
    const dx = event.clientX - down.x;
    const dy = event.clientY - down.y;
    down = null;
    if (Math.abs(dx) > 40 && Math.abs(dx) > Math.abs(dy)) {
      if (dx < 0) rightward(); else leftward();
    } else if (Math.abs(dx) < 10 && Math.abs(dy) < 10) {
      const box = area.getBoundingClientRect();
      if (event.clientX < box.left + box.width / 2) leftward(); else rightward();
    }
  });

  screen(`${manga.title} · ${chapterLabel(chapter)}`, bar, area, end);
  draw();
}
