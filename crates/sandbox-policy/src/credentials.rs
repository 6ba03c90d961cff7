//! Credential-share entries: which of the user's files a session may take into its private
//! home, which hosts they add to the allow-list, and the environment that points tools at them.
//! The copying itself is the sandbox provider's job; this module only describes it.

use std::collections::BTreeMap;

use crate::error::PolicyError;
use crate::host::{Cidr, HostPattern, HostRule, NormalHost, Transport, normalize_host};
use crate::ip_class::{AddressClass, classify};

/// The placeholder for the private home in an entry's environment values.
pub const HOME_PLACEHOLDER: &str = "{home}";

/// One enabled credential-share entry (built-in `ssh`, `gh`, `aws`, `kube`, or a custom one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialEntry {
    /// `ssh`, `gh`, ... or the custom entry's name (`[a-z][a-z0-9-]*`, at most 32 characters).
    pub name: String,
    pub description: String,
    /// The folder or file to copy, relative to the user's home (`.ssh`, `.config/gh`).
    pub source: String,
    /// File-name globs to copy from `source` (empty = everything).
    pub include: Vec<String>,
    /// File-name globs never copied.
    pub exclude: Vec<String>,
    /// Globs copied only when the user opted in (`aws`: the `credentials` file).
    pub optional: Vec<String>,
    /// Whether the user opted in to the optional files.
    pub include_optional: bool,
    /// Hosts the entry's tools need; added to the allow-list.
    pub hosts: Vec<HostRule>,
    /// True when the user named these hosts (custom entries, kubeconfig servers): a name the
    /// user wrote may resolve to a private address; a host from Paddock's data may not.
    pub hosts_named_by_user: bool,
    /// `kube`: the hosts come from the kubeconfig (see [`CredentialEntry::with_kubeconfig`]).
    pub hosts_from_kubeconfig: bool,
    /// Environment for the sandbox; values may hold [`HOME_PLACEHOLDER`].
    pub env: BTreeMap<String, String>,
}

impl CredentialEntry {
    /// A user-defined entry: `name`, a path under the home folder, and the hosts it needs.
    pub fn custom(name: &str, source: &str, hosts: &[&str]) -> Result<Self, PolicyError> {
        check_entry_name(name)?;
        let field = format!("credential `{name}`");
        let hosts = hosts
            .iter()
            .map(|host| HostRule::parse_in(&format!("{field} hosts"), host))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            name: name.to_owned(),
            description: format!("custom entry `{name}`"),
            source: check_home_relative(&format!("{field} source"), source)?,
            include: Vec::new(),
            exclude: Vec::new(),
            optional: Vec::new(),
            include_optional: false,
            hosts,
            hosts_named_by_user: true,
            hosts_from_kubeconfig: false,
            env: BTreeMap::new(),
        })
    }

    /// Opts in to the entry's optional files (for `aws`, the `credentials` file).
    pub fn with_optional_files(mut self) -> Self {
        self.include_optional = true;
        self
    }

    /// Adds the reachable API servers named in `kubeconfig_text` as hosts.
    /// Servers a sandbox can never reach (loopback, link-local) are left out; see
    /// [`kubeconfig_servers`] to show them to the user.
    pub fn with_kubeconfig(mut self, kubeconfig_text: &str) -> Result<Self, PolicyError> {
        let servers = kubeconfig_servers(kubeconfig_text)?;
        self.hosts.extend(servers.reachable);
        self.hosts_named_by_user = true;
        Ok(self)
    }

    /// The globs the provider copies: `include` (empty = everything) plus `optional` when
    /// opted in.
    pub fn files_to_copy(&self) -> Vec<String> {
        let mut files = self.include.clone();
        if self.include_optional {
            files.extend(self.optional.iter().cloned());
        }
        files
    }

    /// The entry's environment with `{home}` replaced by the private home's path.
    pub fn environment(&self, private_home: &str) -> BTreeMap<String, String> {
        self.env
            .iter()
            .map(|(key, value)| (key.clone(), value.replace(HOME_PLACEHOLDER, private_home)))
            .collect()
    }
}

/// Entry names: `[a-z][a-z0-9-]*`, at most 32 characters (they become rule keys).
pub(crate) fn check_entry_name(name: &str) -> Result<(), PolicyError> {
    let valid = !name.is_empty()
        && name.len() <= 32
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if valid {
        Ok(())
    } else {
        Err(PolicyError::name(
            "credential entry name",
            name,
            "must start with a letter and use only a-z, 0-9 and `-` (at most 32 characters)",
        ))
    }
}

/// A path under the home folder: relative, no `..`, no empty or `.` components.
pub(crate) fn check_home_relative(field: &str, path: &str) -> Result<String, PolicyError> {
    if path.is_empty() || path.starts_with('/') || path.starts_with('~') {
        return Err(PolicyError::path(
            field,
            path,
            "must be a path relative to the home folder (like `.config/tool`)",
        ));
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return Err(PolicyError::path(
            field,
            path,
            "must not contain `..`, `.` or empty components",
        ));
    }
    if path.contains(['\n', '\0']) {
        return Err(PolicyError::path(field, path, "contains a newline or NUL"));
    }
    Ok(trimmed.to_owned())
}

/// The API servers a kubeconfig names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KubeServers {
    /// Servers a sandbox may be allowed to reach, as host rules.
    pub reachable: Vec<HostRule>,
    /// Servers no sandbox can reach (loopback, link-local), with the reason.
    pub unreachable: Vec<(String, String)>,
}

/// Extracts the `server:` URLs of a kubeconfig's clusters (`clusters[].cluster.server`).
/// Pure: takes the file's text. `https` defaults to port 443 and `http` to 80.
pub fn kubeconfig_servers(kubeconfig_text: &str) -> Result<KubeServers, PolicyError> {
    let config: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(kubeconfig_text).map_err(|error| PolicyError::Kubeconfig {
            reason: format!("not valid YAML: {error}"),
        })?;
    let mut servers = KubeServers::default();
    let clusters = match config.get("clusters") {
        None | Some(serde_yaml_ng::Value::Null) => return Ok(servers),
        Some(serde_yaml_ng::Value::Sequence(clusters)) => clusters,
        Some(_) => {
            return Err(PolicyError::Kubeconfig {
                reason: "`clusters` is not a list".into(),
            });
        }
    };
    for cluster in clusters {
        let Some(server) = cluster.get("cluster").and_then(|c| c.get("server")) else {
            continue;
        };
        let url = server.as_str().ok_or_else(|| PolicyError::Kubeconfig {
            reason: "a cluster's `server` is not a string".into(),
        })?;
        let rule = server_rule(url)?;
        if servers.reachable.contains(&rule) {
            continue;
        }
        match &rule.pattern {
            HostPattern::Addresses(cidr) => match classify(cidr.address()) {
                AddressClass::AlwaysBlocked(why) => {
                    servers
                        .unreachable
                        .push((url.to_owned(), format!("{why}: a sandbox never reaches it")));
                }
                _ => servers.reachable.push(rule),
            },
            _ => servers.reachable.push(rule),
        }
    }
    Ok(servers)
}

fn server_rule(url: &str) -> Result<HostRule, PolicyError> {
    let bad = |reason: &str| PolicyError::Kubeconfig {
        reason: format!("server `{url}`: {reason}"),
    };
    let (rest, default_port) = if let Some(rest) = url.strip_prefix("https://") {
        (rest, 443)
    } else if let Some(rest) = url.strip_prefix("http://") {
        (rest, 80)
    } else {
        return Err(bad("must start with https:// or http://"));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    if authority.contains('@') {
        return Err(bad("must not carry user information"));
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(bracketed) => {
            let (inner, after) = bracketed
                .split_once(']')
                .ok_or_else(|| bad("has `[` without `]`"))?;
            (format!("[{inner}]"), after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host.to_owned(), Some(port)),
            None => (authority.to_owned(), None),
        },
    };
    let port = match port {
        None => default_port,
        Some(port) => port
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| bad("has an invalid port"))?,
    };
    let pattern = match normalize_host(&host).map_err(|reason| bad(&reason))? {
        NormalHost::Name(name) => HostPattern::Exact(name),
        NormalHost::Ip(ip) => {
            HostPattern::Addresses(Cidr::parse(&ip.to_string()).map_err(|reason| bad(&reason))?)
        }
    };
    Ok(HostRule {
        pattern,
        port,
        transport: Transport::Proxy,
    })
}

#[cfg(test)]
#[path = "credentials_tests.rs"]
mod tests;
