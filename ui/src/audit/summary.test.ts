import type { AuditRecord } from "@server/AuditRecord";
import type { StoredEvent } from "@server/StoredEvent";
import { describe, expect, it } from "vitest";
import { summarize } from "./summary";

function row(record: AuditRecord): StoredEvent {
  return { seq: 7, time_ms: 1, session_id: "s1", record, prev_hash: "a", hash: "b" };
}

function step(name: string, data: Record<string, unknown>) {
  return summarize(row({ type: "generic", name, data }));
}

describe("summarize", () => {
  it("names every step of a session in words, never by its event name", () => {
    const named: [string, Record<string, unknown>, string, string][] = [
      ["tool_call_requested", { call_id: "w1", tool: "write_file", args: { path: "/p/notes.txt" } }, "Request", "The agent asked to write /p/notes.txt"],
      ["tool_call_awaiting_approval", { call_id: "w1", summary: "write /p/notes.txt (5 bytes)", reason: "ask mode asks" }, "Approval", "Asked you: write /p/notes.txt (5 bytes) (ask mode asks)"],
      ["tool_call_approved", { call_id: "w1", by: "user", scope: "once" }, "Approval", "Call w1 allowed once by you"],
      ["tool_call_approved", { call_id: "w2", by: "standing_approval", scope: null }, "Approval", "Call w2 allowed by a standing approval"],
      ["tool_call_denied", { call_id: "w3", by: "safety_check", reason: "writes .git/hooks" }, "Approval", "Call w3 denied by a safety check: writes .git/hooks"],
      ["standing_approvals", { approvals: [{}, {}] }, "Approval", "Standing approvals in force: 2"],
      ["approval_revoked", { description: "commands starting with `ls`" }, "Approval", "Revoked: commands starting with `ls`"],
      ["sandbox_provisioning", { message: "starting the proxy" }, "Sandbox", "Building the sandbox: starting the proxy"],
      ["sandbox_ready", { enforcement: "local" }, "Sandbox", "Sandbox ready"],
      ["sandbox_recreated", { enforcement: "local", reason: "A host was allowed." }, "Sandbox", "Sandbox rebuilt: A host was allowed."],
      ["sandbox_refused", { reason: "no Landlock" }, "Sandbox", "Sandbox refused: no Landlock"],
      ["sandbox_closed", { checks: [{ passed: true }, { passed: false }] }, "Sandbox", "Sandbox closed; 1 check found something"],
      ["folder_granted", { grant: { path: "/p", access: "read_write" } }, "Folder", "Granted /p read-write"],
      ["folder_revoked", { path: "/p" }, "Folder", "Revoked /p"],
      ["host_allowed", { host: "example.com:80", live: false }, "Network", "Allowed example.com:80 for the session"],
      ["network_rule_decided", { rule: { rule_name: "pypi" }, approved: false }, "Network", "Rejected the drafted rule pypi"],
      ["turn_started", { text: "Write the notes" }, "Turn", "You: Write the notes"],
      ["assistant_message", { text: "Done." }, "Turn", "Agent: Done."],
      ["turn_finished", { stop_reason: "end_turn", steps: 3 }, "Turn", "Turn ended after 3 model requests"],
      ["protected_path_changed", { path: "/p/.vscode/tasks.json", detail: "created by the call", action: "quarantined" }, "Protected file", "/p/.vscode/tasks.json: created by the call"],
      ["notice", { source: "connector:tracker", message: "could not start" }, "Notice", "Connector tracker is not available in this session: could not start"],
      ["error", { code: "model_auth", message: "the key was refused" }, "Error", "the key was refused"],
    ];
    for (const [name, data, kind, what] of named) {
      const summary = step(name, data);
      expect([summary.kind, summary.what], name).toEqual([kind, what]);
    }
  });

  it("gives a step its outcome and wall where it has them", () => {
    expect(step("tool_call_approved", { call_id: "c", by: "user", scope: "session" })).toMatchObject({ outcome: "allow", tone: "ok" });
    expect(step("tool_call_denied", { call_id: "c", by: "user", reason: "no" })).toMatchObject({ outcome: "deny", tone: "danger" });
    expect(step("sandbox_ready", { enforcement: "local" }).enforcement).toBe("local");
    expect(step("turn_finished", { stop_reason: "interrupted", steps: 1 })).toMatchObject({ outcome: "interrupted", tone: "warn" });
    expect(step("error", { code: "model_auth", message: "x" }).outcome).toBe("model_auth");
  });

  it("survives a step whose fields are missing", () => {
    expect(step("tool_call_approved", {}).what).toBe("Call ? allowed by someone");
    expect(step("folder_granted", {}).what).toBe("Granted a folder read-only");
    expect(step("something_new", {}).what).toBe("something new");
  });

  it("names a host tool call's connector, from the row or from the tool's name", () => {
    const base = {
      call_id: "c1",
      args: { query: "paddock" },
      enforcement: "host" as const,
      decision: "allow" as const,
      decided_by: { kind: "user" as const, name: null },
      status: "finished" as const,
      exit_code: null,
      duration_ms: 12,
      truncated: false,
      output_preview: "found: paddock",
      error: null,
    };
    const recorded = summarize(row({ type: "tool_call", ...base, tool: "mcp__docs__lookup", connector: "docs" }));
    expect(recorded).toMatchObject({ kind: "Tool call", what: "Call docs › lookup", connector: "docs", enforcement: "host", outcome: "finished" });
    const older = summarize(row({ type: "tool_call", ...base, tool: "web_fetch", args: { url: "https://docs.rs/" } }));
    expect(older).toMatchObject({ what: "Fetch https://docs.rs/", connector: "web_fetch" });
    const sandboxed = summarize(row({ type: "tool_call", ...base, tool: "run_bash", args: { command: "ls" }, enforcement: "local" }));
    expect(sandboxed.connector).toBeNull();
  });
});
