//! The tool calls of one model step: each is checked, gated, run in the sandbox and recorded.
//! Reads run in parallel; writes and commands run alone, in the model's order.

use model_client::{ContentBlock, InvalidToolInput};
use protocol::{EnforcementLevel, EventMsg, ToolCallStatus};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::event_bus::SinkError;
use crate::shared::Shared;
use crate::tool_approval::{Approval, approve};
use crate::tool_execution::execute;
use crate::tools::{RenderedResult, ToolEffect, ToolPlacement, append_denials, truncate_middle};

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

pub(crate) struct CallOutcome {
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
pub(crate) struct Finish {
    pub status: ToolCallStatus,
    pub rendered: RenderedResult,
    pub enforcement: EnforcementLevel,
    pub denials: Vec<protocol::NetworkDenial>,
    /// What the wall did meanwhile, for the model.
    pub wall_notes: Vec<String>,
    pub duration_ms: u64,
}

/// Records the call's end, then gives the model its (possibly cut) result. When the record
/// fails the model gets no result text: what it would see was never audited.
pub(crate) async fn finish(
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

/// The wall a call to `tool` runs behind: `host` for a host tool, else the sandbox's.
fn enforcement_for(shared: &Shared, tool: &str) -> EnforcementLevel {
    match shared.tools.get(tool).map(|d| d.placement) {
        Some(ToolPlacement::Host) => EnforcementLevel::Host,
        Some(ToolPlacement::Sandbox) | None => shared.slot.provider().enforcement(),
    }
}

/// A call that ended before it reached the sandbox (or the host tool).
pub(crate) async fn finish_unrun(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    status: ToolCallStatus,
    text: String,
    stop: Option<PhaseEnd>,
) -> CallOutcome {
    let enforcement = enforcement_for(shared, &call.name);
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

pub(crate) fn sink_failed(call: &ModelCall, e: SinkError) -> CallOutcome {
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
    let protected_write = match approve(shared, turn_id, call, &prepared, cancel).await {
        Ok(Approval::Granted { protected_write }) => protected_write,
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
    };
    execute(shared, turn_id, call, prepared, protected_write, cancel).await
}
