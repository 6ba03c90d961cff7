import type { Attestation } from "@server/Attestation";
import type { EventMsg } from "@server/EventMsg";
import type { SessionSettings } from "@server/SessionSettings";
import { describe, expect, it } from "vitest";
import {
  awaitingCalls,
  emptyTimeline,
  noticeTitle,
  reduce,
  type TimelineItem,
  type TimelineState,
  type ToolCall,
} from "./timeline";

const SETTINGS: SessionSettings = {
  folders: [{ path: "/work/project", access: "read_write" }],
  cwd: null,
  network_profile: "strict",
  extra_hosts: [],
  credentials: [],
  secrets: [],
  model: null,
  approval_mode: "ask",
};

const ATTESTATION: Attestation = {
  enforcement: "local",
  config_hash: "sha256:ab",
  canaries: [
    { name: "home_absent", passed: true, detail: "no home" },
    { name: "no_new_privs", passed: true, detail: "set" },
  ],
  time_ms: 1,
};

/** Applies the messages in order as events 1, 2, … of turn `t1`; returns the state. */
function run(...messages: EventMsg[]): TimelineState {
  const state = emptyTimeline();
  messages.forEach((msg, i) => {
    reduce(state, { seq: i + 1, session_id: "s1", turn_id: "t1", time_ms: 1000 + i, msg });
  });
  return state;
}

function only<K extends TimelineItem["kind"]>(state: TimelineState, kind: K): Extract<TimelineItem, { kind: K }>[] {
  return state.items.filter((item): item is Extract<TimelineItem, { kind: K }> => item.kind === kind);
}

function theCall(state: TimelineState): ToolCall {
  const [call] = only(state, "tool");
  if (!call) {
    throw new Error("no tool call in the timeline");
  }
  return call;
}

const requested: EventMsg = { type: "tool_call_requested", call_id: "c1", tool: "run_bash", args: { command: "ls" } };

describe("reduce", () => {
  it("takes the session's settings and wall from session_created, and says when it was resumed", () => {
    const fresh = run({ type: "session_created", settings: SETTINGS, resumed: false, provider: "local" });
    expect(fresh.provider).toBe("local");
    expect(fresh.folders).toEqual(SETTINGS.folders);
    expect(fresh.items).toEqual([]);
    const resumed = run({ type: "session_created", settings: SETTINGS, resumed: true, provider: "local" });
    expect(only(resumed, "notice").map((n) => n.title)).toEqual(["Session resumed"]);
  });

  it("follows folder grants and revocations", () => {
    const state = run(
      { type: "session_created", settings: SETTINGS, resumed: false, provider: "local" },
      { type: "folder_granted", grant: { path: "/work/docs", access: "read_only" } },
      { type: "folder_revoked", path: "/work/project" },
    );
    expect(state.folders).toEqual([{ path: "/work/docs", access: "read_only" }]);
    expect(only(state, "notice").map((n) => [n.title, n.detail])).toEqual([
      ["Folder granted read-only", "/work/docs"],
      ["Folder revoked", "/work/project"],
    ]);
  });

  it("lists each allowed host once, with a notice each time", () => {
    const state = run(
      { type: "host_allowed", host: "example.com:80", live: false },
      { type: "host_allowed", host: "example.com:80", live: true },
    );
    expect(state.allowedHosts).toEqual(["example.com:80"]);
    expect(only(state, "notice").map((n) => n.detail)).toEqual([
      "The sandbox is rebuilt to let it through.",
      "In force at once.",
    ]);
  });

  it("records drafted rules decided, approved or rejected with the reason", () => {
    const rule = { id: "r1", rule_name: "allow-pypi", hosts: ["pypi.org:443"], binary: "/usr/bin/pip", rationale: "pip", hit_count: 2 };
    const state = run(
      { type: "network_rule_decided", rule, approved: true, reason: null },
      { type: "network_rule_decided", rule, approved: false, reason: "not now" },
    );
    expect(state.decidedRules).toHaveLength(2);
    expect(only(state, "notice").map((n) => [n.tone, n.title, n.detail])).toEqual([
      ["ok", "Approved the drafted rule allow-pypi", "pypi.org:443"],
      ["info", "Rejected the drafted rule allow-pypi", "not now"],
    ]);
  });

  it("tells the sandbox's story: built step by step, ready with its attestation, rebuilt, refused", () => {
    const state = run(
      { type: "sandbox_provisioning", message: "mounting the folders" },
      { type: "sandbox_provisioning", message: "starting the proxy" },
      { type: "sandbox_ready", sandbox_id: "sb1", enforcement: "local", attestation: ATTESTATION },
      { type: "sandbox_recreated", sandbox_id: "sb2", enforcement: "local", attestation: ATTESTATION, reason: "A folder was granted." },
      { type: "sandbox_refused", reason: "Landlock is missing", diagnose: "paddock machine sandbox status" },
    );
    const builds = only(state, "sandbox");
    expect(builds.map((b) => b.state)).toEqual(["ready", "ready", "refused"]);
    expect(builds[0]?.steps).toEqual(["mounting the folders", "starting the proxy"]);
    expect(builds[0]?.attestation).toEqual(ATTESTATION);
    expect(builds[1]?.rebuiltBecause).toBe("A folder was granted.");
    expect(builds[2]?.refusal).toEqual({ reason: "Landlock is missing", diagnose: "paddock machine sandbox status" });
  });

  it("says what closing the sandbox found, and nothing when every check passed", () => {
    const clean = run({ type: "sandbox_closed", sandbox_id: "sb1", checks: [{ name: "setid", passed: true, detail: "none" }] });
    expect(clean.items).toEqual([]);
    const found = run({
      type: "sandbox_closed",
      sandbox_id: "sb1",
      checks: [{ name: "setid", passed: false, detail: "Stripped the set-uid bit of /work/project/x." }],
    });
    expect(only(found, "notice").map((n) => [n.tone, n.detail])).toEqual([
      ["warn", "Stripped the set-uid bit of /work/project/x."],
    ]);
  });

  it("streams the model's text into one message per turn and settles it with the final text", () => {
    const state = run(
      { type: "turn_started", text: "Write the notes" },
      { type: "model_text_delta", text: "I will " },
      { type: "model_text_delta", text: "write them." },
      { type: "assistant_message", text: "I will write them." },
      { type: "assistant_message", text: "   " },
      { type: "assistant_message", text: "Done." },
    );
    expect(state.turnRunning).toBe(true);
    expect(only(state, "user").map((u) => u.text)).toEqual(["Write the notes"]);
    expect(only(state, "assistant").map((a) => [a.text, a.streaming])).toEqual([
      ["I will write them.", false],
      ["Done.", false],
    ]);
  });

  it("follows a call from request through approval and start to its result", () => {
    const state = run(
      requested,
      {
        type: "tool_call_awaiting_approval",
        call_id: "c1",
        tool: "run_bash",
        args: { command: "ls" },
        summary: "ls",
        reason: "ask mode asks before commands",
        lasting_allowed: true,
      },
    );
    expect(awaitingCalls(state).map((c) => c.callId)).toEqual(["c1"]);
    expect(theCall(state)).toMatchObject({ phase: "awaiting", summary: "ls", reason: "ask mode asks before commands", lastingAllowed: true });
    reduce(state, { seq: 3, session_id: "s1", turn_id: "t1", time_ms: 5, msg: { type: "tool_call_approved", call_id: "c1", by: "user", scope: "session" } });
    expect(theCall(state)).toMatchObject({ phase: "approved", decidedBy: "user", scope: "session" });
    reduce(state, {
      seq: 4,
      session_id: "s1",
      turn_id: "t1",
      time_ms: 6,
      msg: { type: "tool_call_started", call_id: "c1", tool: "run_bash", args: { command: "ls" }, sandbox_id: "sb1", enforcement: "local" },
    });
    expect(theCall(state)).toMatchObject({ phase: "running", enforcement: "local", startedMs: 6 });
    // Output chunks go to the call's live buffer, never into the timeline.
    reduce(state, { seq: 5, session_id: "s1", turn_id: "t1", time_ms: 7, msg: { type: "tool_call_output", call_id: "c1", stream: "stdout", chunk: "a\n" } });
    reduce(state, {
      seq: 6,
      session_id: "s1",
      turn_id: "t1",
      time_ms: 8,
      msg: {
        type: "tool_call_finished",
        call_id: "c1",
        tool: "run_bash",
        status: "ok",
        exit_code: 0,
        duration_ms: 42,
        truncated: true,
        timed_out: false,
        enforcement: "local",
        network_denials: [{ host: "example.com", port: 80, binary: "/usr/bin/curl", reason: "not allowed", rule: null, time_ms: 7 }],
        output: "a\n",
      },
    });
    expect(awaitingCalls(state)).toEqual([]);
    expect(state.items).toHaveLength(1);
    expect(theCall(state)).toMatchObject({
      phase: "finished",
      status: "ok",
      exitCode: 0,
      durationMs: 42,
      truncated: true,
      timedOut: false,
      output: "a\n",
    });
    expect(theCall(state).networkDenials.map((d) => `${d.host}:${d.port}`)).toEqual(["example.com:80"]);
  });

  it("keeps a denied call denied when it finishes, with who denied it and why", () => {
    const state = run(requested, { type: "tool_call_denied", call_id: "c1", by: "safety_check", reason: "writes .git/hooks" });
    expect(theCall(state)).toMatchObject({ phase: "denied", status: "denied", decidedBy: "safety_check", denyReason: "writes .git/hooks" });
    reduce(state, {
      seq: 3,
      session_id: "s1",
      turn_id: "t1",
      time_ms: 3,
      msg: {
        type: "tool_call_finished",
        call_id: "c1",
        tool: "run_bash",
        status: "denied",
        exit_code: null,
        duration_ms: 0,
        truncated: false,
        timed_out: false,
        enforcement: "local",
        network_denials: [],
        output: "denied",
      },
    });
    expect(theCall(state).phase).toBe("denied");
  });

  it("ignores an approval or denial of a call it never saw", () => {
    const state = run(
      { type: "tool_call_approved", call_id: "ghost", by: "user", scope: "once" },
      { type: "tool_call_denied", call_id: "ghost", by: "user", reason: "no" },
    );
    expect(state.items).toEqual([]);
  });

  it("shows a protected file a call changed, with what Paddock did", () => {
    const state = run({
      type: "protected_path_changed",
      call_id: "c1",
      path: "/work/project/.vscode/tasks.json",
      reason: "editors run the tasks it defines",
      action: "quarantined",
      quarantined_to: "/state/quarantine/1/tasks.json",
      detail: "created by the call",
    });
    expect(only(state, "protected")).toEqual([
      {
        kind: "protected",
        key: "p-1",
        callId: "c1",
        path: "/work/project/.vscode/tasks.json",
        reason: "editors run the tasks it defines",
        action: "quarantined",
        quarantinedTo: "/state/quarantine/1/tasks.json",
        detail: "created by the call",
        timeMs: 1000,
      },
    ]);
  });

  it("keeps the standing approvals the session announces, and notes a revoked one", () => {
    const state = run(
      { type: "standing_approvals", approvals: [{ id: "a1", scope: "session", description: "commands starting with `cargo test`" }] },
      { type: "approval_revoked", approval_id: "a1", scope: "session", description: "commands starting with `cargo test`" },
      { type: "standing_approvals", approvals: [] },
    );
    expect(state.standing).toEqual([]);
    expect(only(state, "notice").map((n) => [n.title, n.detail])).toEqual([
      ["Standing approval revoked", "commands starting with `cargo test`"],
    ]);
  });

  it("ends a turn with a notice for every stop but a plain end", () => {
    const state = run(
      { type: "turn_started", text: "go" },
      { type: "model_text_delta", text: "partial" },
      { type: "turn_finished", stop_reason: "interrupted", steps: 1 },
    );
    expect(state.turnRunning).toBe(false);
    expect(state.lastStop).toBe("interrupted");
    expect(only(state, "assistant")[0]?.streaming).toBe(false);
    expect(only(state, "notice").map((n) => n.title)).toEqual(["Interrupted"]);
    const plain = run({ type: "turn_started", text: "go" }, { type: "turn_finished", stop_reason: "end_turn", steps: 1 });
    expect(only(plain, "notice")).toEqual([]);
  });

  it("shows errors with a title from their code", () => {
    const state = run(
      { type: "error", code: "model_auth", message: "401 from the API" },
      { type: "error", code: "internal", message: "boom" },
    );
    expect(only(state, "notice").map((n) => [n.tone, n.title, n.detail])).toEqual([
      ["danger", "The model API refused the key", "401 from the API"],
      ["danger", "Something went wrong", "boom"],
    ]);
  });

  it("shows the host's notices: a connector that could not start, a project file ignored", () => {
    const state = run(
      { type: "notice", source: "connector:tracker", message: "the connector `tracker` could not start: no such file" },
      { type: "notice", source: "project:/work/project/.paddock/config.toml", message: "ignored: [[connectors]]" },
    );
    expect(only(state, "notice").map((n) => [n.tone, n.title, n.detail])).toEqual([
      ["warn", "Connector tracker is not available in this session", "the connector `tracker` could not start: no such file"],
      ["warn", "Settings in /work/project/.paddock/config.toml were ignored", "ignored: [[connectors]]"],
    ]);
  });

  it("marks the session closed and stops the turn", () => {
    const state = run({ type: "turn_started", text: "go" }, { type: "session_closed" });
    expect(state.closed).toBe(true);
    expect(state.turnRunning).toBe(false);
    expect(only(state, "notice").at(-1)?.title).toBe("Session closed");
  });
});

describe("noticeTitle", () => {
  it("names what it can and quotes any other source", () => {
    expect(noticeTitle("connector:web_fetch")).toBe("Connector web_fetch is not available in this session");
    expect(noticeTitle("connector")).toBe("A connector is not available");
    expect(noticeTitle("project")).toBe("A project file's settings were ignored");
    expect(noticeTitle("keychain")).toBe("Notice from keychain");
    expect(noticeTitle("")).toBe("Notice");
  });
});
