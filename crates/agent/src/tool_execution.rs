//! Running an approved call: a sandbox tool through the session's wall (built first when
//! needed), a host tool in this process. Either way `tool_call_started` is committed before
//! the call runs, and the outcome goes back to `tool_call` to be recorded.

use std::time::Instant;

use protocol::{EnforcementLevel, EventMsg, OutputStream, ToolCallStatus};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tool_protocol::ToolRequest;

use crate::call_outcome::{
    CallOutcome, Finish, ModelCall, PhaseEnd, finish, finish_unrun, sink_failed,
};
use crate::protected;
use crate::sandbox_slot::{SlotError, wall_request};
use crate::session_files;
use crate::shared::Shared;
use crate::tools::{
    CallTarget, HostTool, HostToolError, PreparedCall, RenderedResult, ToolEffect, render_error,
    render_result,
};

/// The sandbox id recorded on `tool_call_started` of a host tool.
pub(crate) const HOST_SANDBOX_ID: &str = "host";

/// Runs an approved call where its tool lives. `protected_write`: the user approved it as
/// writing a file the host runs later.
pub(crate) async fn execute(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    prepared: PreparedCall,
    protected_write: bool,
    cancel: &CancellationToken,
) -> CallOutcome {
    match prepared.target {
        CallTarget::Sandbox(request) => {
            in_sandbox(shared, turn_id, call, request, protected_write, cancel).await
        }
        CallTarget::Host(tool) => on_host(shared, turn_id, call, tool.as_ref(), cancel).await,
    }
}

async fn started(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    sandbox_id: &str,
    enforcement: EnforcementLevel,
) -> Result<(), crate::event_bus::SinkError> {
    shared
        .events
        .emit(
            Some(turn_id),
            EventMsg::ToolCallStarted {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                args: call.input.clone(),
                sandbox_id: sandbox_id.to_owned(),
                enforcement,
            },
        )
        .await
}

/// Runs a host tool in this process (enforcement `host`).
async fn on_host(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    tool: &dyn HostTool,
    cancel: &CancellationToken,
) -> CallOutcome {
    let enforcement = EnforcementLevel::Host;
    if let Err(e) = started(shared, turn_id, call, HOST_SANDBOX_ID, enforcement).await {
        return sink_failed(call, e);
    }
    let began = Instant::now();
    let outcome = tokio::select! {
        biased;
        () = cancel.cancelled() => Err(HostToolError::Cancelled),
        outcome = tool.call(&call.input, cancel) => outcome,
    };
    let duration_ms = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (status, text, is_error, stop) = match outcome {
        Ok(output) => (ToolCallStatus::Ok, output.text, output.is_error, None),
        Err(HostToolError::Cancelled) => (
            ToolCallStatus::Cancelled,
            "cancelled: the user interrupted the turn".to_owned(),
            true,
            Some(PhaseEnd::Interrupted),
        ),
        Err(HostToolError::Failed(message)) => (ToolCallStatus::Error, message, true, None),
    };
    let rendered = RenderedResult {
        text,
        is_error,
        exit_code: None,
        timed_out: false,
        duration_ms: Some(duration_ms),
    };
    finish(
        shared,
        turn_id,
        call,
        Finish {
            status,
            rendered,
            enforcement,
            denials: Vec::new(),
            wall_notes: Vec::new(),
            duration_ms,
        },
        stop,
    )
    .await
}

fn output_stream(stream: tool_protocol::Stream) -> OutputStream {
    match stream {
        tool_protocol::Stream::Stdout => OutputStream::Stdout,
        tool_protocol::Stream::Stderr => OutputStream::Stderr,
        tool_protocol::Stream::Data => OutputStream::Data,
    }
}

/// Runs an approved call in the session's sandbox (building it first when needed); an
/// approved write of a protected file is made by the host instead (it is read-only inside).
/// After every call that can write, the sandbox's protected files are swept.
async fn in_sandbox(
    shared: &Shared,
    turn_id: &str,
    call: &ModelCall,
    request: ToolRequest,
    protected_write: bool,
    cancel: &CancellationToken,
) -> CallOutcome {
    let tid = Some(turn_id);
    let wall = {
        let state = shared.state();
        wall_request(&shared.id, &state.settings)
    };
    let unrun =
        |text: String, stop| finish_unrun(shared, turn_id, call, ToolCallStatus::Error, text, stop);
    let lease = match shared.slot.acquire(&wall, &shared.events, tid).await {
        Ok(lease) => lease,
        Err(SlotError::Refused(e)) => {
            let message = e.to_string();
            return unrun(
                format!("not run: {message}"),
                Some(PhaseEnd::SandboxRefused(message)),
            )
            .await;
        }
        Err(SlotError::Sink(e)) => return sink_failed(call, e),
    };
    let Some(sandbox) = lease.sandbox() else {
        return unrun("not run: the sandbox went away".into(), None).await;
    };
    let files = sandbox.protected().cloned();
    let host_path = files
        .as_ref()
        .and_then(|f| protected::host_write_path(&shared.state().settings, f, &request));
    let enforcement = if host_path.is_some() {
        EnforcementLevel::Host
    } else {
        sandbox.enforcement()
    };
    if let Err(e) = started(shared, turn_id, call, sandbox.id(), enforcement).await {
        return sink_failed(call, e);
    }
    if let Err(e) = session_files::record(shared, tid, &request).await {
        return sink_failed(call, e);
    }

    let began = Instant::now();
    let is_command = matches!(request, ToolRequest::RunBash(_));
    let outcome = match (&files, &host_path) {
        (Some(files), Some(path)) => {
            let outcome = protected::host_write(files.clone(), request).await;
            if outcome.result.is_ok() {
                shared.state().notes.push(format!(
                    "`{path}` is a file the host runs later and read-only inside the sandbox: \
                     Paddock made this change on the host, outside the sandbox, as the user \
                     approved it"
                ));
            }
            outcome
        }
        _ => {
            let (chunks_tx, mut chunks_rx) = mpsc::unbounded_channel();
            let outcome = {
                let running = sandbox.call(request, Some(chunks_tx), cancel);
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
            outcome
        }
    };
    drop(lease);
    let output = match &outcome.result {
        Ok(result) => render_result(result).text,
        Err(e) => e.to_string(),
    };
    if is_command && (protected_write || protected::hit_read_only(&output)) {
        let mut state = shared.state();
        let note = protected::read_only_note(&output, &state.settings.folders);
        state.notes.push(note);
    }
    let writes = shared
        .tools
        .get(&call.name)
        .is_some_and(|d| d.effect != ToolEffect::Read);
    if writes
        && let Some(files) = files
        && let Err(e) = shared.sweep_protected(tid, Some(&call.id), files).await
    {
        return sink_failed(call, e);
    }
    let elapsed = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);

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
