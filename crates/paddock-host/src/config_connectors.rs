//! `[[connectors]]` and `[web_fetch]` of the machine config. Connectors are the machine's
//! alone: the built-in defaults define none, and a project's files are never read for them
//! (see [`crate::project`]).

use paddock_connectors::config::{ConnectorConfig, validate_all};
use serde::Deserialize;

use super::{ConfigError, Layered, check_host, error, pick};

fn value<T>(layer: Option<Layered<T>>) -> Option<T> {
    layer.map(|l| l.value)
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWebFetch {
    enabled: Option<bool>,
    extra_hosts: Option<Vec<String>>,
    local_ports: Option<Vec<u16>>,
    max_bytes: Option<usize>,
    timeout_secs: Option<u64>,
}

/// The built-in `web_fetch` tool's settings (`[web_fetch]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebFetchSettings {
    /// Whether sessions are offered `web_fetch` (each call still asks).
    pub enabled: bool,
    /// Hosts it may fetch beyond the session's network profile and extra hosts.
    pub extra_hosts: Vec<String>,
    /// Loopback ports it may reach (documentation served on this machine), when the host
    /// name is allowed.
    pub local_ports: Vec<u16>,
    /// Largest body read, in bytes.
    pub max_bytes: usize,
    /// The whole fetch's time limit, in seconds.
    pub timeout_secs: u64,
}

/// Checks `[[connectors]]` (user file only) and merges `[web_fetch]`.
pub(super) fn connectors(
    user: Option<Vec<ConnectorConfig>>,
    user_file: &str,
) -> Result<Vec<ConnectorConfig>, ConfigError> {
    let connectors = user.unwrap_or_default();
    validate_all(&connectors).map_err(|e| error(user_file, &e.field, e.problem))?;
    Ok(connectors)
}

pub(super) fn web_fetch(
    user: Option<RawWebFetch>,
    defaults: Option<RawWebFetch>,
    user_file: &str,
) -> Result<WebFetchSettings, ConfigError> {
    let user = user.unwrap_or_default();
    let defaults = defaults.unwrap_or_default();
    let hosts = pick(user.extra_hosts, defaults.extra_hosts, user_file);
    let extra_hosts = match hosts {
        Some(layer) => {
            for host in &layer.value {
                check_host(host).map_err(|p| error(&layer.file, "web_fetch.extra_hosts", p))?;
            }
            layer.value
        }
        None => Vec::new(),
    };
    let max_bytes = pick(user.max_bytes, defaults.max_bytes, user_file);
    if let Some(layer) = &max_bytes
        && !(1024..=64 * 1024 * 1024).contains(&layer.value)
    {
        return Err(error(
            &layer.file,
            "web_fetch.max_bytes",
            "must be between 1024 and 67108864 (64 MiB)",
        ));
    }
    let timeout = pick(user.timeout_secs, defaults.timeout_secs, user_file);
    if let Some(layer) = &timeout
        && !(1..=600).contains(&layer.value)
    {
        return Err(error(
            &layer.file,
            "web_fetch.timeout_secs",
            "must be between 1 and 600",
        ));
    }
    Ok(WebFetchSettings {
        enabled: value(pick(user.enabled, defaults.enabled, user_file)).unwrap_or(true),
        extra_hosts,
        local_ports: value(pick(user.local_ports, defaults.local_ports, user_file))
            .unwrap_or_default(),
        max_bytes: max_bytes.map_or(2 * 1024 * 1024, |l| l.value),
        timeout_secs: timeout.map_or(20, |l| l.value),
    })
}
