import type { ConnectorRisk } from "@server/ConnectorRisk";
import type { Tone } from "../../../components/Badge";

/** A tool's risk in words: what it means for the approvals it gets. */
export const RISK_WORDS: Record<ConnectorRisk, { label: string; tone: Tone; detail: string }> = {
  read: { label: "Read", tone: "ok", detail: "asks; a session or always approval covers it again" },
  write: { label: "Write", tone: "warn", detail: "asks; a session or always approval covers it again" },
  destructive: { label: "Destructive", tone: "danger", detail: "asks every time, once only" },
};

/** A risk the API names (`read`, `write`, `destructive`), or `null` for anything else. */
export function asRisk(value: string): ConnectorRisk | null {
  return value === "read" || value === "write" || value === "destructive" ? value : null;
}

/** A connector's state (`ConnectorInfo.status`) in words and a tone. */
export function statusWords(status: string): { label: string; tone: Tone; title: string } {
  switch (status) {
    case "running":
      return { label: "Running", tone: "ok", title: "Its server is running" };
    case "starting":
      return { label: "Starting", tone: "info", title: "Its server is starting" };
    case "restarting":
      return { label: "Restarting", tone: "warn", title: "Its server stopped on its own and is being restarted" };
    case "failed":
      return { label: "Failed", tone: "danger", title: "Its server could not start; the next session tries again" };
    case "disabled":
      return { label: "Off", tone: "neutral", title: "Turned off: no session is offered its tools" };
    case "stopped":
      return { label: "Not started", tone: "neutral", title: "Starts when a session starts (or when its tools are listed)" };
    default:
      return { label: status, tone: "neutral", title: status };
  }
}

/** How Paddock reaches a connector, in words. */
export function transportWords(transport: string): string {
  return transport === "stdio" ? "Program (stdio)" : transport === "streamable-http" ? "HTTP" : transport;
}
