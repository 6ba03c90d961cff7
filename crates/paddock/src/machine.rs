//! `paddock machine sandbox status|setup`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use protocol::{MachineSandboxStatus, ProviderKind};

use paddock::config::MachineConfig;
use paddock::host;
use paddock::paths::Paths;

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
    paths: &Paths,
    config: &MachineConfig,
    provider: Option<ProviderKind>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let kind = provider.unwrap_or(config.provider);
    let status = host::provider(kind, config, paths, &host::Helpers::resolve(config))?
        .status()
        .await;
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

/// The user's config text with `[sandbox] provider` set to `kind`, keeping everything else.
pub fn config_with_provider(current: &str, kind: ProviderKind) -> anyhow::Result<String> {
    let mut table: toml::Table =
        toml::from_str(current).context("the current config is not valid TOML")?;
    let sandbox = table
        .entry("sandbox")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let Some(sandbox) = sandbox.as_table_mut() else {
        bail!("`sandbox` in the current config is not a table");
    };
    sandbox.insert(
        "provider".into(),
        toml::Value::String(kind.as_str().to_owned()),
    );
    Ok(toml::to_string(&table)?)
}

/// Writes `text` to `path` atomically (temporary file, then rename), keeping a backup of the
/// old file beside it.
fn write_config(path: &Path, text: &str) -> anyhow::Result<Option<std::path::PathBuf>> {
    let dir = path.parent().context("the config path has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let backup = if path.exists() {
        let backup = path.with_extension("toml.bak");
        std::fs::copy(path, &backup)
            .with_context(|| format!("backing up {} to {}", path.display(), backup.display()))?;
        Some(backup)
    } else {
        None
    };
    let temporary = path.with_extension("toml.tmp");
    std::fs::write(&temporary, text).with_context(|| format!("writing {}", temporary.display()))?;
    std::fs::rename(&temporary, path).with_context(|| format!("replacing {}", path.display()))?;
    Ok(backup)
}

#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the CLI's output is its interface"
)]
pub async fn setup(
    paths: &Paths,
    config: &MachineConfig,
    provider: ProviderKind,
    assume_yes: bool,
    input: &mut dyn BufRead,
) -> anyhow::Result<ExitCode> {
    let path = paths.config_file();
    let current = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let status = host::provider(provider, config, paths, &host::Helpers::resolve(config))?
        .status()
        .await;
    print!("{}", render_status(&status, ""));
    if config.provider == provider && config.provider_explicit {
        println!(
            "nothing to change: {} already sets provider = \"{}\"",
            path.display(),
            provider.as_str()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let updated = config_with_provider(&current, provider)?;
    // Refuse to write a config that would not load.
    MachineConfig::from_texts(Some((&updated, &path)))
        .map_err(|e| anyhow::anyhow!("the change would make the config invalid: {e}"))?;
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
    let backup = write_config(&path, &updated)?;
    println!("wrote {}", path.display());
    if let Some(backup) = backup {
        println!("the previous version is in {}", backup.display());
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
    fn setting_the_provider_keeps_other_keys() {
        let text = "[sandbox]\nnetwork_profile = \"open\"\n[approvals]\nmode = \"auto-edit\"\n";
        let updated = config_with_provider(text, ProviderKind::Direct).unwrap();
        let config = MachineConfig::from_texts(Some((&updated, Path::new("/tmp/x.toml")))).unwrap();
        assert_eq!(config.provider, ProviderKind::Direct);
        assert!(config.provider_explicit);
        assert_eq!(config.network_profile, protocol::NetworkProfileName::Open);
        assert_eq!(config.approval_mode, protocol::ApprovalMode::AutoEdit);
        let from_empty = config_with_provider("", ProviderKind::Local).unwrap();
        assert_eq!(from_empty.trim(), "[sandbox]\nprovider = \"local\"");
    }

    #[test]
    fn a_config_that_is_not_toml_is_refused() {
        assert!(config_with_provider("[sandbox", ProviderKind::Local).is_err());
        assert!(config_with_provider("sandbox = 3", ProviderKind::Local).is_err());
    }
}
