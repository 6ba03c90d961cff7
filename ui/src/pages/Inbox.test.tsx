import type { PendingApproval } from "@server/PendingApproval";
import { cleanup, fireEvent, screen } from "@solidjs/testing-library";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError } from "../api/errors";
import { renderInApp, scriptedApp } from "../testing/app";
import Inbox from "./Inbox";

afterEach(cleanup);

const WAITING: PendingApproval = {
  session_id: "s1",
  call_id: "c1",
  tool: "run_bash",
  args: { command: "cargo test" },
  summary: "cargo test",
  reason: "ask mode asks before commands",
  lasting_allowed: true,
  seq: 4,
  asked_ms: Date.now(),
};

function inbox() {
  const app = scriptedApp({
    "GET /v1/sessions": () => [],
    "GET /v1/approvals/standing": () => [],
  });
  renderInApp(app.state, () => <Inbox />);
  return app;
}

const refused = new ApiError("unreachable", "Could not reach the Paddock server at http://127.0.0.1:8420", null);

describe("Inbox", () => {
  it("shows loading until the inbox was read once, and reads it on arrival", () => {
    const app = inbox();
    app.setInboxStatus({ loaded: false, error: null });
    expect(screen.getByText("Reading the waiting approvals…")).toBeTruthy();
    expect(screen.queryByText("Nothing is waiting for you")).toBeNull();
    expect(app.inboxReads()).toBeGreaterThan(0);
  });

  it("shows a failed first read as an error with a retry, never as an empty inbox", () => {
    const app = inbox();
    app.setInboxStatus({ loaded: false, error: refused });
    const alert = screen.getByRole("alert");
    expect(alert.textContent).toContain("The waiting approvals could not be read");
    expect(alert.textContent).toContain("Could not reach the Paddock server");
    expect(screen.queryByText("Nothing is waiting for you")).toBeNull();
    const before = app.inboxReads();
    fireEvent.click(screen.getByRole("button", { name: "Try again" }));
    expect(app.inboxReads()).toBe(before + 1);
  });

  it("keeps what it held when a later read fails, and says so", () => {
    const app = inbox();
    app.setPending([WAITING]);
    app.setInboxStatus({ loaded: true, error: refused });
    expect(screen.getByRole("alert").textContent).toContain("The inbox could not be read again");
    expect(screen.getByRole("group", { name: "Approval needed" }).textContent).toContain("cargo test");
  });

  it("lists what waits, or says that nothing does", () => {
    const app = inbox();
    app.setInboxStatus({ loaded: true, error: null });
    expect(screen.getByText("Nothing is waiting for you")).toBeTruthy();
    app.setPending([WAITING]);
    expect(screen.getByRole("list", { name: "Waiting approvals" }).textContent).toContain("cargo test");
    expect(screen.queryByText("Nothing is waiting for you")).toBeNull();
  });
});
