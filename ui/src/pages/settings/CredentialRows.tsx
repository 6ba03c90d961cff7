import type { CredentialRow } from "@server/CredentialRow";
import type { SandboxCatalog } from "@server/SandboxCatalog";
import { createSignal, For, type JSX, Show } from "solid-js";
import { useApp } from "../../app/context";
import { removeCredential, saveCredential } from "../../api/settings";
import { Badge } from "../../components/Badge";
import { Dialog } from "../../components/Dialog";
import { Icon } from "../../components/Icon";
import { describeError, ProblemNotice } from "../../components/states";
import { Toggle } from "../../components/Toggle";

/**
 * Credential-share rows: files from the user's home copied into a session's sandbox, with the
 * hosts their tools need. All off by default; a row switched on here is on for every session
 * (a session can also turn one on for itself). Custom rows are added, changed and removed here.
 */
export function CredentialRows(props: {
  catalog: SandboxCatalog;
  problem: string | null | undefined;
  onToggle: (name: string, on: boolean) => Promise<boolean>;
  onRowsChanged: () => void;
}): JSX.Element {
  const [editing, setEditing] = createSignal<CredentialRow | "new" | null>(null);
  return (
    <section class="card" aria-labelledby="credentials-title">
      <div class="card-head">
        <div>
          <h2 class="card-title" id="credentials-title">
            Credential sharing
          </h2>
          <p class="card-description">
            Copies of these files from your home go into a session's sandbox (and are deleted with
            it), together with the hosts their tools need. Every row is off unless you switch it
            on here, for every session, or a session enables it for itself.
          </p>
        </div>
        <button type="button" class="button" onClick={() => setEditing("new")}>
          <Icon name="plus" size={14} />
          Custom entry
        </button>
      </div>
      <div class="table-wrap">
        <table class="table table-compact">
          <thead>
            <tr>
              <th scope="col">Every session</th>
              <th scope="col">Entry</th>
              <th scope="col">Copies from your home</th>
              <th scope="col">Hosts</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            <For each={props.catalog.credentials}>
              {(row) => (
                <tr>
                  <td>
                    <Toggle
                      checked={row.enabled}
                      label={`Share ${row.name} with every session`}
                      hideLabel
                      onChange={(on) => void props.onToggle(row.name, on)}
                    />
                  </td>
                  <td>
                    <span class="cell-title-text">{row.name}</span>
                    <Show when={!row.builtin}>
                      {" "}
                      <Badge tone="neutral">custom</Badge>
                    </Show>
                    <span class="cell-sub">{row.description}</span>
                  </td>
                  <td>
                    <code>~/{row.source}</code>
                  </td>
                  <td class="mono-small">
                    <Show when={!row.hosts_from_kubeconfig} fallback={<span class="muted">the servers in your kubeconfig</span>}>
                      {row.hosts.join(", ")}
                    </Show>
                  </td>
                  <td class="cell-actions">
                    <Show when={!row.builtin}>
                      <button type="button" class="button button-small button-ghost" onClick={() => setEditing(row)}>
                        Edit<span class="visually-hidden"> {row.name}</span>
                      </button>
                    </Show>
                  </td>
                </tr>
              )}
            </For>
          </tbody>
        </table>
      </div>
      <ProblemNotice text={props.problem} />
      <Show when={editing()}>
        {(entry) => (
          <CustomEntryEditor
            entry={entry()}
            onClose={() => setEditing(null)}
            onSaved={() => {
              setEditing(null);
              props.onRowsChanged();
            }}
          />
        )}
      </Show>
    </section>
  );
}

type Field = "name" | "source" | "hosts";

/** `hosts[1]: …` → the field it names and the problem. */
export function fieldProblem(message: string): { field: Field; problem: string } | null {
  const match = /^(name|source|hosts)(\[\d+\])?: (.*)$/s.exec(message);
  if (!match?.[1] || match[3] === undefined) {
    return null;
  }
  const index = match[2] ? ` (entry ${Number(match[2].slice(1, -1)) + 1})` : "";
  return { field: match[1] as Field, problem: `${match[3]}${index}` };
}

function CustomEntryEditor(props: {
  entry: CredentialRow | "new";
  onClose: () => void;
  onSaved: () => void;
}): JSX.Element {
  const app = useApp();
  const existing = () => (props.entry === "new" ? null : props.entry);
  const [name, setName] = createSignal(existing()?.name ?? "");
  const [source, setSource] = createSignal(existing()?.source ?? "");
  const [hosts, setHosts] = createSignal(existing()?.hosts.join("\n") ?? "");
  const [problems, setProblems] = createSignal<Partial<Record<Field, string>>>({});
  const [general, setGeneral] = createSignal<string | null>(null);
  const [busy, setBusy] = createSignal(false);

  const run = async (action: () => Promise<unknown>) => {
    const onSaved = props.onSaved;
    setBusy(true);
    setProblems({});
    setGeneral(null);
    try {
      await action();
      onSaved();
    } catch (error) {
      const message = describeError(error).message;
      const field = fieldProblem(message);
      if (field) {
        setProblems({ [field.field]: field.problem });
      } else {
        setGeneral(message);
      }
    } finally {
      setBusy(false);
    }
  };
  const save = () => {
    const entryName = name().trim();
    const entry = {
      source: source().trim(),
      hosts: hosts()
        .split(/[\s,]+/)
        .map((h) => h.trim())
        .filter((h) => h !== ""),
    };
    return run(() => saveCredential(app.api, entryName, entry));
  };
  const fieldError = (field: Field) => (
    <Show when={problems()[field]}>
      {(text) => (
        <span class="field-error" id={`custom-${field}-problem`}>
          {text()}
        </span>
      )}
    </Show>
  );
  return (
    <Dialog
      open
      title={existing() ? `Custom entry ${existing()?.name ?? ""}` : "New custom entry"}
      description="Files a tool needs to act as you, copied into the sandbox of the sessions that enable the entry. Name files here; never a secret itself."
      onClose={() => { props.onClose(); }}
    >
      <form
        class="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void save();
        }}
      >
        <label class="field">
          <span class="field-label">Name</span>
          <input
            class="input"
            type="text"
            placeholder="mytool"
            value={name()}
            disabled={existing() !== null}
            aria-invalid={problems().name ? "true" : undefined}
            aria-describedby={problems().name ? "custom-name-problem" : undefined}
            onInput={(event) => setName(event.currentTarget.value)}
          />
          <span class="field-hint">Lowercase letters, digits and dashes.</span>
          {fieldError("name")}
        </label>
        <label class="field">
          <span class="field-label">Folder or file, relative to your home</span>
          <input
            class="input input-mono"
            type="text"
            placeholder=".config/mytool"
            value={source()}
            aria-invalid={problems().source ? "true" : undefined}
            aria-describedby={problems().source ? "custom-source-problem" : undefined}
            onInput={(event) => setSource(event.currentTarget.value)}
          />
          {fieldError("source")}
        </label>
        <label class="field">
          <span class="field-label">Hosts its commands need (one per line)</span>
          <textarea
            class="textarea input-mono"
            rows="3"
            placeholder="api.mytool.example"
            value={hosts()}
            aria-invalid={problems().hosts ? "true" : undefined}
            aria-describedby={problems().hosts ? "custom-hosts-problem" : undefined}
            onInput={(event) => setHosts(event.currentTarget.value)}
          />
          {fieldError("hosts")}
        </label>
        <ProblemNotice text={general()} />
        <div class="form-actions">
          <Show when={existing()}>
            {(row) => (
              <button
                type="button"
                class="button button-danger-ghost form-actions-left"
                disabled={busy()}
                onClick={() => void run(() => removeCredential(app.api, row().name))}
              >
                <Icon name="trash" size={14} />
                Remove entry
              </button>
            )}
          </Show>
          <button type="button" class="button" onClick={() => { props.onClose(); }}>
            Cancel
          </button>
          <button type="submit" class="button button-primary" disabled={busy()}>
            Save entry
          </button>
        </div>
      </form>
    </Dialog>
  );
}
