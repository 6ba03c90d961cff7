import type { ConnectorConfig } from "@server/ConnectorConfig";
import type { ConnectorInfo } from "@server/ConnectorInfo";
import type { ConnectorRequest } from "@server/ConnectorRequest";
import type { ConnectorToolInfo } from "@server/ConnectorToolInfo";
import { cleanup, fireEvent, screen, waitFor, within } from "@solidjs/testing-library";
import { afterEach, describe, expect, it } from "vitest";
import { errorAnswer, renderInApp, scriptedApp, type SeenRequest } from "../../testing/app";
import Connectors from "./Connectors";

afterEach(cleanup);

const TOKEN = "tok-PLANTED-unit-0123456789";

function info(config: ConnectorConfig, change: Partial<ConnectorInfo> = {}): ConnectorInfo {
  return {
    name: config.name,
    transport: config.transport,
    target: [config.command ?? config.url ?? "", ...(config.args ?? [])].join(" "),
    enabled: config.enabled,
    status: config.enabled ? "running" : "disabled",
    reason: null,
    restarts: 0,
    tools: 2,
    sends: Object.entries(config.env ?? {}).map(([name, value]) => ({ name, carries_token: value.includes("{secret}") })),
    config,
    ...change,
  };
}

const DOCS: ConnectorConfig = {
  name: "docs",
  transport: "stdio",
  enabled: true,
  command: "/opt/mcp/docs",
  env: { DOCS_TOKEN: "{secret}" },
};

const TOOLS: ConnectorToolInfo[] = [
  { name: "lookup", model_name: "mcp__docs__lookup", not_offered: null, description: "Looks a word up.", claimed_risk: "read", risk: "write" },
  { name: "bad name!", model_name: null, not_offered: "its name has characters the model APIs refuse", description: "", claimed_risk: "write", risk: "write" },
];

/** The connectors page over a scripted API holding `list`, which PUTs change. */
function page(list: ConnectorInfo[], extra: Record<string, (r: SeenRequest) => unknown> = {}) {
  let current = [...list];
  const app = scriptedApp({
    "GET /v1/connectors": () => current,
    "GET /v1/connectors/docs/tools": () => TOOLS,
    "POST /v1/connectors/docs/disable": () => {
      current = current.map((c) => (c.name === "docs" ? info({ ...c.config, enabled: false }) : c));
      return current.find((c) => c.name === "docs");
    },
    "POST /v1/connectors/docs/test": () => ({ ok: true, detail: "started, listed 2 tools, stopped", tools: TOOLS }),
    ...extra,
  });
  const put = (request: SeenRequest) => {
    const body = request.body as ConnectorRequest;
    const saved = info(body.config);
    current = [...current.filter((c) => c.name !== saved.name), saved];
    return saved;
  };
  renderInApp(app.state, () => <Connectors />);
  return { app, put };
}

describe("Settings ▸ Connectors", () => {
  it("says plainly when there are none", async () => {
    page([]);
    await screen.findByText("No connectors yet");
  });

  it("lists each connector with its state, target and what it sends, never a token's value", async () => {
    page([info(DOCS), info({ name: "tracker", transport: "streamable-http", enabled: true, url: "https://t.example/mcp" }, { status: "failed", reason: "connection refused" })]);
    const docs = await screen.findByRole("listitem", { name: "docs" });
    expect(docs.textContent).toContain("/opt/mcp/docs");
    expect(docs.textContent).toContain("Running");
    expect(within(docs).getByRole("list", { name: "What docs sends" }).textContent).toContain("DOCS_TOKEN(carries the token)");
    const tracker = screen.getByRole("listitem", { name: "tracker" });
    expect(tracker.textContent).toContain("Failed");
    expect(tracker.textContent).toContain("connection refused");
    expect(tracker.textContent).toContain("HTTP");
  });

  it("adds a connector: the entry and the token go once to the host, the form names what it refused", async () => {
    let attempts = 0;
    const { app, put } = page([], {
      "PUT /v1/connectors/notes": (request) => {
        attempts += 1;
        return attempts === 1
          ? errorAnswer(400, "invalid_setting", "setting `connectors.env.NOTES_TOKEN`: looks like a credential, so its value must come from the key store")
          : put(request);
      },
    });
    fireEvent.click((await screen.findAllByRole("button", { name: "Add connector" }))[0] as HTMLElement);
    const dialog = await screen.findByRole("dialog", { name: "Add a connector" });
    fireEvent.input(within(dialog).getByLabelText("Name"), { target: { value: "notes" } });
    fireEvent.input(within(dialog).getByLabelText("Command"), { target: { value: "notes-mcp" } });
    fireEvent.input(within(dialog).getByLabelText("Arguments"), { target: { value: "--stdio\n--quiet" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Add variable" }));
    fireEvent.input(within(dialog).getByLabelText("Variable 1"), { target: { value: "NOTES_TOKEN" } });
    fireEvent.input(within(dialog).getByLabelText("Value of variable 1"), { target: { value: "plain" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Add connector" }));
    const problem = await within(dialog).findByText(/NOTES_TOKEN looks like a credential/);
    expect(problem.id).toBe("connector-env-problem");

    fireEvent.input(within(dialog).getByLabelText("Value of variable 1"), { target: { value: "{secret}" } });
    fireEvent.input(within(dialog).getByLabelText("Token"), { target: { value: TOKEN } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Add connector" }));
    await screen.findByRole("listitem", { name: "notes" });
    const sent = app.seen.filter((r) => r.method === "PUT").map((r) => r.body as ConnectorRequest);
    expect(sent.at(-1)).toEqual({
      config: { name: "notes", transport: "stdio", enabled: true, command: "notes-mcp", args: ["--stdio", "--quiet"], env: { NOTES_TOKEN: "{secret}" } },
      token: TOKEN,
    });
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(document.body.innerHTML).not.toContain(TOKEN);
  });

  it("refuses a token that nothing would carry, before asking the host", async () => {
    const { app } = page([]);
    fireEvent.click((await screen.findAllByRole("button", { name: "Add connector" }))[0] as HTMLElement);
    const dialog = await screen.findByRole("dialog", { name: "Add a connector" });
    fireEvent.input(within(dialog).getByLabelText("Name"), { target: { value: "notes" } });
    fireEvent.input(within(dialog).getByLabelText("Command"), { target: { value: "notes-mcp" } });
    fireEvent.input(within(dialog).getByLabelText("Token"), { target: { value: TOKEN } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Add connector" }));
    await within(dialog).findByText(/Nothing uses the token/);
    expect(app.seen.some((r) => r.method === "PUT")).toBe(false);
  });

  it("edits an entry keeping what the form does not show, and keeps the stored token unless one is typed", async () => {
    const { app, put } = page([info({ ...DOCS, risk: { lookup: "read" } })], { "PUT /v1/connectors/docs": (r) => put(r) });
    const docs = await screen.findByRole("listitem", { name: "docs" });
    fireEvent.click(within(docs).getByRole("button", { name: "Edit docs" }));
    const dialog = await screen.findByRole("dialog", { name: "Connector docs" });
    expect(within(dialog).getByLabelText<HTMLInputElement>("Name").disabled).toBe(true);
    expect(within(dialog).getByLabelText<HTMLInputElement>("Token").placeholder).toBe("Leave empty to keep the stored token");
    fireEvent.input(within(dialog).getByLabelText("Command"), { target: { value: "/opt/mcp/docs2" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Save connector" }));
    await waitFor(() => {
      expect(app.seen.some((r) => r.method === "PUT")).toBe(true);
    });
    expect(app.seen.find((r) => r.method === "PUT")?.body).toEqual({
      config: { ...DOCS, command: "/opt/mcp/docs2", risk: { lookup: "read" } },
      token: null,
    });
  });

  it("shows the tools with the names the model sees and their risks, and sets a tool's risk", async () => {
    const { app, put } = page([info(DOCS)], { "PUT /v1/connectors/docs": (r) => put(r) });
    const docs = await screen.findByRole("listitem", { name: "docs" });
    fireEvent.click(within(docs).getByRole("button", { name: "Show tools of docs" }));
    const table = await within(docs).findByRole("table", { name: "Tools of docs" });
    const lookup = within(table).getByText("lookup").closest("tr") as HTMLElement;
    expect(lookup.textContent).toContain("mcp__docs__lookup");
    // The server's claim, then the risk in force.
    expect([...lookup.querySelectorAll(".badge")].map((e) => e.textContent)).toEqual(["Read", "Write"]);
    expect(table.textContent).toContain("Not offered: its name has characters the model APIs refuse");
    fireEvent.change(within(table).getByLabelText("Risk of lookup"), { target: { value: "read" } });
    await waitFor(() => {
      expect(app.seen.find((r) => r.method === "PUT")?.body).toEqual({ config: { ...DOCS, risk: { lookup: "read" } }, token: null });
    });
  });

  it("tests a connector and turns it off, each answer shown in place", async () => {
    const { app } = page([info(DOCS)]);
    const docs = await screen.findByRole("listitem", { name: "docs" });
    fireEvent.click(within(docs).getByRole("button", { name: "Test docs" }));
    await within(docs).findByText("The test passed");
    expect(docs.textContent).toContain("started, listed 2 tools, stopped");
    fireEvent.click(within(docs).getByRole("switch", { name: "Offer docs to sessions" }));
    await waitFor(() => {
      expect(app.seen.map((r) => `${r.method} ${r.path}`)).toContain("POST /v1/connectors/docs/disable");
    });
    await within(docs).findByText("Off");
    expect(app.seen.some((r) => r.method === "POST" && r.path === "/v1/connectors/docs/disable")).toBe(true);
  });

  it("removes a connector after asking, and keeps it with the host's reason when the host refuses", async () => {
    let refuse = true;
    const { app } = page([info(DOCS), info({ ...DOCS, name: "notes", env: {} })], {
      "DELETE /v1/connectors/docs": () =>
        refuse ? errorAnswer(400, "invalid_setting", "connectors: the config file is not valid TOML") : new Response(null, { status: 204 }),
    });
    const docs = await screen.findByRole("listitem", { name: "docs" });
    fireEvent.click(within(docs).getByRole("button", { name: "Remove docs" }));
    const dialog = await screen.findByRole("dialog", { name: "Remove docs?" });
    expect(dialog.textContent).toContain("token is deleted from the key store");
    // Cancel sends nothing.
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    expect(app.seen.some((r) => r.method === "DELETE")).toBe(false);
    // Refused: the reason in the dialog, the connector still listed.
    fireEvent.click(within(docs).getByRole("button", { name: "Remove docs" }));
    const again = await screen.findByRole("dialog", { name: "Remove docs?" });
    fireEvent.click(within(again).getByRole("button", { name: "Remove connector" }));
    const alert = await within(again).findByRole("alert");
    expect(alert.textContent).toContain("not valid TOML");
    expect(screen.getByRole("listitem", { name: "docs" })).toBeTruthy();
    // Accepted: gone from the list, the other one stays.
    refuse = false;
    fireEvent.click(within(again).getByRole("button", { name: "Remove connector" }));
    await waitFor(() => {
      expect(screen.queryByRole("listitem", { name: "docs" })).toBeNull();
    });
    expect(screen.getByRole("listitem", { name: "notes" })).toBeTruthy();
    expect(app.seen.filter((r) => r.method === "DELETE").map((r) => r.path)).toEqual(["/v1/connectors/docs", "/v1/connectors/docs"]);
  });

  it("shows why the tools could not be listed", async () => {
    page([info(DOCS)], {
      "GET /v1/connectors/docs/tools": () => errorAnswer(502, "connector_failed", "the connector `docs` could not start: no such file"),
    });
    const docs = await screen.findByRole("listitem", { name: "docs" });
    fireEvent.click(within(docs).getByRole("button", { name: "Show tools of docs" }));
    const alert = await within(docs).findByRole("alert");
    expect(alert.textContent).toContain("could not start: no such file");
    expect(alert.textContent).toContain("connector_failed");
  });
});

describe("Settings ▸ Connectors, header", () => {
  it("keeps its Add button once the first connector is added", async () => {
    const { put } = page([], { "PUT /v1/connectors/notes": (r) => put(r) });
    await screen.findByText("No connectors yet");
    expect(screen.getAllByRole("button", { name: "Add connector" })).toHaveLength(2);
    fireEvent.click(screen.getAllByRole("button", { name: "Add connector" })[0] as HTMLElement);
    const dialog = await screen.findByRole("dialog", { name: "Add a connector" });
    fireEvent.input(within(dialog).getByLabelText("Name"), { target: { value: "notes" } });
    fireEvent.input(within(dialog).getByLabelText("Command"), { target: { value: "notes-mcp" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Add connector" }));
    await screen.findByRole("listitem", { name: "notes" });
    expect(screen.getAllByRole("button", { name: "Add connector" })).toHaveLength(1);
  });
});
