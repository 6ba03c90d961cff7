//! The resolved network allow-list: one list that both walls enforce. OpenShell receives it as
//! `network_policies`; Paddock's local wall asks it about every CONNECT its proxy sees.

use std::collections::BTreeSet;
use std::net::IpAddr;

use crate::credentials::CredentialEntry;
use crate::data::{Companions, NetworkProfile, OpenAddresses};
use crate::error::PolicyError;
use crate::host::{HostPattern, HostRule, NormalHost, normalize_host};
use crate::ip_class::{AddressClass, classify, unmap};
use crate::secrets::SecretSpec;

/// The allow-list's answer about one destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed by the rule with this key (a `network_policies` key, like `profile_strict`).
    Allowed { rule: String },
    /// Refused, with a reason to show the user and the model.
    Denied { reason: String },
}

impl Decision {
    pub fn is_allowed(&self) -> bool {
        matches!(self, Decision::Allowed { .. })
    }
}

/// Where a rule came from; earlier kinds win when two rules name the same host and port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RuleOrigin {
    Secret,
    Credential,
    Extra,
    Profile,
}

/// One destination of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: HostRule,
    /// The user named this exact host, so it may resolve to a private address.
    pub names_private: bool,
}

/// One named rule: its key in `network_policies`, a display name and its destinations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowRule {
    pub key: String,
    pub display: String,
    pub origin: RuleOrigin,
    pub endpoints: Vec<Endpoint>,
}

/// The rule key of the `open` profile's address rule.
pub const OPEN_RULE: &str = "profile_open";

/// Every destination a session's sandbox may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkAllowList {
    profile: String,
    rules: Vec<AllowRule>,
    open: Option<OpenAddresses>,
}

/// A rule key for a name: lower case, characters outside `[a-z0-9_]` become `_`.
pub(crate) fn rule_key(prefix: &str, name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{prefix}_{name}")
}

impl NetworkAllowList {
    /// Resolves a profile, the session's extra hosts, its enabled credential entries and its
    /// secrets (with companion hosts) into rules. A host and port named twice is kept once, in
    /// the first rule by precedence: secrets, credentials, extra hosts, profile.
    pub fn resolve(
        profile: &NetworkProfile,
        extra_hosts: &[HostRule],
        credentials: &[CredentialEntry],
        secrets: &[SecretSpec],
        companions: &Companions,
    ) -> Result<Self, PolicyError> {
        let mut builder = Builder::default();
        for secret in secrets {
            builder.add(
                rule_key("secret", &secret.name),
                format!("secret {}", secret.name),
                RuleOrigin::Secret,
                &secret.hosts,
                secret.hosts_named_by_user,
                // A secret is usable on the hosts it names, not on their companions.
                &Companions::default(),
            );
        }
        for entry in credentials {
            if entry.hosts_from_kubeconfig && entry.hosts.is_empty() {
                return Err(PolicyError::Kubeconfig {
                    reason: format!(
                        "credential entry `{}` takes its hosts from the kubeconfig: \
                         call with_kubeconfig first",
                        entry.name
                    ),
                });
            }
            builder.add(
                rule_key("credential", &entry.name),
                format!("{} credentials", entry.name),
                RuleOrigin::Credential,
                &entry.hosts,
                entry.hosts_named_by_user,
                &Companions::default(),
            );
        }
        builder.add(
            "extra_hosts".to_owned(),
            "hosts added for this session".to_owned(),
            RuleOrigin::Extra,
            extra_hosts,
            true,
            companions,
        );
        builder.add(
            rule_key("profile", &profile.name),
            format!("{} profile", profile.name),
            RuleOrigin::Profile,
            &profile.hosts,
            false,
            companions,
        );
        Ok(Self {
            profile: profile.name.clone(),
            rules: builder.rules,
            open: profile.open.clone(),
        })
    }

    /// The rules in precedence order.
    pub fn rules(&self) -> &[AllowRule] {
        &self.rules
    }

    /// The `open` profile's addresses, when that profile is in use.
    pub fn open_addresses(&self) -> Option<&OpenAddresses> {
        self.open.as_ref()
    }

    /// The profile's name.
    pub fn profile(&self) -> &str {
        &self.profile
    }

    /// Is `host:port` allowed by name? Returns the key of the rule that allows it. IP-literal
    /// hosts get the full address check of [`NetworkAllowList::check_ip`]. A name allowed only
    /// through address rules (the `open` profile, CIDR extra hosts) is allowed here pending
    /// that check, which the proxy must make after resolving the name.
    pub fn check_host(&self, host: &str, port: u16) -> Decision {
        let name = match normalize_host(host) {
            Err(reason) => return denied(format!("host `{host}` is refused: it {reason}")),
            Ok(NormalHost::Ip(ip)) => return self.check_ip(host, port, ip),
            Ok(NormalHost::Name(name)) => name,
        };
        if let Some(endpoint) = self.named(&name, port).next() {
            return Decision::Allowed {
                rule: endpoint.0.key.clone(),
            };
        }
        if let Some(rule) = self.address_rule_for_port(port) {
            return Decision::Allowed { rule };
        }
        self.name_denial(&name, port)
    }

    /// After the proxy resolved `host` to `ip`: refuses loopback, link-local (metadata),
    /// unspecified, multicast and reserved addresses always; private and other non-public
    /// addresses unless a rule names that address, its network, or (user-named) this exact
    /// host; for the `open` profile, addresses outside its public networks.
    pub fn check_ip(&self, host: &str, port: u16, ip: IpAddr) -> Decision {
        let ip = unmap(ip);
        let name = match normalize_host(host) {
            Err(reason) => return denied(format!("host `{host}` is refused: it {reason}")),
            Ok(NormalHost::Ip(literal)) if unmap(literal) != ip => {
                return denied(format!(
                    "`{host}` is an address literal but the connection goes to {ip}"
                ));
            }
            Ok(NormalHost::Ip(_)) => None,
            Ok(NormalHost::Name(name)) => Some(name),
        };
        let class = classify(ip);
        if let AddressClass::AlwaysBlocked(what) = class {
            return denied(format!("{ip} is {what}: always refused"));
        }
        // Rules naming the address or its network allow it, public or not.
        for rule in &self.rules {
            for endpoint in &rule.endpoints {
                if let HostPattern::Addresses(cidr) = &endpoint.host.pattern
                    && endpoint.host.port == port
                    && cidr.contains(ip)
                {
                    return Decision::Allowed {
                        rule: rule.key.clone(),
                    };
                }
            }
        }
        let Some(name) = name else {
            return match class {
                AddressClass::NonPublic(what) => denied(format!(
                    "{ip} is {what}; only a rule naming this address allows it"
                )),
                _ => self.open_check(ip, port).unwrap_or_else(|| {
                    denied(format!(
                        "{ip}:{port} is not on the allow list ({} profile)",
                        self.profile
                    ))
                }),
            };
        };
        let mut named = self.named(&name, port).peekable();
        match class {
            AddressClass::NonPublic(what) => {
                if let Some((rule, _)) = named.find(|(_, endpoint)| {
                    endpoint.names_private && matches!(endpoint.host.pattern, HostPattern::Exact(_))
                }) {
                    return Decision::Allowed {
                        rule: rule.key.clone(),
                    };
                }
                denied(format!(
                    "`{name}` resolved to {ip}, which is {what}; only a rule naming that \
                     address, or a host you added yourself, allows it"
                ))
            }
            _ => {
                if let Some((rule, _)) = named.next() {
                    return Decision::Allowed {
                        rule: rule.key.clone(),
                    };
                }
                match self.open_check(ip, port) {
                    Some(decision) => decision,
                    None => self.name_denial(&name, port),
                }
            }
        }
    }

    /// Rules and endpoints whose name pattern matches `name` on `port`.
    fn named<'a>(
        &'a self,
        name: &'a str,
        port: u16,
    ) -> impl Iterator<Item = (&'a AllowRule, &'a Endpoint)> + 'a {
        self.rules.iter().flat_map(move |rule| {
            rule.endpoints
                .iter()
                .filter(move |e| e.host.port == port && e.host.pattern.matches_name(name))
                .map(move |e| (rule, e))
        })
    }

    fn address_rule_for_port(&self, port: u16) -> Option<String> {
        if self
            .open
            .as_ref()
            .is_some_and(|open| open.ports.contains(&port))
        {
            return Some(OPEN_RULE.to_owned());
        }
        self.rules.iter().find_map(|rule| {
            rule.endpoints
                .iter()
                .any(|e| e.host.port == port && matches!(e.host.pattern, HostPattern::Addresses(_)))
                .then(|| rule.key.clone())
        })
    }

    /// The `open` profile's verdict on a public address (`None` when not in use or port off).
    fn open_check(&self, ip: IpAddr, port: u16) -> Option<Decision> {
        let open = self.open.as_ref()?;
        if !open.ports.contains(&port) {
            return None;
        }
        Some(
            if open.networks.iter().any(|network| network.contains(ip)) {
                Decision::Allowed {
                    rule: OPEN_RULE.to_owned(),
                }
            } else {
                denied(format!(
                    "{ip} is outside the open profile's public IPv4 networks"
                ))
            },
        )
    }

    fn name_denial(&self, name: &str, port: u16) -> Decision {
        let ports: BTreeSet<u16> = self
            .rules
            .iter()
            .flat_map(|rule| &rule.endpoints)
            .filter(|e| e.host.pattern.matches_name(name))
            .map(|e| e.host.port)
            .collect();
        if ports.is_empty() {
            denied(format!(
                "`{name}:{port}` is not on the allow list ({} profile)",
                self.profile
            ))
        } else {
            let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
            denied(format!(
                "`{name}` is allowed on port {} only, not {port}",
                ports.join(", ")
            ))
        }
    }
}

fn denied(reason: String) -> Decision {
    Decision::Denied { reason }
}

#[derive(Default)]
struct Builder {
    rules: Vec<AllowRule>,
    seen: BTreeSet<(HostPattern, u16)>,
}

impl Builder {
    fn add(
        &mut self,
        key: String,
        display: String,
        origin: RuleOrigin,
        hosts: &[HostRule],
        user_named: bool,
        companions: &Companions,
    ) {
        let mut endpoints = Vec::new();
        for host in hosts {
            for (index, expanded) in companions.expand(host).into_iter().enumerate() {
                if self.seen.insert((expanded.pattern.clone(), expanded.port)) {
                    endpoints.push(Endpoint {
                        host: expanded,
                        // Companions come from Paddock's data, not from the user.
                        names_private: user_named && index == 0,
                    });
                }
            }
        }
        if !endpoints.is_empty() {
            self.rules.push(AllowRule {
                key,
                display,
                origin,
                endpoints,
            });
        }
    }
}

#[cfg(test)]
#[path = "allow_list_tests.rs"]
mod tests;
