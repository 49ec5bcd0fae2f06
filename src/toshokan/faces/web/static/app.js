// toshokan's web reader: one module, no framework, no build step.
// Every view is drawn from the spec's JSON interface (the same endpoints reader apps call).
// Who is reading and where they are in each chapter are kept by the host (the face's own
// endpoints under /_/web), so a place follows the reader from one device to the next; what
// belongs to this browser (sources' sign-ins, preferences, names of what was read) lives in localStorage.

const API = location.pathname.replace(/\/_\/?$/, ""); // "/_/" -> "": paths below start with "/"
const WEB = API + "/_/web";
const PAGE_SIZE = 24;
const SHELF_SIZE = 12;
const RECENT_MAX = 12;
const AUTH_FIELDS = {
  none: [], basic: ["username", "password"], session: ["username", "password"],
  api_key: ["apiKey"], bearer: ["token"], cookie: ["cookie"],
};
const FIELD_LABELS = { username: "User name", password: "Password", apiKey: "API key", token: "Token", cookie: "Cookie" };
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

// -- storage -------------------------------------------------------------------------------

const store = {
  get(key, fallback) {
    try {
      const raw = localStorage.getItem("toshokan:" + key);
      return raw === null ? fallback : JSON.parse(raw);
    } catch { return fallback; }
  },
  set(key, value) { try { localStorage.setItem("toshokan:" + key, JSON.stringify(value)); } catch { /* full or off */ } },
  remove(key) { try { localStorage.removeItem("toshokan:" + key); } catch { /* off */ } },
};

// -- the JSON interface --------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, message, source) {
    super(message);
    this.status = status;
    this.code = code;
    this.source = source;
  }
}

async function api(path, { source, body } = {}) {
  const headers = { Accept: "application/json" };
  const credentials = source ? store.get("auth:" + source, {}) : {};
  Object.assign(headers, credentials);
  const init = { headers, method: "GET" };
  // The browser's cache ignores which credentials fetched an answer: with some, ask the host
  // each time (an ETag makes that a 304), so that refused credentials are noticed.
  if (Object.keys(credentials).length) init.cache = "no-cache";
  if (body !== undefined) {
    init.method = "POST";
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  return send(API + path, init, source, () => {
    // Stored credentials the host refuses are stale: forget them so the next visit asks again.
    // A source the session opens refusing it means the session ended: ask who reads again.
    if (!source) return;
    if (sessionOpens(source)) session = { ...session, reader: null };
    else store.remove("auth:" + source);
  });
}

// One request to the host: its JSON answer, or an ApiError (after `refused` on a 401).
async function send(url, init, source, refused) {
  let response;
  try {
    response = await fetch(url, init);
  } catch {
    throw new ApiError(0, "NETWORK", "The host could not be reached. Check the connection and try again.", source);
  }
  let data = null;
  try { data = await response.json(); } catch { /* not JSON */ }
  if (!response.ok) {
    const error = (data && data.error) || {};
    if (response.status === 401) refused();
    throw new ApiError(response.status, error.code || "HTTP_" + response.status,
      error.message || `The host answered with status ${response.status}.`, source);
  }
  return data;
}

const seg = (value) => encodeURIComponent(value);
const configs = new Map();
function configuration(slug) {
  if (!configs.has(slug)) {
    const pending = api("/" + seg(slug));
    pending.catch(() => configs.delete(slug));
    configs.set(slug, pending);
  }
  return configs.get(slug);
}
const mangaOf = (src, manga) => api(`/${seg(src)}/${seg(manga)}`, { source: src });
const chaptersOf = (src, manga) => api(`/${seg(src)}/${seg(manga)}/chapters`, { source: src });
const pagesOf = (src, manga, chapter) => api(`/${seg(src)}/${seg(manga)}/chapters/${seg(chapter)}`, { source: src });
const search = (src, request) => api(`/${seg(src)}/search`, { source: src, body: request });
// A source that accepts the host's readers opens with the reader's session (its cookie).
const sessionOpens = (src) => Boolean(session && session.reader && (session.opens || []).includes(src));
const signedIn = (src) => sessionOpens(src) || Object.keys(store.get("auth:" + src, {})).length > 0;

// -- the reader's session and place, kept by the host ---------------------------------------

// { readers: whether the host has readers, reader: who is signed in here ("" for the one
// reader of a host without readers, null for no one), opens: the sources a signed-in reader
// opens with the session }, asked once per page load.
let session = null;

async function web(path, { method = "GET", body, keepalive = false } = {}) {
  const init = { method, headers: { Accept: "application/json" }, cache: "no-store", keepalive };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  return send(WEB + path, init, null, () => {
    // The session ended (expired, or the reader was removed): ask who is reading again.
    if (path !== "/session") session = { readers: true, reader: null };
  });
}

const mustSignIn = () => session && session.readers && session.reader === null;
const progressOf = (src, manga) => web(`/progress/${seg(src)}/${seg(manga)}`).then((answer) => answer.chapters);
const recentlyRead = () => web("/progress/recent?limit=50").then((answer) => answer.chapters);

// Each position is sent the moment it is reached, stamped with the browser's clock: the host
// keeps the newest by that clock, so the order of arrival does not matter, and nothing waits
// behind a slow write when the page is left (keepalive sends what was started).
function keepPlace(src, manga, chapter, position) {
  const body = { ...position, updated: Date.now() / 1000 };
  const path = `/progress/${seg(src)}/${seg(manga)}/${seg(chapter)}`;
  return web(path, { method: "PUT", body, keepalive: true }).catch(() => { /* kept next turn */ });
}

// The names of what was read, so "continue reading" shows them without asking the source again.
const namesKey = (src, manga, chapter) => `names:${src}/${manga}/${chapter}`;
async function namesOf(item) {
  const known = store.get(namesKey(item.source, item.manga, item.chapter), null);
  if (known) return known;
  const [manga, chapters] = await Promise.all([mangaOf(item.source, item.manga), chaptersOf(item.source, item.manga)]);
  const chapter = chapters.find((c) => c.slug === item.chapter);
  const names = { title: manga.title, label: chapter ? chapterLabel(chapter) : item.chapter };
  store.set(namesKey(item.source, item.manga, item.chapter), names);
  return names;
}

function showWho() {
  const who = document.getElementById("who");
  if (!who) return;
  who.replaceChildren(session && session.reader ? h("span", {}, h("span", { class: "muted" }, session.reader), " ",
    h("button", { type: "button", class: "link", onclick: signOut }, "Sign out")) : "");
}

async function signOut() {
  try { session = await web("/session", { method: "DELETE" }); } catch (error) { fail(error); return; }
  showWho();
  location.hash = "#/";
  render();
}

// -- DOM -----------------------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const view = document.getElementById("view");
let generation = 0; // a newer route makes the answers of an older one irrelevant
let teardown = [];

function screen(title, ...children) {
  document.title = title ? `${title} · toshokan` : "toshokan";
  view.replaceChildren(...children.flat(Infinity).filter((child) => child !== null && child !== undefined && child !== false));
}

function errorBox(error, retry, title) {
  const status = error instanceof ApiError ? error.status : 0;
  const heading = title ? title : status === 401 ? "Sign-in needed" : status === 404 ? "Not found"
    : status === 429 ? "Too many requests" : status >= 500 ? "The source had a problem" : "Something went wrong";
  const actions = h("p", { class: "actions" });
  if (status === 401 && error.source) {
    // After signing in, the reader comes back to what asked for it.
    const here = location.hash;
    actions.append(h("a", { class: "button primary", href: `#/signin/${seg(error.source)}`,
      onclick: () => { try { sessionStorage.setItem("toshokan:after-signin", here); } catch { /* off */ } } }, "Sign in"));
  }
  if (retry) actions.append(h("button", { type: "button", onclick: retry }, "Try again"));
  if (location.hash.replace(/^#\/?/, "") !== "") actions.append(h("a", { class: "button", href: "#/" }, "Home"));
  return h("div", { class: "error", role: "alert" }, h("h2", {}, heading),
    h("p", {}, error.message || String(error)),
    error.code ? h("p", { class: "code" }, h("small", {}, error.code)) : null, actions);
}

function fail(error) {
  screen("Error", errorBox(error, render));
}

function coverLink(src, entry) {
  return h("a", { class: "cover", href: `#/m/${seg(src)}/${seg(entry.slug)}` },
    entry.cover ? h("img", { class: "art", src: entry.cover, alt: "", loading: "lazy", decoding: "async" })
      : h("span", { class: "art", "aria-hidden": "true" }),
    h("span", { class: "title" }, entry.title));
}

const chapterLabel = (chapter) => {
  const number = `Chapter ${chapter.number}`;
  return chapter.title && chapter.title !== "No Title" && chapter.title !== number ? `${number}: ${chapter.title}` : number;
};

// -- home ----------------------------------------------------------------------------------

async function home(token) {
  const manifest = await api("/");
  const slugs = manifest.sources.filter((slug) => (manifest.manifest[slug] || {}).status !== "removed");
  const settled = await Promise.allSettled(slugs.map(configuration));
  if (token !== generation) return;
  const list = h("ul", { class: "sources" });
  const shelves = h("div", {});
  slugs.forEach((slug, i) => {
    const result = settled[i];
    if (result.status === "rejected") {
      list.append(h("li", {}, h("div", { class: "source" }, h("span", {}, slug, ": ", result.reason.message))));
      return;
    }
    const config = result.value;
    const locked = config.auth && config.auth.required;
    list.append(h("li", {}, h("a", { class: "source", href: `#/s/${seg(slug)}` },
      h("img", { src: config.icon, alt: "", width: 40, height: 40 }),
      h("span", {}, h("strong", {}, config.name),
        config.nsfw ? h("span", { class: "badge", title: "Not safe for work" }, "NSFW") : null,
        locked ? h("span", { class: "badge", title: "Sign-in required" }, signedIn(slug) ? "signed in" : "sign-in") : null,
        h("span", { class: "meta", style: "display:block" }, config.languages.join(", "))))));
    shelves.append(...sourceShelves(slug, config, token));
  });
  const continuing = h("div", {});
  screen(null,
    h("h1", {}, manifest.name || "toshokan"),
    h("h2", {}, "Sources"), list,
    continuing,
    shelves);
  continueReading(continuing, token);
}

// The newest chapter read in each manga, newest first, from the host; names are filled in as known.
async function continueReading(container, token) {
  let read;
  try { read = await recentlyRead(); } catch (error) {
    if (token === generation) container.replaceChildren(errorBox(error, null, "Continue reading is unavailable"));
    return;
  }
  const seen = new Set();
  const latest = read.filter((item) => {
    const key = `${item.source}/${item.manga}`;
    return !seen.has(key) && seen.add(key);
  }).slice(0, RECENT_MAX);
  if (token !== generation || !latest.length) return;
  container.replaceChildren(h("section", { "aria-labelledby": "continue" }, h("h2", { id: "continue" }, "Continue reading"),
    h("ul", { class: "recent" }, latest.map((item) => {
      const title = h("strong", {}, item.manga);
      const label = h("span", {}, item.chapter);
      namesOf(item).then((names) => { title.textContent = names.title; label.textContent = names.label; }, () => { /* the slugs stay */ });
      return h("li", {}, h("a", { href: `#/r/${seg(item.source)}/${seg(item.manga)}/${seg(item.chapter)}` },
        title, " · ", label, ` · page ${item.page + 1} of ${item.pages}`));
    }))));
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
      if (token !== generation) return;
      row.replaceChildren(...(answer.results.length ? answer.results.map((entry) => h("li", {}, coverLink(slug, entry)))
        : [h("li", { class: "muted" }, "Nothing here yet.")]));
    }, (error) => { if (token === generation) shelfFailed(row, error); });
  }
  return sections;
}

// A shelf that could not be filled says so in one line across it; the rest of home is still there.
function shelfFailed(row, error) {
  const message = error.message || String(error);
  row.classList.add("failed");
  row.replaceChildren(h("li", { role: "alert", title: message }, message,
    error.code ? h("small", { class: "code" }, ` (${error.code})`) : null));
}

// -- search --------------------------------------------------------------------------------

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

async function sourcePage(token, src) {
  const config = await configuration(src);
  if (token !== generation) return;
  const initial = store.get("search:" + src, null) ||
    { query: "", page: 1, limit: PAGE_SIZE, sort: config.search.sort[0], direction: "desc", filters: {} };
  if (!config.search.sort.includes(initial.sort)) initial.sort = config.search.sort[0];
  const results = h("ul", { class: "grid", "aria-label": "Results" });
  const status = h("p", { class: "status", "aria-live": "polite" });
  const moreButton = h("button", { type: "button", hidden: true }, "More");
  const sentinel = h("div", { class: "more" }, moreButton);
  let request = initial;
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
      if (token !== generation || mine !== run) return;
      results.append(...answer.results.map((entry) => h("li", {}, coverLink(src, entry))));
      more = answer.more;
      request = { ...request, page: request.page + 1 };
      status.textContent = results.children.length ? (more ? "" : "End of results.") : "Nothing matches this search.";
      moreButton.hidden = !more;
      // Observed afresh, the sentinel reports whether it is still in view: a short page loads on.
      observer.unobserve(sentinel);
      observer.observe(sentinel);
    } catch (error) {
      if (token !== generation || mine !== run) return;
      status.replaceChildren(errorBox(error, () => load()));
    } finally {
      if (mine === run) loading = false;
    }
  }

  const form = searchForm(config, initial, (next) => {
    store.set("search:" + src, next);
    request = next;
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
  teardown.push(() => observer.disconnect());

  const auth = config.auth && config.auth.type !== "none"
    ? h("p", {}, h("a", { href: `#/signin/${seg(src)}` }, signedIn(src) ? "Signed in · change" : "Sign in")) : null;
  screen(config.name,
    h("h1", {}, h("img", { src: config.icon, alt: "", width: 32, height: 32, style: "vertical-align:middle;border-radius:6px" }), " ", config.name),
    auth, form, results, status, sentinel);
  load();
}

// -- series --------------------------------------------------------------------------------

/** Chapters grouped by number, in the order the host lists them (newest first). */
function groupByNumber(chapters) {
  const groups = new Map();
  for (const chapter of chapters) {
    if (!groups.has(chapter.number)) groups.set(chapter.number, []);
    groups.get(chapter.number).push(chapter);
  }
  return [...groups.entries()].map(([number, versions]) => ({ number, versions }));
}

/** The version to offer: the preferred language and group, else the language, else the group, else the first. */
function pick(versions, preference) {
  const pref = preference || {};
  const score = (v) => (v.language === pref.language ? 2 : 0) + (v.scanlator === pref.scanlator ? 1 : 0);
  return versions.reduce((best, v) => (score(v) > score(best) ? v : best), versions[0]);
}

const prefKey = (src, manga) => `pref:${src}/${manga}`;
function chapterList(src, mangaSlug, chapters, positions) {
  const groups = groupByNumber(chapters);
  const languages = [...new Set(chapters.map((c) => c.language))];
  const scanlators = [...new Set(chapters.map((c) => c.scanlator))];
  const container = h("div", {});
  const remember = (chapter) => store.set(prefKey(src, mangaSlug), { language: chapter.language, scanlator: chapter.scanlator });
  const link = (chapter, text) => h("a", { class: "chapter", href: `#/r/${seg(src)}/${seg(mangaSlug)}/${seg(chapter.slug)}`,
    onclick: () => remember(chapter) }, text);
  const draw = () => {
    const pref = store.get(prefKey(src, mangaSlug), {});
    const list = h("ol", { class: "chapters", "aria-label": "Chapters, newest first" }, groups.map(({ versions }) => {
      const chosen = pick(versions, pref);
      const position = positions[chosen.slug];
      const others = versions.filter((v) => v !== chosen);
      return h("li", {}, link(chosen, chapterLabel(chosen)),
        position ? h("span", { class: "read" }, ` · read to page ${position.page + 1} of ${position.pages}`) : null,
        h("span", { class: "meta" }, [chosen.language, chosen.scanlator, chosen.date ? new Date(chosen.date).toLocaleDateString() : ""].filter(Boolean).join(" · ")),
        others.length ? h("details", {}, h("summary", {}, `${others.length} other version${others.length > 1 ? "s" : ""}`),
          h("ul", { class: "versions" }, others.map((v) => h("li", {}, link(v, `${v.language} · ${v.scanlator || "unknown group"}`))))) : null);
    }));
    const choose = (key, label, values) => {
      if (values.length < 2) return null;
      const select = h("select", { onchange: () => {
        store.set(prefKey(src, mangaSlug), { ...store.get(prefKey(src, mangaSlug), {}), [key]: select.value });
        draw();
      } }, h("option", { value: "" }, "Any"), values.map((value) => h("option", { value, selected: pref[key] === value }, value || "(none)")));
      return h("label", { class: "field" }, h("span", {}, label), select);
    };
    container.replaceChildren(h("div", { class: "row" }, choose("language", "Preferred language", languages),
      choose("scanlator", "Preferred group", scanlators)), list);
  };
  draw();
  return container;
}

async function seriesPage(token, src, mangaSlug) {
  const [config, manga, chapters, positions] = await Promise.all([configuration(src), mangaOf(src, mangaSlug),
    chaptersOf(src, mangaSlug), progressOf(src, mangaSlug)]);
  if (token !== generation) return;
  const tagNames = new Map((config.search.tags || []).map((tag) => [tag.slug, tag.name]));
  const pref = store.get(prefKey(src, mangaSlug), {});
  const groups = groupByNumber(chapters);
  const oldest = groups.length ? pick(groups[groups.length - 1].versions, pref) : null;
  const [latest] = Object.entries(positions).sort(([, a], [, b]) => b.updated - a.updated);
  const recent = latest && chapters.find((c) => c.slug === latest[0]);
  const start = recent ? h("a", { class: "button primary", href: `#/r/${seg(src)}/${seg(mangaSlug)}/${seg(recent.slug)}` }, `Continue: ${chapterLabel(recent)}`)
    : oldest ? h("a", { class: "button primary", href: `#/r/${seg(src)}/${seg(mangaSlug)}/${seg(oldest.slug)}` }, "Start reading") : null;
  const facts = [
    ["Authors", manga.authors.join(", ")], ["Status", manga.publication], ["Rating", manga.classification],
    ["Source", config.name],
  ].filter(([, value]) => value);
  screen(manga.title,
    h("p", {}, h("a", { href: `#/s/${seg(src)}` }, `← ${config.name}`)),
    h("article", { class: "series" },
      h("div", {}, manga.covers.length ? h("img", { class: "art", src: manga.covers[0], alt: `Cover of ${manga.title}` }) : null),
      h("div", {},
        h("h1", {}, manga.title),
        manga.alternativeTitles.length ? h("p", { class: "muted" }, manga.alternativeTitles.join(" · ")) : null,
        h("dl", { class: "facts" }, facts.map(([term, value]) => [h("dt", {}, term), h("dd", {}, value)])),
        manga.tags.length ? h("ul", { class: "tags", "aria-label": "Tags" }, manga.tags.map((slug) => h("li", { class: "tag button" }, tagNames.get(slug) || slug))) : null,
        h("p", { class: "synopsis" }, manga.synopsis),
        start)),
    h("h2", {}, `Chapters (${groups.length})`),
    chapters.length ? chapterList(src, mangaSlug, chapters, positions) : h("p", { class: "muted" }, "No chapters yet."));
}

// -- reader --------------------------------------------------------------------------------

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

async function readerPage(token, src, mangaSlug, chapterSlug) {
  const [config, manga, chapters, firstPages, positions] = await Promise.all([configuration(src), mangaOf(src, mangaSlug),
    chaptersOf(src, mangaSlug), pagesOf(src, mangaSlug, chapterSlug), progressOf(src, mangaSlug)]);
  if (token !== generation) return;
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
  teardown.push(() => observer && observer.disconnect());

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
  teardown.push(() => document.removeEventListener("keydown", onKey));

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

// -- sign-in -------------------------------------------------------------------------------

async function signInPage(token, src) {
  const config = await configuration(src);
  if (token !== generation) return;
  const auth = config.auth || { type: "none" };
  const fields = auth.fields && auth.fields.length ? auth.fields : AUTH_FIELDS[auth.type] || [];
  const message = h("div", { "aria-live": "assertive" });
  const secret = (name) => name !== "username";
  const form = h("form", { class: "signin" },
    fields.map((name) => h("label", { class: "field" }, h("span", {}, FIELD_LABELS[name] || name),
      h("input", { name, type: secret(name) ? "password" : "text", required: true, maxlength: 4096,
        autocomplete: name === "username" ? "username" : name === "password" ? "current-password" : "off" }))),
    h("div", { class: "row" }, h("button", { type: "submit", class: "primary" }, "Sign in"),
      signedIn(src) ? h("button", { type: "button", onclick: () => { store.remove("auth:" + src); render(); } }, "Sign out") : null));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = Object.fromEntries(new FormData(form));
    message.replaceChildren(h("p", { class: "status" }, "Signing in…"));
    try {
      const answer = await api(`/${seg(src)}/authenticate`, { body });
      if (!answer.success) throw new ApiError(401, answer.error.code, answer.error.message, null);
      store.set("auth:" + src, answer.headers || {});
      let back = null;
      try {
        back = sessionStorage.getItem("toshokan:after-signin");
        sessionStorage.removeItem("toshokan:after-signin");
      } catch { /* off */ }
      location.hash = back && back.startsWith(`#/`) && back.split("/")[2] === seg(src) ? back : `#/s/${seg(src)}`;
    } catch (error) {
      const refused = error.code === "INVALID_CREDENTIALS";
      message.replaceChildren(errorBox(refused ? new ApiError(401, error.code, error.message, null) : error,
        null, refused ? "Sign-in refused" : null));
    }
  });
  screen(`Sign in to ${config.name}`, h("h1", {}, `Sign in to ${config.name}`),
    auth.type === "none" ? h("p", {}, "This source needs no sign-in.") : [
      signedIn(src) ? h("p", { class: "muted" }, "You are signed in on this browser.") : null, message, form]);
}

// The host's own sign-in, when it has readers: who is reading, so their place is theirs.
function readerSignIn() {
  const message = h("div", { "aria-live": "assertive" });
  const form = h("form", { class: "signin" },
    h("label", { class: "field" }, h("span", {}, "Name"),
      h("input", { name: "name", type: "text", required: true, maxlength: 64, autocomplete: "username" })),
    h("label", { class: "field" }, h("span", {}, "Password or API key"),
      h("input", { name: "secret", type: "password", required: true, maxlength: 4096, autocomplete: "current-password" })),
    h("div", { class: "row" }, h("button", { type: "submit", class: "primary" }, "Sign in")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    message.replaceChildren(h("p", { class: "status" }, "Signing in…"));
    try {
      session = await web("/session", { method: "POST", body: Object.fromEntries(new FormData(form)) });
    } catch (error) {
      const title = error.status === 401 ? "Sign-in refused" : error.status === 429 ? "Too many attempts" : null;
      message.replaceChildren(errorBox(error, null, title));
      return;
    }
    showWho();
    render();
  });
  screen("Sign in", h("h1", {}, "Sign in"),
    h("p", { class: "muted" }, "Sign in to read here: the host keeps your place in every chapter, on every device."),
    message, form);
}

// -- routing -------------------------------------------------------------------------------

const ROUTES = [
  [/^$/, home],
  [/^s\/([^/]+)$/, sourcePage],
  [/^m\/([^/]+)\/([^/]+)$/, seriesPage],
  [/^r\/([^/]+)\/([^/]+)\/([^/]+)$/, readerPage],
  [/^signin\/([^/]+)$/, signInPage],
];

async function render() {
  const token = ++generation;
  for (const undo of teardown.splice(0)) undo();
  const path = location.hash.replace(/^#\/?/, "");
  const found = ROUTES.map(([pattern, draw]) => [path.match(pattern), draw]).find(([match]) => match);
  if (!found) {
    fail(new ApiError(404, "NOT_FOUND", "This address does not lead anywhere in the reader."));
    return;
  }
  const [match, draw] = found;
  view.replaceChildren(h("p", { class: "status" }, "Loading…"));
  try {
    if (session === null || mustSignIn()) {
      session = await web("/session");
      showWho();
    }
    if (token !== generation) return;
    if (mustSignIn()) {
      readerSignIn();
      return;
    }
    await draw(token, ...match.slice(1).map(decodeURIComponent));
    if (token === generation && !path.startsWith("r/")) view.focus({ preventScroll: true });
  } catch (error) {
    if (token !== generation) return;
    // A session that ended while reading (expired, or the reader removed) asks who reads again.
    if (mustSignIn()) {
      showWho();
      readerSignIn();
    } else {
      fail(error);
    }
  }
}

window.addEventListener("hashchange", render);
window.addEventListener("unhandledrejection", (event) => fail(event.reason || new Error("Something went wrong.")));
render();
