// What a list of chapters says about where a reader goes: versions of one number, the version to
// offer, the chapters either side of one, and where to continue from a place.

import { store } from "./api.js";

export const prefKey = (src, manga) => `pref:${src}/${manga}`;

/** Chapters grouped by number, in the order the host lists them (newest first). */
export function groupByNumber(chapters) {
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

/** The chapters numbered just before and after `current`, in its language and group where they exist. */
export function neighbours(chapters, current) {
  const numbers = [...new Set(chapters.map((c) => c.number))].sort((a, b) => a - b);
  const at = numbers.indexOf(current.number);
  const prefer = { language: current.language, scanlator: current.scanlator };
  const versionsOf = (number) => chapters.filter((c) => c.number === number);
  return {
    previous: at > 0 ? pick(versionsOf(numbers[at - 1]), prefer) : null,
    next: at >= 0 && at < numbers.length - 1 ? pick(versionsOf(numbers[at + 1]), prefer) : null,
  };
}

/**
 * Where a reader goes on from `position` (the host's place in the chapter `slug`): the chapter
 * itself while it is unfinished, the next one once it is finished. `{ chapter, next }`, with
 * `chapter` null when the list no longer has that chapter, or when it is finished and nothing
 * follows it (then `done` is the finished chapter).
 */
export function continuation(chapters, slug, position) {
  const chapter = chapters.find((c) => c.slug === slug);
  if (!chapter) return { chapter: null, next: false, done: null };
  if (!position || !position.finished) return { chapter, next: false, done: null };
  const { next } = neighbours(chapters, chapter);
  return next ? { chapter: next, next: true, done: null } : { chapter: null, next: false, done: chapter };
}

/** The reader's preferred version (language, group) of a series' chapters. */
export const preferenceOf = (src, manga) => store.get(prefKey(src, manga), {});
