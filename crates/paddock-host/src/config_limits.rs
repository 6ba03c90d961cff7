//! `[sandbox.limits]`: processes, memory, swap and CPU per local sandbox, and the connections
//! its proxy serves at once. Each key of the user's file overrides the built-in one.

use sandbox_provider::local::proxy::ProxyLimits;
use sandbox_provider::local::resources::{self, Amount, BadAmount, LimitSettings};
use serde::Deserialize;

use super::{ConfigError, error, pick};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLimits {
    processes: Option<RawAmount>,
    memory: Option<RawAmount>,
    swap: Option<RawAmount>,
    cpus: Option<RawAmount>,
    connections: Option<RawAmount>,
}

/// A number or a string (`2048`, `1.5`, `"50%"`, `"4GiB"`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum RawAmount {
    Integer(i64),
    Float(f64),
    Text(String),
}

impl RawAmount {
    fn text(&self) -> String {
        match self {
            RawAmount::Integer(n) => n.to_string(),
            RawAmount::Float(x) => x.to_string(),
            RawAmount::Text(t) => t.clone(),
        }
    }
}

/// The limits of the merged configuration.
pub(super) fn limits(
    user: RawLimits,
    defaults: RawLimits,
    user_file: &str,
) -> Result<(LimitSettings, ProxyLimits), ConfigError> {
    let built_in = LimitSettings::default();
    let setting = |user: Option<RawAmount>,
                   default: Option<RawAmount>,
                   key: &str,
                   parse: fn(&str) -> Result<Amount, BadAmount>,
                   fallback: Amount|
     -> Result<Amount, ConfigError> {
        match pick(user, default, user_file) {
            Some(layer) => parse(&layer.value.text())
                .map_err(|e| error(&layer.file, &format!("sandbox.limits.{key}"), e.to_string())),
            None => Ok(fallback),
        }
    };
    let settings = LimitSettings {
        processes: setting(
            user.processes,
            defaults.processes,
            "processes",
            resources::settings::parse_processes,
            built_in.processes,
        )?,
        memory: setting(
            user.memory,
            defaults.memory,
            "memory",
            resources::settings::parse_bytes,
            built_in.memory,
        )?,
        swap: setting(
            user.swap,
            defaults.swap,
            "swap",
            resources::settings::parse_bytes,
            built_in.swap,
        )?,
        cpus: setting(
            user.cpus,
            defaults.cpus,
            "cpus",
            resources::settings::parse_cpus,
            built_in.cpus,
        )?,
    };
    let proxy = match pick(user.connections, defaults.connections, user_file) {
        Some(layer) => match &layer.value {
            RawAmount::Integer(n) if (1..=65_536).contains(n) => ProxyLimits {
                connections: *n as usize,
            },
            other => {
                return Err(error(
                    &layer.file,
                    "sandbox.limits.connections",
                    format!(
                        "`{}` is not a number of connections from 1 to 65536",
                        other.text()
                    ),
                ));
            }
        },
        None => ProxyLimits::default(),
    };
    Ok((settings, proxy))
}
