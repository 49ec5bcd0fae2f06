// Updates ("#/updates"): the new chapters of the series the reader follows, newest found first,
// unread ones marked, each opening the reader at that chapter. Unread is the host's progress
// store's answer, so a chapter read anywhere (KOReader, a Komga app, OPDS, here) is read here.
// "Check now" asks the host to check every followed series at once; "Mark all read" records
// every new chapter read in the progress store, for every face.

import { follows } from "./api.js";
import { chapterLabel, errorBox, h, known, screen, seg, stale } from "./dom.js";

const PAGE = 50;
// How long "Check now" waits for its checks before it says they go on without it.
const CHECK_WAIT_MS = 90_000;

const readerHref = (u) => `#/r/${seg(u.source)}/${seg(u.manga)}/${seg(u.chapter)}`;
const seriesHref = (u) => `#/m/${seg(u.source)}/${seg(u.manga)}`;
const day = (stamp) => (stamp ? new Date(stamp).toLocaleDateString() : "");

function updateItem(update) {
  const what = update.kind === "version"
    ? `${chapterLabel(update)} (another version: ${[update.language, known(update.scanlator)].filter(Boolean).join(", ")})`
    : chapterLabel(update);
  const facts = [`found ${day(update.found)}`, update.kind === "chapter" ? update.language : null,
    update.kind === "chapter" ? known(update.scanlator) : null,
    update.removed ? "since removed by its source" : null].filter(Boolean).join(" · ");
  return h("li", { class: update.unread ? "update unread" : "update", dataset: { chapter: update.chapter } },
    h("a", { class: "chapter", href: readerHref(update) },
      update.unread ? h("span", { class: "badge unread-mark" }, "Unread") : null,
      h("strong", { class: "series-title" }, update.seriesTitle), " ", h("span", {}, what)),
    h("span", { class: "meta" }, facts, " · ", h("a", { href: seriesHref(update) }, "series")));
}

export async function updatesPage(token) {
  const [first, followed] = await Promise.all([follows(`/updates?limit=${PAGE}`), follows("")]);
  if (stale(token)) return;
  const unread = followed.follows.reduce((sum, f) => sum + f.unread, 0);
  const summary = h("p", { class: "muted summary" });
  const status = h("p", { class: "status", role: "status" });
  const list = h("ol", { class: "updates", "aria-label": "New chapters, newest first" });
  const more = h("button", { type: "button", hidden: true }, "More");
  const markAll = h("button", { type: "button" }, "Mark all read");
  const checkNow = h("button", { type: "button", class: "primary" }, "Check now");
  let shown = 0;

  const describe = (count, unreadCount) => {
    summary.textContent = followed.follows.length
      ? `${unreadCount} unread · ${followed.follows.length} series followed`
      : "";
    markAll.disabled = unreadCount === 0;
    if (!count) {
      list.replaceChildren(h("li", { class: "muted" }, followed.follows.length
        ? "No new chapters yet: they show here as the host finds them."
        : "You follow no series yet: open a series and press Follow."));
    }
  };
  const append = (answer) => {
    list.append(...answer.updates.map(updateItem));
    shown += answer.updates.length;
    more.hidden = !answer.more;
  };
  // Draw the list again from the host (after a check, or marking read), as far as it was shown.
  const refill = async () => {
    const [answer, now] = await Promise.all([follows(`/updates?limit=${Math.min(Math.max(shown, PAGE), 100)}`), follows("")]);
    if (stale(token)) return;
    followed.follows = now.follows;
    list.replaceChildren();
    shown = 0;
    append(answer);
    describe(shown, now.follows.reduce((sum, f) => sum + f.unread, 0));
  };

  more.addEventListener("click", async () => {
    more.disabled = true;
    try { append(await follows(`/updates?limit=${PAGE}&offset=${shown}`)); } catch (error) {
      status.replaceChildren(errorBox(error, null));
    }
    more.disabled = false;
  });
  markAll.addEventListener("click", async () => {
    markAll.disabled = true;
    try {
      const answer = await follows("/read", { method: "POST", body: { all: true } });
      status.textContent = `${answer.marked} chapter${answer.marked === 1 ? "" : "s"} marked read.`;
      await refill();
    } catch (error) {
      status.replaceChildren(errorBox(error, null));
      markAll.disabled = false;
    }
  });
  checkNow.addEventListener("click", async () => {
    checkNow.disabled = true;
    status.textContent = "Checking every series you follow…";
    try {
      const { batch } = await follows("/checks", { method: "POST", body: {} });
      const done = await checked(batch, token);
      if (stale(token)) return;
      status.textContent = done === null ? "The checks go on: new chapters will show here as they are found."
        : done.checked === 0 ? "Everything you follow was checked a moment ago."
        : `Checked ${done.checked} series: ${done.found} new chapter${done.found === 1 ? "" : "s"}`
          + (done.failed ? `, ${done.failed} could not be checked.` : ".");
      await refill();
    } catch (error) {
      if (!stale(token)) status.replaceChildren(errorBox(error, null));
    }
    checkNow.disabled = false;
  });

  append(first);
  describe(shown, unread);
  screen("Updates", h("h1", {}, "Updates"), summary,
    h("p", { class: "actions" }, checkNow, " ", markAll), status, list, h("div", { class: "more" }, more));
}

/** The check's status once it is finished; null if it goes on past the wait (or the view left). */
async function checked(batch, token) {
  const until = Date.now() + CHECK_WAIT_MS;
  while (Date.now() < until && !stale(token)) {
    const status = await follows(`/checks/${seg(batch)}`);
    if (status.finished !== null) return status;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return null;
}
