//! Attesting an OpenShell sandbox from inside, through the runner, before the first tool call:
//! every granted folder is verified (a path that already exists in the image can shadow a
//! mount), then the wall's canaries run. Any failure refuses the session.
//!
//! | canary | proves |
//! |---|---|
//! | `grant_verified:<path>` | read-write: a nonce the host wrote is read (and removed) inside; read-only: a file's bytes (or the listing) match the host's |
//! | `private_home_verified` | with credential entries: the sandbox's user lists exactly the copies the host put in the private home |
//! | `home_absent` | the user's home is not there (only granted folders under it) |
//! | `outside_read_refused` | a host sentinel file outside every grant cannot be read |
//! | `outside_write_refused` | `/`, `/usr` and `/etc` refuse writes |
//! | `read_only_grant_refuses_write` | read-only grants (or the read-only runner folder) refuse writes |
//! | `proxy_refuses_unlisted_host` | the sandbox proxy answers 403 for a host no rule names |
//! | `no_new_privs` | `NoNewPrivs: 1` |
//! | `seccomp_filter` | `Seccomp: 2` |

use std::collections::BTreeMap;
use std::path::Path;

use protocol::{Attestation, CanaryResult, EnforcementLevel, FolderAccess};
use tokio_util::sync::CancellationToken;
use tool_protocol::{Delete, ListDirectory, ReadBytes, RunBash, ToolRequest, ToolResult};

use crate::attestation::now_ms;
use crate::error::ProviderError;
use crate::local::{CANARY_HOST, sh_quote};
use crate::runner_client::RunnerConnection;
use crate::sandbox::SandboxRequest;

/// The most bytes of a read-only folder's file compared inside and out.
const COMPARE_BYTES: u64 = 64 * 1024;

/// What the attestation needs to know.
pub struct AttestInput<'a> {
    pub request: &'a SandboxRequest,
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

fn canary(name: &str, passed: bool, detail: String) -> CanaryResult {
    CanaryResult {
        name: name.to_owned(),
        passed,
        detail,
    }
}

/// Runs the folder checks and the canaries; refuses the session when any failed.
pub async fn attest(
    connection: &RunnerConnection,
    input: &AttestInput<'_>,
) -> Result<Attestation, ProviderError> {
    let mut canaries = Vec::new();
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
    let attestation = Attestation {
        enforcement: EnforcementLevel::Openshell,
        config_hash: input.config_hash.clone(),
        canaries,
        time_ms: now_ms(),
    };
    if attestation.passed() {
        Ok(attestation)
    } else {
        let failures = attestation
            .failures()
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect::<Vec<_>>()
            .join("; ");
        Err(ProviderError::AttestationFailed { failures })
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
            "home".to_owned(),
            format!("ls -A1 {}", q(&input.user_home.display().to_string())),
        ),
        (
            "sentinel".to_owned(),
            format!("cat {}", q(&input.sentinel.display().to_string())),
        ),
        ("write_root".to_owned(), ": > /paddock-canary".to_owned()),
        ("write_usr".to_owned(), ": > /usr/paddock-canary".to_owned()),
        ("write_etc".to_owned(), ": > /etc/paddock-canary".to_owned()),
        (
            "proxy".to_owned(),
            format!(
                "p=\"${{HTTPS_PROXY:-$https_proxy}}\"; [ -n \"$p\" ] || {{ echo 'no HTTPS_PROXY'; exit 2; }}; \
                 hp=\"${{p#*://}}\"; hp=\"${{hp%%/*}}\"; \
                 exec 3<>\"/dev/tcp/${{hp%:*}}/${{hp##*:}}\" && \
                 printf 'CONNECT {CANARY_HOST}:443 HTTP/1.1\\r\\nHost: {CANARY_HOST}:443\\r\\n\\r\\n' >&3 && \
                 head -n1 <&3"
            ),
        ),
        (
            "status".to_owned(),
            "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status".to_owned(),
        ),
    ];
    let read_only: Vec<&str> = input
        .request
        .folders
        .iter()
        .filter(|f| f.access == FolderAccess::ReadOnly)
        .map(|f| f.path.as_str())
        .collect();
    if read_only.is_empty() {
        probes.push((
            "write_ro_0".to_owned(),
            format!(
                ": > {}",
                q(&format!("{}/.paddock-canary", input.runner_dir))
            ),
        ));
    }
    for (i, folder) in read_only.iter().enumerate() {
        probes.push((
            format!("write_ro_{i}"),
            format!(": > {}", q(&format!("{folder}/.paddock-canary"))),
        ));
    }
    probes
}

/// One bash script running every probe; each prints `OBS <name> <exit code> <output>`.
fn script(probes: &[(String, String)]) -> String {
    let mut script = String::from("set +e\n");
    for (name, command) in probes {
        script.push_str(&format!(
            "out=$( ( {command} ) 2>&1 ); code=$?; printf 'OBS %s %s %s\\n' {name} \"$code\" \"$(printf %s \"$out\" | tr '\\n' '|' | head -c 400)\"\n"
        ));
    }
    script
}

struct Observation {
    code: i64,
    output: String,
}

fn parse(stdout: &str) -> BTreeMap<String, Observation> {
    stdout
        .lines()
        .filter_map(|line| {
            let (name, rest) = line.strip_prefix("OBS ")?.split_once(' ')?;
            let (code, output) = rest.split_once(' ').unwrap_or((rest, ""));
            Some((
                name.to_owned(),
                Observation {
                    code: code.parse().ok()?,
                    output: output.to_owned(),
                },
            ))
        })
        .collect()
}

async fn run_canaries(connection: &RunnerConnection, input: &AttestInput<'_>) -> Vec<CanaryResult> {
    let probes = probes(input);
    let result = call(
        connection,
        ToolRequest::RunBash(RunBash {
            command: script(&probes),
            cwd: None,
            env: None,
            stdin: None,
            timeout_ms: Some(20_000),
            max_output_bytes: None,
        }),
    )
    .await;
    match result {
        Ok(ToolResult::RunBash(result)) => judge(input, &parse(&result.stdout.to_text_lossy())),
        Ok(other) => vec![canary(
            "suite",
            false,
            format!("the canary script got a {} result", other.name()),
        )],
        Err(e) => vec![canary(
            "suite",
            false,
            format!("the canary script failed: {e}"),
        )],
    }
}

fn judge(input: &AttestInput<'_>, obs: &BTreeMap<String, Observation>) -> Vec<CanaryResult> {
    let missing = |name: &str| canary(name, false, "the probe did not report".into());
    let mut results = Vec::new();
    let home = input.user_home;
    let allowed: Vec<String> = input
        .request
        .folders
        .iter()
        .map(|f| Path::new(&f.path))
        .chain(input.private_home)
        .filter_map(|path| path.strip_prefix(home).ok())
        .filter_map(|rest| rest.components().next())
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    results.push(match obs.get("home") {
        Some(o) if o.code != 0 => canary(
            "home_absent",
            true,
            format!("{} is not there ({})", home.display(), o.output),
        ),
        Some(o) => {
            let extra: Vec<&str> = o
                .output
                .split('|')
                .filter(|e| !e.is_empty() && !allowed.iter().any(|a| a == e))
                .collect();
            canary(
                "home_absent",
                extra.is_empty(),
                if extra.is_empty() {
                    format!("only granted folders exist under {}", home.display())
                } else {
                    format!("{} shows {} inside", home.display(), extra.join(", "))
                },
            )
        }
        None => missing("home_absent"),
    });
    results.push(match obs.get("sentinel") {
        Some(o) => {
            let leaked = o.output.contains(input.sentinel_secret);
            canary(
                "outside_read_refused",
                o.code != 0 && !leaked,
                format!(
                    "cat {}: exit {} ({})",
                    input.sentinel.display(),
                    o.code,
                    if leaked {
                        "CONTENT LEAKED"
                    } else {
                        o.output.as_str()
                    }
                ),
            )
        }
        None => missing("outside_read_refused"),
    });
    let writes: Vec<(&String, &Observation)> = obs
        .iter()
        .filter(|(n, _)| n.starts_with("write_") && !n.starts_with("write_ro_"))
        .collect();
    let written: Vec<&str> = writes
        .iter()
        .filter(|(_, o)| o.code == 0)
        .map(|(n, _)| n.as_str())
        .collect();
    results.push(canary(
        "outside_write_refused",
        writes.len() == 3 && written.is_empty(),
        if written.is_empty() {
            format!("{} writes outside the grants were refused", writes.len())
        } else {
            format!("writes succeeded: {}", written.join(", "))
        },
    ));
    let ro: Vec<(&String, &Observation)> = obs
        .iter()
        .filter(|(n, _)| n.starts_with("write_ro_"))
        .collect();
    let ro_written: Vec<&str> = ro
        .iter()
        .filter(|(_, o)| o.code == 0)
        .map(|(n, _)| n.as_str())
        .collect();
    results.push(canary(
        "read_only_grant_refuses_write",
        !ro.is_empty() && ro_written.is_empty(),
        if ro_written.is_empty() {
            format!("{} read-only folders refused a write", ro.len())
        } else {
            format!("writes succeeded: {}", ro_written.join(", "))
        },
    ));
    results.push(match obs.get("proxy") {
        Some(o) => canary(
            "proxy_refuses_unlisted_host",
            o.code == 0 && o.output.contains(" 403"),
            format!("CONNECT {CANARY_HOST}:443 answered: {}", o.output),
        ),
        None => missing("proxy_refuses_unlisted_host"),
    });
    let status = obs
        .get("status")
        .map(|o| o.output.replace('|', "\n"))
        .unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| {
                l.strip_prefix(&format!("{name}:"))
                    .map(|v| v.trim().to_owned())
            })
            .unwrap_or_default()
    };
    results.push(canary(
        "no_new_privs",
        field("NoNewPrivs") == "1",
        format!("NoNewPrivs: {}", field("NoNewPrivs")),
    ));
    results.push(canary(
        "seccomp_filter",
        field("Seccomp") == "2",
        format!("Seccomp: {}", field("Seccomp")),
    ));
    results
}

#[cfg(test)]
#[path = "attest_tests.rs"]
mod tests;
