import type { AuditRecord } from "@server/AuditRecord";
import type { DecidedBy } from "@server/DecidedBy";
import type { EnforcementLevel } from "@server/EnforcementLevel";
import type { GenericRecord } from "@server/GenericRecord";
import type { StoredEvent } from "@server/StoredEvent";
import { connectorTool, DECIDERS, describeCall } from "../session/describe";
import { noticeTitle } from "../session/timeline";

/** One audit row in words, for the table: what happened, and the wall it happened in. */
export interface RowSummary {
  kind: string;
  what: string;
  enforcement: EnforcementLevel | null;
  /** `allow`/`deny`, or the call's status, or the session event. */
  outcome: string | null;
  tone: "ok" | "warn" | "danger" | "neutral" | "info";
  /** The connector that ran a host tool call (`web_fetch` or an MCP connector's name). */
  connector: string | null;
}

const KIND_LABELS: Record<Exclude<AuditRecord["type"], "generic">, string> = {
  session: "Session",
  attestation: "Attestation",
  tool_call: "Tool call",
  network_denial: "Denial",
};

const STOP_WORDS: Record<string, string> = {
  end_turn: "done",
  max_tokens: "cut at the token limit",
  interrupted: "interrupted",
  step_limit: "stopped at the step limit",
  sandbox_refused: "the sandbox was refused",
  error: "stopped on an error",
};

export function summarize(row: StoredEvent): RowSummary {
  const record = row.record;
  const plain = { enforcement: null, connector: null } as const;
  switch (record.type) {
    case "session":
      return {
        ...plain,
        kind: KIND_LABELS.session,
        what: [
          `Session ${record.event}`,
          record.provider ? `on ${record.provider}` : null,
          record.approval_mode ? `(${record.approval_mode})` : null,
          record.folders.length > 0 ? `· ${record.folders.join(", ")}` : null,
        ]
          .filter((part) => part !== null)
          .join(" "),
        outcome: record.event,
        tone: "neutral",
      };
    case "attestation": {
      const passed = record.canaries.filter((c) => c.passed).length;
      return {
        ...plain,
        kind: KIND_LABELS.attestation,
        what: `Wall attested: ${passed} of ${record.canaries.length} checks passed`,
        enforcement: record.enforcement,
        outcome: passed === record.canaries.length ? "passed" : "failed",
        tone: passed === record.canaries.length ? "ok" : "danger",
      };
    }
    case "tool_call": {
      const call = describeCall(record.tool, record.args);
      const tone =
        record.status === "finished"
          ? "ok"
          : record.status === "denied" || record.status === "failed"
            ? "danger"
            : record.status === "cancelled"
              ? "warn"
              : "neutral";
      return {
        kind: KIND_LABELS.tool_call,
        what: `${call.verb}${call.target ? ` ${call.target}` : ""}`,
        enforcement: record.enforcement,
        outcome: record.status + (record.exit_code !== null ? ` · exit ${record.exit_code}` : ""),
        tone,
        connector: record.connector ?? connectorTool(record.tool)?.connector ?? null,
      };
    }
    case "network_denial":
      return {
        ...plain,
        kind: KIND_LABELS.network_denial,
        what: `${record.denial.host}:${record.denial.port} refused${record.denial.binary ? ` (${record.denial.binary})` : ""}`,
        outcome: "deny",
        tone: "danger",
      };
    case "generic":
      return { ...plain, ...describeStep(record) };
  }
}

/** A field of a step's data as text (`null` when absent or not text). */
function text(data: unknown, key: string): string | null {
  if (typeof data === "object" && data !== null && key in data) {
    const value = (data as Record<string, unknown>)[key];
    return typeof value === "string" ? value : null;
  }
  return null;
}

function field(data: unknown, key: string): unknown {
  return typeof data === "object" && data !== null ? (data as Record<string, unknown>)[key] : undefined;
}

function list(data: unknown, key: string): unknown[] {
  const value = field(data, key);
  return Array.isArray(value) ? (value as unknown[]) : [];
}

function decider(data: unknown): string {
  const by = text(data, "by");
  return by && by in DECIDERS ? DECIDERS[by as DecidedBy] : "someone";
}

function enforcementOf(data: unknown): EnforcementLevel | null {
  const value = text(data, "enforcement");
  return value === "openshell" || value === "local" || value === "none" || value === "host" ? value : null;
}

type Step = Omit<RowSummary, "connector">;

/**
 * A step of a session recorded as it happened (the trail's `generic` rows carry the event's own
 * fields): named in words, never by the event's internal name.
 */
export function describeStep(record: GenericRecord): Step {
  const data = record.data;
  const step = (kind: string, what: string, outcome: string | null = null, tone: Step["tone"] = "neutral"): Step => ({
    kind,
    what,
    enforcement: null,
    outcome,
    tone,
  });
  const callId = text(data, "call_id") ?? "?";
  switch (record.name) {
    case "tool_call_requested": {
      const call = describeCall(text(data, "tool") ?? "", field(data, "args"));
      return step("Request", `The agent asked to ${call.verb.toLowerCase()}${call.target ? ` ${call.target}` : ""}`);
    }
    case "tool_call_awaiting_approval":
      return step(
        "Approval",
        `Asked you: ${text(data, "summary") ?? callId}${text(data, "reason") ? ` (${text(data, "reason") ?? ""})` : ""}`,
        "asked",
        "warn",
      );
    case "tool_call_approved": {
      const scope = text(data, "scope");
      const how = scope === "session" ? " for the session" : scope === "always" ? " always" : scope === "once" ? " once" : "";
      return step("Approval", `Call ${callId} allowed${how} by ${decider(data)}`, "allow", "ok");
    }
    case "tool_call_denied":
      return step(
        "Approval",
        `Call ${callId} denied by ${decider(data)}${text(data, "reason") ? `: ${text(data, "reason") ?? ""}` : ""}`,
        "deny",
        "danger",
      );
    case "standing_approvals":
      return step("Approval", `Standing approvals in force: ${list(data, "approvals").length}`);
    case "approval_revoked":
      return step("Approval", `Revoked: ${text(data, "description") ?? "a standing approval"}`, "revoked", "warn");
    case "sandbox_provisioning":
      return step("Sandbox", `Building the sandbox: ${text(data, "message") ?? ""}`);
    case "sandbox_ready":
      return { ...step("Sandbox", "Sandbox ready", "ready", "ok"), enforcement: enforcementOf(data) };
    case "sandbox_recreated":
      return {
        ...step("Sandbox", `Sandbox rebuilt: ${text(data, "reason") ?? ""}`, "rebuilt", "info"),
        enforcement: enforcementOf(data),
      };
    case "sandbox_refused":
      return step("Sandbox", `Sandbox refused: ${text(data, "reason") ?? ""}`, "refused", "danger");
    case "sandbox_closed": {
      const failed = list(data, "checks").filter((check) => field(check, "passed") === false).length;
      return failed > 0
        ? step("Sandbox", `Sandbox closed; ${failed} ${failed === 1 ? "check" : "checks"} found something`, "closed", "warn")
        : step("Sandbox", "Sandbox closed", "closed");
    }
    case "folder_granted": {
      const grant = field(data, "grant");
      const access = text(grant, "access") === "read_write" ? "read-write" : "read-only";
      return step("Folder", `Granted ${text(grant, "path") ?? "a folder"} ${access}`, "granted", "info");
    }
    case "folder_revoked":
      return step("Folder", `Revoked ${text(data, "path") ?? "a folder"}`, "revoked", "info");
    case "host_allowed":
      return step("Network", `Allowed ${text(data, "host") ?? "a host"} for the session`, "allow", "ok");
    case "network_rule_decided": {
      const approved = field(data, "approved") === true;
      const rule = text(field(data, "rule"), "rule_name") ?? "a drafted rule";
      return step("Network", `${approved ? "Approved" : "Rejected"} the drafted rule ${rule}`, approved ? "allow" : "deny", approved ? "ok" : "danger");
    }
    case "turn_started":
      return step("Turn", `You: ${text(data, "text") ?? ""}`);
    case "assistant_message":
      return step("Turn", `Agent: ${text(data, "text") ?? ""}`);
    case "turn_finished": {
      const stop = text(data, "stop_reason") ?? "";
      const steps = field(data, "steps");
      const requests = typeof steps === "number" ? ` after ${steps} model ${steps === 1 ? "request" : "requests"}` : "";
      return step("Turn", `Turn ended${requests}`, STOP_WORDS[stop] ?? stop, stop === "end_turn" ? "ok" : "warn");
    }
    case "protected_path_changed":
      return step(
        "Protected file",
        `${text(data, "path") ?? "A protected file"}: ${text(data, "detail") ?? text(data, "reason") ?? ""}`,
        text(data, "action"),
        "warn",
      );
    case "notice":
      return step("Notice", `${noticeTitle(text(data, "source") ?? "")}: ${text(data, "message") ?? ""}`, null, "warn");
    case "error":
      return step("Error", text(data, "message") ?? "Something went wrong", text(data, "code"), "danger");
    default:
      return step("Event", record.name.replace(/_/g, " "));
  }
}

/** The kind filter's choices, in the table's words. */
export const KIND_CHOICES = [
  ["", "Any kind"],
  ["tool_call", "Tool calls"],
  ["network_denial", "Network denials"],
  ["session", "Sessions started and ended"],
  ["attestation", "Attestations"],
  ["generic", "Steps and approvals"],
] as const;
