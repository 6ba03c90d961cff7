//! What every path of a tool call shares: the call as the model made it, how a call and a
//! step end, and the one way a call's end is recorded before the model sees its result.
//! The call's stages (`tool_call` runs them, `tool_approval` and `tool_execution` are two)
//! all end here; nothing here calls back into them.

use model_client::{ContentBlock, InvalidToolInput};
use protocol::{EnforcementLevel, EventMsg, ToolCallStatus};
use serde_json::Value;

use crate::event_bus::SinkError;
use crate::shared::Shared;
use crate::tools::{RenderedResult, ToolPlacement, append_denials, truncate_middle};

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
    pub(crate) fn recorded_args(&self) -> Value {
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
    pub block: ContentBlock,
    pub stop: Option<PhaseEnd>,
}

pub(crate) fn result_block(call_id: &str, content: String, is_error: bool) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: call_id.to_owned(),
        content,
        is_error,
    }
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
