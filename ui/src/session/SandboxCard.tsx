import { For, type JSX, Match, Show, Switch } from "solid-js";
import { EnforcementBadge } from "../components/Badge";
import { Icon } from "../components/Icon";
import type { SandboxBuild } from "./timeline";

/**
 * The session's sandbox: being built (each step as it comes), ready (with what its attestation
 * checked from inside), rebuilt (and why), or refused (the reason and the command that fixes
 * it). A refused wall never runs open: the session's tools simply do not run.
 */
export function SandboxCard(props: { build: SandboxBuild }): JSX.Element {
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
                {reason()} Its shell state (working folder, variables, background processes) was
                lost.
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
              <p class="sandbox-card-fix">
                To see why and what fixes it, run <code>{refusal().diagnose}</code>
              </p>
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
