//! `paddock machine sandbox setup`: renders the host's setup plan (the exact diff or command of
//! each step), asks, applies it through the host (which backs files up and never runs sudo),
//! and renders what happened. Exit codes: 0 the wall is ready and selected; 1 an error, a
//! failed step, or nothing applied (declined, or no terminal without `--yes`); 2 what Paddock
//! can do is done but steps are left to the user (printed with why).

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use paddock_host::{Host, SetupAction, SetupOutcome, SetupPlan, SetupRequest, SetupStep};
use protocol::ProviderKind;
use serde::Serialize;

use crate::machine::render_status;

/// The exit code when steps are left to the user.
const LEFT_TO_USER: u8 = 2;

/// Most rounds of plan-and-apply in one run (a round can make the next step possible, e.g.
/// every check passing makes selecting the wall the next step).
const MAX_ROUNDS: usize = 4;

fn indent(text: &str, by: &str) -> String {
    text.lines()
        .map(|l| format!("{by}{l}\n"))
        .collect::<String>()
}

/// One step as a person reads it: what, why, and the exact change.
pub fn render_step(number: usize, step: &SetupStep) -> String {
    let mut text = format!("[{number}] {} (check: {})\n", step.summary, step.check);
    match &step.action {
        SetupAction::EditFile { path, diff } => {
            text.push_str(&format!(
                "    Paddock edits {path} (the current file is kept as a backup beside it):\n"
            ));
            text.push_str(&indent(diff, "      "));
        }
        SetupAction::RunCommand { argv } => {
            text.push_str(&format!("    Paddock runs, as you: {}\n", argv.join(" ")));
        }
        SetupAction::ByHand {
            command,
            needs_root,
        } => {
            text.push_str(if *needs_root {
                "    You run this (it needs root, and Paddock never runs sudo):\n"
            } else {
                "    You run this (Paddock leaves it to you):\n"
            });
            text.push_str(&indent(command, "      "));
        }
    }
    if let Some(then) = &step.then {
        text.push_str(&format!("    then: {then}\n"));
    }
    text
}

/// The plan as a person reads it (after the wall's status).
pub fn render_plan(plan: &SetupPlan) -> String {
    if plan.done() {
        return format!(
            "nothing to change: the {} wall is ready and selected\n",
            plan.provider.as_str()
        );
    }
    if plan.steps.is_empty() {
        return "no step is known for the failed checks; see their fixes above\n".to_owned();
    }
    let mut text = String::new();
    for (i, step) in plan.steps.iter().enumerate() {
        text.push_str(&render_step(i + 1, step));
    }
    text
}

/// What applying did, as a person reads it.
pub fn render_outcome(outcome: &SetupOutcome) -> String {
    let mut text = String::new();
    for applied in &outcome.applied {
        text.push_str(&format!("done [{}]: {}", applied.id, applied.detail));
        if let Some(backup) = &applied.backup {
            text.push_str(&format!(" (the previous version is in {backup})"));
        }
        text.push('\n');
    }
    if let Some(failed) = &outcome.failed {
        text.push_str(&format!(
            "FAILED [{}]: {} (the steps after it were not tried)\n",
            failed.id, failed.reason
        ));
    }
    for then in &outcome.then {
        text.push_str(&format!("now: {then}\n"));
    }
    text
}

/// What `--json` prints: the first plan, each round's outcome, and the plan at the end.
#[derive(Serialize)]
struct JsonReport<'a> {
    plan: &'a SetupPlan,
    outcomes: &'a [SetupOutcome],
    after: &'a SetupPlan,
    done: bool,
}

fn ask(input: &mut dyn BufRead, count: usize) -> anyhow::Result<bool> {
    #[allow(clippy::print_stdout, reason = "the prompt is the CLI's interface")]
    {
        print!(
            "Make the {count} change{} marked \"Paddock edits\"/\"Paddock runs\"? [y/N]: ",
            if count == 1 { "" } else { "s" }
        );
    }
    std::io::stdout().flush()?;
    let mut answer = String::new();
    input.read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the CLI's output is its interface"
)]
pub async fn setup(
    host: &Host,
    provider: ProviderKind,
    assume_yes: bool,
    json: bool,
    input: &mut dyn BufRead,
) -> anyhow::Result<ExitCode> {
    let first = host.setup_plan(provider).await?;
    if !json {
        print!("{}", render_status(&first.status, ""));
        print!("{}", render_plan(&first));
    }
    let mut plan = first.clone();
    let mut outcomes: Vec<SetupOutcome> = Vec::new();
    let mut declined = false;
    for _ in 0..MAX_ROUNDS {
        let automatic = plan.automatic().count();
        if plan.done() || automatic == 0 {
            break;
        }
        if !assume_yes {
            if json || !std::io::stdin().is_terminal() {
                if !json {
                    eprintln!("not changed: stdin is not a terminal; rerun with --yes to apply");
                }
                declined = true;
                break;
            }
            if !outcomes.is_empty() {
                print!("{}", render_plan(&plan));
            }
            if !ask(input, automatic)? {
                println!("not changed");
                declined = true;
                break;
            }
        }
        let outcome = host
            .setup_apply(SetupRequest {
                provider,
                fingerprint: plan.fingerprint.clone(),
                steps: None,
            })
            .await?;
        if !json {
            print!("{}", render_outcome(&outcome));
        }
        let failed = outcome.failed.is_some();
        let progressed = !outcome.applied.is_empty();
        plan = outcome.after.clone();
        outcomes.push(outcome);
        if failed || !progressed {
            break;
        }
    }
    let failed = outcomes.iter().any(|o| o.failed.is_some());
    if json {
        let report = JsonReport {
            plan: &first,
            outcomes: &outcomes,
            after: &plan,
            done: plan.done(),
        };
        println!("{}", serde_json::to_string(&report)?);
    } else if !outcomes.is_empty() {
        if plan.done() {
            println!(
                "ready: the {} wall passes every check and is selected",
                plan.provider.as_str()
            );
        } else {
            println!("still to do:");
            print!("{}", render_plan(&plan));
        }
    }
    Ok(if plan.done() {
        ExitCode::SUCCESS
    } else if failed || declined {
        ExitCode::FAILURE
    } else {
        if !json && outcomes.is_empty() {
            println!(
                "nothing Paddock can do itself: run the commands above, then run `paddock \
                 machine sandbox setup --provider {}` again",
                provider.as_str()
            );
        }
        ExitCode::from(LEFT_TO_USER)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    /// A plan as the host sends it: a file edit, a command run as the user, one left to the
    /// user (root).
    fn plan() -> SetupPlan {
        serde_json::from_value(serde_json::json!({
            "provider": "openshell",
            "status": {"provider": "openshell", "enforcement": "openshell", "checks": [
                {"name": "gateway.toml", "ok": false, "detail": "bind mounts are off", "fix": null},
            ]},
            "selected": false,
            "fingerprint": "abc",
            "steps": [
                {"id": "gateway-bind-mounts", "check": "gateway.toml",
                 "summary": "let the gateway bind-mount session folders (docker driver)",
                 "action": {"kind": "edit_file", "path": "/home/u/.config/openshell/gateway.toml",
                   "diff": "--- a\n+++ a\n@@ -1,2 +1,2 @@\n [openshell.drivers.docker]\n-enable_bind_mounts = false\n+enable_bind_mounts = true\n"},
                 "then": "restart the gateway: systemctl --user restart openshell-gateway"},
                {"id": "pull-image", "check": "image", "summary": "pull the sandbox image now",
                 "action": {"kind": "run_command", "argv": ["docker", "pull", "img@sha256:00"]},
                 "then": null},
                {"id": "install-openshell", "check": "openshell CLI",
                 "summary": "install OpenShell 0.1.x (needs root)",
                 "action": {"kind": "by_hand", "command": "sudo apt-get install ./openshell*_0.1.*.deb",
                   "needs_root": true},
                 "then": null}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn a_plan_reads_as_exact_changes_and_what_is_left_to_the_user() {
        insta::assert_snapshot!(render_plan(&plan()));
    }

    #[test]
    fn an_outcome_names_backups_failures_and_what_to_do_next() {
        let outcome: SetupOutcome = serde_json::from_value(serde_json::json!({
            "applied": [{"id": "gateway-bind-mounts", "detail": "wrote /home/u/.config/openshell/gateway.toml",
                         "backup": "/home/u/.config/openshell/gateway.toml.bak"}],
            "failed": {"id": "pull-image", "reason": "`docker pull img@sha256:00` failed (exit 1): denied"},
            "then": ["restart the gateway: systemctl --user restart openshell-gateway"],
            "after": serde_json::to_value(plan()).unwrap(),
        }))
        .unwrap();
        insta::assert_snapshot!(render_outcome(&outcome));
    }
}
