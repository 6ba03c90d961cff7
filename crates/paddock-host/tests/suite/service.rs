//! The user service on this machine's real `systemctl` and `systemd-analyze`, in a throwaway
//! HOME: the unit verifies (`systemd-analyze --user verify`, no warning), install writes and
//! enables it and is idempotent, status reports it, uninstall leaves the user's systemd
//! folder as it was. No user manager runs here (as in CI), so starting is left to the user
//! and said so; the linger command is printed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use paddock_host::probes::run_program;
use paddock_host::service::{UNIT_NAME, UserService, unit_text};
use paddock_host::{CommandOutput, MachineProbes};
use sandbox_provider::local::{HostProbes, SystemProbes};
use sandbox_provider::openshell::HostEnvironment;

/// Real programs, run with this environment only (a throwaway HOME and config folder).
#[derive(Debug)]
struct RealPrograms {
    vars: Vec<(String, String)>,
}

impl MachineProbes for RealPrograms {
    fn environment(&self) -> HostEnvironment {
        HostEnvironment::from_vars(self.vars.clone())
    }
    fn local(&self) -> Arc<dyn HostProbes> {
        Arc::new(SystemProbes)
    }
    fn run(
        &self,
        program: &str,
        args: &[String],
        timeout: Option<Duration>,
    ) -> Result<CommandOutput, String> {
        let mut command = vec!["-i".to_owned()];
        command.extend(self.vars.iter().map(|(k, v)| format!("{k}={v}")));
        command.push(program.to_owned());
        command.extend(args.iter().cloned());
        run_program("env", &command, timeout)
    }
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| Path::new(&dir).join(tool).is_file())
    })
}

fn require_systemd() {
    let missing: Vec<&str> = ["systemctl", "systemd-analyze"]
        .into_iter()
        .filter(|t| !on_path(t))
        .collect();
    assert!(
        missing.is_empty(),
        "these tests need {missing:?}: install the Debian package systemd (`cargo xtask setup` \
         does)"
    );
}

struct Home {
    root: tempfile::TempDir,
    probes: RealPrograms,
}

impl Home {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let runtime = root.path().join("run");
        std::fs::create_dir_all(&runtime).unwrap();
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        let vars = vec![
            (
                "HOME".to_owned(),
                root.path().join("home").display().to_string(),
            ),
            (
                "XDG_CONFIG_HOME".to_owned(),
                root.path().join("config").display().to_string(),
            ),
            ("XDG_RUNTIME_DIR".to_owned(), runtime.display().to_string()),
            ("USER".to_owned(), "paddock-test".to_owned()),
            ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
        ];
        Self {
            root,
            probes: RealPrograms { vars },
        }
    }

    fn env(&self) -> HostEnvironment {
        self.probes.environment()
    }

    fn service(&self) -> UserService<'_> {
        UserService::new(&self.probes, self.root.path().join("linger")).unwrap()
    }

    /// Every path under the config folder.
    fn config_tree(&self) -> BTreeSet<PathBuf> {
        fn walk(dir: &Path, into: &mut BTreeSet<PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten() {
                let path = entry.unwrap().path();
                into.insert(path.clone());
                if path.is_dir() && !path.is_symlink() {
                    walk(&path, into);
                }
            }
        }
        let mut tree = BTreeSet::new();
        walk(&self.root.path().join("config"), &mut tree);
        tree
    }
}

/// `systemd-analyze --user verify` on `unit`: exit 0 and not one warning.
fn verify(home: &Home, unit: &Path) -> (bool, String) {
    let output = Command::new("systemd-analyze")
        .args(["--user", "verify", "--man=no"])
        .arg(unit)
        .env_clear()
        .envs(home.probes.vars.iter().cloned())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success() && text.trim().is_empty(), text)
}

/// A program the unit can run (systemd checks ExecStart is executable).
fn paddock_program(home: &Home) -> PathBuf {
    let path = home.root.path().join("bin/paddock");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn the_unit_verifies_and_a_broken_one_does_not() {
    require_systemd();
    let home = Home::new();
    let paddock = paddock_program(&home);
    let unit = home.root.path().join(UNIT_NAME);
    std::fs::write(&unit, unit_text(&paddock, &home.env())).unwrap();
    let (ok, text) = verify(&home, &unit);
    assert!(ok, "systemd-analyze found problems:\n{text}");
    // The folders it was installed with are passed on, quoted for systemd.
    assert!(std::fs::read_to_string(&unit).unwrap().contains(&format!(
        "Environment=\"XDG_CONFIG_HOME={}/config\"",
        home.root.path().display()
    )),);
    let odd = HostEnvironment::from_vars([("XDG_STATE_HOME", "/srv/my state/100% \"x\"")]);
    std::fs::write(&unit, unit_text(&paddock, &odd)).unwrap();
    let (ok, text) = verify(&home, &unit);
    assert!(ok, "a quoted value must verify:\n{text}");
    // The check can fail: a unit whose program does not exist, or with a key systemd does
    // not know, is reported.
    let missing = unit_text(&home.root.path().join("bin/no-such-paddock"), &home.env());
    std::fs::write(&unit, missing).unwrap();
    assert!(!verify(&home, &unit).0);
    std::fs::write(
        &unit,
        unit_text(&paddock, &home.env()).replace("Restart=", "Restrat="),
    )
    .unwrap();
    let (ok, text) = verify(&home, &unit);
    assert!(!ok && text.contains("Restrat"), "{text}");
}

#[test]
fn install_is_idempotent_status_tells_and_uninstall_leaves_nothing() {
    require_systemd();
    let home = Home::new();
    let paddock = paddock_program(&home);
    // A folder of the user's own beside the one install creates.
    std::fs::create_dir_all(home.root.path().join("config/mine")).unwrap();
    let before = home.config_tree();
    let service = home.service();

    let status = service.status(&paddock);
    assert!(!status.installed && !status.enabled && status.running != Some(true));

    let first = service.install(&paddock).unwrap();
    let unit = service.unit_file();
    assert_eq!(
        std::fs::read_to_string(&unit).unwrap(),
        unit_text(&paddock, &home.env())
    );
    assert!(verify(&home, &unit).0, "{}", verify(&home, &unit).1);
    assert!(
        first.done.iter().any(|d| d.starts_with("wrote ")),
        "{first:#?}"
    );
    assert!(
        first.done.iter().any(|d| d.starts_with("enabled it")),
        "{first:#?}"
    );
    assert!(first.status.installed && first.status.current && first.status.enabled);
    // No user manager runs here: starting is left to the user, with the command.
    assert!(
        first.left.iter().any(|l| l
            .contains("systemctl --user daemon-reload && systemctl --user start paddock.service")),
        "{first:#?}"
    );
    assert!(first.status.manager_problem.is_some(), "{first:#?}");
    assert!(
        first
            .left
            .iter()
            .any(|l| l.contains("loginctl enable-linger paddock-test")),
        "{first:#?}"
    );
    let link = home
        .root
        .path()
        .join("config/systemd/user/default.target.wants")
        .join(UNIT_NAME);
    assert_eq!(std::fs::read_link(&link).unwrap(), unit);

    // Idempotent: nothing is written or enabled again.
    let modified = std::fs::metadata(&unit).unwrap().modified().unwrap();
    let second = service.install(&paddock).unwrap();
    assert!(second.done.is_empty(), "{second:#?}");
    assert_eq!(
        std::fs::metadata(&unit).unwrap().modified().unwrap(),
        modified
    );

    // A lingering user is reported.
    std::fs::create_dir_all(home.root.path().join("linger")).unwrap();
    std::fs::write(home.root.path().join("linger/paddock-test"), "").unwrap();
    assert!(service.status(&paddock).lingering);

    let removed = service.uninstall(&paddock).unwrap();
    assert!(
        !removed.status.installed && !removed.status.enabled,
        "{removed:#?}"
    );
    assert_eq!(
        home.config_tree(),
        before,
        "uninstall left something behind"
    );
    let again = service.uninstall(&paddock).unwrap();
    assert!(again.done.is_empty(), "{again:#?}");
}

#[test]
fn a_changed_unit_is_rewritten_with_a_backup_that_uninstall_removes_too() {
    require_systemd();
    let home = Home::new();
    let paddock = paddock_program(&home);
    let service = home.service();
    std::fs::create_dir_all(service.unit_file().parent().unwrap()).unwrap();
    // Another unit of the user's keeps its folder.
    std::fs::write(
        service.unit_file().with_file_name("other.service"),
        "[Service]\n",
    )
    .unwrap();
    let before = home.config_tree();
    std::fs::write(service.unit_file(), "[Service]\nExecStart=/bin/false\n").unwrap();
    assert!(!service.status(&paddock).current);
    let change = service.install(&paddock).unwrap();
    assert!(
        change.done[0].contains("the previous one is in"),
        "{change:#?}"
    );
    assert!(service.status(&paddock).current);
    service.uninstall(&paddock).unwrap();
    assert_eq!(home.config_tree(), before);
    assert!(service.install(Path::new("relative/paddock")).is_err());
}
