// Signing in to a source that requires it, through its authenticate endpoint.

import { ApiError, api, configuration, signedIn, store } from "./api.js";
import { errorBox, h, redraw, screen, seg, stale } from "./dom.js";

const AUTH_FIELDS = {
  none: [], basic: ["username", "password"], session: ["username", "password"],
  api_key: ["apiKey"], bearer: ["token"], cookie: ["cookie"],
};
const FIELD_LABELS = { username: "User name", password: "Password", apiKey: "API key", token: "Token", cookie: "Cookie" };

export async function signInPage(token, src) {
  const config = await configuration(src);
  if (stale(token)) return;
  const auth = config.auth || { type: "none" };
  const fields = auth.fields && auth.fields.length ? auth.fields : AUTH_FIELDS[auth.type] || [];
  const message = h("div", { "aria-live": "assertive" });
  const secret = (name) => name !== "username";
  const form = h("form", { class: "signin" },
    fields.map((name) => h("label", { class: "field" }, h("span", {}, FIELD_LABELS[name] || name),
      h("input", { name, type: secret(name) ? "password" : "text", required: true, maxlength: 4096,
        autocomplete: name === "username" ? "username" : name === "password" ? "current-password" : "off" }))),
    h("div", { class: "row" }, h("button", { type: "submit", class: "primary" }, "Sign in"),
      signedIn(src) ? h("button", { type: "button", onclick: () => { store.remove("auth:" + src); redraw(); } }, "Sign out") : null));
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

