// A series: its details, and its chapters grouped by number with a preferred version.

import { chaptersOf, configuration, mangaOf, progressOf, store } from "./api.js";
import { chapterLabel, h, screen, seg, stale } from "./dom.js";

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
export function pick(versions, preference) {
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

export async function seriesPage(token, src, mangaSlug) {
  const [config, manga, chapters, positions] = await Promise.all([configuration(src), mangaOf(src, mangaSlug),
    chaptersOf(src, mangaSlug), progressOf(src, mangaSlug)]);
  if (stale(token)) return;
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
