// A tool call's output shown live in the session view, in a real Chromium against the real
// `paddock up` (local wall, fake model): the lines appear while the command still runs, the
// count of what was received follows them, and the page keeps one event stream for the
// session (a new summary of the session once restarted the stream, which replays the log and
// asks for a new summary again: a reconnect loop that dropped every live-only event).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { launchBrowser } from "./harness.mjs";
import { startPaddock } from "./paddock.mjs";

const WAIT = { timeout: 60_000 };
const TICKS = 30;

describe("live output against paddock up", () => {
  let paddock;
  let browser;

  before(async () => {
    paddock = await startPaddock();
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await paddock?.stop();
  });

  async function post(path, body) {
    const response = await fetch(`${paddock.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${paddock.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    assert.ok(response.ok, `POST ${path}: ${response.status} ${text}`);
    return text === "" ? null : JSON.parse(text);
  }

  it("shows a running command's lines as they come, with one event stream", async () => {
    const session = await post("/v1/sessions", {
      folders: [{ path: paddock.rw, access: "read_write" }],
      cwd: null,
      provider: null,
      model: null,
      approval_mode: "bypass",
      network_profile: null,
      extra_hosts: [],
      credentials: [],
      secrets: [],
    });
    const command = `for i in $(seq 1 ${TICKS}); do echo "tick $i"; sleep 0.1; done`;
    await paddock.model.script({
      events: [{ tool_use: { id: "ticks", name: "run_bash", input: { command } } }, { stop: "tool_use" }],
    });
    await paddock.model.script({ events: [{ text: "The ticks are done." }, { stop: "end_turn" }] });

    const page = await browser.context.newPage();
    page.setDefaultTimeout(WAIT.timeout);
    const errors = [];
    page.on("pageerror", (error) => errors.push(error.message));
    const streams = [];
    page.on("websocket", (socket) => {
      if (socket.url().includes(`/v1/sessions/${session.id}/events`)) {
        streams.push(new URL(socket.url()).searchParams.get("after"));
      }
    });
    await page.goto(`${paddock.url}/#token=${paddock.token}`);
    await page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
    await page.goto(`${paddock.url}/sessions/${encodeURIComponent(session.id)}`);
    await page.getByRole("textbox").first().waitFor();

    await post(`/v1/sessions/${session.id}/turns`, { text: "Count the ticks" });
    const output = page.getByRole("log", { name: /^Output of/ });
    // Seen while the command still runs (it takes about three seconds).
    await page.waitForFunction(
      () => document.querySelector(".live-output")?.textContent.split("\n").includes("tick 5") ?? false,
      null,
      WAIT,
    );
    assert.ok(
      (await page.getByText("Running", { exact: true }).count()) > 0,
      "the fifth tick was shown while the call was still running",
    );
    await page.getByText("The ticks are done.").waitFor(WAIT);

    const lines = (await output.innerText()).trim().split("\n");
    assert.equal(lines.at(-1), `tick ${TICKS}`, "the last line is shown");
    const printed = Array.from({ length: TICKS }, (_, i) => `tick ${i + 1}\n`).join("").length;
    const flags = page.locator(".tool-card-output .tool-card-flags");
    assert.equal((await flags.innerText()).trim(), `${printed} B received`, "the received count follows the output");

    // Longer than the old loop's period (a new stream about every 350 ms).
    await page.waitForTimeout(1500);
    assert.deepEqual(streams, ["0"], "one event stream for the session, from the start of its log");
    assert.deepEqual(errors, []);
  });
});
