//! How the double runs a sandbox's processes for real, inside Paddock's local wall.
//!
//! Every process of a sandbox (its main command and each exec) is started as
//! `paddock-wall outer --uid U --gid G -- bwrap <layout> -- paddock-wall inner --config F --
//! <command>`: the same namespaces, mounts, Landlock rules (from the policy's
//! `filesystem_policy`), seccomp filter, `no_new_privs` and proxy bridge as the local wall. The
//! layout mirrors a Docker sandbox: the host's root read-only as the "image", a private `/tmp`
//! and `/sandbox`, the `driver_config` mounts at their targets, `tmpfs` mounts emulated by one
//! host folder per sandbox (so the main process and every exec share them, as processes of
//! one container do), and the sandbox proxy reached through the bridge at `127.0.0.1:3128`.
//! The launcher is bound at [`LAUNCHER_INSIDE`]: its host path may sit under `/tmp` (a checkout
//! under `/tmp`), which the sandbox's private `/tmp` hides.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};

use paddock_wall::config::{
    BRIDGE_PORT, BridgeConfig, MIN_LANDLOCK_ABI, PathAccess, PathRule, WallConfig,
};
use sandbox_provider::local::proxy::BridgeToken;
use tokio::process::Command;

/// Where the double's per-sandbox files (wall configs, proxy socket) appear inside.
pub const DOUBLE_DIR_INSIDE: &str = "/run/openshell-double";
/// Where the `paddock-wall` launcher appears inside, wherever it lives on the host.
pub const LAUNCHER_INSIDE: &str = "/run/openshell-double-launcher/paddock-wall";
/// The sandbox's working folder (OpenShell's `/sandbox`).
pub const WORKDIR: &str = "/sandbox";

/// One mount of the sandbox's `driver_config`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mount {
    Bind {
        source: String,
        target: String,
        read_only: bool,
    },
    /// Emulated by a host folder of the sandbox, shared by all its processes.
    Tmpfs { target: String },
}

/// Everything needed to start a process in one sandbox.
#[derive(Debug, Clone)]
pub struct Layout {
    pub uid: u32,
    pub gid: u32,
    pub mounts: Vec<Mount>,
    /// Targets hidden behind an empty tmpfs (the "image shadows the mount" knob).
    pub shadowed: Vec<String>,
    /// Host paths bound read-only at the same path (the "wall with a hole" knob), so the hole
    /// is there even when the path lies under the host's `/tmp`.
    pub exposed: Vec<String>,
    pub rules: Vec<PathRule>,
    /// The sandbox's host folder (owner-only apart from what the sandbox user needs).
    pub dir: PathBuf,
    /// The sandbox-level environment of every process (before per-exec variables).
    pub env: BTreeMap<String, String>,
    pub wall: PathBuf,
    pub bwrap: PathBuf,
    /// The sandbox's bridge token, shared by its proxy and every launch's bridge.
    pub bridge_token: BridgeToken,
}

static CONFIG_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Layout {
    pub fn proxy_socket(&self) -> PathBuf {
        self.dir.join("double").join("proxy.sock")
    }

    fn tmpfs_dir(&self, index: usize) -> PathBuf {
        self.dir.join(format!("tmpfs-{index}"))
    }

    /// Creates the sandbox's host folders, handed to the sandbox's user.
    pub fn prepare(&self) -> std::io::Result<()> {
        let mut dirs = vec![
            self.dir.join("double"),
            self.dir.join("tmp"),
            self.dir.join("workdir"),
        ];
        dirs.extend((0..self.mounts.len()).map(|i| self.tmpfs_dir(i)));
        std::fs::create_dir_all(&self.dir)?;
        std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o755))?;
        for dir in dirs {
            std::fs::create_dir_all(&dir)?;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
            std::os::unix::fs::chown(&dir, Some(self.uid), Some(self.gid))?;
        }
        // The wall configs are read by the sandbox user; the proxy socket is connected to.
        std::fs::set_permissions(
            self.dir.join("double"),
            std::fs::Permissions::from_mode(0o755),
        )?;
        Ok(())
    }

    /// bubblewrap's arguments: a read-only copy of the host's root, then the sandbox's own
    /// folders and mounts.
    fn bwrap_args(&self) -> std::io::Result<Vec<String>> {
        let mut args: Vec<String> = [
            "--die-with-parent",
            "--new-session",
            "--unshare-all",
            "--hostname",
            "openshell-double",
            "--clearenv",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let mut push = |parts: &[&str]| args.extend(parts.iter().map(|s| (*s).to_owned()));
        push(&[
            "--uid",
            &self.uid.to_string(),
            "--gid",
            &self.gid.to_string(),
        ]);
        let mut entries: Vec<_> = std::fs::read_dir("/")?.flatten().collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            if matches!(
                name.as_str(),
                "proc" | "dev" | "tmp" | "run" | "sys" | "sandbox"
            ) {
                continue;
            }
            let path = format!("/{name}");
            let meta = std::fs::symlink_metadata(&path)?;
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path)?.display().to_string();
                push(&["--symlink", &target, &path]);
            } else if meta.is_dir() {
                push(&["--ro-bind", &path, &path]);
            }
        }
        push(&["--proc", "/proc", "--dev", "/dev", "--dir", "/run"]);
        let tmp = self.dir.join("tmp").display().to_string();
        let workdir = self.dir.join("workdir").display().to_string();
        let double = self.dir.join("double").display().to_string();
        push(&["--bind", &tmp, "/tmp", "--bind", &workdir, WORKDIR]);
        push(&["--ro-bind", &double, DOUBLE_DIR_INSIDE]);
        let launcher = self.wall.display().to_string();
        push(&["--ro-bind", &launcher, LAUNCHER_INSIDE]);
        let mut mounts: Vec<(usize, &Mount)> = self.mounts.iter().enumerate().collect();
        mounts.sort_by_key(|(_, m)| match m {
            Mount::Bind { target, .. } | Mount::Tmpfs { target } => target.len(),
        });
        for (index, mount) in mounts {
            match mount {
                Mount::Bind {
                    source,
                    target,
                    read_only,
                } => push(&[
                    if *read_only { "--ro-bind" } else { "--bind" },
                    source,
                    target,
                ]),
                Mount::Tmpfs { target } => {
                    let dir = self.tmpfs_dir(index).display().to_string();
                    push(&["--bind", &dir, target]);
                }
            }
        }
        for path in &self.exposed {
            push(&["--ro-bind-try", path, path]);
        }
        for target in &self.shadowed {
            push(&["--tmpfs", target]);
        }
        push(&["--remount-ro", "/", "--chdir", "/"]);
        Ok(args)
    }

    /// Writes one launch's wall configuration and returns its path inside the sandbox.
    fn write_config(&self, env: BTreeMap<String, String>, cwd: &str) -> std::io::Result<String> {
        let config = WallConfig {
            min_landlock_abi: MIN_LANDLOCK_ABI,
            rules: self.rules.clone(),
            bridge: Some(BridgeConfig {
                port: BRIDGE_PORT,
                proxy_socket: format!("{DOUBLE_DIR_INSIDE}/proxy.sock"),
                token: self.bridge_token.as_hex().to_owned(),
            }),
            env,
            cwd: cwd.to_owned(),
            rlimits: Vec::new(),
            grants: Vec::new(),
            protected: Vec::new(),
        };
        let n = CONFIG_COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!("wall-{}-{n}.json", std::process::id());
        let path = self.dir.join("double").join(&name);
        std::fs::write(&path, config.to_json())?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
        Ok(format!("{DOUBLE_DIR_INSIDE}/{name}"))
    }

    /// A command running `argv` in the sandbox with `env` as its whole environment.
    pub fn command(
        &self,
        argv: &[String],
        env: BTreeMap<String, String>,
        cwd: &str,
    ) -> std::io::Result<Command> {
        let config = self.write_config(env, cwd)?;
        let mut command = Command::new(&self.wall);
        command
            .args([
                "outer",
                "--uid",
                &self.uid.to_string(),
                "--gid",
                &self.gid.to_string(),
                "--",
            ])
            .arg(&self.bwrap)
            .args(self.bwrap_args()?)
            .arg("--")
            .arg(LAUNCHER_INSIDE)
            .args(["inner", "--config", &config, "--"])
            .args(argv)
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        Ok(command)
    }
}

/// The Landlock rules of a policy's `filesystem_policy`; missing paths are dropped under
/// `best_effort` and refused under `hard_requirement` (the error names them).
pub fn landlock_rules(
    read_only: &[String],
    read_write: &[String],
    include_workdir: bool,
    hard: bool,
    provided: &[String],
    exposed: &[String],
) -> Result<Vec<PathRule>, String> {
    let exists = |path: &str| {
        provided.iter().any(|p| p == path)
            || matches!(path, "/proc" | "/dev" | "/tmp" | WORKDIR)
            || path.starts_with("/dev/")
            || Path::new(path).exists()
    };
    let mut rules = Vec::new();
    let mut missing = Vec::new();
    let mut add = |path: &str, access: PathAccess| {
        if exists(path) {
            let access = if path.starts_with("/dev/") && access == PathAccess::ReadWrite {
                PathAccess::Device
            } else {
                access
            };
            rules.push(PathRule {
                path: path.to_owned(),
                access,
            });
        } else {
            missing.push(path.to_owned());
        }
    };
    for path in read_only {
        add(path, PathAccess::ReadExec);
    }
    for path in read_write {
        add(path, PathAccess::ReadWrite);
    }
    if include_workdir {
        add(WORKDIR, PathAccess::ReadWrite);
    }
    for path in exposed {
        add(path, PathAccess::Read);
    }
    if hard && !missing.is_empty() {
        return Err(format!(
            "landlock hard_requirement: {} do not exist in the sandbox",
            missing.join(", ")
        ));
    }
    Ok(rules)
}

/// POSIX shell quoting, as the gateway escapes argv into `bash -c`.
pub fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}
