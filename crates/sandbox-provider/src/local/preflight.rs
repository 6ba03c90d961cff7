//! Can this machine build the local wall? Bubblewrap present and new enough, unprivileged user
//! namespaces allowed, Landlock ABI 3 or newer, seccomp filtering. The probes are behind a
//! trait so tests can simulate each missing piece.

use std::path::{Path, PathBuf};
use std::process::Command;

use protocol::{EnforcementLevel, MachineSandboxStatus, ProviderKind, StatusCheck};

/// The oldest bubblewrap the wall uses (`--disable-userns` is used from 0.8.0 when present).
pub const MIN_BWRAP: (u32, u32, u32) = (0, 5, 0);

/// What the user-namespace sysctls say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsernsSettings {
    /// `kernel.apparmor_restrict_unprivileged_userns` (Ubuntu 23.10+), when present.
    pub apparmor_restrict: Option<u32>,
    /// `kernel.unprivileged_userns_clone` (older Debian kernels), when present.
    pub unprivileged_clone: Option<u32>,
    /// `user.max_user_namespaces`.
    pub max_user_namespaces: Option<u64>,
}

/// The machine's answers the preflight needs.
pub trait HostProbes: Send + Sync + std::fmt::Debug {
    /// `bwrap --version`'s output, or why it could not run.
    fn bwrap_version(&self, bwrap: &Path) -> Result<String, String>;
    fn userns(&self) -> UsernsSettings;
    /// The effective uid of this process (root may create user namespaces regardless).
    fn euid(&self) -> u32;
    /// The kernel's Landlock ABI, `None` without Landlock.
    fn landlock_abi(&self) -> Option<u32>;
    /// `Ok` when seccomp filters can be installed.
    fn seccomp(&self) -> Result<(), String>;
}

/// The real machine.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemProbes;

fn read_number<T: std::str::FromStr>(path: &str) -> Option<T> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

impl HostProbes for SystemProbes {
    fn bwrap_version(&self, bwrap: &Path) -> Result<String, String> {
        let output = Command::new(bwrap)
            .arg("--version")
            .output()
            .map_err(|e| format!("{} could not be run: {e}", bwrap.display()))?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
        } else {
            Err(format!(
                "{} --version failed ({})",
                bwrap.display(),
                output.status
            ))
        }
    }

    fn userns(&self) -> UsernsSettings {
        UsernsSettings {
            apparmor_restrict: read_number(
                "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
            ),
            unprivileged_clone: read_number("/proc/sys/kernel/unprivileged_userns_clone"),
            max_user_namespaces: read_number("/proc/sys/user/max_user_namespaces"),
        }
    }

    fn euid(&self) -> u32 {
        paddock_wall::privileges::effective_uid()
    }

    fn landlock_abi(&self) -> Option<u32> {
        paddock_wall::probe::landlock_abi()
    }

    fn seccomp(&self) -> Result<(), String> {
        paddock_wall::probe::seccomp_filtering()
    }
}

/// Parses `bubblewrap 0.8.0` into its version numbers.
pub fn parse_bwrap_version(text: &str) -> Option<(u32, u32, u32)> {
    let version = text.split_whitespace().last()?;
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

/// The preflight's outcome: the status checks, and what the wall may use.
#[derive(Debug, Clone)]
pub struct Preflight {
    pub status: MachineSandboxStatus,
    pub bwrap_version: Option<(u32, u32, u32)>,
}

impl Preflight {
    /// Whether bubblewrap can forbid new user namespaces inside (0.8.0+).
    pub fn disable_userns(&self) -> bool {
        self.bwrap_version.is_some_and(|v| v >= (0, 8, 0))
    }
}

fn check(name: &str, ok: bool, detail: String, fix: Option<String>) -> StatusCheck {
    StatusCheck {
        name: name.to_owned(),
        ok,
        detail,
        fix: (!ok).then_some(fix).flatten(),
    }
}

/// Runs every probe and turns the answers into status checks with exact fixes.
pub fn run(probes: &dyn HostProbes, bwrap: &Path, runner: &Path, wall: &Path) -> Preflight {
    let mut checks = Vec::new();
    let install =
        "sudo apt-get install bubblewrap (Debian/Ubuntu) or sudo dnf install bubblewrap (Fedora)";
    let bwrap_version = match probes.bwrap_version(bwrap) {
        Ok(text) => match parse_bwrap_version(&text) {
            Some(v) if v >= MIN_BWRAP => {
                checks.push(check(
                    "bubblewrap",
                    true,
                    format!("{text} at {}", bwrap.display()),
                    None,
                ));
                Some(v)
            }
            Some(v) => {
                checks.push(check(
                    "bubblewrap",
                    false,
                    format!(
                        "{text} is too old: the wall needs bubblewrap {}.{}.{} or newer (found {}.{}.{})",
                        MIN_BWRAP.0, MIN_BWRAP.1, MIN_BWRAP.2, v.0, v.1, v.2
                    ),
                    Some(format!("upgrade bubblewrap: {install}")),
                ));
                None
            }
            None => {
                checks.push(check(
                    "bubblewrap",
                    false,
                    format!("unreadable version {text:?} from {}", bwrap.display()),
                    Some(install.to_owned()),
                ));
                None
            }
        },
        Err(why) => {
            checks.push(check(
                "bubblewrap",
                false,
                format!("bubblewrap is not installed: {why}"),
                Some(install.to_owned()),
            ));
            None
        }
    };
    checks.push(userns_check(&probes.userns(), probes.euid()));
    let abi = probes.landlock_abi();
    let min = paddock_wall::config::MIN_LANDLOCK_ABI;
    checks.push(match abi {
        Some(v) if v >= min => check("landlock", true, format!("Landlock ABI {v} (the wall needs {min} or newer)"), None),
        Some(v) => check(
            "landlock",
            false,
            format!("Landlock ABI {v} is too old: the wall needs ABI {min} (Linux 6.2) or newer"),
            Some("upgrade the kernel to Linux 6.2 or newer".into()),
        ),
        None => check(
            "landlock",
            false,
            "Landlock is not enabled in this kernel".into(),
            Some(
                "boot with landlock in the LSM list, e.g. add lsm=landlock,lockdown,yama,integrity,apparmor \
                 to GRUB_CMDLINE_LINUX in /etc/default/grub, run sudo update-grub and reboot"
                    .into(),
            ),
        ),
    });
    checks.push(match probes.seccomp() {
        Ok(()) => check(
            "seccomp",
            true,
            "seccomp filters are available".into(),
            None,
        ),
        Err(why) => check(
            "seccomp",
            false,
            why,
            Some("use a kernel built with CONFIG_SECCOMP_FILTER=y".into()),
        ),
    });
    let helpers = [
        (
            "tool-runner",
            runner,
            "build the static runner with `cargo xtask runner` (or `cargo build --release -p \
             tool-runner`) and put it beside paddock, or name it in PADDOCK_TOOL_RUNNER or the \
             machine config's sandbox.tool_runner",
        ),
        (
            "paddock-wall",
            wall,
            "build it with `cargo build --release -p paddock-wall` and put it beside paddock, or \
             name it in PADDOCK_WALL",
        ),
    ];
    for (name, path, fix) in helpers {
        let ok = path.is_file();
        let detail = if ok {
            format!("{} is present", path.display())
        } else {
            format!("{} does not exist", path.display())
        };
        checks.push(check(name, ok, detail, Some(fix.to_owned())));
    }
    let protected_paths = crate::protected::listed(&mut checks);
    Preflight {
        status: MachineSandboxStatus {
            provider: ProviderKind::Local,
            enforcement: EnforcementLevel::Local,
            checks,
            protected_paths,
        },
        bwrap_version,
    }
}

fn userns_check(settings: &UsernsSettings, euid: u32) -> StatusCheck {
    let name = "user namespaces";
    if settings.max_user_namespaces == Some(0) {
        return check(
            name,
            false,
            "user namespaces are disabled (user.max_user_namespaces = 0)".into(),
            Some(
                "sudo sysctl -w user.max_user_namespaces=15000 (and persist it in /etc/sysctl.d/)"
                    .into(),
            ),
        );
    }
    if euid != 0 {
        if settings.unprivileged_clone == Some(0) {
            return check(
                name,
                false,
                "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)".into(),
                Some(
                    "sudo sysctl -w kernel.unprivileged_userns_clone=1 (and persist it in /etc/sysctl.d/)".into(),
                ),
            );
        }
        if settings.apparmor_restrict == Some(1) {
            return check(
                name,
                false,
                "AppArmor restricts unprivileged user namespaces \
                 (kernel.apparmor_restrict_unprivileged_userns = 1, the Ubuntu 24.04 default)"
                    .into(),
                Some(format!(
                    "grant bubblewrap alone the userns permission with an AppArmor profile \
                     (AppArmor stays on for everything else): as root, write {APPARMOR_PROFILE_PATH} \
                     (`paddock machine sandbox setup` prints it) and load it with \
                     sudo apparmor_parser -r {APPARMOR_PROFILE_PATH}"
                )),
            );
        }
    }
    check(name, true, "user namespaces can be created".into(), None)
}

/// Where the AppArmor profile granting bubblewrap user namespaces goes.
pub const APPARMOR_PROFILE_PATH: &str = "/etc/apparmor.d/paddock-bwrap";

/// The AppArmor profile that lets `bwrap` (at `bwrap`, an absolute path) create user
/// namespaces where `kernel.apparmor_restrict_unprivileged_userns = 1`: the narrow fix, which
/// leaves the restriction on for every other program (the same shape as the profiles Ubuntu
/// ships for programs that need user namespaces).
pub fn bwrap_apparmor_profile(bwrap: &Path) -> String {
    format!(
        "# Lets bubblewrap create user namespaces for Paddock's local wall while\n\
         # kernel.apparmor_restrict_unprivileged_userns = 1 keeps them closed to other programs.\n\
         abi <abi/4.0>,\n\
         include <tunables/global>\n\
         \n\
         profile paddock-bwrap {} flags=(unconfined) {{\n\
         \x20 userns,\n\
         \n\
         \x20 include if exists <local/paddock-bwrap>\n\
         }}\n",
        bwrap.display()
    )
}

/// Default place of bubblewrap.
pub fn default_bwrap() -> PathBuf {
    for candidate in ["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"] {
        if Path::new(candidate).is_file() {
            return PathBuf::from(candidate);
        }
    }
    PathBuf::from("bwrap")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bwrap_versions() {
        assert_eq!(parse_bwrap_version("bubblewrap 0.8.0"), Some((0, 8, 0)));
        assert_eq!(parse_bwrap_version("bubblewrap 0.11"), Some((0, 11, 0)));
        assert_eq!(parse_bwrap_version("nonsense"), None);
    }

    #[test]
    fn the_apparmor_fix_grants_bwrap_userns_and_never_lifts_the_restriction() {
        let profile = bwrap_apparmor_profile(Path::new("/usr/bin/bwrap"));
        assert!(
            profile
                .contains("profile paddock-bwrap /usr/bin/bwrap flags=(unconfined) {\n  userns,\n"),
            "{profile}"
        );
        assert!(
            profile.starts_with("# ") && profile.ends_with("}\n"),
            "{profile}"
        );
        let status = userns_check(
            &UsernsSettings {
                apparmor_restrict: Some(1),
                ..UsernsSettings::default()
            },
            1000,
        );
        let fix = status.fix.unwrap_or_default();
        assert!(fix.contains(APPARMOR_PROFILE_PATH), "{fix}");
        assert!(
            !fix.contains("userns=0"),
            "the fix must not lift the restriction: {fix}"
        );
    }
}
