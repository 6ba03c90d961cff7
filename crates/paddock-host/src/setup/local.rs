//! Setup steps for the local wall's failed checks. What the local wall lacks (bubblewrap, user
//! namespaces, a kernel feature) needs root, so each step is the exact command, left to the
//! user, with why; Paddock never runs `sudo`.

use std::path::Path;

use protocol::{MachineSandboxStatus, StatusCheck};
use sandbox_provider::local::{
    APPARMOR_PROFILE_PATH, HostProbes, UsernsSettings, bwrap_apparmor_profile,
};
use sandbox_provider::openshell::HostEnvironment;

use super::{SetupAction, SetupStep};

/// Where the sysctl settings below are persisted.
const SYSCTL_FILE: &str = "/etc/sysctl.d/60-paddock-userns.conf";

/// The install command of `package` with the package manager this machine has (found on
/// `PATH`), Debian's when none is recognised.
pub(crate) fn install_command(env: &HostEnvironment, package: &str) -> String {
    let on_path = |tool: &str| {
        env.var("PATH").is_some_and(|path| {
            std::env::split_paths(path).any(|dir| Path::new(&dir).join(tool).is_file())
        })
    };
    if on_path("apt-get") {
        format!("sudo apt-get install -y {package}")
    } else if on_path("dnf") {
        format!("sudo dnf install -y {package}")
    } else if on_path("zypper") {
        format!("sudo zypper install -y {package}")
    } else if on_path("pacman") {
        format!("sudo pacman -S --needed {package}")
    } else if on_path("apk") {
        format!("sudo apk add {package}")
    } else {
        format!("sudo apt-get install -y {package}")
    }
}

fn by_hand(check: &StatusCheck, id: &str, summary: String, command: String) -> SetupStep {
    let needs_root = command.starts_with("sudo ") || command.contains("| sudo ");
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

fn sysctl(key: &str, value: &str) -> String {
    format!("sudo sysctl -w {key}={value} && echo '{key}={value}' | sudo tee {SYSCTL_FILE}")
}

/// The step for the user-namespace check, from what the kernel's settings say.
fn userns_step(check: &StatusCheck, userns: &UsernsSettings, bwrap: &Path) -> SetupStep {
    if userns.max_user_namespaces == Some(0) {
        return by_hand(
            check,
            "enable-user-namespaces",
            "allow user namespaces (user.max_user_namespaces is 0), now and after a reboot".into(),
            sysctl("user.max_user_namespaces", "15000"),
        );
    }
    if userns.unprivileged_clone == Some(0) {
        return by_hand(
            check,
            "enable-user-namespaces",
            "allow unprivileged user namespaces (kernel.unprivileged_userns_clone is 0), now \
             and after a reboot"
                .into(),
            sysctl("kernel.unprivileged_userns_clone", "1"),
        );
    }
    if userns.apparmor_restrict == Some(1) {
        let profile = bwrap_apparmor_profile(bwrap);
        return by_hand(
            check,
            "apparmor-bwrap-profile",
            format!(
                "let bubblewrap ({}) alone create user namespaces: an AppArmor profile granting it \
                 `userns`; kernel.apparmor_restrict_unprivileged_userns stays 1 and AppArmor \
                 stays on for every other program",
                bwrap.display()
            ),
            format!(
                "sudo tee {APPARMOR_PROFILE_PATH} >/dev/null <<'EOF'\n{profile}EOF\n\
                 sudo apparmor_parser -r {APPARMOR_PROFILE_PATH}"
            ),
        );
    }
    by_hand(
        check,
        "enable-user-namespaces",
        "allow user namespaces".into(),
        check
            .fix
            .clone()
            .unwrap_or_else(|| "check the kernel's user-namespace settings".into()),
    )
}

/// One step per failed check of the local wall's `status`.
pub(crate) fn steps(
    status: &MachineSandboxStatus,
    probes: &dyn HostProbes,
    env: &HostEnvironment,
    bwrap: &Path,
) -> Vec<SetupStep> {
    status
        .checks
        .iter()
        .filter(|c| !c.ok)
        .map(|check| match check.name.as_str() {
            "bubblewrap" => by_hand(
                check,
                "install-bubblewrap",
                format!(
                    "install bubblewrap 0.5 or newer (the local wall's namespaces and mounts): {}",
                    check.detail
                ),
                install_command(env, "bubblewrap"),
            ),
            "user namespaces" => userns_step(check, &probes.userns(), bwrap),
            "landlock" | "seccomp" => by_hand(
                check,
                &format!("kernel-{}", check.name),
                format!(
                    "{}: this needs another kernel or boot setting (root and a reboot)",
                    check.detail
                ),
                check.fix.clone().unwrap_or_default(),
            ),
            _ => other_step(check),
        })
        .collect()
}

/// A failed check without a step of its own: its fix, as the check words it.
pub(crate) fn other_step(check: &StatusCheck) -> SetupStep {
    by_hand(
        check,
        &format!("fix-{}", check.name.replace(' ', "-")),
        check.detail.clone(),
        check
            .fix
            .clone()
            .unwrap_or_else(|| "see the check's detail".into()),
    )
}
