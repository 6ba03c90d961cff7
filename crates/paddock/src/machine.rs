//! `paddock machine sandbox status|setup`.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use paddock_host::{Host, SettingValue};
use protocol::{MachineSandboxStatus, ProviderKind};

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
