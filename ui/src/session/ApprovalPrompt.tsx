import type { ApprovalDecision } from "@server/ApprovalDecision";
import { createSignal, createUniqueId, type JSX, Show } from "solid-js";
import { useApp } from "../app/context";
import { decide } from "../api/approvals";
import { ApiError } from "../api/errors";
import { Icon } from "../components/Icon";
import { describeError } from "../components/states";

/**
 * The question a waiting tool call asks: the exact command or paths it will touch, the rule
 * that asked, and the answers: once, this session, always (when lasting answers are allowed;
 * a call a safety check flagged offers only once), or deny with a reason the model is given.
 * The first answer wins across every window: one that came second says so in place.
 */
export function ApprovalPrompt(props: {
  sessionId: string;
  callId: string;
  summary: string;
  reason: string;
  lastingAllowed: boolean;
  onAnswered?: () => void;
}): JSX.Element {
  const app = useApp();
  const reasonId = createUniqueId();
  const [denying, setDenying] = createSignal(false);
  const [denyReason, setDenyReason] = createSignal("");
  const [busy, setBusy] = createSignal(false);
  const [problem, setProblem] = createSignal<string | null>(null);
  const [late, setLate] = createSignal(false);

  const answer = async (decision: ApprovalDecision) => {
    setBusy(true);
    setProblem(null);
    try {
      await decide(app.api, props.sessionId, props.callId, decision);
      app.refreshInbox();
      props.onAnswered?.();
    } catch (error) {
      if (error instanceof ApiError && error.code === "approval_not_pending") {
        setLate(true);
        app.refreshInbox();
      } else {
        setProblem(describeError(error).message);
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="approval" role="group" aria-label="Approval needed">
      <div class="approval-head">
        <Icon name="shield" />
        <span class="approval-title">Approval needed</span>
        <span class="approval-reason">{props.reason}</span>
      </div>
      <pre class="approval-summary">{props.summary}</pre>
      <Show when={late()}>
        <p class="notice notice-info" role="status">
          This call was already answered elsewhere (the first answer wins).
        </p>
      </Show>
      <Show when={!late()}>
        <Show
          when={denying()}
          fallback={
            <div class="approval-actions">
              <button
                type="button"
                class="button button-primary"
                disabled={busy()}
                onClick={() => void answer({ type: "approve", scope: "once" })}
              >
                Allow once
              </button>
              <Show when={props.lastingAllowed}>
                <button
                  type="button"
                  class="button"
                  disabled={busy()}
                  onClick={() => void answer({ type: "approve", scope: "session" })}
                >
                  Allow for this session
                </button>
                <button
                  type="button"
                  class="button"
                  disabled={busy()}
                  onClick={() => void answer({ type: "approve", scope: "always" })}
                >
                  Always allow
                </button>
              </Show>
              <button
                type="button"
                class="button button-danger-ghost"
                disabled={busy()}
                onClick={() => setDenying(true)}
              >
                Deny…
              </button>
              <Show when={!props.lastingAllowed}>
                <span class="approval-note">
                  A safety check flagged this call: it can only be allowed once.
                </span>
              </Show>
            </div>
          }
        >
          <form
            class="approval-deny"
            onSubmit={(event) => {
              event.preventDefault();
              const reason = denyReason().trim();
              void answer({ type: "deny", reason: reason === "" ? null : reason });
            }}
          >
            <label class="field">
              <span class="field-label" id={reasonId}>
                Why not? (the agent is told)
              </span>
              <input
                class="input"
                type="text"
                aria-labelledby={reasonId}
                placeholder="Don't touch the lock file; use the existing helper instead"
                value={denyReason()}
                onInput={(event) => setDenyReason(event.currentTarget.value)}
                ref={(element) => { queueMicrotask(() => { element.focus(); }); }}
              />
            </label>
            <div class="approval-actions">
              <button type="submit" class="button button-danger" disabled={busy()}>
                Deny
              </button>
              <button type="button" class="button button-ghost" onClick={() => setDenying(false)}>
                Back
              </button>
            </div>
          </form>
        </Show>
      </Show>
      <Show when={problem()}>
        {(text) => (
          <p class="field-error" role="alert">
            {text()}
          </p>
        )}
      </Show>
    </div>
  );
}
