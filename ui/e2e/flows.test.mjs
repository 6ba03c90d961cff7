// The user's flows in a real Chromium against the real `paddock up` (local wall, fake model):
// a session with a read-write and a read-only folder, a write approved once and seen on disk,
// a write to the read-only folder refused by the wall, a network denial allowed for the
// session, Settings ▸ Sandbox changes seen in config.toml with its comments kept, the audit
// trail filtered, paged, exported and verified; axe on every page.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { launchBrowser, screenshot, seriousAccessibilityViolations } from "./harness.mjs";
import { MODEL_KEY, startPaddock } from "./paddock.mjs";

const WAIT = { timeout: 60_000 };

describe("flows against paddock up", () => {
  let paddock;
  let browser;
  let page;
  const errors = [];

  before(async () => {
    paddock = await startPaddock();
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(WAIT.timeout);
    page.on("pageerror", (error) => errors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    const stopped = await paddock?.stop();
    assert.equal(stopped?.modelExit, 0, "the fake model server saw only well-formed requests");
  });

  async function axe(where) {
    assert.deepEqual(await seriousAccessibilityViolations(page), [], `axe found serious violations on ${where}`);
  }

  it("prints no token when not on a terminal, and signs in from the fragment", async () => {
    assert.ok(
      paddock.printed.every((line) => !line.includes(paddock.token)),
      `the token was printed: ${paddock.printed.join("\n")}`,
    );
    await page.goto(`${paddock.url}/#token=${paddock.token}`);
    await page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
    assert.equal(page.url(), `${paddock.url}/sessions`, "the token left the address bar");
    assert.equal(await page.evaluate(() => sessionStorage.getItem("paddock.token")), paddock.token);
    await page.getByText("No sessions yet").waitFor();
    await axe("/sessions (empty)");
  });

  it("runs a session: a write approved once lands on disk, the read-only folder refuses one", async () => {
    const written = join(paddock.rw, "notes.txt");
    const refused = join(paddock.ro, "blocked.txt");
    await paddock.model.script({
      events: [
        { text: "I will write the notes." },
        { tool_use: { id: "w1", name: "write_file", input: { path: written, content: "hello from the agent\n" } } },
        { stop: "tool_use" },
      ],
    });
    await paddock.model.script({
      events: [
        { tool_use: { id: "w2", name: "write_file", input: { path: refused, content: "must not land\n" } } },
        { stop: "tool_use" },
      ],
    });
    await paddock.model.script({
      events: [
        { tool_use: { id: "n1", name: "run_bash", input: { command: "curl -sS -m 10 http://example.com/ -o /dev/null" } } },
        { stop: "tool_use" },
      ],
    });
    await paddock.model.script({ events: [{ text: "Done: the notes are written." }, { stop: "end_turn" }] });

    await page.getByRole("button", { name: "New session" }).first().click();
    const dialog = page.getByRole("dialog");
    // Typed key by key, as a person types (a row re-created per keystroke would lose focus).
    await dialog.getByLabel("Folder 1 path").pressSequentially(paddock.rw);
    await dialog.getByRole("group", { name: "Folder 1 access" }).getByRole("radio", { name: "Read-write" }).check();
    await dialog.getByRole("button", { name: "Add folder" }).click();
    await dialog.getByLabel("Folder 2 path").fill(paddock.ro);
    await dialog.getByRole("group", { name: "Folder 2 access" }).getByRole("radio", { name: "Read-only" }).check();
    await dialog.getByLabel("First task (optional)").fill("Write the notes");
    await axe("the new-session dialog");
    await dialog.getByRole("button", { name: "Start session" }).click();

    // The session view: streaming text, then the first write asks.
    await page.getByText("I will write the notes.").waitFor(WAIT);
    const approval = page.getByRole("group", { name: "Approval needed" });
    await approval.waitFor(WAIT);
    assert.match(await approval.innerText(), /notes\.txt/);
    await axe("the session view with an approval");
    await screenshot(page, "session-approval");
    await approval.getByRole("button", { name: "Allow once" }).click();

    // The second write (to the read-only folder) asks too; allowed, the wall refuses it.
    await page.getByRole("group", { name: "Approval needed" }).filter({ hasText: "blocked.txt" }).waitFor(WAIT);
    await page
      .getByRole("group", { name: "Approval needed" })
      .filter({ hasText: "blocked.txt" })
      .getByRole("button", { name: "Allow once" })
      .click();

    // The command asks; allowed, the proxy refuses example.com and the denial card offers to allow it.
    await page.getByRole("group", { name: "Approval needed" }).filter({ hasText: "curl" }).waitFor(WAIT);
    await page
      .getByRole("group", { name: "Approval needed" })
      .filter({ hasText: "curl" })
      .getByRole("button", { name: "Allow once" })
      .click();
    await page.getByText("Done: the notes are written.").waitFor(WAIT);

    assert.equal(await readFile(written, "utf8"), "hello from the agent\n", "the approved write is on disk");
    assert.equal(existsSync(refused), false, "the read-only folder kept the write out");
    // Visible: the sandbox card's collapsed build steps and checks mention read-only folders too.
    await page
      .getByText(/read-only|Read-only file system|permission denied|EROFS/i)
      .filter({ visible: true })
      .first()
      .waitFor(WAIT);
    await page.getByText("Local wall").first().waitFor();

    const allow = page.getByRole("button", { name: "Allow for this session" }).first();
    await allow.waitFor(WAIT);
    assert.match(await page.locator("body").innerText(), /example\.com/);
    await allow.click();
    await page.getByText("Allowed for this session").first().waitFor(WAIT);
    await screenshot(page, "session-done");
    assert.ok(!(await page.content()).includes(MODEL_KEY), "the model key never reaches the page");
    await axe("the session view after the turn");
  });

  it("changes the profile and a credential row in Settings ▸ Sandbox, keeping the file's comments", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Sandbox", exact: true }).click();
    await page.getByRole("heading", { name: "Sandbox", level: 1 }).waitFor();
    await page.getByText("Local wall").first().waitFor();
    await axe("/settings/sandbox");
    await screenshot(page, "settings-sandbox");
    await page.getByRole("radio", { name: /Standard/ }).check();
    await page.getByRole("switch", { name: "Share gh with every session" }).check();
    let config = "";
    for (let i = 0; i < 100; i++) {
      config = await readFile(paddock.configFile, "utf8");
      if (config.includes('network_profile = "standard"') && /credentials = \["gh"\]/.test(config)) {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.match(config, /network_profile = "standard"/);
    assert.match(config, /credentials = \["gh"\]/);
    assert.match(config, /# Comments like this one must survive every change made from the UI\./);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Models", exact: true }).click();
    await page.getByRole("heading", { name: "Models", level: 1 }).waitFor();
    await page.getByText("claude-test").first().waitFor().catch(() => undefined);
    await axe("/settings/models");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: /Inbox/ }).click();
    await page.getByRole("heading", { name: "Inbox", level: 1 }).waitFor();
    await axe("/inbox");
  });

  it("filters, pages, exports and verifies the audit trail", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit trail", exact: true }).click();
    await page.getByRole("heading", { name: "Audit trail", level: 1 }).waitFor();
    const rows = page.locator("table tbody tr");
    await rows.first().waitFor();
    const all = await rows.count();
    assert.ok(all > 4, `the session left rows in the trail (${all})`);
    await axe("/audit");
    await screenshot(page, "audit");

    // Filter by tool.
    await page.getByRole("textbox", { name: "Tool", exact: true }).fill("write_file");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForFunction((before) => document.querySelectorAll("table tbody tr").length < before, all);
    const filtered = await rows.allInnerTexts();
    assert.ok(filtered.length > 0 && filtered.every((text) => /write_file|notes|blocked/.test(text)), filtered.join("\n"));

    // Clear, then page with the smallest page size.
    await page.getByRole("button", { name: "Clear" }).click();
    await page.getByLabel("Rows per page").selectOption("50");
    const pager = page.getByRole("navigation", { name: "Pages" });
    const older = pager.getByRole("button", { name: "Older" });
    // Older pages exist exactly when this page is full (the trail's own keyset cursor).
    assert.equal(await older.isEnabled(), all === 50, `rows on the first page: ${all}`);
    if (all === 50) {
      const firstPage = await rows.first().innerText();
      await older.click();
      await pager.getByText("Page 2").waitFor();
      assert.notEqual(await rows.first().innerText(), firstPage);
      await pager.getByRole("button", { name: "Newest" }).click();
      await pager.getByText("Page 1").waitFor();
    }

    // Export JSONL: a download of one JSON object per line.
    const download = page.waitForEvent("download");
    await page.getByRole("button", { name: /JSONL/ }).first().click();
    const file = await (await download).path();
    const lines = (await readFile(file, "utf8")).trim().split("\n");
    assert.ok(lines.length >= all, `the export holds every row (${lines.length} of ${all})`);
    for (const line of lines) {
      JSON.parse(line);
    }
    assert.ok(!lines.join("\n").includes(MODEL_KEY));

    await page.getByRole("button", { name: "Verify the chain" }).click();
    await page.getByText(/Intact: \d+ rows/).waitFor();
    assert.deepEqual(errors, []);
  });
});
