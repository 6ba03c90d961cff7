//! The decision: allow, ask or deny one tool call.
//!
//! Order, strictest first:
//! 1. a deny rule anywhere in the command denies (every mode, `bypass` included);
//! 2. an exact-call approval of these canonical arguments allows;
//! 3. `bypass` allows;
//! 4. a command that cannot be parsed asks;
//! 5. a safety check asks;
//! 6. an ask rule asks;
//! 7. allow rules and lasting approvals allow when they cover every simple command and every
//!    write lands in a read-write grant;
//! 8. otherwise the mode decides.

use protocol::ApprovalMode;
use serde::{Deserialize, Serialize};

use crate::call::{Call, CommandCall, ToolCallView, ToolKind};
use crate::error::ApprovalError;
use crate::matching::{CommandMatcher, command_allowed};
use crate::mode;
use crate::paths::Grants;
use crate::rules::{Rule, RuleDecision, RuleSet};
use crate::safety::{self, SafetyCheck};
use crate::standing::{
    ApprovalGrant, ApprovalScope, StandingApproval, StandingApprovals, derive_prefix,
};
use crate::understood;

/// Who or what made a decision (recorded in the audit trail).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum DecidedBy {
    /// One or more rules (their names, comma-separated).
    Rule { name: String },
    /// The session's mode.
    Mode { mode: ApprovalMode },
    /// An approval the user gave earlier.
    Standing { id: String, scope: ApprovalScope },
    /// `bypass` mode.
    Bypass,
    /// The call's arguments were malformed.
    InvalidCall,
}

/// The policy's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    Allow {
        reason: String,
        decided_by: DecidedBy,
    },
    /// Ask the user. With a safety check only a `once` approval can answer it.
    Ask {
        reason: String,
        safety_check: Option<SafetyCheck>,
    },
    /// Refused; `reason` is returned to the model.
    Deny {
        reason: String,
        decided_by: DecidedBy,
    },
}

impl Verdict {
    pub fn reason(&self) -> &str {
        match self {
            Verdict::Allow { reason, .. }
            | Verdict::Ask { reason, .. }
            | Verdict::Deny { reason, .. } => reason,
        }
    }

    pub fn is_allow(&self) -> bool {
        matches!(self, Verdict::Allow { .. })
    }

    pub fn is_ask(&self) -> bool {
        matches!(self, Verdict::Ask { .. })
    }

    pub fn is_deny(&self) -> bool {
        matches!(self, Verdict::Deny { .. })
    }
}

/// The user's answer to an `Ask`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum UserDecision {
    ApproveOnce,
    ApproveSession,
    ApproveAlways,
    Deny { reason: Option<String> },
}

/// What the caller does after the user answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum DecisionOutcome {
    /// Run the call; store `new_approvals` (session or machine, by their scope).
    Run {
        new_approvals: Vec<StandingApproval>,
    },
    /// Do not run it; send `message_to_model` as the tool result.
    Refuse { message_to_model: String },
}

/// A session's approval policy: its mode, the rules, and its folder grants.
#[derive(Debug, Clone)]
pub struct ApprovalPolicy {
    mode: ApprovalMode,
    rules: RuleSet,
    grants: Grants,
}

fn rule_reason(rule: &Rule, what: &str) -> String {
    let reason = rule.reason.as_deref().unwrap_or("");
    format!("rule `{}`: {reason} (`{what}`)", rule.name)
}

impl ApprovalPolicy {
    pub fn new(mode: ApprovalMode, rules: RuleSet, grants: Grants) -> Self {
        ApprovalPolicy {
            mode,
            rules,
            grants,
        }
    }

    pub fn mode(&self) -> ApprovalMode {
        self.mode
    }

    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    pub fn grants(&self) -> &Grants {
        &self.grants
    }

    fn of(&self, decision: RuleDecision) -> impl Iterator<Item = &Rule> {
        self.rules
            .rules()
            .iter()
            .filter(move |r| r.decision == decision)
    }

    /// Decides one call.
    pub fn evaluate(&self, view: &ToolCallView<'_>, standing: &StandingApprovals) -> Verdict {
        let call = match Call::read(view) {
            Ok(call) => call,
            Err(err) => {
                return Verdict::Deny {
                    reason: err.to_string(),
                    decided_by: DecidedBy::InvalidCall,
                };
            }
        };
        if let Some(deny) = self.deny(&call) {
            return deny;
        }
        let exact = standing.list().iter().find(|a| {
            matches!(&a.grant, ApprovalGrant::ExactCall { tool, key, .. } if tool == view.tool && *key == call.key)
        });
        if let Some(approval) = exact {
            return Verdict::Allow {
                reason: format!("approved by the user ({})", approval.grant.describe()),
                decided_by: DecidedBy::Standing {
                    id: approval.id.clone(),
                    scope: approval.scope,
                },
            };
        }
        if self.mode == ApprovalMode::Bypass {
            return Verdict::Allow {
                reason: "bypass mode: approvals are off".to_string(),
                decided_by: DecidedBy::Bypass,
            };
        }
        match &call.command {
            Some(command) => self.evaluate_command(&call, command, standing),
            None => self.evaluate_tool(&call, standing),
        }
    }

    fn deny(&self, call: &Call<'_>) -> Option<Verdict> {
        for rule in self.of(RuleDecision::Deny) {
            let hit = match &call.command {
                Some(CommandCall {
                    parsed: Ok(analysis),
                    ..
                }) => rule
                    .matcher
                    .hits(analysis)
                    .first()
                    .map(|i| unit_text(&analysis.units[*i])),
                Some(_) => None,
                None => rule
                    .matcher
                    .hits_tool(call.view.tool, call.path.as_deref())
                    .then(|| tool_text(call)),
            };
            if let Some(what) = hit {
                return Some(Verdict::Deny {
                    reason: rule_reason(rule, &what),
                    decided_by: DecidedBy::Rule {
                        name: rule.name.clone(),
                    },
                });
            }
        }
        None
    }

    fn evaluate_command(
        &self,
        call: &Call<'_>,
        command: &CommandCall,
        standing: &StandingApprovals,
    ) -> Verdict {
        let analysis = match &command.parsed {
            Ok(analysis) => analysis,
            Err(err) => {
                return Verdict::Ask {
                    reason: format!("the command could not be checked: {err}"),
                    safety_check: None,
                };
            }
        };
        if let Some(check) = safety::check_command(
            analysis,
            &command.cwd,
            call.view.recently_downloaded,
            call.view.protected,
        ) {
            return Verdict::Ask {
                reason: format!("safety check: {}", check.detail),
                safety_check: Some(check),
            };
        }
        for rule in self.of(RuleDecision::Ask) {
            if let Some(i) = rule.matcher.hits(analysis).first() {
                return Verdict::Ask {
                    reason: rule_reason(rule, &unit_text(&analysis.units[*i])),
                    safety_check: None,
                };
            }
        }
        let allow_rules: Vec<&Rule> = self.of(RuleDecision::Allow).collect();
        let by_rules = command_allowed(analysis, &self.grants, |unit| {
            allow_rules.iter().any(|r| r.matcher.covers(unit))
        });
        let why_not = match by_rules {
            Ok(()) => {
                let mut names: Vec<&str> = Vec::new();
                for unit in analysis.units.iter().filter(|u| !u.argv.is_empty()) {
                    if let Some(rule) = allow_rules.iter().find(|r| r.matcher.covers(unit))
                        && !names.contains(&rule.name.as_str())
                    {
                        names.push(&rule.name);
                    }
                }
                let name = names.join(", ");
                return Verdict::Allow {
                    reason: format!("allowed by rule `{name}`"),
                    decided_by: DecidedBy::Rule { name },
                };
            }
            Err(why) => why,
        };
        let prefixes: Vec<(&StandingApproval, CommandMatcher)> = standing
            .list()
            .iter()
            .filter_map(|a| match &a.grant {
                ApprovalGrant::CommandPrefix { prefix } => Some((
                    a,
                    CommandMatcher {
                        prefixes: vec![prefix.clone()],
                        with_any_flag: Vec::new(),
                        with_any_arg: Vec::new(),
                        with_arg_prefix: Vec::new(),
                        excluding: Vec::new(),
                    },
                )),
                _ => None,
            })
            .collect();
        let by_standing = command_allowed(analysis, &self.grants, |unit| {
            allow_rules.iter().any(|r| r.matcher.covers(unit))
                || prefixes.iter().any(|(_, m)| m.matches(unit, true))
        });
        if by_standing.is_ok() {
            let used = analysis
                .units
                .iter()
                .find_map(|u| prefixes.iter().find(|(_, m)| m.matches(u, true)));
            if let Some((approval, _)) = used {
                return Verdict::Allow {
                    reason: format!("approved by the user ({})", approval.grant.describe()),
                    decided_by: DecidedBy::Standing {
                        id: approval.id.clone(),
                        scope: approval.scope,
                    },
                };
            }
        }
        let not_understood = understood::not_understood(analysis, &command.cwd, call.view.written);
        self.by_mode(call, &why_not, &not_understood)
    }

    fn evaluate_tool(&self, call: &Call<'_>, standing: &StandingApprovals) -> Verdict {
        let tool = call.view.tool;
        if call.kind == ToolKind::Edit
            && let Some(check) = call
                .path
                .as_deref()
                .and_then(|p| safety::check_path(tool, p, call.view.protected))
        {
            return Verdict::Ask {
                reason: format!("safety check: {}", check.detail),
                safety_check: Some(check),
            };
        }
        let path = call.path.as_deref();
        for decision in [RuleDecision::Ask, RuleDecision::Allow] {
            if let Some(rule) = self.of(decision).find(|r| r.matcher.hits_tool(tool, path)) {
                let reason = rule_reason(rule, &tool_text(call));
                return match decision {
                    RuleDecision::Allow => Verdict::Allow {
                        reason,
                        decided_by: DecidedBy::Rule {
                            name: rule.name.clone(),
                        },
                    },
                    _ => Verdict::Ask {
                        reason,
                        safety_check: None,
                    },
                };
            }
        }
        let approval = standing.list().iter().find(|a| {
            matches!(&a.grant, ApprovalGrant::ToolPath { tool: t, path: p } if t == tool && Some(p.as_str()) == path)
        });
        if let Some(approval) = approval {
            return Verdict::Allow {
                reason: format!("approved by the user ({})", approval.grant.describe()),
                decided_by: DecidedBy::Standing {
                    id: approval.id.clone(),
                    scope: approval.scope,
                },
            };
        }
        let why_not = match call.kind {
            ToolKind::Read => {
                return Verdict::Allow {
                    reason: "reads proceed in every mode".to_string(),
                    decided_by: DecidedBy::Mode { mode: self.mode },
                };
            }
            ToolKind::Edit if call.is_recursive_delete() => {
                "it deletes a folder recursively".to_string()
            }
            ToolKind::Edit => match path {
                Some(p) if self.grants.is_writable(p) => String::new(),
                Some(p) => format!("`{p}` is outside the session's read-write folders"),
                None => "it names no path".to_string(),
            },
            ToolKind::Command | ToolKind::Other => format!("`{tool}` is not a file tool"),
        };
        if self.mode == ApprovalMode::AutoEdit && call.kind == ToolKind::Edit && why_not.is_empty()
        {
            return Verdict::Allow {
                reason: "auto-edit: file edits inside read-write folders proceed".to_string(),
                decided_by: DecidedBy::Mode { mode: self.mode },
            };
        }
        self.by_mode(call, &why_not, &[])
    }

    /// The mode's decision for a call no rule or approval settled. `not_understood`: why a
    /// command cannot be checked (then `auto-in-sandbox` asks rather than trusting the wall).
    fn by_mode(&self, call: &Call<'_>, why_not: &str, not_understood: &[String]) -> Verdict {
        let enforcement = call.view.enforcement;
        if self.mode == ApprovalMode::AutoInSandbox
            && enforcement.is_walled()
            && let Some(first) = not_understood.first()
        {
            return Verdict::Ask {
                reason: format!(
                    "auto-in-sandbox asks about what it cannot check: {first}{}",
                    if not_understood.len() > 1 {
                        format!(" (and {} more)", not_understood.len() - 1)
                    } else {
                        String::new()
                    }
                ),
                safety_check: None,
            };
        }
        if self.mode == ApprovalMode::AutoInSandbox && enforcement.is_walled() {
            return Verdict::Allow {
                reason: format!(
                    "auto-in-sandbox: the `{}` wall confines the call",
                    enforcement.as_str()
                ),
                decided_by: DecidedBy::Mode { mode: self.mode },
            };
        }
        let what = match call.kind {
            ToolKind::Command => "commands ask",
            ToolKind::Edit => "file changes ask",
            _ => "this tool asks",
        };
        let mode = match self.mode {
            ApprovalMode::AutoInSandbox => format!(
                "auto-in-sandbox without a wall (enforcement `{}`) behaves as ask",
                enforcement.as_str()
            ),
            other => format!("in `{}` mode {what}", mode::label(other)),
        };
        let reason = if why_not.is_empty() {
            mode
        } else {
            format!("{mode}; {why_not}")
        };
        Verdict::Ask {
            reason,
            safety_check: None,
        }
    }

    /// What a lasting (`session` / `always`) approval of this call would store; an error
    /// explains why it cannot be given (then only `once` is offered).
    pub fn lasting_grants(
        &self,
        view: &ToolCallView<'_>,
    ) -> Result<Vec<ApprovalGrant>, ApprovalError> {
        let call = Call::read(view)?;
        let none = |reason: String| ApprovalError::NoLastingApproval { reason };
        match &call.command {
            Some(command) => {
                let analysis = command
                    .parsed
                    .as_ref()
                    .map_err(|e| none(format!("the command could not be parsed: {e}")))?;
                if let Some(check) = safety::check_command(
                    analysis,
                    &command.cwd,
                    view.recently_downloaded,
                    view.protected,
                ) {
                    return Err(none(format!("safety check: {}", check.detail)));
                }
                if let Some(rule) = self
                    .of(RuleDecision::Ask)
                    .find(|r| !r.matcher.hits(analysis).is_empty())
                {
                    return Err(none(format!("rule `{}` always asks", rule.name)));
                }
                let mut prefixes: Vec<Vec<String>> = Vec::new();
                for unit in analysis.units.iter().filter(|u| !u.argv.is_empty()) {
                    let prefix = derive_prefix(unit).map_err(none)?;
                    if !prefixes.contains(&prefix) {
                        prefixes.push(prefix);
                    }
                }
                // The approved prefixes must cover the call itself, writes included.
                command_allowed(analysis, &self.grants, |unit| {
                    prefixes.iter().any(|p| {
                        CommandMatcher {
                            prefixes: vec![p.clone()],
                            with_any_flag: Vec::new(),
                            with_any_arg: Vec::new(),
                            with_arg_prefix: Vec::new(),
                            excluding: Vec::new(),
                        }
                        .matches(unit, true)
                    }) || unit.never_allow.is_empty() && unit.argv.is_empty()
                })
                .map_err(none)?;
                Ok(prefixes
                    .into_iter()
                    .map(|prefix| ApprovalGrant::CommandPrefix { prefix })
                    .collect())
            }
            None => {
                if let Some(check) = (call.kind == ToolKind::Edit)
                    .then(|| {
                        call.path
                            .as_deref()
                            .and_then(|p| safety::check_path(view.tool, p, view.protected))
                    })
                    .flatten()
                {
                    return Err(none(format!("safety check: {}", check.detail)));
                }
                Ok(vec![match (&call.path, call.kind) {
                    (Some(path), ToolKind::Edit | ToolKind::Read) => ApprovalGrant::ToolPath {
                        tool: view.tool.to_string(),
                        path: path.clone(),
                    },
                    _ => exact_grant(&call),
                }])
            }
        }
    }

    /// An approval of exactly this call (for `once`, or an asynchronous inbox that stores
    /// the answer and evaluates the call again).
    pub fn once(&self, view: &ToolCallView<'_>) -> Result<StandingApproval, ApprovalError> {
        let call = Call::read(view)?;
        Ok(StandingApproval::new(
            ApprovalScope::Once,
            exact_grant(&call),
        ))
    }

    /// Turns the user's answer into what the caller does next.
    pub fn decide(
        &self,
        view: &ToolCallView<'_>,
        decision: &UserDecision,
    ) -> Result<DecisionOutcome, ApprovalError> {
        let scope = match decision {
            UserDecision::ApproveOnce => {
                Call::read(view)?;
                return Ok(DecisionOutcome::Run {
                    new_approvals: Vec::new(),
                });
            }
            UserDecision::ApproveSession => ApprovalScope::Session,
            UserDecision::ApproveAlways => ApprovalScope::Always,
            UserDecision::Deny { reason } => {
                return Ok(DecisionOutcome::Refuse {
                    message_to_model: denial_message(reason.as_deref()),
                });
            }
        };
        let grants = self.lasting_grants(view)?;
        Ok(DecisionOutcome::Run {
            new_approvals: grants
                .into_iter()
                .map(|grant| StandingApproval::new(scope, grant))
                .collect(),
        })
    }
}

/// The tool result the model receives when the user denies a call.
pub fn denial_message(reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => format!("The user denied this tool call. Their reason: {reason}"),
        None => "The user denied this tool call.".to_string(),
    }
}

fn exact_grant(call: &Call<'_>) -> ApprovalGrant {
    ApprovalGrant::ExactCall {
        tool: call.view.tool.to_string(),
        key: call.key.clone(),
        summary: tool_text(call),
    }
}

fn unit_text(unit: &crate::analysis::Unit) -> String {
    let shown: Vec<&str> = unit.argv.iter().map(|a| a.display.as_str()).collect();
    shown.join(" ")
}

/// A short description of a call without argument values beyond its path or program.
fn tool_text(call: &Call<'_>) -> String {
    match (&call.command, &call.path) {
        (
            Some(CommandCall {
                parsed: Ok(analysis),
                ..
            }),
            _,
        ) => {
            let programs: Vec<&str> = analysis.units.iter().filter_map(|u| u.program()).collect();
            format!("{}: {}", call.view.tool, programs.join(", "))
        }
        (_, Some(path)) => format!("{} {path}", call.view.tool),
        _ => call.view.tool.to_string(),
    }
}
