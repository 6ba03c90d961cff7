//! The OpenShell checks the machine answers (the provider's own checks ask the gateway): the
//! `openshell` CLI and its version, the gateway's `gateway.toml` allowing bind mounts for its
//! driver, the sandbox image present for that driver; and the setup steps for every failed
//! OpenShell check.

use std::path::PathBuf;

use protocol::{MachineSandboxStatus, StatusCheck};
use sandbox_provider::openshell::{HostEnvironment, OPENSHELL_WIRE_VERSION, discovery};

use super::gateway_toml::{self, RESTART_GATEWAY, Review};
use super::local::other_step;
use super::{PlannedEdit, SetupAction, SetupStep};
use crate::probes::{MachineProbes, PROBE_TIMEOUT};

/// The package-managed local gateway's endpoint and the name Paddock registers it under.
const LOCAL_ENDPOINT: &str = "https://127.0.0.1:17670";
const LOCAL_NAME: &str = "openshell";

/// The `openshell` CLI as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cli {
    Found { version: String, compatible: bool },
    Missing(String),
}

/// Whether the configured sandbox image is on the machine the gateway runs containers on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Image {
    NotConfigured,
    /// The gateway runs elsewhere: its images are its operator's.
    Remote(String),
    Present {
        tool: String,
    },
    Absent {
        tool: String,
        image: String,
    },
    Unknown {
        tool: String,
        why: String,
    },
}

/// What the machine says about OpenShell beyond the gateway's answers.
#[derive(Debug, Clone)]
pub(crate) struct Inspection {
    pub cli: Cli,
    /// The gateway's host when it is not this machine.
    pub remote: Option<String>,
    /// `gateway.toml` (path, current text, review) when the gateway is local.
    pub gateway_toml: Option<(PathBuf, Option<String>, Review)>,
    pub image: Image,
    /// The package-managed gateway's certificates exist (`openshell gateway add --local`
    /// can import them).
    pub local_bundle: bool,
}

/// The minor release line Paddock speaks, `0.1`.
fn wire_minor() -> &'static str {
    OPENSHELL_WIRE_VERSION
        .rsplit_once('.')
        .map_or("0.1", |(minor, _)| minor)
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|a| (*a).to_owned()).collect()
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `$XDG_STATE_HOME/openshell/tls/ca.crt` (default `~/.local/state`): the bundle the
/// package-managed gateway writes.
fn local_bundle(env: &HostEnvironment) -> bool {
    let state = match (env.var("XDG_STATE_HOME"), env.var("HOME")) {
        (Some(state), _) => PathBuf::from(state),
        (None, Some(home)) => PathBuf::from(home).join(".local").join("state"),
        (None, None) => return false,
    };
    state.join("openshell/tls/ca.crt").is_file()
}

/// Asks the machine (blocking: runs programs and reads files).
pub(crate) fn inspect(probes: &dyn MachineProbes, image: Option<&str>) -> Inspection {
    let env = probes.environment();
    let cli = match probes.run("openshell", &args(&["--version"]), Some(PROBE_TIMEOUT)) {
        Ok(out) if out.success => {
            let version = out
                .stdout
                .split_whitespace()
                .last()
                .unwrap_or("")
                .trim_start_matches('v')
                .to_owned();
            Cli::Found {
                compatible: version.starts_with(&format!("{}.", wire_minor())),
                version,
            }
        }
        Ok(out) => Cli::Missing(format!(
            "`openshell --version` failed ({}): {}",
            out.code.map_or("a signal".into(), |c| format!("exit {c}")),
            out.tail(2)
        )),
        Err(why) => Cli::Missing(why),
    };
    let remote = discovery::discover(&env)
        .ok()
        .filter(|target| !is_loopback(&target.host))
        .map(|target| target.host);
    let gateway_toml = if remote.is_some() {
        None
    } else {
        gateway_toml::location(&env).map(|path| {
            let text = std::fs::read_to_string(&path).ok();
            let review = gateway_toml::review(text.as_deref(), env.var("OPENSHELL_COMPUTE_DRIVER"));
            (path, text, review)
        })
    };
    let image = match (image.filter(|i| !i.is_empty()), &remote) {
        (None, _) => Image::NotConfigured,
        (Some(_), Some(host)) => Image::Remote(host.clone()),
        (Some(image), None) => {
            let driver = gateway_toml
                .as_ref()
                .map_or(gateway_toml::ASSUMED_DRIVER, |(_, _, r)| r.driver.as_str());
            image_state(probes, driver, image)
        }
    };
    Inspection {
        cli,
        remote,
        gateway_toml,
        image,
        local_bundle: local_bundle(&env),
    }
}

fn image_state(probes: &dyn MachineProbes, driver: &str, image: &str) -> Image {
    let tool = if driver == "podman" {
        "podman"
    } else {
        "docker"
    };
    let asked = if tool == "podman" {
        probes.run(
            tool,
            &args(&["image", "exists", image]),
            Some(PROBE_TIMEOUT),
        )
    } else {
        probes.run(
            tool,
            &args(&["image", "inspect", "--format", "{{.Id}}", image]),
            Some(PROBE_TIMEOUT),
        )
    };
    match asked {
        Ok(out) if out.success => Image::Present { tool: tool.into() },
        Ok(out)
            if (tool == "podman" && out.code == Some(1))
                || out.stderr.to_ascii_lowercase().contains("no such image") =>
        {
            Image::Absent {
                tool: tool.into(),
                image: image.into(),
            }
        }
        Ok(out) => Image::Unknown {
            tool: tool.into(),
            why: out.tail(3),
        },
        Err(why) => Image::Unknown {
            tool: tool.into(),
            why,
        },
    }
}

fn check(name: &str, ok: bool, detail: String, fix: Option<String>) -> StatusCheck {
    StatusCheck {
        name: name.to_owned(),
        ok,
        fix: (!ok).then_some(fix).flatten(),
        detail,
    }
}

const INSTALL_OPENSHELL: &str = "install OpenShell 0.1.x as root: the `openshell` and \
                                 `openshell-gateway` packages of a 0.1.x release";
/// Installing the downloaded packages (their file names carry the release and architecture).
const INSTALL_COMMAND: &str = "sudo apt-get install ./openshell*_0.1.*.deb   # the openshell and \
                               openshell-gateway .deb files of an OpenShell 0.1.x release (Fedora: \
                               sudo dnf install ./openshell*-0.1.*.rpm)";

impl Inspection {
    /// The check that goes before the gateway's: the CLI.
    pub(crate) fn cli_check(&self) -> StatusCheck {
        match &self.cli {
            Cli::Found {
                version,
                compatible,
            } => check(
                "openshell CLI",
                *compatible,
                format!(
                    "openshell {version}; Paddock speaks OpenShell {}.x ({OPENSHELL_WIRE_VERSION})",
                    wire_minor()
                ),
                Some(INSTALL_OPENSHELL.into()),
            ),
            Cli::Missing(why) => check(
                "openshell CLI",
                false,
                why.clone(),
                Some(INSTALL_OPENSHELL.into()),
            ),
        }
    }

    /// The checks that go after the gateway's: its `gateway.toml` and the image.
    pub(crate) fn machine_checks(&self) -> Vec<StatusCheck> {
        let toml = match (&self.remote, &self.gateway_toml) {
            (Some(host), _) => check(
                "gateway.toml",
                true,
                format!(
                    "the gateway runs on {host}, not here: its gateway.toml is its operator's \
                     (a refusal of bind mounts shows when a session starts)"
                ),
                None,
            ),
            (None, None) => check(
                "gateway.toml",
                false,
                "neither HOME nor XDG_CONFIG_HOME is set, so the gateway's config file cannot \
                 be found"
                    .into(),
                Some("set HOME".into()),
            ),
            (None, Some((path, _, review))) => {
                let driver = if review.driver_assumed {
                    format!(
                        "the `{}` driver (assumed: neither the file nor OPENSHELL_COMPUTE_DRIVER \
                         names one)",
                        review.driver
                    )
                } else {
                    format!("the `{}` driver", review.driver)
                };
                match (&review.blocked, review.allows_bind_mounts()) {
                    (Some(why), _) => check(
                        "gateway.toml",
                        false,
                        format!("{}: {why}", path.display()),
                        Some(format!("edit {} by hand", path.display())),
                    ),
                    (None, true) => check(
                        "gateway.toml",
                        true,
                        format!("{} allows bind mounts for {driver}", path.display()),
                        None,
                    ),
                    (None, false) => check(
                        "gateway.toml",
                        false,
                        format!(
                            "{} keeps bind mounts off for {driver}: {}",
                            path.display(),
                            review.missing.join("; ")
                        ),
                        Some(
                            "paddock machine sandbox setup --provider openshell edits it, then \
                             restart the gateway"
                                .into(),
                        ),
                    ),
                }
            }
        };
        let image = match &self.image {
            Image::NotConfigured => check(
                "image",
                false,
                "no sandbox image is set ([openshell] image in the machine config)".into(),
                Some(
                    "set [openshell] image = \"REPOSITORY@sha256:DIGEST\" in the machine config \
                     (an image pinned by digest; see docs/openshell.md)"
                        .into(),
                ),
            ),
            Image::Remote(host) => check(
                "image",
                true,
                format!("the gateway on {host} pulls the image itself (not checked here)"),
                None,
            ),
            Image::Present { tool } => check(
                "image",
                true,
                format!("the sandbox image is in {tool}'s local store"),
                None,
            ),
            Image::Absent { tool, image } => check(
                "image",
                false,
                format!(
                    "the sandbox image is not in {tool}'s local store: the first session would \
                     wait for its pull (several GB)"
                ),
                Some(format!("{tool} pull {image}")),
            ),
            Image::Unknown { tool, why } => check(
                "image",
                false,
                format!("{tool} could not say whether the sandbox image is present: {why}"),
                Some(format!(
                    "make `{tool}` usable by this user (is its daemon running? may this user \
                     reach its socket?)"
                )),
            ),
        };
        vec![toml, image]
    }
}

fn run(check: &StatusCheck, id: &str, summary: String, argv: &[&str]) -> SetupStep {
    SetupStep::new(
        id,
        &check.name,
        summary,
        SetupAction::RunCommand { argv: args(argv) },
    )
}

fn by_hand(check: &StatusCheck, id: &str, summary: String, command: String) -> SetupStep {
    let needs_root = command.contains("sudo ");
    SetupStep::new(
        id,
        &check.name,
        summary,
        SetupAction::ByHand {
            command,
            needs_root,
        },
    )
}

/// One or more steps per failed check of the OpenShell `status` (the machine's and the
/// gateway's).
pub(crate) fn steps(status: &MachineSandboxStatus, inspection: &Inspection) -> Vec<SetupStep> {
    let cli_ok = matches!(
        inspection.cli,
        Cli::Found {
            compatible: true,
            ..
        }
    );
    let mut steps = Vec::new();
    for check in status.checks.iter().filter(|c| !c.ok) {
        match check.name.as_str() {
            "openshell CLI" => steps.push(by_hand(
                check,
                "install-openshell",
                format!("{}: install OpenShell 0.1.x (needs root)", check.detail),
                INSTALL_COMMAND.into(),
            )),
            "gateway" if cli_ok && inspection.local_bundle => {
                steps.push(run(
                    check,
                    "register-gateway",
                    format!("register the local gateway ({LOCAL_ENDPOINT}) with its certificates"),
                    &[
                        "openshell",
                        "gateway",
                        "add",
                        LOCAL_ENDPOINT,
                        "--local",
                        "--name",
                        LOCAL_NAME,
                    ],
                ));
                steps.push(run(
                    check,
                    "select-gateway",
                    format!("make `{LOCAL_NAME}` the active gateway"),
                    &["openshell", "gateway", "select", LOCAL_NAME],
                ));
            }
            "gateway" => steps.push(by_hand(
                check,
                "register-gateway",
                "register a gateway once OpenShell is installed and its gateway has started \
                 (for a remote gateway: openshell gateway add <url>)"
                    .into(),
                format!(
                    "openshell gateway add {LOCAL_ENDPOINT} --local --name {LOCAL_NAME} && \
                     openshell gateway select {LOCAL_NAME}"
                ),
            )),
            "connection" | "health" => steps.push(by_hand(
                check,
                "start-gateway",
                format!("the gateway does not answer: {}", check.detail),
                "systemctl --user start openshell-gateway   # or run `openshell-gateway`".into(),
            )),
            "gateway.toml" => match &inspection.gateway_toml {
                Some((path, before, review)) if review.fixed.is_some() => {
                    let after = review.fixed.clone().unwrap_or_default();
                    let mut step = SetupStep::new(
                        "gateway-bind-mounts",
                        &check.name,
                        format!(
                            "let the gateway bind-mount session folders ({} driver)",
                            review.driver
                        ),
                        SetupAction::EditFile {
                            path: path.display().to_string(),
                            diff: super::files::unified_diff(path, before.as_deref(), &after),
                        },
                    );
                    step.then = Some(format!("restart the gateway: {RESTART_GATEWAY}"));
                    step.edit = Some(PlannedEdit {
                        path: path.clone(),
                        text: after,
                        new_mode: 0o600,
                        reloads_config: false,
                    });
                    steps.push(step);
                }
                _ => steps.push(other_step(check)),
            },
            "image" => match &inspection.image {
                Image::Absent { tool, image } => steps.push(run(
                    check,
                    "pull-image",
                    "pull the sandbox image now, so the first session does not wait for it".into(),
                    &[tool, "pull", image],
                )),
                _ => steps.push(other_step(check)),
            },
            _ => steps.push(other_step(check)),
        }
    }
    steps
}
