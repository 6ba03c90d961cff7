//! `paddock machine sandbox status|setup`.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use paddock_host::{Host, SettingValue};
use protocol::{MachineSandboxStatus, ProtectedKind, ProtectedScope, ProviderKind};

/// The status as people read it.
pub fn render_status(status: &MachineSandboxStatus, config_note: &str) -> String {
    let mut text = format!(
        "provider: {} (enforcement: {}){config_note}\n",
        status.provider.as_str(),
        status.enforcement.as_str()
    );
    for check in &status.checks {
        text.push_str(&format!(
            "  [{}] {}: {}\n",
            if check.ok { "ok" } else { "FAIL" },
            check.name,
            check.detail
        ));
        if let (false, Some(fix)) = (check.ok, &check.fix) {
            text.push_str(&format!("        fix: {fix}\n"));
        }
    }
    text.push_str(if status.ready() {
        "ready: sessions can start\n"
    } else {
        "NOT READY: sessions are refused until the failed checks are fixed\n"
    });
    if !status.protected_paths.is_empty() {
        text.push_str(
            "protected inside read-write folders (read-only in the sandbox; created ones are \
             moved to quarantine; writes ask):\n",
        );
        for entry in &status.protected_paths {
            let path = match entry.scope {
                ProtectedScope::Folder => entry.path.clone(),
                ProtectedScope::GitDir => format!("<git dir>/{}", entry.path),
                ProtectedScope::HooksPath => "<core.hooksPath folder>".to_owned(),
            };
            text.push_str(&format!(
                "  [{}] {path}{}: {}\n",
                entry.group,
                if entry.kind == ProtectedKind::Folder {
                    "/"
                } else {
                    ""
                },
                entry.reason
            ));
        }
    }
    text
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn status(
    host: &Host,
    provider: Option<ProviderKind>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let config = host.config();
    let status = host.sandbox_status(provider).await?;
    if json {
        println!("{}", serde_json::to_string(&status)?);
    } else {
        let note = if config.provider_explicit || provider.is_some() {
            String::new()
        } else {
            " [default: no provider is set in the machine config]".to_owned()
        };
        print!("{}", render_status(&status, &note));
    }
    Ok(if status.ready() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
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
    input: &mut dyn BufRead,
) -> anyhow::Result<ExitCode> {
    let config = host.config();
    let path = host.paths().config_file();
    let status = host.sandbox_status(Some(provider)).await?;
    print!("{}", render_status(&status, ""));
    if config.provider == provider && config.provider_explicit {
        println!(
            "nothing to change: {} already sets provider = \"{}\"",
            path.display(),
            provider.as_str()
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("Paddock would make this change (and nothing else; it never runs sudo):");
    println!(
        "  {}: set [sandbox] provider = \"{}\" (was: {}{})",
        path.display(),
        provider.as_str(),
        config.provider.as_str(),
        if config.provider_explicit {
            ""
        } else {
            ", the default"
        }
    );
    if provider == ProviderKind::Direct {
        println!("  WARNING: {}", sandbox_provider::direct::DIRECT_WARNING);
    }
    if !assume_yes {
        if !std::io::stdin().is_terminal() {
            eprintln!("not changed: stdin is not a terminal; rerun with --yes to apply");
            return Ok(ExitCode::FAILURE);
        }
        print!("Apply it? [y/N]: ");
        std::io::stdout().flush()?;
        let mut answer = String::new();
        input.read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "yes" | "Y") {
            println!("not changed");
            return Ok(ExitCode::FAILURE);
        }
    }
    let had_file = path.exists();
    // Validated as a whole and written back keeping the file's comments and order.
    host.update_settings(vec![(
        "sandbox.provider".to_owned(),
        SettingValue::Text(provider.as_str().to_owned()),
    )])
    .await?;
    println!("wrote {}", path.display());
    if had_file {
        println!(
            "the previous version is in {}",
            path.with_extension("toml.bak").display()
        );
    }
    if !status.ready() {
        println!(
            "the {} wall is not ready yet; fix the failed checks above",
            provider.as_str()
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_lists_what_is_protected_and_why() {
        let mut checks = Vec::new();
        let status = MachineSandboxStatus {
            provider: ProviderKind::Local,
            enforcement: protocol::EnforcementLevel::Local,
            protected_paths: sandbox_provider::protected::listed(&mut checks),
            checks,
        };
        assert!(status.ready(), "the shipped list loads");
        let text = render_status(&status, "");
        for line in [
            "[git] <git dir>/hooks/: git runs these scripts",
            "[git] <core.hooksPath folder>/",
            "[shell] .bashrc: bash runs it",
            "[editor] .vscode/: VS Code runs",
            "[agent] .mcp.json: ",
        ] {
            assert!(text.contains(line), "`{line}` in:\n{text}");
        }
        let json = serde_json::to_value(&status).unwrap();
        assert!(json["protected_paths"].as_array().unwrap().len() > 30);
    }
}
