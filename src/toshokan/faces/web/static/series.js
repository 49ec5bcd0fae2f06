// A series: its details, and its chapters grouped by number with a preferred version.

import { chaptersOf, configuration, follows, mangaOf, progressOf, remember, sessionOpens, store } from "./api.js";
import { continuation, groupByNumber, pick, prefKey, preferenceOf } from "./chapters.js";
import { chapterLabel, h, known, screen, seg, stale } from "./dom.js";

const readerHref = (src, manga, chapter) => `#/r/${seg(src)}/${seg(manga)}/${seg(chapter.slug)}`;

function chapterList(src, mangaSlug, chapters, positions) {
  const groups = groupByNumber(chapters);
  const languages = [...new Set(chapters.map((c) => c.language))];
  const scanlators = [...new Set(chapters.map((c) => known(c.scanlator)).filter(Boolean))];
  const container = h("div", {});
  const choose = (chapter) => store.set(prefKey(src, mangaSlug), { language: chapter.language, scanlator: chapter.scanlator });
  const link = (chapter, text) => h("a", { class: "chapter", href: readerHref(src, mangaSlug, chapter),
    onclick: () => choose(chapter) }, text);
  const draw = () => {
    const pref = preferenceOf(src, mangaSlug);
    const list = h("ol", { class: "chapters", "aria-label": "Chapters, newest first" }, groups.map(({ versions }) => {
      const chosen = pick(versions, pref);
      const position = positions[chosen.slug];
      const others = versions.filter((v) => v !== chosen);
      const read = position && (position.finished ? " · read" : ` · read to page ${position.page + 1} of ${position.pages}`);
      return h("li", {}, link(chosen, chapterLabel(chosen)),
        read ? h("span", { class: "read" }, read) : null,
        h("span", { class: "meta" }, [chosen.language, known(chosen.scanlator), chosen.date ? new Date(chosen.date).toLocaleDateString() : ""].filter(Boolean).join(" · ")),
        others.length ? h("details", {}, h("summary", {}, `${others.length} other version${others.length > 1 ? "s" : ""}`),
          h("ul", { class: "versions" }, others.map((v) => h("li", {},
            link(v, [v.language, known(v.scanlator)].filter(Boolean).join(" · ") || chapterLabel(v)))))) : null);
    }));
    const preferred = (key, label, values) => {
      if (values.length < 2) return null;
      const select = h("select", { onchange: () => {
        store.set(prefKey(src, mangaSlug), { ...preferenceOf(src, mangaSlug), [key]: select.value });
        draw();
      } }, h("option", { value: "" }, "Any"), values.map((value) => h("option", { value, selected: pref[key] === value }, value)));
      return h("label", { class: "field" }, h("span", {}, label), select);
    };
    container.replaceChildren(h("div", { class: "row" }, preferred("language", "Preferred language", languages),
      preferred("scanlator", "Preferred group", scanlators)), list);
  };
  draw();
  return container;
}

/** Where the series' main button leads: on from the reader's latest place (the next chapter once
 * that one is finished), else the first chapter. */
function startButton(src, mangaSlug, chapters, positions) {
  const groups = groupByNumber(chapters);
  if (!groups.length) return null;
  const [latest] = Object.entries(positions).sort(([, a], [, b]) => b.updated - a.updated);
  const on = latest ? continuation(chapters, latest[0], latest[1]) : null;
  if (on && on.chapter) {
    const text = on.next ? `Next: ${chapterLabel(on.chapter)}` : `Continue: ${chapterLabel(on.chapter)}`;
    return h("a", { class: "button primary", href: readerHref(src, mangaSlug, on.chapter) }, text);
  }
  if (on && on.done) return h("span", { class: "muted" }, `${chapterLabel(on.done)} read: no newer chapter yet.`);
  const first = pick(groups[groups.length - 1].versions, preferenceOf(src, mangaSlug));
  return h("a", { class: "button primary", href: readerHref(src, mangaSlug, first) }, "Start reading");
}

/** Follow or unfollow the series (the host checks what it follows for new chapters, shown in
 * Updates). Not offered for a source that asks each reader for credentials of its own: the host
 * cannot check such a source in the background. */
function followButton(src, mangaSlug, config) {
  if (config.auth && config.auth.required && !sessionOpens(src)) return null;
  const path = `/series/${seg(src)}/${seg(mangaSlug)}`;
  const button = h("button", { type: "button", class: "follow", disabled: true }, "Follow");
  const note = h("span", { class: "muted follow-note", role: "status" });
  let following = false;
  const show = () => {
    button.textContent = following ? "Unfollow" : "Follow";
    button.disabled = false;
  };
  follows("").then((answer) => {
    following = answer.follows.some((f) => f.source === src && f.manga === mangaSlug);
    show();
  }, (error) => { note.textContent = error.message; });
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      if (following) {
        await follows(path, { method: "DELETE" });
        following = false;
        note.textContent = "No longer followed.";
      } else {
        await follows(path, { method: "PUT" });
        following = true;
        note.replaceChildren("Followed: its new chapters will show in ", h("a", { href: "#/updates" }, "Updates"), ".");
      }
    } catch (error) {
      note.textContent = error.message;
    }
    show();
  });
  return h("span", { class: "follow-box" }, button, " ", note);
}

export async function seriesPage(token, src, mangaSlug) {
  const [config, manga, chapters, positions] = await Promise.all([configuration(src), mangaOf(src, mangaSlug),
    chaptersOf(src, mangaSlug), progressOf(src, mangaSlug)]);
  if (stale(token)) return;
  remember(src, mangaSlug, manga);
  const tagNames = new Map((config.search.tags || []).map((tag) => [tag.slug, tag.name]));
  const facts = [
    ["Authors", manga.authors.join(", ")], ["Status", manga.publication], ["Rating", manga.classification],
    ["Source", config.name],
  ].filter(([, value]) => value);
  // What a reader can do with the series, in a row of its own: more actions join it here.
  const actions = h("p", { class: "actions" }, startButton(src, mangaSlug, chapters, positions), " ",
    followButton(src, mangaSlug, config));
  const synopsis = known(manga.synopsis);
  screen(manga.title,
    h("p", {}, h("a", { href: `#/s/${seg(src)}` }, `← ${config.name}`)),
    h("article", { class: "series" },
      h("div", {}, manga.covers.length ? h("img", { class: "art", src: manga.covers[0], alt: `Cover of ${manga.title}` }) : null),
      h("div", {},
        h("h1", {}, manga.title),
        manga.alternativeTitles.length ? h("p", { class: "muted" }, manga.alternativeTitles.join(" · ")) : null,
        h("dl", { class: "facts" }, facts.map(([term, value]) => [h("dt", {}, term), h("dd", {}, value)])),
        manga.tags.length ? h("ul", { class: "tags", "aria-label": "Tags" }, manga.tags.map((slug) => h("li", { class: "tag button" }, tagNames.get(slug) || slug))) : null,
        synopsis ? h("p", { class: "synopsis" }, synopsis) : null,
        actions)),
    h("h2", {}, `Chapters (${groupByNumber(chapters).length})`),
    chapters.length ? chapterList(src, mangaSlug, chapters, positions) : h("p", { class: "muted" }, "No chapters yet."));
}
