import type { SandboxCatalog } from "@server/SandboxCatalog";
import type { SecretOffer } from "@server/SecretOffer";
import { createSignal, For, type JSX, Show } from "solid-js";
import { useApp } from "../../app/context";
import { storeSecret } from "../../api/models";
import { Badge } from "../../components/Badge";
import { describeError, ProblemNotice } from "../../components/states";
import { Toggle } from "../../components/Toggle";

/**
 * Secrets a session may be given (OpenShell only): inside the sandbox the variable holds a
 * placeholder, and the gateway puts the value into requests to the secret's hosts. Values go
 * to the key store and never come back.
 */
export function SecretsSection(props: {
  catalog: SandboxCatalog;
  problem: string | null | undefined;
  onToggle: (name: string, on: boolean) => Promise<boolean>;
  onStored: () => void;
}): JSX.Element {
  return (
    <section class="card" aria-labelledby="secrets-title">
      <div class="card-head">
        <div>
          <h2 class="card-title" id="secrets-title">
            Secrets offered to sessions
          </h2>
          <p class="card-description">
            OpenShell sessions only: the sandbox sees a placeholder, and the gateway injects the
            value into requests to the secret's hosts. The local wall never puts a secret inside a
            sandbox, so its sessions cannot take one.
          </p>
        </div>
      </div>
      <ul class="secret-list">
        <For each={props.catalog.secrets}>
          {(secret) => <SecretRow secret={secret} onToggle={props.onToggle} onStored={props.onStored} />}
        </For>
      </ul>
      <ProblemNotice text={props.problem} />
    </section>
  );
}

function SecretRow(props: {
  secret: SecretOffer;
  onToggle: (name: string, on: boolean) => Promise<boolean>;
  onStored: () => void;
}): JSX.Element {
  const app = useApp();
  const [setting, setSetting] = createSignal(false);
  const [value, setValue] = createSignal("");
  const [problem, setProblem] = createSignal<string | null>(null);
  return (
    <li class="secret-row">
      <Toggle
        checked={props.secret.offered}
        label={`Offer ${props.secret.name} to sessions`}
        hideLabel
        onChange={(on) => void props.onToggle(props.secret.name, on)}
      />
      <div class="secret-main">
        <code class="secret-name">{props.secret.name}</code>
        <span class="muted mono-small">{props.secret.hosts.join(", ") || "hosts named per session"}</span>
      </div>
      <Show
        when={props.secret.has_value !== null}
        fallback={<Badge tone="neutral">key store unreadable</Badge>}
      >
        <Show when={props.secret.has_value} fallback={<Badge tone="warn">no value stored</Badge>}>
          <Badge tone="ok">value stored</Badge>
        </Show>
      </Show>
      <Show
        when={setting()}
        fallback={
          <button type="button" class="button button-small" onClick={() => setSetting(true)}>
            Set value<span class="visually-hidden"> of {props.secret.name}</span>
          </button>
        }
      >
        <form
          class="inline-form secret-form"
          onSubmit={(event) => {
            const onStored = props.onStored;
            event.preventDefault();
            setProblem(null);
            storeSecret(app.api, props.secret.name, value()).then(
              () => {
                setValue("");
                setSetting(false);
                onStored();
              },
              (error: unknown) => setProblem(describeError(error).message),
            );
          }}
        >
          <label class="visually-hidden" for={`secret-${props.secret.name}`}>
            Value of {props.secret.name}
          </label>
          <input
            id={`secret-${props.secret.name}`}
            class="input"
            type="password"
            autocomplete="off"
            value={value()}
            onInput={(event) => setValue(event.currentTarget.value)}
          />
          <button type="submit" class="button button-small button-primary" disabled={value() === ""}>
            Store
          </button>
          <button type="button" class="button button-small button-ghost" onClick={() => setSetting(false)}>
            Cancel
          </button>
        </form>
      </Show>
      <Show when={problem()}>
        {(text) => (
          <p class="field-error secret-problem" role="alert">
            {text()}
          </p>
        )}
      </Show>
    </li>
  );
}
