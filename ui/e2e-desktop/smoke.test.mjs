// The desktop app under Xvfb, driven through tauri-driver and WebKitWebDriver. Run by
// `cargo xtask desktop smoke`, which builds the app, starts Xvfb, a D-Bus session bus and
// tauri-driver, and passes their addresses here.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
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

  before(async () => {
    await mkdir(artifacts, { recursive: true });
    await driver.startApp(application);
  });

  after(async () => {
    // WebKitWebDriver serves one session at a time: always end it.
    await driver.quit();
  });

  it("opens its window on the web UI", async () => {
    assert.equal(await driver.title(), "Paddock");
    const heading = await driver.waitFor("the sign-in page", async () => {
      const text = await driver.execute("return document.querySelector('h1')?.textContent ?? null;");
      return text ?? undefined;
    });
    assert.equal(heading, "Sign in to Paddock");
  });

  it("signs in, navigates to Settings ▸ Sandbox, and saves a screenshot", async () => {
    const input = await driver.find("input[name=token]");
    await driver.type(input, "desktop-smoke-token");
    await driver.click(await driver.find("button[type=submit]"));
    const sandboxLink = await driver.waitFor("the navigation", () =>
      driver.find('nav a[href="/settings/sandbox"]'),
    );
    await driver.click(sandboxLink);
    const heading = await driver.waitFor("the Sandbox page", async () => {
      const text = await driver.execute("return document.querySelector('main h1')?.textContent ?? null;");
      return text === "Sandbox" ? text : undefined;
    });
    assert.equal(heading, "Sandbox");
    const current = await driver.execute(
      "return document.querySelector('nav [aria-current=page]')?.textContent?.trim() ?? null;",
    );
    assert.equal(current, "Sandbox");
    await driver.afterPaint();
    const png = await driver.screenshot();
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    await writeFile(join(artifacts, "desktop-sandbox.png"), png);
  });

  it("hands a second launch over to the running app (single instance)", async () => {
    const second = spawn(application, [], { stdio: "ignore" });
    const { code, signal } = await exitOf(second, 15_000);
    assert.deepEqual({ code, signal }, { code: 0, signal: null });
    assert.equal(await driver.title(), "Paddock", "the first window is still there");
  });
});
