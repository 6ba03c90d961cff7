import { cleanup, fireEvent, screen, waitFor } from "@solidjs/testing-library";
import { afterEach, describe, expect, it } from "vitest";
import { createLiveOutput } from "../output/LiveOutput";
import { renderInApp, scriptedApp } from "../testing/app";
import { newToolCall, type ToolCall } from "./timeline";
import { ToolCallCard } from "./ToolCallCard";

afterEach(cleanup);

function call(change: Partial<ToolCall> = {}): ToolCall {
  return { ...newToolCall("c1", "run_bash", { command: "cargo test" }), ...change };
}

function show(value: ToolCall, options: { canAct?: boolean; allowedHosts?: string[]; withLive?: boolean } = {}) {
  const app = scriptedApp({ "POST /v1/sessions/s1/network/allow": () => new Response(null, { status: 202 }) });
  const live = options.withLive
    ? createLiveOutput({}, (run) => {
        run();
      })
    : undefined;
  renderInApp(app.state, () => (
    <ToolCallCard
      sessionId="s1"
      call={value}
      live={live}
      allowedHosts={options.allowedHosts ?? []}
      canAct={options.canAct ?? true}
    />
  ));
  return { app, live, card: () => screen.getByRole("article") };
}

describe("ToolCallCard", () => {
  it("waiting: asks with the exact command and the rule, only where the user can answer", () => {
    const waiting = call({ phase: "awaiting", summary: "cargo test", reason: "ask mode asks before commands", lastingAllowed: true });
    show(waiting);
    const prompt = screen.getByRole("group", { name: "Approval needed" });
    expect(prompt.textContent).toContain("cargo test");
    expect(prompt.textContent).toContain("ask mode asks before commands");
    expect(screen.getByRole("button", { name: "Allow for this session" })).toBeTruthy();
    expect(screen.getByText("Waiting for you")).toBeTruthy();
    cleanup();
    show(waiting, { canAct: false });
    expect(screen.queryByRole("group", { name: "Approval needed" })).toBeNull();
  });

  it("running: its wall, a running badge and the live output", () => {
    const { live } = show(call({ phase: "running", enforcement: "local" }), { withLive: true });
    live?.append("compiling paddock\n");
    expect(screen.getByText("Local wall")).toBeTruthy();
    expect(screen.getByText("Running")).toBeTruthy();
    expect(screen.getByRole("log", { name: "Output of Run cargo test" })).toBeTruthy();
  });

  it("finished: how it ended, its exit code, duration, result and flags", () => {
    show(
      call({
        phase: "finished",
        status: "ok",
        exitCode: 0,
        durationMs: 3400,
        enforcement: "local",
        output: "test result: ok",
        truncated: true,
        timedOut: true,
        decidedBy: "user",
        scope: "once",
      }),
    );
    expect(screen.getByText("Done · exit 0")).toBeTruthy();
    expect(screen.getByText("3.4 s")).toBeTruthy();
    expect(screen.getByText("test result: ok")).toBeTruthy();
    expect(screen.getByText("Truncated")).toBeTruthy();
    expect(screen.getByText("Timed out")).toBeTruthy();
    expect(screen.getByText("Allowed once by you")).toBeTruthy();
  });

  it("failed, cancelled and denied calls say so", () => {
    show(call({ phase: "finished", status: "error", exitCode: 2 }));
    expect(screen.getByText("Failed · exit 2")).toBeTruthy();
    cleanup();
    show(call({ phase: "finished", status: "cancelled" }));
    expect(screen.getByText("Cancelled")).toBeTruthy();
    cleanup();
    show(call({ phase: "denied", status: "denied", decidedBy: "safety_check", denyReason: "it writes .git/hooks" }));
    expect(screen.getByText("Denied")).toBeTruthy();
    expect(screen.getByText("Denied by a safety check: it writes .git/hooks")).toBeTruthy();
  });

  it("names a connector's call by its connector and tool", () => {
    show(call({ tool: "mcp__tracker__create_issue", args: { title: "x" }, phase: "finished", status: "ok", enforcement: "host" }));
    expect(screen.getByText("Call")).toBeTruthy();
    expect(screen.getByText("tracker › create_issue")).toBeTruthy();
    expect(screen.getByText("Host")).toBeTruthy();
  });

  it("a refused connection: host:port and program, allowed for the session through the API", async () => {
    const { app } = show(
      call({
        phase: "finished",
        status: "ok",
        exitCode: 0,
        networkDenials: [
          { host: "example.com", port: 80, binary: "/usr/bin/curl", reason: "not on the allow list", rule: null, time_ms: 1 },
          { host: "pypi.org", port: 443, binary: null, reason: "not on the allow list", rule: null, time_ms: 2 },
        ],
      }),
      { allowedHosts: ["pypi.org"] },
    );
    const region = screen.getByRole("region", { name: "Refused connections" });
    expect(region.textContent).toContain("The network policy refused 2 connections");
    expect(region.textContent).toContain("example.com:80");
    expect(region.textContent).toContain("by /usr/bin/curl");
    // pypi.org (port 443, written without it) is already allowed: no buttons for it.
    expect(screen.getAllByRole("button", { name: "Allow for this session" })).toHaveLength(1);
    fireEvent.click(screen.getByRole("button", { name: "Allow for this session" }));
    await waitFor(() => {
      expect(app.seen.find((r) => r.path === "/v1/sessions/s1/network/allow")?.body).toEqual({
        host: "example.com:80",
        scope: "session",
      });
    });
    await waitFor(() => {
      expect(screen.queryAllByRole("button", { name: "Allow for this session" })).toHaveLength(0);
    });
    expect(screen.getAllByText("Allowed for this session")).toHaveLength(2);
  });
});
