import { createSignal, createUniqueId, For, type JSX, Show } from "solid-js";
import { Icon } from "../../components/Icon";

/**
 * A list of hosts as removable chips with an input to add one. Saving sends the whole list;
 * the server checks every entry and names a bad one (nothing is written then).
 */
export function HostListEditor(props: {
  label: string;
  hosts: string[];
  problem: string | null | undefined;
  onSave: (hosts: string[]) => Promise<boolean>;
}): JSX.Element {
  const inputId = createUniqueId();
  const [draft, setDraft] = createSignal("");
  const [busy, setBusy] = createSignal(false);
  const save = async (hosts: string[]) => {
    setBusy(true);
    const ok = await props.onSave(hosts);
    setBusy(false);
    return ok;
  };
  const add = async () => {
    const entries = draft()
      .split(/[\s,]+/)
      .map((h) => h.trim())
      .filter((h) => h !== "" && !props.hosts.includes(h));
    if (entries.length === 0) {
      return;
    }
    if (await save([...props.hosts, ...entries])) {
      setDraft("");
    }
  };
  return (
    <div class="host-editor">
      <Show when={props.hosts.length > 0} fallback={<p class="muted">None.</p>}>
        <ul class="chips" aria-label={`${props.label}s`}>
          <For each={props.hosts}>
            {(host) => (
              <li class="chip chip-removable">
                <span class="chip-text mono-small">{host}</span>
                <button
                  type="button"
                  class="chip-remove"
                  aria-label={`Remove ${host}`}
                  disabled={busy()}
                  onClick={() => void save(props.hosts.filter((h) => h !== host))}
                >
                  <Icon name="close" size={12} />
                </button>
              </li>
            )}
          </For>
        </ul>
      </Show>
      <form
        class="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          void add();
        }}
      >
        <label class="visually-hidden" for={inputId}>
          {props.label}
        </label>
        <input
          id={inputId}
          class="input input-mono"
          type="text"
          placeholder="api.example.com:443"
          value={draft()}
          aria-invalid={props.problem ? "true" : undefined}
          onInput={(event) => setDraft(event.currentTarget.value)}
        />
        <button type="submit" class="button" disabled={busy() || draft().trim() === ""}>
          <Icon name="plus" size={14} />
          Add
        </button>
      </form>
      <Show when={props.problem}>
        {(message) => (
          <p class="field-error" role="alert">
            {message()}
          </p>
        )}
      </Show>
    </div>
  );
}
