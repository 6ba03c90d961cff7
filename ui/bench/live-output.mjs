// A tool call's live output streaming into the page, in headless Chromium, with every frame's
// interval (requestAnimationFrame) and every long task (the Long Tasks API) sampled meanwhile.
//
// 1. Through `paddock up`: a real session (local wall, the fake model server asking for one
//    `run_bash` in bypass mode) whose command prints 10 MB of numbered lines; the session view
//    shows its `tool_call_output` events in the call's LiveOutput. What arrives is what the
//    tool-runner streams: the first `default_output_bytes` (256 KiB) of each stream of a call
//    the model made (the runner caps streaming and capture alike). Checked: every streamed
//    byte arrived, and the last streamed line is the one shown at the end of the output.
// 2. 10 MB into the same component: the production build of LiveOutput (`bench/live-output/`,
//    built here with Vite) fed 10 MB of numbered lines as `tool_call_output` events, one event
//    per task as a WebSocket delivers a burst, in 32 KiB chunks (the runner's read size: a
//    command that fills the pipe) and in 1 KiB chunks (many small messages). Checked: every
//    byte arrived, the buffer kept the newest 100,000 lines, and the last line is shown.
//
// Targets: p95 frame time <= 50 ms (no worse than 20 frames a second for 19 frames in 20; 50 ms
// is also where the Long Tasks API starts counting a task as blocking input) and no frame over
// 100 ms (the longest a response to input may take and still feel immediate), the longest
// task likewise. An idle second of the same page is sampled first as the baseline.
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { launchBrowser } from "../e2e/harness.mjs";
import { startPaddock } from "../e2e/paddock.mjs";
import { AFTER_PAINT, api, FRAME_SAMPLER, ms, newSession, SMOKE, summary } from "./lib.mjs";

const P95_TARGET_MS = 50;
const MAX_TARGET_MS = 100;
const SMOKE_P95_BOUND_MS = 250;
const SMOKE_MAX_BOUND_MS = 1000;
/** What the runner streams of a model's `run_bash`, per stream (tool-runner `Limits`). */
const RUNNER_STREAM_CAP = 256 * 1024;
const LINE_BYTES = 100;
const FILLER = "the quick brown fox jumps over the lazy dog 0123456789 abcdefghijklmnopqrstuvwxyz ".repeat(4);

/** Line `i` as the command prints it (without its newline). */
function line(i) {
  const head = `line ${String(i).padStart(7, "0")}: `;
  return head + FILLER.slice(0, LINE_BYTES - head.length - 1);
}

function describeFrames(report, label, sampled, baseline) {
  const frames = summary(sampled.frames);
  const longest = sampled.longTasks.length > 0 ? Math.max(...sampled.longTasks) : 0;
  report.figure(`${label}: frame time p95`, frames.p95, P95_TARGET_MS, SMOKE_P95_BOUND_MS,
    `p50 ${ms(frames.p50)}, ${frames.n} frames; idle baseline p95 ${ms(summary(baseline.frames).p95)}`);
  report.figure(`${label}: longest frame`, frames.max, MAX_TARGET_MS, SMOKE_MAX_BOUND_MS,
    `idle baseline ${ms(summary(baseline.frames).max)}`);
  report.figure(`${label}: longest task`, longest, MAX_TARGET_MS, SMOKE_MAX_BOUND_MS,
    `${sampled.longTasks.length} long tasks (> 50 ms)`);
}

/** In the page: scrolls the output to its end and returns the last line shown. */
const LAST_LINE_SHOWN = `async () => {
  const view = document.querySelector(".live-output");
  view.scrollTop = view.scrollHeight;
  view.dispatchEvent(new Event("scroll"));
  await (${AFTER_PAINT})();
  await (${AFTER_PAINT})();
  const rows = view.querySelector(".live-output-rows").textContent.split("\\n");
  const box = view.getBoundingClientRect();
  return { last: rows.at(-1) === "" ? rows.at(-2) : rows.at(-1), atEnd: view.scrollTop + view.clientHeight >= view.scrollHeight - 1, height: box.height };
}`;

async function sample(page, during) {
  await page.evaluate(() => window.__frames.start());
  await during();
  await page.evaluate(`(${AFTER_PAINT})()`);
  return await page.evaluate(() => window.__frames.stop());
}

async function idleBaseline(page) {
  return await sample(page, () => page.waitForTimeout(1000));
}

/** 1. A real session's `run_bash` printing 10 MB, through `paddock up` and the local wall. */
export async function throughPaddock(report, browser) {
  const lines = SMOKE ? 20_000 : 104_858;
  const paddock = await startPaddock();
  try {
    const client = api(paddock);
    const session = await client.post("/v1/sessions", newSession(paddock.rw, "bypass"));
    const command = `seq -f 'line %07.0f: ${FILLER.slice(0, LINE_BYTES - 15)}' 1 ${lines}`;
    await paddock.model.script({
      events: [{ tool_use: { id: "big", name: "run_bash", input: { command } } }, { stop: "tool_use" }],
    });
    await paddock.model.script({ events: [{ text: "Printed every line." }, { stop: "end_turn" }] });

    const page = await browser.context.newPage();
    page.setDefaultTimeout(120_000);
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${paddock.url}/#token=${paddock.token}`);
    await page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
    await page.goto(`${paddock.url}/sessions/${encodeURIComponent(session.id)}`);
    await page.getByRole("textbox").first().waitFor();
    await page.evaluate(FRAME_SAMPLER);
    const baseline = await idleBaseline(page);
    let streamMs = 0;
    const sampled = await sample(page, async () => {
      const started = Date.now();
      await client.post(`/v1/sessions/${session.id}/turns`, { text: "Print the numbered lines" });
      await page.getByText("Printed every line.").waitFor();
      streamMs = Date.now() - started;
    });
    const printed = lines * LINE_BYTES;
    report.info("command output", `${(printed / 1024 / 1024).toFixed(1)} MB (${lines} lines of ${LINE_BYTES} bytes), the runner streams the first ${RUNNER_STREAM_CAP / 1024} KiB`);
    report.info("turn: request to the model's last reply shown", `${streamMs} ms`);
    describeFrames(report, "through paddock up", sampled, baseline);

    const streamed = Array.from({ length: lines }, (_, i) => `${line(i + 1)}\n`).join("").slice(0, RUNNER_STREAM_CAP);
    const expectedLast = streamed.split("\n").at(-1);
    const received = await page.locator(".tool-card-output .tool-card-flags").first().innerText();
    const shown = await page.evaluate(`(${LAST_LINE_SHOWN})()`);
    report.check("the streamed output arrived", received.startsWith("256.0 KB received"), `the card says "${received.trim()}"`);
    report.check("its last streamed line is shown at the end", shown.last === expectedLast && shown.atEnd, `"${shown.last}"`);
    report.check("no page errors", errors.length === 0, errors.join("; ") || "none");
    await page.close();
  } finally {
    await paddock.stop();
  }
}

/** Serves `dir` on loopback (the benchmark page's build). */
async function serve(dir) {
  const types = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".woff2": "font/woff2" };
  const server = createServer(async (request, response) => {
    const path = normalize(new URL(request.url, "http://x").pathname).replace(/^\/+/, "") || "index.html";
    try {
      const body = await readFile(join(dir, path));
      response.writeHead(200, { "content-type": types[extname(path)] ?? "application/octet-stream" });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** 2. 10 MB into the session view's LiveOutput, in the chunks a flood and a trickle give. */
export async function intoComponent(report, browser) {
  const { build } = await import("vite");
  const config = fileURLToPath(new URL("./vite.config.ts", import.meta.url));
  await build({ configFile: config });
  const site = await serve(fileURLToPath(new URL("./dist", import.meta.url)));
  try {
    const lines = SMOKE ? 20_972 : 104_858;
    const rounds = SMOKE ? 2 : 5;
    for (const chunkBytes of [32 * 1024, 1024]) {
      // Each round a fresh page; the frames and tasks of all rounds are pooled.
      const pooled = { frames: [], longTasks: [] };
      const idle = { frames: [], longTasks: [] };
      const feeds = [];
      let label = "";
      for (let round = 0; round < rounds; round++) {
        const page = await browser.context.newPage();
        const errors = [];
        page.on("pageerror", (error) => errors.push(error.message));
        await page.goto(site.url);
        await page.locator(".live-output").waitFor();
        await page.evaluate(FRAME_SAMPLER);
        const prepared = await page.evaluate(([n, b, c]) => window.benchPrepare(n, b, c), [lines, LINE_BYTES, chunkBytes]);
        const baseline = await idleBaseline(page);
        idle.frames.push(...baseline.frames);
        let feedMs = 0;
        const sampled = await sample(page, async () => {
          feedMs = await page.evaluate(() => window.benchFeed());
        });
        pooled.frames.push(...sampled.frames);
        pooled.longTasks.push(...sampled.longTasks);
        feeds.push(feedMs);
        label = `${(prepared.bytes / 1024 / 1024).toFixed(1)} MB in ${chunkBytes / 1024} KiB events`;
        const buffer = await page.evaluate(() => window.benchBuffer());
        const shown = await page.evaluate(`(${LAST_LINE_SHOWN})()`);
        if (round === 0 || buffer.size !== prepared.bytes || shown.last !== prepared.lastLine || errors.length > 0) {
          report.check(`${label}: every byte arrived`, buffer.size === prepared.bytes,
            `${buffer.size} of ${prepared.bytes} characters; ${buffer.lineCount} lines kept, ${buffer.dropped} oldest dropped`);
          report.check(`${label}: the last line is shown at the end`, shown.last === prepared.lastLine && shown.atEnd, `"${shown.last}"`);
          report.check(`${label}: no page errors`, errors.length === 0, errors.join("; ") || "none");
        }
        await page.close();
        report.info(`${label}: round ${round + 1}, ${sampled.frames.length} frames`, `events taken in ${ms(feedMs)}`);
      }
      report.info(`${label}: time to take every event, median of ${rounds}`, ms(summary(feeds).p50));
      describeFrames(report, `${label}, ${rounds} rounds`, pooled, idle);
    }
  } finally {
    await site.close();
  }
}

export async function liveOutput(report) {
  const browser = await launchBrowser();
  try {
    await throughPaddock(report, browser);
    await intoComponent(report, browser);
  } finally {
    await browser.close();
  }
}
