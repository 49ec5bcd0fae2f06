// The reader's DOM: building nodes, drawing a view, and what every view shows the same way.
// Imports nothing, so every other module may import it.

export const seg = (value) => encodeURIComponent(value);

export function h(tag, attrs, ...children) {
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

export const view = document.getElementById("view");
/** The view being drawn: a newer route makes the answers an older one waits for irrelevant,
 * and what it set up (observers, listeners) is undone before the next is drawn. */
export const route = { generation: 0, teardown: [] };
export const stale = (token) => token !== route.generation;
/** Draw the current view again (after a change it shows, such as signing out of a source). */
export const REDRAW = "toshokan:redraw";
export const redraw = () => window.dispatchEvent(new Event(REDRAW));

export function screen(title, ...children) {
  document.title = title ? `${title} · toshokan` : "toshokan";
  view.replaceChildren(...children.flat(Infinity).filter((child) => child !== null && child !== undefined && child !== false));
}

export function errorBox(error, retry, title) {
  const status = typeof error.status === "number" ? error.status : 0;
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

export function coverLink(src, entry) {
  return h("a", { class: "cover", href: `#/m/${seg(src)}/${seg(entry.slug)}` },
    entry.cover ? h("img", { class: "art", src: entry.cover, alt: "", loading: "lazy", decoding: "async" })
      : h("span", { class: "art", "aria-hidden": "true" }),
    h("span", { class: "title" }, entry.title));
}

/** What the spec says in place of what a source does not know ("No Description.", "Unknown
 * Scanlator", "No Title") tells a reader nothing: such text is shown as nothing. */
const STAND_INS = new Set(["No Description.", "Unknown Scanlator", "No Title"]);
export const known = (text) => (text && !STAND_INS.has(text) ? text : "");

/** The view's address: the path after "#/" and its query ("#/s/local?q=moon"). */
export function address() {
  const [path, query = ""] = location.hash.replace(/^#\/?/, "").split("?", 2);
  return { path, params: new URLSearchParams(query) };
}

export const chapterLabel = (chapter) => {
  const number = `Chapter ${chapter.number}`;
  const title = known(chapter.title);
  return title && title !== number ? `${number}: ${title}` : number;
};
