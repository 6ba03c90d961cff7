//! `paddock connectors list|add|edit|remove|enable|disable|test|tools`: the machine's connectors
//! through the host. `add` and `edit` write the machine config (keeping its comments); a token
//! is read from stdin (`--token-stdin`) into the key store, never from an argument.

use std::collections::BTreeMap;
use std::io::Read;
use std::process::ExitCode;

use anyhow::{Context, bail};
use paddock_host::config::ConnectorConfig;
use paddock_host::{ConnectorInfo, ConnectorToolInfo, Host};

/// What `add` and `edit` may set.
#[derive(Debug, Default, clap::Args)]
pub struct EntryArgs {
    /// `stdio` (a child process) or `streamable-http` (an HTTP endpoint).
    #[arg(long)]
    pub transport: Option<String>,
    /// stdio: the program to start.
    #[arg(long)]
    pub command: Option<String>,
    /// stdio: an argument (repeat for more; replaces the list).
    #[arg(long = "arg")]
    pub args: Vec<String>,
    /// stdio: NAME=VALUE for the child's environment (`{secret}` is the token).
    #[arg(long = "env")]
    pub env: Vec<String>,
    /// streamable-http: the endpoint.
    #[arg(long)]
    pub url: Option<String>,
    /// streamable-http: NAME=VALUE sent with every request (`{secret}` is the token).
    #[arg(long = "header")]
    pub headers: Vec<String>,
    /// TOOL=read|write|destructive (`*` for every tool).
    #[arg(long = "risk")]
    pub risk: Vec<String>,
    /// Read the connector's token from stdin into the key store.
    #[arg(long)]
    pub token_stdin: bool,
}

fn pairs(flag: &str, items: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    items
        .iter()
        .map(|item| {
            item.split_once('=')
                .map(|(k, v)| (k.trim().to_owned(), v.to_owned()))
                .with_context(|| {
                    format!(
                        "--{flag} `{}` is not NAME=VALUE",
                        item.split('=').next().unwrap_or_default()
                    )
                })
        })
        .collect()
}

fn apply(mut config: ConnectorConfig, args: &EntryArgs) -> anyhow::Result<ConnectorConfig> {
    if let Some(transport) = &args.transport {
        config.transport = serde_json::from_value(serde_json::Value::String(transport.clone()))
            .map_err(|_| {
                anyhow::anyhow!("--transport `{transport}` is not one of: stdio, streamable-http")
            })?;
    }
    if args.command.is_some() {
        config.command.clone_from(&args.command);
    }
    if !args.args.is_empty() {
        config.args.clone_from(&args.args);
    }
    if !args.env.is_empty() {
        config.env = pairs("env", &args.env)?;
    }
    if args.url.is_some() {
        config.url.clone_from(&args.url);
    }
    if !args.headers.is_empty() {
        config.headers = pairs("header", &args.headers)?;
    }
    if !args.risk.is_empty() {
        config.risk = pairs("risk", &args.risk)?
            .into_iter()
            .map(|(tool, risk)| {
                serde_json::from_value(serde_json::Value::String(risk.clone()))
                    .map(|r| (tool.clone(), r))
                    .map_err(|_| {
                        anyhow::anyhow!(
                            "--risk {tool}=`{risk}` is not one of: read, write, destructive"
                        )
                    })
            })
            .collect::<anyhow::Result<_>>()?;
    }
    Ok(config)
}

fn token(args: &EntryArgs) -> anyhow::Result<Option<String>> {
    if !args.token_stdin {
        return Ok(None);
    }
    let mut token = String::new();
    std::io::stdin()
        .read_to_string(&mut token)
        .context("reading the token from stdin")?;
    let token = token.trim().to_owned();
    if token.is_empty() {
        bail!("--token-stdin: stdin was empty");
    }
    Ok(Some(token))
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
fn print_info(info: &ConnectorInfo) {
    let reason = info
        .reason
        .as_deref()
        .map(|r| format!(" ({r})"))
        .unwrap_or_default();
    // The count is of the last listing: a server not started yet has listed nothing.
    let tools = if info.tools == 0 && info.status != "running" {
        "tools not listed yet".to_owned()
    } else {
        format!("{} tools", info.tools)
    };
    println!(
        "{}  {}  {}{}  {tools}  {}",
        info.name, info.transport, info.status, reason, info.target
    );
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn list(host: &Host, json: bool) -> anyhow::Result<ExitCode> {
    let listed = host.connectors();
    if json {
        println!("{}", serde_json::to_string(&listed)?);
    } else if listed.is_empty() {
        println!("no connectors (add one with `paddock connectors add NAME --transport …`)");
    }
    if !json {
        listed.iter().for_each(print_info);
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn add(host: &Host, name: &str, args: &EntryArgs) -> anyhow::Result<ExitCode> {
    if host.connector(name).is_ok() {
        bail!("connector `{name}` exists; change it with `paddock connectors edit {name} …`");
    }
    let Some(transport) = &args.transport else {
        bail!("--transport is required: stdio or streamable-http");
    };
    let base: ConnectorConfig = serde_json::from_value(serde_json::json!({
        "name": name,
        "transport": transport,
    }))
    .map_err(|_| {
        anyhow::anyhow!("--transport `{transport}` is not one of: stdio, streamable-http")
    })?;
    let config = apply(base, args)?;
    let info = host.put_connector(config, token(args)?).await?;
    print_info(&info);
    Ok(ExitCode::SUCCESS)
}

pub async fn edit(host: &Host, name: &str, args: &EntryArgs) -> anyhow::Result<ExitCode> {
    let current = host
        .config()
        .connectors
        .into_iter()
        .find(|c| c.name == name)
        .with_context(|| format!("no connector `{name}` (see `paddock connectors list`)"))?;
    let config = apply(current, args)?;
    let info = host.put_connector(config, token(args)?).await?;
    print_info(&info);
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn remove(host: &Host, name: &str) -> anyhow::Result<ExitCode> {
    let token = host.remove_connector(name).await?;
    println!(
        "removed connector `{name}` from the machine config{}",
        if token {
            "; its token was deleted from the key store"
        } else {
            ""
        }
    );
    Ok(ExitCode::SUCCESS)
}

pub async fn set_enabled(host: &Host, name: &str, enabled: bool) -> anyhow::Result<ExitCode> {
    let info = host.set_connector_enabled(name, enabled).await?;
    print_info(&info);
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
fn print_tools(tools: &[ConnectorToolInfo]) {
    for tool in tools {
        let offered = match (&tool.model_name, &tool.not_offered) {
            (Some(name), _) => name.clone(),
            (None, Some(why)) => format!("not offered: {why}"),
            (None, None) => "not offered".to_owned(),
        };
        println!(
            "{}  risk {} (claims {})  {}  {}",
            tool.name, tool.risk, tool.claimed_risk, offered, tool.description
        );
    }
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn test(host: &Host, name: &str, json: bool) -> anyhow::Result<ExitCode> {
    let report = host.test_connector(name).await?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!(
            "{}: {}",
            if report.ok { "ok" } else { "failed" },
            report.detail
        );
        print_tools(&report.tools);
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[allow(clippy::print_stdout, reason = "the CLI's output is its interface")]
pub async fn tools(host: &Host, name: &str, json: bool) -> anyhow::Result<ExitCode> {
    let tools = host.connector_tools(name).await?;
    if json {
        println!("{}", serde_json::to_string(&tools)?);
    } else {
        print_tools(&tools);
    }
    host.connector_set().shutdown().await;
    Ok(ExitCode::SUCCESS)
}
