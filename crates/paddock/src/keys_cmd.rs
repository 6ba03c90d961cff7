//! `paddock keys set|delete|status|test [PROVIDER]`: model keys in the configured key store.
//! The key is read from the terminal with echo off (or from stdin when it is piped) and is
//! never printed; the host tests it against the provider's API before storing it.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;

use anyhow::Context;
use paddock_host::{Host, KeyCheck, KeySaved, KeyStatus, ProviderKey};

/// The provider named on the command line, else the machine config's.
fn provider_or_configured(host: &Host, provider: Option<String>) -> String {
    provider.unwrap_or_else(|| host.config().models.provider)
}

/// Turns the terminal's echo off until dropped (restored even when reading fails).
struct EchoOff<'a> {
    fd: std::io::StdinLock<'a>,
    saved: rustix::termios::Termios,
}

impl<'a> EchoOff<'a> {
    fn new(fd: std::io::StdinLock<'a>) -> anyhow::Result<Self> {
        let saved = rustix::termios::tcgetattr(&fd).context("reading the terminal's settings")?;
        let mut quiet = saved.clone();
        quiet.local_modes.remove(rustix::termios::LocalModes::ECHO);
        // Enter still ends the line, so the user sees one.
        quiet
            .local_modes
            .insert(rustix::termios::LocalModes::ECHONL);
        rustix::termios::tcsetattr(&fd, rustix::termios::OptionalActions::Flush, &quiet)
            .context("turning the terminal's echo off")?;
        Ok(Self { fd, saved })
    }
}

impl Drop for EchoOff<'_> {
    fn drop(&mut self) {
        let _ = rustix::termios::tcsetattr(
            &self.fd,
            rustix::termios::OptionalActions::Flush,
            &self.saved,
        );
    }
}

/// The key: one line typed at the terminal without echo, or all of stdin when it is piped
/// (surrounding whitespace dropped). Never printed.
#[allow(clippy::print_stderr, reason = "the prompt goes to the terminal")]
fn read_key(provider: &str) -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    let mut text = String::new();
    if stdin.is_terminal() {
        eprint!("API key for {provider} (typing is not shown, Enter ends it): ");
        std::io::stderr().flush()?;
        let mut quiet = EchoOff::new(stdin.lock())?;
        quiet.fd.read_line(&mut text).context("reading the key")?;
    } else {
        stdin
            .lock()
            .take(64 * 1024)
            .read_to_string(&mut text)
            .context("reading the key from stdin")?;
    }
    let key = text.trim().to_owned();
    if key.is_empty() {
        anyhow::bail!(
            "no key was given (type it at the prompt, or pipe it: `printf %s \"$KEY\" | paddock \
             keys set {provider}`); nothing was stored"
        );
    }
    Ok(key)
}

fn check_line(check: &KeyCheck) -> String {
    if check.ok {
        format!("tested: {}", check.detail)
    } else {
        format!("NOT TESTED: {}", check.detail)
    }
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn set(
    host: &Host,
    provider: Option<String>,
    check: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let provider = provider_or_configured(host, provider);
    let key = read_key(&provider)?;
    let saved: KeySaved = host.set_model_key(&provider, &key, check).await?;
    if json {
        println!("{}", serde_json::to_string(&saved)?);
        return Ok(ExitCode::SUCCESS);
    }
    match &saved.check {
        Some(check) => println!("{}", check_line(check)),
        None => println!("not tested (--no-check)"),
    }
    println!(
        "stored the {} key in the key store ({})",
        saved.provider, saved.store
    );
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn delete(host: &Host, provider: Option<String>) -> anyhow::Result<ExitCode> {
    let provider = provider_or_configured(host, provider);
    let status = host.key_status().await;
    if host.delete_model_key(&provider).await? {
        println!(
            "deleted the {provider} key from the key store ({})",
            status.description
        );
    } else {
        println!(
            "nothing to delete: the key store ({}) holds no {provider} key",
            status.description
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn test(host: &Host, provider: Option<String>, json: bool) -> anyhow::Result<ExitCode> {
    let provider = provider_or_configured(host, provider);
    let check = host.test_model_key(&provider).await?;
    if json {
        println!("{}", serde_json::to_string(&check)?);
    } else {
        println!("{}", check_line(&check));
    }
    Ok(if check.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn provider_line(key: &ProviderKey) -> String {
    let state = if key.present {
        "key present"
    } else if key.need == "none" {
        "no key (none needed)"
    } else {
        "no key"
    };
    let need = match key.need.as_str() {
        "required" => "key required",
        "optional" => "key optional",
        _ => "no key needed",
    };
    let mut notes = vec![need.to_owned()];
    if key.configured {
        notes.insert(0, "configured".to_owned());
    }
    format!(
        "  {:<12} {:<22} ({})",
        key.provider,
        state,
        notes.join(", ")
    )
}

/// The key store's one line, as `keys status` and `machine sandbox status` print it.
pub fn store_line(status: &KeyStatus) -> String {
    match &status.problem {
        None => format!("key store: {}", status.description),
        Some(problem) => format!("key store: {} UNUSABLE: {problem}", status.description),
    }
}

/// The line for the configured provider's key (for `machine sandbox status`).
pub fn configured_key_line(status: &KeyStatus) -> Option<String> {
    status.providers.iter().find(|p| p.configured).map(|p| {
        let state = match (p.present, p.need.as_str()) {
            (true, _) => "present",
            (false, "required") => "MISSING (paddock keys set stores one)",
            (false, _) => "none (not required)",
        };
        format!("model key ({}): {state}", p.provider)
    })
}

/// Exit code 1 when the store cannot be used here, or when the named provider has no key.
#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn status(host: &Host, provider: Option<String>, json: bool) -> anyhow::Result<ExitCode> {
    let mut status = host.key_status().await;
    if let Some(name) = &provider {
        host.check_key_provider(name)?;
        status.providers.retain(|p| &p.provider == name);
    }
    if json {
        println!("{}", serde_json::to_string(&status)?);
    } else {
        println!("{}", store_line(&status));
        for key in &status.providers {
            println!("{}", provider_line(key));
        }
    }
    let missing = provider.is_some() && status.providers.iter().any(|p| !p.present);
    Ok(if status.usable && !missing {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
