//! Live policy edits: one host added to a sandbox's policy as an `add_rule` merge operation.

use openshell_proto::sandbox::{NetworkBinary, NetworkEndpoint, NetworkPolicyRule};
use openshell_proto::v1::{AddNetworkRule, PolicyMergeOperation, policy_merge_operation};
use sandbox_policy::{HostPattern, HostRule, Transport, check_rule_key};

use crate::error::ProviderError;

/// The program pattern of every rule Paddock writes: the host list is the boundary.
const ANY_BINARY: &str = "/**";

/// The merge operation that allows `host` (`name`, `name:port`, `*.name`, an address or CIDR)
/// for any program, under a rule key derived from it (`user_<host>_<port>`).
pub fn add_host_operation(host: &str) -> Result<PolicyMergeOperation, ProviderError> {
    let rule = HostRule::parse_in("allowed host", host)
        .map_err(|e| ProviderError::InvalidRequest(e.to_string()))?;
    let mut endpoint = NetworkEndpoint {
        port: u32::from(rule.port),
        ..NetworkEndpoint::default()
    };
    match &rule.pattern {
        HostPattern::Addresses(cidr) => endpoint.allowed_ips = vec![cidr.to_string()],
        pattern => endpoint.host = pattern.host_field(),
    }
    if rule.transport == Transport::Tcp {
        endpoint.protocol = "tcp".to_owned();
    }
    let key: String = format!("user_{}_{}", rule.pattern, rule.port)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(63)
        .collect();
    check_rule_key(&key).map_err(|e| ProviderError::InvalidRequest(e.to_string()))?;
    Ok(PolicyMergeOperation {
        operation: Some(policy_merge_operation::Operation::AddRule(AddNetworkRule {
            rule_name: key,
            rule: Some(NetworkPolicyRule {
                name: format!("allowed by the user: {}:{}", rule.pattern, rule.port),
                endpoints: vec![endpoint],
                binaries: vec![NetworkBinary {
                    path: ANY_BINARY.to_owned(),
                }],
            }),
        })),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn added(host: &str) -> AddNetworkRule {
        match add_host_operation(host).unwrap().operation {
            Some(policy_merge_operation::Operation::AddRule(rule)) => rule,
            other => panic!("not an add_rule: {other:?}"),
        }
    }

    #[test]
    fn a_host_becomes_one_rule_for_any_program() {
        let rule = added("Example.com:8443");
        assert_eq!(rule.rule_name, "user_example_com_8443");
        let body = rule.rule.unwrap();
        assert_eq!(body.endpoints[0].host, "example.com");
        assert_eq!(body.endpoints[0].port, 8443);
        assert_eq!(body.binaries[0].path, "/**");
        assert_eq!(added("pypi.org").rule.unwrap().endpoints[0].port, 443);
        assert_eq!(
            added("*.example.org").rule.unwrap().endpoints[0].host,
            "*.example.org"
        );
    }

    #[test]
    fn bad_hosts_are_refused_with_the_reason() {
        for bad in [
            "",
            "*",
            "exa mple.com",
            "example.com:0",
            "example.com:70000",
        ] {
            let err = add_host_operation(bad).unwrap_err();
            assert!(err.to_string().contains("allowed host"), "{bad}: {err}");
        }
    }
}
