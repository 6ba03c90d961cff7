//! `paddock up` as a systemd user service: the unit file (`paddock.service` in the user's
//! systemd folder), installed idempotently and enabled with `systemctl --user`; uninstalled
//! leaving no file behind; its state (installed, enabled, running, lingering). Keeping it
//! running after logout needs lingering, which Paddock does not turn on itself: it prints
//! `loginctl enable-linger USER`.

use std::path::{Path, PathBuf};

use sandbox_provider::openshell::HostEnvironment;
use serde::{Deserialize, Serialize};

use crate::error::HostError;
use crate::probes::{MachineProbes, PROBE_TIMEOUT};
use crate::setup::files;

/// The unit's name.
pub const UNIT_NAME: &str = "paddock.service";

/// The variables the service passes on from the environment it is installed from: where
/// Paddock's files are and its helper programs (systemd's user manager sets only `HOME`).
const PASSED_ON: &[&str] = &[
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "PADDOCK_TOOL_RUNNER",
    "PADDOCK_WALL",
];

/// A value quoted for a systemd `Environment=` line.
fn systemd_quoted(name: &str, value: &str) -> String {
    let escaped = value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('%', "%%");
    format!("Environment=\"{name}={escaped}\"\n")
}

/// The unit file that runs `paddock up` from `paddock` (an absolute path), with the
/// variables of [`PASSED_ON`] that `env` sets.
pub fn unit_text(paddock: &Path, env: &HostEnvironment) -> String {
    let environment: String = PASSED_ON
        .iter()
        .filter_map(|name| env.var(name).map(|value| systemd_quoted(name, value)))
        .collect();
    format!(
        "# Paddock's API server, installed by `paddock machine service install`.\n\
         # Remove it with `paddock machine service uninstall`.\n\
         [Unit]\n\
         Description=Paddock API server (paddock up)\n\
         After=network-online.target\n\
         \n\
         [Service]\n\
         Type=exec\n\
         {environment}\
         ExecStart={} up\n\
         Restart=on-failure\n\
         RestartSec=5s\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n",
        paddock.display()
    )
}

/// Where the user's unit files go: `$XDG_CONFIG_HOME/systemd/user` (default `~/.config`).
pub fn unit_dir(env: &HostEnvironment) -> Option<PathBuf> {
    match (env.var("XDG_CONFIG_HOME"), env.var("HOME")) {
        (Some(config), _) => Some(Path::new(config).join("systemd/user")),
        (None, Some(home)) => Some(Path::new(home).join(".config/systemd/user")),
        (None, None) => None,
    }
}

/// The service as found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct ServiceStatus {
    pub unit_file: String,
    pub installed: bool,
    /// The installed file is the one this `paddock` would write.
    pub current: bool,
    /// Started with the user's session (the `default.target.wants` link).
    pub enabled: bool,
    /// `systemctl --user is-active` says `active`; `None` when the user manager cannot be
    /// asked (then why is in `manager_problem`).
    pub running: Option<bool>,
    /// Lingering is on for this user (the service outlives logout).
    pub lingering: bool,
    pub manager_problem: Option<String>,
    /// The command that turns lingering on (run it once; it may ask for a password).
    pub linger_command: String,
}

/// What install or uninstall did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct ServiceChange {
    /// What changed, one line each (`wrote …`, `ran …`); empty when nothing did.
    pub done: Vec<String>,
    /// What the user must run, with why (e.g. lingering; a user manager that could not be
    /// reached).
    pub left: Vec<String>,
    pub status: ServiceStatus,
}

fn user_name(env: &HostEnvironment) -> String {
    env.var("USER")
        .or_else(|| env.var("LOGNAME"))
        .unwrap_or("$USER")
        .to_owned()
}

fn systemctl(probes: &dyn MachineProbes, args: &[&str]) -> Result<String, String> {
    let mut all = vec!["--user".to_owned()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    let shown = format!("systemctl {}", all.join(" "));
    match probes.run("systemctl", &all, Some(PROBE_TIMEOUT)) {
        Ok(out) if out.success => Ok(out.stdout.trim().to_owned()),
        Ok(out) => Err(format!("`{shown}` failed: {}", out.tail(3))),
        Err(why) => Err(format!("`{shown}`: {why}")),
    }
}

/// The user service, found through `probes` (environment, `systemctl --user`).
pub struct UserService<'a> {
    probes: &'a dyn MachineProbes,
    env: HostEnvironment,
    dir: PathBuf,
    user: String,
    linger_dir: PathBuf,
}

impl<'a> UserService<'a> {
    /// Lingering is recorded in `linger_dir` (`/var/lib/systemd/linger`), one file per user.
    pub fn new(probes: &'a dyn MachineProbes, linger_dir: PathBuf) -> Result<Self, HostError> {
        let env = probes.environment();
        let dir = unit_dir(&env).ok_or_else(|| {
            HostError::invalid(
                "environment",
                "neither HOME nor XDG_CONFIG_HOME is set, so the user's systemd folder is unknown",
            )
        })?;
        Ok(Self {
            probes,
            env: env.clone(),
            dir,
            user: user_name(&env),
            linger_dir,
        })
    }

    pub fn unit_file(&self) -> PathBuf {
        self.dir.join(UNIT_NAME)
    }

    fn wants_link(&self) -> PathBuf {
        self.dir.join("default.target.wants").join(UNIT_NAME)
    }

    fn linger_command(&self) -> String {
        format!("loginctl enable-linger {}", self.user)
    }

    /// Installed, enabled, running, lingering.
    pub fn status(&self, paddock: &Path) -> ServiceStatus {
        let file = self.unit_file();
        let text = std::fs::read_to_string(&file).ok();
        let asked = self.probes.run(
            "systemctl",
            &[
                "--user".to_owned(),
                "is-active".to_owned(),
                UNIT_NAME.to_owned(),
            ],
            Some(PROBE_TIMEOUT),
        );
        // `is-active` prints the state (exit 3 when it is not active); no state printed
        // means the user manager could not be asked.
        let (running, manager_problem) = match asked {
            Ok(out) => match out.stdout.trim() {
                "active" | "reloading" => (Some(true), None),
                "inactive" | "failed" | "activating" | "deactivating" | "maintenance" => {
                    (Some(false), None)
                }
                _ => (
                    None,
                    Some(format!(
                        "the user's systemd manager could not be asked: {}",
                        out.tail(2)
                    )),
                ),
            },
            Err(why) => (None, Some(why)),
        };
        ServiceStatus {
            unit_file: file.display().to_string(),
            installed: text.is_some(),
            current: text.as_deref() == Some(unit_text(paddock, &self.env).as_str()),
            enabled: self.wants_link().symlink_metadata().is_ok(),
            running,
            lingering: self.linger_dir.join(&self.user).exists(),
            manager_problem,
            linger_command: self.linger_command(),
        }
    }

    /// Writes the unit (unless it is already this one), reloads the user manager, enables
    /// and starts it. A manager that cannot be reached leaves the file in place and the
    /// commands to the user.
    pub fn install(&self, paddock: &Path) -> Result<ServiceChange, HostError> {
        if !paddock.is_absolute() {
            return Err(HostError::invalid(
                "paddock",
                format!("{} is not an absolute path", paddock.display()),
            ));
        }
        let file = self.unit_file();
        let wanted = unit_text(paddock, &self.env);
        let mut done = Vec::new();
        let mut left = Vec::new();
        let before = files::read_optional(&file)?;
        if before.as_deref() != Some(wanted.as_str()) {
            let backup = files::write_with_backup(&file, &wanted, 0o644)?;
            done.push(match backup {
                Some(backup) => format!(
                    "wrote {} (the previous one is in {})",
                    file.display(),
                    backup.display()
                ),
                None => format!("wrote {}", file.display()),
            });
        }
        let before = self.status(paddock);
        if !before.enabled {
            match systemctl(self.probes, &["enable", UNIT_NAME]) {
                Ok(_) => done.push(format!(
                    "enabled it: {} links to it",
                    self.wants_link().display()
                )),
                Err(why) => left.push(format!(
                    "{why}; enable it: systemctl --user enable {UNIT_NAME}"
                )),
            }
        }
        if !done.is_empty() || before.running != Some(true) {
            match systemctl(self.probes, &["daemon-reload"])
                .and_then(|_| systemctl(self.probes, &["restart", UNIT_NAME]))
            {
                Ok(_) => done.push(format!("started it: systemctl --user restart {UNIT_NAME}")),
                Err(why) => left.push(format!(
                    "not started, the user's systemd manager could not be reached ({why}); in a \
                     login session run: systemctl --user daemon-reload && systemctl --user \
                     start {UNIT_NAME}"
                )),
            }
        }
        let status = self.status(paddock);
        if !status.lingering {
            left.push(format!(
                "keep it running after you log out (and start it at boot): {}",
                status.linger_command
            ));
        }
        Ok(ServiceChange { done, left, status })
    }

    /// Stops and disables the unit, removes its file and its `wants` link: nothing of it is
    /// left. Lingering (a setting of the user, maybe for other services) is left alone.
    pub fn uninstall(&self, paddock: &Path) -> Result<ServiceChange, HostError> {
        let mut done = Vec::new();
        let left = Vec::new();
        let file = self.unit_file();
        let link = self.wants_link();
        let installed = file.exists() || link.symlink_metadata().is_ok();
        if installed {
            match systemctl(self.probes, &["stop", UNIT_NAME]) {
                Ok(_) => done.push(format!("stopped it: systemctl --user stop {UNIT_NAME}")),
                // No manager: nothing of this user's runs under one.
                Err(why) => tracing::debug!("stopping the service: {why}"),
            }
            if link.symlink_metadata().is_ok() {
                match systemctl(self.probes, &["disable", UNIT_NAME]) {
                    Ok(_) => {
                        done.push(format!("disabled it: systemctl --user disable {UNIT_NAME}"))
                    }
                    Err(why) => tracing::debug!("disabling the service: {why}"),
                }
            }
        }
        for path in [&link, &file] {
            match std::fs::remove_file(path) {
                Ok(()) => done.push(format!("removed {}", path.display())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(HostError::io(format!("removing {}", path.display()), e)),
            }
        }
        // The `.bak` copies install kept are ours too.
        let prefix = format!("{UNIT_NAME}.bak");
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with(&prefix) {
                    let path = entry.path();
                    std::fs::remove_file(&path)
                        .map_err(|e| HostError::io(format!("removing {}", path.display()), e))?;
                    done.push(format!("removed {}", path.display()));
                }
            }
        }
        // `enable` made the wants folder; it goes when nothing else is in it.
        // So do the folders install created, when nothing else is in them (`remove_dir`
        // refuses a folder that is not empty).
        if let Some(wants) = link.parent() {
            let _ = std::fs::remove_dir(wants);
        }
        if installed {
            let _ = std::fs::remove_dir(&self.dir);
            if let Some(systemd) = self.dir.parent() {
                let _ = std::fs::remove_dir(systemd);
            }
        }
        if installed {
            let _ = systemctl(self.probes, &["daemon-reload"]);
        }
        Ok(ServiceChange {
            done,
            left,
            status: self.status(paddock),
        })
    }
}

/// Where systemd records which users linger.
pub const LINGER_DIR: &str = "/var/lib/systemd/linger";

impl crate::host::Host {
    /// The user service of `paddock` (an absolute path) on this host's machine.
    fn user_service(&self) -> Result<(std::sync::Arc<dyn MachineProbes>, PathBuf), HostError> {
        Ok((self.probes(), PathBuf::from(LINGER_DIR)))
    }

    /// Installed, enabled, running, lingering.
    pub async fn service_status(&self, paddock: PathBuf) -> Result<ServiceStatus, HostError> {
        let (probes, linger) = self.user_service()?;
        tokio::task::spawn_blocking(move || {
            Ok(UserService::new(probes.as_ref(), linger)?.status(&paddock))
        })
        .await
        .map_err(|e| HostError::Internal(format!("the service status: {e}")))?
    }

    /// Installs (idempotently), enables and starts the user service running `paddock up`.
    pub async fn service_install(&self, paddock: PathBuf) -> Result<ServiceChange, HostError> {
        let (probes, linger) = self.user_service()?;
        tokio::task::spawn_blocking(move || {
            UserService::new(probes.as_ref(), linger)?.install(&paddock)
        })
        .await
        .map_err(|e| HostError::Internal(format!("installing the service: {e}")))?
    }

    /// Stops and removes the user service, leaving no file of it behind.
    pub async fn service_uninstall(&self, paddock: PathBuf) -> Result<ServiceChange, HostError> {
        let (probes, linger) = self.user_service()?;
        tokio::task::spawn_blocking(move || {
            UserService::new(probes.as_ref(), linger)?.uninstall(&paddock)
        })
        .await
        .map_err(|e| HostError::Internal(format!("removing the service: {e}")))?
    }
}
