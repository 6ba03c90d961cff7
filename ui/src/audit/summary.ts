import type { AuditRecord } from "@server/AuditRecord";
import type { EnforcementLevel } from "@server/EnforcementLevel";
import type { StoredEvent } from "@server/StoredEvent";
import { describeCall } from "../session/describe";

/** One audit row in words, for the table: what happened, and the wall it happened in. */
export interface RowSummary {
  kind: string;
  what: string;
  enforcement: EnforcementLevel | null;
  /** `allow`/`deny`, or the call's status, or the session event. */
  outcome: string | null;
  tone: "ok" | "warn" | "danger" | "neutral" | "info";
}

const KIND_LABELS: Record<AuditRecord["type"], string> = {
  session: "Session",
  attestation: "Attestation",
  tool_call: "Tool call",
  network_denial: "Denial",
  generic: "Other",
};

export function kindLabel(kind: AuditRecord["type"]): string {
  return KIND_LABELS[kind];
}

export function summarize(row: StoredEvent): RowSummary {
  const record = row.record;
  switch (record.type) {
    case "session":
      return {
        kind: kindLabel(record.type),
        what: [
          `Session ${record.event}`,
          record.provider ? `on ${record.provider}` : null,
          record.approval_mode ? `(${record.approval_mode})` : null,
          record.folders.length > 0 ? `· ${record.folders.join(", ")}` : null,
        ]
          .filter((part) => part !== null)
          .join(" "),
        enforcement: null,
        outcome: record.event,
        tone: "neutral",
      };
    case "attestation": {
      const passed = record.canaries.filter((c) => c.passed).length;
      return {
        kind: kindLabel(record.type),
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
        kind: kindLabel(record.type),
        what: `${call.verb}${call.target ? ` ${call.target}` : ""}`,
        enforcement: record.enforcement,
        outcome: record.status + (record.exit_code !== null ? ` · exit ${record.exit_code}` : ""),
        tone,
      };
    }
    case "network_denial":
      return {
        kind: kindLabel(record.type),
        what: `${record.denial.host}:${record.denial.port} refused${record.denial.binary ? ` (${record.denial.binary})` : ""}`,
        enforcement: null,
        outcome: "deny",
        tone: "danger",
      };
    case "generic":
      return { kind: kindLabel(record.type), what: record.name, enforcement: null, outcome: null, tone: "neutral" };
  }
}
