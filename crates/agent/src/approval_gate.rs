//! The approval gate: the `approvals` crate decides; this module feeds it the session's mode,
//! grants and standing approvals, and turns its answers into protocol terms.

use std::collections::BTreeSet;

use approvals::{
    Access, ApprovalPolicy, DecisionOutcome, Grant, Grants, ProtectedPaths, RuleSet,
    SafetyCheckKind, StandingApprovals, ToolCallView, UserDecision, Verdict,
};
use protocol::{
    ApprovalDecision, ApprovalScope, DecidedBy, EnforcementLevel, FolderAccess, SessionSettings,
};
use serde_json::Value;
use tool_protocol::ToolRequest;

use crate::tools::PreparedCall;

/// What the gate decided for one call, in protocol terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GateVerdict {
    Allow {
        by: DecidedBy,
    },
    Ask {
        reason: String,
        /// Whether a session/always approval may answer it.
        lasting_allowed: bool,
        /// The safety check that asks, when one does.
        safety: Option<SafetyCheckKind>,
    },
    Deny {
        by: DecidedBy,
        reason: String,
    },
}

/// What the user's answer means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GateDecision {
    /// Run; keep these approvals (by their scope). `scope` is what was actually granted
    /// (`once` when a lasting approval could not be given for this call).
    Run {
        scope: ApprovalScope,
        new_approvals: Vec<approvals::StandingApproval>,
    },
    Refuse {
        message_to_model: String,
    },
}

/// The display form of a standing approval.
pub fn listed_approval(approval: &approvals::StandingApproval) -> protocol::StandingApproval {
    protocol::StandingApproval {
        id: approval.id.clone(),
        scope: match approval.scope {
            approvals::ApprovalScope::Once => ApprovalScope::Once,
            approvals::ApprovalScope::Session => ApprovalScope::Session,
            approvals::ApprovalScope::Always => ApprovalScope::Always,
        },
        description: approval.grant.describe(),
    }
}

/// The folder calls run in: the session's `cwd`, else its first folder.
pub(crate) fn session_cwd(settings: &SessionSettings) -> String {
    settings
        .cwd
        .clone()
        .or_else(|| settings.folders.first().map(|f| f.path.clone()))
        .unwrap_or_else(|| "/".to_owned())
}

/// What the session knows about files when a call is judged.
pub(crate) struct Files<'a> {
    /// What the session's commands downloaded (running one asks).
    pub downloaded: &'a BTreeSet<String>,
    /// What the session wrote (running one cannot be checked).
    pub written: &'a BTreeSet<String>,
    /// The protected list, with what a live sandbox found.
    pub protected: ProtectedPaths,
}

/// The session's gate for one evaluation: built from the settings in force at that moment.
pub(crate) struct Gate {
    policy: ApprovalPolicy,
    cwd: String,
    enforcement: EnforcementLevel,
    downloaded: BTreeSet<String>,
    written: BTreeSet<String>,
    protected: ProtectedPaths,
}

impl Gate {
    pub(crate) fn new(
        settings: &SessionSettings,
        enforcement: EnforcementLevel,
        files: Files<'_>,
    ) -> Result<Self, String> {
        let grants = Grants::new(
            settings
                .folders
                .iter()
                .map(|f| Grant {
                    path: f.path.clone(),
                    access: match f.access {
                        FolderAccess::ReadWrite => Access::ReadWrite,
                        FolderAccess::ReadOnly => Access::ReadOnly,
                    },
                })
                .collect(),
        )
        .map_err(|e| e.to_string())?;
        let rules = RuleSet::builtin().map_err(|e| format!("the built-in rules: {e}"))?;
        Ok(Self {
            policy: ApprovalPolicy::new(settings.approval_mode, rules, grants),
            cwd: session_cwd(settings),
            enforcement,
            downloaded: files.downloaded.clone(),
            written: files.written.clone(),
            protected: files.protected,
        })
    }

    fn view<'a>(&'a self, tool: &'a str, input: &'a Value) -> ToolCallView<'a> {
        ToolCallView {
            tool,
            args_json: input,
            cwd: &self.cwd,
            enforcement: self.enforcement,
            recently_downloaded: &self.downloaded,
            written: &self.written,
            protected: &self.protected,
        }
    }

    pub(crate) fn evaluate(
        &self,
        tool: &str,
        input: &Value,
        standing: &StandingApprovals,
    ) -> GateVerdict {
        let view = self.view(tool, input);
        match self.policy.evaluate(&view, standing) {
            Verdict::Allow { decided_by, .. } => GateVerdict::Allow {
                by: decided_by_of(&decided_by),
            },
            Verdict::Deny { reason, decided_by } => GateVerdict::Deny {
                by: decided_by_of(&decided_by),
                reason,
            },
            Verdict::Ask {
                reason,
                safety_check,
            } => GateVerdict::Ask {
                reason,
                lasting_allowed: safety_check.is_none()
                    && self.policy.lasting_grants(&view).is_ok(),
                safety: safety_check.map(|c| c.kind),
            },
        }
    }

    pub(crate) fn decide(
        &self,
        tool: &str,
        input: &Value,
        decision: &ApprovalDecision,
    ) -> GateDecision {
        let view = self.view(tool, input);
        let (user, scope) = match decision {
            ApprovalDecision::Approve {
                scope: ApprovalScope::Once,
            } => (UserDecision::ApproveOnce, ApprovalScope::Once),
            ApprovalDecision::Approve {
                scope: ApprovalScope::Session,
            } => (UserDecision::ApproveSession, ApprovalScope::Session),
            ApprovalDecision::Approve {
                scope: ApprovalScope::Always,
            } => (UserDecision::ApproveAlways, ApprovalScope::Always),
            ApprovalDecision::Deny { reason } => (
                UserDecision::Deny {
                    reason: reason.clone(),
                },
                ApprovalScope::Once,
            ),
        };
        match self.policy.decide(&view, &user) {
            Ok(DecisionOutcome::Run { new_approvals }) => GateDecision::Run {
                scope,
                new_approvals,
            },
            Ok(DecisionOutcome::Refuse { message_to_model }) => {
                GateDecision::Refuse { message_to_model }
            }
            // A lasting approval cannot be given for this call: the user approved it, so it
            // runs this once and nothing is kept.
            Err(_) => GateDecision::Run {
                scope: ApprovalScope::Once,
                new_approvals: Vec::new(),
            },
        }
    }
}

fn decided_by_of(decided_by: &approvals::DecidedBy) -> DecidedBy {
    match decided_by {
        approvals::DecidedBy::Rule { .. } => DecidedBy::Rule,
        approvals::DecidedBy::Mode { .. } | approvals::DecidedBy::Bypass => DecidedBy::Mode,
        approvals::DecidedBy::Standing { .. } => DecidedBy::StandingApproval,
        approvals::DecidedBy::InvalidCall => DecidedBy::Policy,
    }
}

/// One line saying what the call would do.
pub(crate) fn summary(tool: &str, input: &Value, call: &PreparedCall) -> String {
    let Some(request) = call.runner_request() else {
        return format!("{tool} (runs on the host, outside the sandbox) {input}");
    };
    match request {
        ToolRequest::RunBash(r) => r.command.clone(),
        ToolRequest::ReadFile(r) => format!("read {}", r.path),
        ToolRequest::WriteFile(r) => format!("write {} ({} bytes)", r.path, r.content.len()),
        ToolRequest::EditFile(r) => format!("edit {}", r.path),
        ToolRequest::Delete(r) => format!(
            "delete {}{}",
            r.path,
            if r.recursive == Some(true) {
                " (recursively)"
            } else {
                ""
            }
        ),
        ToolRequest::Glob(r) => format!("glob {}", r.pattern),
        ToolRequest::Grep(r) => format!("grep {}", r.pattern),
        ToolRequest::ListDirectory(r) => {
            format!("list {}", r.path.as_deref().unwrap_or("."))
        }
        other => other.name().as_str().to_owned(),
    }
}
