//! `paddock machine sandbox status` for OpenShell: discovery, Health, identity, the gateway's
//! driver and version, and the machine's own pieces, each a check with its fix.

use openshell_proto::OPENSHELL_WIRE_VERSION;
use openshell_proto::v1::ServiceStatus;
use protocol::{EnforcementLevel, MachineSandboxStatus, ProviderKind, StatusCheck};

use super::OpenShellConfig;
use super::discovery;
use super::gateway::Gateway;
use super::transport::GatewayError;

fn check(name: &str, ok: bool, detail: String, fix: Option<&str>) -> StatusCheck {
    StatusCheck {
        name: name.to_owned(),
        ok,
        detail,
        fix: (!ok).then(|| fix.map(str::to_owned)).flatten(),
    }
}

const ADD_GATEWAY: &str = "openshell gateway add https://127.0.0.1:17670 --local --name openshell && openshell gateway select openshell";
const START_GATEWAY: &str = "systemctl --user start openshell-gateway (or run `openshell-gateway`)";

pub async fn check_all(config: &OpenShellConfig) -> Vec<StatusCheck> {
    let mut checks = Vec::new();
    let runner = config.runner_dir.join("tool-runner");
    checks.push(check(
        "tool-runner",
        runner.is_file(),
        format!(
            "{} {}",
            runner.display(),
            if runner.is_file() {
                "is present"
            } else {
                "does not exist"
            }
        ),
        Some("cargo xtask runner"),
    ));
    let target = match discovery::discover(&config.environment) {
        Ok(target) => {
            checks.push(check(
                "gateway",
                true,
                format!(
                    "{} ({}, found by {})",
                    target.endpoint,
                    target.auth_description(),
                    target.found_by
                ),
                None,
            ));
            target
        }
        Err(e) => {
            checks.push(check("gateway", false, e.to_string(), Some(ADD_GATEWAY)));
            return checks;
        }
    };
    let gateway = match Gateway::connect(target).await {
        Ok(gateway) => gateway,
        Err(e) => {
            checks.push(check(
                "connection",
                false,
                e.to_string(),
                Some(START_GATEWAY),
            ));
            return checks;
        }
    };
    match gateway.health().await {
        Ok(health) => {
            let healthy = health.status() == ServiceStatus::Healthy;
            checks.push(check(
                "health",
                healthy,
                format!(
                    "{} (gateway {})",
                    health.status().as_str_name(),
                    health.version
                ),
                Some("openshell status; restart the gateway and read its log"),
            ));
            let minor = OPENSHELL_WIRE_VERSION
                .rsplit_once('.')
                .map_or("0.1", |(m, _)| m);
            let compatible = health
                .version
                .trim_start_matches('v')
                .starts_with(&format!("{minor}."));
            checks.push(check(
                "version",
                compatible,
                format!(
                    "gateway {}; Paddock speaks OpenShell {minor}.x ({OPENSHELL_WIRE_VERSION})",
                    health.version
                ),
                Some(
                    "install an OpenShell 0.1.x gateway (0.0.x and 0.2.x are not wire-compatible)",
                ),
            ));
        }
        Err(e) => {
            checks.push(check("health", false, e.to_string(), Some(START_GATEWAY)));
            return checks;
        }
    }
    match gateway.current_user().await {
        Ok(user) => checks.push(check(
            "authentication",
            true,
            format!("authenticated as {} (roles: {})", user.subject, user.roles.join(", ")),
            None,
        )),
        Err(GatewayError::Unauthenticated(why)) => checks.push(check(
            "authentication",
            false,
            format!("the gateway refused our credentials: {why}"),
            Some("openshell gateway add <url> --local (mTLS bundle) or openshell gateway login <name> (OIDC)"),
        )),
        Err(e) => checks.push(check("authentication", false, e.to_string(), Some(START_GATEWAY))),
    }
    match gateway.gateway_info().await {
        Ok(info) => {
            let drivers: Vec<String> = info
                .compute_drivers
                .iter()
                .map(|d| d.name.clone())
                .collect();
            let mountable = drivers.iter().any(|d| d == "docker" || d == "podman");
            checks.push(check(
                "driver",
                mountable,
                format!("compute drivers: {}", if drivers.is_empty() { "none reported".into() } else { drivers.join(", ") }),
                Some("use the docker or podman compute driver: the vm and kubernetes drivers have no host bind mounts"),
            ));
        }
        Err(GatewayError::PermissionDenied(why)) => checks.push(check(
            "driver",
            true,
            format!("not readable without the admin role ({why}); assuming docker"),
            None,
        )),
        Err(e) => checks.push(check("driver", false, e.to_string(), None)),
    }
    checks
}

pub async fn machine_status(config: &OpenShellConfig) -> MachineSandboxStatus {
    let mut checks = check_all(config).await;
    let protected_paths = crate::protected::listed(&mut checks);
    MachineSandboxStatus {
        provider: ProviderKind::Openshell,
        enforcement: EnforcementLevel::Openshell,
        checks,
        protected_paths,
    }
}
