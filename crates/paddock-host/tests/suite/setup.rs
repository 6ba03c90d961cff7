//! `Host::setup_plan` / `setup_apply` on simulated machines: the probes (kernel settings, the
//! programs setup asks and runs, the environment OpenShell's files are found by) are
//! injected; files are real files in temp folders; the OpenShell gateway is the
//! `GatewayDouble` (real gRPC over mTLS) for Health and credentials. Checked: the exact steps
//! and diffs (insta), root-only fixes left to the user (never sudo, never lifting the AppArmor
//! restriction), backups, comments kept, idempotence, the wall selected only when every check
//! passes, a stale plan refused.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use paddock_host::paths::Paths;
use paddock_host::wiring::Helpers;
use paddock_host::{
    CommandOutput, Host, HostOptions, MachineProbes, SetupAction, SetupPlan, SetupRequest,
};
use protocol::ProviderKind;
use sandbox_provider::local::{HostProbes, UsernsSettings};
use sandbox_provider::openshell::HostEnvironment;
use test_support::gateway_double::{
    DoubleConfig, GatewayDouble, Registration, TestPki, register_gateway,
};

const IMAGE: &str = "ghcr.io/example/paddock-sandbox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

#[derive(Debug, Clone)]
struct Kernel {
    userns: UsernsSettings,
}

impl HostProbes for Kernel {
    fn bwrap_version(&self, _bwrap: &Path) -> Result<String, String> {
        Ok("bubblewrap 0.9.0".into())
    }
    fn userns(&self) -> UsernsSettings {
        self.userns.clone()
    }
    fn euid(&self) -> u32 {
        1000
    }
    fn landlock_abi(&self) -> Option<u32> {
        Some(4)
    }
    fn seccomp(&self) -> Result<(), String> {
        Ok(())
    }
}

/// A machine: its environment, kernel, and the programs setup asks (`openshell --version`,
/// `docker image inspect`) and runs (`docker pull`), each call recorded.
#[derive(Debug)]
struct Simulated {
    vars: Vec<(String, String)>,
    kernel: Kernel,
    openshell_version: Option<&'static str>,
    image_present: Mutex<bool>,
    ran: Mutex<Vec<String>>,
}

impl Simulated {
    fn new(root: &Path) -> Self {
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        // The package manager setup names in its commands is the one on PATH.
        std::fs::write(bin.join("apt-get"), "").unwrap();
        Self {
            vars: vec![
                ("HOME".into(), root.join("home").display().to_string()),
                (
                    "XDG_CONFIG_HOME".into(),
                    root.join("xdg").display().to_string(),
                ),
                ("PATH".into(), bin.display().to_string()),
                (
                    "OPENSHELL_SYSTEM_GATEWAY_DIR".into(),
                    root.join("etc-openshell").display().to_string(),
                ),
            ],
            kernel: Kernel {
                userns: UsernsSettings::default(),
            },
            openshell_version: Some("openshell 0.1.4"),
            image_present: Mutex::new(false),
            ran: Mutex::new(Vec::new()),
        }
    }

    fn ran(&self) -> Vec<String> {
        self.ran.lock().unwrap().clone()
    }
}

fn output(success: bool, stdout: &str, stderr: &str) -> CommandOutput {
    CommandOutput {
        success,
        code: Some(if success { 0 } else { 1 }),
        stdout: stdout.into(),
        stderr: stderr.into(),
    }
}

impl MachineProbes for Simulated {
    fn environment(&self) -> HostEnvironment {
        HostEnvironment::from_vars(self.vars.clone())
    }
    fn local(&self) -> Arc<dyn HostProbes> {
        Arc::new(self.kernel.clone())
    }
    fn run(
        &self,
        program: &str,
        args: &[String],
        _timeout: Option<Duration>,
    ) -> Result<CommandOutput, String> {
        let line = format!("{program} {}", args.join(" "));
        self.ran.lock().unwrap().push(line.clone());
        match (program, args.first().map(String::as_str)) {
            ("openshell", Some("--version")) => match self.openshell_version {
                Some(version) => Ok(output(true, &format!("{version}\n"), "")),
                None => Err("`openshell` is not installed (not on PATH)".into()),
            },
            ("docker", Some("image")) => Ok(if *self.image_present.lock().unwrap() {
                output(true, "sha256:abc\n", "")
            } else {
                output(false, "", &format!("Error: No such image: {IMAGE}\n"))
            }),
            ("docker", Some("pull")) => {
                *self.image_present.lock().unwrap() = true;
                Ok(output(true, "pulled\n", ""))
            }
            _ => Err(format!("the simulated machine has no `{line}`")),
        }
    }
}

struct Machine {
    root: tempfile::TempDir,
    probes: Arc<Simulated>,
    host: Host,
}

impl Machine {
    async fn open(config: &str, shape: impl FnOnce(&mut Simulated)) -> Self {
        let root = tempfile::tempdir().unwrap();
        let mut probes = Simulated::new(root.path());
        shape(&mut probes);
        let probes = Arc::new(probes);
        let paths = Paths::under(&root.path().join("paddock"));
        std::fs::create_dir_all(&paths.config_dir).unwrap();
        std::fs::write(paths.config_file(), config).unwrap();
        let mut options = HostOptions::new(paths);
        options.helpers = Some(Helpers {
            tool_runner: test_support::binaries::tool_runner(),
            paddock_wall: test_support::binaries::paddock_wall(),
        });
        options.probes = Some(probes.clone());
        let host = Host::open(options).await.unwrap();
        Self { root, probes, host }
    }

    fn config_file(&self) -> PathBuf {
        self.host.paths().config_file()
    }

    fn gateway_toml(&self) -> PathBuf {
        self.root.path().join("xdg/openshell/gateway.toml")
    }

    /// The plan with this machine's temp root replaced by `<root>`, for snapshots.
    fn shown(&self, plan: &SetupPlan) -> String {
        let mut text = String::new();
        for step in &plan.steps {
            text.push_str(&format!(
                "== {} (check: {})
{}
",
                step.id, step.check, step.summary
            ));
            match &step.action {
                SetupAction::EditFile { path, diff } => {
                    text.push_str(&format!(
                        "edit {path}:
{diff}"
                    ));
                }
                SetupAction::RunCommand { argv } => {
                    text.push_str(&format!(
                        "run: {}
",
                        argv.join(" ")
                    ));
                }
                SetupAction::ByHand {
                    command,
                    needs_root,
                } => text.push_str(&format!(
                    "by hand (needs root: {needs_root}):
{command}
"
                )),
            }
            if let Some(then) = &step.then {
                text.push_str(&format!(
                    "then: {then}
"
                ));
            }
        }
        text.replace(&self.root.path().display().to_string(), "<root>")
    }

    async fn apply(&self, plan: &SetupPlan) -> paddock_host::SetupOutcome {
        self.host
            .setup_apply(SetupRequest {
                provider: plan.provider,
                fingerprint: plan.fingerprint.clone(),
                steps: None,
            })
            .await
            .unwrap()
    }
}

const USER_CONFIG: &str =
    "# My machine. Keep the model local.\n[models]\nprovider = \"ollama\" # no key needed\n";

#[tokio::test]
async fn apparmor_restricted_userns_is_left_to_the_user_with_the_narrow_profile_fix() {
    let machine = Machine::open(USER_CONFIG, |m| {
        m.kernel.userns.apparmor_restrict = Some(1);
    })
    .await;
    let plan = machine.host.setup_plan(ProviderKind::Local).await.unwrap();
    assert!(!plan.status.ready());
    assert_eq!(plan.steps.len(), 1, "{plan:#?}");
    let step = &plan.steps[0];
    assert_eq!(step.id, "apparmor-bwrap-profile");
    let SetupAction::ByHand {
        command,
        needs_root,
    } = &step.action
    else {
        panic!("{step:?}");
    };
    assert!(needs_root);
    assert!(command.contains("apparmor_parser -r /etc/apparmor.d/paddock-bwrap"));
    assert!(command.contains("userns,"));
    assert!(
        !command.contains("apparmor_restrict_unprivileged_userns=0"),
        "the restriction is never lifted: {command}"
    );
    insta::assert_snapshot!(machine.shown(&plan));
    // Nothing for Paddock to make: applying changes no file, selects nothing.
    let outcome = machine.apply(&plan).await;
    assert!(outcome.applied.is_empty() && outcome.failed.is_none());
    assert_eq!(
        std::fs::read_to_string(machine.config_file()).unwrap(),
        USER_CONFIG
    );
    assert!(
        machine.probes.ran().is_empty(),
        "nothing was run: {:?}",
        machine.probes.ran()
    );
}

#[tokio::test]
async fn old_kernels_get_the_sysctl_and_a_missing_bwrap_the_package_managers_command() {
    let machine = Machine::open("", |m| {
        m.kernel.userns.unprivileged_clone = Some(0);
    })
    .await;
    let plan = machine.host.setup_plan(ProviderKind::Local).await.unwrap();
    let ids: Vec<&str> = plan.steps.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["enable-user-namespaces"]);
    let SetupAction::ByHand { command, .. } = &plan.steps[0].action else {
        panic!()
    };
    assert!(
        command.starts_with("sudo sysctl -w kernel.unprivileged_userns_clone=1"),
        "{command}"
    );
}

#[tokio::test]
async fn a_ready_wall_is_selected_keeping_comments_with_a_backup_and_a_second_run_changes_nothing()
{
    let machine = Machine::open(USER_CONFIG, |_| {}).await;
    let plan = machine.host.setup_plan(ProviderKind::Local).await.unwrap();
    assert!(plan.status.ready(), "{:#?}", plan.status);
    assert!(!plan.selected && !plan.done());
    assert_eq!(plan.steps.len(), 1);
    assert_eq!(plan.steps[0].id, "select-provider");
    insta::assert_snapshot!(machine.shown(&plan));

    let outcome = machine.apply(&plan).await;
    assert_eq!(outcome.applied.len(), 1, "{outcome:#?}");
    let backup = PathBuf::from(outcome.applied[0].backup.clone().unwrap());
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), USER_CONFIG);
    let written = std::fs::read_to_string(machine.config_file()).unwrap();
    assert!(
        written.starts_with(USER_CONFIG),
        "comments and order kept:\n{written}"
    );
    assert!(
        written.contains("[sandbox]\nprovider = \"local\""),
        "{written}"
    );
    assert!(outcome.after.done() && outcome.after.steps.is_empty());
    assert_eq!(machine.host.config().provider, ProviderKind::Local);

    // Idempotent: nothing left, nothing written, no new backup.
    let again = machine.host.setup_plan(ProviderKind::Local).await.unwrap();
    assert!(again.done() && again.steps.is_empty());
    let outcome = machine.apply(&again).await;
    assert!(outcome.applied.is_empty());
    assert_eq!(
        std::fs::read_to_string(machine.config_file()).unwrap(),
        written
    );
    let backups = std::fs::read_dir(machine.host.paths().config_dir.clone())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".bak")
        })
        .count();
    assert_eq!(backups, 1);

    // A plan that no longer matches the machine is refused.
    let error = machine.apply_stale(&plan).await;
    assert_eq!(error, "setup_changed");
}

impl Machine {
    async fn apply_stale(&self, plan: &SetupPlan) -> &'static str {
        self.host
            .setup_apply(SetupRequest {
                provider: plan.provider,
                fingerprint: plan.fingerprint.clone(),
                steps: None,
            })
            .await
            .unwrap_err()
            .code()
    }
}

/// A gateway.toml kept by hand: comments, an order of its own, a wrong value with a comment.
const GATEWAY_TOML: &str = "# My gateway.\n[openshell]\nversion = 2\n\n[openshell.gateway]\ncompute_driver = \"docker\" # podman is too old here\n\n[openshell.drivers.docker]\nenable_bind_mounts = false   # off until needed\n";

fn openshell_config(gateway: &str) -> String {
    format!("# Mine.\n[openshell]\n{gateway}image = \"{IMAGE}\"\n")
}

#[tokio::test]
async fn openshell_edits_gateway_toml_pulls_the_image_and_leaves_the_gateway_to_the_user() {
    let machine = Machine::open(&openshell_config(""), |_| {}).await;
    std::fs::create_dir_all(machine.gateway_toml().parent().unwrap()).unwrap();
    std::fs::write(machine.gateway_toml(), GATEWAY_TOML).unwrap();
    let plan = machine
        .host
        .setup_plan(ProviderKind::Openshell)
        .await
        .unwrap();
    let failing: Vec<&str> = plan
        .status
        .checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| c.name.as_str())
        .collect();
    assert!(
        failing.contains(&"gateway.toml") && failing.contains(&"image"),
        "{failing:?}"
    );
    assert!(!failing.contains(&"openshell CLI"));
    let ids: Vec<&str> = plan.steps.iter().map(|s| s.id.as_str()).collect();
    assert!(
        !ids.contains(&"select-provider"),
        "not every check passes: {ids:?}"
    );
    assert!(
        ids.contains(&"gateway-bind-mounts") && ids.contains(&"pull-image"),
        "{ids:?}"
    );
    insta::assert_snapshot!(machine.shown(&plan));

    let outcome = machine.apply(&plan).await;
    let applied: Vec<&str> = outcome.applied.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(
        applied,
        ["gateway-bind-mounts", "pull-image"],
        "{outcome:#?}"
    );
    assert!(
        outcome
            .then
            .iter()
            .any(|t| t.contains("restart the gateway"))
    );
    assert!(
        machine
            .probes
            .ran()
            .iter()
            .any(|r| r == &format!("docker pull {IMAGE}"))
    );
    let edited = std::fs::read_to_string(machine.gateway_toml()).unwrap();
    for line in GATEWAY_TOML.lines().filter(|l| l.contains('#')) {
        let kept = line.replace("false", "true");
        assert!(edited.contains(&kept), "lost {line:?}:\n{edited}");
    }
    let backup = outcome.applied[0].backup.clone().unwrap();
    assert_eq!(std::fs::read_to_string(backup).unwrap(), GATEWAY_TOML);
    let after: Vec<&str> = outcome
        .after
        .status
        .checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| c.name.as_str())
        .collect();
    assert!(
        !after.contains(&"gateway.toml") && !after.contains(&"image"),
        "{after:?}"
    );
    assert!(
        outcome.after.automatic().count() == 0,
        "{:#?}",
        outcome.after.steps
    );
    // The machine config was not switched.
    assert_ne!(machine.host.config().provider, ProviderKind::Openshell);

    // Idempotent: a second apply edits nothing.
    let again = machine.apply(&outcome.after).await;
    assert!(again.applied.is_empty());
    assert_eq!(
        std::fs::read_to_string(machine.gateway_toml()).unwrap(),
        edited
    );
}

#[tokio::test]
async fn an_incompatible_or_missing_cli_is_an_install_step_needing_root() {
    for version in [Some("openshell 0.2.0"), None] {
        let machine = Machine::open(&openshell_config(""), |m| m.openshell_version = version).await;
        let plan = machine
            .host
            .setup_plan(ProviderKind::Openshell)
            .await
            .unwrap();
        let step = plan
            .steps
            .iter()
            .find(|s| s.id == "install-openshell")
            .unwrap();
        assert!(matches!(
            &step.action,
            SetupAction::ByHand { needs_root: true, command } if command.contains("0.1.")
        ));
    }
}

/// A machine whose OpenShell gateway is the double, registered with working mTLS credentials.
async fn with_double(reject: bool) -> (Machine, GatewayDouble) {
    let machine = Machine::open(&openshell_config("gateway = \"double\"\n"), |m| {
        *m.image_present.lock().unwrap() = true;
    })
    .await;
    let p = machine.root.path();
    let pki = TestPki::generate();
    let mut config = DoubleConfig::new(p.join("double"));
    std::fs::create_dir_all(&config.state_dir).unwrap();
    config.tls = Some(pki.clone());
    let double = GatewayDouble::start(config).await.unwrap();
    double.reject_credentials(reject);
    std::fs::create_dir_all(p.join("etc-openshell")).unwrap();
    register_gateway(
        &p.join("xdg/openshell"),
        "double",
        &double.endpoint(),
        &Registration::Mtls(&pki),
    );
    let fixed = "[openshell]\nversion = 2\n[openshell.drivers.docker]\nallow_driver_config = true\nenable_bind_mounts = true\n[openshell.drivers.docker.resource_admission]\nenabled = false\n";
    std::fs::write(machine.gateway_toml(), fixed).unwrap();
    (machine, double)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openshell_is_selected_only_when_every_check_passes_against_the_gateway_double() {
    let (machine, _double) = with_double(false).await;
    let plan = machine
        .host
        .setup_plan(ProviderKind::Openshell)
        .await
        .unwrap();
    assert!(plan.status.ready(), "{:#?}", plan.status);
    let ids: Vec<&str> = plan.steps.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["select-provider"]);
    let outcome = machine.apply(&plan).await;
    assert!(outcome.after.done(), "{outcome:#?}");
    assert_eq!(machine.host.config().provider, ProviderKind::Openshell);
    let written = std::fs::read_to_string(machine.config_file()).unwrap();
    assert!(written.starts_with("# Mine.\n"), "{written}");

    // Refused credentials: a failing check, so no switch is offered.
    let (refused, _double) = with_double(true).await;
    let plan = refused
        .host
        .setup_plan(ProviderKind::Openshell)
        .await
        .unwrap();
    assert!(!plan.status.ready(), "{:#?}", plan.status);
    assert!(
        plan.steps.iter().all(|s| s.id != "select-provider"),
        "{:#?}",
        plan.steps
    );
}
