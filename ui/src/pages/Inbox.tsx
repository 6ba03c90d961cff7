import type { PendingApproval } from "@server/PendingApproval";
import { A } from "@solidjs/router";
import { createResource, createSignal, For, type JSX, Match, onCleanup, Show, Switch } from "solid-js";
import { useApp } from "../app/context";
import { revokeStanding, standingApprovals } from "../api/approvals";
import { listSessions } from "../api/sessions";
import { Badge } from "../components/Badge";
import { prettyJson, relativeTime, shortId } from "../components/format";
import { Icon } from "../components/Icon";
import { PageHeader } from "../components/PageHeader";
import { AsyncView, describeError, Empty, ErrorState, Loading } from "../components/states";
import { ApprovalPrompt } from "../session/ApprovalPrompt";
import { describeCall } from "../session/describe";

/**
 * Every session's waiting tool calls in one place (oldest first; the first answer given
 * anywhere wins), and the machine's standing `always` approvals with revoke.
 */
export default function Inbox(): JSX.Element {
  const app = useApp();
  const [sessions] = createResource(() => listSessions(app.api));
  const [now, setNow] = createSignal(Date.now());
  const timer = setInterval(() => setNow(Date.now()), 15_000);
  onCleanup(() => { clearInterval(timer); });
  app.refreshInbox();
  const title = (id: string) => sessions.latest?.find((s) => s.id === id)?.title || shortId(id);
  return (
    <>
      <PageHeader
        title="Inbox"
        description="Tool calls waiting for your answer, from every session. The first answer wins, here or in the session."
      />
      <section class="page-body stack">
        <Switch>
          <Match when={!app.inboxStatus().loaded && app.inboxStatus().error !== null}>
            <ErrorState
              error={app.inboxStatus().error}
              title="The waiting approvals could not be read"
              onRetry={() => { app.refreshInbox(); }}
            />
          </Match>
          <Match when={!app.inboxStatus().loaded}>
            <Loading label="Reading the waiting approvals…" />
          </Match>
          <Match when={true}>
            <Show when={app.inboxStatus().error !== null}>
              <p class="notice notice-warn" role="alert">
                <Icon name="alert" />
                <span>
                  The inbox could not be read again ({describeError(app.inboxStatus().error).message}); this is
                  what it held before.
                </span>
                <button type="button" class="button button-small" onClick={() => { app.refreshInbox(); }}>
                  Try again
                </button>
              </p>
            </Show>
            <Show
              when={app.pending().length > 0}
              fallback={
                <Empty title="Nothing is waiting for you">
                  When a session's agent wants to run a command or write a file that its approval
                  mode asks about, the call waits here until you answer.
                </Empty>
              }
            >
              <ul class="inbox-list" aria-label="Waiting approvals">
                <For each={app.pending()}>
                  {(pending) => <InboxItem pending={pending} sessionTitle={title(pending.session_id)} now={now()} />}
                </For>
              </ul>
            </Show>
          </Match>
        </Switch>
        <StandingAlways />
      </section>
    </>
  );
}

function InboxItem(props: { pending: PendingApproval; sessionTitle: string; now: number }): JSX.Element {
  const description = () => describeCall(props.pending.tool, props.pending.args);
  return (
    <li class="card inbox-item">
      <div class="inbox-item-head">
        <A href={`/sessions/${encodeURIComponent(props.pending.session_id)}`} class="inbox-session">
          {props.sessionTitle}
        </A>
        <Badge tone="neutral">{description().verb}</Badge>
        <span class="muted" title={new Date(props.pending.asked_ms).toLocaleString()}>
          asked {relativeTime(props.pending.asked_ms, props.now)}
        </span>
      </div>
      <ApprovalPrompt
        sessionId={props.pending.session_id}
        callId={props.pending.call_id}
        summary={props.pending.summary}
        reason={props.pending.reason}
        lastingAllowed={props.pending.lasting_allowed}
      />
      <details class="tool-card-args">
        <summary>Arguments</summary>
        <pre class="output-block">{prettyJson(props.pending.args)}</pre>
      </details>
    </li>
  );
}

function StandingAlways(): JSX.Element {
  const app = useApp();
  const [approvals, { refetch, mutate }] = createResource(() => standingApprovals(app.api));
  const [problem, setProblem] = createSignal<string | null>(null);
  return (
    <section class="card" aria-labelledby="standing-title">
      <div class="card-head">
        <div>
          <h2 id="standing-title" class="card-title">
            Always allowed on this machine
          </h2>
          <p class="card-description">
            Standing approvals answered "Always allow". Every session uses them; revoke one and
            the calls it covered ask again.
          </p>
        </div>
      </div>
      <AsyncView
        resource={approvals}
        onRetry={() => void refetch()}
        errorTitle="The standing approvals could not be loaded"
        isEmpty={(list) => list.length === 0}
        empty={<p class="muted card-empty">No standing approvals.</p>}
      >
        {(list) => (
          <ul class="standing-list">
            <For each={list}>
              {(approval) => (
                <li class="standing-row">
                  <Icon name="check" size={14} />
                  <span class="standing-text">{approval.description}</span>
                  <button
                    type="button"
                    class="button button-small"
                    onClick={() => {
                      setProblem(null);
                      revokeStanding(app.api, approval.id).then(
                        () => mutate((all) => all?.filter((a) => a.id !== approval.id)),
                        (error: unknown) => setProblem(describeError(error).message),
                      );
                    }}
                  >
                    Revoke<span class="visually-hidden"> {approval.description}</span>
                  </button>
                </li>
              )}
            </For>
          </ul>
        )}
      </AsyncView>
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
