//! `paddock`: run an agent task in a sandbox, check this machine's sandbox, read the audit
//! trail. See the crate README.

mod approvals_cmd;
mod audit_cmd;
mod machine;
mod run;
mod sandbox_check;
mod sessions_cmd;
mod terminal;
mod up;

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
    /// Serve the HTTP/WebSocket API (sessions, approvals, settings, audit) until Ctrl-C.
    Up(up::UpOptions),
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
    },
    /// Choose the provider in the machine config (shows the change and asks first).
    Setup {
        /// The provider to choose.
        #[arg(long, value_enum, default_value = "local")]
        provider: ProviderArg,
        /// Apply without asking.
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// Walk the hash chain; exit code 1 when it is broken.
    Verify {
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show audit rows, newest first.
    List {
        /// Only this session's rows (see `paddock sessions list`).
        #[arg(long)]
        session: Option<String>,
        /// Most rows to show.
        #[arg(long, default_value_t = 100)]
        limit: usize,
        /// One JSON object per row instead of text.
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
    match runtime.block_on(dispatch(cli.command)) {
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

async fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
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
            command: MachineCommand::Sandbox { command },
        } => {
            let host = open_host(&paths, None).await?;
            match command {
                SandboxCommand::Status { provider, json } => {
                    machine::status(&host, provider.map(Into::into), json).await
                }
                SandboxCommand::Check { provider } => {
                    sandbox_check::check(&host, provider.map(Into::into)).await
                }
                SandboxCommand::Setup { provider, yes } => {
                    let stdin = std::io::stdin();
                    let mut input = stdin.lock();
                    machine::setup(&host, provider.into(), yes, &mut input).await
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
                    limit,
                    json,
                } => audit_cmd::list(&host, session, limit, json).await,
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
        Command::Up(options) => up::up(&paths, options).await,
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
