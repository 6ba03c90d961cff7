import type { ModelCheck } from "@server/ModelCheck";
import type { ModelProvider } from "@server/ModelProvider";
import type { SettingsView } from "@server/SettingsView";
import { createResource, createSignal, For, type JSX, Show, untrack } from "solid-js";
import { useApp } from "../../app/context";
import { keyStore, providers, storeKey, testModel } from "../../api/models";
import { readSettings, textSetting, updateSettings } from "../../api/settings";
import { Badge } from "../../components/Badge";
import { Icon } from "../../components/Icon";
import { PageHeader } from "../../components/PageHeader";
import { AsyncView, describeError, ProblemNotice } from "../../components/states";

const KEY_STORES: { value: string; label: string }[] = [
  { value: "keychain", label: "OS keychain (secret service)" },
  { value: "file", label: "Owner-only file in Paddock's state folder" },
  { value: "env", label: "Environment variables (read-only)" },
];

/** The model sessions use, its key (stored through the host, never shown), and a test. */
export default function ModelSettings(): JSX.Element {
  const app = useApp();
  const [data, { refetch }] = createResource(async () => {
    const [settings, list] = await Promise.all([readSettings(app.api), providers(app.api)]);
    return { settings, providers: list };
  });
  return (
    <>
      <PageHeader title="Models" description="The model sessions talk to, and its API key." />
      <section class="page-body stack">
        <AsyncView resource={data} loadingLabel="Loading the model settings…" errorTitle="The model settings could not be loaded" onRetry={() => void refetch()}>
          {(loaded) => (
            <>
              <ModelForm settings={loaded.settings} providers={loaded.providers} onSaved={() => void refetch()} />
              <KeySection settings={loaded.settings} providers={loaded.providers} onChanged={() => void refetch()} />
              <TestSection />
            </>
          )}
        </AsyncView>
      </section>
    </>
  );
}

function ModelForm(props: { settings: SettingsView; providers: ModelProvider[]; onSaved: () => void }): JSX.Element {
  const app = useApp();
  const [provider, setProvider] = createSignal(untrack(() => textSetting(props.settings, "models.provider")) ?? "anthropic");
  const [model, setModel] = createSignal(untrack(() => textSetting(props.settings, "models.model")) ?? "");
  const [baseUrl, setBaseUrl] = createSignal(untrack(() => textSetting(props.settings, "models.base_url")) ?? "");
  const [problem, setProblem] = createSignal<string | null>(null);
  const [saved, setSaved] = createSignal(false);
  const preset = () => props.providers.find((p) => p.name === provider());
  return (
    <form
      class="card form"
      aria-labelledby="model-title"
      onSubmit={(event) => {
        const onSaved = props.onSaved;
        event.preventDefault();
        setProblem(null);
        setSaved(false);
        const url = baseUrl().trim();
        updateSettings(app.api, {
          "models.provider": provider(),
          "models.model": model().trim(),
          // The preset's own address is the default: keep the file free of it.
          "models.base_url": url === "" || url === preset()?.base_url ? null : url,
        }).then(
          () => {
            setSaved(true);
            onSaved();
          },
          (error: unknown) => setProblem(describeError(error).message),
        );
      }}
    >
      <div class="card-head">
        <div>
          <h2 class="card-title" id="model-title">
            Model
          </h2>
          <p class="card-description">New sessions use this provider and model.</p>
        </div>
      </div>
      <div class="form-grid">
        <label class="field">
          <span class="field-label">Provider</span>
          <select
            class="select"
            value={provider()}
            onChange={(event) => {
              setProvider(event.currentTarget.value);
              const chosen = props.providers.find((p) => p.name === event.currentTarget.value);
              if (chosen) {
                setBaseUrl(chosen.base_url);
              }
            }}
          >
            <For each={props.providers}>{(p) => <option value={p.name}>{p.name}</option>}</For>
            <option value="custom">custom</option>
          </select>
        </label>
        <label class="field">
          <span class="field-label">Model</span>
          <input class="input input-mono" type="text" value={model()} onInput={(e) => setModel(e.currentTarget.value)} />
        </label>
        <label class="field form-grid-wide">
          <span class="field-label">Base URL</span>
          <input class="input input-mono" type="url" value={baseUrl()} placeholder={preset()?.base_url ?? "https://…"} onInput={(e) => setBaseUrl(e.currentTarget.value)} />
          <span class="field-hint">
            <Show when={preset()} fallback="A custom provider needs its API's address and its vendor in the config file.">
              {(p) => `The ${p().name} API speaks the ${p().vendor === "anthropic" ? "Anthropic Messages" : "OpenAI Chat Completions"} format.`}
            </Show>
          </span>
        </label>
      </div>
      <ProblemNotice text={problem()} />
      <div class="form-actions">
        <Show when={saved()}>
          <span class="field-ok" role="status">
            <Icon name="check" size={13} />
            Saved
          </span>
        </Show>
        <button type="submit" class="button button-primary">
          Save model
        </button>
      </div>
    </form>
  );
}

function KeySection(props: { settings: SettingsView; providers: ModelProvider[]; onChanged: () => void }): JSX.Element {
  const app = useApp();
  const [store, { refetch }] = createResource(() => keyStore(app.api));
  const [key, setKey] = createSignal("");
  const [problem, setProblem] = createSignal<string | null>(null);
  const [stored, setStored] = createSignal<string | null>(null);
  const configured = () => props.providers.find((p) => p.configured);
  const storeKind = () => textSetting(props.settings, "models.key_store") ?? "env";
  return (
    <section class="card" aria-labelledby="key-title">
      <div class="card-head">
        <div>
          <h2 class="card-title" id="key-title">
            API key
          </h2>
          <p class="card-description">
            Kept by Paddock on this machine, in its key store: never shown again, never in a log,
            an audit row or a sandbox.
          </p>
        </div>
        <Show when={configured()}>
          {(p) => (
            <Show when={p().key !== "none"} fallback={<Badge tone="neutral">no key needed</Badge>}>
              <Show when={p().has_key} fallback={<Badge tone="warn">no key stored</Badge>}>
                <Badge tone="ok">key stored</Badge>
              </Show>
            </Show>
          )}
        </Show>
      </div>
      <AsyncView resource={store} loadingLabel="Checking the key store…" onRetry={() => void refetch()}>
        {(status) => (
          <>
            <dl class="facts facts-wide">
              <dt>Key store</dt>
              <dd>
                <select
                  class="select select-inline"
                  aria-label="Key store"
                  value={storeKind()}
                  onChange={(event) => {
                    const onChanged = props.onChanged;
                    setProblem(null);
                    updateSettings(app.api, { "models.key_store": event.currentTarget.value }).then(
                      () => {
                        void refetch();
                        onChanged();
                      },
                      (error: unknown) => setProblem(describeError(error).message),
                    );
                  }}
                >
                  <For each={KEY_STORES}>{(s) => <option value={s.value}>{s.label}</option>}</For>
                </select>
              </dd>
              <dt>Where</dt>
              <dd>{status.description}</dd>
            </dl>
            <Show when={status.problem}>
              {(text) => (
                <div class="notice notice-danger" role="alert">
                  <Icon name="alert" />
                  <span>
                    <strong>The key store cannot be used.</strong> {text()}
                  </span>
                </div>
              )}
            </Show>
            <Show
              when={status.writable}
              fallback={
                <p class="notice notice-info">
                  <Icon name="key" />
                  <span>
                    This store is read-only: set <code>{configured()?.env_variable ?? "the provider's _API_KEY variable"}</code> in
                    the environment that starts Paddock, or choose another store above.
                  </span>
                </p>
              }
            >
              <form
                class="inline-form"
                onSubmit={(event) => {
                  const onChanged = props.onChanged;
                  event.preventDefault();
                  setProblem(null);
                  setStored(null);
                  const provider = textSetting(props.settings, "models.provider") ?? "anthropic";
                  storeKey(app.api, provider, key()).then(
                    (saved) => {
                      setKey("");
                      setStored(
                        saved.check === null || saved.check.ok
                          ? `Stored in ${saved.store}.`
                          : `Stored in ${saved.store}, not tested: ${saved.check.detail}`,
                      );
                      onChanged();
                    },
                    (error: unknown) => setProblem(describeError(error).message),
                  );
                }}
              >
                <label class="visually-hidden" for="model-key">
                  API key for {textSetting(props.settings, "models.provider")}
                </label>
                <input
                  id="model-key"
                  class="input input-mono"
                  type="password"
                  autocomplete="off"
                  placeholder={`API key for ${textSetting(props.settings, "models.provider") ?? "the provider"}`}
                  value={key()}
                  onInput={(event) => setKey(event.currentTarget.value)}
                />
                <button type="submit" class="button button-primary" disabled={key().trim() === ""}>
                  <Icon name="key" size={14} />
                  Store key
                </button>
              </form>
            </Show>
          </>
        )}
      </AsyncView>
      <Show when={stored()}>
        <p class="field-ok" role="status">
          <Icon name="check" size={13} />
          {stored()} Test the connection below.
        </p>
      </Show>
      <ProblemNotice text={problem()} />
    </section>
  );
}

function TestSection(): JSX.Element {
  const app = useApp();
  const [result, setResult] = createSignal<ModelCheck | null>(null);
  const [busy, setBusy] = createSignal(false);
  const [problem, setProblem] = createSignal<string | null>(null);
  return (
    <section class="card" aria-labelledby="test-title">
      <div class="card-head">
        <div>
          <h2 class="card-title" id="test-title">
            Test connection
          </h2>
          <p class="card-description">Sends a one-token request with the stored key.</p>
        </div>
        <button
          type="button"
          class="button"
          disabled={busy()}
          onClick={() => {
            setBusy(true);
            setProblem(null);
            testModel(app.api).then(
              (check) => {
                setResult(check);
                setBusy(false);
              },
              (error: unknown) => {
                setProblem(describeError(error).message);
                setBusy(false);
              },
            );
          }}
        >
          {busy() ? "Testing…" : "Test connection"}
        </button>
      </div>
      <Show when={result()}>
        {(check) => (
          <p class={`notice ${check().ok ? "notice-ok" : "notice-danger"}`} role="status">
            <Icon name={check().ok ? "check" : "alert"} />
            <span>
              <strong>
                {check().provider} · {check().model}:
              </strong>{" "}
              {check().detail}
            </span>
          </p>
        )}
      </Show>
      <Show when={problem()}>
        {(text) => (
          <p class="field-error" role="alert">
            {text()}
          </p>
        )}
      </Show>
    </section>
  );
}
