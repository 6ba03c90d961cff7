//! Secrets: environment variables a sandbox may use but never read. Each becomes an OpenShell
//! provider holding the value; the sandbox receives only a placeholder, which the gateway's
//! proxy replaces on requests to the secret's hosts.

use std::collections::BTreeMap;
use std::fmt;

use openshell_proto::datamodel::{ObjectMeta, Provider};
use openshell_proto::v1::{CreateProviderRequest, DeleteProviderRequest};

use crate::error::PolicyError;
use crate::host::HostRule;
use crate::validate::check_env_key;

/// OpenShell's provider type for user-defined credentials.
pub const PROVIDER_TYPE: &str = "generic";

/// What a secret value prints as.
const REDACTED: &str = "<redacted>";

/// A secret's value. `Debug` and `Display` never show it; [`SecretValue::expose`] does, for the
/// one place that must send it (the `CreateProvider` call).
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(String);

impl SecretValue {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value itself. Call only to hand it to the gateway.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// A secret a session asked for: the variable's name and the hosts it may be used on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretSpec {
    /// The environment variable (`GITHUB_TOKEN`).
    pub name: String,
    pub hosts: Vec<HostRule>,
    /// True when the user wrote the hosts (then a host may resolve to a private address).
    pub hosts_named_by_user: bool,
}

impl SecretSpec {
    /// A secret with hosts the user named.
    pub fn new(name: &str, hosts: &[&str]) -> Result<Self, PolicyError> {
        check_secret_name(name)?;
        if hosts.is_empty() {
            return Err(PolicyError::InvalidSecret {
                name: name.to_owned(),
                reason: "name at least one host it may be used on".into(),
            });
        }
        let hosts = hosts
            .iter()
            .map(|host| HostRule::parse_in(&format!("secret `{name}` hosts"), host))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            name: name.to_owned(),
            hosts,
            hosts_named_by_user: true,
        })
    }
}

pub(crate) fn check_secret_name(name: &str) -> Result<(), PolicyError> {
    check_env_key(name).map_err(|reason| PolicyError::InvalidSecret {
        name: name.to_owned(),
        reason,
    })?;
    if name.starts_with("OPENSHELL_") {
        return Err(PolicyError::InvalidSecret {
            name: name.to_owned(),
            reason: "names starting with OPENSHELL_ belong to the gateway".into(),
        });
    }
    Ok(())
}

/// One `CreateProvider` call to make before creating the sandbox (and to undo after deleting it).
#[derive(Clone, PartialEq, Eq)]
pub struct ProviderRequest {
    /// The provider's name (a DNS-1123 label derived from the sandbox name and the variable).
    pub name: String,
    /// The variable it serves.
    pub variable: String,
    /// The network-policy rule whose endpoints are bound to it.
    pub rule: String,
    pub labels: BTreeMap<String, String>,
    value: SecretValue,
}

impl ProviderRequest {
    pub(crate) fn new(
        name: String,
        variable: String,
        rule: String,
        labels: BTreeMap<String, String>,
        value: SecretValue,
    ) -> Self {
        Self {
            name,
            variable,
            rule,
            labels,
            value,
        }
    }

    /// The request to send. It carries the value: never log it (its `Debug` redacts it).
    pub fn create_request(&self) -> CreateProviderRequest {
        CreateProviderRequest {
            provider: Some(Provider {
                metadata: Some(ObjectMeta {
                    name: self.name.clone(),
                    labels: self.labels.clone(),
                    ..ObjectMeta::default()
                }),
                r#type: PROVIDER_TYPE.to_owned(),
                credentials: [(self.variable.clone(), self.value.expose().to_owned())]
                    .into_iter()
                    .collect(),
                ..Provider::default()
            }),
            workspace_scope: Some(openshell_proto::default_workspace()),
            request_id: String::new(),
        }
    }

    /// The request that removes the provider again (missing is fine).
    pub fn delete_request(&self) -> DeleteProviderRequest {
        DeleteProviderRequest {
            name: self.name.clone(),
            workspace_scope: Some(openshell_proto::default_workspace()),
            allow_missing: true,
            request_id: String::new(),
        }
    }

    pub(crate) fn value(&self) -> &SecretValue {
        &self.value
    }
}

impl fmt::Debug for ProviderRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderRequest")
            .field("name", &self.name)
            .field("type", &PROVIDER_TYPE)
            .field("variable", &self.variable)
            .field("rule", &self.rule)
            .field("labels", &self.labels)
            .field("value", &self.value)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLANTED: &str = "ghp_plantedSECRETvalue0123456789";

    #[test]
    fn secret_values_never_print() {
        let value = SecretValue::new(PLANTED);
        assert_eq!(format!("{value}"), REDACTED);
        assert_eq!(format!("{value:?}"), REDACTED);
        assert_eq!(value.expose(), PLANTED);
    }

    #[test]
    fn provider_requests_redact_in_debug_but_carry_the_value_on_the_wire() {
        let request = ProviderRequest::new(
            "pd-0123456789abcdef-github-token".into(),
            "GITHUB_TOKEN".into(),
            "secret_github_token".into(),
            BTreeMap::new(),
            SecretValue::new(PLANTED),
        );
        let shown = format!("{request:?} {request:#?}");
        assert!(!shown.contains(PLANTED), "{shown}");
        let wire = request.create_request();
        let shown_wire = format!("{wire:?}");
        assert!(!shown_wire.contains(PLANTED), "{shown_wire}");
        let provider = wire.provider.unwrap();
        assert_eq!(provider.r#type, "generic");
        assert_eq!(provider.credentials["GITHUB_TOKEN"], PLANTED);
        assert!(request.delete_request().allow_missing);
    }

    #[test]
    fn secret_names_must_be_environment_keys() {
        for bad in ["", "1TOKEN", "MY-TOKEN", "A B", "OPENSHELL_TOKEN"] {
            assert!(SecretSpec::new(bad, &["api.example.com"]).is_err(), "{bad}");
        }
        assert!(SecretSpec::new("MY_TOKEN", &[]).is_err());
        let spec = SecretSpec::new("MY_TOKEN", &["api.example.com"]).unwrap();
        assert_eq!(spec.hosts[0].to_string(), "api.example.com:443");
    }
}
