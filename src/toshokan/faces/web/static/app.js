// toshokan's web reader: plain ES modules, no framework, no build step (the host serves each
// under a content-hashed name and the page's import map names them). Every view is drawn from
// the spec's JSON interface, the same endpoints reader apps call; who is reading and where they
// are in each chapter are kept by the host, so a place follows the reader from one device to
// the next.

import { ApiError, mustSignIn, session, setSession, web } from "./api.js";
import { REDRAW, address, errorBox, h, route, screen, stale, view } from "./dom.js";
import { home } from "./home.js";

function showWho() {
  const who = document.getElementById("who");
  if (!who) return;
  who.replaceChildren(session && session.reader ? h("span", {}, h("span", { class: "muted" }, session.reader), " ",
    h("button", { type: "button", class: "link", onclick: signOut }, "Sign out")) : "");
}

async function signOut() {
  try { setSession(await web("/session", { method: "DELETE" })); } catch (error) { fail(error); return; }
  showWho();
  location.hash = "#/";
  render();
}

function fail(error) {
  screen("Error", errorBox(error, render));
}

// -- the host's own sign-in ----------------------------------------------------------------

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
      setSession(await web("/session", { method: "POST", body: Object.fromEntries(new FormData(form)) }));
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

// Each view's module is fetched when the view is first opened: home needs none of the others.
const ROUTES = [
  [/^$/, async () => home],
  [/^updates$/, async () => (await import("./updates.js")).updatesPage],
  [/^search$/, async () => (await import("./everywhere.js")).everywherePage],
  [/^s\/([^/]+)$/, async () => (await import("./search.js")).sourcePage],
  [/^m\/([^/]+)\/([^/]+)$/, async () => (await import("./series.js")).seriesPage],
  [/^r\/([^/]+)\/([^/]+)\/([^/]+)$/, async () => (await import("./reader.js")).readerPage],
  [/^signin\/([^/]+)$/, async () => (await import("./signin.js")).signInPage],
  [/^downloads$/, async () => (await import("./downloads.js")).downloadsPage],
];

async function render() {
  const token = ++route.generation;
  for (const undo of route.teardown.splice(0)) undo();
  const { path } = address();
  const found = ROUTES.map(([pattern, viewOf]) => [path.match(pattern), viewOf]).find(([match]) => match);
  if (!found) {
    fail(new ApiError(404, "NOT_FOUND", "This address does not lead anywhere in the reader."));
    return;
  }
  const [match, viewOf] = found;
  view.replaceChildren(h("p", { class: "status" }, "Loading…"));
  try {
    if (session === null || mustSignIn()) {
      setSession(await web("/session"));
      showWho();
    }
    if (stale(token)) return;
    if (mustSignIn()) {
      readerSignIn();
      return;
    }
    const draw = await viewOf();
    if (stale(token)) return;
    await draw(token, ...match.slice(1).map(decodeURIComponent));
    if (!stale(token) && !path.startsWith("r/")) view.focus({ preventScroll: true });
  } catch (error) {
    if (stale(token)) return;
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
window.addEventListener(REDRAW, render);
window.addEventListener("unhandledrejection", (event) => fail(event.reason || new Error("Something went wrong.")));
render();
