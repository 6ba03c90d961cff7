//! Attesting an OpenShell sandbox from inside, through the runner, before the first tool call:
//! every granted folder is verified (a path that already exists in the image can shadow a
//! mount), then the wall's canaries run. Any failure refuses the session.
//!
//! | canary | proves |
//! |---|---|
//! | `grant_pinned:<path>` | the folder the runner finds at the grant's path has the device and inode the host pinned at start (a grant swapped for a link before the gateway mounted it fails here) |
//! | `protected_pinned:<path>` | a protected path the gateway mounted over a read-write grant has the device and inode the host pinned before the create request (one swapped for a link before the gateway mounted it fails here) |
//! | `protected_read_only` | no read-only protected path is writable inside (a mount that landed elsewhere leaves the path writable) |
//! | `grant_verified:<path>` | read-write: a nonce the host wrote is read (and removed) inside; read-only: a file's bytes (or the listing) match the host's |
//! | `private_home_verified` | with credential entries: the sandbox's user lists exactly the copies the host put in the private home |
//! | `home_absent` | the user's home is not there (only granted folders under it) |
//! | `outside_read_refused` | a host sentinel file outside every grant cannot be read |
//! | `outside_write_refused` | `/`, `/usr` and `/etc` refuse writes |
//! | `read_only_grant_refuses_write` | read-only grants (or the read-only runner folder) refuse writes |
//! | `proxy_refuses_unlisted_host` | the sandbox proxy answers 403 for a host no rule names |
//! | `no_new_privs` | `NoNewPrivs: 1` |
//! | `seccomp_filter` | `Seccomp: 2` |
//! | `runner_socket_fixed` | a command cannot make a file in the runner's socket folder, so it cannot move the socket away and answer the host's next attach in the runner's place |
//!
//! The canaries it shares with the local wall are judged in `crate::canaries`; the folder and
//! private-home verification, the probes (for the image's tools) and the script's framing are
//! here.

use std::path::Path;

use paddock_wall::pinned::FolderIdentity;
use protocol::{Attestation, CanaryResult, EnforcementLevel, FolderAccess};
use tokio_util::sync::CancellationToken;
use tool_protocol::{Delete, ListDirectory, ReadBytes, Stat, ToolRequest, ToolResult};

use crate::attestation;
use crate::canaries::{
    CANARY_HOST, CANARY_PORT, Observations, ProcStatus, canary, entries_below, home_absent,
    no_new_privs, outside_read_refused, outside_write_refused, parse, probe,
    proxy_refuses_unlisted_host, read_only_grant_refuses_write, read_only_write_probes, run_script,
    runner_socket_fixed, script, seccomp_filter, sh_quote, socket_folder_probe,
    system_write_probes,
};
use crate::error::ProviderError;
use crate::grant_pins::PinnedMount;
use crate::runner_client::RunnerConnection;
use crate::sandbox::SandboxRequest;

/// The most bytes of a read-only folder's file compared inside and out.
const COMPARE_BYTES: u64 = 64 * 1024;

/// What the attestation needs to know.
pub struct AttestInput<'a> {
    pub request: &'a SandboxRequest,
    /// Each granted folder's identity as the host pinned it at start.
    pub pins: &'a [(String, FolderIdentity)],
    /// The protected paths mounted over the read-write grants, pinned before the create.
    pub protected: &'a [PinnedMount],
    pub user_home: &'a Path,
    /// A host file outside every grant, holding `sentinel_secret`.
    pub sentinel: &'a Path,
    pub sentinel_secret: &'a str,
    /// The runner's host folder (mounted read-only).
    pub runner_dir: &'a str,
    /// The private home holding the copies of credential entries, when any are enabled.
    pub private_home: Option<&'a Path>,
    pub config_hash: String,
}

/// Runs the folder checks and the canaries; refuses the session when any failed.
pub async fn attest(
    connection: &RunnerConnection,
    input: &AttestInput<'_>,
) -> Result<Attestation, ProviderError> {
    let mut canaries = Vec::new();
    for (path, identity) in input.pins {
        canaries.push(verify_pinned(connection, path, *identity).await);
    }
    for pin in input.protected {
        let path = pin.mount.path.display().to_string();
        canaries.push(verify_protected(connection, &path, pin.identity).await);
    }
    if input.protected.iter().any(|p| p.mount.read_only) {
        canaries.push(protected_read_only(connection, input.protected).await);
    }
    for folder in &input.request.folders {
        canaries.push(match folder.access {
            FolderAccess::ReadWrite => verify_writable(connection, &folder.path).await,
            FolderAccess::ReadOnly => verify_read_only(connection, &folder.path).await,
        });
    }
    if let Some(home) = input.private_home {
        canaries.push(super::private_home::verify(connection, home).await);
    }
    canaries.extend(run_canaries(connection, input).await);
    attestation::conclude(
        EnforcementLevel::Openshell,
        input.config_hash.clone(),
        canaries,
    )
}

/// The folder at `path` inside is the one the host pinned: same device and inode.
async fn verify_pinned(
    connection: &RunnerConnection,
    path: &str,
    pinned: FolderIdentity,
) -> CanaryResult {
    let name = format!("grant_pinned:{path}");
    let stat = Stat {
        path: path.to_owned(),
    };
    match call(connection, stat.into()).await {
        Ok(ToolResult::Stat(stat)) => match (stat.device, stat.inode) {
            (Some(device), Some(inode)) if device == pinned.device && inode == pinned.inode => {
                canary(
                    &name,
                    true,
                    format!("the mounted folder is the granted one ({pinned})"),
                )
            }
            (Some(device), Some(inode)) => canary(
                &name,
                false,
                format!(
                    "inside, {path} is device {device} inode {inode}, not the folder that was \
                     granted ({pinned}): it was replaced before the gateway mounted it"
                ),
            ),
            _ => canary(
                &name,
                false,
                format!("the runner did not report the identity of {path}"),
            ),
        },
        Ok(other) => canary(&name, false, format!("stat {path} answered {other:?}")),
        Err(e) => canary(&name, false, format!("stat {path} inside failed: {e}")),
    }
}

/// The protected path at `path` inside is what the host pinned: same device and inode.
async fn verify_protected(
    connection: &RunnerConnection,
    path: &str,
    pinned: FolderIdentity,
) -> CanaryResult {
    let name = format!("protected_pinned:{path}");
    let stat = Stat {
        path: path.to_owned(),
    };
    match call(connection, stat.into()).await {
        Ok(ToolResult::Stat(stat)) => match (stat.device, stat.inode) {
            (Some(device), Some(inode)) if device == pinned.device && inode == pinned.inode => {
                canary(
                    &name,
                    true,
                    format!("the mounted path is the one the host found ({pinned})"),
                )
            }
            (Some(device), Some(inode)) => canary(
                &name,
                false,
                format!(
                    "inside, {path} is device {device} inode {inode}, not what the host found \
                     ({pinned}): it was replaced before the gateway mounted it"
                ),
            ),
            _ => canary(
                &name,
                false,
                format!("the runner did not report the identity of {path}"),
            ),
        },
        Ok(other) => canary(&name, false, format!("stat {path} answered {other:?}")),
        Err(e) => canary(
            &name,
            false,
            format!("stat {path} inside failed ({e}): it was replaced by a link or removed"),
        ),
    }
}

/// No read-only protected path is writable inside (`test -w`, which a read-only mount
/// answers no whoever asks).
async fn protected_read_only(connection: &RunnerConnection, pins: &[PinnedMount]) -> CanaryResult {
    let name = "protected_read_only";
    let paths: Vec<String> = pins
        .iter()
        .filter(|p| p.mount.read_only)
        .map(|p| sh_quote(&p.mount.path.display().to_string()))
        .collect();
    let command = format!(
        "for p in {}; do [ -w \"$p\" ] && printf 'writable %s\\n' \"$p\"; done; echo checked",
        paths.join(" ")
    );
    let request = ToolRequest::RunBash(tool_protocol::RunBash {
        command,
        cwd: None,
        env: None,
        stdin: None,
        timeout_ms: Some(10_000),
        max_output_bytes: None,
    });
    match call(connection, request).await {
        Ok(ToolResult::RunBash(result)) => {
            let out = result.stdout.to_text_lossy();
            let writable: Vec<&str> = out
                .lines()
                .filter_map(|l| l.strip_prefix("writable "))
                .collect();
            if !out.contains("checked") {
                canary(name, false, format!("the check did not run: {out}"))
            } else if writable.is_empty() {
                canary(
                    name,
                    true,
                    format!("{} read-only protected paths refuse writes", paths.len()),
                )
            } else {
                canary(
                    name,
                    false,
                    format!(
                        "writable inside, though mounted read-only: {}",
                        writable.join(", ")
                    ),
                )
            }
        }
        Ok(other) => canary(name, false, format!("the check answered {other:?}")),
        Err(e) => canary(name, false, format!("the check failed: {e}")),
    }
}

async fn call(connection: &RunnerConnection, request: ToolRequest) -> Result<ToolResult, String> {
    connection
        .call(request, None, &CancellationToken::new())
        .await
        .map_err(|e| e.to_string())
}

/// The host writes a nonce file; the runner must read exactly it and remove it.
async fn verify_writable(connection: &RunnerConnection, folder: &str) -> CanaryResult {
    let name = format!("grant_verified:{folder}");
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let path = Path::new(folder).join(format!(".paddock-verify-{nonce}"));
    let shown = path.display().to_string();
    if let Err(e) = std::fs::write(&path, nonce.as_bytes()) {
        return canary(
            &name,
            false,
            format!("the host could not write {shown}: {e}"),
        );
    }
    let read = call(
        connection,
        ToolRequest::ReadBytes(ReadBytes {
            path: shown.clone(),
            offset: None,
            length: None,
        }),
    )
    .await;
    let seen = match read {
        Ok(ToolResult::ReadBytes(result)) => Ok(result.data.as_bytes().to_vec()),
        Ok(other) => Err(format!("a {} result", other.name())),
        Err(e) => Err(e),
    };
    let removed = call(
        connection,
        ToolRequest::Delete(Delete {
            path: shown.clone(),
            recursive: None,
        }),
    )
    .await;
    let gone = !path.exists();
    let _ = std::fs::remove_file(&path);
    match (seen, removed) {
        (Ok(bytes), Ok(_)) if bytes == nonce.as_bytes() && gone => canary(
            &name,
            true,
            "a file the host wrote was read and removed inside".into(),
        ),
        (Ok(bytes), _) if bytes != nonce.as_bytes() => canary(
            &name,
            false,
            format!("{shown} reads differently inside: the folder is shadowed by another"),
        ),
        (Err(e), _) => canary(
            &name,
            false,
            format!(
                "a file the host wrote is not visible inside ({e}): the mount is shadowed or missing"
            ),
        ),
        (Ok(_), Err(e)) => canary(&name, false, format!("removing {shown} inside failed: {e}")),
        (Ok(_), Ok(_)) => canary(
            &name,
            false,
            format!("{shown} was removed inside but still exists on the host: not the same folder"),
        ),
    }
}

/// Compares the first regular file (or, for an empty-of-files folder, the listing) of a
/// read-only folder inside and out.
async fn verify_read_only(connection: &RunnerConnection, folder: &str) -> CanaryResult {
    let name = format!("grant_verified:{folder}");
    let mut entries: Vec<(String, bool)> = match std::fs::read_dir(folder) {
        Ok(entries) => entries
            .flatten()
            .map(|e| {
                let is_file = e.file_type().is_ok_and(|t| t.is_file());
                (e.file_name().to_string_lossy().into_owned(), is_file)
            })
            .collect(),
        Err(e) => return canary(&name, false, format!("the host cannot list {folder}: {e}")),
    };
    entries.sort();
    if let Some((file, _)) = entries.iter().find(|(_, is_file)| *is_file) {
        let path = Path::new(folder).join(file);
        let host: Vec<u8> = match std::fs::read(&path) {
            Ok(bytes) => bytes.into_iter().take(COMPARE_BYTES as usize).collect(),
            Err(e) => {
                return canary(
                    &name,
                    false,
                    format!("the host cannot read {}: {e}", path.display()),
                );
            }
        };
        let inside = call(
            connection,
            ToolRequest::ReadBytes(ReadBytes {
                path: path.display().to_string(),
                offset: None,
                length: Some(COMPARE_BYTES),
            }),
        )
        .await;
        return match inside {
            Ok(ToolResult::ReadBytes(result)) if result.data.as_bytes() == host.as_slice() => {
                canary(
                    &name,
                    true,
                    format!("{} has the same bytes inside", path.display()),
                )
            }
            Ok(_) => canary(
                &name,
                false,
                format!(
                    "{} differs inside: the folder is shadowed by another",
                    path.display()
                ),
            ),
            Err(e) => canary(
                &name,
                false,
                format!(
                    "{} is not readable inside ({e}): the mount is shadowed or missing",
                    path.display()
                ),
            ),
        };
    }
    let host: Vec<String> = entries.into_iter().map(|(n, _)| n).collect();
    let inside = call(
        connection,
        ToolRequest::ListDirectory(ListDirectory {
            path: Some(folder.to_owned()),
            depth: Some(1),
            limit: Some(1000),
        }),
    )
    .await;
    match inside {
        Ok(ToolResult::ListDirectory(result)) => {
            let mut names: Vec<String> = result.entries.into_iter().map(|e| e.path).collect();
            names.sort();
            if names == host {
                canary(
                    &name,
                    true,
                    format!("the same {} entries inside", names.len()),
                )
            } else {
                canary(
                    &name,
                    false,
                    format!(
                        "the listing differs inside ({} vs {} entries on the host): the folder is shadowed",
                        names.len(),
                        host.len()
                    ),
                )
            }
        }
        Ok(other) => canary(
            &name,
            false,
            format!("listing answered with a {} result", other.name()),
        ),
        Err(e) => canary(&name, false, format!("listing {folder} inside failed: {e}")),
    }
}

fn probes(input: &AttestInput<'_>) -> Vec<(String, String)> {
    let q = |p: &str| sh_quote(p);
    let mut probes = vec![
        (
            probe::HOME.to_owned(),
            format!("ls -A1 {}", q(&input.user_home.display().to_string())),
        ),
        (
            probe::SENTINEL.to_owned(),
            format!("cat {}", q(&input.sentinel.display().to_string())),
        ),
    ];
    probes.extend(system_write_probes());
    probes.extend([
        (
            probe::PROXY.to_owned(),
            format!(
                "p=\"${{HTTPS_PROXY:-$https_proxy}}\"; [ -n \"$p\" ] || {{ echo 'no HTTPS_PROXY'; exit 2; }}; \
                 hp=\"${{p#*://}}\"; hp=\"${{hp%%/*}}\"; \
                 exec 3<>\"/dev/tcp/${{hp%:*}}/${{hp##*:}}\" && \
                 printf 'CONNECT {CANARY_HOST}:{CANARY_PORT} HTTP/1.1\\r\\nHost: {CANARY_HOST}:{CANARY_PORT}\\r\\n\\r\\n' >&3 && \
                 head -n1 <&3"
            ),
        ),
        (
            probe::STATUS.to_owned(),
            "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status".to_owned(),
        ),
    ]);
    probes.extend(read_only_write_probes(input.request, input.runner_dir));
    probes.push(socket_folder_probe(sandbox_policy::RUNNER_SOCKET_DIR));
    probes
}

async fn run_canaries(connection: &RunnerConnection, input: &AttestInput<'_>) -> Vec<CanaryResult> {
    let script = script(&probes(input));
    match run_script(connection, script, &CancellationToken::new()).await {
        Ok(stdout) => judge(input, &parse(&stdout)),
        Err(failed) => vec![failed],
    }
}

fn judge(input: &AttestInput<'_>, obs: &Observations) -> Vec<CanaryResult> {
    let home = input.user_home;
    let allowed = entries_below(
        home,
        input
            .request
            .folders
            .iter()
            .map(|f| Path::new(&f.path))
            .chain(input.private_home),
    );
    let status = ProcStatus::observed(obs);
    vec![
        home_absent(obs, home, &allowed, "is not there"),
        outside_read_refused(obs, input.sentinel, input.sentinel_secret),
        outside_write_refused(obs),
        read_only_grant_refuses_write(obs),
        proxy_refuses_unlisted_host(obs),
        no_new_privs(&status),
        seccomp_filter(&status),
        runner_socket_fixed(obs),
    ]
}

#[cfg(test)]
#[path = "attest_tests.rs"]
mod tests;
