// What the reader asks of the host: the spec's JSON interface (the same endpoints reader apps
// call) and the face's own endpoints under /_/web (who reads here, and where they are in each
// chapter), with what belongs to this browser alone (sources' sign-ins, preferences, names of
// what was read) in localStorage.

import { seg } from "./dom.js";

export const API = location.pathname.replace(/\/_\/?$/, ""); // "/_/" -> "": paths below start with "/"
const WEB = API + "/_/web";


// -- storage ----------------------------------------------------------------------------

export const store = {
  get(key, fallback) {
    try {
      const raw = localStorage.getItem("toshokan:" + key);
      return raw === null ? fallback : JSON.parse(raw);
    } catch { return fallback; }
  },
  set(key, value) { try { localStorage.setItem("toshokan:" + key, JSON.stringify(value)); } catch { /* full or off */ } },
  remove(key) { try { localStorage.removeItem("toshokan:" + key); } catch { /* off */ } },
};

// -- the JSON interface -----------------------------------------------------------------

export class ApiError extends Error {
  constructor(status, code, message, source) {
    super(message);
    this.status = status;
    this.code = code;
    this.source = source;
  }
}

export async function api(path, { source, body } = {}) {
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

const configs = new Map();
export function configuration(slug) {
  if (!configs.has(slug)) {
    const pending = api("/" + seg(slug));
    pending.catch(() => configs.delete(slug));
    configs.set(slug, pending);
  }
  return configs.get(slug);
}
export const mangaOf = (src, manga) => api(`/${seg(src)}/${seg(manga)}`, { source: src });
export const chaptersOf = (src, manga) => api(`/${seg(src)}/${seg(manga)}/chapters`, { source: src });
export const pagesOf = (src, manga, chapter) => api(`/${seg(src)}/${seg(manga)}/chapters/${seg(chapter)}`, { source: src });
export const search = (src, request) => api(`/${seg(src)}/search`, { source: src, body: request });
// A source that accepts the host's readers opens with the reader's session (its cookie).
export const sessionOpens = (src) => Boolean(session && session.reader && (session.opens || []).includes(src));
export const signedIn = (src) => sessionOpens(src) || Object.keys(store.get("auth:" + src, {})).length > 0;

// -- the reader's session and place, kept by the host ------------------------------------

// { readers: whether the host has readers, reader: who is signed in here ("" for the one
// reader of a host without readers, null for no one), opens: the sources a signed-in reader
// opens with the session }, asked once per page load.
export let session = null;
export function setSession(value) { session = value; }

export async function web(path, { method = "GET", body, keepalive = false } = {}) {
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

// The reader's follows and their updates, through the host's follows API (/_/follows), which
// tells the reader by the same session cookie.
export async function follows(path, { method = "GET", body } = {}) {
  return hostApi("/follows" + path, { method, body });
}

/** The host's own JSON APIs under /_/ (the follows' and the download queue's), with the
 * reader's session. */
export async function hostApi(path, { method = "GET", body } = {}) {
  const init = { method, headers: { Accept: "application/json" }, cache: "no-store" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  return send(API + "/_" + path, init, null, () => {
    if (session && session.readers) session = { ...session, reader: null };
  });
}

export const mustSignIn = () => session && session.readers && session.reader === null;
export const progressOf = (src, manga) => web(`/progress/${seg(src)}/${seg(manga)}`).then((answer) => answer.chapters);
export const recentlyRead = () => web("/progress/recent?limit=50").then((answer) => answer.chapters);

// Each position is sent the moment it is reached, stamped with the browser's clock: the host
// keeps the newest by that clock, so the order of arrival does not matter, and nothing waits
// behind a slow write when the page is left (keepalive sends what was started).
export function keepPlace(src, manga, chapter, position) {
  const body = { ...position, updated: Date.now() / 1000 };
  const path = `/progress/${seg(src)}/${seg(manga)}/${seg(chapter)}`;
  return web(path, { method: "PUT", body, keepalive: true }).catch(() => { /* kept next turn */ });
}

// The titles of what was read, so "continue reading" names a series without asking the source
// again, and names it still when the source no longer has it.
const titleKey = (src, manga) => `title:${src}/${manga}`;
export const remember = (src, manga, details) => store.set(titleKey(src, manga), details.title);
/** The title this browser knew the series by (kept by earlier versions with each chapter's
 * name), or null if it never read it here. */
export const knownTitle = (src, manga, chapter) => store.get(titleKey(src, manga), null)
  || (store.get(`names:${src}/${manga}/${chapter}`, null) || {}).title || null;
export async function titleOf(src, manga, chapter) {
  const known = knownTitle(src, manga, chapter);
  if (known) return known;
  const details = await mangaOf(src, manga);
  remember(src, manga, details);
  return details.title;
}
