//! The approval of one tool call: the gate's verdict (rules, mode, standing approvals, safety
//! checks), then — when it asks — the user's answer, and what that answer keeps.

use protocol::{ApprovalDecision, DecidedBy, EnforcementLevel, EventMsg};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::approval_gate::{self, Files, Gate, GateDecision, GateVerdict};
use crate::call_outcome::ModelCall;
use crate::event_bus::SinkError;
use crate::protected;
use crate::shared::Shared;
use crate::standing;
use crate::tools::{CallTarget, PreparedCall};

/// How the approval of a call ended.
pub(crate) enum Approval {
    /// `protected_write`: the user approved a call a safety check flagged as writing a file
    /// the host runs later.
    Granted {
        protected_write: bool,
    },
    /// Denied; the text is what the model is told.
    Denied(String),
    Interrupted,
}

/// The wall a prepared call would run behind: the sandbox's, or `host` for a host tool.
pub(crate) fn enforcement_of(shared: &Shared, prepared: &PreparedCall) -> EnforcementLevel {
    match prepared.target {
        CallTarget::Sandbox(_) => shared.slot.provider().enforcement(),
        CallTarget::Host(_) => EnforcementLevel::Host,
    }
}

/// Decides whether `call` may run: by the gate alone, or by asking the user.
pub(crate) async fn approve(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    prepared: &PreparedCall,
    cancel: &CancellationToken,
) -> Result<Approval, SinkError> {
    let enforcement = enforcement_of(shared, prepared);
    let live = shared.slot.protected().await;
    let (gate, verdict) = match gate_verdict(shared, call, enforcement, live.as_ref()) {
        Ok(built) => built,
        Err(problem) => {
            let reason = format!("the approval policy cannot be built: {problem}");
            return deny(shared, turn_id, call, DecidedBy::Policy, reason).await;
        }
    };
    // A host tool may refuse lasting approvals (a destructive connector tool): `once` only.
    let host_lasting = match &prepared.target {
        CallTarget::Host(tool) => tool.lasting_approvals(),
        CallTarget::Sandbox(_) => true,
    };
    let (reason, lasting_allowed, safety) = match verdict {
        GateVerdict::Allow { by } => {
            // Committed with the call's start (or the wall's first event), before it runs.
            shared.events.hold(
                Some(turn_id),
                EventMsg::ToolCallApproved {
                    call_id: call.id.clone(),
                    by,
                    scope: None,
                },
            );
            return Ok(Approval::Granted {
                protected_write: false,
            });
        }
        GateVerdict::Deny { by, reason } => {
            return deny(shared, turn_id, call, by, reason).await;
        }
        GateVerdict::Ask {
            reason,
            lasting_allowed,
            safety,
        } => (reason, lasting_allowed && host_lasting, safety),
    };
    let question = Question {
        summary: approval_gate::summary(&call.name, &call.input, prepared),
        reason,
        lasting_allowed,
    };
    let Some(mut decision) = ask_user(shared, turn_id, call, question, cancel).await? else {
        return Ok(Approval::Interrupted);
    };
    let protected_write = safety.is_some_and(protected::is_protected_write);
    if !host_lasting && matches!(decision, ApprovalDecision::Approve { .. }) {
        decision = ApprovalDecision::Approve {
            scope: protocol::ApprovalScope::Once,
        };
    }
    apply_decision(shared, turn_id, call, &gate, &decision, protected_write).await
}

/// The session's gate as it stands now, and its verdict on the call.
fn gate_verdict(
    shared: &Shared,
    call: &ModelCall,
    enforcement: EnforcementLevel,
    live: Option<&std::sync::Arc<sandbox_provider::protected::ProtectedFiles>>,
) -> Result<(Gate, GateVerdict), String> {
    let state = shared.state();
    let files = Files {
        downloaded: &state.downloads,
        written: &state.written,
        protected: protected::paths(&shared.protected, live),
    };
    let gate = Gate::new(&state.settings, enforcement, files)?;
    let verdict = gate.evaluate(&call.name, &call.input, &state.standing());
    Ok((gate, verdict))
}

async fn emit_approved(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    by: DecidedBy,
    scope: Option<protocol::ApprovalScope>,
) -> Result<(), SinkError> {
    shared
        .events
        .emit(
            Some(turn_id),
            EventMsg::ToolCallApproved {
                call_id: call.id.clone(),
                by,
                scope,
            },
        )
        .await
}

async fn deny(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    by: DecidedBy,
    reason: String,
) -> Result<Approval, SinkError> {
    shared
        .events
        .emit(
            Some(turn_id),
            EventMsg::ToolCallDenied {
                call_id: call.id.clone(),
                by,
                reason: reason.clone(),
            },
        )
        .await?;
    Ok(Approval::Denied(format!("denied: {reason}")))
}

/// What the user is asked.
struct Question {
    summary: String,
    reason: String,
    lasting_allowed: bool,
}

/// Publishes the question and waits for the `approval` op; `None` when the turn was
/// interrupted first. There is no deadline: a question can be answered much later (from the
/// approvals inbox of a headless server).
async fn ask_user(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    question: Question,
    cancel: &CancellationToken,
) -> Result<Option<ApprovalDecision>, SinkError> {
    let (sender, receiver) = oneshot::channel();
    shared.pending().insert(call.id.clone(), sender);
    let asked = shared
        .events
        .emit(
            Some(turn_id),
            EventMsg::ToolCallAwaitingApproval {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                args: call.input.clone(),
                summary: question.summary,
                reason: question.reason,
                lasting_allowed: question.lasting_allowed,
            },
        )
        .await;
    if let Err(e) = asked {
        shared.pending().remove(&call.id);
        return Err(e);
    }
    tokio::select! {
        () = cancel.cancelled() => {
            shared.pending().remove(&call.id);
            Ok(None)
        }
        decision = receiver => Ok(decision.ok()),
    }
}

/// Applies the user's answer: runs the call (keeping any lasting approval) or refuses it.
async fn apply_decision(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    gate: &Gate,
    decision: &ApprovalDecision,
    protected_write: bool,
) -> Result<Approval, SinkError> {
    match gate.decide(&call.name, &call.input, decision) {
        GateDecision::Run {
            scope,
            new_approvals,
        } => {
            if !new_approvals.is_empty() {
                standing::stand(shared, Some(turn_id), new_approvals).await?;
            }
            emit_approved(shared, turn_id, call, DecidedBy::User, Some(scope)).await?;
            Ok(Approval::Granted { protected_write })
        }
        GateDecision::Refuse { message_to_model } => {
            let reason = match decision {
                ApprovalDecision::Deny { reason } => reason
                    .clone()
                    .filter(|r| !r.trim().is_empty())
                    .unwrap_or_else(|| "no reason given".into()),
                ApprovalDecision::Approve { .. } => message_to_model.clone(),
            };
            shared
                .events
                .emit(
                    Some(turn_id),
                    EventMsg::ToolCallDenied {
                        call_id: call.id.clone(),
                        by: DecidedBy::User,
                        reason,
                    },
                )
                .await?;
            Ok(Approval::Denied(message_to_model))
        }
    }
}
