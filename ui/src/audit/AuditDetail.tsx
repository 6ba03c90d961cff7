import type { DeciderKind } from "@server/DeciderKind";
import type { StoredEvent } from "@server/StoredEvent";
import { createResource, For, type JSX, Match, Show, Switch } from "solid-js";
import { useApp } from "../app/context";
import { auditPage } from "../api/audit";
import { Badge, EnforcementBadge } from "../components/Badge";
import { dateTime, duration, prettyJson } from "../components/format";
import { Dialog } from "../components/Dialog";
import { AsyncView } from "../components/states";
import { NO_FILTERS } from "./AuditFilters";
import { summarize } from "./summary";

/** Who decided a call, as the trail records it. */
const DECIDER_WORDS: Record<DeciderKind, string> = {
  user: "you",
  rule: "a rule",
  mode: "the approval mode",
  bypass: "bypass mode (nothing asked)",
};

/**
 * One audit row in full: its record (arguments as stored, redacted), its place in the hash
 * chain, and for a tool call the network denials its command hit, joined by call id.
 */
export function AuditDetail(props: { row: StoredEvent | null; onClose: () => void }): JSX.Element {
  return (
    <Dialog open={props.row !== null} side title={props.row ? `Row ${props.row.seq}` : "Row"} onClose={() => { props.onClose(); }}>
      <Show when={props.row}>{(row) => <DetailBody row={row()} />}</Show>
    </Dialog>
  );
}

function DetailBody(props: { row: StoredEvent }): JSX.Element {
  const summary = () => summarize(props.row);
  return (
    <div class="detail">
      <p class="detail-what">{summary().what}</p>
      <dl class="facts facts-wide">
        <dt>When</dt>
        <dd>{dateTime(props.row.time_ms)}</dd>
        <dt>Session</dt>
        <dd class="mono-small">{props.row.session_id}</dd>
        <dt>Kind</dt>
        <dd>{summary().kind}</dd>
        <Show when={summary().enforcement}>
          {(level) => (
            <>
              <dt>Wall</dt>
              <dd>
                <EnforcementBadge level={level()} />
              </dd>
            </>
          )}
        </Show>
      </dl>
      <Switch>
        <Match when={props.row.record.type === "tool_call" ? props.row.record : null}>
          {(call) => (
            <>
              <dl class="facts facts-wide">
                <dt>Tool</dt>
                <dd>
                  <code>{call().tool}</code> <span class="muted">call {call().call_id}</span>
                </dd>
                <Show when={summary().connector}>
                  {(connector) => (
                    <>
                      <dt>Connector</dt>
                      <dd>
                        <code>{connector()}</code>{" "}
                        <span class="muted">
                          {connector() === "web_fetch" ? "Paddock's built-in web fetch" : "an MCP server run by Paddock on the host"}
                        </span>
                      </dd>
                    </>
                  )}
                </Show>
                <dt>Status</dt>
                <dd>
                  <Badge tone={summary().tone}>{summary().outcome ?? call().status}</Badge>
                  <Show when={call().truncated}>
                    {" "}
                    <Badge tone="neutral">truncated</Badge>
                  </Show>
                </dd>
                <Show when={call().decision}>
                  <dt>Decision</dt>
                  <dd>
                    {call().decision === "allow" ? "Allowed" : "Denied"}
                    <Show when={call().decided_by}>
                      {(by) => (
                        <span class="muted">
                          {" "}
                          by {DECIDER_WORDS[by().kind]}
                          {by().name ? ` (${by().name})` : ""}
                        </span>
                      )}
                    </Show>
                  </dd>
                </Show>
                <Show when={call().duration_ms !== null}>
                  <dt>Duration</dt>
                  <dd>{duration(call().duration_ms ?? 0)}</dd>
                </Show>
                <Show when={call().error}>
                  <dt>Error</dt>
                  <dd>{call().error}</dd>
                </Show>
              </dl>
              <h3 class="detail-title">Arguments (redacted)</h3>
              <pre class="output-block">{prettyJson(call().args)}</pre>
              <Show when={call().output_preview}>
                <h3 class="detail-title">Output preview (redacted)</h3>
                <pre class="output-block">{call().output_preview}</pre>
              </Show>
              <JoinedDenials sessionId={props.row.session_id} callId={call().call_id} />
            </>
          )}
        </Match>
        <Match when={true}>
          <h3 class="detail-title">What was recorded (redacted)</h3>
          <pre class="output-block">{prettyJson(props.row.record)}</pre>
        </Match>
      </Switch>
      <h3 class="detail-title">Hash chain</h3>
      <dl class="facts facts-wide">
        <dt>Row</dt>
        <dd>{props.row.seq}</dd>
        <dt>Previous</dt>
        <dd class="mono-small hash">{props.row.prev_hash}</dd>
        <dt>This row</dt>
        <dd class="mono-small hash">{props.row.hash}</dd>
      </dl>
    </div>
  );
}

function JoinedDenials(props: { sessionId: string; callId: string }): JSX.Element {
  const app = useApp();
  const [denials] = createResource(
    () => ({ session: props.sessionId, call: props.callId }),
    ({ session, call }) =>
      auditPage(app.api, { ...NO_FILTERS, session, call_id: call, kind: "network_denial" }, 100, null),
  );
  return (
    <>
      <h3 class="detail-title">Network denials of this call</h3>
      <AsyncView
        resource={denials}
        loadingLabel="Looking for denials…"
        isEmpty={(page) => page.events.length === 0}
        empty={<p class="muted">None: the wall refused no connection of this call.</p>}
      >
        {(page) => (
          <ul class="denial-list">
            <For each={page.events}>
              {(row) => (
                <Show when={row.record.type === "network_denial" ? row.record : null}>
                  {(denial) => (
                    <li class="denial">
                      <div class="denial-what">
                        <code class="denial-host">
                          {denial().denial.host}:{denial().denial.port}
                        </code>
                        <Show when={denial().denial.binary}>
                          {(binary) => (
                            <span class="muted">
                              by <code>{binary()}</code>
                            </span>
                          )}
                        </Show>
                        <span class="muted">
                          {denial().denial.reason}
                          {denial().denial.rule ? ` (${denial().denial.rule})` : ""}
                        </span>
                      </div>
                    </li>
                  )}
                </Show>
              )}
            </For>
          </ul>
        )}
      </AsyncView>
    </>
  );
}
