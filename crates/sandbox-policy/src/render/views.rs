//! Human and audit views of what is sent: the policy as canonical YAML in OpenShell's policy
//! schema (`filesystem_policy`, `landlock`, `process`, `network_policies`), and the create
//! request as JSON. Both are deterministic: same input, same bytes.

use std::collections::BTreeMap;

use openshell_proto::datamodel::workspace_selector::Selection;
use openshell_proto::prost_types::{Struct, Value, value::Kind};
use openshell_proto::sandbox::{
    NetworkAccessPreset, NetworkEndpoint, NetworkEnforcementMode, NetworkTlsMode, SandboxPolicy,
};
use openshell_proto::v1::CreateSandboxRequest;
use serde::Serialize;
use serde_json::json;

use crate::error::PolicyError;

#[derive(Serialize)]
struct PolicyView {
    version: u32,
    filesystem_policy: FilesystemView,
    landlock: LandlockView,
    process: ProcessView,
    network_policies: BTreeMap<String, RuleView>,
}

#[derive(Serialize)]
struct FilesystemView {
    include_workdir: bool,
    read_only: Vec<String>,
    read_write: Vec<String>,
}

#[derive(Serialize)]
struct LandlockView {
    compatibility: String,
}

#[derive(Serialize)]
struct ProcessView {
    run_as_user: String,
    run_as_group: String,
}

#[derive(Serialize)]
struct RuleView {
    name: String,
    endpoints: Vec<EndpointView>,
    binaries: Vec<BinaryView>,
}

#[derive(Serialize)]
struct BinaryView {
    path: String,
}

#[derive(Serialize)]
struct EndpointView {
    #[serde(skip_serializing_if = "String::is_empty")]
    host: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    port: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ports: Vec<u32>,
    #[serde(skip_serializing_if = "String::is_empty")]
    protocol: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    tls: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    enforcement: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    access: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    allowed_ips: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    credential_binding: Option<BindingView>,
}

#[derive(Serialize)]
struct BindingView {
    provider: String,
}

fn endpoint_view(endpoint: &NetworkEndpoint) -> EndpointView {
    EndpointView {
        host: endpoint.host.clone(),
        port: (endpoint.ports.is_empty() && endpoint.port != 0).then_some(endpoint.port),
        ports: endpoint.ports.clone(),
        protocol: endpoint.protocol.clone(),
        tls: match endpoint.tls() {
            NetworkTlsMode::Unspecified => None,
            NetworkTlsMode::Skip => Some("skip"),
            NetworkTlsMode::Terminate => Some("terminate"),
            NetworkTlsMode::Passthrough => Some("passthrough"),
        },
        enforcement: match endpoint.enforcement() {
            NetworkEnforcementMode::Unspecified => None,
            NetworkEnforcementMode::Enforce => Some("enforce"),
            NetworkEnforcementMode::Audit => Some("audit"),
        },
        access: match endpoint.access() {
            NetworkAccessPreset::Unspecified => None,
            NetworkAccessPreset::ReadOnly => Some("read-only"),
            NetworkAccessPreset::ReadWrite => Some("read-write"),
            NetworkAccessPreset::Full => Some("full"),
        },
        allowed_ips: endpoint.allowed_ips.clone(),
        credential_binding: endpoint.credential_binding.as_ref().map(|b| BindingView {
            provider: b.provider.clone(),
        }),
    }
}

fn policy_view(policy: &SandboxPolicy) -> PolicyView {
    let filesystem = policy.filesystem.clone().unwrap_or_default();
    let process = policy.process.clone().unwrap_or_default();
    PolicyView {
        version: policy.version,
        filesystem_policy: FilesystemView {
            include_workdir: filesystem.include_workdir,
            read_only: filesystem.read_only,
            read_write: filesystem.read_write,
        },
        landlock: LandlockView {
            compatibility: policy
                .landlock
                .as_ref()
                .map(|l| l.compatibility.clone())
                .unwrap_or_default(),
        },
        process: ProcessView {
            run_as_user: process.run_as_user,
            run_as_group: process.run_as_group,
        },
        network_policies: policy
            .network_policies
            .iter()
            .map(|(key, rule)| {
                (
                    key.clone(),
                    RuleView {
                        name: rule.name.clone(),
                        endpoints: rule.endpoints.iter().map(endpoint_view).collect(),
                        binaries: rule
                            .binaries
                            .iter()
                            .map(|b| BinaryView {
                                path: b.path.clone(),
                            })
                            .collect(),
                    },
                )
            })
            .collect(),
    }
}

/// The policy as canonical YAML in OpenShell's policy schema (what `openshell policy get`
/// shows), for humans and the audit trail.
pub fn policy_yaml(policy: &SandboxPolicy) -> Result<String, PolicyError> {
    serde_yaml_ng::to_string(&policy_view(policy))
        .map_err(|error| PolicyError::data("policy YAML", error.to_string()))
}

fn struct_json(value: &Struct) -> serde_json::Value {
    serde_json::Value::Object(
        value
            .fields
            .iter()
            .map(|(k, v)| (k.clone(), value_json(v)))
            .collect(),
    )
}

fn value_json(value: &Value) -> serde_json::Value {
    match &value.kind {
        None | Some(Kind::NullValue(_)) => serde_json::Value::Null,
        Some(Kind::BoolValue(b)) => json!(b),
        Some(Kind::NumberValue(n)) if n.fract() == 0.0 && n.abs() < 9.0e15 => {
            #[allow(
                clippy::cast_possible_truncation,
                reason = "whole and within i64 range"
            )]
            let whole = *n as i64;
            json!(whole)
        }
        Some(Kind::NumberValue(n)) => json!(n),
        Some(Kind::StringValue(s)) => json!(s),
        Some(Kind::ListValue(list)) => {
            serde_json::Value::Array(list.values.iter().map(value_json).collect())
        }
        Some(Kind::StructValue(inner)) => struct_json(inner),
    }
}

/// The create request as JSON with proto field names; the policy appears in its YAML-schema
/// form. Holds no secret values (they travel only in the providers' requests).
pub fn create_request_json(request: &CreateSandboxRequest) -> serde_json::Value {
    let spec = request.spec.clone().unwrap_or_default();
    let template = spec.template.clone().unwrap_or_default();
    let workspace = match request
        .workspace_scope
        .as_ref()
        .and_then(|w| w.selection.as_ref())
    {
        Some(Selection::Workspace(name)) => json!({ "workspace": name }),
        Some(Selection::AllWorkspaces(_)) => json!({ "all_workspaces": {} }),
        None => serde_json::Value::Null,
    };
    json!({
        "name": request.name,
        "labels": request.labels,
        "workspace_scope": workspace,
        "spec": {
            "template": {
                "image": template.image,
                "driver_config": template.driver_config.as_ref().map(struct_json),
            },
            "policy": spec.policy.as_ref().map(|p| serde_json::to_value(policy_view(p)).unwrap_or_default()),
            "providers": spec.providers,
            "environment": spec.environment,
            "command": spec.command,
            "tty": spec.tty,
            "restart_policy": spec.restart_policy().as_str_name(),
        },
    })
}
