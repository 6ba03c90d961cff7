// The desktop app under Xvfb, driven through tauri-driver and WebKitWebDriver. Run by
// `cargo xtask desktop smoke`, which builds the app, starts Xvfb, a D-Bus session bus and
// tauri-driver (with a fresh XDG profile, the tool-runner and the wall), and passes their
// addresses here. The app runs the host in its own process; the model is the fake model
// server (a test double speaking the Anthropic wire).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { initialConfig, startModel } from "../e2e/paddock.mjs";
import { WebDriver } from "./webdriver.mjs";

function required(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run this through \`cargo xtask desktop smoke\``);
  }
  return value;
}

const application = required("PADDOCK_DESKTOP_BIN");
const driverUrl = required("TAURI_DRIVER_URL");
const artifacts = required("PADDOCK_SMOKE_ARTIFACTS");
const configHome = required("XDG_CONFIG_HOME");
const fakeModel = required("PADDOCK_FAKE_MODEL_SERVER");

/** Waits for a child to exit; rejects if it is still running after `limitMs`. */
function exitOf(child, limitMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`still running after ${limitMs} ms`));
    }, limitMs);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

describe("desktop app", () => {
  const driver = new WebDriver(driverUrl);
  let model;

  const heading = () => driver.execute("return document.querySelector('main h1')?.textContent ?? null;");
  const bodyText = () => driver.execute("return document.body.innerText;");
  /** Clicks the first element matching `css` whose text includes `text`. */
  const clickText = (css, text) =>
    driver.execute(
      "const [css, text] = arguments; const el = [...document.querySelectorAll(css)].find((e) => e.textContent.includes(text)); if (!el) return false; el.click(); return true;",
      [css, text],
    );

  before(async () => {
    await mkdir(artifacts, { recursive: true });
    model = await startModel(fakeModel);
    await mkdir(join(configHome, "paddock"), { recursive: true });
    await writeFile(join(configHome, "paddock", "config.toml"), initialConfig(model.anthropicBaseUrl));
    await driver.startApp(application);
  });

  after(async () => {
    // WebKitWebDriver serves one session at a time: always end it.
    await driver.quit();
    await model?.stop();
  });

  it("opens its window on Sessions, signed in by its own process", async () => {
    assert.equal(await driver.title(), "Paddock");
    const text = await driver.waitFor("the Sessions page", async () =>
      (await heading()) === "Sessions" ? "Sessions" : undefined,
    );
    assert.equal(text, "Sessions");
    const signOut = await driver.execute(
      "return [...document.querySelectorAll('button')].some((b) => b.textContent.includes('Sign out'));",
    );
    assert.equal(signOut, false, "the desktop app has no sign-in to leave");
  });

  it("opens Settings ▸ Sandbox, reads the provider status, and saves a screenshot", async () => {
    await driver.click(await driver.find('nav a[href="/settings/sandbox"]'));
    await driver.waitFor("the Sandbox page", async () => ((await heading()) === "Sandbox" ? true : undefined));
    // The local wall's live status, once read: its verdict, never the "Checking this machine…"
    // shown while the status is on its way.
    const status = await driver.waitFor("the local wall's live status", async () => {
      const text = await driver.execute(
        "return document.querySelector('[aria-label=\"local status on this machine\"]')?.innerText ?? '';",
      );
      return /Ready on this machine|\d+ of \d+ checks failing/.test(text) ? text : undefined;
    }, 30_000);
    assert.doesNotMatch(status, /Checking this machine/);
    assert.match(await bodyText(), /Local wall/);
    await driver.afterPaint();
    const png = await driver.screenshot();
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    await writeFile(join(artifacts, "desktop-sandbox.png"), png);
  });

  it("starts a session against the fake model and shows its answer", async () => {
    const folder = await mkdtemp(join(tmpdir(), "paddock-desktop-smoke-"));
    await model.script({ events: [{ text: "Hello from the desktop smoke test." }, { stop: "end_turn" }] });
    await driver.click(await driver.find('nav a[href="/sessions"]'));
    await driver.waitFor("the Sessions page", async () => ((await heading()) === "Sessions" ? true : undefined));
    assert.equal(await clickText("button", "New session"), true);
    const path = await driver.waitFor("the new-session dialog", () => driver.find("dialog input.folder-path"));
    await driver.type(path, folder);
    await driver.type(await driver.find("dialog textarea"), "Say hello");
    assert.equal(await clickText("dialog button[type=submit]", "Start session"), true);
    await driver.waitFor("the model's answer", async () =>
      (await bodyText()).includes("Hello from the desktop smoke test.") ? true : undefined,
    60_000);
    // The folder typed key by key is the one granted (not a prefix of it).
    const granted = await driver.execute(
      "return [...document.querySelectorAll('[title]')].map((e) => e.getAttribute('title')).join('\\n');",
    );
    assert.ok(granted.split("\n").includes(folder), `granted: ${granted}`);
    await driver.afterPaint();
    await writeFile(join(artifacts, "desktop-session.png"), await driver.screenshot());
  });

  it("hands a second launch over to the running app (single instance)", async () => {
    const second = spawn(application, [], { stdio: "ignore" });
    const { code, signal } = await exitOf(second, 15_000);
    assert.deepEqual({ code, signal }, { code: 0, signal: null });
    assert.equal(await driver.title(), "Paddock", "the first window is still there");
  });
});
