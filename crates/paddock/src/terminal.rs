//! How a run looks on a terminal: events as text for people, or as JSON Lines; and the
//! approval prompt.

use std::io::{BufRead, Write};

use protocol::{ApprovalDecision, ApprovalScope, Event, EventMsg, ToolCallStatus};

/// One line (or fragment) of human text for an event; `None` for events a person need not see.
pub fn human(event: &Event) -> Option<String> {
    Some(match &event.msg {
        EventMsg::SessionCreated {
            settings, resumed, ..
        } => format!(
            "{} session {} (approvals: {}, network: {})\n",
            if *resumed { "resumed" } else { "started" },
            event.session_id,
            settings.approval_mode.as_str(),
            settings.network_profile.as_str()
        ),
        EventMsg::SandboxProvisioning { message } => format!("  sandbox: {message}\n"),
        EventMsg::SandboxReady {
            sandbox_id,
            enforcement,
            ..
        } => format!(
            "  sandbox ready: {sandbox_id} (enforcement: {})\n",
            enforcement.as_str()
        ),
        EventMsg::SandboxRecreated { reason, .. } => {
            format!("  sandbox rebuilt: {reason} (shell state was lost)\n")
        }
        EventMsg::SandboxRefused { reason, diagnose } => {
            format!("SANDBOX REFUSED: {reason}\n  run `{diagnose}` for details and fixes\n")
        }
        EventMsg::ModelTextDelta { text } => text.clone(),
        EventMsg::AssistantMessage { .. } => "\n".to_owned(),
        EventMsg::ToolCallAwaitingApproval {
            tool,
            summary,
            reason,
            ..
        } => format!("? {tool}: {summary}\n  ({reason})\n"),
        EventMsg::ToolCallDenied { reason, .. } => format!("  denied: {reason}\n"),
        EventMsg::ToolCallStarted {
            tool,
            args,
            enforcement,
            ..
        } => format!(
            "> {tool} {} [{}]\n",
            one_line(&args.to_string(), 120),
            enforcement.as_str()
        ),
        EventMsg::ToolCallFinished {
            status,
            exit_code,
            duration_ms,
            network_denials,
            output,
            ..
        } => {
            let mut line = match (status, exit_code) {
                (ToolCallStatus::Ok, Some(code)) => {
                    format!("  exit {code} in {duration_ms} ms\n")
                }
                (ToolCallStatus::Ok, None) => format!("  ok in {duration_ms} ms\n"),
                (ToolCallStatus::Error, _) => {
                    format!("  failed: {}\n", one_line(output, 200))
                }
                (ToolCallStatus::Cancelled, _) => "  cancelled\n".to_owned(),
                (ToolCallStatus::Denied, _) => return None,
            };
            for denial in network_denials {
                line.push_str(&format!(
                    "  network denied: {} -> {}:{} ({})\n",
                    denial.program(),
                    denial.host,
                    denial.port,
                    denial.reason
                ));
            }
            line
        }
        EventMsg::ApprovalRevoked { description, .. } => {
            format!("  approval revoked: {description}\n")
        }
        EventMsg::ProtectedPathChanged {
            path,
            detail,
            quarantined_to,
            ..
        } => {
            let mut line = format!("  PROTECTED FILE {path}: {detail}\n");
            if let Some(kept) = quarantined_to {
                line.push_str(&format!("    the original is kept in {kept}\n"));
            }
            line
        }
        EventMsg::Error { code, message } => format!("error ({}): {message}\n", code.as_str()),
        EventMsg::Notice { source, message } => format!("notice ({source}): {message}\n"),
        EventMsg::TurnFinished { stop_reason, steps } => {
            format!(
                "-- turn finished: {} after {steps} step(s)\n",
                serde_json::to_value(stop_reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            )
        }
        _ => return None,
    })
}

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c == '\n' { ' ' } else { c })
        .collect();
    if flat.chars().count() > max {
        let cut: String = flat.chars().take(max).collect();
        format!("{cut}…")
    } else {
        flat
    }
}

/// Asks the user on the terminal. Returns the decision; end of input denies.
pub fn prompt(
    input: &mut dyn BufRead,
    output: &mut dyn Write,
    lasting_allowed: bool,
) -> std::io::Result<ApprovalDecision> {
    loop {
        if lasting_allowed {
            write!(output, "Allow? [y]es once, [s]ession, [a]lways, [n]o: ")?;
        } else {
            write!(output, "Allow? [y]es once, [n]o (only once is offered): ")?;
        }
        output.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            return Ok(ApprovalDecision::Deny {
                reason: Some("no answer (end of input)".into()),
            });
        }
        let scope = match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Some(ApprovalScope::Once),
            "s" | "session" if lasting_allowed => Some(ApprovalScope::Session),
            "a" | "always" if lasting_allowed => Some(ApprovalScope::Always),
            "n" | "no" => {
                write!(output, "Reason for the agent (optional): ")?;
                output.flush()?;
                let mut reason = String::new();
                input.read_line(&mut reason)?;
                let reason = reason.trim().to_owned();
                return Ok(ApprovalDecision::Deny {
                    reason: (!reason.is_empty()).then_some(reason),
                });
            }
            _ => None,
        };
        if let Some(scope) = scope {
            return Ok(ApprovalDecision::Approve { scope });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(text: &str, lasting: bool) -> ApprovalDecision {
        let mut input = std::io::Cursor::new(text.as_bytes().to_vec());
        let mut output = Vec::new();
        prompt(&mut input, &mut output, lasting).unwrap()
    }

    #[test]
    fn prompt_answers() {
        let approve = |scope| ApprovalDecision::Approve { scope };
        assert_eq!(answer("y\n", true), approve(ApprovalScope::Once));
        assert_eq!(answer("s\n", true), approve(ApprovalScope::Session));
        assert_eq!(answer("a\n", true), approve(ApprovalScope::Always));
        assert_eq!(
            answer("n\nnot that folder\n", true),
            ApprovalDecision::Deny {
                reason: Some("not that folder".into())
            }
        );
        assert_eq!(
            answer("n\n\n", true),
            ApprovalDecision::Deny { reason: None }
        );
    }

    #[test]
    fn lasting_answers_are_not_accepted_when_not_offered() {
        // `a` is ignored (asked again), then `y` approves once.
        assert_eq!(
            answer("a\ny\n", false),
            ApprovalDecision::Approve {
                scope: ApprovalScope::Once
            }
        );
    }

    #[test]
    fn end_of_input_denies() {
        assert!(matches!(answer("", true), ApprovalDecision::Deny { .. }));
    }
}
