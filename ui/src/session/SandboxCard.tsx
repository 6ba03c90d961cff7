import type { ProviderKind } from "@server/ProviderKind";
import { createResource, For, type JSX, Match, Show, Switch } from "solid-js";
import { useApp } from "../app/context";
import { sandboxStatus } from "../api/machine";
import { EnforcementBadge } from "../components/Badge";
import { CheckRow } from "../components/CheckRow";
import { Icon } from "../components/Icon";
import { describeError } from "../components/states";
import type { SandboxBuild } from "./timeline";

/**
 * The session's sandbox: being built (each step as it comes), ready (with what its attestation
 * checked from inside), rebuilt (and why), or refused (the reason and the command that fixes
 * it). A refused wall never runs open: the session's tools simply do not run.
 */
export function SandboxCard(props: { build: SandboxBuild; provider: ProviderKind | null }): JSX.Element {
  const passed = () => props.build.attestation?.canaries.filter((c) => c.passed).length ?? 0;
  const total = () => props.build.attestation?.canaries.length ?? 0;
  return (
    <div class="sandbox-card" classList={{ [`sandbox-card-${props.build.state}`]: true }}>
      <Switch>
        <Match when={props.build.state === "building"}>
          <div class="sandbox-card-head" role="status">
            <span class="spinner" aria-hidden="true" />
            <span>Building the sandbox…</span>
          </div>
        </Match>
        <Match when={props.build.state === "ready"}>
          <div class="sandbox-card-head">
            <Icon name="shield" />
            <span>{props.build.rebuiltBecause ? "Sandbox rebuilt" : "Sandbox ready"}</span>
            <Show when={props.build.enforcement}>
              {(level) => <EnforcementBadge level={level()} />}
            </Show>
            <Show when={total() > 0}>
              <span class="muted">
                {passed()} of {total()} checks from inside passed
              </span>
            </Show>
          </div>
          <Show when={props.build.rebuiltBecause}>
            {(reason) => (
              <p class="sandbox-card-note">
                {/[.!?]$/.test(reason().trim()) ? reason().trim() : `${reason().trim()}.`} Its shell state
                (working folder, variables, background processes) was lost.
              </p>
            )}
          </Show>
        </Match>
        <Match when={props.build.state === "refused" && props.build.refusal}>
          {(refusal) => (
            <div role="alert">
              <div class="sandbox-card-head">
                <Icon name="alert" />
                <span>The sandbox was refused: no tool ran without it</span>
              </div>
              <p class="sandbox-card-reason">{refusal().reason}</p>
              <RefusalFixes provider={props.provider} diagnose={refusal().diagnose} />
            </div>
          )}
        </Match>
      </Switch>
      <Show when={props.build.steps.length > 0}>
        <details class="sandbox-card-steps" open={props.build.state === "building"}>
          <summary>Build steps</summary>
          <ol>
            <For each={props.build.steps}>{(step) => <li>{step}</li>}</For>
          </ol>
        </details>
      </Show>
      <Show when={props.build.attestation && total() > 0}>
        <details class="sandbox-card-steps">
          <summary>Attestation</summary>
          <ul class="canaries">
            <For each={props.build.attestation?.canaries ?? []}>
              {(canary) => (
                <li classList={{ "canary-failed": !canary.passed }}>
                  <Icon name={canary.passed ? "check" : "close"} size={13} />
                  <code>{canary.name}</code> <span class="muted">{canary.detail}</span>
                </li>
              )}
            </For>
          </ul>
          <p class="muted mono-small">{props.build.attestation?.config_hash}</p>
        </details>
      </Show>
    </div>
  );
}

/**
 * What fixes a refused wall: this machine's failing checks for the session's wall, each with
 * its fix, read from the machine status when the card is shown; and the command that shows the
 * same in a terminal.
 */
function RefusalFixes(props: { provider: ProviderKind | null; diagnose: string }): JSX.Element {
  const app = useApp();
  const [status, { refetch }] = createResource(
    // The session's wall; when not known yet, the machine's configured one.
    () => ({ provider: props.provider ?? undefined }),
    ({ provider }) => sandboxStatus(app.api, provider),
  );
  // Reading a failed resource throws: only a read status has checks.
  const read = () => (status.state === "ready" ? status() : undefined);
  const failing = () => read()?.checks.filter((check) => !check.ok) ?? [];
  return (
    <div class="sandbox-card-fixes">
      <Switch>
        <Match when={status.loading}>
          <p class="muted" role="status">
            Checking this machine for the fix…
          </p>
        </Match>
        <Match when={status.error as unknown}>
          {(error) => (
            <p class="muted">
              The machine's checks could not be read ({describeError(error()).message}).{" "}
              <button type="button" class="button button-small" onClick={() => void refetch()}>
                Check again
              </button>
            </p>
          )}
        </Match>
        <Match when={failing().length > 0}>
          <h4 class="sandbox-card-subtitle">How to fix it</h4>
          <ul class="checks">
            <For each={failing()}>{(check) => <CheckRow check={check} />}</For>
          </ul>
        </Match>
        <Match when={read()}>
          <p class="sandbox-card-note">
            Every check of this machine passes now: resume the session or send the next message
            to try again.{" "}
            <button type="button" class="button button-small" onClick={() => void refetch()}>
              Check again
            </button>
          </p>
        </Match>
      </Switch>
      <p class="sandbox-card-fix">
        The same checks in a terminal: <code>{props.diagnose}</code>
      </p>
    </div>
  );
}
