import type { MachineSandboxStatus } from "@server/MachineSandboxStatus";
import type { ProtectedPath } from "@server/ProtectedPath";
import { cleanup, screen, within } from "@solidjs/testing-library";
import { afterEach, describe, expect, it } from "vitest";
import { errorAnswer, renderInApp, scriptedApp } from "../../testing/app";
import { groupProtected, ProtectedList, protectedWhere } from "./ProtectedList";

afterEach(cleanup);

const HOOKS: ProtectedPath = { scope: "git_dir", path: "hooks", kind: "folder", group: "git", reason: "git runs these scripts on commit" };
const BASHRC: ProtectedPath = { scope: "folder", path: ".bashrc", kind: "file", group: "shell", reason: "bash runs it at start" };
const HOOKS_PATH: ProtectedPath = { scope: "hooks_path", path: "", kind: "folder", group: "git", reason: "git runs the scripts in it" };
const VSCODE: ProtectedPath = { scope: "folder", path: ".vscode", kind: "folder", group: "editor", reason: "editors run its tasks" };

describe("the protected list", () => {
  it("writes each entry as the path a person looks for", () => {
    expect(protectedWhere(HOOKS)).toBe(".git/hooks/");
    expect(protectedWhere(BASHRC)).toBe(".bashrc");
    expect(protectedWhere(VSCODE)).toBe(".vscode/");
    expect(protectedWhere(HOOKS_PATH)).toBe("the folder core.hooksPath names");
  });

  it("groups entries in the list's order", () => {
    const groups = groupProtected([HOOKS, BASHRC, HOOKS_PATH, { ...VSCODE, group: "build" }]);
    expect(groups.map((g) => [g.label, g.entries.length])).toEqual([
      ["Git", 2],
      ["Shells", 1],
      ["Build", 1],
    ]);
  });

  it("shows every entry with its reason in the sandbox settings, from the machine status", async () => {
    const status: MachineSandboxStatus = { provider: "local", enforcement: "local", checks: [], protected_paths: [HOOKS, BASHRC, VSCODE] };
    const app = scriptedApp({ "GET /v1/machine/sandbox": () => status });
    renderInApp(app.state, () => <ProtectedList version={{ file: "/c.toml", values: {}, set_in_file: [] }} />);
    const region = screen.getByRole("region", { name: "Protected files" });
    const table = await within(region).findByRole("table");
    expect(within(table).getByRole("columnheader", { name: "Git (1)" })).toBeTruthy();
    const row = within(table).getByText(".git/hooks/").closest("tr") as HTMLElement;
    expect(row.textContent).toContain("git runs these scripts on commit");
    expect(table.textContent).toContain("Editors");
  });

  it("shows a failure to read it in place", async () => {
    const app = scriptedApp({ "GET /v1/machine/sandbox": () => errorAnswer(500, "internal", "status failed") });
    renderInApp(app.state, () => <ProtectedList version={{ file: "/c.toml", values: {}, set_in_file: [] }} />);
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("The protected list could not be read");
  });
});
