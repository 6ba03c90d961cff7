//! `paddock run`: one task, one session, streamed to the terminal and recorded.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use agent::{AgentConfig, EventBus, Session, SessionDeps, SessionStore, ToolRegistry};
use anyhow::{Context, bail};
use audit_store::AuditStore;
use protocol::{
    ApprovalDecision, ApprovalMode, EventMsg, FolderAccess, FolderGrant, Op, ProviderKind,
    SessionSettings, TurnStopReason,
};
use session_store::SqliteSessionStore;

use crate::terminal;
use paddock::audit_sink::AuditSink;
use paddock::config::{MachineConfig, check_host};
use paddock::host;
use paddock::paths::Paths;

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
    pub provider: Option<String>,
    pub extra_hosts: Vec<String>,
    /// Credential-share entries to enable, by name.
    pub credentials: Vec<String>,
    pub json: bool,
    pub prompts: Prompts,
    pub max_steps: Option<u32>,
}

/// Parses `PATH`, `PATH:ro` or `PATH:rw` into an absolute, existing folder grant.
pub fn parse_folder(spec: &str) -> anyhow::Result<FolderGrant> {
    let (path, access) = match spec.rsplit_once(':') {
        Some((path, "ro")) => (path, FolderAccess::ReadOnly),
        Some((path, "rw")) => (path, FolderAccess::ReadWrite),
        _ => (spec, FolderAccess::ReadWrite),
    };
    let canonical = std::fs::canonicalize(path)
        .with_context(|| format!("--folder {spec}: `{path}` does not exist"))?;
    if !canonical.is_dir() {
        bail!("--folder {spec}: `{path}` is not a folder");
    }
    let path = canonical
        .to_str()
        .with_context(|| format!("--folder {spec}: the path is not UTF-8"))?
        .to_owned();
    Ok(FolderGrant { path, access })
}

fn provider_kind(text: &str) -> anyhow::Result<ProviderKind> {
    match text {
        "local" => Ok(ProviderKind::Local),
        "openshell" => Ok(ProviderKind::Openshell),
        "direct" => Ok(ProviderKind::Direct),
        other => bail!("--provider `{other}` is not one of: local, openshell, direct"),
    }
}

/// The session store (created, with the state folder, when missing).
fn open_store(paths: &Paths) -> anyhow::Result<SqliteSessionStore> {
    std::fs::create_dir_all(&paths.state_dir)
        .with_context(|| format!("creating {}", paths.state_dir.display()))?;
    SqliteSessionStore::open(&paths.sessions_db())
        .with_context(|| format!("opening {}", paths.sessions_db().display()))
}

/// A folder under `runs/` for this run's record.
fn run_dir(paths: &Paths) -> anyhow::Result<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let dir = paths
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

/// A new session's settings from the options and the machine config.
fn new_settings(options: &RunOptions, config: &MachineConfig) -> anyhow::Result<SessionSettings> {
    if options.folders.is_empty() {
        bail!("grant at least one folder with --folder PATH[:ro]");
    }
    let folders = options
        .folders
        .iter()
        .map(|spec| parse_folder(spec))
        .collect::<anyhow::Result<Vec<_>>>()?;
    for host in &options.extra_hosts {
        check_host(host).map_err(|p| anyhow::anyhow!("--allow-host: {p}"))?;
    }
    let approval_mode = match &options.approval_mode {
        Some(text) => ApprovalMode::parse(text).with_context(|| {
            format!(
                "--approval-mode `{text}` is not one of: ask, auto-edit, auto-in-sandbox, bypass"
            )
        })?,
        None => config.approval_mode,
    };
    check_credential_names(&options.credentials, config)?;
    let mut extra_hosts = config.extra_hosts.clone();
    extra_hosts.extend(options.extra_hosts.iter().cloned());
    Ok(SessionSettings {
        folders,
        cwd: None,
        network_profile: config.network_profile,
        extra_hosts,
        credentials: options.credentials.clone(),
        model: options.model.clone(),
        approval_mode,
    })
}

/// Refuses `--credential` names this machine does not offer before a session (and a model
/// request) is spent on them.
fn check_credential_names(names: &[String], config: &MachineConfig) -> anyhow::Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    let data = sandbox_policy::SandboxData::builtin()
        .map_err(|e| anyhow::anyhow!("the built-in sandbox data: {e}"))?;
    let offered: Vec<String> = host::credential_entries(&data, config)?
        .into_iter()
        .map(|entry| entry.name)
        .collect();
    for name in names {
        if !offered.contains(name) {
            bail!(
                "--credential `{name}` is not an entry this machine offers (it offers: {}; add \
                 custom ones as [[sandbox_credentials]] in the machine config)",
                offered.join(", ")
            );
        }
    }
    Ok(())
}

/// How the run begins: a new session, or a stored one continued.
enum Begin {
    New(SessionSettings),
    Resume(String),
}

pub async fn run(
    options: RunOptions,
    paths: &Paths,
    config: &MachineConfig,
) -> anyhow::Result<ExitCode> {
    if options.task.trim().is_empty() {
        bail!("the task is empty");
    }
    let chosen_provider = options.provider.as_deref().map(provider_kind).transpose()?;
    let (begin, store, provider_kind, approval_mode) = match &options.resume {
        None => {
            let settings = new_settings(&options, config)?;
            let store = open_store(paths)?;
            let mode = settings.approval_mode;
            let kind = chosen_provider.unwrap_or(config.provider);
            (Begin::New(settings), store, kind, mode)
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
            let store = open_store(paths)?;
            let record = store
                .load(id)
                .await
                .with_context(|| format!("loading session `{id}`"))?
                .with_context(|| {
                    format!("no stored session `{id}` (list them with `paddock sessions list`)")
                })?;
            // The wall the session ran with, unless --provider says otherwise.
            let kind = chosen_provider
                .or(record.provider)
                .unwrap_or(config.provider);
            (
                Begin::Resume(id.clone()),
                store,
                kind,
                record.settings.approval_mode,
            )
        }
    };
    if provider_kind == ProviderKind::Direct {
        warn(&format!(
            "WARNING: {}",
            sandbox_provider::direct::DIRECT_WARNING
        ));
    }
    if approval_mode == ApprovalMode::Bypass {
        warn("WARNING: APPROVALS BYPASSED: every tool call runs without asking.");
    }

    let (model, key) = host::model_client(config).await?;
    let mut audit = AuditStore::open(paths.audit_db())
        .with_context(|| format!("opening the audit trail {}", paths.audit_db().display()))?;
    if let Some(key) = &key {
        audit
            .register_secret(key.expose_secret())
            .context("registering the model key for redaction")?;
    }
    let provider = host::provider(
        provider_kind,
        config,
        paths,
        &host::Helpers::resolve(config),
    )?;
    let bus = EventBus::new(Arc::new(AuditSink::new(audit, provider_kind)), 65_536);
    let mut events = bus.subscribe();
    let record_dir = run_dir(paths)?;
    let mut record = std::fs::File::create(record_dir.join("events.jsonl"))
        .with_context(|| format!("creating {}", record_dir.join("events.jsonl").display()))?;

    let mut agent_config = AgentConfig::new(config.models.model.clone());
    if let Some(steps) = options.max_steps {
        agent_config.max_steps = steps;
    }
    let deps = SessionDeps {
        model,
        provider,
        store: Arc::new(store),
        bus: bus.clone(),
        tools: ToolRegistry::sandbox_tools(),
        config: agent_config,
    };
    let session = match begin {
        Begin::New(settings) => Session::start(deps, settings).await?,
        Begin::Resume(id) => Session::resume(deps, &id).await?,
    };
    session.submit(Op::UserTurn {
        text: options.task.clone(),
    })?;

    let mut outcome: Option<TurnStopReason> = None;
    let mut interrupted = false;
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = tokio::signal::ctrl_c(), if !interrupted => {
                interrupted = true;
                warn("interrupting…");
                session.submit(Op::Interrupt)?;
                continue;
            }
        };
        let event = match event {
            Ok(event) => event,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                warn(&format!(
                    "(the display fell behind and skipped {missed} events; the audit trail has them all)"
                ));
                continue;
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
        };
        if event.session_id != session.id() {
            continue;
        }
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
                let prompts = options.prompts;
                let json = options.json;
                let lasting = *lasting_allowed;
                let decision =
                    tokio::task::spawn_blocking(move || decide(prompts, lasting, json)).await?;
                session.submit(Op::Approval {
                    call_id: call_id.clone(),
                    decision,
                })?;
            }
            EventMsg::TurnFinished { stop_reason, .. } => {
                outcome = Some(*stop_reason);
                session.submit(Op::Close)?;
            }
            EventMsg::SessionClosed => break,
            _ => {}
        }
    }
    let id = session.id().to_owned();
    session.closed().await;
    record.flush().context("writing events.jsonl")?;
    say(
        options.json,
        &format!(
            "run record: {}\naudit trail: {} (session {id})\ncontinue with: paddock run --resume {id} \"…\"\n",
            record_dir.display(),
            paths.audit_db().display()
        ),
    );
    Ok(match outcome {
        Some(TurnStopReason::EndTurn) => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}
