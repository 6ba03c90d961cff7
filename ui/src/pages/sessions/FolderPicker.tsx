import type { FolderAccess } from "@server/FolderAccess";
import type { FolderCheck } from "@server/FolderCheck";
import { createSignal, createUniqueId, type JSX, onCleanup, Show } from "solid-js";
import { useApp } from "../../app/context";
import { checkFolder } from "../../api/machine";
import { Icon } from "../../components/Icon";

/**
 * One folder to grant: an absolute path typed or pasted (a browser cannot browse the server's
 * disk), checked by the server as it is typed, and its access, read-write or read-only.
 */
export interface FolderDraft {
  id: string;
  path: string;
  access: FolderAccess;
}

export function newFolderDraft(path = "", access: FolderAccess = "read_write"): FolderDraft {
  return { id: createUniqueId(), path, access };
}

/** How long typing must pause before the path is checked. */
const CHECK_DELAY_MS = 250;

export function FolderRow(props: {
  draft: FolderDraft;
  index: number;
  /** A problem the server named for this folder when the session was refused. */
  problem: string | null;
  removable: boolean;
  onChange: (draft: FolderDraft) => void;
  onRemove: () => void;
}): JSX.Element {
  const app = useApp();
  const inputId = createUniqueId();
  const statusId = createUniqueId();
  const [check, setCheck] = createSignal<FolderCheck | null>(null);
  const [checking, setChecking] = createSignal(false);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let inFlight: AbortController | undefined;
  onCleanup(() => {
    clearTimeout(timer);
    inFlight?.abort();
  });

  const scheduleCheck = (path: string) => {
    clearTimeout(timer);
    inFlight?.abort();
    setCheck(null);
    if (path.trim() === "") {
      setChecking(false);
      return;
    }
    setChecking(true);
    timer = setTimeout(() => {
      const controller = new AbortController();
      inFlight = controller;
      checkFolder(app.api, path.trim(), controller.signal).then(
        (result) => {
          setCheck(result);
          setChecking(false);
        },
        () => {
          setChecking(false);
        },
      );
    }, CHECK_DELAY_MS);
  };

  const problem = () => props.problem ?? check()?.problem ?? null;
  const resolved = () => {
    const result = check();
    return result?.canonical && result.canonical !== props.draft.path.trim() ? result.canonical : null;
  };

  return (
    <div class="folder-row">
      <div class="folder-row-main">
        <label class="visually-hidden" for={inputId}>
          Folder {props.index + 1} path
        </label>
        <input
          id={inputId}
          class="input input-mono folder-path"
          type="text"
          placeholder="/home/you/project"
          spellcheck={false}
          autocomplete="off"
          value={props.draft.path}
          aria-invalid={problem() ? "true" : undefined}
          aria-describedby={statusId}
          onInput={(event) => {
            const path = event.currentTarget.value;
            props.onChange({ ...props.draft, path });
            scheduleCheck(path);
          }}
        />
        <fieldset class="segmented segmented-text">
          <legend class="visually-hidden">Folder {props.index + 1} access</legend>
          <label class="segment">
            <input
              type="radio"
              name={`access-${props.draft.id}`}
              checked={props.draft.access === "read_write"}
              onChange={() => {
                props.onChange({ ...props.draft, access: "read_write" });
              }}
            />
            <span>Read-write</span>
          </label>
          <label class="segment">
            <input
              type="radio"
              name={`access-${props.draft.id}`}
              checked={props.draft.access === "read_only"}
              onChange={() => {
                props.onChange({ ...props.draft, access: "read_only" });
              }}
            />
            <span>Read-only</span>
          </label>
        </fieldset>
        <button
          type="button"
          class="button button-ghost button-icon"
          aria-label={`Remove folder ${props.index + 1}`}
          disabled={!props.removable}
          onClick={() => {
            props.onRemove();
          }}
        >
          <Icon name="trash" />
        </button>
      </div>
      <p class="folder-status" id={statusId} aria-live="polite">
        <Show when={problem()}>
          {(text) => <span class="field-error">{text()}</span>}
        </Show>
        <Show when={!problem() && checking()}>
          <span class="muted">Checking…</span>
        </Show>
        <Show when={!problem() && !checking() && check()?.canonical}>
          <span class="field-ok">
            <Icon name="check" size={13} />
            {resolved() ? `Folder found: ${resolved()}` : "Folder found"}
          </span>
        </Show>
      </p>
    </div>
  );
}
