//! Preflight: each missing piece of the machine refuses the session with the exact fix, and
//! never falls back to running without a wall. The probes are simulated; the rest is real.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use crate::support;

use std::path::Path;
use std::sync::Arc;

use sandbox_provider::local::{HostProbes, LocalProvider, SystemProbes, UsernsSettings};
use sandbox_provider::{ProviderError, SandboxProvider};
use support::*;

/// The machine as the preflight sees it; each test breaks one piece.
#[derive(Debug, Clone)]
struct SimulatedMachine {
    bwrap: Result<String, String>,
    userns: UsernsSettings,
    euid: u32,
    landlock: Option<u32>,
    seccomp: Result<(), String>,
}

impl Default for SimulatedMachine {
    fn default() -> Self {
        Self {
            bwrap: Ok("bubblewrap 0.8.0".into()),
            userns: UsernsSettings {
                apparmor_restrict: None,
                unprivileged_clone: None,
                max_user_namespaces: Some(15000),
            },
            euid: 1000,
            landlock: Some(7),
            seccomp: Ok(()),
        }
    }
}

impl HostProbes for SimulatedMachine {
    fn bwrap_version(&self, _bwrap: &Path) -> Result<String, String> {
        self.bwrap.clone()
    }
    fn userns(&self) -> UsernsSettings {
        self.userns.clone()
    }
    fn euid(&self) -> u32 {
        self.euid
    }
    fn landlock_abi(&self) -> Option<u32> {
        self.landlock
    }
    fn seccomp(&self) -> Result<(), String> {
        self.seccomp.clone()
    }
}

/// Starts a session on a machine with `machine`'s probes; asserts it is refused as
/// unavailable with `fix` in the message, and that no wall folder was left.
async fn assert_refused(machine: SimulatedMachine, check: &str, fix: &str) {
    let w = world();
    let mut config = w.provider.config().clone();
    config.probes = Arc::new(machine);
    let provider = LocalProvider::new(config.clone());
    let status = provider.status().await;
    assert!(!status.ready());
    let failed: Vec<&str> = status
        .checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(failed, [check], "{status:#?}");
    let Err(err) = provider.start(&w.request(&[]), &|_| {}).await else {
        panic!("a session started on a machine without {check}")
    };
    assert!(matches!(err, ProviderError::Unavailable { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains(fix),
        "the refusal does not name the fix `{fix}`: {message}"
    );
    let left = std::fs::read_dir(&config.state_dir)
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(left, 0, "a refused start left a wall folder");
}

#[tokio::test]
async fn missing_bubblewrap_is_refused_with_the_install_command() {
    let machine = SimulatedMachine {
        bwrap: Err("bwrap could not be run: No such file or directory".into()),
        ..Default::default()
    };
    assert_refused(machine, "bubblewrap", "sudo apt-get install bubblewrap").await;
}

#[tokio::test]
async fn old_bubblewrap_is_refused() {
    let machine = SimulatedMachine {
        bwrap: Ok("bubblewrap 0.3.1".into()),
        ..Default::default()
    };
    assert_refused(machine, "bubblewrap", "upgrade bubblewrap").await;
}

#[tokio::test]
async fn the_ubuntu_apparmor_userns_restriction_is_refused_with_the_narrow_profile_fix() {
    let machine = SimulatedMachine {
        userns: UsernsSettings {
            apparmor_restrict: Some(1),
            unprivileged_clone: None,
            max_user_namespaces: Some(15000),
        },
        ..Default::default()
    };
    assert_refused(
        machine,
        "user namespaces",
        "sudo apparmor_parser -r /etc/apparmor.d/paddock-bwrap",
    )
    .await;
}

#[tokio::test]
async fn disabled_user_namespaces_are_refused() {
    let clone_off = SimulatedMachine {
        userns: UsernsSettings {
            apparmor_restrict: None,
            unprivileged_clone: Some(0),
            max_user_namespaces: Some(15000),
        },
        ..Default::default()
    };
    assert_refused(
        clone_off,
        "user namespaces",
        "kernel.unprivileged_userns_clone=1",
    )
    .await;
    let none = SimulatedMachine {
        userns: UsernsSettings {
            apparmor_restrict: None,
            unprivileged_clone: None,
            max_user_namespaces: Some(0),
        },
        euid: 0,
        ..Default::default()
    };
    assert_refused(none, "user namespaces", "user.max_user_namespaces=15000").await;
}

#[tokio::test]
async fn missing_or_old_landlock_is_refused() {
    assert_refused(
        SimulatedMachine {
            landlock: None,
            ..Default::default()
        },
        "landlock",
        "lsm=landlock",
    )
    .await;
    assert_refused(
        SimulatedMachine {
            landlock: Some(2),
            ..Default::default()
        },
        "landlock",
        "Linux 6.2",
    )
    .await;
}

#[tokio::test]
async fn missing_seccomp_is_refused() {
    let machine = SimulatedMachine {
        seccomp: Err("the kernel has no seccomp support".into()),
        ..Default::default()
    };
    assert_refused(machine, "seccomp", "CONFIG_SECCOMP_FILTER").await;
}

#[tokio::test]
async fn a_missing_runner_is_refused() {
    let w = world();
    let mut config = w.provider.config().clone();
    config.runner = w.root.path().join("no-such-runner");
    let err = LocalProvider::new(config)
        .start(&w.request(&[]), &|_| {})
        .await
        .err()
        .unwrap();
    let err = err.to_string();
    assert!(
        err.contains("no-such-runner") && err.contains("cargo xtask runner"),
        "{err}"
    );
}

#[tokio::test]
async fn this_machine_passes_the_real_preflight() {
    let w = world();
    let status = w.provider.status().await;
    assert!(status.ready(), "{}", status.failure_summary());
    let landlock = status.checks.iter().find(|c| c.name == "landlock").unwrap();
    assert!(
        landlock.detail.starts_with("Landlock ABI "),
        "{}",
        landlock.detail
    );
    assert!(SystemProbes.landlock_abi().unwrap() >= 3);
}
