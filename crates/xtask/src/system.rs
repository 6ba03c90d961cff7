//! System packages: the one list of what the project needs from Debian, installed idempotently.

use std::process::Command;

/// A Debian package and why the project needs it.
pub struct Package {
    pub name: &'static str,
    pub why: &'static str,
}

/// What running the product on its embedded default (the local wall) needs.
pub const RUN_PACKAGES: &[Package] = &[
    Package {
        name: "bubblewrap",
        why: "namespaces and mounts of the local wall",
    },
    Package {
        name: "ca-certificates",
        why: "TLS to model APIs",
    },
];

/// What the test suite needs beyond [`RUN_PACKAGES`].
pub const TEST_EXTRA_PACKAGES: &[Package] = &[
    Package {
        name: "python3",
        why: "the socket-level attacks of the wall's escape suite run python3 inside the wall",
    },
    Package {
        name: "python3-venv",
        why: "the OpenShell wire-conformance test installs openshell==0.1.5 into a venv",
    },
    Package {
        name: "curl",
        why: "proxy and denial tests run curl inside the wall",
    },
    Package {
        name: "openssh-client",
        why: "credential-entry tests reach a host over ssh through the sandbox's proxy",
    },
    Package {
        name: "git",
        why: "the protected-files tests run real git on the host and inside the wall",
    },
    Package {
        name: "make",
        why: "an end-to-end attack plants files through a Makefile that make runs",
    },
    Package {
        name: "procps",
        why: "process-group and grandchild checks in the runner tests",
    },
    Package {
        name: "iproute2",
        why: "network-namespace checks in the wall's escape suite",
    },
    Package {
        name: "dbus",
        why: "dbus-run-session for the secret-service keychain tests (model-client, paddock keys)",
    },
    Package {
        name: "gnome-keyring",
        why: "a real secret-service keychain for the keyring test",
    },
    Package {
        name: "systemd",
        why: "systemctl and systemd-analyze for the user-service tests (unit verified, enabled)",
    },
    Package {
        name: "libsecret-tools",
        why: "secret-tool, to check what the keychain test stored",
    },
];

/// What building the desktop app (`src-tauri`, a workspace member) needs. Only the WebKitGTK
/// development package: it brings GTK 3, libsoup 3, JavaScriptCore and libdbus (measured; the
/// rest of Tauri's published list is not used by this build).
pub const DESKTOP_BUILD_PACKAGES: &[Package] = &[Package {
    name: "libwebkit2gtk-4.1-dev",
    why: "the desktop app's webview (WebKitGTK 4.1, GTK 3, libsoup 3); the workspace builds it",
}];

/// What the desktop app's WebDriver smoke test needs at run time.
pub const DESKTOP_SMOKE_PACKAGES: &[Package] = &[
    Package {
        name: "xvfb",
        why: "a virtual X display for the desktop app under test",
    },
    Package {
        name: "xauth",
        why: "X authority files for Xvfb",
    },
    Package {
        name: "webkit2gtk-driver",
        why: "WebKitWebDriver, which tauri-driver starts to drive the desktop app's webview",
    },
    Package {
        name: "dbus",
        why: "a session bus for the desktop app's single-instance check",
    },
];

/// What the browser end-to-end tests need: Debian's Chromium (browser downloads do not work
/// here; playwright-core drives this one).
pub const BROWSER_E2E_PACKAGES: &[Package] = &[Package {
    name: "chromium",
    why: "the browser the web UI's end-to-end tests run in (playwright-core)",
}];

/// Installs what running the product and its whole test suite needs (the workspace includes
/// the desktop app). The end-to-end tasks install their own extra packages.
pub fn ensure_test_packages() -> Result<(), String> {
    ensure(&[RUN_PACKAGES, TEST_EXTRA_PACKAGES, DESKTOP_BUILD_PACKAGES])
}

/// Installs what running the product needs.
pub fn ensure_run_packages() -> Result<(), String> {
    ensure(&[RUN_PACKAGES])
}

fn installed(name: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", name])
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Installs every package of `groups` that is missing; does nothing when all are present.
pub fn ensure(groups: &[&[Package]]) -> Result<(), String> {
    let mut missing: Vec<&Package> = Vec::new();
    for package in groups.iter().flat_map(|group| group.iter()) {
        if !installed(package.name) && !missing.iter().any(|m| m.name == package.name) {
            missing.push(package);
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    for package in &missing {
        println!("setup: installing {} ({})", package.name, package.why);
    }
    let names: Vec<&str> = missing.iter().map(|p| p.name).collect();
    let mut prefix: Vec<&str> = Vec::new();
    if !is_root() {
        if Command::new("sudo").arg("-n").arg("true").status().is_err() {
            return Err(format!(
                "these packages are missing and this user cannot install them: {}\n\
                 install them as root: apt-get install -y {}",
                names.join(", "),
                names.join(" ")
            ));
        }
        prefix.push("sudo");
    }
    run_apt(&prefix, &["update", "-q"])?;
    let mut install = vec!["install", "-y", "-q", "--no-install-recommends"];
    install.extend(names.iter().copied());
    run_apt(&prefix, &install)
}

fn run_apt(prefix: &[&str], args: &[&str]) -> Result<(), String> {
    let mut command = match prefix.first() {
        Some(first) => {
            let mut c = Command::new(first);
            c.arg("apt-get");
            c
        }
        None => Command::new("apt-get"),
    };
    command.args(args).env("DEBIAN_FRONTEND", "noninteractive");
    let status = command
        .status()
        .map_err(|e| format!("could not start apt-get: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("apt-get {} failed ({status})", args.join(" ")))
    }
}

/// Prints the free space of the target folder's filesystem and the target folder's size: a
/// CI run that fills its disk shows in its log how close it came. Never fails the run.
pub fn report_disk(when: &str) {
    let root = crate::tasks::root();
    let target = root.join("target");
    let free = Command::new("df")
        .arg("-Pk")
        .arg(&root)
        .output()
        .ok()
        .and_then(|out| {
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            text.lines()
                .nth(1)?
                .split_whitespace()
                .nth(3)?
                .parse::<u64>()
                .ok()
        });
    let used = Command::new("du")
        .arg("-sk")
        .arg(&target)
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| {
            String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
        });
    let gib = |kib: u64| format!("{:.1} GiB", kib as f64 / (1024.0 * 1024.0));
    println!(
        "disk {when}: {} free; target/ holds {}",
        free.map_or_else(|| "unknown".to_owned(), gib),
        used.map_or_else(|| "nothing".to_owned(), gib)
    );
}
