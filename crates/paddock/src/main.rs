//! `paddock`: run an agent task in a sandbox, check this machine's sandbox, read the audit
//! trail. See the crate README.

mod approvals_cmd;
mod audit_cmd;
mod connectors_cmd;
mod keys_cmd;
mod machine;
mod run;
mod sandbox_check;
mod service_cmd;
mod sessions_cmd;
mod setup_cmd;
mod terminal;
mod up;
mod utc;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use protocol::ProviderKind;

use crate::run::{Prompts, RunOptions};
use paddock_host::paths::Paths;
use paddock_host::{Host, HostOptions};

#[derive(Debug, Parser)]
#[command(
    name = "paddock",
    version,
    about = "Run AI agents whose tools live in a sandbox"
)]
struct Cli {
    /// Log format on stderr: `text` for people (default) or `json` for machines.
    #[arg(long, global = true, value_enum)]
    log_format: Option<LogFormat>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ProviderArg {
    Local,
    Openshell,
    Direct,
}

impl From<ProviderArg> for ProviderKind {
    fn from(value: ProviderArg) -> Self {
        match value {
            ProviderArg::Local => ProviderKind::Local,
            ProviderArg::Openshell => ProviderKind::Openshell,
            ProviderArg::Direct => ProviderKind::Direct,
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one task: stream its progress, ask approvals, leave a run record.
    Run {
        /// What the agent should do (with --resume: the next message of that session).
        task: String,
        /// Continue a stored session (history, folders, settings and approvals in force)
        /// with TASK as its next message; see `paddock sessions list`.
        #[arg(
            long,
            value_name = "SESSION_ID",
            conflicts_with_all = ["folders", "model", "approval_mode", "allow_hosts", "credentials"]
        )]
        resume: Option<String>,
        /// A folder the agent may use: `PATH` (read-write) or `PATH:ro`. Repeatable.
        #[arg(
            long = "folder",
            value_name = "PATH[:ro]",
            required_unless_present = "resume"
        )]
        folders: Vec<String>,
        /// The model id (default: the machine config's `models.model`).
        #[arg(long)]
        model: Option<String>,
        /// ask | auto-edit | auto-in-sandbox | bypass (default: the machine config's).
        #[arg(long)]
        approval_mode: Option<String>,
        /// The wall (default: the machine config's `sandbox.provider`).
        #[arg(long, value_enum)]
        provider: Option<ProviderArg>,
        /// A host the sandbox may reach beyond its profile (`host` or `host:port`). Repeatable.
        #[arg(long = "allow-host", value_name = "HOST")]
        allow_hosts: Vec<String>,
        /// Enable a credential-share entry (`ssh`, `gh`, … or a custom one) in the sandbox.
        /// Repeatable; all are off by default.
        #[arg(long = "credential", value_name = "NAME")]
        credentials: Vec<String>,
        /// Print events as JSON Lines instead of text.
        #[arg(long)]
        json: bool,
        /// Approve every prompt once, without asking.
        #[arg(long, conflicts_with = "deny_prompts")]
        approve_all: bool,
        /// Refuse every prompt (the default when stdin is not a terminal).
        #[arg(long)]
        deny_prompts: bool,
        /// Most model requests in the turn.
        #[arg(long)]
        max_steps: Option<u32>,
    },
    /// This machine's settings.
    Machine {
        #[command(subcommand)]
        command: MachineCommand,
    },
    /// The audit trail.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Stored sessions (continue one with `paddock run --resume ID "…"`).
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// Standing approvals: the machine's `always` ones, or a session's with --session.
    Approvals {
        #[command(subcommand)]
        command: ApprovalsCommand,
    },
    /// Model API keys in the configured key store (never shown).
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Connectors: MCP servers the agent calls from the host (see docs/connectors.md).
    Connectors {
        #[command(subcommand)]
        command: ConnectorsCommand,
    },
    /// Serve the HTTP/WebSocket API (sessions, approvals, settings, audit) until Ctrl-C.
    Up(up::UpOptions),
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Store a provider's key: typed without echo (or piped on stdin), tested against the
    /// provider's API (one GET, no tokens), then stored. A refused key is not stored.
    Set {
        /// The provider (default: the machine config's `models.provider`).
        provider: Option<String>,
        /// Store without testing it against the API.
        #[arg(long)]
        no_check: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Remove a provider's key from the key store.
    Delete {
        /// The provider (default: the machine config's).
        provider: Option<String>,
    },
    /// Which store holds keys and which providers have one (never the key); exit code 1
    /// when the store cannot be used here, or PROVIDER has no key.
    Status {
        /// Only this provider.
        provider: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Test the stored key against the provider's API; exit code 1 when it does not work.
    Test {
        /// The provider (default: the machine config's).
        provider: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum ConnectorsCommand {
    /// The machine's connectors with their state.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Add a connector to the machine config.
    Add {
        name: String,
        #[command(flatten)]
        entry: connectors_cmd::EntryArgs,
    },
    /// Change a connector (only the options given).
    Edit {
        name: String,
        #[command(flatten)]
        entry: connectors_cmd::EntryArgs,
    },
    /// Remove a connector: its config entry (comments kept) and its token in the key store.
    Remove { name: String },
    /// Turn a connector on.
    Enable { name: String },
    /// Turn a connector off.
    Disable { name: String },
    /// Start the connector's server apart, list its tools, stop it.
    Test {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// The tools the connector's server exposes, with their names for the model and risks.
    Tools {
        name: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum SessionsCommand {
    /// Stored sessions, most recently active first: id, created, folders, provider, last
    /// activity.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum ApprovalsCommand {
    /// The machine's `always` approvals (or one session's `session` approvals).
    List {
        /// List this stored session's approvals instead.
        #[arg(long, value_name = "SESSION_ID")]
        session: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Withdraw an approval by the id `list` shows; calls it covered ask again.
    Revoke {
        /// The approval's id.
        id: String,
        /// Revoke one of this stored session's approvals instead of a machine-wide one.
        #[arg(long, value_name = "SESSION_ID")]
        session: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum MachineCommand {
    /// The sandbox: can this machine build its wall?
    Sandbox {
        #[command(subcommand)]
        command: SandboxCommand,
    },
    /// `paddock up` as a systemd user service that keeps running after logout.
    Service {
        #[command(subcommand)]
        command: ServiceCommand,
    },
}

#[derive(Debug, Subcommand)]
enum ServiceCommand {
    /// Write the user unit (idempotent), enable and start it; prints the `loginctl
    /// enable-linger` command it needs to outlive logout. Exit code 2 when something is left
    /// to you.
    Install {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Stop and disable it and remove its unit file (nothing of it is left).
    Uninstall {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Installed, enabled, running, lingering; exit code 1 unless it is running.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum SandboxCommand {
    /// Check the configured wall; exit code 1 when sessions would be refused.
    Status {
        /// Check this provider instead of the configured one.
        #[arg(long, value_enum)]
        provider: Option<ProviderArg>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Build a throwaway sandbox on an empty folder, show its wall attestation from inside, run
    /// one command through it, and tear it down (exit code 1 when any of it fails).
    Check {
        /// Check this provider instead of the configured one.
        #[arg(long, value_enum)]
        provider: Option<ProviderArg>,
        /// Print the result as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Fix what the wall's status finds failing: shows each change (a diff of the file
    /// Paddock edits, the command it runs, or the command left to you, e.g. anything needing
    /// root), asks, backs files up, makes the changes, and selects the wall in the machine
    /// config once every check passes. Exit code 0: ready and selected; 1: an error, a failed
    /// step, or nothing applied; 2: steps are left to you.
    Setup {
        /// The wall to set up (default: the machine config's).
        #[arg(long, value_enum)]
        provider: Option<ProviderArg>,
        /// Apply without asking.
        #[arg(long)]
        yes: bool,
        /// Print one JSON object (the plan, what was applied, the plan after); without
        /// --yes nothing is applied.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
#[allow(
    clippy::large_enum_variant,
    reason = "parsed once per process; the filters are plain options"
)]
enum AuditCommand {
    /// Walk the hash chain; exit code 1 when it is broken.
    Verify {
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show audit rows, newest first, filtered (every filter must hold); prints the
    /// `--after` cursor of the next page when there is one.
    List {
        /// Only this session's rows (see `paddock sessions list`).
        #[arg(long)]
        session: Option<String>,
        /// session | attestation | tool_call | network_denial | generic.
        #[arg(long)]
        kind: Option<String>,
        /// Only the rows of this tool call (its states and its network denials).
        #[arg(long, value_name = "CALL_ID")]
        call: Option<String>,
        /// Only calls of this tool (`run_bash`, `write_file`, …).
        #[arg(long)]
        tool: Option<String>,
        /// allow | deny: how the call's approval was decided.
        #[arg(long)]
        decision: Option<String>,
        /// openshell | local | none | host: the wall that ran the call.
        #[arg(long)]
        enforcement: Option<String>,
        /// started | finished | failed | cancelled | denied.
        #[arg(long)]
        status: Option<String>,
        /// From this time on (inclusive): milliseconds since 1970, YYYY-MM-DD or
        /// YYYY-MM-DDTHH:MM[:SS]Z (UTC).
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
        /// Before this time (exclusive); the same forms as --since.
        #[arg(long, value_name = "TIME")]
        until: Option<String>,
        /// Rows whose (redacted) record contains this text, ignoring case.
        #[arg(long)]
        text: Option<String>,
        /// Most rows to show (at most 1000).
        #[arg(long, default_value_t = 100)]
        limit: usize,
        /// The next page: the cursor the previous page printed (same filters).
        #[arg(long, value_name = "CURSOR")]
        after: Option<String>,
        /// One JSON object per row instead of text (the cursor goes to stderr).
        #[arg(long)]
        json: bool,
    },
    /// One row (by its number, `#N` in `list`) with every row of its tool call and the
    /// network denials joined to that call.
    Show {
        /// The row's number.
        seq: i64,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write the trail to stdout.
    Export {
        /// jsonl (verifiable offline) or ocsf.
        #[arg(long, default_value = "jsonl")]
        format: String,
        /// Only this session's rows.
        #[arg(long)]
        session: Option<String>,
    },
}

fn init_logging(format: Option<LogFormat>) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PADDOCK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let json = format == Some(LogFormat::Json);
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}

#[allow(clippy::print_stderr, reason = "the CLI reports its errors on stderr")]
fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("paddock: starting the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let json_logs = cli.log_format == Some(LogFormat::Json);
    match runtime.block_on(dispatch(cli.command, json_logs)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("paddock: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The machine's host (config checked, stores opened).
async fn open_host(paths: &Paths, max_steps: Option<u32>) -> anyhow::Result<Host> {
    let mut options = HostOptions::new(paths.clone());
    options.max_steps = max_steps;
    Ok(Host::open(options).await?)
}

async fn dispatch(command: Command, json_logs: bool) -> anyhow::Result<ExitCode> {
    let paths = Paths::from_env().map_err(anyhow::Error::msg)?;
    match command {
        Command::Run {
            task,
            resume,
            folders,
            model,
            approval_mode,
            provider,
            allow_hosts,
            credentials,
            json,
            approve_all,
            deny_prompts,
            max_steps,
        } => {
            let prompts = if approve_all {
                Prompts::ApproveAll
            } else if deny_prompts {
                Prompts::DenyAll
            } else {
                Prompts::Ask
            };
            let options = RunOptions {
                task,
                resume,
                folders,
                model,
                approval_mode,
                provider: provider.map(ProviderKind::from),
                extra_hosts: allow_hosts,
                credentials,
                json,
                prompts,
            };
            let host = open_host(&paths, max_steps).await?;
            run::run(options, &host).await
        }
        Command::Machine {
            command: MachineCommand::Service { command },
        } => {
            let host = open_host(&paths, None).await?;
            match command {
                ServiceCommand::Install { json } => service_cmd::install(&host, json).await,
                ServiceCommand::Uninstall { json } => service_cmd::uninstall(&host, json).await,
                ServiceCommand::Status { json } => service_cmd::status(&host, json).await,
            }
        }
        Command::Machine {
            command: MachineCommand::Sandbox { command },
        } => {
            let host = open_host(&paths, None).await?;
            match command {
                SandboxCommand::Status { provider, json } => {
                    machine::status(&host, provider.map(Into::into), json).await
                }
                SandboxCommand::Check { provider, json } => {
                    sandbox_check::check(&host, provider.map(Into::into), json).await
                }
                SandboxCommand::Setup {
                    provider,
                    yes,
                    json,
                } => {
                    let provider = provider.map_or(host.config().provider, Into::into);
                    let stdin = std::io::stdin();
                    let mut input = stdin.lock();
                    setup_cmd::setup(&host, provider, yes, json, &mut input).await
                }
            }
        }
        Command::Audit { command } => {
            audit_cmd::require_trail(&paths)?;
            let host = open_host(&paths, None).await?;
            match command {
                AuditCommand::Verify { json } => audit_cmd::verify(&host, json).await,
                AuditCommand::List {
                    session,
                    kind,
                    call,
                    tool,
                    decision,
                    enforcement,
                    status,
                    since,
                    until,
                    text,
                    limit,
                    after,
                    json,
                } => {
                    let filters = audit_cmd::ListFilters {
                        session,
                        kind,
                        call,
                        tool,
                        decision,
                        enforcement,
                        status,
                        since,
                        until,
                        text,
                        limit,
                        after,
                    };
                    audit_cmd::list(&host, filters, json).await
                }
                AuditCommand::Show { seq, json } => audit_cmd::show(&host, seq, json).await,
                AuditCommand::Export { format, session } => {
                    audit_cmd::export(&host, &format, session).await
                }
            }
        }
        Command::Sessions {
            command: SessionsCommand::List { json },
        } => match sessions_cmd::stored(&paths) {
            false => sessions_cmd::none(json),
            true => sessions_cmd::list(&open_host(&paths, None).await?, json).await,
        },
        Command::Up(options) => up::up(&paths, options, json_logs).await,
        Command::Keys { command } => {
            let host = open_host(&paths, None).await?;
            match command {
                KeysCommand::Set {
                    provider,
                    no_check,
                    json,
                } => keys_cmd::set(&host, provider, !no_check, json).await,
                KeysCommand::Delete { provider } => keys_cmd::delete(&host, provider).await,
                KeysCommand::Status { provider, json } => {
                    keys_cmd::status(&host, provider, json).await
                }
                KeysCommand::Test { provider, json } => keys_cmd::test(&host, provider, json).await,
            }
        }
        Command::Connectors { command } => {
            let host = open_host(&paths, None).await?;
            match command {
                ConnectorsCommand::List { json } => connectors_cmd::list(&host, json).await,
                ConnectorsCommand::Add { name, entry } => {
                    connectors_cmd::add(&host, &name, &entry).await
                }
                ConnectorsCommand::Edit { name, entry } => {
                    connectors_cmd::edit(&host, &name, &entry).await
                }
                ConnectorsCommand::Remove { name } => connectors_cmd::remove(&host, &name).await,
                ConnectorsCommand::Enable { name } => {
                    connectors_cmd::set_enabled(&host, &name, true).await
                }
                ConnectorsCommand::Disable { name } => {
                    connectors_cmd::set_enabled(&host, &name, false).await
                }
                ConnectorsCommand::Test { name, json } => {
                    connectors_cmd::test(&host, &name, json).await
                }
                ConnectorsCommand::Tools { name, json } => {
                    connectors_cmd::tools(&host, &name, json).await
                }
            }
        }
        Command::Approvals { command } => {
            let stored = sessions_cmd::stored(&paths);
            match command {
                ApprovalsCommand::List { session, json } => {
                    approvals_cmd::list(&paths, stored, session.as_deref(), json).await
                }
                ApprovalsCommand::Revoke { id, session } => {
                    approvals_cmd::revoke(&paths, stored, &id, session.as_deref()).await
                }
            }
        }
    }
}
