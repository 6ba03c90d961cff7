// First meaningful paint of the Sessions page against the real `paddock up` (local wall, the
// fake model server), in headless Chromium, with a few real sessions in its store.
//
// The figure: from the navigation's start (the page's time origin) to the first frame produced
// after the session rows are in the DOM (a MutationObserver sees the first `tbody tr`, then
// requestAnimationFrame and a task: the frame with the rows has been made). Beside it the
// browser's own paint timing: first contentful paint and the largest contentful paint.
// Cold: a fresh browser profile per run (nothing cached, a new connection). Warm: one profile,
// a new tab per run after a first visit (the scripts, styles and font from the HTTP cache).
import { launchBrowser } from "../e2e/harness.mjs";
import { startPaddock } from "../e2e/paddock.mjs";
import { api, median, ms, newSession, SMOKE, summary, until } from "./lib.mjs";

const TARGET_MS = 1000;
/** The smoke's bound: a loaded CI machine and a debug build of `paddock`. */
const SMOKE_BOUND_MS = 4000;
const SESSIONS = 6;
const TITLES = [
  "Fix the flaky login test",
  "Upgrade the build to Node 22",
  "Write the release notes for 0.4",
  "Find where the config is read twice",
  "Add a --dry-run flag to the importer",
  "Explain the retry logic in the client",
];

/** Runs in the page before its scripts: notes when the first session row is in the DOM and painted. */
const PAINT_PROBE = `(() => {
  const probe = { rows: null, rowsPainted: null, rowCount: 0, lcp: [] };
  window.__paint = probe;
  const observer = new MutationObserver(() => {
    if (probe.rows !== null) return;
    const rows = document.querySelectorAll("main table tbody tr");
    if (rows.length === 0) return;
    probe.rows = performance.now();
    probe.rowCount = rows.length;
    observer.disconnect();
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => { probe.rowsPainted = performance.now(); };
      channel.port2.postMessage(null);
    });
  });
  observer.observe(document, { childList: true, subtree: true });
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const element = entry.element;
      probe.lcp.push({
        time: entry.startTime,
        what: element ? element.tagName.toLowerCase() + (element.className ? "." + String(element.className).split(" ")[0] : "") : entry.url,
      });
    }
  }).observe({ type: "largest-contentful-paint", buffered: true });
})();`;

/** Sessions with a title (their first message) and a reply, two of them closed. */
async function seedSessions(paddock) {
  const client = api(paddock);
  const ids = [];
  for (const [index, title] of TITLES.slice(0, SESSIONS).entries()) {
    await paddock.model.script({ events: [{ text: `On it: ${title.toLowerCase()}.` }, { stop: "end_turn" }] });
    const session = await client.post("/v1/sessions", newSession(paddock.rw));
    await client.post(`/v1/sessions/${session.id}/turns`, { text: title });
    await until(
      async () => (await client.get(`/v1/sessions/${session.id}`)).message_count >= 2,
      `the reply in session ${index + 1}`,
    );
    ids.push(session.id);
  }
  for (const id of ids.slice(0, 2)) {
    await client.post(`/v1/sessions/${id}/close`);
  }
  return ids.length;
}

/** One visit in a new tab of `context`: the page's own timings. */
async function visit(context, paddock, expectedRows) {
  const page = await context.newPage();
  try {
    await page.addInitScript(PAINT_PROBE);
    await page.goto(`${paddock.url}/#token=${paddock.token}`);
    await page.waitForFunction(() => window.__paint?.rowsPainted !== null, null, { timeout: 60_000 });
    // Let a later, larger paint be reported before reading the LCP entries.
    await page.waitForTimeout(300);
    const result = await page.evaluate(() => {
      const nav = performance.getEntriesByType("navigation")[0];
      const paint = Object.fromEntries(performance.getEntriesByType("paint").map((e) => [e.name, e.startTime]));
      const list = performance
        .getEntriesByType("resource")
        .find((e) => new URL(e.name).pathname === "/v1/sessions");
      const probe = window.__paint;
      const lcp = probe.lcp.at(-1) ?? null;
      return {
        rowsPainted: probe.rowsPainted,
        rowsInDom: probe.rows,
        rowCount: probe.rowCount,
        fcp: paint["first-contentful-paint"] ?? null,
        lcp: lcp?.time ?? null,
        lcpElement: lcp?.what ?? null,
        documentEnd: nav.responseEnd,
        domContentLoaded: nav.domContentLoadedEventEnd,
        listRequested: list?.startTime ?? null,
        listReceived: list?.responseEnd ?? null,
        titles: [...document.querySelectorAll("main table tbody tr td.cell-title a")].map((a) => a.textContent),
      };
    });
    if (result.rowCount !== expectedRows || result.titles.some((title) => !title)) {
      throw new Error(`the Sessions page showed ${result.rowCount} rows (${result.titles.join(", ")}), expected ${expectedRows}`);
    }
    return result;
  } finally {
    await page.close();
  }
}

function describeRuns(report, label, runs) {
  const painted = summary(runs.map((r) => r.rowsPainted));
  report.figure(
    `${label}: rows painted (first meaningful paint), median`,
    painted.p50,
    TARGET_MS,
    SMOKE_BOUND_MS,
    `p95 ${ms(painted.p95)}, max ${ms(painted.max)}, n=${painted.n}`,
  );
  const fields = [
    ["first contentful paint", "fcp"],
    ["largest contentful paint", "lcp"],
    ["document received", "documentEnd"],
    ["DOMContentLoaded", "domContentLoaded"],
    ["GET /v1/sessions sent", "listRequested"],
    ["GET /v1/sessions received", "listReceived"],
    ["rows in the DOM", "rowsInDom"],
  ];
  for (const [name, key] of fields) {
    report.info(`${label}: ${name}, median`, ms(median(runs.map((r) => r[key]).filter((v) => v !== null))));
  }
  const elements = [...new Set(runs.map((r) => r.lcpElement))].join(", ");
  report.info(`${label}: the largest contentful paint was`, elements);
}

export async function sessionsPaint(report) {
  const runs = SMOKE ? 3 : 10;
  const paddock = await startPaddock();
  try {
    const sessions = await seedSessions(paddock);
    report.info("sessions in the store", `${sessions} (${sessions - 2} running, 2 closed)`);

    const cold = [];
    for (let i = 0; i < runs; i++) {
      const browser = await launchBrowser();
      try {
        cold.push(await visit(browser.context, paddock, sessions));
      } finally {
        await browser.close();
      }
    }
    describeRuns(report, "cold", cold);

    const browser = await launchBrowser();
    try {
      await visit(browser.context, paddock, sessions);
      const warm = [];
      for (let i = 0; i < runs; i++) {
        warm.push(await visit(browser.context, paddock, sessions));
      }
      describeRuns(report, "warm", warm);
    } finally {
      await browser.close();
    }
  } finally {
    await paddock.stop();
  }
}
