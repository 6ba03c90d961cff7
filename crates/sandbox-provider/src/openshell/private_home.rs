//! The private home of an OpenShell session that enabled credential-share entries.
//!
//! It lives on the host at `<state_dir>/homes/<sandbox name>`: under Paddock's state folder,
//! never under `/tmp` or `/var/tmp` (a gateway installed as a systemd service runs with
//! `PrivateTmp` and would mount an empty folder). `sandbox-policy` mounts it read-write at the
//! same path and points `HOME` and the entries' variables at it. The copies follow the local
//! wall's rules (`crate::credentials`) and are handed to the sandbox's user (the owner of the
//! session's folders, OpenShell's `run_as_user`). ssh reaches hosts through the sandbox's HTTP
//! CONNECT proxy with a small bash `ProxyCommand` ([`SSH_PROXY_SCRIPT`]).
//!
//! The home is removed when the sandbox is deleted, when a start fails (the guard's `Drop`),
//! and by `reap_orphans` when no sandbox of that name is left.

use std::collections::BTreeSet;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use protocol::CanaryResult;
use sandbox_policy::{CredentialEntry, Owner};
use tokio_util::sync::CancellationToken;
use tool_protocol::{RunBash, ToolRequest, ToolResult};

use crate::canaries::sh_quote;
use crate::credentials::{self, HandOver, SshWiring};
use crate::error::ProviderError;
use crate::runner_client::RunnerConnection;
use crate::sandbox::SandboxRequest;
use crate::sandbox_folder::remove_sandbox_folder;

/// The folder under the provider's state folder that holds the private homes.
pub const HOMES_DIR: &str = "homes";
/// Where the ssh proxy script sits in the private home.
pub const SSH_PROXY_PATH: &str = ".paddock/ssh-proxy";
/// Folders whose content a systemd service with `PrivateTmp=yes` does not see.
const PRIVATE_TMP: &[&str] = &["/tmp", "/var/tmp"];

/// ssh's `ProxyCommand` inside an OpenShell sandbox, run as `/bin/bash <script> HOST PORT`
/// (bash is part of OpenShell's image contract; `cat` of any userland). It opens a tunnel
/// through the sandbox's HTTP CONNECT proxy (`HTTPS_PROXY`, set by OpenShell). When the proxy
/// refuses, or no proxy is set, it tries a direct connection, which OpenShell routes for
/// `protocol: tcp` endpoints (the `ssh` entry's hosts) on Docker and Podman.
pub const SSH_PROXY_SCRIPT: &str = r#"# Written by Paddock: ssh's ProxyCommand in an OpenShell sandbox.
# Usage: bash ssh-proxy HOST PORT. Tunnels through the sandbox's HTTP CONNECT proxy.
host=$1 port=$2
case $host in *:*) target="[$host]:$port" ;; *) target="$host:$port" ;; esac
proxy=${HTTPS_PROXY:-${https_proxy:-${ALL_PROXY:-${all_proxy:-}}}}
tunnel=
if [ -n "$proxy" ]; then
  hostport=${proxy#*://}
  hostport=${hostport%%/*}
  hostport=${hostport##*@}
  proxy_host=${hostport%:*}
  proxy_port=${hostport##*:}
  [ "$proxy_port" = "$hostport" ] && proxy_port=80
  if exec 3<>"/dev/tcp/$proxy_host/$proxy_port"; then
    printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$target" "$target" >&3
    IFS= read -r status <&3 || status=
    status=${status%$'\r'}
    case $status in
      'HTTP/1.'?' 200'*)
        while IFS= read -r line <&3; do
          [ -z "${line%$'\r'}" ] && break
        done
        tunnel=proxy ;;
      *)
        echo "paddock ssh-proxy: the sandbox proxy refused $target (${status:-no answer})" >&2
        exec 3<&- ;;
    esac
  else
    echo "paddock ssh-proxy: the sandbox proxy at $hostport cannot be reached" >&2
  fi
fi
if [ -z "$tunnel" ]; then
  exec 3<>"/dev/tcp/$host/$port" || {
    echo "paddock ssh-proxy: $target cannot be reached directly either" >&2
    exit 1
  }
fi
# The writer runs in the background (bash gives a background command /dev/null as its input,
# so ssh's input is handed over as fd 4); the script itself becomes the reader, so ssh sees
# the end of its output as soon as the server hangs up.
exec 4<&0
cat <&4 >&3 4<&- &
exec 4<&- cat <&3
"#;

/// The sandbox's user on the host: the owner of the session's folders.
struct SandboxUser(Owner);

impl HandOver for SandboxUser {
    fn hand_over(&self, path: &Path) -> Result<(), ProviderError> {
        let Owner { uid, gid } = self.0;
        std::os::unix::fs::lchown(path, Some(uid), Some(gid)).map_err(|e| {
            ProviderError::io(
                format!(
                    "handing {} to the sandbox's user {uid}:{gid} (the owner of the session's \
                     folders; Paddock must run as root or as that user to share credentials)",
                    path.display()
                ),
                e,
            )
        })
    }
}

/// ssh in an OpenShell sandbox: through the proxy script, with the copied keys and no agent.
pub fn ssh_wiring(home: &str) -> SshWiring {
    SshWiring {
        comment:
            "# Written by Paddock for an OpenShell sandbox: ssh reaches hosts only through the\n\
                  # sandbox's proxy, with the copied keys and no agent.\n"
                .to_owned(),
        home_inside: home.to_owned(),
        proxy_command: format!("/bin/bash {home}/{SSH_PROXY_PATH} %h %p"),
    }
}

/// Where the private home of sandbox `name` lives.
pub fn location(state_dir: &Path, name: &str) -> PathBuf {
    state_dir.join(HOMES_DIR).join(name)
}

fn is_within(inner: &Path, outer: &Path) -> bool {
    inner.starts_with(outer)
}

/// Refuses a private home the gateway could not mount as meant: under a private `/tmp`, at a
/// path ssh's configuration cannot carry unquoted, or overlapping a granted folder.
pub fn check_location(home: &Path, request: &SandboxRequest) -> Result<(), ProviderError> {
    let shown = home.display().to_string();
    if !home.is_absolute() {
        return Err(ProviderError::InvalidRequest(format!(
            "the private home {shown} is not an absolute path; give the openshell provider an \
             absolute state folder"
        )));
    }
    if let Some(tmp) = PRIVATE_TMP.iter().find(|t| is_within(home, Path::new(t))) {
        return Err(ProviderError::InvalidRequest(format!(
            "the private home for credential entries would be {shown}, inside {tmp}, which a \
             gateway installed as a systemd service cannot see (PrivateTmp); give the openshell \
             provider a state folder outside /tmp and /var/tmp"
        )));
    }
    if let Some(bad) = shown
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "/._-+@,=".contains(*c)))
    {
        return Err(ProviderError::InvalidRequest(format!(
            "the private home {shown} contains {bad:?}, which ssh's configuration and \
             GIT_SSH_COMMAND cannot carry; give the openshell provider a state folder with \
             letters, digits and `/._-+@,=` only"
        )));
    }
    let root = home.parent().unwrap_or(home);
    for folder in &request.folders {
        let granted = Path::new(&folder.path);
        if is_within(root, granted) || is_within(granted, root) {
            return Err(ProviderError::InvalidRequest(format!(
                "{}: this folder overlaps {}, where the copies of credential entries are kept; \
                 grant folders apart from the openshell provider's state folder",
                folder.path,
                root.display()
            )));
        }
    }
    Ok(())
}

/// A session's private home on the host. Dropped without [`PrivateHome::leave`] or
/// [`PrivateHome::remove`], it removes itself (a failed start leaves no copies behind).
#[derive(Debug)]
pub struct PrivateHome {
    path: PathBuf,
    done: bool,
}

impl PrivateHome {
    /// Creates the home at `path` (replacing a leftover one), copies `entries` from
    /// `user_home` into it and hands everything to `owner`.
    pub fn prepare(
        path: &Path,
        entries: &[CredentialEntry],
        user_home: &Path,
        owner: Owner,
    ) -> Result<Self, ProviderError> {
        let user = SandboxUser(owner);
        let root = path.parent().ok_or_else(|| {
            ProviderError::InvalidRequest(format!("{} has no parent folder", path.display()))
        })?;
        prepare_root(root)?;
        remove_sandbox_folder(path).map_err(|e| {
            ProviderError::io(format!("removing the leftover {}", path.display()), e)
        })?;
        std::fs::create_dir(path)
            .map_err(|e| ProviderError::io(format!("creating {}", path.display()), e))?;
        let home = Self {
            path: path.to_path_buf(),
            done: false,
        };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| ProviderError::io(format!("protecting {}", path.display()), e))?;
        user.hand_over(path)?;
        let shown = path.display().to_string();
        let wiring = ssh_wiring(&shown);
        for entry in entries {
            credentials::copy_share(entry, user_home, path, &user, &wiring)?;
        }
        if entries.iter().any(|e| e.name == "ssh") {
            let script = path.join(SSH_PROXY_PATH);
            if let Some(dir) = script.parent() {
                credentials::make_private_dirs(path, dir, &user)?;
            }
            credentials::write_private(&script, SSH_PROXY_SCRIPT.as_bytes(), &user)?;
        }
        Ok(home)
    }

    /// Takes over the home of a kept sandbox that is being reused.
    pub fn adopt(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            done: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Leaves the home on disk (its sandbox is kept running).
    pub fn leave(mut self) {
        self.done = true;
    }

    /// Removes the home and the copies in it.
    pub fn remove(mut self) -> Result<(), ProviderError> {
        self.done = true;
        remove_sandbox_folder(&self.path).map_err(|e| {
            ProviderError::io(
                format!("removing the private home {}", self.path.display()),
                e,
            )
        })
    }
}

impl Drop for PrivateHome {
    fn drop(&mut self) {
        if !self.done
            && let Err(e) = remove_sandbox_folder(&self.path)
        {
            tracing::warn!(home = %self.path.display(), error = %e, "removing a private home failed");
        }
    }
}

/// `<state_dir>/homes`: Paddock's own, traversable (the sandbox's user reaches its home
/// through it) but not listable by others.
fn prepare_root(root: &Path) -> Result<(), ProviderError> {
    let io = |what: &str, e| ProviderError::io(format!("{what} {}", root.display()), e);
    std::fs::create_dir_all(root).map_err(|e| io("creating", e))?;
    let meta = std::fs::symlink_metadata(root).map_err(|e| io("reading", e))?;
    let me = paddock_wall::privileges::effective_uid();
    if !meta.file_type().is_dir() || meta.uid() != me {
        return Err(ProviderError::InvalidRequest(format!(
            "{} must be a folder owned by Paddock's user (uid {me}); remove it and retry",
            root.display()
        )));
    }
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o711))
        .map_err(|e| io("protecting", e))
}

/// Removes the homes under `state_dir` whose sandbox is not in `live`; returns their names.
pub fn reap(state_dir: &Path, live: &BTreeSet<String>) -> Result<Vec<String>, ProviderError> {
    let root = state_dir.join(HOMES_DIR);
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Ok(Vec::new());
    };
    let mut reaped = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if live.contains(&name) {
            continue;
        }
        remove_sandbox_folder(&entry.path())
            .map_err(|e| ProviderError::io(format!("removing {}", entry.path().display()), e))?;
        reaped.push(name);
    }
    Ok(reaped)
}

/// The attestation's check of the home: the sandbox's user lists exactly what the host put
/// there (an image path shadowing the mount, or copies it cannot read, fail it).
pub async fn verify(connection: &RunnerConnection, home: &Path) -> CanaryResult {
    let name = "private_home_verified".to_owned();
    let expected: BTreeSet<String> = match std::fs::read_dir(home) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(e) => {
            return CanaryResult {
                name,
                passed: false,
                detail: format!("the host cannot list {}: {e}", home.display()),
            };
        }
    };
    let command = format!("ls -A1 -- {}", sh_quote(&home.display().to_string()));
    let result = connection
        .call(
            ToolRequest::RunBash(RunBash {
                command,
                cwd: None,
                env: None,
                stdin: None,
                timeout_ms: Some(10_000),
                max_output_bytes: None,
            }),
            None,
            &CancellationToken::new(),
        )
        .await;
    let (passed, detail) = match result {
        Ok(ToolResult::RunBash(run)) if run.exit_code == Some(0) => {
            let seen: BTreeSet<String> = run
                .stdout
                .to_text_lossy()
                .lines()
                .map(str::to_owned)
                .collect();
            if seen == expected {
                (
                    true,
                    format!("{} shows the {} copies", home.display(), seen.len()),
                )
            } else {
                (
                    false,
                    format!(
                        "{} shows {seen:?} inside but holds {expected:?}",
                        home.display()
                    ),
                )
            }
        }
        Ok(ToolResult::RunBash(run)) => (
            false,
            format!(
                "listing {} inside failed ({:?}): {}",
                home.display(),
                run.exit_code,
                run.stderr.to_text_lossy().trim()
            ),
        ),
        Ok(other) => (false, format!("a {} result", other.name())),
        Err(e) => (false, e.to_string()),
    };
    CanaryResult {
        name,
        passed,
        detail,
    }
}

#[cfg(test)]
#[path = "private_home_tests.rs"]
mod tests;
