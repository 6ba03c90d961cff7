import type { ApprovalScope } from "@server/ApprovalScope";
import type { Attestation } from "@server/Attestation";
import type { DecidedBy } from "@server/DecidedBy";
import type { DraftedRule } from "@server/DraftedRule";
import type { EnforcementLevel } from "@server/EnforcementLevel";
import type { Event } from "@server/Event";
import type { FolderGrant } from "@server/FolderGrant";
import type { NetworkDenial } from "@server/NetworkDenial";
import type { ProtectedAction } from "@server/ProtectedAction";
import type { ProviderKind } from "@server/ProviderKind";
import type { SessionSettings } from "@server/SessionSettings";
import type { StandingApproval } from "@server/StandingApproval";
import type { ToolCallStatus } from "@server/ToolCallStatus";
import type { TurnStopReason } from "@server/TurnStopReason";

/**
 * A session's conversation as the session view shows it, built from its events in order: the
 * user's messages, the model's text (streamed, then final), a card per tool call that follows
 * the call from request through approval to its result, the sandbox's own story (built,
 * rebuilt, refused), what the host reported (a connector that could not start, a project file
 * it ignored) and the protected files a command changed. `reduce` is pure over a mutable state, so the view can run it inside a
 * store update and the tests can run it on a plain object.
 *
 * Live output chunks (`tool_call_output`) do not pass through here: they go straight to the
 * call's output buffer (see `SessionView`), so megabytes of output never touch this state.
 */

export type ToolPhase = "requested" | "awaiting" | "approved" | "denied" | "running" | "finished";

export interface ToolCall {
  kind: "tool";
  key: string;
  callId: string;
  tool: string;
  args: unknown;
  phase: ToolPhase;
  /** What the call would do, in one line (asked calls only). */
  summary: string | null;
  /** Why the user was asked (the rule that asked). */
  reason: string | null;
  /** Whether `session`/`always` answers are offered. */
  lastingAllowed: boolean;
  decidedBy: DecidedBy | null;
  scope: ApprovalScope | null;
  denyReason: string | null;
  enforcement: EnforcementLevel | null;
  status: ToolCallStatus | null;
  exitCode: number | null;
  durationMs: number | null;
  truncated: boolean;
  timedOut: boolean;
  networkDenials: NetworkDenial[];
  /** The result as recorded for the audit trail (capped). */
  output: string;
  startedMs: number | null;
}

export interface UserMessage {
  kind: "user";
  key: string;
  text: string;
  timeMs: number;
}

export interface AssistantMessage {
  kind: "assistant";
  key: string;
  text: string;
  /** Still arriving (deltas only so far). */
  streaming: boolean;
  turnId: string | null;
}

export type NoticeTone = "info" | "ok" | "warn" | "danger";

export interface Notice {
  kind: "notice";
  key: string;
  tone: NoticeTone;
  title: string;
  detail: string | null;
  timeMs: number;
}

export interface SandboxBuild {
  kind: "sandbox";
  key: string;
  /** Progress messages while the wall is built. */
  steps: string[];
  state: "building" | "ready" | "refused";
  enforcement: EnforcementLevel | null;
  attestation: Attestation | null;
  /** Why it was rebuilt (a grant changed, a host allowed), when it was. */
  rebuiltBecause: string | null;
  /** Why the wall refused, and the command that explains and fixes it. */
  refusal: { reason: string; diagnose: string } | null;
}

/** A file the host runs later (the protected list) that a session created or changed. */
export interface ProtectedChange {
  kind: "protected";
  key: string;
  /** The call after which it was found; null at turn end or close. */
  callId: string | null;
  path: string;
  /** Why it is protected, in the protected list's words. */
  reason: string;
  action: ProtectedAction;
  /** Where the original went (under Paddock's state folder), when it was quarantined. */
  quarantinedTo: string | null;
  /** What was found, in plain words. */
  detail: string;
  timeMs: number;
}

export type TimelineItem =
  | UserMessage
  | AssistantMessage
  | ToolCall
  | Notice
  | SandboxBuild
  | ProtectedChange;

export interface TimelineState {
  items: TimelineItem[];
  /** Index of each tool call's item by call id. */
  calls: Record<string, number>;
  provider: ProviderKind | null;
  settings: SessionSettings | null;
  folders: FolderGrant[];
  /** Hosts allowed during the session (beyond its profile). */
  allowedHosts: string[];
  /** A turn is running (started, not finished). */
  turnRunning: boolean;
  lastStop: TurnStopReason | null;
  closed: boolean;
  /** The drafted rules decided in this session. */
  decidedRules: DraftedRule[];
  /**
   * The standing approvals in force, as the session last announced them (`null` until it
   * does: the view reads them from the API until then).
   */
  standing: StandingApproval[] | null;
}

export function emptyTimeline(): TimelineState {
  return {
    items: [],
    calls: {},
    provider: null,
    settings: null,
    folders: [],
    allowedHosts: [],
    turnRunning: false,
    lastStop: null,
    closed: false,
    decidedRules: [],
    standing: null,
  };
}

/** A call as its request shows it: nothing decided, run or returned yet. */
export function newToolCall(callId: string, tool: string, args: unknown): ToolCall {
  return {
    kind: "tool",
    key: `call-${callId}`,
    callId,
    tool,
    args,
    phase: "requested",
    summary: null,
    reason: null,
    lastingAllowed: false,
    decidedBy: null,
    scope: null,
    denyReason: null,
    enforcement: null,
    status: null,
    exitCode: null,
    durationMs: null,
    truncated: false,
    timedOut: false,
    networkDenials: [],
    output: "",
    startedMs: null,
  };
}

function call(state: TimelineState, callId: string, tool: string, args: unknown): ToolCall {
  const index = state.calls[callId];
  const existing = index === undefined ? undefined : state.items[index];
  if (existing?.kind === "tool") {
    return existing;
  }
  const created = newToolCall(callId, tool, args);
  state.calls[callId] = state.items.length;
  state.items.push(created);
  return created;
}

function knownCall(state: TimelineState, callId: string): ToolCall | undefined {
  const index = state.calls[callId];
  const item = index === undefined ? undefined : state.items[index];
  return item?.kind === "tool" ? item : undefined;
}

function notice(
  state: TimelineState,
  event: Event,
  tone: NoticeTone,
  title: string,
  detail: string | null = null,
): void {
  state.items.push({ kind: "notice", key: `n-${event.seq}`, tone, title, detail, timeMs: event.time_ms });
}

/** The sandbox item being built (the last one, if still building), or a new one. */
function sandbox(state: TimelineState, event: Event): SandboxBuild {
  const last = [...state.items].reverse().find((i): i is SandboxBuild => i.kind === "sandbox");
  if (last?.state === "building") {
    return last;
  }
  const created: SandboxBuild = {
    kind: "sandbox",
    key: `sb-${event.seq}`,
    steps: [],
    state: "building",
    enforcement: null,
    attestation: null,
    rebuiltBecause: null,
    refusal: null,
  };
  state.items.push(created);
  return created;
}

const STOP_NOTICES: Partial<Record<TurnStopReason, [NoticeTone, string]>> = {
  interrupted: ["warn", "Interrupted"],
  max_tokens: ["warn", "The model's answer was cut at its token limit"],
  step_limit: ["warn", "The turn stopped at its step limit"],
  sandbox_refused: ["danger", "The turn stopped: the sandbox was refused"],
  error: ["danger", "The turn stopped on an error"],
};

/** Applies one event to `state` (mutating it). */
export function reduce(state: TimelineState, event: Event): void {
  const msg = event.msg;
  switch (msg.type) {
    case "session_created":
      state.provider = msg.provider;
      state.closed = false;
      state.settings = msg.settings;
      state.folders = [...msg.settings.folders];
      if (msg.resumed) {
        notice(state, event, "info", "Session resumed");
      }
      break;
    case "folder_granted":
      state.folders = [...state.folders.filter((f) => f.path !== msg.grant.path), msg.grant];
      notice(
        state,
        event,
        "info",
        `Folder granted ${msg.grant.access === "read_write" ? "read-write" : "read-only"}`,
        msg.grant.path,
      );
      break;
    case "folder_revoked":
      state.folders = state.folders.filter((f) => f.path !== msg.path);
      notice(state, event, "info", "Folder revoked", msg.path);
      break;
    case "host_allowed":
      if (!state.allowedHosts.includes(msg.host)) {
        state.allowedHosts.push(msg.host);
      }
      notice(
        state,
        event,
        "ok",
        `Allowed ${msg.host} for this session`,
        msg.live ? "In force at once." : "The sandbox is rebuilt to let it through.",
      );
      break;
    case "network_rule_decided":
      state.decidedRules.push(msg.rule);
      notice(
        state,
        event,
        msg.approved ? "ok" : "info",
        `${msg.approved ? "Approved" : "Rejected"} the drafted rule ${msg.rule.rule_name}`,
        msg.reason ?? msg.rule.hosts.join(", "),
      );
      break;
    case "sandbox_provisioning":
      sandbox(state, event).steps.push(msg.message);
      break;
    case "sandbox_ready": {
      const build = sandbox(state, event);
      build.state = "ready";
      build.enforcement = msg.enforcement;
      build.attestation = msg.attestation;
      break;
    }
    case "sandbox_recreated": {
      const build = sandbox(state, event);
      build.state = "ready";
      build.enforcement = msg.enforcement;
      build.attestation = msg.attestation;
      build.rebuiltBecause = msg.reason;
      break;
    }
    case "sandbox_closed": {
      const failed = msg.checks.filter((check) => !check.passed);
      if (failed.length > 0) {
        notice(
          state,
          event,
          "warn",
          "Closing the sandbox found something to fix",
          failed.map((check) => check.detail).join(" "),
        );
      }
      break;
    }
    case "sandbox_refused": {
      const build = sandbox(state, event);
      build.state = "refused";
      build.refusal = { reason: msg.reason, diagnose: msg.diagnose };
      break;
    }
    case "turn_started":
      state.turnRunning = true;
      state.lastStop = null;
      state.items.push({ kind: "user", key: `u-${event.seq}`, text: msg.text, timeMs: event.time_ms });
      break;
    case "model_text_delta": {
      const last = state.items.at(-1);
      if (last?.kind === "assistant" && last.streaming && last.turnId === event.turn_id) {
        last.text += msg.text;
      } else {
        state.items.push({
          kind: "assistant",
          key: `a-${event.seq}`,
          text: msg.text,
          streaming: true,
          turnId: event.turn_id,
        });
      }
      break;
    }
    case "assistant_message": {
      const last = state.items.at(-1);
      if (last?.kind === "assistant" && last.streaming && last.turnId === event.turn_id) {
        last.text = msg.text;
        last.streaming = false;
      } else if (msg.text.trim() !== "") {
        state.items.push({
          kind: "assistant",
          key: `a-${event.seq}`,
          text: msg.text,
          streaming: false,
          turnId: event.turn_id,
        });
      }
      break;
    }
    case "tool_call_requested":
      call(state, msg.call_id, msg.tool, msg.args);
      break;
    case "tool_call_awaiting_approval": {
      const c = call(state, msg.call_id, msg.tool, msg.args);
      c.phase = "awaiting";
      c.summary = msg.summary;
      c.reason = msg.reason;
      c.lastingAllowed = msg.lasting_allowed;
      break;
    }
    case "tool_call_approved": {
      const c = knownCall(state, msg.call_id);
      if (c) {
        c.phase = "approved";
        c.decidedBy = msg.by;
        c.scope = msg.scope;
      }
      break;
    }
    case "tool_call_denied": {
      const c = knownCall(state, msg.call_id);
      if (c) {
        c.phase = "denied";
        c.decidedBy = msg.by;
        c.denyReason = msg.reason;
        c.status = "denied";
      }
      break;
    }
    case "tool_call_started": {
      const c = call(state, msg.call_id, msg.tool, msg.args);
      c.phase = "running";
      c.enforcement = msg.enforcement;
      c.startedMs = event.time_ms;
      break;
    }
    case "tool_call_output":
      break;
    case "tool_call_finished": {
      const c = call(state, msg.call_id, msg.tool, null);
      c.phase = c.phase === "denied" ? "denied" : "finished";
      c.status = msg.status;
      c.exitCode = msg.exit_code;
      c.durationMs = msg.duration_ms;
      c.truncated = msg.truncated;
      c.timedOut = msg.timed_out;
      c.enforcement = msg.enforcement;
      c.networkDenials = msg.network_denials;
      c.output = msg.output;
      break;
    }
    case "standing_approvals":
      state.standing = [...msg.approvals];
      break;
    case "approval_revoked":
      notice(state, event, "info", "Standing approval revoked", msg.description);
      break;
    case "turn_finished": {
      state.turnRunning = false;
      state.lastStop = msg.stop_reason;
      const last = state.items.at(-1);
      if (last?.kind === "assistant") {
        last.streaming = false;
      }
      const stop = STOP_NOTICES[msg.stop_reason];
      if (stop) {
        notice(state, event, stop[0], stop[1]);
      }
      break;
    }
    case "error":
      notice(state, event, "danger", errorTitle(msg.code), msg.message);
      break;
    case "notice":
      notice(state, event, "warn", noticeTitle(msg.source), msg.message);
      break;
    case "protected_path_changed":
      state.items.push({
        kind: "protected",
        key: `p-${event.seq}`,
        callId: msg.call_id,
        path: msg.path,
        reason: msg.reason,
        action: msg.action,
        quarantinedTo: msg.quarantined_to,
        detail: msg.detail,
        timeMs: event.time_ms,
      });
      break;
    case "session_closed":
      state.turnRunning = false;
      state.closed = true;
      notice(state, event, "info", "Session closed", "Resume it to continue where it stopped.");
      break;
    default: {
      // Every kind of event is handled above: a new one fails the type check here.
      const unhandled: never = msg;
      return unhandled;
    }
  }
}

/**
 * A notice's title from its source: `connector:<name>` (a connector that could not start),
 * `project:<file>` (a project file's settings ignored), or anything else the host reports.
 */
export function noticeTitle(source: string): string {
  const colon = source.indexOf(":");
  const kind = colon === -1 ? source : source.slice(0, colon);
  const name = colon === -1 ? "" : source.slice(colon + 1);
  switch (kind) {
    case "connector":
      return name ? `Connector ${name} is not available in this session` : "A connector is not available";
    case "project":
      return name ? `Settings in ${name} were ignored` : "A project file's settings were ignored";
    default:
      return source ? `Notice from ${source}` : "Notice";
  }
}

function errorTitle(code: string): string {
  switch (code) {
    case "model_auth":
      return "The model API refused the key";
    case "model_unavailable":
      return "The model API could not be reached";
    case "model_context_too_long":
      return "The conversation is too long for the model";
    case "sandbox_refused":
    case "sandbox_failed":
      return "The sandbox failed";
    default:
      return "Something went wrong";
  }
}

/** Every pending approval of the timeline, oldest first. */
export function awaitingCalls(state: TimelineState): ToolCall[] {
  return state.items.filter((i): i is ToolCall => i.kind === "tool" && i.phase === "awaiting");
}
