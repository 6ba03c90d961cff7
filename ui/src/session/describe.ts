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

export function describeCall(tool: string, args: unknown): CallDescription {
  const verb = VERBS[tool] ?? tool;
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
