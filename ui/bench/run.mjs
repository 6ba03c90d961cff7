// The web UI's benchmarks (`cargo xtask ui bench`, or `npm run bench` with the binaries named
// in the environment, as for the end-to-end tests, plus PADDOCK_SEED_TRAIL for the audit one).
//
//   node bench/run.mjs [sessions] [audit] [live-output] [--smoke]
//
// With no names, all three. `--smoke` takes fewer runs and a smaller audit trail and fails only
// when a figure passes its bound (a generous margin over the target); the full run reports each
// figure against its target and fails only when a check (all rows shown, the whole output
// arrived, the chain intact) fails. Figures go in docs/performance.md with the load printed here.
import { auditPage } from "./audit-page.mjs";
import { loadAverage, Report, SMOKE } from "./lib.mjs";
import { liveOutput } from "./live-output.mjs";
import { sessionsPaint } from "./sessions-paint.mjs";

const BENCHES = {
  sessions: ["First meaningful paint of the Sessions page (paddock up, headless Chromium)", sessionsPaint],
  audit: ["Audit trail: 200-row pages over a large trail (paddock up, headless Chromium)", auditPage],
  "live-output": ["Live output of a tool call: frame times while it streams (headless Chromium)", liveOutput],
};

const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith("--"));
for (const name of wanted) {
  if (!(name in BENCHES)) {
    console.error(`unknown benchmark \`${name}\`: use ${Object.keys(BENCHES).join(", ")}`);
    process.exit(2);
  }
}
const names = wanted.length > 0 ? wanted : Object.keys(BENCHES);

const started = Date.now();
console.log(`web UI benchmarks${SMOKE ? " (smoke)" : ""}; load average before: ${await loadAverage()}`);
const reports = [];
for (const name of names) {
  const [title, bench] = BENCHES[name];
  const report = new Report(title);
  reports.push(report);
  const load = await loadAverage();
  try {
    await bench(report);
  } catch (error) {
    report.check("run", false, error.stack ?? String(error));
  }
  report.info("load average before / after", `${load} / ${await loadAverage()}`);
  report.print();
}
const failures = reports.flatMap((report) => report.failures);
console.log(`\n${names.length} benchmark(s) in ${((Date.now() - started) / 1000).toFixed(0)} s; load average after: ${await loadAverage()}`);
if (failures.length > 0) {
  console.error(`\n${failures.length} failure(s):\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
