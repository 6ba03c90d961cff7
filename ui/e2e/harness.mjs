// Shared by the browser end-to-end tests: Debian's Chromium driven by playwright-core (no
// browser download), and the UI under test.
import { mkdtemp, mkdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const uiRoot = fileURLToPath(new URL("..", import.meta.url));
export const artifactsDir = join(uiRoot, "e2e", "artifacts");

const CHROMIUM = process.env.PADDOCK_CHROMIUM ?? "/usr/bin/chromium";

/** Flags for a quiet, offline-friendly Chromium running as root in CI. */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Launches a headless Chromium with a fresh profile; `close()` removes it again. */
export async function launchBrowser() {
  const profile = await mkdtemp(join(tmpdir(), "paddock-e2e-profile-"));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 800 },
    });
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw new Error(
      `could not start Chromium at ${CHROMIUM} (install Debian's \`chromium\`, or run \`cargo xtask setup\`): ${error.message}`,
    );
  }
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The UI under test, served by the real `paddock up` (see `paddock.mjs`): its URL, the API
 * token, and `close()`.
 */
export async function startUi() {
  const { startPaddock } = await import("./paddock.mjs");
  const paddock = await startPaddock();
  return {
    url: paddock.url,
    token: paddock.token,
    async close() {
      await paddock.stop();
    },
  };
}

/** Saves a screenshot of the viewport as `e2e/artifacts/<name>.png` and returns its path. */
export async function screenshot(page, name) {
  await mkdir(artifactsDir, { recursive: true });
  const path = join(artifactsDir, `${name}.png`);
  // The viewport: the shell scrolls inside its own panes, so a "full page" adds only blank space.
  await page.screenshot({ path });
  return path;
}

/** Runs axe-core in the page and returns the violations of serious or critical impact. */
export async function seriousAccessibilityViolations(page) {
  // Evaluated through the DevTools protocol: the served content security policy (scripts
  // from the app only) rightly refuses an injected <script>.
  if (!(await page.evaluate(() => "axe" in window))) {
    const axePath = fileURLToPath(import.meta.resolve("axe-core/axe.min.js"));
    await page.evaluate(await readFile(axePath, "utf8"));
  }
  const result = await page.evaluate(async () => {
    return await window.axe.run(document, { resultTypes: ["violations"] });
  });
  return result.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(" ")),
    }));
}
