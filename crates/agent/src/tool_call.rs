//! The tool calls of one model step: each is checked, gated, run in the sandbox and recorded.
//! Reads run in parallel; writes and commands run alone, in the model's order.

use std::time::Instant;

use model_client::{ContentBlock, InvalidToolInput};
use protocol::{
    ApprovalDecision, DecidedBy, EnforcementLevel, EventMsg, OutputStream, ToolCallStatus,
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::approval_gate::{self, Gate, GateDecision, GateVerdict};
use crate::downloads;
use crate::event_bus::SinkError;
use crate::sandbox_slot::{SlotError, sandbox_request};
use crate::session::Shared;
use crate::standing;
use crate::tools::{
    PreparedCall, RenderedResult, ToolEffect, append_denials, render_error, render_result,
    truncate_middle,
};

/// A tool call as the model made it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModelCall {
    pub id: String,
    pub name: String,
    /// The parsed arguments; `{}` when they could not be parsed (that is what the conversation
    /// keeps: both wires need an object there).
    pub input: Value,
    /// Arguments that are not a JSON object, as the model sent them: the call is answered with
    /// an error naming the problem so the model can try again.
    pub invalid: Option<InvalidToolInput>,
}

impl ModelCall {
    pub(crate) fn new(id: String, name: String, input: Result<Value, InvalidToolInput>) -> Self {
        let (input, invalid) = match input {
            Ok(input) => (input, None),
            Err(invalid) => (Value::Object(serde_json::Map::new()), Some(invalid)),
        };
        Self {
            id,
            name,
            input,
            invalid,
        }
    }

    /// The arguments as the audit trail records them: the raw text when it did not parse.
    fn recorded_args(&self) -> Value {
        match &self.invalid {
            Some(invalid) => Value::String(invalid.raw.clone()),
            None => self.input.clone(),
        }
    }
}

/// The tool result for arguments that are not a JSON object.
pub(crate) fn invalid_input_message(name: &str, invalid: &InvalidToolInput) -> String {
    format!(
        "not run: your arguments were not valid JSON: {}; raw: {}\nCall `{name}` again with \
         its arguments as one JSON object that matches the tool's schema.",
        invalid.error, invalid.raw
    )
}

/// Why the calls of a step stopped early.
#[derive(Debug)]
pub(crate) enum PhaseEnd {
    Completed,
    Interrupted,
    SandboxRefused(String),
    Sink(SinkError),
}

/// The results of a step's calls, one per call in the model's order, and how the step ended.
pub(crate) struct Phase {
    pub results: Vec<ContentBlock>,
    pub end: PhaseEnd,
}

struct CallOutcome {
    block: ContentBlock,
    stop: Option<PhaseEnd>,
}

fn result_block(call_id: &str, content: String, is_error: bool) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: call_id.to_owned(),
        content,
        is_error,
    }
}

pub(crate) async fn run_calls(
    shared: &Shared,
    turn_id: &str,
    calls: Vec<ModelCall>,
    cancel: &CancellationToken,
) -> Phase {
    let effect = |call: &ModelCall| {
        shared
            .tools
            .get(&call.name)
            .map_or(ToolEffect::Read, |d| d.effect)
    };
    let mut results: Vec<Option<ContentBlock>> = vec![None; calls.len()];
    let mut end = PhaseEnd::Completed;
    let mut start = 0;
    while start < calls.len() {
        if !matches!(end, PhaseEnd::Completed) || cancel.is_cancelled() {
            break;
        }
        let mut stop = start + 1;
        if effect(&calls[start]) == ToolEffect::Read {
            while stop < calls.len() && effect(&calls[stop]) == ToolEffect::Read {
                stop += 1;
            }
        }
        let outcomes = futures::future::join_all(
            calls[start..stop]
                .iter()
                .map(|call| run_one(shared, turn_id, call, cancel)),
        )
        .await;
        for (index, outcome) in (start..stop).zip(outcomes) {
            results[index] = Some(outcome.block);
            if let Some(stop) = outcome.stop
                && matches!(end, PhaseEnd::Completed)
            {
                end = stop;
            }
        }
        start = stop;
    }
    if matches!(end, PhaseEnd::Completed) && cancel.is_cancelled() {
        end = PhaseEnd::Interrupted;
    }
    let reason = match &end {
        PhaseEnd::Interrupted | PhaseEnd::Completed => "the user interrupted the turn",
        PhaseEnd::SandboxRefused(_) => "the sandbox could not be built",
        PhaseEnd::Sink(_) => "the audit trail could not record it",
    };
    let results = results
        .into_iter()
        .zip(&calls)
        .map(|(result, call)| {
            result.unwrap_or_else(|| result_block(&call.id, format!("not run: {reason}"), true))
        })
        .collect();
    Phase { results, end }
}

/// What a finished call reports.
struct Finish {
    status: ToolCallStatus,
    rendered: RenderedResult,
    enforcement: EnforcementLevel,
    denials: Vec<protocol::NetworkDenial>,
    /// What the wall did meanwhile, for the model.
    wall_notes: Vec<String>,
    duration_ms: u64,
}

/// Records the call's end, then gives the model its (possibly cut) result. When the record
/// fails the model gets no result text: what it would see was never audited.
async fn finish(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    finish: Finish,
    stop: Option<PhaseEnd>,
) -> CallOutcome {
    let mut text = finish.rendered.text;
    append_denials(&mut text, &finish.denials);
    let mut notes = finish.wall_notes;
    notes.extend(std::mem::take(&mut shared.state().notes));
    for note in notes {
        text.push_str(&format!("\n[note from Paddock: {note}]"));
    }
    let (audit_text, _) = truncate_middle(&text, shared.config.audit_output_chars);
    let (model_text, truncated) = truncate_middle(&text, shared.config.model_output_chars);
    let recorded = shared
        .events
        .emit(
            Some(turn_id),
            EventMsg::ToolCallFinished {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                status: finish.status,
                exit_code: finish.rendered.exit_code,
                duration_ms: finish.duration_ms,
                truncated,
                timed_out: finish.rendered.timed_out,
                enforcement: finish.enforcement,
                network_denials: finish.denials,
                output: audit_text,
            },
        )
        .await;
    match recorded {
        Ok(()) => CallOutcome {
            block: result_block(&call.id, model_text, finish.rendered.is_error),
            stop,
        },
        Err(e) => CallOutcome {
            block: result_block(
                &call.id,
                "result withheld: the audit trail could not record it".into(),
                true,
            ),
            stop: Some(PhaseEnd::Sink(e)),
        },
    }
}

fn plain(text: String, is_error: bool) -> RenderedResult {
    RenderedResult {
        text,
        is_error,
        exit_code: None,
        timed_out: false,
        duration_ms: None,
    }
}

/// A call that ended before it reached the sandbox.
async fn finish_unrun(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    status: ToolCallStatus,
    text: String,
    stop: Option<PhaseEnd>,
) -> CallOutcome {
    let enforcement = shared.slot.provider().enforcement();
    finish(
        shared,
        turn_id,
        call,
        Finish {
            status,
            rendered: plain(text, true),
            enforcement,
            denials: Vec::new(),
            wall_notes: Vec::new(),
            duration_ms: 0,
        },
        stop,
    )
    .await
}

fn sink_failed(call: &ModelCall, e: SinkError) -> CallOutcome {
    CallOutcome {
        block: result_block(
            &call.id,
            "not run: the audit trail could not record it".into(),
            true,
        ),
        stop: Some(PhaseEnd::Sink(e)),
    }
}

async fn run_one(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    cancel: &CancellationToken,
) -> CallOutcome {
    let tid = Some(turn_id);
    if let Err(e) = shared
        .events
        .emit(
            tid,
            EventMsg::ToolCallRequested {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                args: call.recorded_args(),
            },
        )
        .await
    {
        return sink_failed(call, e);
    }
    if let Some(invalid) = &call.invalid {
        let text = invalid_input_message(&call.name, invalid);
        return finish_unrun(shared, turn_id, call, ToolCallStatus::Error, text, None).await;
    }
    let prepared = match shared.tools.prepare(&call.name, &call.input) {
        Ok(prepared) => prepared,
        Err(e) => {
            return finish_unrun(
                shared,
                turn_id,
                call,
                ToolCallStatus::Error,
                e.to_string(),
                None,
            )
            .await;
        }
    };
    match approve(shared, turn_id, call, &prepared, cancel).await {
        Ok(Approval::Granted) => {}
        Ok(Approval::Denied(reason)) => {
            return finish_unrun(shared, turn_id, call, ToolCallStatus::Denied, reason, None).await;
        }
        Ok(Approval::Interrupted) => {
            return finish_unrun(
                shared,
                turn_id,
                call,
                ToolCallStatus::Cancelled,
                "not run: the user interrupted the turn while it awaited approval".into(),
                Some(PhaseEnd::Interrupted),
            )
            .await;
        }
        Err(e) => return sink_failed(call, e),
    }
    execute(shared, turn_id, call, prepared, cancel).await
}

enum Approval {
    Granted,
    Denied(String),
    Interrupted,
}

async fn approve(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    prepared: &PreparedCall,
    cancel: &CancellationToken,
) -> Result<Approval, SinkError> {
    let tid = Some(turn_id);
    let enforcement = shared.slot.provider().enforcement();
    let gate = {
        let state = shared.state();
        Gate::new(&state.settings, enforcement, &state.downloads).map(|gate| {
            let verdict = gate.evaluate(&call.name, &call.input, &state.standing());
            (gate, verdict)
        })
    };
    let (gate, verdict) = match gate {
        Ok(built) => built,
        Err(problem) => {
            let reason = format!("the approval policy cannot be built: {problem}");
            shared
                .events
                .emit(
                    tid,
                    EventMsg::ToolCallDenied {
                        call_id: call.id.clone(),
                        by: DecidedBy::Policy,
                        reason: reason.clone(),
                    },
                )
                .await?;
            return Ok(Approval::Denied(format!("denied: {reason}")));
        }
    };
    let (reason, lasting_allowed) = match verdict {
        GateVerdict::Allow { by } => {
            shared
                .events
                .emit(
                    tid,
                    EventMsg::ToolCallApproved {
                        call_id: call.id.clone(),
                        by,
                        scope: None,
                    },
                )
                .await?;
            return Ok(Approval::Granted);
        }
        GateVerdict::Deny { by, reason } => {
            shared
                .events
                .emit(
                    tid,
                    EventMsg::ToolCallDenied {
                        call_id: call.id.clone(),
                        by,
                        reason: reason.clone(),
                    },
                )
                .await?;
            return Ok(Approval::Denied(format!("denied: {reason}")));
        }
        GateVerdict::Ask {
            reason,
            lasting_allowed,
        } => (reason, lasting_allowed),
    };

    let (sender, receiver) = oneshot::channel();
    shared.pending().insert(call.id.clone(), sender);
    shared
        .events
        .emit(
            tid,
            EventMsg::ToolCallAwaitingApproval {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                args: call.input.clone(),
                summary: approval_gate::summary(prepared),
                reason,
                lasting_allowed,
            },
        )
        .await?;
    let decision = tokio::select! {
        () = cancel.cancelled() => {
            shared.pending().remove(&call.id);
            return Ok(Approval::Interrupted);
        }
        decision = receiver => decision,
    };
    let Ok(decision) = decision else {
        return Ok(Approval::Interrupted);
    };
    match gate.decide(&call.name, &call.input, &decision) {
        GateDecision::Run {
            scope,
            new_approvals,
        } => {
            if !new_approvals.is_empty() {
                standing::stand(shared, tid, new_approvals).await?;
            }
            shared
                .events
                .emit(
                    tid,
                    EventMsg::ToolCallApproved {
                        call_id: call.id.clone(),
                        by: DecidedBy::User,
                        scope: Some(scope),
                    },
                )
                .await?;
            Ok(Approval::Granted)
        }
        GateDecision::Refuse { message_to_model } => {
            let reason = match &decision {
                ApprovalDecision::Deny { reason } => reason
                    .clone()
                    .filter(|r| !r.trim().is_empty())
                    .unwrap_or_else(|| "no reason given".into()),
                ApprovalDecision::Approve { .. } => message_to_model.clone(),
            };
            shared
                .events
                .emit(
                    tid,
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

fn output_stream(stream: tool_protocol::Stream) -> OutputStream {
    match stream {
        tool_protocol::Stream::Stdout => OutputStream::Stdout,
        tool_protocol::Stream::Stderr => OutputStream::Stderr,
        tool_protocol::Stream::Data => OutputStream::Data,
    }
}

/// Runs an approved call in the session's sandbox (building it first when needed).
async fn execute(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    prepared: PreparedCall,
    cancel: &CancellationToken,
) -> CallOutcome {
    let tid = Some(turn_id);
    let request = {
        let state = shared.state();
        sandbox_request(&shared.id, &state.settings)
    };
    let lease = match shared.slot.acquire(&request, &shared.events, tid).await {
        Ok(lease) => lease,
        Err(SlotError::Refused(e)) => {
            let message = e.to_string();
            return finish_unrun(
                shared,
                turn_id,
                call,
                ToolCallStatus::Error,
                format!("not run: {message}"),
                Some(PhaseEnd::SandboxRefused(message)),
            )
            .await;
        }
        Err(SlotError::Sink(e)) => return sink_failed(call, e),
    };
    let Some(sandbox) = lease.sandbox() else {
        return finish_unrun(
            shared,
            turn_id,
            call,
            ToolCallStatus::Error,
            "not run: the sandbox went away".into(),
            None,
        )
        .await;
    };
    let enforcement = sandbox.enforcement();
    if let Err(e) = shared
        .events
        .emit(
            tid,
            EventMsg::ToolCallStarted {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                args: call.input.clone(),
                sandbox_id: sandbox.id().to_owned(),
                enforcement,
            },
        )
        .await
    {
        return sink_failed(call, e);
    }
    if let Err(e) = downloads::record(shared, tid, &prepared.request).await {
        return sink_failed(call, e);
    }

    let started = Instant::now();
    let (chunks_tx, mut chunks_rx) = mpsc::unbounded_channel();
    let outcome = {
        let running = sandbox.call(prepared.request, Some(chunks_tx), cancel);
        tokio::pin!(running);
        loop {
            tokio::select! {
                outcome = &mut running => break outcome,
                Some(chunk) = chunks_rx.recv() => emit_chunk(shared, tid, call, chunk).await,
            }
        }
    };
    while let Ok(chunk) = chunks_rx.try_recv() {
        emit_chunk(shared, tid, call, chunk).await;
    }
    drop(lease);
    let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);

    let (status, rendered, stop) = match &outcome.result {
        Ok(result) => (ToolCallStatus::Ok, render_result(result), None),
        Err(sandbox_provider::CallError::Cancelled) => (
            ToolCallStatus::Cancelled,
            render_error(&sandbox_provider::CallError::Cancelled),
            Some(PhaseEnd::Interrupted),
        ),
        Err(error) => (ToolCallStatus::Error, render_error(error), None),
    };
    let duration_ms = rendered.duration_ms.unwrap_or(elapsed);
    finish(
        shared,
        turn_id,
        call,
        Finish {
            status,
            rendered,
            enforcement,
            denials: outcome.denials,
            wall_notes: outcome.notes,
            duration_ms,
        },
        stop,
    )
    .await
}

async fn emit_chunk(
    shared: &Shared,
    turn_id: Option<&str>,
    call: &ModelCall,
    chunk: sandbox_provider::OutputChunk,
) {
    // Output chunks are live-only: they never reach the durable sink, so this cannot fail
    // for durability reasons.
    shared
        .events
        .emit_logged(
            turn_id,
            EventMsg::ToolCallOutput {
                call_id: call.id.clone(),
                stream: output_stream(chunk.stream),
                chunk: chunk.chunk.to_text_lossy(),
            },
        )
        .await;
}
