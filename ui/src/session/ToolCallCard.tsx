import type { HostScope } from "@server/HostScope";
import type { NetworkDenial } from "@server/NetworkDenial";
import { createSignal, For, type JSX, Match, Show, Switch } from "solid-js";
import { useApp } from "../app/context";
import { allowHost } from "../api/network";
import { Badge, EnforcementBadge } from "../components/Badge";
import { bytes, duration, prettyJson } from "../components/format";
import { Icon, type IconName } from "../components/Icon";
import { describeError } from "../components/states";
import { LiveOutput, type LiveOutputSource } from "../output/LiveOutput";
import { ApprovalPrompt } from "./ApprovalPrompt";
import { connectorTool, DECIDERS, describeCall } from "./describe";
import type { ToolCall } from "./timeline";

const ICONS: Record<string, IconName> = {
  run_bash: "terminal",
  read_file: "file",
  write_file: "file",
  edit_file: "edit",
  delete: "trash",
  glob: "folder",
  grep: "folder",
  list_directory: "folder",
};

/** The host as an allow-list entry: `name` for port 443, else `name:port`. */
export function hostEntry(denial: NetworkDenial): string {
  return denial.port === 443 ? denial.host : `${denial.host}:${denial.port}`;
}

function StatusBadge(props: { call: ToolCall }): JSX.Element {
  return (
    <Switch>
      <Match when={props.call.phase === "awaiting"}>
        <Badge tone="warn">Waiting for you</Badge>
      </Match>
      <Match when={props.call.phase === "requested" || props.call.phase === "approved"}>
        <Badge tone="neutral">Starting</Badge>
      </Match>
      <Match when={props.call.phase === "running"}>
        <Badge tone="info">
          <span class="pulse" aria-hidden="true" />
          Running
        </Badge>
      </Match>
      <Match when={props.call.status === "denied"}>
        <Badge tone="danger">Denied</Badge>
      </Match>
      <Match when={props.call.status === "cancelled"}>
        <Badge tone="warn">Cancelled</Badge>
      </Match>
      <Match when={props.call.status === "error"}>
        <Badge tone="danger">
          Failed{props.call.exitCode !== null ? ` · exit ${props.call.exitCode}` : ""}
        </Badge>
      </Match>
      <Match when={props.call.status === "ok"}>
        <Badge tone="ok">Done{props.call.exitCode !== null ? ` · exit ${props.call.exitCode}` : ""}</Badge>
      </Match>
    </Switch>
  );
}

function decidedText(call: ToolCall): string | null {
  const by = call.decidedBy;
  if (!by) {
    return null;
  }
  const who = DECIDERS[by];
  if (call.phase === "denied" || call.status === "denied") {
    return `Denied by ${who}${call.denyReason ? `: ${call.denyReason}` : ""}`;
  }
  const scope =
    call.scope === "session" ? " for this session" : call.scope === "always" ? " always" : call.scope === "once" ? " once" : "";
  return `Allowed${scope} by ${who}`;
}

/**
 * One tool call, from request to result: what it runs or touches, the wall it ran in, the
 * approval it waits for, its live output, how it ended, and the connections the wall refused
 * (each with "allow for this session" and "allow on this machine").
 */
export function ToolCallCard(props: {
  sessionId: string;
  call: ToolCall;
  live: LiveOutputSource | undefined;
  allowedHosts: string[];
  canAct: boolean;
}): JSX.Element {
  const description = () => describeCall(props.call.tool, props.call.args);
  const liveHasOutput = () => {
    props.live?.version();
    return (props.live?.buffer.size ?? 0) > 0;
  };
  const showLive = () => props.live !== undefined && (props.call.phase === "running" || liveHasOutput());
  // The buffer is not reactive; its version (bumped once a frame with new output) is.
  const received = () => {
    props.live?.version();
    return { size: props.live?.buffer.size ?? 0, dropped: props.live?.buffer.dropped ?? 0 };
  };
  return (
    <article class="tool-card" classList={{ [`tool-card-${props.call.phase}`]: true }}>
      <header class="tool-card-head">
        <Icon name={ICONS[props.call.tool] ?? (connectorTool(props.call.tool) ? "plug" : "terminal")} class="tool-card-icon" />
        <span class="tool-card-verb">{description().verb}</span>
        <Show when={description().target}>
          <code class="tool-card-target" title={description().target}>
            {description().target}
          </code>
        </Show>
        <span class="tool-card-meta">
          <Show when={props.call.enforcement}>
            {(level) => <EnforcementBadge level={level()} />}
          </Show>
          <StatusBadge call={props.call} />
          <Show when={props.call.durationMs !== null}>
            <span class="muted" title="Duration">
              {duration(props.call.durationMs ?? 0)}
            </span>
          </Show>
        </span>
      </header>

      <Show when={props.call.phase === "awaiting" && props.canAct}>
        <ApprovalPrompt
          sessionId={props.sessionId}
          callId={props.call.callId}
          summary={props.call.summary ?? description().target}
          reason={props.call.reason ?? ""}
          lastingAllowed={props.call.lastingAllowed}
        />
      </Show>
      <Show when={decidedText(props.call)}>
        {(text) => <p class="tool-card-decision">{text()}</p>}
      </Show>

      <Show when={showLive() && props.live}>
        {(live) => (
          <div class="tool-card-output">
            <LiveOutput source={live()} label={`Output of ${description().verb} ${description().target}`} height={220} />
            <p class="tool-card-flags muted">
              {bytes(received().size)} received
              <Show when={received().dropped > 0}>
                {" "}
                · oldest {received().dropped} lines no longer shown
              </Show>
            </p>
          </div>
        )}
      </Show>
      <Show when={!showLive() && props.call.phase === "finished" && props.call.output !== ""}>
        <details class="tool-card-result" open={props.call.output.length < 600}>
          <summary>Result</summary>
          <pre class="output-block">{props.call.output}</pre>
        </details>
      </Show>
      <Show when={props.call.truncated || props.call.timedOut}>
        <p class="tool-card-flags">
          <Show when={props.call.timedOut}>
            <Badge tone="warn">Timed out</Badge>
          </Show>
          <Show when={props.call.truncated}>
            <Badge tone="neutral" title="The model was given a shortened result">
              Truncated
            </Badge>
          </Show>
        </p>
      </Show>

      <Show when={props.call.networkDenials.length > 0}>
        <div class="denials" role="region" aria-label="Refused connections">
          <h4 class="denials-title">
            <Icon name="globe" size={14} />
            The network policy refused {props.call.networkDenials.length === 1 ? "a connection" : `${props.call.networkDenials.length} connections`}
          </h4>
          <ul class="denial-list">
            <For each={props.call.networkDenials}>
              {(denial) => (
                <DenialRow
                  sessionId={props.sessionId}
                  denial={denial}
                  allowed={props.allowedHosts.includes(hostEntry(denial))}
                  canAct={props.canAct}
                />
              )}
            </For>
          </ul>
        </div>
      </Show>

      <details class="tool-card-args">
        <summary>Arguments</summary>
        <pre class="output-block">{prettyJson(props.call.args)}</pre>
      </details>
    </article>
  );
}

function DenialRow(props: {
  sessionId: string;
  denial: NetworkDenial;
  allowed: boolean;
  canAct: boolean;
}): JSX.Element {
  const app = useApp();
  const [busy, setBusy] = createSignal(false);
  const [done, setDone] = createSignal<HostScope | null>(null);
  const [problem, setProblem] = createSignal<string | null>(null);
  const allow = async (scope: HostScope) => {
    setBusy(true);
    setProblem(null);
    try {
      await allowHost(app.api, props.sessionId, hostEntry(props.denial), scope);
      setDone(scope);
    } catch (error) {
      setProblem(describeError(error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <li class="denial">
      <div class="denial-what">
        <code class="denial-host">
          {props.denial.host}:{props.denial.port}
        </code>
        <Show when={props.denial.binary}>
          {(binary) => (
            <span class="muted">
              by <code>{binary()}</code>
            </span>
          )}
        </Show>
        <span class="muted">{props.denial.reason}</span>
      </div>
      <Show
        when={!props.allowed && done() === null}
        fallback={
          <span class="field-ok">
            <Icon name="check" size={13} />
            {done() === "machine" ? "Allowed on this machine" : "Allowed for this session"}
          </span>
        }
      >
        <Show when={props.canAct}>
          <div class="denial-actions">
            <button type="button" class="button button-small" disabled={busy()} onClick={() => void allow("session")}>
              Allow for this session
            </button>
            <button type="button" class="button button-small button-ghost" disabled={busy()} onClick={() => void allow("machine")}>
              Allow on this machine
            </button>
          </div>
        </Show>
      </Show>
      <Show when={problem()}>
        {(text) => (
          <p class="field-error" role="alert">
            {text()}
          </p>
        )}
      </Show>
    </li>
  );
}
