//! `paddock machine sandbox status` (setup: `setup_cmd`).

use std::process::ExitCode;

use paddock_host::Host;
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
    let keys = host.key_status().await;
    if json {
        // The wall's status with the key store beside it (`key_store`).
        let mut value = serde_json::to_value(&status)?;
        if let Some(object) = value.as_object_mut() {
            object.insert("key_store".to_owned(), serde_json::to_value(&keys)?);
        }
        println!("{value}");
    } else {
        let note = if config.provider_explicit || provider.is_some() {
            String::new()
        } else {
            " [default: no provider is set in the machine config]".to_owned()
        };
        print!("{}", render_status(&status, &note));
        println!("{}", crate::keys_cmd::store_line(&keys));
        if let Some(line) = crate::keys_cmd::configured_key_line(&keys) {
            println!("{line}");
        }
    }
    Ok(if status.ready() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
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
