// Shared by the UI benchmarks: statistics, the machine's load, the API seen from node, what a
// page records about its own frames, and the report lines every benchmark prints.
import { readFile } from "node:fs/promises";

/** The 1-, 5- and 15-minute load averages, as `uptime` prints them. */
export async function loadAverage() {
  const text = await readFile("/proc/loadavg", "utf8");
  return text.split(" ").slice(0, 3).join(" ");
}

/** Percentile `p` (0–100) of `values`, nearest rank. */
export function percentile(values, p) {
  if (values.length === 0) {
    return Number.NaN;
  }
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function median(values) {
  return percentile(values, 50);
}

export function summary(values) {
  return {
    n: values.length,
    p50: median(values),
    p95: percentile(values, 95),
    max: values.length > 0 ? Math.max(...values) : Number.NaN,
  };
}

export const ms = (value) => (Number.isFinite(value) ? `${value.toFixed(1)} ms` : "n/a");

/** Which mode: `--smoke` (fewer runs and a smaller store, for CI) or the full benchmark. */
export const SMOKE = process.argv.includes("--smoke") || process.env.PADDOCK_UI_BENCH_SMOKE === "1";

/**
 * One figure against its target. `bound` is the limit the smoke mode fails past (a generous
 * margin over the target for a loaded 2-core CI machine); the full run only reports.
 */
export function verdict(value, target, bound) {
  if (!Number.isFinite(value)) {
    return "FAIL";
  }
  if (value <= target) {
    return "ok";
  }
  return value <= bound ? "over" : "FAIL";
}

/** The report: one line per figure, and whether any went past its bound. */
export class Report {
  constructor(title) {
    this.title = title;
    this.lines = [];
    this.failures = [];
  }

  /** A figure with a target (`value <= target`) and the smoke's bound. */
  figure(name, value, target, bound, detail = "") {
    const mark = verdict(value, target, bound);
    this.lines.push(
      `  ${mark.padEnd(4)} ${name.padEnd(58)} ${ms(value).padStart(10)}  (target <= ${target} ms${
        SMOKE ? `, smoke fails above ${bound} ms` : ""
      })${detail ? `  ${detail}` : ""}`,
    );
    if (mark === "FAIL") {
      this.failures.push(`${this.title}: ${name} = ${ms(value)} (bound ${bound} ms)`);
    }
  }

  /** A figure without a target (context for the others). */
  info(name, text) {
    this.lines.push(`       ${name.padEnd(58)} ${text}`);
  }

  /** A fact the run checked (the whole output arrived, the chain verified, …). */
  check(name, ok, detail) {
    this.lines.push(`  ${(ok ? "ok" : "FAIL").padEnd(4)} ${name}: ${detail}`);
    if (!ok) {
      this.failures.push(`${this.title}: ${name}: ${detail}`);
    }
  }

  print() {
    console.log(`\n${this.title}`);
    for (const line of this.lines) {
      console.log(line);
    }
  }
}

/** The API as node sees it: JSON in and out, the bearer token, errors with the server's words. */
export function api(paddock) {
  const call = async (method, path, body) => {
    const response = await fetch(`${paddock.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${paddock.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) {
      throw new Error(`${method} ${path}: ${response.status} ${text}`);
    }
    return text === "" ? null : JSON.parse(text);
  };
  return {
    get: (path) => call("GET", path),
    post: (path, body) => call("POST", path, body),
  };
}

/** A new session on the local wall with `folder` read-write. */
export function newSession(folder, approvalMode = "ask") {
  return {
    folders: [{ path: folder, access: "read_write" }],
    cwd: null,
    provider: null,
    model: null,
    approval_mode: approvalMode,
    network_profile: null,
    extra_hosts: [],
    credentials: [],
    secrets: [],
  };
}

/** Polls `check` every 50 ms until it returns something truthy, or fails naming `what`. */
export async function until(check, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * In the page: records every frame's interval (requestAnimationFrame) and every long task
 * (the Long Tasks API: a task over 50 ms) from `start()` until `stop()`.
 */
export const FRAME_SAMPLER = `(() => {
  const state = { frames: [], longTasks: [], running: false, last: 0 };
  const tick = (now) => {
    if (!state.running) return;
    state.frames.push(now - state.last);
    state.last = now;
    requestAnimationFrame(tick);
  };
  new PerformanceObserver((list) => {
    if (!state.running) return;
    for (const entry of list.getEntries()) state.longTasks.push(entry.duration);
  }).observe({ type: "longtask" });
  window.__frames = {
    start() {
      state.frames = [];
      state.longTasks = [];
      state.running = true;
      requestAnimationFrame((now) => {
        state.last = now;
        requestAnimationFrame(tick);
      });
    },
    stop() {
      state.running = false;
      return { frames: state.frames, longTasks: state.longTasks };
    },
  };
})();`;

/** In the page: a promise that settles after the next frame was produced (rAF, then a task). */
export const AFTER_PAINT = `() => new Promise((resolve) => requestAnimationFrame(() => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => resolve(performance.now());
  channel.port2.postMessage(null);
}))`;
