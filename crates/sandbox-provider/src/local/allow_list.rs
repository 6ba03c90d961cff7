//! The session's allow-list from `sandbox-policy` (profiles and companions from `config/`, the
//! session's extra hosts, its enabled credential entries), as the proxy's [`EgressPolicy`].

use std::net::IpAddr;
use std::sync::Arc;

use sandbox_policy::{CredentialEntry, HostRule, NetworkAllowList, SandboxData};

use crate::local::proxy::{Decision, EgressPolicy, ExplicitAddress, WithExplicitAddresses};
use crate::sandbox::SandboxRequest;

impl EgressPolicy for NetworkAllowList {
    fn profile(&self) -> String {
        NetworkAllowList::profile(self).to_owned()
    }

    fn check_host(&self, host: &str, port: u16) -> Decision {
        convert(NetworkAllowList::check_host(self, host, port))
    }

    fn check_ip(&self, host: &str, port: u16, ip: IpAddr) -> Decision {
        convert(NetworkAllowList::check_ip(self, host, port, ip))
    }

    fn describe(&self) -> String {
        let mut lines = vec![format!("profile {}", NetworkAllowList::profile(self))];
        for rule in self.rules() {
            let endpoints: Vec<String> =
                rule.endpoints.iter().map(|e| e.host.to_string()).collect();
            lines.push(format!("{}: {}", rule.key, endpoints.join(", ")));
        }
        if let Some(open) = self.open_addresses() {
            lines.push(format!(
                "open ports {:?}, {} networks",
                open.ports,
                open.networks.len()
            ));
        }
        lines.join("\n")
    }
}

fn convert(decision: sandbox_policy::Decision) -> Decision {
    match decision {
        sandbox_policy::Decision::Allowed { rule } => Decision::Allowed { rule },
        sandbox_policy::Decision::Denied { reason } => Decision::Denied { reason },
    }
}

/// Builds the network allow-list of a session.
pub trait PolicySource: Send + Sync + std::fmt::Debug {
    /// The allow-list for `request` with its enabled credential entries.
    fn policy(
        &self,
        request: &SandboxRequest,
        credentials: &[CredentialEntry],
    ) -> Result<Arc<dyn EgressPolicy>, String>;
}

/// The production source: `sandbox-policy`'s [`NetworkAllowList`], plus rules that name
/// addresses explicitly (a service on the host's loopback; tests' servers).
#[derive(Debug, Clone)]
pub struct AllowListSource {
    pub data: SandboxData,
    pub explicit: Vec<ExplicitAddress>,
}

impl AllowListSource {
    /// The built-in data of `config/sandbox.toml`.
    pub fn builtin() -> Result<Self, String> {
        Ok(Self {
            data: SandboxData::builtin().map_err(|e| e.to_string())?,
            explicit: Vec::new(),
        })
    }
}

impl PolicySource for AllowListSource {
    fn policy(
        &self,
        request: &SandboxRequest,
        credentials: &[CredentialEntry],
    ) -> Result<Arc<dyn EgressPolicy>, String> {
        let profile = self
            .data
            .profile(request.network_profile)
            .map_err(|e| e.to_string())?;
        let extra = request
            .extra_hosts
            .iter()
            .map(|h| HostRule::parse_in("extra host", h))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let list =
            NetworkAllowList::resolve(profile, &extra, credentials, &[], &self.data.companions)
                .map_err(|e| e.to_string())?;
        Ok(if self.explicit.is_empty() {
            Arc::new(list)
        } else {
            Arc::new(WithExplicitAddresses {
                inner: list,
                addresses: self.explicit.clone(),
            })
        })
    }
}
