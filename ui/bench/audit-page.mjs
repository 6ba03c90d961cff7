// The audit trail page over a large trail: `paddock up` on a fresh HOME whose audit store was
// first filled with 1,000,000 rows by the store's own `append_batch` (the `seed_trail` example
// of `audit-store`: redacted, hash-chained, verifying), in headless Chromium.
//
// Each figure: from the click (or the filter's change) to the first frame produced after the
// new page's 200 rows are in the DOM, measured in the page (performance.now around the action;
// a MutationObserver for the rows; requestAnimationFrame, then a task). Beside it the request's
// share from the Resource Timing entry of its `GET /v1/audit`. Scenarios: the newest page,
// then older pages (the keyset cursor); a jump to the middle of the trail (the "Until" filter),
// then older pages from there; a filtered trail (tool and wall), then older pages.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { launchBrowser } from "../e2e/harness.mjs";
import { startPaddock } from "../e2e/paddock.mjs";
import { AFTER_PAINT, median, ms, SMOKE, summary } from "./lib.mjs";

const TARGET_MS = 100;
const SMOKE_BOUND_MS = 1000;
const PAGE_ROWS = 200;

/** Fills `<home>/.local/state/paddock/audit.db` (the trail `paddock up` reads) with `rows` rows. */
async function seedTrail(home, rows) {
  const seeder = process.env.PADDOCK_SEED_TRAIL;
  if (!seeder) {
    throw new Error(
      "the audit benchmark needs PADDOCK_SEED_TRAIL (the `seed_trail` example of audit-store; `cargo xtask ui bench` builds and names it)",
    );
  }
  const path = join(home, ".local", "state", "paddock", "audit.db");
  const child = spawn(seeder, [path, String(rows)], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk) => {
    out += chunk;
  });
  const code = await new Promise((resolve) => child.on("exit", resolve));
  if (code !== 0) {
    throw new Error(`seed_trail exited with ${code}`);
  }
  return JSON.parse(out.trim());
}

/**
 * In the page: performs `action` ("older", "rows-200", "until", "wall-local", "apply") and
 * measures until the new page's rows are painted.
 */
export const MEASURE = `async ({ action, value, expectRows }) => {
  const afterPaint = ${AFTER_PAINT};
  const main = document.querySelector("main") ?? document.body;
  const tbody = () => main.querySelector("table.audit-table tbody");
  const firstRow = () => tbody()?.querySelector("tr")?.textContent ?? "";
  const pager = main.querySelector('nav[aria-label="Pages"]');
  const button = (root, label) => [...root.querySelectorAll("button")].find((b) => b.textContent.trim().startsWith(label));
  const field = (label) => [...main.querySelectorAll("label")].find((l) => l.querySelector(".field-label")?.textContent === label)?.querySelector("input, select");
  const change = (element, text) => {
    element.value = text;
    element.dispatchEvent(new Event("input", { bubbles: true }));
    element.dispatchEvent(new Event("change", { bubbles: true }));
  };
  const shown = () => tbody()?.textContent ?? "";
  const before = shown();
  const beforeCount = Number(tbody()?.closest("table").getAttribute("aria-rowcount") ?? 0);
  performance.clearResourceTimings();
  const started = performance.now();
  switch (action) {
    case "older": button(pager, "Older").click(); break;
    case "newest": button(pager, "Newest").click(); break;
    case "rows": change(pager.querySelector("select"), value); break;
    case "until": change(field("Until"), value); break;
    case "wall": change(field("Wall"), value); break;
    case "tool": change(field("Tool"), value); button(main.querySelector('form[aria-label="Filters"]'), "Apply").click(); break;
    default: throw new Error("unknown action " + action);
  }
  // The new page is in: a table of as many rows as asked for (the table is windowed: its
  // aria-rowcount counts them all, the rows in view are in the DOM), not the page shown before.
  await new Promise((resolve, reject) => {
    const done = () => {
      const body = tbody();
      return body !== null && body.querySelector("tr.audit-row") !== null &&
        Number(body.closest("table").getAttribute("aria-rowcount")) === expectRows + 1 &&
        (shown() !== before || beforeCount !== expectRows + 1);
    };
    if (done()) { resolve(); return; }
    const timer = setTimeout(() => {
      observer.disconnect();
      reject(new Error(action + ": no new page of " + expectRows + " rows after 60 s (" + (tbody()?.children.length ?? 0) + " rows shown, first: " + firstRow().slice(0, 40) + ")"));
    }, 60000);
    const observer = new MutationObserver(() => { if (done()) { clearTimeout(timer); observer.disconnect(); resolve(); } });
    observer.observe(main, { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ["aria-rowcount"] });
  });
  const inDom = performance.now();
  const painted = await afterPaint();
  const request = performance.getEntriesByType("resource").filter((e) => new URL(e.name).pathname === "/v1/audit").at(-1);
  const seqs = [...tbody().querySelectorAll("tr.audit-row td:first-child")].map((td) => Number.parseInt(td.textContent, 10));
  // The page's range, as the pager states it ("rows 999801–1000000").
  const where = /rows ([0-9]+)–([0-9]+)/.exec(pager.textContent);
  return {
    total: painted - started,
    inDom: inDom - started,
    request: request ? request.responseEnd - request.startTime : null,
    afterResponse: request ? painted - request.responseEnd : null,
    first: seqs[0],
    last: where ? Number(where[1]) : null,
    rendered: seqs.length,
  };
}`;

/**
 * In the page: scrolls the shell's pane through the page in steps of `step` pixels, then jumps
 * to the end and back to the top; each step timed until the frame after it was produced, and
 * checked: the row at the middle of the view is a rendered row, not a spacer.
 */
export const SCROLL = `async ({ step }) => {
  const afterPaint = ${AFTER_PAINT};
  const pane = document.querySelector(".main");
  const rect = pane.getBoundingClientRect();
  const positions = [];
  for (let top = step; top < pane.scrollHeight - pane.clientHeight; top += step) positions.push(top);
  positions.push(pane.scrollHeight, 0);
  const steps = [];
  let blank = 0;
  for (const top of positions) {
    const started = performance.now();
    pane.scrollTop = top;
    await afterPaint();
    await afterPaint();
    steps.push(performance.now() - started);
    const table = document.querySelector("table.audit-table tbody").getBoundingClientRect();
    const y = Math.min(Math.max(rect.top + rect.height / 2, table.top + 1), table.bottom - 1);
    const hit = document.elementFromPoint(rect.left + rect.width / 2, y);
    if (table.bottom > rect.top && table.top < rect.bottom && !hit?.closest("tr.audit-row")) blank++;
  }
  return { steps, blank };
}`;

/** `datetime-local` text for `ms` in the page's time zone (the same as node's here). */
function localMinute(ms) {
  const date = new Date(ms);
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function describe(report, label, samples) {
  const total = summary(samples.map((s) => s.total));
  report.figure(
    `${label}, median`,
    total.p50,
    TARGET_MS,
    SMOKE_BOUND_MS,
    `p95 ${ms(total.p95)}, max ${ms(total.max)}, n=${total.n}; request ${ms(median(samples.map((s) => s.request)))}, response to paint ${ms(median(samples.map((s) => s.afterResponse)))}`,
  );
}

export async function auditPage(report) {
  const rows = Number(process.env.PADDOCK_UI_BENCH_AUDIT_ROWS ?? (SMOKE ? 10_000 : 1_000_000));
  const older = SMOKE ? 5 : 30;
  let seeded;
  const paddock = await startPaddock({
    prepareHome: async (home) => {
      seeded = await seedTrail(home, rows);
    },
  });
  const browser = await launchBrowser();
  try {
    report.info("trail", `${seeded.rows} rows seeded by append_batch in ${seeded.seconds.toFixed(1)} s (head row ${seeded.head.seq})`);
    const page = await browser.context.newPage();
    page.setDefaultTimeout(120_000);
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${paddock.url}/#token=${paddock.token}`);
    await page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit trail", exact: true }).click();
    await page.locator("table.audit-table tbody tr").first().waitFor();
    const measure = (action, value) => page.evaluate(`(${MEASURE})(${JSON.stringify({ action, value, expectRows: PAGE_ROWS })})`);
    const run = async (action, value, times) => {
      const samples = [];
      for (let i = 0; i < times; i++) {
        samples.push(await measure(action, value));
      }
      return samples;
    };
    const firstPages = [];
    // The newest page at 200 rows per page, then back to it from page 2, a few times.
    firstPages.push(await measure("rows", String(PAGE_ROWS)));
    for (let i = 0; i < (SMOKE ? 2 : 9); i++) {
      await measure("older");
      firstPages.push(await measure("newest"));
    }
    describe(report, `newest page of ${PAGE_ROWS} rows`, firstPages);
    const newest = firstPages.at(-1);
    report.check(
      "the newest page",
      newest.first === seeded.head.seq && newest.last === seeded.head.seq - PAGE_ROWS + 1,
      `rows ${newest.first}–${newest.last}, ${newest.rendered} of them in the DOM (the window)`,
    );

    const scrolled = await page.evaluate(`(${SCROLL})(${JSON.stringify({ step: 400 })})`);
    const steps = summary(scrolled.steps);
    report.figure(
      `scrolling the ${PAGE_ROWS}-row page (400 px steps, end, top), median`,
      steps.p50,
      TARGET_MS,
      SMOKE_BOUND_MS,
      `p95 ${ms(steps.p95)}, max ${ms(steps.max)}, n=${steps.n} (two frames each)`,
    );
    report.check("every step showed rows", scrolled.blank === 0, `${scrolled.blank} of ${steps.n} steps showed a spacer mid-view`);

    const paged = await run("older", undefined, older);
    describe(report, `older pages (keyset cursor) from the newest`, paged);
    report.check(
      "paging walked back",
      paged.at(-1).first === seeded.head.seq - PAGE_ROWS * older,
      `page ${older + 1} starts at row ${paged.at(-1).first}`,
    );

    // The middle of the trail: every row is one second after the one before.
    const middleMs = seeded.first_time_ms + Math.floor(rows / 2) * 1000;
    const jump = await run("until", localMinute(middleMs), 1);
    report.info(
      `the jump to the middle itself`,
      `${ms(jump[0].total)} (request ${ms(jump[0].request)}, response to paint ${ms(jump[0].afterResponse)})`,
    );
    const deep = [...jump, ...(await run("older", undefined, older))];
    describe(report, `deep: "Until" the middle, then older pages`, deep);
    report.check(
      "the jump reached the middle",
      Math.abs(jump[0].first - rows / 2) <= 61,
      `the page after "Until" starts at row ${jump[0].first} of ${seeded.head.seq}; the last one measured at ${deep.at(-1).first}`,
    );

    // Filtered: the local wall's run_bash calls (about 1 row in 24), then older pages.
    await measure("until", "");
    // 1 row in 24 matches: as many older pages as the trail holds, up to the same count.
    const filteredOlder = Math.min(older, Math.floor(rows / 24 / PAGE_ROWS) - 1);
    const filtered = [await measure("wall", "local"), await measure("tool", "run_bash"), ...(await run("older", undefined, filteredOlder))];
    describe(report, `filtered (wall + tool), then older pages`, filtered);

    const verify = page.getByRole("button", { name: "Verify the chain" });
    const started = Date.now();
    await verify.click();
    const intact = page.getByText(/Intact: \d+ rows/);
    await intact.waitFor({ timeout: 600_000 });
    const text = await intact.innerText();
    report.info("verify the chain from the page (the whole trail)", `${((Date.now() - started) / 1000).toFixed(1)} s: ${text.split(";")[0]}`);
    report.check("the chain verifies", /Intact: \d+ rows/.test(text) && Number(/(\d+) rows/.exec(text)[1]) >= seeded.rows, text.split(";")[0]);
    report.check("no page errors", errors.length === 0, errors.join("; ") || "none");
  } finally {
    await browser.close();
    await paddock.stop();
  }
}
