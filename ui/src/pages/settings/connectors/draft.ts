import type { ConnectorConfig } from "@server/ConnectorConfig";
import type { ConnectorRisk } from "@server/ConnectorRisk";
import type { ConnectorTransport } from "@server/ConnectorTransport";

/**
 * A connector being edited: the `[[connectors]]` entry as form fields, turned back into the
 * entry the API takes. The token is not part of the entry: it goes to the key store apart from
 * it and never comes back.
 */

/** The placeholder a variable or header writes where the token goes. */
export const SECRET_PLACEHOLDER = "{secret}";

/** A name and a value (an environment variable or a header). */
export interface Pair {
  key: string;
  value: string;
}

export interface ConnectorDraft {
  name: string;
  transport: ConnectorTransport;
  enabled: boolean;
  command: string;
  /** One argument per line. */
  args: string;
  env: Pair[];
  url: string;
  headers: Pair[];
  /** The risk set for every tool (`*`), or `""` for none. */
  everyTool: ConnectorRisk | "";
  /** The risks set per tool (kept as they are; the tools list changes them). */
  toolRisks: Record<string, ConnectorRisk>;
}

/** The fields a problem can be shown at. */
export type DraftField = "name" | "transport" | "command" | "args" | "env" | "url" | "headers" | "risk" | "token";

export type DraftProblems = Partial<Record<DraftField, string>>;

/** Lower-case letters, digits and `-`, starting with a letter; at most 20 (as the host checks). */
const NAME = /^[a-z][a-z0-9-]{0,19}$/;

function pairs(map: { [key in string]: string } | undefined): Pair[] {
  return Object.entries(map ?? {}).map(([key, value]) => ({ key, value }));
}

/** A new connector's draft, or an existing entry's. */
export function draftFrom(config: ConnectorConfig | null): ConnectorDraft {
  const risks: Record<string, ConnectorRisk> = {};
  for (const [tool, risk] of Object.entries(config?.risk ?? {})) {
    if (tool !== "*") {
      risks[tool] = risk;
    }
  }
  return {
    name: config?.name ?? "",
    transport: config?.transport ?? "stdio",
    enabled: config?.enabled ?? true,
    command: config?.command ?? "",
    args: (config?.args ?? []).join("\n"),
    env: pairs(config?.env),
    url: config?.url ?? "",
    headers: pairs(config?.headers),
    everyTool: config?.risk?.["*"] ?? "",
    toolRisks: risks,
  };
}

/** Rows with a name become entries; rows left blank are dropped; a value without a name, or a name twice, is a problem. */
function mapOf(rows: Pair[], what: string): { map: Record<string, string> } | { problem: string } {
  const map: Record<string, string> = {};
  for (const row of rows) {
    const key = row.key.trim();
    if (key === "" && row.value === "") {
      continue;
    }
    if (key === "") {
      return { problem: `A ${what} has a value but no name.` };
    }
    if (key in map) {
      return { problem: `${key} is given twice.` };
    }
    map[key] = row.value;
  }
  return { map };
}

/**
 * The entry the draft describes, or the problems that keep it from being one (checked here so
 * the user hears at once; the host checks everything again and names what it refuses).
 */
export function configFrom(draft: ConnectorDraft): { config: ConnectorConfig } | { problems: DraftProblems } {
  const problems: DraftProblems = {};
  const name = draft.name.trim();
  if (!NAME.test(name) || name.endsWith("-") || name.includes("--")) {
    problems.name =
      "Use 1 to 20 lowercase letters, digits and dashes, starting with a letter (no dash at the end, no two in a row).";
  }
  const config: ConnectorConfig = { name, transport: draft.transport, enabled: draft.enabled };
  if (draft.transport === "stdio") {
    const command = draft.command.trim();
    if (command === "") {
      problems.command = "Name the program to start: an absolute path, or a name found on PATH.";
    } else {
      config.command = command;
    }
    const args = draft.args.split("\n").map((line) => line.trim()).filter((line) => line !== "");
    if (args.length > 0) {
      config.args = args;
    }
    const env = mapOf(draft.env, "variable");
    if ("problem" in env) {
      problems.env = env.problem;
    } else if (Object.keys(env.map).length > 0) {
      config.env = env.map;
    }
  } else {
    const url = draft.url.trim();
    if (!/^https?:\/\/\S+$/.test(url)) {
      problems.url = "Give the server's http:// or https:// address.";
    } else {
      config.url = url;
    }
    const headers = mapOf(draft.headers, "header");
    if ("problem" in headers) {
      problems.headers = headers.problem;
    } else if (Object.keys(headers.map).length > 0) {
      config.headers = headers.map;
    }
  }
  const risk: Record<string, ConnectorRisk> = { ...draft.toolRisks };
  if (draft.everyTool !== "") {
    risk["*"] = draft.everyTool;
  }
  if (Object.keys(risk).length > 0) {
    config.risk = risk;
  }
  return Object.keys(problems).length > 0 ? { problems } : { config };
}

/** Whether any variable or header of the draft takes the token. */
export function usesToken(draft: ConnectorDraft): boolean {
  const rows = draft.transport === "stdio" ? draft.env : draft.headers;
  return rows.some((row) => row.value.includes(SECRET_PLACEHOLDER));
}

/** `config` with the risk of `tool` set, or (with `null`) left to the server's claim. */
export function withToolRisk(config: ConnectorConfig, tool: string, risk: ConnectorRisk | null): ConnectorConfig {
  const risks: Record<string, ConnectorRisk> = {};
  for (const [name, value] of Object.entries(config.risk ?? {})) {
    if (name !== tool) {
      risks[name] = value;
    }
  }
  if (risk !== null) {
    risks[tool] = risk;
  }
  const changed: ConnectorConfig = { ...config };
  delete changed.risk;
  if (Object.keys(risks).length > 0) {
    changed.risk = risks;
  }
  return changed;
}

/**
 * The form field a refusal of the host names, and its problem: `setting
 * \`connectors[0].env.API_TOKEN\`: looks like a credential…` → `env`, "API_TOKEN looks like…".
 * `null` when the message names no field of the form.
 */
export function connectorFieldProblem(message: string): { field: DraftField; problem: string } | null {
  const match = /^setting `(?:connectors(?:\[\d+\])?\.)?([a-z_]+)(?:\.([^`]+))?`: (.*)$/s.exec(message);
  if (!match?.[1] || match[3] === undefined) {
    return null;
  }
  const fields: readonly string[] = ["name", "transport", "command", "args", "env", "url", "headers", "risk", "token"];
  if (!fields.includes(match[1])) {
    return null;
  }
  // The host's problems follow the name they are about: "`url` is not a URL", "`env.X` looks like…".
  return { field: match[1] as DraftField, problem: `${match[2] ?? match[1]} ${match[3]}` };
}
