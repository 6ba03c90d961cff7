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
import { closeSession, getSession, interrupt, resumeSession, sessionEvents } from "../api/sessions";
import { EnforcementBadge } from "../components/Badge";
import { shortId } from "../components/format";
import { Icon } from "../components/Icon";
import { SessionStateBadge } from "../components/SessionBits";
import { describeError, ErrorState, Loading } from "../components/states";
import { createLiveOutput, type LiveOutputSource } from "../output/LiveOutput";
import { Composer } from "../session/Composer";
import { SessionSidebar } from "../session/SessionSidebar";
import { emptyTimeline, reduce } from "../session/timeline";
import { StreamIndicator, TimelineEntry } from "../session/TimelineEntry";

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
  let pageElement: HTMLElement | undefined;
  /**
   * The pane that scrolls (the shell's main area), looked up when needed: when the page's ref
   * runs, the page is not in the document yet and has no ancestors to look through.
   */
  const scrollerOf = (): HTMLElement | null => pageElement?.closest<HTMLElement>(".main") ?? null;

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
    const scroller = scrollerOf();
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
    const scroller = scrollerOf();
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
        pageElement = element;
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
                    provider={timeline.provider ?? props.info.provider}
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
            onSent={() => {
              const scroller = scrollerOf();
              if (scroller) {
                scroller.scrollTop = scroller.scrollHeight;
              }
            }}
          />
        </section>
        <SessionSidebar
          info={props.info}
          folders={timeline.folders.length > 0 ? timeline.folders : props.info.folders}
          provider={timeline.provider ?? props.info.provider}
          settings={timeline.settings ?? props.info.settings}
          allowedHosts={timeline.allowedHosts}
          standing={timeline.standing}
        />
      </div>
    </div>
  );
}

