//! The sandbox proxy's decisions, from the sandbox's live policy: the local wall's proxy asks
//! [`LiveEgress`]; each refusal becomes an OCSF shorthand log line (formatted as OpenShell's
//! supervisor writes them) and a drafted rule with a review token.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use openshell_proto::sandbox::{NetworkBinary, NetworkEndpoint, NetworkPolicyRule, SandboxPolicy};
use openshell_proto::v1::PolicyChunk;
use protocol::NetworkDenial;
use sandbox_provider::local::proxy::{Decision, EgressPolicy};

use super::state::State;

/// The live policy as the proxy sees it. Names a test mapped to its own servers may resolve
/// to loopback; any other non-public address is always blocked, as in OpenShell.
#[derive(Debug)]
pub struct LiveEgress {
    pub policy: Arc<Mutex<SandboxPolicy>>,
    pub mapped: BTreeMap<String, Vec<IpAddr>>,
}

fn host_matches(pattern: &str, host: &str) -> bool {
    if let Some(suffix) = pattern.strip_prefix("**.") {
        host.strip_suffix(suffix)
            .and_then(|front| front.strip_suffix('.'))
            .is_some_and(|front| !front.is_empty())
    } else if let Some(suffix) = pattern.strip_prefix("*.") {
        host.strip_suffix(suffix)
            .and_then(|front| front.strip_suffix('.'))
            .is_some_and(|front| !front.is_empty() && !front.contains('.'))
    } else {
        pattern.eq_ignore_ascii_case(host)
    }
}

fn port_matches(endpoint: &NetworkEndpoint, port: u16) -> bool {
    let port = u32::from(port);
    endpoint.port == port || endpoint.ports.contains(&port)
}

impl EgressPolicy for LiveEgress {
    fn profile(&self) -> String {
        "openshell".into()
    }

    fn check_host(&self, host: &str, port: u16) -> Decision {
        let policy = self.policy.lock().unwrap_or_else(PoisonError::into_inner);
        for (key, rule) in &policy.network_policies {
            for endpoint in &rule.endpoints {
                let by_name = !endpoint.host.is_empty() && host_matches(&endpoint.host, host);
                let by_address = endpoint.host.is_empty() && !endpoint.allowed_ips.is_empty();
                if (by_name || by_address) && port_matches(endpoint, port) {
                    return Decision::Allowed { rule: key.clone() };
                }
            }
        }
        Decision::Denied {
            reason: "no matching policy".into(),
        }
    }

    fn check_ip(&self, host: &str, _port: u16, ip: IpAddr) -> Decision {
        if self
            .mapped
            .get(&host.to_ascii_lowercase())
            .is_some_and(|ips| ips.contains(&ip))
        {
            return Decision::Allowed {
                rule: format!("test mapping {host}={ip}"),
            };
        }
        let blocked = match ip {
            IpAddr::V4(v4) => {
                v4.is_loopback() || v4.is_link_local() || v4.is_unspecified() || v4.is_private()
            }
            IpAddr::V6(v6) => v6.is_loopback() || v6.is_unspecified(),
        };
        if blocked {
            Decision::Denied {
                reason: "resolves to always-blocked address".into(),
            }
        } else {
            Decision::Allowed {
                rule: "public address".into(),
            }
        }
    }

    fn describe(&self) -> String {
        let policy = self.policy.lock().unwrap_or_else(PoisonError::into_inner);
        policy
            .network_policies
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The supervisor's shorthand for a refused connection:
/// `NET:OPEN [MED] DENIED /usr/bin/curl(0) -> host:443 [policy:- engine:opa] [reason:…]`.
pub fn ocsf_line(denial: &NetworkDenial) -> String {
    let engine = match denial.rule.as_deref() {
        Some(rule) if rule.contains("address") => "ssrf",
        _ => "opa",
    };
    let host = if denial.host.contains(':') {
        format!("[{}]", denial.host)
    } else {
        denial.host.clone()
    };
    format!(
        "NET:OPEN [MED] DENIED {}(0) -> {host}:{} [policy:- engine:{engine}] [reason:{}]",
        denial.binary.as_deref().unwrap_or("-"),
        denial.port,
        denial.reason
    )
}

/// Records a refusal: the OCSF line, and a pending draft chunk for `host:port` (a repeat
/// raises the chunk's hit count).
pub fn record_denial(state: &State, sandbox: &str, denial: &NetworkDenial) {
    state.log(sandbox, "OCSF", "ocsf", ocsf_line(denial));
    if denial.reason.contains("always-blocked") {
        return;
    }
    state.update(sandbox, |record| {
        let rule_name: String = format!("allow_{}_{}", denial.host, denial.port)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        if let Some(chunk) = record
            .drafts
            .iter_mut()
            .find(|c| c.status == "pending" && c.rule_name == rule_name)
        {
            chunk.hit_count += 1;
            chunk.last_seen_time = Some(super::now_timestamp());
            return;
        }
        record.draft_version += 1;
        let binary = denial.binary.clone().unwrap_or_else(|| "/**".into());
        record.drafts.push(PolicyChunk {
            id: format!("chunk-{}", record.draft_version),
            status: "pending".into(),
            rule_name,
            proposed_rule: Some(NetworkPolicyRule {
                name: format!("{}:{}", denial.host, denial.port),
                endpoints: vec![NetworkEndpoint {
                    host: denial.host.clone(),
                    port: u32::from(denial.port),
                    ..NetworkEndpoint::default()
                }],
                binaries: vec![NetworkBinary {
                    path: binary.clone(),
                }],
            }),
            rationale: format!(
                "{binary} was denied {}:{} ({})",
                denial.host, denial.port, denial.reason
            ),
            confidence: 0.9,
            stage: "initial".into(),
            hit_count: 1,
            binary,
            first_seen_time: Some(super::now_timestamp()),
            last_seen_time: Some(super::now_timestamp()),
            created_time: Some(super::now_timestamp()),
            ..PolicyChunk::default()
        });
    });
}
