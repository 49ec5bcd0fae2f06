// Home: the sources, what the reader was reading, and each source's presets as shelves.

import { api, configuration, namesOf, recentlyRead, search, signedIn } from "./api.js";
import { coverLink, errorBox, h, screen, seg, stale } from "./dom.js";

const SHELF_SIZE = 12;
const RECENT_MAX = 12;

export async function home(token) {
  const manifest = await api("/");
  const slugs = manifest.sources.filter((slug) => (manifest.manifest[slug] || {}).status !== "removed");
  const settled = await Promise.allSettled(slugs.map(configuration));
  if (stale(token)) return;
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
    if (!stale(token)) container.replaceChildren(errorBox(error, null, "Continue reading is unavailable"));
    return;
  }
  const seen = new Set();
  const latest = read.filter((item) => {
    const key = `${item.source}/${item.manga}`;
    return !seen.has(key) && seen.add(key);
  }).slice(0, RECENT_MAX);
  if (stale(token) || !latest.length) return;
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
      if (stale(token)) return;
      row.replaceChildren(...(answer.results.length ? answer.results.map((entry) => h("li", {}, coverLink(slug, entry)))
        : [h("li", { class: "muted" }, "Nothing here yet.")]));
    }, (error) => { if (!stale(token)) shelfFailed(row, error); });
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
