import type { Event } from "@server/Event";
import type { SessionInfo } from "@server/SessionInfo";
import { A, useParams } from "@solidjs/router";
import {
  createEffect,
  createMemo,
  createResource,
  createSignal,
  For,
  type JSX,
  Match,
  on,
  onCleanup,
  Show,
  Switch,
} from "solid-js";
import { createStore, produce } from "solid-js/store";
import { useApp } from "../app/context";
import type { StreamState } from "../api/events";
import { closeSession, getSession, interrupt, resumeSession, sendTurn, sessionEvents } from "../api/sessions";
import { EnforcementBadge } from "../components/Badge";
import { shortId } from "../components/format";
import { Icon } from "../components/Icon";
import { SessionStateBadge } from "../components/SessionBits";
import { describeError, ErrorState, Loading } from "../components/states";
import { createLiveOutput, type LiveOutputSource } from "../output/LiveOutput";
import { SandboxCard } from "../session/SandboxCard";
import { SessionSidebar } from "../session/SessionSidebar";
import { emptyTimeline, reduce, type TimelineItem } from "../session/timeline";
import { ToolCallCard } from "../session/ToolCallCard";

/** Live output kept per call: this many lines (older ones are dropped and counted). */
const OUTPUT_LINES = 100_000;

export default function SessionView(): JSX.Element {
  const app = useApp();
  const params = useParams<{ id: string }>();
  const [session, { refetch, mutate }] = createResource(
    () => params.id,
    (id) => getSession(app.api, id),
  );
  return (
    <Switch>
      <Match when={session.error as unknown}>
        {(error) => (
          <section class="page-body">
            <ErrorState error={error()} title="This session could not be opened" onRetry={() => void refetch()} />
            <p class="back-link">
              <A href="/sessions">Back to Sessions</A>
            </p>
          </section>
        )}
      </Match>
      <Match when={session.latest}>
        {(info) => (
          <SessionPage
            info={info()}
            onInfo={(next) => mutate(next)}
            refresh={() => void refetch()}
          />
        )}
      </Match>
      <Match when={true}>
        <section class="page-body">
          <Loading label="Opening the session…" />
        </section>
      </Match>
    </Switch>
  );
}

function SessionPage(props: {
  info: SessionInfo;
  onInfo: (info: SessionInfo) => void;
  refresh: () => void;
}): JSX.Element {
  const app = useApp();
  const [timeline, setTimeline] = createStore(emptyTimeline());
  const [live, setLive] = createSignal(new Map<string, LiveOutputSource>());
  const [stream, setStream] = createSignal<StreamState>({ kind: "connecting" });
  let scroller: HTMLElement | null = null;

  const liveFor = (callId: string, create: boolean): LiveOutputSource | undefined => {
    const existing = live().get(callId);
    if (existing || !create) {
      return existing;
    }
    const source = createLiveOutput({ maxLines: OUTPUT_LINES });
    setLive(new Map(live()).set(callId, source));
    return source;
  };

  const nearBottom = () => {
    if (!scroller) {
      return true;
    }
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 120;
  };

  // Many events in a row (a replay) read the session's summary again once.
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;
  const refreshSoon = () => {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => { props.refresh(); }, 300);
  };
  onCleanup(() => { clearTimeout(refreshTimer); });

  const onEvent = (event: Event) => {
    const msg = event.msg;
    if (msg.type === "tool_call_output") {
      liveFor(msg.call_id, true)?.append(msg.chunk);
      return;
    }
    const follow = nearBottom();
    if (msg.type === "tool_call_started") {
      liveFor(msg.call_id, true);
    }
    setTimeline(produce((state) => { reduce(state, event); }));
    if (
      msg.type === "tool_call_awaiting_approval" ||
      msg.type === "tool_call_approved" ||
      msg.type === "tool_call_denied"
    ) {
      app.refreshInbox();
    }
    if (
      msg.type === "session_closed" ||
      msg.type === "folder_granted" ||
      msg.type === "folder_revoked" ||
      msg.type === "sandbox_ready" ||
      msg.type === "sandbox_recreated" ||
      msg.type === "turn_finished"
    ) {
      refreshSoon();
    }
    if (follow && scroller) {
      const element = scroller;
      queueMicrotask(() => {
        element.scrollTop = element.scrollHeight;
      });
    }
  };

  // A memo, so that a new summary of the same session (every refresh) does not start the
  // stream again: `on` runs whenever its source notifies, even with the same id, and a new
  // stream replays the log, whose `sandbox_ready` asks for a refresh: a reconnect loop that
  // lost every live-only event (the calls' output).
  const sessionId = createMemo(() => props.info.id);
  createEffect(
    on(
      sessionId,
      (id) => {
        setTimeline(emptyTimeline());
        setLive(new Map());
        const events = sessionEvents(app.api, id, { onEvent, onState: setStream });
        events.start();
        onCleanup(() => { events.close(); });
      },
    ),
  );

  const running = () => props.info.state === "running";
  const [busy, setBusy] = createSignal(false);
  const [problem, setProblem] = createSignal<string | null>(null);
  const act = async (action: () => Promise<SessionInfo | undefined>) => {
    setBusy(true);
    setProblem(null);
    try {
      const next = await action();
      if (next) {
        props.onInfo(next);
      }
    } catch (error) {
      setProblem(describeError(error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div
      class="session-page"
      ref={(element) => {
        scroller = element.closest(".main");
      }}
    >
      <header class="page-header session-header">
        <div class="session-heading">
          <p class="breadcrumb">
            <A href="/sessions">Sessions</A>
            <Icon name="chevronRight" size={12} />
            <span title={props.info.id}>{shortId(props.info.id)}</span>
          </p>
          <h1>{props.info.title || "Untitled session"}</h1>
          <div class="session-facts">
            <SessionStateBadge state={props.info.state} />
            <Show when={props.info.enforcement}>{(level) => <EnforcementBadge level={level()} />}</Show>
            <StreamIndicator state={stream()} />
          </div>
        </div>
        <div class="page-actions">
          <Show when={timeline.turnRunning && running()}>
            <button type="button" class="button" disabled={busy()} onClick={() => {
              const id = props.info.id;
              void act(async () => {
                await interrupt(app.api, id);
                return undefined;
              });
            }}>
              <Icon name="stop" size={14} />
              Interrupt
            </button>
          </Show>
          <Show when={props.info.state === "stored"}>
            <button type="button" class="button button-primary" disabled={busy()} onClick={() => { const id = props.info.id; void act(() => resumeSession(app.api, id)); }}>
              <Icon name="play" size={14} />
              Resume
            </button>
          </Show>
          <Show when={running()}>
            <button type="button" class="button button-ghost" disabled={busy()} onClick={() => { const id = props.info.id; void act(() => closeSession(app.api, id)); }}>
              Close session
            </button>
          </Show>
        </div>
      </header>
      <Show when={props.info.warning}>
        {(warning) => (
          <div class="notice notice-danger session-warning" role="alert">
            <Icon name="alert" />
            <span>{warning()}</span>
          </div>
        )}
      </Show>
      <Show when={problem()}>
        {(text) => (
          <div class="notice notice-danger session-warning" role="alert">
            <Icon name="alert" />
            <span>{text()}</span>
          </div>
        )}
      </Show>
      <div class="session-layout">
        <section class="conversation" aria-label="Conversation">
          <Show when={timeline.items.length === 0 && stream().kind !== "connecting"}>
            <p class="conversation-empty">
              Nothing has happened in this session yet. Tell the agent what to do below.
            </p>
          </Show>
          <ol class="timeline">
            <For each={timeline.items}>
              {(item) => (
                <li class="timeline-item">
                  <TimelineEntry
                    item={item}
                    sessionId={props.info.id}
                    live={item.kind === "tool" ? live().get(item.callId) : undefined}
                    allowedHosts={timeline.allowedHosts}
                    canAct={running()}
                  />
                </li>
              )}
            </For>
          </ol>
          <Show when={timeline.turnRunning}>
            <p class="working" role="status">
              <span class="spinner" aria-hidden="true" />
              The agent is working…
            </p>
          </Show>
          <Composer
            sessionId={props.info.id}
            running={running()}
            turnRunning={timeline.turnRunning}
            onResume={() => { const id = props.info.id; void act(() => resumeSession(app.api, id)); }}
          />
        </section>
        <SessionSidebar
          info={props.info}
          folders={timeline.folders.length > 0 ? timeline.folders : props.info.folders}
          provider={timeline.provider ?? props.info.provider}
          settings={timeline.settings ?? props.info.settings}
          allowedHosts={timeline.allowedHosts}
        />
      </div>
    </div>
  );
}

function StreamIndicator(props: { state: StreamState }): JSX.Element {
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

function TimelineEntry(props: {
  item: TimelineItem;
  sessionId: string;
  live: LiveOutputSource | undefined;
  allowedHosts: string[];
  canAct: boolean;
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
        {(item) => <SandboxCard build={item()} />}
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

function Composer(props: {
  sessionId: string;
  running: boolean;
  turnRunning: boolean;
  onResume: () => void;
}): JSX.Element {
  const app = useApp();
  const [text, setText] = createSignal("");
  const [busy, setBusy] = createSignal(false);
  const [problem, setProblem] = createSignal<string | null>(null);
  const send = async () => {
    const message = text().trim();
    if (message === "" || busy()) {
      return;
    }
    setBusy(true);
    setProblem(null);
    try {
      await sendTurn(app.api, props.sessionId, message);
      setText("");
    } catch (error) {
      setProblem(describeError(error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Show
      when={props.running}
      fallback={
        <div class="composer composer-stored">
          <span>This session is not running here. Resume it to continue the conversation.</span>
          <button type="button" class="button button-primary" onClick={() => { props.onResume(); }}>
            <Icon name="play" size={14} />
            Resume
          </button>
        </div>
      }
    >
      <form
        class="composer"
        onSubmit={(event) => {
          event.preventDefault();
          void send();
        }}
      >
        <label class="visually-hidden" for="composer-text">
          Message to the agent
        </label>
        <textarea
          id="composer-text"
          class="textarea composer-text"
          rows="2"
          placeholder={props.turnRunning ? "The agent is working; you can send the next message when it is done" : "Tell the agent what to do next (Ctrl+Enter sends)"}
          value={text()}
          onInput={(event) => setText(event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
              event.preventDefault();
              void send();
            }
          }}
        />
        <button type="submit" class="button button-primary" disabled={busy() || props.turnRunning || text().trim() === ""}>
          <Icon name="send" size={14} />
          Send
        </button>
        <Show when={problem()}>
          {(message) => (
            <p class="field-error composer-problem" role="alert">
              {message()}
            </p>
          )}
        </Show>
      </form>
    </Show>
  );
}
