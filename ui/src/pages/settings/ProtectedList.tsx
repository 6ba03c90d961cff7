import type { ProtectedPath } from "@server/ProtectedPath";
import type { SettingsView } from "@server/SettingsView";
import { createResource, For, type JSX } from "solid-js";
import { useApp } from "../../app/context";
import { sandboxStatus } from "../../api/machine";
import { AsyncView } from "../../components/states";

const GROUPS: Record<string, string> = {
  git: "Git",
  shell: "Shells",
  editor: "Editors",
  agent: "Coding agents",
};

/** Where an entry is looked for, as a path a person recognises. */
export function protectedWhere(entry: ProtectedPath): string {
  const trailing = entry.kind === "folder" ? "/" : "";
  switch (entry.scope) {
    case "folder":
      return `${entry.path}${trailing}`;
    case "git_dir":
      return `.git/${entry.path}${trailing}`;
    case "hooks_path":
      return "the folder core.hooksPath names";
  }
}

/** The entries by group, in the list's order of first appearance. */
export function groupProtected(entries: ProtectedPath[]): { group: string; label: string; entries: ProtectedPath[] }[] {
  const groups: { group: string; label: string; entries: ProtectedPath[] }[] = [];
  for (const entry of entries) {
    let group = groups.find((g) => g.group === entry.group);
    if (!group) {
      group = {
        group: entry.group,
        label: GROUPS[entry.group] ?? entry.group.charAt(0).toUpperCase() + entry.group.slice(1),
        entries: [],
      };
      groups.push(group);
    }
    group.entries.push(entry);
  }
  return groups;
}

/**
 * The protected list: files and folders the host runs or obeys later (git hooks and config,
 * shell startup files, editor and agent settings), read-only inside every wall of this
 * machine. Read from the machine status, which names each with its reason.
 */
export function ProtectedList(props: { version: SettingsView }): JSX.Element {
  const app = useApp();
  const [status, { refetch }] = createResource(
    () => props.version,
    () => sandboxStatus(app.api),
  );
  return (
    <section class="card" aria-labelledby="protected-title">
      <div class="card-head">
        <div>
          <h2 class="card-title" id="protected-title">
            Protected files
          </h2>
          <p class="card-description">
            What your shell, git, editor or another agent runs or obeys later, with your rights
            and outside any wall. Inside a read-write folder these are read-only to the sandbox;
            one a command creates is moved aside and shown in its session; a file tool that
            writes one asks you, naming the file.
          </p>
        </div>
      </div>
      <AsyncView
        resource={status}
        loadingLabel="Reading the protected list…"
        errorTitle="The protected list could not be read"
        onRetry={() => void refetch()}
        isEmpty={(result) => result.protected_paths.length === 0}
        empty={<p class="muted card-empty">This machine's walls protect no paths.</p>}
      >
        {(result) => (
          <div class="table-wrap">
            <table class="table table-compact protected-table">
              <thead>
                <tr>
                  <th scope="col">Path in a read-write folder</th>
                  <th scope="col">Why it is protected</th>
                </tr>
              </thead>
              <For each={groupProtected(result.protected_paths)}>
                {(group) => (
                  <tbody>
                    <tr class="protected-group">
                      <th scope="colgroup" colSpan={2}>
                        {group.label} <span class="muted">({group.entries.length})</span>
                      </th>
                    </tr>
                    <For each={group.entries}>
                      {(entry) => (
                        <tr>
                          <td class="protected-path">
                            <code>{protectedWhere(entry)}</code>
                          </td>
                          <td class="protected-reason">{entry.reason}</td>
                        </tr>
                      )}
                    </For>
                  </tbody>
                )}
              </For>
            </table>
          </div>
        )}
      </AsyncView>
    </section>
  );
}
