import type { SessionInfo } from "@server/SessionInfo";
import type { StandingApproval } from "@server/StandingApproval";
import { cleanup, fireEvent, screen, waitFor, within } from "@solidjs/testing-library";
import { createSignal } from "solid-js";
import { afterEach, describe, expect, it } from "vitest";
import { type Answer, errorAnswer, renderInApp, scriptedApp } from "../testing/app";
import { SessionSidebar } from "./SessionSidebar";

afterEach(cleanup);

const INFO: SessionInfo = {
  id: "s1",
  title: "Write the notes",
  created_ms: 1,
  updated_ms: 1,
  message_count: 2,
  state: "running",
  provider: "local",
  enforcement: "local",
  folders: [{ path: "/work/project", access: "read_write" }],
  settings: null,
  pending_approvals: 0,
  warning: null,
};

const CARGO: StandingApproval = { id: "a1", scope: "session", description: "commands starting with `cargo test`" };
const ALWAYS: StandingApproval = { id: "a2", scope: "always", description: "reading any file" };

function sidebar(standing: Answer) {
  const app = scriptedApp({
    "GET /v1/approvals/standing": standing,
    "DELETE /v1/approvals/standing/a1": () => CARGO,
  });
  const [hosts, setHosts] = createSignal<string[]>([]);
  const [live, setLive] = createSignal<StandingApproval[] | null>(null);
  renderInApp(app.state, () => (
    <SessionSidebar
      info={INFO}
      folders={INFO.folders}
      provider="local"
      settings={null}
      allowedHosts={hosts()}
      standing={live()}
    />
  ));
  const panel = () => screen.getByRole("region", { name: "Allowed for this session" });
  return { app, setHosts, setLive, panel };
}

describe("Allowed for this session", () => {
  it("loads, then says plainly that nothing was allowed yet", async () => {
    const { panel } = sidebar(() => []);
    expect(within(panel()).getByText("Loading the session's approvals…")).toBeTruthy();
    await within(panel()).findByText(/Nothing yet/);
  });

  it("shows a failure to read the approvals in place, with a retry", async () => {
    let reads = 0;
    const { panel } = sidebar(() => {
      reads += 1;
      return reads === 1 ? errorAnswer(500, "internal", "the approvals store is locked") : [CARGO];
    });
    await within(panel()).findByText("the approvals store is locked");
    fireEvent.click(within(panel()).getByRole("button", { name: "Try again" }));
    const calls = await within(panel()).findByRole("list", { name: "Tool calls" });
    expect(calls.textContent).toContain(CARGO.description);
  });

  it("lists a host allowed for the session at once, in place of 'Nothing yet'", async () => {
    const { panel, setHosts } = sidebar(() => []);
    await within(panel()).findByText(/Nothing yet/);
    setHosts(["example.com:80"]);
    const hosts = within(panel()).getByRole("list", { name: "Hosts" });
    expect(hosts.textContent).toContain("example.com:80");
    expect(within(panel()).queryByText(/Nothing yet/)).toBeNull();
  });

  it("follows the session's own announcements: its session approvals only, revocable", async () => {
    const { app, panel, setLive } = sidebar(() => []);
    await within(panel()).findByText(/Nothing yet/);
    setLive([CARGO, ALWAYS]);
    const calls = within(panel()).getByRole("list", { name: "Tool calls" });
    expect(calls.textContent).toContain(CARGO.description);
    expect(calls.textContent).not.toContain(ALWAYS.description);
    fireEvent.click(within(panel()).getByRole("button", { name: `Revoke ${CARGO.description}` }));
    await waitFor(() => {
      expect(within(panel()).queryByRole("list", { name: "Tool calls" })).toBeNull();
    });
    expect(app.seen.some((r) => r.method === "DELETE" && r.query.get("session") === "s1")).toBe(true);
  });
});
