//! The tool calls of one model step: each is checked, gated, run in the sandbox and recorded.
//! Reads run in parallel; writes and commands run alone, in the model's order.

use model_client::ContentBlock;
use protocol::{EventMsg, ToolCallStatus};
use tokio_util::sync::CancellationToken;

use crate::call_outcome::{
    CallOutcome, ModelCall, Phase, PhaseEnd, finish_unrun, invalid_input_message, result_block,
    sink_failed,
};
use crate::shared::Shared;
use crate::tool_approval::{Approval, approve};
use crate::tool_execution::execute;
use crate::tools::ToolEffect;

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

async fn run_one(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    cancel: &CancellationToken,
) -> CallOutcome {
    // Committed with the call's next event: its refusal, its question, or (allowed without
    // asking) its approval and start, before anything runs.
    shared.events.hold(
        Some(turn_id),
        EventMsg::ToolCallRequested {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            args: call.recorded_args(),
        },
    );
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
