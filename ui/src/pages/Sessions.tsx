import type { SessionInfo } from "@server/SessionInfo";
import { A } from "@solidjs/router";
import { createResource, createSignal, For, type JSX, onCleanup, Show } from "solid-js";
import { useApp } from "../app/context";
import { closeSession, listSessions, resumeSession } from "../api/sessions";
import { EnforcementBadge } from "../components/Badge";
import { relativeTime, shortId } from "../components/format";
import { Icon } from "../components/Icon";
import { PageHeader } from "../components/PageHeader";
import { FolderChips, SessionStateBadge } from "../components/SessionBits";
import { reconciledStorage } from "../components/reconciled";
import { AsyncView, describeError, Empty } from "../components/states";
import { NewSessionDialog } from "./sessions/NewSession";

/** How often the list is read again while shown (last activity, new sessions from elsewhere). */
const REFRESH_MS = 5000;

export default function Sessions(): JSX.Element {
  const app = useApp();
  // Reconciled by id: the five-second refresh updates rows in place (a focused row keeps focus).
  const [sessions, { refetch, mutate }] = createResource(() => listSessions(app.api), {
    storage: reconciledStorage,
  });
  const [creating, setCreating] = createSignal(false);
  const [now, setNow] = createSignal(Date.now());
  const timer = setInterval(() => {
    setNow(Date.now());
    if (document.visibilityState === "visible" && !sessions.loading) {
      void refetch();
    }
  }, REFRESH_MS);
  onCleanup(() => { clearInterval(timer); });

  const replace = (updated: SessionInfo) => {
    mutate((list) => list?.map((s) => (s.id === updated.id ? updated : s)));
  };

  return (
    <>
      <PageHeader
        title="Sessions"
        description="Agents at work, the folders each may touch, and the wall that confines it."
        actions={
          <button type="button" class="button button-primary" onClick={() => setCreating(true)}>
            <Icon name="plus" />
            New session
          </button>
        }
      />
      <section class="page-body">
        <AsyncView
          resource={sessions}
          loadingLabel="Loading sessions…"
          errorTitle="The sessions could not be loaded"
          onRetry={() => void refetch()}
          isEmpty={(list) => list.length === 0}
          empty={
            <Empty
              title="No sessions yet"
              action={
                <button type="button" class="button button-primary" onClick={() => setCreating(true)}>
                  <Icon name="plus" />
                  New session
                </button>
              }
            >
              A session is one agent working in the folders you grant it, read-write or
              read-only. Its shell and file tools run inside a sandbox that sees nothing else.
            </Empty>
          }
        >
          {(list) => (
            <div class="table-wrap">
              <table class="table">
                <thead>
                  <tr>
                    <th scope="col">Session</th>
                    <th scope="col">Status</th>
                    <th scope="col">Wall</th>
                    <th scope="col">Folders</th>
                    <th scope="col">Last activity</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  <For each={list}>
                    {(session) => <SessionRow session={session} now={now()} onChanged={replace} />}
                  </For>
                </tbody>
              </table>
            </div>
          )}
        </AsyncView>
      </section>
      <NewSessionDialog
        open={creating()}
        onClose={() => setCreating(false)}
        onCreated={() => {
          setCreating(false);
          void refetch();
        }}
      />
    </>
  );
}

function SessionRow(props: {
  session: SessionInfo;
  now: number;
  onChanged: (session: SessionInfo) => void;
}): JSX.Element {
  const app = useApp();
  const [busy, setBusy] = createSignal(false);
  const [problem, setProblem] = createSignal<string | null>(null);
  const act = async (action: () => Promise<SessionInfo>) => {
    setBusy(true);
    setProblem(null);
    try {
      props.onChanged(await action());
    } catch (error) {
      setProblem(describeError(error).message);
    } finally {
      setBusy(false);
    }
  };
  const href = () => `/sessions/${encodeURIComponent(props.session.id)}`;
  return (
    <tr>
      <td class="cell-title">
        <A href={href()} class="row-link">
          {props.session.title || "Untitled session"}
        </A>
        <span class="cell-sub" title={props.session.id}>
          {shortId(props.session.id)} · {props.session.message_count} messages
        </span>
        <Show when={problem()}>
          {(text) => (
            <span class="field-error" role="alert">
              {text()}
            </span>
          )}
        </Show>
      </td>
      <td>
        <div class="cell-stack">
          <SessionStateBadge state={props.session.state} />
          <Show when={props.session.pending_approvals > 0}>
            <A href="/inbox" class="badge badge-warn badge-link">
              {props.session.pending_approvals} waiting
            </A>
          </Show>
        </div>
      </td>
      <td>
        <Show when={props.session.enforcement} fallback={<span class="muted">—</span>}>
          {(level) => <EnforcementBadge level={level()} />}
        </Show>
      </td>
      <td>
        <FolderChips folders={props.session.folders} max={3} />
      </td>
      <td class="cell-nowrap" title={new Date(props.session.updated_ms).toLocaleString()}>
        {relativeTime(props.session.updated_ms, props.now)}
      </td>
      <td class="cell-actions">
        <Show when={props.session.state === "stored"}>
          <button
            type="button"
            class="button button-small"
            disabled={busy()}
            onClick={() => {
              const id = props.session.id;
              void act(() => resumeSession(app.api, id));
            }}
          >
            <Icon name="play" size={13} />
            Resume<span class="visually-hidden"> {props.session.title}</span>
          </button>
        </Show>
        <Show when={props.session.state === "running"}>
          <button
            type="button"
            class="button button-small button-ghost"
            disabled={busy()}
            onClick={() => {
              const id = props.session.id;
              void act(() => closeSession(app.api, id));
            }}
          >
            Close<span class="visually-hidden"> {props.session.title}</span>
          </button>
        </Show>
      </td>
    </tr>
  );
}
