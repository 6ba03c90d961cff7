//! # approvals
//!
//! Decides allow / ask / deny for one tool call, on the parsed shell command. Pure: no I/O,
//! no clock, no randomness; rules are loaded from TOML *text*, and persistence of approvals is
//! the caller's job (every type here is serde data).
//!
//! ```
//! use std::collections::BTreeSet;
//! use approvals::{ApprovalMode, ApprovalPolicy, Grants, Grant, Access, ProtectedPaths,
//!                 RuleSet, StandingApprovals, ToolCallView};
//! use protocol::EnforcementLevel;
//!
//! let grants = Grants::new(vec![Grant { path: "/home/alice/project".into(), access: Access::ReadWrite }])?;
//! let policy = ApprovalPolicy::new(ApprovalMode::Ask, RuleSet::builtin()?, grants);
//! let args = serde_json::json!({ "command": "git status && git push" });
//! let (downloaded, written) = (BTreeSet::new(), BTreeSet::new());
//! // The protected list is data (`sandbox-policy` ships it); one glob here.
//! let protected = ProtectedPaths::new(
//!     vec![("**/.bashrc".into(), "bash runs it when a shell starts".into())],
//!     Vec::new(),
//! );
//! let call = ToolCallView {
//!     tool: "run_bash",
//!     args_json: &args,
//!     cwd: "/home/alice/project",
//!     enforcement: EnforcementLevel::Local,
//!     recently_downloaded: &downloaded,
//!     written: &written,
//!     protected: &protected,
//! };
//! let verdict = policy.evaluate(&call, &StandingApprovals::new());
//! assert!(verdict.is_ask(), "{}", verdict.reason());
//! # Ok::<(), approvals::ApprovalError>(())
//! ```

mod analysis;
mod call;
mod canonical;
mod downloads;
mod error;
mod expand;
mod git;
mod matching;
pub mod mode;
mod paths;
mod policy;
mod protected;
mod rules;
mod safety;
pub mod shell;
mod standing;
mod understood;
mod wrappers;

pub use analysis::{Analysis, Arg, Unit, WriteTarget, analyze};
pub use call::ToolCallView;
pub use canonical::{call_key, canonical_args, canonical_json};
pub use downloads::{downloads_of, writes_of};
pub use error::ApprovalError;
pub use paths::{Access, Grant, Grants, normalize, resolve};
pub use policy::{
    ApprovalPolicy, DecidedBy, DecisionOutcome, UserDecision, Verdict, denial_message,
};
pub use protected::ProtectedPaths;
/// The session's approval mode: the one type shared with the wire and the config (see [`mode`]
/// for parsing both spellings and the loud-mode warning).
pub use protocol::ApprovalMode;
pub use rules::{DEFAULT_RULES_TOML, Rule, RuleDecision, RuleSet};
pub use safety::{SafetyCheck, SafetyCheckKind, protected_path};
pub use standing::{ApprovalGrant, ApprovalScope, StandingApproval, StandingApprovals};
