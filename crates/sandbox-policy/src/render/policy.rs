//! The OpenShell `SandboxPolicy`: Landlock grants, the identity, and the network rules of the
//! allow-list, every rule open to any program (`/**`).

use std::collections::BTreeMap;

use openshell_proto::sandbox::{
    FilesystemPolicy, LandlockPolicy, NetworkAccessPreset, NetworkBinary, NetworkCredentialBinding,
    NetworkEndpoint, NetworkEnforcementMode, NetworkPolicyRule, ProcessPolicy, SandboxPolicy,
};

use super::folders::Layout;
use crate::allow_list::{NetworkAllowList, OPEN_RULE, RuleOrigin};
use crate::error::PolicyError;
use crate::host::{HostPattern, HostRule, Transport};
use crate::secrets::ProviderRequest;
use crate::validate::validate_policy;

/// Any program may use an allowed host. Binary scoping would need every tool's resolved path
/// (and pins its hash on first use); like the peers, the host list is the boundary.
pub const ANY_BINARY: &str = "/**";

/// Landlock must be enforced: a kernel without it refuses the sandbox instead of running open.
pub const LANDLOCK_MODE: &str = "hard_requirement";

pub(crate) fn build(
    layout: &Layout,
    allow_list: &NetworkAllowList,
    providers: &[ProviderRequest],
) -> Result<SandboxPolicy, PolicyError> {
    let provider_of: BTreeMap<&str, &str> = providers
        .iter()
        .map(|p| (p.rule.as_str(), p.name.as_str()))
        .collect();
    let mut network_policies = BTreeMap::new();
    for rule in allow_list.rules() {
        let binding = provider_of.get(rule.key.as_str()).copied();
        let endpoints = rule
            .endpoints
            .iter()
            .map(|endpoint| {
                let mut out = endpoint.host.to_endpoint();
                if rule.origin == RuleOrigin::Secret
                    && let Some(provider) = binding
                {
                    // Inspected REST so the proxy can swap the placeholder for the value,
                    // on these endpoints only.
                    out.protocol = "rest".to_owned();
                    out.access = NetworkAccessPreset::Full.into();
                    out.enforcement = NetworkEnforcementMode::Enforce.into();
                    out.credential_binding = Some(NetworkCredentialBinding {
                        provider: provider.to_owned(),
                    });
                }
                out
            })
            .collect();
        network_policies.insert(
            rule.key.clone(),
            NetworkPolicyRule {
                name: rule.display.clone(),
                endpoints,
                binaries: vec![any_binary()],
            },
        );
    }
    if let Some(open) = allow_list.open_addresses() {
        network_policies.insert(
            OPEN_RULE.to_owned(),
            NetworkPolicyRule {
                name: "open profile: public IPv4 addresses".to_owned(),
                endpoints: vec![NetworkEndpoint {
                    ports: open.ports.iter().map(|p| u32::from(*p)).collect(),
                    allowed_ips: open.networks.iter().map(ToString::to_string).collect(),
                    ..NetworkEndpoint::default()
                }],
                binaries: vec![any_binary()],
            },
        );
    }
    let policy = SandboxPolicy {
        version: 1,
        filesystem: Some(FilesystemPolicy {
            // The workdir (`/sandbox`, [`super::request::WORKDIR`]) is container-private, not
            // a host folder: writable so tools have a HOME for their caches when no private
            // home is mounted.
            include_workdir: true,
            read_only: layout.read_only.clone(),
            read_write: layout.read_write.clone(),
        }),
        landlock: Some(LandlockPolicy {
            compatibility: LANDLOCK_MODE.to_owned(),
        }),
        process: Some(ProcessPolicy {
            run_as_user: layout.owner.uid.to_string(),
            run_as_group: layout.owner.gid.to_string(),
        }),
        network_policies,
    };
    validate_policy(&policy)?;
    Ok(policy)
}

impl HostRule {
    /// The OpenShell endpoint for this rule: `host` and `port` for names, a hostless endpoint
    /// with `allowed_ips` for addresses and networks, `protocol: tcp` for direct TCP.
    pub fn to_endpoint(&self) -> NetworkEndpoint {
        let mut endpoint = NetworkEndpoint {
            port: u32::from(self.port),
            ..NetworkEndpoint::default()
        };
        match &self.pattern {
            HostPattern::Addresses(cidr) => endpoint.allowed_ips = vec![cidr.to_string()],
            pattern => endpoint.host = pattern.host_field(),
        }
        if self.transport == Transport::Tcp {
            endpoint.protocol = "tcp".to_owned();
        }
        endpoint
    }
}

/// The program pattern of every rule Paddock writes.
pub fn any_binary() -> NetworkBinary {
    NetworkBinary {
        path: ANY_BINARY.to_owned(),
    }
}
