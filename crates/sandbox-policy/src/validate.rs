//! The gateway's rules, checked before anything is sent, so a refusal names the field and says
//! why instead of surfacing as a gateway error: paths, hosts, ports, addresses, rule keys,
//! identities, environment entries, labels and names.

use std::collections::BTreeMap;

use openshell_proto::sandbox::{NetworkEndpoint, SandboxPolicy};

use crate::error::PolicyError;
use crate::host::{Cidr, HostRule};

/// At most this many filesystem paths in one policy.
pub const MAX_POLICY_PATHS: usize = 256;
/// At most this many bytes in one filesystem path.
pub const MAX_PATH_BYTES: usize = 4096;
/// At most this many sandbox environment entries.
pub const MAX_ENV_ENTRIES: usize = 128;
/// At most this many bytes of sandbox environment (keys and values).
pub const MAX_ENV_BYTES: usize = 256 * 1024;
/// Sandbox names are DNS-1123 labels of at most this many characters.
pub const MAX_SANDBOX_NAME: usize = 19;

/// Normalises and checks an absolute path: repeated and trailing slashes are dropped; `.` and
/// `..` components, NUL, newlines, relative paths and over-long paths are refused.
pub fn check_absolute_path(field: &str, path: &str) -> Result<String, PolicyError> {
    if !path.starts_with('/') {
        return Err(PolicyError::path(field, path, "must be absolute"));
    }
    if path.contains(['\0', '\n', '\r']) {
        return Err(PolicyError::path(
            field,
            path,
            "contains NUL or a line break",
        ));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(PolicyError::path(
            field,
            path,
            format!("is longer than {MAX_PATH_BYTES} bytes"),
        ));
    }
    let mut normal = String::with_capacity(path.len());
    for part in path.split('/').filter(|part| !part.is_empty()) {
        if part == ".." || part == "." {
            return Err(PolicyError::path(
                field,
                path,
                "must not contain `.` or `..` components",
            ));
        }
        normal.push('/');
        normal.push_str(part);
    }
    if normal.is_empty() {
        normal.push('/');
    }
    Ok(normal)
}

/// `^[A-Za-z_][A-Za-z0-9_]*$`.
pub(crate) fn check_env_key(key: &str) -> Result<(), String> {
    let mut bytes = key.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    if first_ok && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        Ok(())
    } else {
        Err("keys must match ^[A-Za-z_][A-Za-z0-9_]*$".into())
    }
}

/// The sandbox environment: valid keys, no `OPENSHELL_` keys (the gateway owns them), values
/// without NUL or line breaks, at most 128 entries and 256 KiB. Values are never echoed.
pub fn check_environment(env: &BTreeMap<String, String>) -> Result<(), PolicyError> {
    if env.len() > MAX_ENV_ENTRIES {
        return Err(PolicyError::TooManyEnvironmentEntries {
            count: env.len(),
            max: MAX_ENV_ENTRIES,
        });
    }
    let mut bytes = 0;
    for (key, value) in env {
        let invalid = |reason: String| PolicyError::InvalidEnvironment {
            key: key.clone(),
            reason,
        };
        check_env_key(key).map_err(invalid)?;
        if key.starts_with("OPENSHELL_") {
            return Err(invalid(
                "keys starting with OPENSHELL_ belong to the gateway and never reach programs"
                    .into(),
            ));
        }
        if value.contains(['\n', '\r', '\0']) {
            return Err(invalid("the value contains a line break or NUL".into()));
        }
        bytes += key.len() + value.len();
    }
    if bytes > MAX_ENV_BYTES {
        return Err(PolicyError::InvalidEnvironment {
            key: "(all)".into(),
            reason: format!("{bytes} bytes in all, at most {MAX_ENV_BYTES}"),
        });
    }
    Ok(())
}

/// A Kubernetes label: key `[prefix/]name` (name ≤ 63 of alphanumerics, `-`, `_`, `.`, starting
/// and ending alphanumeric; prefix a DNS subdomain ≤ 253), value empty or a valid name.
pub fn check_label(key: &str, value: &str) -> Result<(), PolicyError> {
    let invalid = |reason: &str| PolicyError::InvalidLabel {
        key: key.to_owned(),
        reason: reason.to_owned(),
    };
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        let valid = !prefix.is_empty()
            && prefix.len() <= 253
            && prefix.split('.').all(|label| dns_label_ok(label, 63));
        if !valid {
            return Err(invalid("the key's prefix is not a DNS subdomain"));
        }
    }
    if !label_name_ok(name) {
        return Err(invalid(
            "the key's name must be 1-63 characters of a-z, A-Z, 0-9, `-`, `_`, `.`, \
             starting and ending with a letter or digit",
        ));
    }
    if !value.is_empty() && !label_name_ok(value) {
        return Err(invalid(
            "the value must be at most 63 characters of a-z, A-Z, 0-9, `-`, `_`, `.`, \
             starting and ending with a letter or digit",
        ));
    }
    Ok(())
}

fn label_name_ok(name: &str) -> bool {
    let bytes = name.as_bytes();
    !name.is_empty()
        && name.len() <= 63
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn dns_label_ok(label: &str, max: usize) -> bool {
    let bytes = label.as_bytes();
    !label.is_empty()
        && label.len() <= max
        && bytes
            .first()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && bytes
            .last()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

/// A DNS-1123 label of at most `max` characters (sandbox names: 19, provider names: 63).
pub fn check_dns_label(field: &str, value: &str, max: usize) -> Result<(), PolicyError> {
    if dns_label_ok(value, max) {
        Ok(())
    } else {
        Err(PolicyError::name(
            field,
            value,
            format!(
                "must be a DNS-1123 label: 1-{max} characters of a-z, 0-9 and `-`, \
                 starting and ending with a letter or digit"
            ),
        ))
    }
}

/// `allowed_ips` entries: a valid address or CIDR that neither overlaps loopback (127/8, ::1)
/// nor link-local (169.254/16, fe80::/10) and does not contain the unspecified address.
pub fn check_allowed_ip(field: &str, value: &str) -> Result<Cidr, PolicyError> {
    let invalid = |reason: String| PolicyError::InvalidAllowedIp {
        field: field.to_owned(),
        value: value.to_owned(),
        reason,
    };
    let cidr = Cidr::parse(value).map_err(invalid)?;
    for (forbidden, what) in [
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("::1/128", "loopback"),
        ("fe80::/10", "link-local"),
    ] {
        let forbidden = Cidr::parse(forbidden).map_err(invalid)?;
        if cidr.overlaps(&forbidden) {
            return Err(invalid(format!("overlaps the {what} range {forbidden}")));
        }
    }
    for unspecified in ["0.0.0.0", "::"] {
        if let Ok(address) = unspecified.parse()
            && cidr.contains(address)
        {
            return Err(invalid(format!(
                "contains the unspecified address {unspecified}"
            )));
        }
    }
    Ok(cidr)
}

/// Rule keys: 1-63 characters of letters, digits, `_`, `-`, `.`; never `_provider_…`
/// (the gateway's own rules).
pub fn check_rule_key(key: &str) -> Result<(), PolicyError> {
    let valid = !key.is_empty()
        && key.len() <= 63
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if !valid {
        return Err(PolicyError::name(
            "network_policies key",
            key,
            "must be 1-63 characters of letters, digits, `_`, `-` and `.`",
        ));
    }
    if key.starts_with("_provider_") {
        return Err(PolicyError::name(
            "network_policies key",
            key,
            "must not start with `_provider_` (reserved for the gateway)",
        ));
    }
    Ok(())
}

/// `process.run_as_*`: `sandbox` or a number from 1 to 4294967294.
fn check_identity(field: &str, value: &str) -> Result<(), PolicyError> {
    if value.is_empty() || value == "sandbox" {
        return Ok(());
    }
    match value.parse::<u32>() {
        Ok(1..=4_294_967_294) if !value.starts_with('0') => Ok(()),
        _ => Err(PolicyError::name(
            field,
            value,
            "must be `sandbox` or a number from 1 to 4294967294 (never 0, root)",
        )),
    }
}

/// Checks a whole policy the way the gateway does before accepting it: version, paths, Landlock
/// mode, identities, rule keys, endpoints and binaries.
pub fn validate_policy(policy: &SandboxPolicy) -> Result<(), PolicyError> {
    if policy.version != 1 {
        return Err(PolicyError::name(
            "version",
            &policy.version.to_string(),
            "must be 1",
        ));
    }
    if let Some(filesystem) = &policy.filesystem {
        let count = filesystem.read_only.len() + filesystem.read_write.len();
        if count > MAX_POLICY_PATHS {
            return Err(PolicyError::TooManyPaths {
                count,
                max: MAX_POLICY_PATHS,
            });
        }
        for path in &filesystem.read_only {
            check_absolute_path("filesystem_policy.read_only", path)?;
        }
        for path in &filesystem.read_write {
            if check_absolute_path("filesystem_policy.read_write", path)? == "/" {
                return Err(PolicyError::path(
                    "filesystem_policy.read_write",
                    path,
                    "is the root folder, which may never be writable",
                ));
            }
        }
    }
    if let Some(landlock) = &policy.landlock
        && !matches!(
            landlock.compatibility.as_str(),
            "" | "best_effort" | "hard_requirement"
        )
    {
        return Err(PolicyError::name(
            "landlock.compatibility",
            &landlock.compatibility,
            "must be `best_effort` or `hard_requirement`",
        ));
    }
    if let Some(process) = &policy.process {
        check_identity("process.run_as_user", &process.run_as_user)?;
        check_identity("process.run_as_group", &process.run_as_group)?;
    }
    for (key, rule) in &policy.network_policies {
        check_rule_key(key)?;
        let field = format!("network_policies.{key}");
        if rule.endpoints.is_empty() {
            return Err(PolicyError::name(&field, key, "has no endpoints"));
        }
        for endpoint in &rule.endpoints {
            check_endpoint(&field, endpoint)?;
        }
        if rule.binaries.is_empty() {
            return Err(PolicyError::name(&field, key, "has no binaries"));
        }
        for binary in &rule.binaries {
            if !binary.path.starts_with('/') || binary.path.contains(['\n', '\0']) {
                return Err(PolicyError::path(
                    format!("{field}.binaries"),
                    &binary.path,
                    "must be an absolute path or glob",
                ));
            }
        }
    }
    Ok(())
}

fn check_endpoint(field: &str, endpoint: &NetworkEndpoint) -> Result<(), PolicyError> {
    let ports: Vec<u32> = if endpoint.ports.is_empty() {
        vec![endpoint.port]
    } else {
        endpoint.ports.clone()
    };
    for port in ports {
        if port == 0 || port > u32::from(u16::MAX) {
            return Err(PolicyError::InvalidPort {
                field: format!("{field}.endpoints"),
                value: port.to_string(),
                reason: "must be from 1 to 65535".into(),
            });
        }
    }
    if endpoint.host.is_empty() {
        if endpoint.allowed_ips.is_empty() {
            return Err(PolicyError::host(
                format!("{field}.endpoints"),
                "",
                "is empty; only endpoints with allowed_ips may omit the host",
            ));
        }
    } else {
        // Parsing a host rule applies the gateway's host rules (wildcards, labels, forms).
        HostRule::parse_in(&format!("{field}.endpoints.host"), &endpoint.host)?;
        if endpoint.host.contains('/') || endpoint.host.contains(':') {
            return Err(PolicyError::host(
                format!("{field}.endpoints.host"),
                &endpoint.host,
                "must be a name; put addresses in allowed_ips",
            ));
        }
    }
    for ip in &endpoint.allowed_ips {
        check_allowed_ip(&format!("{field}.endpoints.allowed_ips"), ip)?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
