//! Shared setup for the approvals integration tests: a session in `/p` (read-write) with a
//! read-only `/p/vendor`, the built-in rules, and a small call builder.
#![allow(dead_code)]
// Test setup: a panic here is a failed test with a line number.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use approvals::{
    Access, ApprovalMode, ApprovalPolicy, Grant, Grants, ProtectedPaths, RuleSet,
    StandingApprovals, ToolCallView, Verdict,
};
use protocol::EnforcementLevel;
use serde_json::{Value, json};

pub const CWD: &str = "/p";

pub fn grants() -> Grants {
    Grants::new(vec![
        Grant {
            path: "/p".into(),
            access: Access::ReadWrite,
        },
        Grant {
            path: "/p/vendor".into(),
            access: Access::ReadOnly,
        },
    ])
    .unwrap()
}

pub fn policy(mode: ApprovalMode) -> ApprovalPolicy {
    ApprovalPolicy::new(mode, RuleSet::builtin().unwrap(), grants())
}

/// The shipped protected list (`config/protected.toml`), as the agent passes it.
pub fn protected() -> ProtectedPaths {
    let list = sandbox_policy::ProtectedList::builtin().unwrap();
    ProtectedPaths::new(list.globs(), Vec::new())
}

/// A call to evaluate; owns what a `ToolCallView` borrows.
pub struct TestCall {
    pub tool: String,
    pub args: Value,
    pub enforcement: EnforcementLevel,
    pub downloaded: BTreeSet<String>,
    pub written: BTreeSet<String>,
    pub protected: ProtectedPaths,
}

impl TestCall {
    pub fn new(tool: &str, args: Value) -> Self {
        TestCall {
            tool: tool.to_string(),
            args,
            enforcement: EnforcementLevel::Local,
            downloaded: BTreeSet::new(),
            written: BTreeSet::new(),
            protected: protected(),
        }
    }

    pub fn bash(command: &str) -> Self {
        Self::new("run_bash", json!({ "command": command }))
    }

    pub fn on(mut self, enforcement: EnforcementLevel) -> Self {
        self.enforcement = enforcement;
        self
    }

    pub fn view(&self) -> ToolCallView<'_> {
        ToolCallView {
            tool: &self.tool,
            args_json: &self.args,
            cwd: CWD,
            enforcement: self.enforcement,
            recently_downloaded: &self.downloaded,
            written: &self.written,
            protected: &self.protected,
        }
    }

    pub fn evaluate(&self, policy: &ApprovalPolicy) -> Verdict {
        policy.evaluate(&self.view(), &StandingApprovals::new())
    }
}

/// `A`llow, `?` ask, `D`eny.
pub fn letter(verdict: &Verdict) -> char {
    match verdict {
        Verdict::Allow { .. } => 'A',
        Verdict::Ask { .. } => '?',
        Verdict::Deny { .. } => 'D',
    }
}
