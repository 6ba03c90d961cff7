// The app shell in a real Chromium: sign-in, navigation, keyboard, themes, accessibility.
// Served by the real `paddock up`; the flows through the pages are in flows.test.mjs.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { launchBrowser, screenshot, seriousAccessibilityViolations, startUi } from "./harness.mjs";

const PAGES = [
  { link: "Sessions", path: "/sessions", heading: "Sessions" },
  { link: "Inbox", path: "/inbox", heading: "Inbox" },
  { link: "Audit trail", path: "/audit", heading: "Audit trail" },
  { link: "Sandbox", path: "/settings/sandbox", heading: "Sandbox" },
  { link: "Models", path: "/settings/models", heading: "Models" },
  { link: "Connectors", path: "/settings/connectors", heading: "Connectors" },
];

describe("app shell", () => {
  let ui;
  let browser;

  before(async () => {
    ui = await startUi();
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await ui?.close();
  });

  async function freshPage() {
    const page = await browser.context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    // A 4xx is an answer the page shows in place (e.g. the OpenShell status on a machine with
    // no gateway configured); a 5xx or a script error is a failure.
    page.on("response", (response) => {
      if (response.status() >= 500) errors.push(`${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`);
    });
    page.on("console", (message) => {
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) errors.push(message.text());
    });
    await page.goto(`${ui.url}/`);
    await page.evaluate(() => sessionStorage.clear());
    return { page, errors };
  }

  it("asks for the token when none is stored, and refuses an empty one", async () => {
    const { page, errors } = await freshPage();
    await page.goto(`${ui.url}/sessions`);
    await page.getByRole("heading", { name: "Sign in to Paddock" }).waitFor();
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Paste the access token first.").waitFor();
    const field = page.getByLabel("Access token");
    assert.equal(await field.getAttribute("aria-invalid"), "true");
    assert.deepEqual(await seriousAccessibilityViolations(page), []);
    await screenshot(page, "sign-in");
    await field.fill(`  ${ui.token}  `);
    await field.press("Enter");
    await page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem("paddock.token")), ui.token);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it("signs in from the address's fragment and removes the token from the address bar", async () => {
    const { page, errors } = await freshPage();
    await page.goto(`${ui.url}/audit#token=${ui.token}`);
    await page.getByRole("heading", { name: "Audit trail", level: 1 }).waitFor();
    assert.equal(page.url(), `${ui.url}/audit`);
    assert.equal(
      await page.evaluate(() => sessionStorage.getItem("paddock.token")),
      ui.token,
    );
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to Paddock" }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem("paddock.token")), null);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it("reaches every page from the navigation, marks the current one, and passes axe", async () => {
    const { page, errors } = await freshPage();
    await page.goto(`${ui.url}/#token=${ui.token}`);
    await page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
    assert.equal(page.url(), `${ui.url}/sessions`, "the root address leads to Sessions");
    const nav = page.getByRole("navigation", { name: "Main" });
    for (const entry of PAGES) {
      await nav.getByRole("link", { name: entry.link, exact: true }).click();
      await page.getByRole("heading", { name: entry.heading, level: 1 }).waitFor();
      assert.equal(new URL(page.url()).pathname, entry.path);
      const current = nav.locator('[aria-current="page"]');
      assert.equal((await current.innerText()).trim(), entry.link);
      assert.deepEqual(
        await seriousAccessibilityViolations(page),
        [],
        `axe found serious violations on ${entry.path}`,
      );
    }
    await page.goto(`${ui.url}/sessions`);
    await page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
    await screenshot(page, "sessions-light");
    assert.deepEqual(errors, []);
    await page.close();
  });

  it("is keyboard reachable: skip link first, then the navigation", async () => {
    const { page } = await freshPage();
    await page.goto(`${ui.url}/inbox#token=${ui.token}`);
    await page.getByRole("heading", { name: "Inbox", level: 1 }).waitFor();
    await page.keyboard.press("Tab");
    const skip = page.getByRole("link", { name: "Skip to content" });
    assert.equal(await skip.evaluate((el) => el === document.activeElement), true);
    await page.keyboard.press("Enter");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "main");
    // From the top, Tab walks the navigation in order; Enter follows the focused entry.
    await page.evaluate(() => {
      document.activeElement?.blur();
    });
    const visited = [];
    for (let i = 0; i < 7; i++) {
      await page.keyboard.press("Tab");
      visited.push(await page.evaluate(() => document.activeElement?.textContent?.trim()));
    }
    assert.deepEqual(visited.slice(1, 6), ["Sessions", "Inbox", "Audit trail", "Sandbox", "Models"]);
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Models", level: 1 }).waitFor();
    await page.close();
  });

  it("switches themes, keeps the choice across reloads, and follows the system by default", async () => {
    const { page } = await freshPage();
    await page.emulateMedia({ colorScheme: "dark" });
    await page.goto(`${ui.url}/sessions#token=${ui.token}`);
    await page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
    const background = () =>
      page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const systemDark = await background();
    await page.emulateMedia({ colorScheme: "light" });
    const systemLight = await background();
    assert.notEqual(systemDark, systemLight, "the system preference changes the colours");

    await page.getByRole("radio", { name: "Dark" }).check();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "dark");
    assert.equal(await background(), systemDark);
    await page.reload();
    await page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
    assert.equal(await background(), systemDark, "the choice survives a reload");
    assert.equal(await page.getByRole("radio", { name: "Dark" }).isChecked(), true);
    assert.deepEqual(await seriousAccessibilityViolations(page), []);
    await screenshot(page, "sessions-dark");

    await page.getByRole("radio", { name: "System" }).check();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), undefined);
    assert.equal(await background(), systemLight);
    await page.close();
  });

  it("shows a page of its own for an unknown address", async () => {
    const { page } = await freshPage();
    await page.goto(`${ui.url}/no/such/page#token=${ui.token}`);
    await page.getByRole("heading", { name: "Page not found", level: 1 }).waitFor();
    assert.deepEqual(await seriousAccessibilityViolations(page), [], "axe found serious violations on the not-found page");
    await page.getByRole("link", { name: "Go to Sessions" }).click();
    await page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
    await page.close();
  });
});
