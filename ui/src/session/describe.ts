import type { DecidedBy } from "@server/DecidedBy";

/** What a tool call is about, in one line: the command it runs or the path it touches. */
export interface CallDescription {
  /** The tool in words ("Run", "Write", …). */
  verb: string;
  /** The command, path or pattern. */
  target: string;
  /** Shown in a monospace font (commands, paths). */
  code: boolean;
}

const VERBS: Record<string, string> = {
  run_bash: "Run",
  read_file: "Read",
  write_file: "Write",
  edit_file: "Edit",
  delete: "Delete",
  glob: "Find files",
  grep: "Search",
  list_directory: "List",
};

function text(args: unknown, key: string): string | null {
  if (typeof args === "object" && args !== null && key in args) {
    const value = (args as Record<string, unknown>)[key];
    return typeof value === "string" ? value : null;
  }
  return null;
}

/**
 * A connector tool's parts: `mcp__<connector>__<tool>` as the model names it (a connector's
 * name has no `_`, so the first `__` after the prefix ends it), or the built-in `web_fetch`.
 */
export function connectorTool(tool: string): { connector: string; tool: string } | null {
  if (tool === "web_fetch") {
    return { connector: "web_fetch", tool: "web_fetch" };
  }
  const match = /^mcp__([a-z][a-z0-9-]*)__(.+)$/.exec(tool);
  return match?.[1] && match[2] ? { connector: match[1], tool: match[2] } : null;
}

export function describeCall(tool: string, args: unknown): CallDescription {
  const verb = VERBS[tool] ?? tool;
  if (tool === "web_fetch") {
    return { verb: "Fetch", target: text(args, "url") ?? "", code: true };
  }
  const connector = connectorTool(tool);
  if (connector) {
    return { verb: "Call", target: `${connector.connector} › ${connector.tool}`, code: true };
  }
  switch (tool) {
    case "run_bash":
      return { verb, target: text(args, "command") ?? "", code: true };
    case "glob":
    case "grep": {
      const pattern = text(args, "pattern") ?? "";
      const path = text(args, "path");
      return { verb, target: path ? `${pattern} in ${path}` : pattern, code: true };
    }
    case "list_directory":
      return { verb, target: text(args, "path") ?? "the working folder", code: text(args, "path") !== null };
    default: {
      const path = text(args, "path");
      return path ? { verb, target: path, code: true } : { verb, target: "", code: false };
    }
  }
}

/** Who decided a call, in words (the events' `DecidedBy`). */
export const DECIDERS: Record<DecidedBy, string> = {
  user: "you",
  mode: "the approval mode",
  standing_approval: "a standing approval",
  rule: "a rule",
  safety_check: "a safety check",
  policy: "the front end's policy",
};
