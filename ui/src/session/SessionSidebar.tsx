import type { DraftedRule } from "@server/DraftedRule";
import type { FolderGrant } from "@server/FolderGrant";
import type { ProviderKind } from "@server/ProviderKind";
import type { SessionInfo } from "@server/SessionInfo";
import type { SessionSettings } from "@server/SessionSettings";
import type { StandingApproval } from "@server/StandingApproval";
import { createResource, createSignal, For, type JSX, Match, onCleanup, Show, Switch } from "solid-js";
import { useApp } from "../app/context";
import { revokeStanding, standingApprovals } from "../api/approvals";
import { decideRule, draftedRules } from "../api/network";
import { grantFolder, revokeFolder } from "../api/sessions";
import { Dialog } from "../components/Dialog";
import { Icon } from "../components/Icon";
import { accessWords } from "../components/SessionBits";
import { describeError, ErrorState, Loading } from "../components/states";
import { type FolderDraft, FolderRow, newFolderDraft } from "../pages/sessions/FolderPicker";

const REBUILD_NOTICE =
  "The session's sandbox is recreated to apply this: its shell state (working folder, variables, background processes) is lost. Files in the folders are kept.";

/** What the session may touch and reach, and the controls that change it while it runs. */
export function SessionSidebar(props: {
  info: SessionInfo;
  folders: FolderGrant[];
  provider: ProviderKind | null;
  settings: SessionSettings | null;
  allowedHosts: string[];
  /** The standing approvals as the session last announced them (null: not yet). */
  standing: StandingApproval[] | null;
}): JSX.Element {
  const running = () => props.info.state === "running";
  return (
    <aside class="session-side" aria-label="Session details">
      <FoldersPanel sessionId={props.info.id} folders={props.folders} running={running()} />
      <section class="side-panel">
        <h2 class="side-title">Network</h2>
        <dl class="facts">
          <dt>Profile</dt>
          <dd>{props.settings?.network_profile ?? "—"}</dd>
          <dt>Extra hosts</dt>
          <dd>
            <Show when={(props.settings?.extra_hosts.length ?? 0) > 0} fallback={<span class="muted">none</span>}>
              <ul class="plain-list mono-small">
                <For each={props.settings?.extra_hosts ?? []}>{(host) => <li>{host}</li>}</For>
              </ul>
            </Show>
          </dd>
          <dt>Credentials</dt>
          <dd>
            {props.settings && props.settings.credentials.length > 0 ? props.settings.credentials.join(", ") : <span class="muted">none shared</span>}
          </dd>
          <dt>Approvals</dt>
          <dd>{(props.settings?.approval_mode ?? "—").replace(/_/g, "-")}</dd>
        </dl>
        <Show when={props.provider === "openshell" && running()}>
          <DraftedRules sessionId={props.info.id} />
        </Show>
      </section>
      <AllowedForSession sessionId={props.info.id} hosts={props.allowedHosts} live={props.standing} />
    </aside>
  );
}

function FoldersPanel(props: { sessionId: string; folders: FolderGrant[]; running: boolean }): JSX.Element {
  const app = useApp();
  const [adding, setAdding] = createSignal(false);
  const [draft, setDraft] = createSignal<FolderDraft>(newFolderDraft("", "read_only"));
  const [revoking, setRevoking] = createSignal<FolderGrant | null>(null);
  const [busy, setBusy] = createSignal(false);
  const [problem, setProblem] = createSignal<string | null>(null);

  const run = async (action: () => Promise<void>, done: () => void) => {
    setBusy(true);
    setProblem(null);
    try {
      await action();
      done();
    } catch (error) {
      setProblem(describeError(error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="side-panel">
      <div class="side-title-row">
        <h2 class="side-title">Folders</h2>
        <Show when={props.running}>
          <button type="button" class="button button-small" onClick={() => setAdding(true)}>
            <Icon name="plus" size={13} />
            Grant folder
          </button>
        </Show>
      </div>
      <ul class="folder-list">
        <For each={props.folders}>
          {(folder) => (
            <li class="folder-item">
              <Icon name="folder" size={14} />
              <span class="folder-item-path" title={folder.path}>
                {folder.path}
              </span>
              <span class={`chip-access chip-access-${folder.access === "read_write" ? "rw" : "ro"}`} title={accessWords(folder)}>
                <span aria-hidden="true">{folder.access === "read_write" ? "rw" : "ro"}</span>
                <span class="visually-hidden">{accessWords(folder)}</span>
              </span>
              <Show when={props.running && props.folders.length > 1}>
                <button
                  type="button"
                  class="button button-ghost button-icon button-small"
                  aria-label={`Revoke ${folder.path}`}
                  onClick={() => setRevoking(folder)}
                >
                  <Icon name="close" size={13} />
                </button>
              </Show>
            </li>
          )}
        </For>
      </ul>
      <Dialog
        open={adding()}
        title="Grant a folder"
        description="The agent may use this folder from its next tool call."
        onClose={() => setAdding(false)}
      >
        <form
          class="form"
          onSubmit={(event) => {
            event.preventDefault();
            const folder = draft();
            const sessionId = props.sessionId;
            void run(
              () => grantFolder(app.api, sessionId, folder.path.trim(), folder.access),
              () => {
                setAdding(false);
                setDraft(newFolderDraft("", "read_only"));
              },
            );
          }}
        >
          <FolderRow draft={draft()} index={0} problem={null} removable={false} onChange={setDraft} onRemove={() => undefined} />
          <p class="notice notice-warn">
            <Icon name="alert" />
            <span>{REBUILD_NOTICE}</span>
          </p>
          <Show when={problem()}>
            {(text) => (
              <p class="field-error" role="alert">
                {text()}
              </p>
            )}
          </Show>
          <div class="form-actions">
            <button type="button" class="button" onClick={() => setAdding(false)}>
              Cancel
            </button>
            <button type="submit" class="button button-primary" disabled={busy() || draft().path.trim() === ""}>
              Grant and rebuild
            </button>
          </div>
        </form>
      </Dialog>
      <Dialog
        open={revoking() !== null}
        title="Revoke this folder?"
        description={revoking()?.path ?? ""}
        onClose={() => setRevoking(null)}
        footer={
          <>
            <button type="button" class="button" onClick={() => setRevoking(null)}>
              Cancel
            </button>
            <button
              type="button"
              class="button button-danger"
              disabled={busy()}
              onClick={() => {
                const folder = revoking();
                const sessionId = props.sessionId;
                if (folder) {
                  void run(() => revokeFolder(app.api, sessionId, folder.path), () => { setRevoking(null); });
                }
              }}
            >
              Revoke and rebuild
            </button>
          </>
        }
      >
        <p class="notice notice-warn">
          <Icon name="alert" />
          <span>{REBUILD_NOTICE}</span>
        </p>
        <Show when={problem()}>
          {(text) => (
            <p class="field-error" role="alert">
              {text()}
            </p>
          )}
        </Show>
      </Dialog>
    </section>
  );
}

/** OpenShell drafts rules from the connections it denied; the user approves or rejects each. */
function DraftedRules(props: { sessionId: string }): JSX.Element {
  const app = useApp();
  const [rules, { refetch }] = createResource(() => draftedRules(app.api, props.sessionId));
  const timer = setInterval(() => void refetch(), 5000);
  onCleanup(() => { clearInterval(timer); });
  return (
    <div class="drafted">
      <h3 class="side-subtitle">Drafted rules</h3>
      <Show when={rules.error as unknown}>
        {(error) => <p class="field-error">{describeError(error()).message}</p>}
      </Show>
      <Show when={rules.latest?.length === 0}>
        <p class="muted">None waiting. OpenShell drafts a rule when it denies a connection.</p>
      </Show>
      <ul class="plain-list">
        <For each={rules.latest ?? []}>
          {(rule) => <DraftedRuleRow sessionId={props.sessionId} rule={rule} onDecided={() => void refetch()} />}
        </For>
      </ul>
    </div>
  );
}

function DraftedRuleRow(props: { sessionId: string; rule: DraftedRule; onDecided: () => void }): JSX.Element {
  const app = useApp();
  const [rejecting, setRejecting] = createSignal(false);
  const [reason, setReason] = createSignal("");
  const [problem, setProblem] = createSignal<string | null>(null);
  const answer = async (approve: boolean) => {
    setProblem(null);
    try {
      await decideRule(app.api, props.sessionId, props.rule.id, approve, approve ? null : reason().trim() || null);
      props.onDecided();
    } catch (error) {
      setProblem(describeError(error).message);
    }
  };
  return (
    <li class="rule">
      <p class="rule-name">{props.rule.rule_name}</p>
      <p class="mono-small">{props.rule.hosts.join(", ")}</p>
      <p class="muted">
        {props.rule.binary} · {props.rule.hit_count} denied · {props.rule.rationale}
      </p>
      <Show
        when={rejecting()}
        fallback={
          <div class="approval-actions">
            <button type="button" class="button button-small button-primary" onClick={() => void answer(true)}>
              Approve
            </button>
            <button type="button" class="button button-small" onClick={() => setRejecting(true)}>
              Reject…
            </button>
          </div>
        }
      >
        <form
          class="approval-deny"
          onSubmit={(event) => {
            event.preventDefault();
            void answer(false);
          }}
        >
          <label class="field">
            <span class="field-label">Why not?</span>
            <input class="input" type="text" value={reason()} onInput={(event) => setReason(event.currentTarget.value)} />
          </label>
          <button type="submit" class="button button-small button-danger">
            Reject
          </button>
        </form>
      </Show>
      <Show when={problem()}>{(text) => <p class="field-error">{text()}</p>}</Show>
    </li>
  );
}

/**
 * What the user allowed for this session beyond its settings: hosts let through its wall, and
 * the standing `session` approvals (each revocable). The approvals come from the session's own
 * announcements as they happen; until the first, from the API.
 */
function AllowedForSession(props: {
  sessionId: string;
  hosts: string[];
  live: StandingApproval[] | null;
}): JSX.Element {
  const app = useApp();
  const [fetched, { refetch }] = createResource(
    () => props.sessionId,
    (id) => standingApprovals(app.api, id),
  );
  const [problem, setProblem] = createSignal<string | null>(null);
  // Revoked here: gone at once, also for a stored session (which announces nothing).
  const [revoked, setRevoked] = createSignal<string[]>([]);
  // `latest` of a failed resource throws: read it only once it holds a value.
  const read = () => (fetched.state === "ready" || fetched.state === "refreshing" ? fetched.latest : undefined);
  const approvals = (): StandingApproval[] | undefined =>
    (props.live ?? read())?.filter((a) => a.scope === "session" && !revoked().includes(a.id));
  const nothing = () => props.hosts.length === 0 && (approvals()?.length ?? 0) === 0;
  return (
    <section class="side-panel" aria-labelledby="allowed-title">
      <h2 class="side-title" id="allowed-title">
        Allowed for this session
      </h2>
      <Show when={props.hosts.length > 0}>
        <h3 class="side-subtitle" id="allowed-hosts-title">
          Hosts
        </h3>
        <ul class="plain-list allowed-hosts" aria-labelledby="allowed-hosts-title">
          <For each={props.hosts}>
            {(host) => (
              <li class="allowed-host">
                <Icon name="globe" size={13} />
                <code>{host}</code>
              </li>
            )}
          </For>
        </ul>
      </Show>
      <Switch>
        <Match when={props.live === null && fetched.state === "errored"}>
          <ErrorState
            error={fetched.error as unknown}
            title="The session's approvals could not be loaded"
            onRetry={() => void refetch()}
          />
        </Match>
        <Match when={approvals() === undefined}>
          <Loading label="Loading the session's approvals…" />
        </Match>
        <Match when={nothing()}>
          <p class="muted">
            Nothing yet. "Allow for this session" on a tool call or a refused connection adds it
            here.
          </p>
        </Match>
        <Match when={(approvals()?.length ?? 0) > 0}>
          <h3 class="side-subtitle" id="allowed-calls-title">
            Tool calls
          </h3>
          <ul class="plain-list" aria-labelledby="allowed-calls-title">
            <For each={approvals()}>
              {(approval) => (
                <li class="standing-row">
                  <span>{approval.description}</span>
                  <button
                    type="button"
                    class="button button-ghost button-small"
                    onClick={() => {
                      setProblem(null);
                      revokeStanding(app.api, approval.id, props.sessionId).then(
                        () => setRevoked((ids) => [...ids, approval.id]),
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
        </Match>
      </Switch>
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
