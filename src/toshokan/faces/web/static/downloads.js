// The download queue: the chapters of the series the reader keeps (an operator: all of them),
// each with its progress, the queue's overall progress, failures with their reasons, and the
// buttons that steer it. Drawn from the host's /_/downloads API, asked again every two seconds
// while the page is open.

import { hostApi } from "./api.js";
import { errorBox, h, route, screen, stale } from "./dom.js";

const REFRESH_MS = 2000;
const STATE_NAMES = { queued: "Queued", running: "Downloading", held: "Held", done: "Kept",
  failed: "Failed", cancelled: "Cancelled" };

function label(download) {
  const group = download.scanlator ? ` [${download.scanlator}]` : "";
  return `${download.seriesTitle} · Chapter ${download.number}${group} (${download.language})`;
}

function actionsOf(download, act) {
  const button = (action, text) => h("button", { type: "button", dataset: { action },
    "aria-label": `${text}: ${label(download)}`, onclick: () => act(download.id, action) }, text);
  switch (download.state) {
    case "queued": return [button("top", "To the top"), button("up", "Up"), button("down", "Down"),
      button("hold", "Hold"), button("cancel", "Cancel")];
    case "held": return [button("top", "To the top"), button("release", "Resume"), button("cancel", "Cancel")];
    case "running": return [button("cancel", "Cancel")];
    case "failed": return [button("retry", "Retry"), button("cancel", "Cancel")];
    case "cancelled": return [button("retry", "Queue again")];
    default: return [];
  }
}

function row(download, act) {
  const pages = download.pages || 0;
  const bar = h("progress", { max: pages || 1, value: download.state === "done" ? pages || 1 : download.pagesDone,
    "aria-label": `Pages kept of ${label(download)}` });
  const progress = pages ? `${download.pagesDone} of ${pages} pages` : download.state === "queued" ? "waiting" : "";
  let why = null;
  if (download.reason && (download.state === "failed" || download.state === "queued")) {
    const retrying = download.state === "queued" && download.nextTry
      ? ` · trying again at ${new Date(download.nextTry).toLocaleTimeString()}` : "";
    why = h("p", { class: "reason" }, h("strong", {}, download.reason), `: ${download.error || ""}${retrying}`);
  }
  return h("li", { class: `download ${download.state}`, dataset: { id: download.id, state: download.state } },
    h("div", { class: "what" }, h("span", { class: "title" }, label(download)),
      h("span", { class: "badge state" }, STATE_NAMES[download.state] || download.state)),
    h("div", { class: "how" }, bar, h("span", { class: "muted" }, progress)),
    why, download.path ? h("p", { class: "muted path" }, download.path) : null,
    h("div", { class: "row actions" }, actionsOf(download, act)));
}

function queueLine(answer, pauseOrResume) {
  const queue = answer.queue;
  const own = answer.own;
  // An operator pauses the host's queue; a reader their own downloads (series another reader
  // keeps too still run for them).
  const button = answer.operator
    ? h("button", { type: "button", class: "primary", onclick: () => pauseOrResume(!queue.paused, false) },
      queue.paused ? "Resume the queue" : "Pause the queue")
    : own ? h("button", { type: "button", class: "primary", onclick: () => pauseOrResume(!own.paused, true) },
      own.paused ? "Resume my downloads" : "Pause my downloads") : null;
  const lines = [];
  if (!queue.paused) lines.push(h("p", { class: "status" }, "The queue runs."));
  else {
    const why = queue.paused === "operator" ? "Paused by the operator." : `Paused: ${queue.message}`;
    lines.push(h("p", { class: queue.paused === "operator" ? "status" : "error", role: "status" }, why));
  }
  if (own && own.paused) {
    lines.push(h("p", { class: "status own-paused", role: "status" },
      "Your downloads are paused: chapters only you keep wait until you resume them."));
  }
  const resumeOwn = answer.operator && own && own.paused
    ? h("button", { type: "button", onclick: () => pauseOrResume(false, true) }, "Resume my downloads") : null;
  return h("div", { class: "row queue-state" }, ...lines, button, resumeOwn);
}

function everySeries(answer) {
  const keeps = answer.everySeries || [];
  if (!keeps.length) return null;
  const items = keeps.map((keep) => {
    const filters = [
      keep.languages.length ? `languages ${keep.languages.join(", ")}` : "any language",
      keep.groups.length ? `groups ${keep.groups.join(", ")}` : "any group",
    ];
    if (keep.onlyUnread) filters.push("only unread");
    const whose = answer.operator && keep.reader ? ` (${keep.reader})` : "";
    return h("li", { class: "every", dataset: { source: keep.source } },
      h("strong", {}, keep.source), `: every series followed${whose}`,
      h("span", { class: "muted filters" }, ` · ${filters.join(" · ")}`));
  });
  return [h("h2", {}, "Every series kept from a source"), h("ul", { class: "every-series" }, items)];
}

export async function downloadsPage(token) {
  const message = h("div", { "aria-live": "polite" });
  const body = h("div", {});
  let timer = null;

  async function act(id, action) {
    try { await hostApi(`/downloads/${encodeURIComponent(id)}`, { method: "POST", body: { action } }); }
    catch (error) { message.replaceChildren(errorBox(error)); return; }
    message.replaceChildren();
    await draw();
  }
  async function pauseOrResume(paused, own) {
    try { await hostApi("/downloads/queue", { method: "PUT", body: { paused, own } }); }
    catch (error) { message.replaceChildren(errorBox(error)); return; }
    await draw();
  }
  async function retryAll() {
    try { await hostApi("/downloads/retry", { method: "POST" }); }
    catch (error) { message.replaceChildren(errorBox(error)); return; }
    await draw();
  }

  async function draw() {
    let answer;
    try { answer = await hostApi("/downloads?limit=200"); } catch (error) {
      if (!stale(token)) body.replaceChildren(errorBox(error, draw));
      return;
    }
    if (stale(token)) return;
    const { kept, waiting, share } = answer.progress;
    const failures = Object.entries(answer.failures);
    const waitingRows = answer.downloads.filter((d) => ["queued", "running", "held"].includes(d.state));
    const failedRows = answer.downloads.filter((d) => d.state === "failed");
    const doneRows = answer.downloads.filter((d) => d.state === "done" || d.state === "cancelled");
    body.replaceChildren(...[
      queueLine(answer, pauseOrResume),
      h("div", { class: "overall" },
        h("progress", { max: 1, value: share, "aria-label": "Overall progress of the queue" }),
        h("span", { class: "muted" }, waiting ? `${kept} kept, ${waiting} waiting` : "Nothing waiting.")),
      everySeries(answer),
      h("h2", {}, "Queue"),
      waitingRows.length ? h("ol", { class: "downloads waiting" }, waitingRows.map((d) => row(d, act)))
        : h("p", { class: "muted" }, "No chapter waits to be kept."),
      failedRows.length ? [h("h2", {}, "Failed"),
        h("p", { class: "row" }, h("span", { class: "muted" }, failures.map(([reason, count]) => `${reason}: ${count}`).join(" · ")),
          h("button", { type: "button", onclick: retryAll }, "Retry every failed")),
        h("ol", { class: "downloads failed" }, failedRows.map((d) => row(d, act)))] : null,
      doneRows.length ? [h("h2", {}, "Kept and cancelled"),
        h("ol", { class: "downloads finished" }, doneRows.map((d) => row(d, act)))] : null,
    ].flat().filter(Boolean));
  }

  screen("Downloads", h("h1", {}, "Downloads"),
    h("p", { class: "muted" }, "Chapters of the series you keep, copied into the library as they come out."),
    message, body);
  await draw();
  timer = setInterval(draw, REFRESH_MS);
  route.teardown.push(() => clearInterval(timer));
}
