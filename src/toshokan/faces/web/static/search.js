// A source's search: its declared sorts and filters as a form, results that load as they scroll.

import { configuration, search, signedIn } from "./api.js";
import { address, coverLink, errorBox, h, route, screen, seg, stale } from "./dom.js";

const PAGE_SIZE = 24;

const PUBLICATIONS = ["Ongoing", "Completed", "Hiatus", "Cancelled", "Unknown"];
const CLASSIFICATIONS = ["Safe", "Suggestive", "Explicit", "Pornographic", "Unknown"];
const SORT_LABELS = {
  relevance: "Relevance", latest: "Latest update", title: "Title", popularity: "Popularity", rating: "Rating",
  chapters: "Chapters", year: "Year", views: "Views", follows: "Follows", createdAt: "Date added", updatedAt: "Last updated",
};
// Filters offered as text (a name) or as a comma-separated list of values.
const TEXT_FILTERS = { author: "Author", artist: "Artist", publisher: "Publisher" };
const LIST_FILTERS = {
  genre: "Genres", demographic: "Demographics", originalLanguage: "Original languages",
  translatedLanguage: "Translated languages",
};
const NUMBER_FILTERS = { year: "Year", minChapters: "Minimum chapters" };

function checkboxes(name, legend, values, chosen) {
  return h("fieldset", {}, h("legend", {}, legend), h("div", { class: "checks" }, values.map((value) =>
    h("label", {}, h("input", { type: "checkbox", name, value, checked: chosen.includes(value) }), " ", value))));
}

function tagPicker(config, filters, state) {
  const declared = config.search.filters;
  const modes = ["include", "exclude"].filter((mode) => declared.includes(mode + "Tag"));
  const label = (tag, mode) => `${tag.name}${mode ? (mode === "include" ? ", included" : ", excluded") : ""}`;
  const buttons = config.search.tags.map((tag) => {
    const button = h("button", { type: "button", class: "tag", "data-slug": tag.slug });
    const show = () => {
      const mode = state.get(tag.slug) || "";
      button.dataset.state = mode;
      button.textContent = (mode === "include" ? "+ " : mode === "exclude" ? "− " : "") + tag.name;
      button.setAttribute("aria-label", label(tag, mode));
      button.setAttribute("aria-pressed", mode ? "true" : "false");
    };
    button.addEventListener("click", () => {
      const cycle = ["", ...modes];
      const next = cycle[(cycle.indexOf(state.get(tag.slug) || "") + 1) % cycle.length];
      if (next) state.set(tag.slug, next); else state.delete(tag.slug);
      show();
    });
    show();
    return h("li", {}, button);
  });
  const list = h("ul", { class: "tags" }, buttons);
  const narrow = h("input", { type: "search", "aria-label": "Find a tag", placeholder: "Find a tag" });
  narrow.addEventListener("input", () => {
    const words = narrow.value.trim().toLowerCase();
    for (const item of buttons) item.hidden = words !== "" && !item.textContent.toLowerCase().includes(words);
  });
  const hint = modes.length === 2 ? "Press a tag once to include it, twice to exclude it."
    : modes[0] === "include" ? "Press a tag to include it." : "Press a tag to exclude it.";
  return h("fieldset", {}, h("legend", {}, "Tags"), h("p", { class: "muted" }, hint),
    config.search.tags.length > 12 ? narrow : null, list);
}

function searchForm(config, request, onSubmit) {
  const declared = new Set(config.search.filters);
  const filters = request.filters || {};
  const tagState = new Map([...(filters.includeTag || []).map((t) => [t, "include"]), ...(filters.excludeTag || []).map((t) => [t, "exclude"])]);
  const sort = h("select", { name: "sort" }, config.search.sort.map((value) =>
    h("option", { value, selected: value === request.sort }, SORT_LABELS[value] || value)));
  const direction = h("select", { name: "direction" },
    h("option", { value: "desc", selected: request.direction !== "asc" }, "Descending"),
    h("option", { value: "asc", selected: request.direction === "asc" }, "Ascending"));
  const extra = [];
  if (declared.has("status")) extra.push(checkboxes("status", "Status", PUBLICATIONS, filters.status || []));
  if (declared.has("contentRating")) extra.push(checkboxes("contentRating", "Content rating", CLASSIFICATIONS, filters.contentRating || []));
  const inputs = [];
  for (const [key, label] of Object.entries(NUMBER_FILTERS)) {
    if (declared.has(key)) inputs.push(h("label", { class: "field" }, h("span", {}, label),
      h("input", { type: "number", name: key, min: 0, max: key === "year" ? 9999 : 100000, step: 1, value: filters[key] ?? "" })));
  }
  for (const [key, label] of Object.entries(TEXT_FILTERS)) {
    if (declared.has(key)) inputs.push(h("label", { class: "field" }, h("span", {}, label),
      h("input", { type: "text", name: key, maxlength: 200, value: filters[key] ?? "" })));
  }
  for (const [key, label] of Object.entries(LIST_FILTERS)) {
    if (declared.has(key)) inputs.push(h("label", { class: "field" }, h("span", {}, `${label} (comma-separated)`),
      h("input", { type: "text", name: key, maxlength: 500, value: (filters[key] || []).join(", ") })));
  }
  if (inputs.length) extra.push(h("div", { class: "row" }, inputs));
  if ((declared.has("includeTag") || declared.has("excludeTag")) && config.search.tags.length) {
    extra.push(tagPicker(config, filters, tagState));
  }
  const form = h("form", { class: "search", role: "search" },
    h("div", { class: "row" },
      h("label", { class: "field" }, h("span", {}, "Search"),
        h("input", { type: "search", name: "query", maxlength: 200, value: request.query || "" })),
      h("label", { class: "field" }, h("span", {}, "Sort by"), sort),
      h("label", { class: "field" }, h("span", {}, "Order"), direction),
      h("button", { type: "submit", class: "primary" }, "Search")),
    extra.length ? h("details", { class: "filters", open: Object.keys(filters).length > 0 },
      h("summary", {}, "Filters"), h("div", { class: "search" }, extra)) : null);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const chosen = {};
    for (const key of ["status", "contentRating"]) {
      const values = data.getAll(key);
      if (values.length) chosen[key] = values;
    }
    for (const key of Object.keys(NUMBER_FILTERS)) {
      const value = data.get(key);
      if (value !== null && value !== "") chosen[key] = Number(value);
    }
    for (const key of Object.keys(TEXT_FILTERS)) {
      const value = (data.get(key) || "").trim();
      if (value) chosen[key] = value;
    }
    for (const key of Object.keys(LIST_FILTERS)) {
      const values = (data.get(key) || "").split(",").map((v) => v.trim()).filter(Boolean);
      if (values.length) chosen[key] = values;
    }
    for (const mode of ["include", "exclude"]) {
      const slugs = [...tagState].filter(([, m]) => m === mode).map(([slug]) => slug);
      if (slugs.length) chosen[mode + "Tag"] = slugs;
    }
    onSubmit({ query: (data.get("query") || "").trim(), page: 1, limit: PAGE_SIZE, sort: data.get("sort"),
      direction: data.get("direction"), filters: chosen });
  });
  return form;
}

// A search lives in the address ("#/s/local?q=moon&sort=title&direction=asc&status=Ongoing"), so
// Back returns to the results and an address can be shared. Lists repeat their key.
const LIST_KEYS = ["status", "contentRating", "includeTag", "excludeTag", ...Object.keys(LIST_FILTERS)];

function requestFrom(config, params) {
  const sorts = config.search.sort;
  const sort = sorts.includes(params.get("sort")) ? params.get("sort") : sorts[0];
  const filters = {};
  for (const key of config.search.filters) {
    if (LIST_KEYS.includes(key)) {
      const values = params.getAll(key).filter(Boolean);
      if (values.length) filters[key] = values;
    } else if (params.has(key) && params.get(key) !== "") {
      filters[key] = key in NUMBER_FILTERS ? Number(params.get(key)) : params.get(key);
    }
  }
  return { query: params.get("q") || "", page: 1, limit: PAGE_SIZE, sort,
    direction: params.get("direction") === "asc" ? "asc" : "desc", filters };
}

export function addressOf(src, request) {
  const params = new URLSearchParams();
  if (request.query) params.set("q", request.query);
  if (request.sort) params.set("sort", request.sort);
  if (request.direction === "asc") params.set("direction", "asc");
  for (const [key, value] of Object.entries(request.filters || {})) {
    for (const one of Array.isArray(value) ? value : [value]) params.append(key, String(one));
  }
  const query = params.toString();
  return `#/s/${seg(src)}${query ? "?" + query : ""}`;
}

export async function sourcePage(token, src) {
  const config = await configuration(src);
  if (stale(token)) return;
  let request = requestFrom(config, address().params);
  const results = h("ul", { class: "grid", "aria-label": "Results" });
  const status = h("p", { class: "status", "aria-live": "polite" });
  const moreButton = h("button", { type: "button", hidden: true }, "More");
  const sentinel = h("div", { class: "more" }, moreButton);
  let loading = false;
  let more = false;
  let run = 0;

  async function load() {
    if (loading) return;
    loading = true;
    const mine = run;
    status.textContent = "Loading…";
    moreButton.hidden = true;
    try {
      const answer = await search(src, request);
      if (stale(token) || mine !== run) return;
      results.append(...answer.results.map((entry) => h("li", {}, coverLink(src, entry))));
      more = answer.more;
      request = { ...request, page: request.page + 1 };
      status.textContent = results.children.length ? (more ? "" : "End of results.") : "Nothing matches this search.";
      moreButton.hidden = !more;
      // Observed afresh, the sentinel reports whether it is still in view: a short page loads on.
      observer.unobserve(sentinel);
      observer.observe(sentinel);
    } catch (error) {
      if (stale(token) || mine !== run) return;
      status.replaceChildren(errorBox(error, () => load()));
    } finally {
      if (mine === run) loading = false;
    }
  }

  const form = searchForm(config, request, (next) => {
    const target = addressOf(src, next);
    if (location.hash !== target) {
      location.hash = target; // a new entry in the history: the view is drawn again from it
      return;
    }
    request = next; // the same search again: asked afresh
    run += 1;
    loading = false;
    results.replaceChildren();
    load();
  });
  moreButton.addEventListener("click", () => load());
  const observer = new IntersectionObserver((entries) => {
    if (entries.some((entry) => entry.isIntersecting) && more && !loading) load();
  }, { rootMargin: "600px" });
  observer.observe(sentinel);
  route.teardown.push(() => observer.disconnect());

  const auth = config.auth && config.auth.type !== "none"
    ? h("p", {}, h("a", { href: `#/signin/${seg(src)}` }, signedIn(src) ? "Signed in · change" : "Sign in")) : null;
  screen(request.query ? `${request.query} · ${config.name}` : config.name,
    h("h1", {}, h("img", { src: config.icon, alt: "", width: 32, height: 32, style: "vertical-align:middle;border-radius:6px" }), " ", config.name),
    auth, form, results, status, sentinel);
  load();
}
