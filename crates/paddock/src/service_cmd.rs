//! `paddock machine service install|uninstall|status`: `paddock up` as a systemd user
//! service (the host does the work; this renders it). Exit codes: `status` 0 when the
//! service is installed, enabled and running, else 1; `install` 0 when it runs, 2 when it is
//! installed but something is left to the user (printed); `uninstall` 0.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use paddock_host::{Host, ServiceChange, ServiceStatus};

/// This `paddock`, the program the unit runs.
fn this_paddock() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("finding this paddock program")?;
    Ok(exe.canonicalize().unwrap_or(exe))
}

fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

pub fn render_status(status: &ServiceStatus) -> String {
    let mut text = format!("unit file: {}\n", status.unit_file);
    text.push_str(&format!(
        "installed: {}{}\n",
        yes_no(status.installed),
        if status.installed && !status.current {
            " (written by another paddock or edited: install rewrites it)"
        } else {
            ""
        }
    ));
    text.push_str(&format!("enabled: {}\n", yes_no(status.enabled)));
    text.push_str(&match (status.running, &status.manager_problem) {
        (Some(running), _) => format!("running: {}\n", yes_no(running)),
        (None, Some(problem)) => format!("running: unknown ({problem})\n"),
        (None, None) => "running: unknown\n".to_owned(),
    });
    text.push_str(&format!(
        "runs after logout: {}{}\n",
        yes_no(status.lingering),
        if status.lingering {
            String::new()
        } else {
            format!(" (turn it on with: {})", status.linger_command)
        }
    ));
    text
}

fn render_change(change: &ServiceChange, nothing: &str) -> String {
    let mut text = String::new();
    if change.done.is_empty() {
        text.push_str(nothing);
        text.push('\n');
    }
    for line in &change.done {
        text.push_str(&format!("done: {line}\n"));
    }
    for line in &change.left {
        text.push_str(&format!("for you: {line}\n"));
    }
    text
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn status(host: &Host, json: bool) -> anyhow::Result<ExitCode> {
    let status = host.service_status(this_paddock()?).await?;
    if json {
        println!("{}", serde_json::to_string(&status)?);
    } else {
        print!("{}", render_status(&status));
    }
    Ok(
        if status.installed && status.enabled && status.running == Some(true) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        },
    )
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn install(host: &Host, json: bool) -> anyhow::Result<ExitCode> {
    let change = host.service_install(this_paddock()?).await?;
    if json {
        println!("{}", serde_json::to_string(&change)?);
    } else {
        print!(
            "{}",
            render_change(
                &change,
                "nothing to change: the service is installed and enabled"
            )
        );
        print!("{}", render_status(&change.status));
    }
    Ok(if change.left.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn uninstall(host: &Host, json: bool) -> anyhow::Result<ExitCode> {
    let change = host.service_uninstall(this_paddock()?).await?;
    if json {
        println!("{}", serde_json::to_string(&change)?);
    } else {
        print!(
            "{}",
            render_change(&change, "nothing to remove: the service is not installed")
        );
    }
    Ok(ExitCode::SUCCESS)
}
