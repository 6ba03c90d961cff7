//! What the proxy asks before it opens a connection: the session's allow-list, behind a small
//! trait so the proxy does not depend on how the list was rendered.

use std::fmt::Debug;
use std::net::IpAddr;

/// The allow-list's answer about one destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed by the rule with this name.
    Allowed { rule: String },
    /// Refused, with a reason to show the user and the model.
    Denied { reason: String },
}

/// A session's network allow-list as the proxy uses it.
pub trait EgressPolicy: Send + Sync + Debug {
    /// The profile's name (`strict`, `standard`, `open`), for refusals.
    fn profile(&self) -> String;
    /// Is `host:port` allowed by name (before resolving)?
    fn check_host(&self, host: &str, port: u16) -> Decision;
    /// After the proxy resolved `host` to `ip`: is the address allowed? Loopback, link-local,
    /// private and other non-public addresses must be refused unless a rule names them.
    fn check_ip(&self, host: &str, port: u16, ip: IpAddr) -> Decision;
    /// The rules, one per line, for the wall's configuration hash.
    fn describe(&self) -> String;
}

/// One destination a rule names by address: `host:port` may connect to exactly `ip`, whatever
/// class of address it is. This is how a session reaches a service on the host's loopback or
/// in a private network, and how tests map `allowed.test` to a loopback server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplicitAddress {
    pub host: String,
    pub port: u16,
    pub ip: IpAddr,
}

/// A policy plus rules that name addresses explicitly; those are checked first, the rest is
/// the inner policy's.
#[derive(Debug)]
pub struct WithExplicitAddresses<P> {
    pub inner: P,
    pub addresses: Vec<ExplicitAddress>,
}

impl<P: EgressPolicy> WithExplicitAddresses<P> {
    fn rule_for(&self, host: &str, port: u16) -> Option<&ExplicitAddress> {
        self.addresses
            .iter()
            .find(|a| a.port == port && a.host.eq_ignore_ascii_case(host))
    }
}

impl<P: EgressPolicy> EgressPolicy for WithExplicitAddresses<P> {
    fn profile(&self) -> String {
        self.inner.profile()
    }

    fn check_host(&self, host: &str, port: u16) -> Decision {
        match self.rule_for(host, port) {
            Some(a) => Decision::Allowed {
                rule: format!("address:{}:{}={}", a.host, a.port, a.ip),
            },
            None => self.inner.check_host(host, port),
        }
    }

    fn check_ip(&self, host: &str, port: u16, ip: IpAddr) -> Decision {
        match self.rule_for(host, port) {
            Some(a) if a.ip == ip => Decision::Allowed {
                rule: format!("address:{}:{}={}", a.host, a.port, a.ip),
            },
            Some(a) => Decision::Denied {
                reason: format!(
                    "`{host}` resolved to {ip}, but its rule names only {}",
                    a.ip
                ),
            },
            None => self.inner.check_ip(host, port, ip),
        }
    }

    fn describe(&self) -> String {
        let mut lines = vec![self.inner.describe()];
        lines.extend(
            self.addresses
                .iter()
                .map(|a| format!("address {}:{} = {}", a.host, a.port, a.ip)),
        );
        lines.join("\n")
    }
}
