// One search over every source ("#/search?q=moon"): each source's best matches in a row of
// their own, and a way on to all of them in that source's own search.

import { api, configuration, search, signedIn } from "./api.js";
import { address, coverLink, h, screen, seg, stale } from "./dom.js";
import { searchEverywhere, shelfFailed } from "./home.js";
import { addressOf } from "./search.js";

const PER_SOURCE = 12;

export async function everywherePage(token) {
  const query = (address().params.get("q") || "").trim();
  const manifest = await api("/");
  const slugs = manifest.sources.filter((slug) => (manifest.manifest[slug] || {}).status !== "removed");
  const settled = await Promise.allSettled(slugs.map(configuration));
  if (stale(token)) return;
  const rows = [];
  slugs.forEach((slug, i) => {
    if (settled[i].status === "rejected" || !query) return;
    const config = settled[i].value;
    if (config.auth && config.auth.required && !signedIn(slug)) {
      rows.push(h("section", {}, h("h2", {}, config.name),
        h("p", {}, h("a", { class: "button", href: `#/signin/${seg(slug)}` }, `Sign in to ${config.name} to search it`))));
      return;
    }
    // Relevance where the source ranks by it, else its own first order.
    const sort = config.search.sort.includes("relevance") ? "relevance" : config.search.sort[0];
    const request = { query, page: 1, limit: PER_SOURCE, sort, direction: "desc", filters: {} };
    const row = h("ul", { class: "shelf", "aria-label": `${config.name}: results` }, h("li", { class: "status" }, "Loading…"));
    const all = h("a", { href: addressOf(slug, request), hidden: true }, `All results in ${config.name}`);
    rows.push(h("section", {}, h("h2", {}, config.name), row, h("p", {}, all)));
    search(slug, request).then((answer) => {
      if (stale(token)) return;
      row.replaceChildren(...(answer.results.length ? answer.results.map((entry) => h("li", {}, coverLink(slug, entry)))
        : [h("li", { class: "muted" }, "Nothing matches here.")]));
      all.hidden = !answer.more;
    }, (error) => { if (!stale(token)) shelfFailed(row, error); });
  });
  screen(query ? `${query} · every source` : "Search", h("h1", {}, "Search every source"), searchEverywhere(query),
    query ? rows : h("p", { class: "muted" }, "Type what you look for: every source is searched at once."));
}
