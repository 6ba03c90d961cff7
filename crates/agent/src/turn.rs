//! One turn: the user's message, then model steps and tool calls until the model stops, the
//! user interrupts, a step limit is hit, or an error ends it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use model_client::{ContentBlock, Message, ModelError, ModelEvent, ModelRequest, Role, StopReason};
use protocol::{ErrorCode, EventMsg, FolderAccess, SessionSettings, TurnStopReason};
use tokio_util::sync::CancellationToken;

use crate::call_outcome::{ModelCall, PhaseEnd};
use crate::event_bus::SinkError;
use crate::shared::{Shared, push_user_blocks};
use crate::tool_call;

/// How a model step ended.
enum StepEnd {
    Response {
        text: String,
        calls: Vec<ModelCall>,
        stop_reason: StopReason,
    },
    Interrupted {
        partial_text: String,
    },
    Failed(ModelError),
}

/// A turn that cannot go on, and why.
enum Abort {
    Sink(SinkError),
}

impl From<SinkError> for Abort {
    fn from(e: SinkError) -> Self {
        Abort::Sink(e)
    }
}

/// Runs one turn. `finishing` is set just before `turn_finished` goes out, so the session can
/// take the next user turn the moment a client sees it (the task may still be saving).
pub(crate) async fn run_turn(
    shared: Arc<Shared>,
    text: String,
    cancel: CancellationToken,
    finishing: Arc<AtomicBool>,
) {
    let turn_id = uuid::Uuid::new_v4().to_string();
    let (stop_reason, steps) = match turn_body(&shared, &turn_id, text, &cancel).await {
        Ok(done) => done,
        Err((Abort::Sink(e), steps)) => {
            tracing::error!(session = %shared.id, "{e}");
            // The durable sink failed; tell live observers (this may fail the same way).
            let _ = shared
                .events
                .emit(
                    Some(&turn_id),
                    EventMsg::Error {
                        code: ErrorCode::PersistenceFailed,
                        message: e.to_string(),
                    },
                )
                .await;
            (TurnStopReason::Error, steps)
        }
    };
    if let Err(e) = shared.persist_messages().await {
        shared
            .events
            .emit_logged(
                Some(&turn_id),
                EventMsg::Error {
                    code: ErrorCode::PersistenceFailed,
                    message: e.to_string(),
                },
            )
            .await;
    }
    // A process a command left running may have planted something since the last call.
    if let Some(files) = shared.slot.protected().await
        && let Err(e) = shared.sweep_protected(Some(&turn_id), None, files).await
    {
        tracing::error!(session = %shared.id, "recording the sweep at turn end failed: {e}");
    }
    finishing.store(true, Ordering::SeqCst);
    shared
        .events
        .emit_logged(
            Some(&turn_id),
            EventMsg::TurnFinished { stop_reason, steps },
        )
        .await;
    // Saves the event number too, so a resumed session continues after `turn_finished`.
    persist_or_warn(&shared, None).await;
}

async fn turn_body(
    shared: &Shared,
    turn_id: &str,
    text: String,
    cancel: &CancellationToken,
) -> Result<(TurnStopReason, u32), (Abort, u32)> {
    let mut steps = 0;
    let tid = Some(turn_id);
    let emit = |msg| shared.events.emit(tid, msg);
    emit(EventMsg::TurnStarted { text: text.clone() })
        .await
        .map_err(|e| (e.into(), steps))?;
    crate::standing::refresh_always(shared, tid)
        .await
        .map_err(|e| (e.into(), steps))?;
    {
        let mut state = shared.state();
        let mut blocks: Vec<ContentBlock> = std::mem::take(&mut state.notes)
            .into_iter()
            .map(|note| ContentBlock::text(format!("[note from Paddock: {note}]")))
            .collect();
        blocks.push(ContentBlock::text(text));
        push_user_blocks(&mut state, blocks);
    }
    persist_or_warn(shared, tid).await;

    loop {
        if cancel.is_cancelled() {
            return Ok((TurnStopReason::Interrupted, steps));
        }
        if steps >= shared.config.max_steps {
            return Ok((TurnStopReason::StepLimit, steps));
        }
        steps += 1;
        let step = model_step(shared, tid, cancel)
            .await
            .map_err(|e| (e.into(), steps))?;
        let (text, calls, stop_reason) = match step {
            StepEnd::Response {
                text,
                calls,
                stop_reason,
            } => (text, calls, stop_reason),
            StepEnd::Interrupted { partial_text } => {
                if !partial_text.is_empty() {
                    push_assistant(shared, vec![ContentBlock::text(partial_text)]);
                }
                return Ok((TurnStopReason::Interrupted, steps));
            }
            StepEnd::Failed(ModelError::Cancelled) => {
                return Ok((TurnStopReason::Interrupted, steps));
            }
            StepEnd::Failed(error) => {
                emit(EventMsg::Error {
                    code: model_error_code(&error),
                    message: error.to_string(),
                })
                .await
                .map_err(|e| (e.into(), steps))?;
                return Ok((TurnStopReason::Error, steps));
            }
        };

        let mut blocks = Vec::new();
        if !text.is_empty() {
            blocks.push(ContentBlock::text(text.clone()));
        }
        blocks.extend(calls.iter().map(|c| ContentBlock::ToolUse {
            id: c.id.clone(),
            name: c.name.clone(),
            input: c.input.clone(),
        }));
        if !blocks.is_empty() {
            push_assistant(shared, blocks);
        }
        if !text.is_empty() {
            emit(EventMsg::AssistantMessage { text })
                .await
                .map_err(|e| (e.into(), steps))?;
        }
        if calls.is_empty() {
            persist_or_warn(shared, tid).await;
            let reason = match stop_reason {
                StopReason::MaxTokens => TurnStopReason::MaxTokens,
                _ => TurnStopReason::EndTurn,
            };
            return Ok((reason, steps));
        }

        let phase = tool_call::run_calls(shared, turn_id, calls, cancel).await;
        {
            let mut state = shared.state();
            push_user_blocks(&mut state, phase.results);
        }
        persist_or_warn(shared, tid).await;
        match phase.end {
            PhaseEnd::Completed if cancel.is_cancelled() => {
                return Ok((TurnStopReason::Interrupted, steps));
            }
            PhaseEnd::Completed => {}
            PhaseEnd::Interrupted => return Ok((TurnStopReason::Interrupted, steps)),
            PhaseEnd::SandboxRefused(message) => {
                emit(EventMsg::Error {
                    code: ErrorCode::SandboxRefused,
                    message,
                })
                .await
                .map_err(|e| (e.into(), steps))?;
                return Ok((TurnStopReason::SandboxRefused, steps));
            }
            PhaseEnd::Sink(e) => return Err((e.into(), steps)),
        }
    }
}

fn push_assistant(shared: &Shared, content: Vec<ContentBlock>) {
    let mut state = shared.state();
    let index = state.messages.len();
    state.messages.push(Message {
        role: Role::Assistant,
        content,
    });
    state.mark_dirty(index);
}

async fn persist_or_warn(shared: &Shared, turn_id: Option<&str>) {
    if let Err(e) = shared.persist_messages().await {
        shared
            .events
            .emit_logged(
                turn_id,
                EventMsg::Error {
                    code: ErrorCode::PersistenceFailed,
                    message: e.to_string(),
                },
            )
            .await;
    }
}

pub(crate) fn model_error_code(error: &ModelError) -> ErrorCode {
    match error {
        ModelError::Auth { .. } => ErrorCode::ModelAuth,
        ModelError::RateLimited { .. } | ModelError::Overloaded { .. } => {
            ErrorCode::ModelUnavailable
        }
        ModelError::ContextTooLong { .. } => ErrorCode::ModelContextTooLong,
        _ => ErrorCode::ModelFailed,
    }
}

/// The system prompt: what the agent is and where its tools run.
pub(crate) fn system_prompt(
    settings: &SessionSettings,
    enforcement: protocol::EnforcementLevel,
    instructions: Option<&str>,
) -> String {
    let mut text = String::from(
        "You are Paddock, an agent that works on the user's files. Your shell and file tools \
         run inside a sandbox; the conversation, approvals and audit trail stay outside it.\n",
    );
    text.push_str(&format!("Sandbox enforcement: {}.\n", enforcement.as_str()));
    if settings.folders.is_empty() {
        text.push_str("No folders are granted: tools that touch files cannot run.\n");
    } else {
        text.push_str(
            "Folders you can see (at the same absolute paths as on the user's machine):\n",
        );
        for folder in &settings.folders {
            let access = match folder.access {
                FolderAccess::ReadWrite => "read-write",
                FolderAccess::ReadOnly => "read-only",
            };
            text.push_str(&format!("- {} ({access})\n", folder.path));
        }
    }
    if let Some(cwd) = settings
        .cwd
        .as_deref()
        .or_else(|| settings.folders.first().map(|f| f.path.as_str()))
    {
        text.push_str(&format!("Working folder: {cwd}\n"));
    }
    text.push_str(&format!(
        "Network: the `{}` profile; a refused connection is reported in the tool result. \
         Some calls need the user's approval; a denied call comes back with the user's reason.\n",
        settings.network_profile.as_str()
    ));
    if let Some(extra) = instructions {
        text.push('\n');
        text.push_str(extra);
        text.push('\n');
    }
    text
}

/// Sends the conversation to the model and streams its answer into events.
async fn model_step(
    shared: &Shared,
    turn_id: Option<&str>,
    cancel: &CancellationToken,
) -> Result<StepEnd, SinkError> {
    let request = {
        let state = shared.state();
        let model = state
            .settings
            .model
            .clone()
            .unwrap_or_else(|| shared.config.default_model.clone());
        let mut request =
            ModelRequest::new(model, state.messages.clone(), shared.config.max_tokens);
        let mut system = system_prompt(
            &state.settings,
            shared.slot.provider().enforcement(),
            shared.config.instructions.as_deref(),
        );
        for notice in shared.tools.notices() {
            system.push_str(&notice);
            system.push('\n');
        }
        request.system = Some(system);
        request.tools = shared.tools.specs();
        request
    };
    let mut stream = tokio::select! {
        biased;
        () = cancel.cancelled() => return Ok(StepEnd::Interrupted { partial_text: String::new() }),
        opened = shared.model.stream(request, cancel.clone()) => match opened {
            Ok(stream) => stream,
            Err(error) => return Ok(StepEnd::Failed(error)),
        },
    };
    let mut text = String::new();
    let mut calls = Vec::new();
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => return Ok(StepEnd::Interrupted { partial_text: text }),
            next = stream.next() => next,
        };
        match next {
            None => {
                return Ok(StepEnd::Failed(ModelError::Protocol {
                    message: "the stream ended without a message stop event".into(),
                }));
            }
            Some(Err(ModelError::Cancelled)) => {
                return Ok(StepEnd::Interrupted { partial_text: text });
            }
            Some(Err(error)) => return Ok(StepEnd::Failed(error)),
            Some(Ok(event)) => match event {
                ModelEvent::TextDelta { text: delta } => {
                    text.push_str(&delta);
                    shared
                        .events
                        .emit(turn_id, EventMsg::ModelTextDelta { text: delta })
                        .await?;
                }
                ModelEvent::ToolCallComplete { id, name, input } => {
                    calls.push(ModelCall::new(id, name, input));
                }
                ModelEvent::MessageStop { stop_reason } => {
                    return Ok(StepEnd::Response {
                        text,
                        calls,
                        stop_reason,
                    });
                }
                _ => {}
            },
        }
    }
}
