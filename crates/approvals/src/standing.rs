//! Approvals the user gave: once, for this session, or always (on this machine).
//!
//! These are serde data; storing them (in the session, in the machine's config) is the
//! caller's job. An approval is bound to what it was given for:
//! * `once`: the exact call (tool + canonical arguments → [`crate::call_key`]);
//! * `session`/`always` for `run_bash`: a command prefix derived from the parsed command
//!   (`cargo test`, `npm run build`), never "any command"; for file tools, the tool on that
//!   exact path; for other tools, the exact call.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::analysis::Unit;
use crate::canonical::canonical_json;
use crate::wrappers::runs_code;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalScope {
    /// This call only; consumed when used.
    Once,
    /// Until the session ends.
    Session,
    /// On this machine, until revoked.
    Always,
}

/// What an approval covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalGrant {
    /// Exactly one call: `key` is [`crate::call_key`] of its tool and arguments.
    ExactCall {
        tool: String,
        key: String,
        /// A short description without argument values (tool and path or program).
        summary: String,
    },
    /// Simple commands of `run_bash` whose words start with `prefix`; every other check
    /// (wrappers, substitutions, redirections, safety checks, ask and deny rules) still applies.
    CommandPrefix { prefix: Vec<String> },
    /// A file tool on exactly this normalised absolute path.
    ToolPath { tool: String, path: String },
}

impl ApprovalGrant {
    /// A line for the user: what this approval lets through.
    pub fn describe(&self) -> String {
        match self {
            ApprovalGrant::ExactCall { summary, .. } => format!("exactly this call: {summary}"),
            ApprovalGrant::CommandPrefix { prefix } => {
                format!("commands starting with `{}`", prefix.join(" "))
            }
            ApprovalGrant::ToolPath { tool, path } => format!("`{tool}` on `{path}`"),
        }
    }
}

/// One approval the user gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandingApproval {
    /// Derived from scope and grant, so the same approval given twice has one id.
    pub id: String,
    pub scope: ApprovalScope,
    pub grant: ApprovalGrant,
}

impl StandingApproval {
    pub fn new(scope: ApprovalScope, grant: ApprovalGrant) -> Self {
        let body = serde_json::json!({ "scope": scope, "grant": grant });
        let digest = Sha256::digest(canonical_json(&body).as_bytes());
        StandingApproval {
            id: format!("apr-{}", &hex::encode(digest)[..16]),
            scope,
            grant,
        }
    }
}

/// The approvals in force for a call: the session's and the machine's, assembled by the
/// caller. Listed, revocable, and consumable (for `once`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StandingApprovals {
    approvals: Vec<StandingApproval>,
}

impl StandingApprovals {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an approval (a second copy of the same approval is not added).
    pub fn add(&mut self, approval: StandingApproval) {
        if !self.approvals.iter().any(|a| a.id == approval.id) {
            self.approvals.push(approval);
        }
    }

    pub fn list(&self) -> &[StandingApproval] {
        &self.approvals
    }

    /// Removes an approval; returns it, or `None` when no approval has that id.
    pub fn revoke(&mut self, id: &str) -> Option<StandingApproval> {
        let index = self.approvals.iter().position(|a| a.id == id)?;
        Some(self.approvals.remove(index))
    }

    /// Called after a call ran on approval `id`: a `once` approval is removed (and returned);
    /// lasting ones stay.
    pub fn consume(&mut self, id: &str) -> Option<StandingApproval> {
        let once = self
            .approvals
            .iter()
            .any(|a| a.id == id && a.scope == ApprovalScope::Once);
        if once { self.revoke(id) } else { None }
    }

    /// The approvals of one scope (e.g. the `always` ones, to persist for the machine).
    pub fn of_scope(&self, scope: ApprovalScope) -> impl Iterator<Item = &StandingApproval> {
        self.approvals.iter().filter(move |a| a.scope == scope)
    }
}

/// Programs whose effect depends entirely on their arguments: a lasting approval by prefix
/// would approve anything they can do, so they are approved once (or by a written rule).
const ONCE_ONLY: &[&str] = &[
    "rm",
    "rmdir",
    "mv",
    "cp",
    "dd",
    "chmod",
    "chown",
    "chgrp",
    "ln",
    "curl",
    "wget",
    "ssh",
    "scp",
    "rsync",
    "sftp",
    "ftp",
    "nc",
    "ncat",
    "socat",
    "telnet",
    "kill",
    "pkill",
    "killall",
    "shred",
    "truncate",
    "tee",
    "sed",
    "awk",
    "gawk",
    "install",
    "mount",
    "umount",
    "crontab",
    "systemctl",
    "sudo",
    "doas",
    "su",
    "find",
    "xargs",
    "eval",
    "exec",
    "env",
    "open",
    "xdg-open",
];

fn subcommand_like(word: &str) -> bool {
    word.len() <= 40
        && word
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'))
}

/// The prefix a lasting approval of `unit` stores: the program and up to two
/// subcommand-like words after it (`npm run build`, `cargo test`, `python -m pytest`).
pub(crate) fn derive_prefix(unit: &Unit) -> Result<Vec<String>, String> {
    if let Some(reason) = unit.never_allow.first() {
        return Err(reason.clone());
    }
    let Some(program) = unit.program() else {
        return Err("the program's name is only known when the command runs".to_string());
    };
    let name = unit.program_name().unwrap_or(program);
    if ONCE_ONLY.contains(&name) {
        return Err(format!(
            "`{name}` acts on whatever it is given; approve it once, or write a rule"
        ));
    }
    let code_runner = runs_code(name);
    let mut prefix = vec![program.to_string()];
    for arg in unit.argv.iter().skip(1).take(2) {
        let Some(text) = arg.text.as_deref() else {
            break;
        };
        let module_flag = code_runner && text == "-m" && prefix.len() == 1;
        let script = code_runner && prefix.len() == 1 && !text.starts_with('-');
        if subcommand_like(text) || module_flag || script {
            prefix.push(text.to_string());
        } else {
            break;
        }
    }
    if code_runner && (prefix.len() < 2 || prefix.last().is_some_and(|w| w == "-m")) {
        return Err(format!(
            "`{name}` runs any code it is given; approve it once, or write a rule naming what it runs"
        ));
    }
    Ok(prefix)
}
