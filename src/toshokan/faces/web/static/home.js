// Home: a search over every source, the sources, where the reader left off, the series they
// follow, and each source's presets as shelves. Each part is one entry of `parts` in `home`, drawn in that order.

import { api, chaptersOf, configuration, follows, knownTitle, mangaOf, recentlyRead, search, signedIn, titleOf } from "./api.js";
import { continuation } from "./chapters.js";
import { chapterLabel, coverLink, errorBox, h, screen, seg, stale } from "./dom.js";

const SHELF_SIZE = 12;
const RECENT_MAX = 12;
const FOLLOWING_MAX = 24;

export async function home(token) {
  const manifest = await api("/");
  const slugs = manifest.sources.filter((slug) => (manifest.manifest[slug] || {}).status !== "removed");
  const settled = await Promise.allSettled(slugs.map(configuration));
  if (stale(token)) return;
  const configs = new Map(slugs.map((slug, i) => [slug, settled[i]]));
  const continuing = h("div", {});
  const following = h("div", {});
  const parts = [
    searchEverywhere(""),
    h("h2", {}, "Sources"), sourceList(configs),
    continuing,
    following,
    slugs.flatMap((slug) => (configs.get(slug).status === "fulfilled" ? sourceShelves(slug, configs.get(slug).value, token) : [])),
  ];
  screen(null, h("h1", {}, manifest.name || "toshokan"), parts);
  continueReading(continuing, configs, token);
  followingShelf(following, configs, token);
}

// The series the reader follows, those with unread new chapters first, each with how many; a
// cover is asked of its source after the shelf is drawn, and a series without one keeps its title.
async function followingShelf(container, configs, token) {
  let answer;
  try { answer = await follows(""); } catch (error) {
    if (!stale(token)) container.replaceChildren(errorBox(error, null, "Following is unavailable"));
    return;
  }
  if (stale(token) || !answer.follows.length) return;
  const shown = [...answer.follows].sort((a, b) => (b.unread > 0) - (a.unread > 0)).slice(0, FOLLOWING_MAX);
  const unread = answer.follows.reduce((sum, f) => sum + f.unread, 0);
  const row = h("ul", { class: "shelf following", "aria-label": "Following" }, shown.map((f) => {
    const art = h("span", { class: "art", "aria-hidden": "true" });
    const served = configs.has(f.source);
    if (served) {
      mangaOf(f.source, f.manga).then((manga) => {
        if (!stale(token) && manga.covers.length) art.replaceWith(h("img", { class: "art", src: manga.covers[0], alt: "", decoding: "async" }));
      }, () => { /* the title stands for it */ });
    }
    const mark = f.unread ? h("span", { class: "badge unread-count" }, `${f.unread} new`)
      : f.state === "gone" ? h("span", { class: "badge" }, "gone") : !served ? h("span", { class: "badge" }, "not served") : null;
    return h("li", {}, h("a", { class: "cover", href: `#/m/${seg(f.source)}/${seg(f.manga)}` }, art,
      h("span", { class: "title" }, f.title), mark));
  }));
  container.replaceChildren(h("section", { "aria-labelledby": "following" },
    h("h2", { id: "following" }, "Following"),
    h("p", {}, h("a", { href: "#/updates" }, unread ? `Updates: ${unread} unread` : "Updates")), row));
}

/** The search box over every source; its results are a view of their own, kept in the address. */
export function searchEverywhere(query) {
  const input = h("input", { type: "search", name: "q", maxlength: 200, value: query, "aria-label": "Search every source",
    placeholder: "Search every source" });
  const form = h("form", { class: "search everywhere", role: "search" }, h("div", { class: "row" }, input,
    h("button", { type: "submit", class: "primary" }, "Search")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const words = input.value.trim();
    if (words) location.hash = `#/search?q=${encodeURIComponent(words)}`;
  });
  return form;
}

function sourceList(configs) {
  return h("ul", { class: "sources" }, [...configs].map(([slug, result]) => {
    if (result.status === "rejected") return h("li", {}, h("div", { class: "source" }, h("span", {}, slug, ": ", result.reason.message)));
    const config = result.value;
    const locked = config.auth && config.auth.required;
    return h("li", {}, h("a", { class: "source", href: `#/s/${seg(slug)}` },
      h("img", { src: config.icon, alt: "", width: 40, height: 40 }),
      h("span", {}, h("strong", {}, config.name),
        config.nsfw ? h("span", { class: "badge", title: "Not safe for work" }, "NSFW") : null,
        locked ? h("span", { class: "badge", title: "Sign-in required" }, signedIn(slug) ? "signed in" : "sign-in") : null,
        h("span", { class: "meta", style: "display:block" }, config.languages.join(", ")))));
  }));
}

// The latest place in each series, newest first, from the host. Each is checked against the
// source before it is offered: a series or chapter the source no longer has is said to be gone
// (or left out, if this browser never knew its name), never shown as slugs nor linked to a
// "Not found"; a finished chapter offers the next one.
async function continueReading(container, configs, token) {
  let read;
  try { read = await recentlyRead(); } catch (error) {
    if (!stale(token)) container.replaceChildren(errorBox(error, null, "Continue reading is unavailable"));
    return;
  }
  const seen = new Set();
  const latest = read.filter((item) => {
    const key = `${item.source}/${item.manga}`;
    return !seen.has(key) && seen.add(key);
  }).slice(0, RECENT_MAX);
  if (stale(token) || !latest.length) return;
  const list = h("ul", { class: "recent" });
  const section = h("section", { "aria-labelledby": "continue" }, h("h2", { id: "continue" }, "Continue reading"), list);
  container.replaceChildren(section);
  for (const item of latest) {
    const known = knownTitle(item.source, item.manga, item.chapter);
    const entry = h("li", { "aria-busy": "true" }, h("span", { class: "place muted" }, known || "…"));
    list.append(entry);
    placeOf(item, configs).then((place) => {
      if (stale(token)) return;
      if (place) entry.replaceChildren(place);
      else entry.remove();
      entry.removeAttribute("aria-busy");
      if (!list.children.length) section.remove();
    });
  }
}

/** One "continue reading" entry: a link on from the reader's place, or a line saying it is gone. */
async function placeOf(item, configs) {
  const known = knownTitle(item.source, item.manga, item.chapter);
  const config = configs.get(item.source);
  const gone = (where) => (known ? h("span", { class: "place gone" }, h("strong", {}, known), ` · no longer ${where}`) : null);
  if (!config) return gone("on this host");
  const sourceName = config.status === "fulfilled" ? config.value.name : item.source;
  const link = (href, title, ...what) => h("a", { class: "place", href }, h("strong", {}, title), " · ", ...what);
  const series = `#/m/${seg(item.source)}/${seg(item.manga)}`;
  const reader = (chapter) => `#/r/${seg(item.source)}/${seg(item.manga)}/${seg(chapter)}`;
  let chapters;
  let title;
  try {
    chapters = await chaptersOf(item.source, item.manga);
    title = await titleOf(item.source, item.manga, item.chapter);
  } catch (error) {
    if (error.status === 404) return gone(`in ${sourceName}`);
    // Not known now (a sign-in needed, the source down): the place as it was, to try again.
    return known ? link(reader(item.chapter), known, `page ${item.page + 1} of ${item.pages}`) : null;
  }
  const on = continuation(chapters, item.chapter, item);
  if (on.done) return link(series, title, `${chapterLabel(on.done)} read · no newer chapter yet`);
  if (!on.chapter) return link(series, title, "that chapter is no longer there");
  if (on.next) return link(reader(on.chapter.slug), title, `Next: ${chapterLabel(on.chapter)}`);
  return link(reader(on.chapter.slug), title, chapterLabel(on.chapter), ` · page ${item.page + 1} of ${item.pages}`);
}

function sourceShelves(slug, config, token) {
  if (config.auth && config.auth.required && !signedIn(slug)) {
    return [h("h2", {}, config.name), h("p", {}, h("a", { class: "button", href: `#/signin/${seg(slug)}` }, `Sign in to ${config.name}`))];
  }
  const sections = [];
  for (const preset of config.presets || []) {
    const row = h("ul", { class: "shelf", "aria-label": `${config.name}: ${preset.name}` }, h("li", { class: "status" }, "Loading…"));
    sections.push(h("section", {}, h("h2", {}, `${config.name}: ${preset.name}`),
      preset.description ? h("p", { class: "muted" }, preset.description) : null, row));
    search(slug, { ...preset.request, page: 1, limit: SHELF_SIZE }).then((answer) => {
      if (stale(token)) return;
      row.replaceChildren(...(answer.results.length ? answer.results.map((entry) => h("li", {}, coverLink(slug, entry)))
        : [h("li", { class: "muted" }, "Nothing here yet.")]));
    }, (error) => { if (!stale(token)) shelfFailed(row, error); });
  }
  return sections;
}

// A shelf that could not be filled says so in one line across it; the rest of home is still there.
export function shelfFailed(row, error) {
  const message = error.message || String(error);
  row.classList.add("failed");
  row.replaceChildren(h("li", { role: "alert", title: message }, message,
    error.code ? h("small", { class: "code" }, ` (${error.code})`) : null));
}
