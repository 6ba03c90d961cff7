import type { NetworkProfileName } from "@server/NetworkProfileName";
import type { ProviderKind } from "@server/ProviderKind";
import type { SandboxCatalog } from "@server/SandboxCatalog";
import type { SettingValue } from "@server/SettingValue";
import type { SettingsView } from "@server/SettingsView";
import { createResource, createSignal, For, type JSX, Show, untrack } from "solid-js";
import { useApp } from "../../app/context";
import { sandboxCatalog, sandboxStatus } from "../../api/machine";
import { listSetting, readSettings, textSetting, updateSettings } from "../../api/settings";
import { Badge, EnforcementBadge } from "../../components/Badge";
import { CheckRow } from "../../components/CheckRow";
import { Dialog } from "../../components/Dialog";
import { Icon } from "../../components/Icon";
import { PageHeader } from "../../components/PageHeader";
import { AsyncView, describeError, ErrorState, Loading, ProblemNotice } from "../../components/states";
import { CredentialRows } from "./CredentialRows";
import { HostListEditor } from "./HostListEditor";
import { ProtectedList } from "./ProtectedList";
import { SecretsSection } from "./SecretsSection";

const PROVIDERS: { kind: ProviderKind; name: string; summary: string }[] = [
  {
    kind: "local",
    name: "Local wall",
    summary:
      "Paddock's own Linux wall: namespaces, Landlock and seccomp, with an allow-list proxy for the network.",
  },
  {
    kind: "openshell",
    name: "OpenShell",
    summary: "An NVIDIA OpenShell sandbox per session, through its gateway.",
  },
  {
    kind: "direct",
    name: "Direct",
    summary: "No wall: commands run on this machine with your rights. Only when you mean it.",
  },
];

/** The machine's sandbox settings, written to its config file keeping the user's comments. */
export default function SandboxSettings(): JSX.Element {
  const app = useApp();
  const [settings, { refetch, mutate }] = createResource(() => readSettings(app.api));
  const [catalog, catalogControls] = createResource(() => sandboxCatalog(app.api));
  const [problem, setProblem] = createSignal<{ section: string; message: string } | null>(null);

  /** Writes `changes`; the error (naming the key) is shown in the section that asked. */
  const change = async (section: string, changes: Record<string, SettingValue>): Promise<boolean> => {
    setProblem(null);
    try {
      mutate(await updateSettings(app.api, changes));
      app.refreshMachine();
      void catalogControls.refetch();
      return true;
    } catch (error) {
      setProblem({ section, message: describeError(error).message });
      return false;
    }
  };
  const problemIn = (section: string) => (problem()?.section === section ? problem()?.message : null);

  return (
    <>
      <PageHeader
        title="Sandbox"
        description="Where the agent's tools run on this machine, what they may reach, and what they are given."
      />
      <section class="page-body stack">
        <AsyncView
          resource={settings}
          loadingLabel="Loading the sandbox settings…"
          errorTitle="The settings could not be loaded"
          onRetry={() => void refetch()}
        >
          {(view) => (
            <>
              <ProviderSection view={view} problem={problemIn("provider")} change={(c) => change("provider", c)} />
              <Show when={catalog.latest} fallback={catalog.error ? <ErrorState error={catalog.error as unknown} onRetry={() => void catalogControls.refetch()} /> : <Loading />}>
                {(data) => (
                  <>
                    <ProfileSection view={view} catalog={data()} problem={problemIn("profile")} change={(c) => change("profile", c)} />
                    <section class="card" aria-labelledby="hosts-title">
                      <div class="card-head">
                        <div>
                          <h2 class="card-title" id="hosts-title">
                            Extra hosts
                          </h2>
                          <p class="card-description">
                            Hosts every session may reach beyond its profile: <code>host</code>,{" "}
                            <code>host:port</code> or <code>*.host</code>.
                          </p>
                        </div>
                      </div>
                      <HostListEditor
                        label="Extra host"
                        hosts={listSetting(view, "sandbox.extra_hosts")}
                        problem={problemIn("hosts")}
                        onSave={(hosts) => change("hosts", { "sandbox.extra_hosts": hosts })}
                      />
                    </section>
                    <CredentialRows
                      catalog={data()}
                      problem={problemIn("credentials")}
                      onToggle={(name, on) => {
                        const current = listSetting(view, "sandbox.credentials");
                        const next = on ? [...current.filter((n) => n !== name), name] : current.filter((n) => n !== name);
                        return change("credentials", { "sandbox.credentials": next });
                      }}
                      onRowsChanged={() => {
                        void catalogControls.refetch();
                        void refetch();
                      }}
                    />
                    <SecretsSection
                      catalog={data()}
                      problem={problemIn("secrets")}
                      onToggle={(name, on) => {
                        const current = listSetting(view, "sandbox.secrets");
                        const next = on ? [...current.filter((n) => n !== name), name] : current.filter((n) => n !== name);
                        return change("secrets", { "sandbox.secrets": next });
                      }}
                      onStored={() => void catalogControls.refetch()}
                    />
                  </>
                )}
              </Show>
              <ProtectedList version={view} />
              <p class="muted settings-file">
                Changes are written to <code>{view.file}</code>, keeping your comments and layout,
                and apply to sessions started after them.
              </p>
            </>
          )}
        </AsyncView>
      </section>
    </>
  );
}

function ProviderSection(props: {
  view: SettingsView;
  problem: string | null | undefined;
  change: (changes: Record<string, SettingValue>) => Promise<boolean>;
}): JSX.Element {
  const current = () => (textSetting(props.view, "sandbox.provider") ?? "local") as ProviderKind;
  const [confirmDirect, setConfirmDirect] = createSignal(false);
  const [gateway, setGateway] = createSignal(untrack(() => textSetting(props.view, "openshell.gateway")) ?? "");
  const [image, setImage] = createSignal(untrack(() => textSetting(props.view, "openshell.image")) ?? "");
  const choose = (kind: ProviderKind) => {
    if (kind === current()) {
      return;
    }
    if (kind === "direct") {
      setConfirmDirect(true);
      return;
    }
    const changes: Record<string, SettingValue> = { "sandbox.provider": kind };
    if (kind === "openshell") {
      changes["openshell.gateway"] = gateway().trim() === "" ? null : gateway().trim();
      changes["openshell.image"] = image().trim() === "" ? null : image().trim();
    }
    void props.change(changes);
  };
  return (
    <section class="card" aria-labelledby="provider-title">
      <div class="card-head">
        <div>
          <h2 class="card-title" id="provider-title">
            Provider
          </h2>
          <p class="card-description">
            The wall new sessions run in. Each shows what this machine has for it right now, and
            the fix for anything missing. When the chosen wall cannot be built, sessions are
            refused, never run without it.
          </p>
        </div>
      </div>
      <fieldset class="provider-grid">
        <legend class="visually-hidden">Provider</legend>
        <For each={PROVIDERS}>
          {(provider) => (
            <div class="provider-card" classList={{ "provider-card-current": provider.kind === current(), "provider-card-direct": provider.kind === "direct" }}>
              <label class="provider-choice">
                <input
                  type="radio"
                  name="provider"
                  value={provider.kind}
                  checked={provider.kind === current()}
                  onChange={() => { choose(provider.kind); }}
                />
                <span class="provider-name">{provider.name}</span>
                <Show when={provider.kind === current()}>
                  <Badge tone="ok">In use</Badge>
                </Show>
              </label>
              <p class="provider-summary">{provider.summary}</p>
              <Show when={provider.kind === "openshell"}>
                <div class="form-grid">
                  <label class="field">
                    <span class="field-label">Gateway</span>
                    <input class="input input-mono" type="text" placeholder="default" value={gateway()} onInput={(e) => setGateway(e.currentTarget.value)} />
                  </label>
                  <label class="field">
                    <span class="field-label">Sandbox image (pinned by digest)</span>
                    <input class="input input-mono" type="text" placeholder="ghcr.io/…@sha256:…" value={image()} onInput={(e) => setImage(e.currentTarget.value)} />
                  </label>
                </div>
                <Show when={current() === "openshell"}>
                  <button
                    type="button"
                    class="button button-small"
                    onClick={() =>
                      void props.change({
                        "openshell.gateway": gateway().trim() === "" ? null : gateway().trim(),
                        "openshell.image": image().trim() === "" ? null : image().trim(),
                      })
                    }
                  >
                    Save gateway and image
                  </button>
                </Show>
              </Show>
              <ProviderStatus kind={provider.kind} version={props.view} />
            </div>
          )}
        </For>
      </fieldset>
      <ProblemNotice text={props.problem} />
      <Dialog
        open={confirmDirect()}
        title="Run sessions without a wall?"
        onClose={() => setConfirmDirect(false)}
        footer={
          <>
            <button type="button" class="button" onClick={() => setConfirmDirect(false)}>
              Keep the wall
            </button>
            <button
              type="button"
              class="button button-danger"
              onClick={() => {
                setConfirmDirect(false);
                void props.change({ "sandbox.provider": "direct" });
              }}
            >
              Use Direct
            </button>
          </>
        }
      >
        <p>
          With Direct, every new session's commands and file tools run on this machine with your
          user's rights: no folder boundary, no network allow-list. Paddock shows a warning on
          every page while it is chosen.
        </p>
      </Dialog>
    </section>
  );
}

/** The live status of one wall on this machine: each check, and the fix for a failed one. */
function ProviderStatus(props: { kind: ProviderKind; version: SettingsView }): JSX.Element {
  const app = useApp();
  const [status, { refetch }] = createResource(
    () => ({ kind: props.kind, version: props.version }),
    ({ kind }) => sandboxStatus(app.api, kind),
  );
  return (
    <div class="provider-status" aria-label={`${props.kind} status on this machine`}>
      <AsyncView resource={status} loadingLabel="Checking this machine…" errorTitle="Not usable on this machine" onRetry={() => void refetch()}>
        {(result) => {
          const failing = () => result.checks.filter((c) => !c.ok).length;
          return (
            <>
              <p class="provider-status-line">
                <EnforcementBadge level={result.enforcement} />
                <Show
                  when={failing() === 0}
                  fallback={
                    <span class="status-bad">
                      {failing()} of {result.checks.length} checks failing
                    </span>
                  }
                >
                  <span class="status-good">
                    <Icon name="check" size={13} />
                    Ready on this machine
                  </span>
                </Show>
              </p>
              <ul class="checks">
                <For each={result.checks}>{(check) => <CheckRow check={check} />}</For>
              </ul>
            </>
          );
        }}
      </AsyncView>
    </div>
  );
}

function ProfileSection(props: {
  view: SettingsView;
  catalog: SandboxCatalog;
  problem: string | null | undefined;
  change: (changes: Record<string, SettingValue>) => Promise<boolean>;
}): JSX.Element {
  const current = () => (textSetting(props.view, "sandbox.network_profile") ?? "strict") as NetworkProfileName;
  return (
    <section class="card" aria-labelledby="profile-title">
      <div class="card-head">
        <div>
          <h2 class="card-title" id="profile-title">
            Network profile
          </h2>
          <p class="card-description">
            The hosts a sandbox may reach. Anything else is refused, and each refusal shows in
            its session with a way to allow the host.
          </p>
        </div>
      </div>
      <fieldset class="profile-list">
        <legend class="visually-hidden">Network profile</legend>
        <For each={props.catalog.profiles}>
          {(profile) => (
            <div class="profile-option" classList={{ "profile-option-current": profile.name === current() }}>
              <label class="profile-choice">
                <input
                  type="radio"
                  name="network-profile"
                  value={profile.name}
                  checked={profile.name === current()}
                  onChange={() => void props.change({ "sandbox.network_profile": profile.name })}
                />
                <span class="profile-name">{(profile.name[0] ?? "").toUpperCase() + profile.name.slice(1)}</span>
                <span class="muted">{profile.description}</span>
              </label>
              <details class="profile-hosts">
                <summary>{profile.addresses ?? `${profile.hosts.length} hosts`}</summary>
                <Show when={profile.hosts.length > 0}>
                  <ul class="host-grid">
                    <For each={profile.hosts}>{(host) => <li>{host}</li>}</For>
                  </ul>
                </Show>
                <Show when={profile.companions.length > 0}>
                  <p class="muted">Allowed along with them, because their tools fetch from them:</p>
                  <ul class="plain-list mono-small">
                    <For each={profile.companions}>
                      {(c) => (
                        <li>
                          {c.host} → {c.companions.join(", ")}
                        </li>
                      )}
                    </For>
                  </ul>
                </Show>
              </details>
            </div>
          )}
        </For>
      </fieldset>
      <ProblemNotice text={props.problem} />
    </section>
  );
}
