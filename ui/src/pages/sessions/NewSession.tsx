import type { ApprovalMode } from "@server/ApprovalMode";
import type { NetworkProfileName } from "@server/NetworkProfileName";
import type { SandboxCatalog } from "@server/SandboxCatalog";
import type { SessionInfo } from "@server/SessionInfo";
import { useNavigate } from "@solidjs/router";
import { createResource, createSignal, For, Index, type JSX, Show } from "solid-js";
import { useApp } from "../../app/context";
import { describeError, ProblemNotice } from "../../components/states";
import { sandboxCatalog } from "../../api/machine";
import { createSession, sendTurn } from "../../api/sessions";
import { readSettings, listSetting, textSetting } from "../../api/settings";
import { Dialog } from "../../components/Dialog";
import { Icon } from "../../components/Icon";
import { type FolderDraft, FolderRow, newFolderDraft } from "./FolderPicker";

const MODES: { value: ApprovalMode; label: string; hint: string }[] = [
  { value: "ask", label: "Ask", hint: "ask before edits and commands" },
  { value: "auto_edit", label: "Auto-edit", hint: "edits run, commands ask" },
  { value: "auto_in_sandbox", label: "Auto in sandbox", hint: "everything the wall confines runs" },
  { value: "bypass", label: "Bypass", hint: "nothing asks" },
];

const PROFILES: { value: NetworkProfileName; label: string }[] = [
  { value: "strict", label: "Strict" },
  { value: "standard", label: "Standard" },
  { value: "open", label: "Open" },
];

/** The config's spelling of a mode (`auto-edit`) as the API's (`auto_edit`). */
function modeOf(value: string | null): ApprovalMode {
  const mode = (value ?? "ask").replace(/-/g, "_");
  return MODES.some((m) => m.value === mode) ? (mode as ApprovalMode) : "ask";
}

/** `folders[1].path: …` → the index and the problem, to show beside that folder. */
function folderProblem(message: string): { index: number; problem: string } | null {
  const match = /^folders\[(\d+)\]\.path: (.*)$/s.exec(message);
  return match?.[1] !== undefined && match[2] !== undefined
    ? { index: Number(match[1]), problem: match[2] }
    : null;
}

/**
 * A new session: folders granted read-write or read-only (at least one), what to do first,
 * and the session's own options over the machine's defaults.
 */
export function NewSessionDialog(props: {
  open: boolean;
  onClose: () => void;
  onCreated: (session: SessionInfo) => void;
}): JSX.Element {
  const app = useApp();
  const navigate = useNavigate();
  const [folders, setFolders] = createSignal<FolderDraft[]>([newFolderDraft()]);
  const [task, setTask] = createSignal("");
  const [mode, setMode] = createSignal<ApprovalMode | null>(null);
  const [profile, setProfile] = createSignal<NetworkProfileName | null>(null);
  const [credentials, setCredentials] = createSignal<string[]>([]);
  const [extraHosts, setExtraHosts] = createSignal("");
  const [problem, setProblem] = createSignal<string | null>(null);
  const [folderProblems, setFolderProblems] = createSignal<Record<number, string>>({});
  const [busy, setBusy] = createSignal(false);
  const [defaults] = createResource(
    () => props.open,
    async () => {
      const [settings, catalog] = await Promise.all([readSettings(app.api), sandboxCatalog(app.api)]);
      return { settings, catalog };
    },
  );

  const effectiveMode = () => mode() ?? modeOf(defaults.latest ? textSetting(defaults.latest.settings, "approvals.mode") : null);
  const effectiveProfile = () =>
    profile() ??
    ((defaults.latest ? textSetting(defaults.latest.settings, "sandbox.network_profile") : null) as NetworkProfileName | null) ??
    "strict";
  const machineCredentials = () => (defaults.latest ? listSetting(defaults.latest.settings, "sandbox.credentials") : []);

  const reset = () => {
    setFolders([newFolderDraft()]);
    setTask("");
    setMode(null);
    setProfile(null);
    setCredentials([]);
    setExtraHosts("");
    setProblem(null);
    setFolderProblems({});
  };

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    setProblem(null);
    setFolderProblems({});
    const chosen = folders().filter((f) => f.path.trim() !== "");
    if (chosen.length === 0) {
      setFolderProblems({ 0: "Type the absolute path of a folder to grant." });
      return;
    }
    setBusy(true);
    try {
      const session = await createSession(app.api, {
        folders: chosen.map((f) => ({ path: f.path.trim(), access: f.access })),
        cwd: null,
        provider: null,
        model: null,
        approval_mode: effectiveMode(),
        network_profile: effectiveProfile(),
        extra_hosts: extraHosts()
          .split(/[\s,]+/)
          .map((h) => h.trim())
          .filter((h) => h !== ""),
        credentials: credentials(),
        secrets: [],
      });
      if (task().trim() !== "") {
        await sendTurn(app.api, session.id, task().trim());
      }
      props.onCreated(session);
      reset();
      navigate(`/sessions/${encodeURIComponent(session.id)}`);
    } catch (error) {
      const { message } = describeError(error);
      const folder = folderProblem(message);
      if (folder) {
        // The index is of the folders sent; find the row it came from.
        const row = folders().findIndex((f) => f === chosen[folder.index]);
        setFolderProblems({ [row === -1 ? 0 : row]: folder.problem });
      } else {
        setProblem(message);
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog
      open={props.open}
      title="New session"
      description="Grant the folders the agent may use. Its tools run inside a sandbox that sees only these folders."
      wide
      onClose={() => {
        props.onClose();
      }}
    >
      <form class="form" onSubmit={(event) => void submit(event)} noValidate>
        <fieldset class="form-section">
          <legend class="form-legend">Folders</legend>
          <p class="form-hint">
            Absolute paths on the machine Paddock runs on; each folder appears at the same path
            inside the sandbox.
          </p>
          {/* By position, not by object: each keystroke makes a new draft, and a row keyed by
              the object would be replaced (and lose focus) after the first character typed. */}
          <Index each={folders()}>
            {(draft, index) => (
              <FolderRow
                draft={draft()}
                index={index}
                problem={folderProblems()[index] ?? null}
                removable={folders().length > 1}
                onChange={(next) => {
                  setFolders(folders().map((f, i) => (i === index ? next : f)));
                  setFolderProblems({});
                }}
                onRemove={() => {
                  setFolders(folders().filter((_, i) => i !== index));
                }}
              />
            )}
          </Index>
          <button
            type="button"
            class="button button-small"
            onClick={() => {
              setFolders([...folders(), newFolderDraft("", "read_only")]);
            }}
          >
            <Icon name="plus" size={14} />
            Add folder
          </button>
        </fieldset>

        <label class="field">
          <span class="field-label">First task (optional)</span>
          <textarea
            class="textarea"
            rows="3"
            placeholder="Add a test for the parser, then run the test suite"
            value={task()}
            onInput={(event) => setTask(event.currentTarget.value)}
          />
        </label>

        <details class="disclosure">
          <summary>Session options</summary>
          <div class="form-grid">
            <label class="field">
              <span class="field-label">Approvals</span>
              <select
                class="select"
                value={effectiveMode()}
                onChange={(event) => setMode(event.currentTarget.value as ApprovalMode)}
              >
                <For each={MODES}>
                  {(m) => (
                    <option value={m.value}>
                      {m.label}: {m.hint}
                    </option>
                  )}
                </For>
              </select>
            </label>
            <label class="field">
              <span class="field-label">Network profile</span>
              <select
                class="select"
                value={effectiveProfile()}
                onChange={(event) => setProfile(event.currentTarget.value as NetworkProfileName)}
              >
                <For each={PROFILES}>{(p) => <option value={p.value}>{p.label}</option>}</For>
              </select>
            </label>
            <label class="field form-grid-wide">
              <span class="field-label">Extra hosts for this session</span>
              <input
                class="input input-mono"
                type="text"
                placeholder="api.example.com, registry.example:8443"
                value={extraHosts()}
                onInput={(event) => setExtraHosts(event.currentTarget.value)}
              />
            </label>
          </div>
          <Show when={defaults.latest?.catalog}>
            {(catalog) => (
              <CredentialChoices
                catalog={catalog()}
                machine={machineCredentials()}
                chosen={credentials()}
                onChange={setCredentials}
              />
            )}
          </Show>
        </details>

        <ProblemNotice text={problem()} />
        <div class="form-actions">
          <button
            type="button"
            class="button"
            onClick={() => {
              props.onClose();
            }}
          >
            Cancel
          </button>
          <button type="submit" class="button button-primary" disabled={busy()}>
            <Icon name="play" size={14} />
            {busy() ? "Starting…" : "Start session"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function CredentialChoices(props: {
  catalog: SandboxCatalog;
  machine: string[];
  chosen: string[];
  onChange: (names: string[]) => void;
}): JSX.Element {
  return (
    <fieldset class="form-section">
      <legend class="form-legend">Credentials shared with this session</legend>
      <p class="form-hint">
        Copies of these files from your home go into the sandbox, with the hosts their tools
        need. Off unless chosen here or turned on for every session in Settings ▸ Sandbox.
      </p>
      <div class="check-list">
        <For each={props.catalog.credentials}>
          {(row) => {
            const always = () => props.machine.includes(row.name);
            return (
              <label class="check">
                <input
                  type="checkbox"
                  checked={always() || props.chosen.includes(row.name)}
                  disabled={always()}
                  onChange={(event) => {
                    const on = event.currentTarget.checked;
                    props.onChange(
                      on ? [...props.chosen, row.name] : props.chosen.filter((n) => n !== row.name),
                    );
                  }}
                />
                <span>
                  <strong>{row.name}</strong> <span class="muted">{row.description}</span>
                  <Show when={always()}>
                    <span class="muted"> (on for every session)</span>
                  </Show>
                </span>
              </label>
            );
          }}
        </For>
      </div>
    </fieldset>
  );
}
