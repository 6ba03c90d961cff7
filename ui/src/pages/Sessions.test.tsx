import type { SessionInfo } from "@server/SessionInfo";
import { cleanup, screen, waitFor, within } from "@solidjs/testing-library";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderInApp, scriptedApp } from "../testing/app";
import Sessions from "./Sessions";

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

function session(id: string, change: Partial<SessionInfo> = {}): SessionInfo {
  return {
    id,
    title: `Session ${id}`,
    created_ms: 1,
    updated_ms: Date.now(),
    message_count: 2,
    state: "running",
    provider: "local",
    enforcement: "local",
    folders: [{ path: "/work/project", access: "read_write" }],
    settings: null,
    pending_approvals: 0,
    warning: null,
    ...change,
  };
}

describe("Sessions", () => {
  it("refreshes in place: a changed row shows its change, a new one appears, and the focused button keeps focus", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    let answer = [session("s1"), session("s2")];
    const app = scriptedApp({ "GET /v1/sessions": () => answer });
    renderInApp(app.state, () => <Sessions />);
    const close = await screen.findByRole("button", { name: "Close Session s1" });
    close.focus();
    expect(document.activeElement).toBe(close);

    answer = [session("s1", { message_count: 7 }), session("s2", { state: "stored" }), session("s3")];
    const reads = app.seen.filter((r) => r.path === "/v1/sessions").length;
    vi.advanceTimersByTime(5000);
    await waitFor(() => {
      expect(app.seen.filter((r) => r.path === "/v1/sessions").length).toBe(reads + 1);
    });
    await screen.findByRole("link", { name: "Session s3" });
    const rows = screen.getAllByRole("row");
    const first = rows.find((row) => row.textContent.includes("Session s1"));
    expect(first?.textContent).toContain("7 messages");
    // The row was updated, not rebuilt: the very button still holds the focus.
    expect(screen.getByRole("button", { name: "Close Session s1" })).toBe(close);
    expect(document.activeElement).toBe(close);
    const second = rows.find((row) => row.textContent.includes("Session s2"));
    expect(second && within(second).getByRole("button", { name: "Resume Session s2" })).toBeTruthy();
  });
});
