//! The gateway's checks on a `CreateSandboxRequest`, with its error texts: name, workspace,
//! labels, environment, policy, identity, and the `driver_config` opt-ins.

use openshell_proto::datamodel::WorkspaceSelector;
use openshell_proto::datamodel::workspace_selector::Selection;
use openshell_proto::prost_types::{Struct, Value, value::Kind};
use openshell_proto::v1::CreateSandboxRequest;
use tonic::Status;

use super::DoubleConfig;
use super::launch::Mount;

/// Paths a mount target may not touch (OpenShell's reserved trees).
const RESERVED: &[&str] = &[
    "/opt/openshell",
    "/etc/openshell",
    "/etc/openshell-tls",
    "/run/openshell",
    "/run/openshell-sidecar",
    "/sandbox",
];

pub fn workspace(scope: Option<&WorkspaceSelector>) -> Result<(), Status> {
    match scope.and_then(|s| s.selection.as_ref()) {
        Some(Selection::Workspace(name)) if !name.is_empty() => Ok(()),
        Some(Selection::AllWorkspaces(_)) => Err(Status::invalid_argument(
            "workspace_scope: all_workspaces is not valid for this call",
        )),
        _ => Err(Status::invalid_argument(
            "workspace_scope is required (name the workspace explicitly, e.g. \"default\")",
        )),
    }
}

/// A DNS-1123 label of at most 19 characters.
pub fn sandbox_name(name: &str) -> Result<(), Status> {
    let valid = !name.is_empty()
        && name.len() <= 19
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if valid {
        Ok(())
    } else {
        Err(Status::invalid_argument(format!(
            "sandbox name {name:?} must be a DNS-1123 label of at most 19 characters"
        )))
    }
}

/// `process.run_as_user`/`run_as_group`: numeric and never root (`sandbox` is 1000).
fn identity(field: &str, value: &str) -> Result<u32, Status> {
    let id = match value {
        "" | "sandbox" => 1000,
        number => number
            .parse::<u32>()
            .map_err(|_| Status::invalid_argument(format!("{field} {value:?} is not a user id")))?,
    };
    if id == 0 || id == u32::MAX {
        return Err(Status::invalid_argument(format!(
            "{field}: root (0) is never allowed to run sandboxed programs"
        )));
    }
    Ok(id)
}

fn field<'a>(object: &'a Struct, name: &str) -> Option<&'a Kind> {
    object.fields.get(name).and_then(|v| v.kind.as_ref())
}

fn string(object: &Struct, name: &str) -> Option<String> {
    match field(object, name) {
        Some(Kind::StringValue(s)) => Some(s.clone()),
        _ => None,
    }
}

fn mounts_of(
    driver: &str,
    config: &Struct,
    enable_bind_mounts: bool,
) -> Result<Vec<Mount>, Status> {
    let mut unknown: Vec<&String> = config.fields.keys().filter(|k| *k != driver).collect();
    if let Some(other) = unknown.pop() {
        return Err(Status::invalid_argument(format!(
            "driver_config names driver {other:?} but this gateway runs {driver:?}"
        )));
    }
    let Some(Kind::StructValue(block)) = field(config, driver) else {
        return Ok(Vec::new());
    };
    let list = match field(block, "mounts") {
        None => return Ok(Vec::new()),
        Some(Kind::ListValue(list)) => list.values.clone(),
        Some(_) => {
            return Err(Status::invalid_argument(
                "driver_config mounts must be a list",
            ));
        }
    };
    let mut mounts = Vec::new();
    for Value { kind } in list {
        let Some(Kind::StructValue(mount)) = kind else {
            return Err(Status::invalid_argument("each mount must be an object"));
        };
        let target = string(&mount, "target")
            .filter(|t| t.starts_with('/') && !t.contains("..") && t.trim() == t)
            .ok_or_else(|| Status::invalid_argument("a mount target must be an absolute path"))?;
        if let Some(reserved) = RESERVED
            .iter()
            .find(|r| target == **r || target.starts_with(&format!("{r}/")))
        {
            return Err(Status::invalid_argument(format!(
                "mount target {target} overlaps the reserved path {reserved}"
            )));
        }
        if target == "/" {
            return Err(Status::invalid_argument(
                "a mount must not replace the container root",
            ));
        }
        match string(&mount, "type").as_deref() {
            Some("bind") => {
                if !enable_bind_mounts {
                    return Err(Status::failed_precondition(format!(
                        "{driver} bind mounts require enable_bind_mounts = true in [openshell.drivers.{driver}]"
                    )));
                }
                let source = string(&mount, "source")
                    .filter(|s| s.starts_with('/'))
                    .ok_or_else(|| {
                        Status::invalid_argument("a bind mount needs an absolute source")
                    })?;
                // Docker binds a file as well as a folder; the source must exist.
                if std::fs::symlink_metadata(&source).is_err() {
                    return Err(Status::invalid_argument(format!(
                        "bind mount source {source} does not exist on the gateway's host"
                    )));
                }
                let read_only = match field(&mount, "read_only") {
                    None => true,
                    Some(Kind::BoolValue(b)) => *b,
                    Some(_) => return Err(Status::invalid_argument("read_only must be a boolean")),
                };
                mounts.push(Mount::Bind {
                    source,
                    target,
                    read_only,
                });
            }
            Some("tmpfs") => mounts.push(Mount::Tmpfs { target }),
            other => {
                return Err(Status::invalid_argument(format!(
                    "mount type {other:?} is not supported by the {driver} driver"
                )));
            }
        }
    }
    Ok(mounts)
}

/// What a valid request gives the launcher.
#[derive(Debug)]
pub struct Checked {
    pub uid: u32,
    pub gid: u32,
    pub mounts: Vec<Mount>,
}

pub fn create_request(
    config: &DoubleConfig,
    request: &CreateSandboxRequest,
) -> Result<Checked, Status> {
    workspace(request.workspace_scope.as_ref())?;
    sandbox_name(&request.name)?;
    for (key, value) in &request.labels {
        sandbox_policy::check_label(key, value)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
    }
    let spec = request
        .spec
        .as_ref()
        .ok_or_else(|| Status::invalid_argument("spec is required"))?;
    sandbox_policy::check_environment(&spec.environment)
        .map_err(|e| Status::invalid_argument(e.to_string()))?;
    if spec.command.is_empty() {
        return Err(Status::invalid_argument(
            "the double needs spec.command (an interactive /bin/bash -l main process is not modelled)",
        ));
    }
    let policy = spec
        .policy
        .as_ref()
        .ok_or_else(|| Status::invalid_argument("the double needs an explicit spec.policy"))?;
    sandbox_policy::validate_policy(policy).map_err(|e| Status::invalid_argument(e.to_string()))?;
    let process = policy.process.clone().unwrap_or_default();
    let uid = identity("process.run_as_user", &process.run_as_user)?;
    let gid = identity("process.run_as_group", &process.run_as_group)?;
    let mounts = match spec
        .template
        .as_ref()
        .and_then(|t| t.driver_config.as_ref())
    {
        None => Vec::new(),
        Some(_) if !config.allow_driver_config => {
            return Err(Status::failed_precondition(
                "caller driver config is disabled; a gateway administrator must enable allow_driver_config",
            ));
        }
        Some(driver_config) => mounts_of(&config.driver, driver_config, config.enable_bind_mounts)?,
    };
    Ok(Checked { uid, gid, mounts })
}

#[cfg(test)]
mod tests {
    use openshell_proto::prost_types::{ListValue, Value};
    use openshell_proto::sandbox::{ProcessPolicy, SandboxPolicy};
    use openshell_proto::v1::{SandboxSpec, SandboxTemplate};

    use super::*;

    fn value(kind: Kind) -> Value {
        Value { kind: Some(kind) }
    }

    fn object(fields: &[(&str, Kind)]) -> Struct {
        Struct {
            fields: fields
                .iter()
                .map(|(k, v)| ((*k).to_owned(), value(v.clone())))
                .collect(),
        }
    }

    fn request(name: &str, user: &str, mounts: Option<Vec<Value>>) -> CreateSandboxRequest {
        let driver_config = mounts.map(|list| {
            object(&[(
                "docker",
                Kind::StructValue(object(&[(
                    "mounts",
                    Kind::ListValue(ListValue { values: list }),
                )])),
            )])
        });
        CreateSandboxRequest {
            name: name.to_owned(),
            workspace_scope: Some(openshell_proto::default_workspace()),
            spec: Some(SandboxSpec {
                command: vec!["/bin/true".into()],
                policy: Some(SandboxPolicy {
                    version: 1,
                    process: Some(ProcessPolicy {
                        run_as_user: user.to_owned(),
                        run_as_group: "1000".into(),
                    }),
                    ..SandboxPolicy::default()
                }),
                template: Some(SandboxTemplate {
                    driver_config,
                    ..SandboxTemplate::default()
                }),
                ..SandboxSpec::default()
            }),
            ..CreateSandboxRequest::default()
        }
    }

    fn config() -> DoubleConfig {
        DoubleConfig {
            tls: None,
            bearer_token: None,
            allow_driver_config: true,
            enable_bind_mounts: true,
            driver: "docker".into(),
            state_dir: "/nonexistent".into(),
            wall: "/nonexistent/paddock-wall".into(),
            bwrap: "/usr/bin/bwrap".into(),
            hosts: Default::default(),
        }
    }

    fn bind(source: &str, target: &str) -> Value {
        value(Kind::StructValue(object(&[
            ("type", Kind::StringValue("bind".into())),
            ("source", Kind::StringValue(source.into())),
            ("target", Kind::StringValue(target.into())),
        ])))
    }

    fn refused(config: &DoubleConfig, request: &CreateSandboxRequest) -> String {
        create_request(config, request)
            .unwrap_err()
            .message()
            .to_owned()
    }

    #[test]
    fn names_workspaces_and_identities_follow_the_gateway_rules() {
        let ok = create_request(&config(), &request("pd-0123456789abcdef", "1000", None)).unwrap();
        assert_eq!((ok.uid, ok.gid), (1000, 1000));
        assert!(refused(&config(), &request("pd-0123456789abcdef0", "1000", None)).contains("19"));
        assert!(refused(&config(), &request("Upper", "1000", None)).contains("DNS-1123"));
        assert!(refused(&config(), &request("ok", "0", None)).contains("root"));
        let mut no_scope = request("ok", "1000", None);
        no_scope.workspace_scope = None;
        assert!(refused(&config(), &no_scope).contains("workspace_scope is required"));
    }

    #[test]
    fn driver_config_needs_both_opt_ins_and_sane_targets() {
        let with_mount = request("ok", "1000", Some(vec![bind("/usr", "/usr")]));
        assert_eq!(
            create_request(&config(), &with_mount).unwrap().mounts.len(),
            1
        );
        let closed = DoubleConfig {
            allow_driver_config: false,
            ..config()
        };
        assert!(refused(&closed, &with_mount).contains("allow_driver_config"));
        let no_binds = DoubleConfig {
            enable_bind_mounts: false,
            ..config()
        };
        assert!(refused(&no_binds, &with_mount).contains("enable_bind_mounts = true"));
        let reserved = request("ok", "1000", Some(vec![bind("/usr", "/etc/openshell/x")]));
        assert!(refused(&config(), &reserved).contains("reserved"));
        let missing = request("ok", "1000", Some(vec![bind("/nonexistent-source", "/x")]));
        assert!(refused(&config(), &missing).contains("does not exist"));
    }
}
