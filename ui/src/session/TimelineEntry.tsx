import type { ProviderKind } from "@server/ProviderKind";
import { type JSX, Match, Show, Switch } from "solid-js";
import type { StreamState } from "../api/events";
import type { LiveOutputSource } from "../output/LiveOutput";
import { ProtectedCard } from "./ProtectedCard";
import { SandboxCard } from "./SandboxCard";
import type { TimelineItem } from "./timeline";
import { ToolCallCard } from "./ToolCallCard";

/** Whether the session's events are arriving live, reconnecting, or refused. */
export function StreamIndicator(props: { state: StreamState }): JSX.Element {
  return (
    <Switch>
      <Match when={props.state.kind === "open"}>
        <span class="live-dot" title="Receiving this session's events as they happen">
          <span class="pulse" aria-hidden="true" />
          Live
        </span>
      </Match>
      <Match when={props.state.kind === "reconnecting"}>
        <span class="live-dot live-dot-off" role="status">
          Reconnecting…
        </span>
      </Match>
      <Match when={props.state.kind === "refused" ? props.state : null}>
        {(refused) => (
          <span class="field-error" role="alert">
            Events unavailable: {refused().reason}
          </span>
        )}
      </Match>
    </Switch>
  );
}

/** One item of the conversation: a message, a tool call, the sandbox, a notice, a protected file. */
export function TimelineEntry(props: {
  item: TimelineItem;
  sessionId: string;
  live: LiveOutputSource | undefined;
  allowedHosts: string[];
  canAct: boolean;
  provider: ProviderKind | null;
}): JSX.Element {
  return (
    <Switch>
      <Match when={props.item.kind === "user" ? props.item : null}>
        {(item) => (
          <div class="message message-user">
            <span class="message-author">You</span>
            <p class="message-text">{item().text}</p>
          </div>
        )}
      </Match>
      <Match when={props.item.kind === "assistant" ? props.item : null}>
        {(item) => (
          <div class="message message-assistant" aria-busy={item().streaming}>
            <span class="message-author">Agent</span>
            <p class="message-text">
              {item().text}
              <Show when={item().streaming}>
                <span class="caret" aria-hidden="true" />
              </Show>
            </p>
          </div>
        )}
      </Match>
      <Match when={props.item.kind === "tool" ? props.item : null}>
        {(item) => (
          <ToolCallCard
            sessionId={props.sessionId}
            call={item()}
            live={props.live}
            allowedHosts={props.allowedHosts}
            canAct={props.canAct}
          />
        )}
      </Match>
      <Match when={props.item.kind === "sandbox" ? props.item : null}>
        {(item) => <SandboxCard build={item()} provider={props.provider} />}
      </Match>
      <Match when={props.item.kind === "protected" ? props.item : null}>
        {(item) => <ProtectedCard change={item()} />}
      </Match>
      <Match when={props.item.kind === "notice" ? props.item : null}>
        {(item) => (
          <div class={`timeline-notice timeline-notice-${item().tone}`}>
            <span class="timeline-notice-title">{item().title}</span>
            <Show when={item().detail}>
              <span class="timeline-notice-detail">{item().detail}</span>
            </Show>
          </div>
        )}
      </Match>
    </Switch>
  );
}
