//! `paddock run`: one task, one session, streamed to the terminal and recorded. A thin client
//! of the host: the host starts or resumes the session and streams its events; this file only
//! renders them, asks approvals on the terminal, and leaves a run record.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use paddock_host::{Host, HostError, NewSession, parse_folder_spec};
use protocol::{ApprovalDecision, ApprovalMode, EventMsg, ProviderKind, TurnStopReason};

use crate::terminal;

/// What to do when the agent asks for an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompts {
    /// Ask on the terminal (refused when stdin is not a terminal).
    Ask,
    /// Approve every prompt once (`--approve-all`).
    ApproveAll,
    /// Refuse every prompt (`--deny-prompts`).
    DenyAll,
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub task: String,
    /// Continue this stored session instead of starting one (then `folders`, `model`,
    /// `approval_mode`, `extra_hosts` and `credentials` must be empty: they are the session's).
    pub resume: Option<String>,
    pub folders: Vec<String>,
    pub model: Option<String>,
    pub approval_mode: Option<String>,
    pub provider: Option<ProviderKind>,
    pub extra_hosts: Vec<String>,
    /// Credential-share entries to enable, by name.
    pub credentials: Vec<String>,
    pub json: bool,
    pub prompts: Prompts,
}

/// A folder under `runs/` for this run's record.
fn run_dir(host: &Host) -> anyhow::Result<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let dir = host
        .paths()
        .runs_dir()
        .join(format!("{stamp}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the CLI's output is its interface"
)]
fn say(json: bool, text: &str) {
    // In JSON mode stdout carries only events; people's messages go to stderr.
    if json {
        eprint!("{text}");
    } else {
        print!("{text}");
        let _ = std::io::stdout().flush();
    }
}

#[allow(
    clippy::print_stderr,
    reason = "warnings for the person at the terminal"
)]
fn warn(text: &str) {
    eprintln!("{text}");
}

#[allow(
    clippy::print_stdout,
    reason = "JSON Lines of events are the --json interface"
)]
fn emit_json(line: &str) {
    println!("{line}");
}

fn decide(prompts: Prompts, lasting_allowed: bool, json: bool) -> ApprovalDecision {
    match prompts {
        Prompts::ApproveAll => ApprovalDecision::Approve {
            scope: protocol::ApprovalScope::Once,
        },
        Prompts::DenyAll => ApprovalDecision::Deny {
            reason: Some("this run refuses every approval prompt (--deny-prompts)".into()),
        },
        Prompts::Ask if !std::io::stdin().is_terminal() => ApprovalDecision::Deny {
            reason: Some(
                "nobody can answer: stdin is not a terminal (rerun with --approve-all to allow)"
                    .into(),
            ),
        },
        Prompts::Ask => {
            let stdin = std::io::stdin();
            let mut input = stdin.lock();
            let result = if json {
                terminal::prompt(&mut input, &mut std::io::stderr(), lasting_allowed)
            } else {
                terminal::prompt(&mut input, &mut std::io::stdout(), lasting_allowed)
            };
            result.unwrap_or_else(|e| ApprovalDecision::Deny {
                reason: Some(format!("the terminal failed: {e}")),
            })
        }
    }
}

/// The host's request for a new session from the options.
fn new_session(options: &RunOptions) -> anyhow::Result<NewSession> {
    if options.folders.is_empty() {
        bail!("grant at least one folder with --folder PATH[:ro]");
    }
    let approval_mode = options
        .approval_mode
        .as_deref()
        .map(|text| {
            ApprovalMode::parse(text).with_context(|| {
                format!(
                    "--approval-mode `{text}` is not one of: ask, auto-edit, auto-in-sandbox, \
                     bypass"
                )
            })
        })
        .transpose()?;
    Ok(NewSession {
        folders: options
            .folders
            .iter()
            .map(|s| parse_folder_spec(s))
            .collect(),
        provider: options.provider,
        model: options.model.clone(),
        approval_mode,
        extra_hosts: options.extra_hosts.clone(),
        credentials: options.credentials.clone(),
        ..NewSession::default()
    })
}

/// A refused request in the terms of the command line (`folders[0].path` → `--folder`).
fn in_flag_terms(error: HostError) -> anyhow::Error {
    let HostError::InvalidRequest { field, problem } = &error else {
        return error.into();
    };
    let flag = match field.split('[').next().unwrap_or_default() {
        "folders" => "--folder",
        "extra_hosts" => "--allow-host",
        "credentials" => "--credential",
        "cwd" => "--cwd",
        _ => return error.into(),
    };
    anyhow::anyhow!("{flag} {problem}")
}

/// Starts or resumes the session; returns its id and the events to show (after this `seq`).
async fn begin(options: &RunOptions, host: &Host) -> anyhow::Result<(String, u64)> {
    match &options.resume {
        None => {
            let info = host
                .create_session(new_session(options)?)
                .await
                .map_err(in_flag_terms)?;
            Ok((info.id, 0))
        }
        Some(id) => {
            let settings_given = !options.folders.is_empty()
                || options.model.is_some()
                || options.approval_mode.is_some()
                || !options.extra_hosts.is_empty()
                || !options.credentials.is_empty();
            if settings_given {
                bail!(
                    "--resume continues a session with its own folders and settings; drop \
                     --folder, --model, --approval-mode, --allow-host and --credential"
                );
            }
            let after = host.last_event_seq(id).await?;
            let info = host.resume_session(id, options.provider).await?;
            Ok((info.id, after))
        }
    }
}

pub async fn run(options: RunOptions, host: &Host) -> anyhow::Result<ExitCode> {
    if options.task.trim().is_empty() {
        bail!("the task is empty");
    }
    let (id, after) = begin(&options, host).await?;
    let info = host.session(&id).await?;
    if let Some(warning) = &info.warning {
        warn(warning);
    }
    if info
        .settings
        .as_ref()
        .is_some_and(|s| s.approval_mode == ApprovalMode::Bypass)
    {
        warn("WARNING: APPROVALS BYPASSED: every tool call runs without asking.");
    }
    let record_dir = run_dir(host)?;
    let mut record = std::fs::File::create(record_dir.join("events.jsonl"))
        .with_context(|| format!("creating {}", record_dir.join("events.jsonl").display()))?;
    let mut events = host.events(&id, after);
    host.send_turn(&id, &options.task).await?;

    let mut outcome: Option<TurnStopReason> = None;
    let mut interrupted = false;
    let mut closing = None;
    loop {
        let event = tokio::select! {
            event = events.next() => event?,
            _ = tokio::signal::ctrl_c(), if !interrupted => {
                interrupted = true;
                warn("interrupting…");
                host.interrupt(&id).await?;
                continue;
            }
        };
        let Some(event) = event else { break };
        let line = serde_json::to_string(&event)?;
        writeln!(record, "{line}").context("writing events.jsonl")?;
        if options.json {
            emit_json(&line);
        } else if let Some(text) = terminal::human(&event) {
            say(false, &text);
        }
        match &event.msg {
            EventMsg::ToolCallAwaitingApproval {
                call_id,
                lasting_allowed,
                ..
            } => {
                let (prompts, json, lasting) = (options.prompts, options.json, *lasting_allowed);
                let decision =
                    tokio::task::spawn_blocking(move || decide(prompts, lasting, json)).await?;
                host.decide_approval(&id, call_id, decision).await?;
            }
            EventMsg::TurnFinished { stop_reason, .. } if closing.is_none() => {
                outcome = Some(*stop_reason);
                let (host, id) = (host.clone(), id.clone());
                closing = Some(tokio::spawn(async move { host.close_session(&id).await }));
            }
            EventMsg::SessionClosed => break,
            _ => {}
        }
    }
    if let Some(closing) = closing {
        closing.await??;
    }
    record.flush().context("writing events.jsonl")?;
    say(
        options.json,
        &format!(
            "run record: {}\naudit trail: {} (session {id})\ncontinue with: paddock run --resume {id} \"…\"\n",
            record_dir.display(),
            host.paths().audit_db().display()
        ),
    );
    Ok(match outcome {
        Some(TurnStopReason::EndTurn) => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}
