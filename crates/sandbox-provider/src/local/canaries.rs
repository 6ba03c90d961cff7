//! The wall attestation: a fixed canary suite run from inside, through the real runner, right
//! after start and before the first tool call. Any failed canary refuses the session.
//!
//! | canary | proves |
//! |---|---|
//! | `home_absent` | the user's home is not mounted (only granted folders under it exist) |
//! | `outside_read_refused` | a sentinel file of the host outside the grants cannot be read |
//! | `outside_write_refused` | `/`, `/usr`, `/etc` and a grant's parent folder refuse writes |
//! | `read_only_grant_refuses_write` | read-only grants (or the read-only wall binaries) refuse writes |
//! | `landlock_enforced` | a folder mounted read-write but not in the Landlock rules refuses writes |
//! | `proxy_refuses_unlisted_host` | the proxy answers 403 for a host no rule names |
//! | `network_loopback_only` | the network namespace has the loopback interface only |
//! | `no_new_privs` | `NoNewPrivs: 1` |
//! | `seccomp_filter` | `Seccomp: 2` (filter mode) |
//! | `no_capabilities` | effective, permitted and ambient capabilities are all zero |
//! | `grants_reachable` | every granted folder is listed by the runner (none shadowed) |

use std::collections::BTreeMap;
use std::path::Path;

use protocol::{Attestation, CanaryResult, EnforcementLevel, FolderAccess};
use tokio_util::sync::CancellationToken;
use tool_protocol::{ListDirectory, RunBash, ToolRequest, ToolResult};

use crate::attestation::{config_hash, now_ms};
use crate::error::ProviderError;
use crate::local::layout::{BIN_DIR, HOME_INSIDE, LANDLOCK_PROBE_INSIDE};
use crate::runner_client::RunnerConnection;
use crate::sandbox::SandboxRequest;
use paddock_wall::config::BRIDGE_PORT;

/// A host name no allow-list names (`.invalid` never resolves either).
pub const CANARY_HOST: &str = "paddock-canary.invalid";

/// Quotes `text` for a POSIX shell.
pub fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// What the attestation needs to know about the wall.
pub struct CanaryInput<'a> {
    pub request: &'a SandboxRequest,
    pub user_home: &'a Path,
    pub sentinel: &'a Path,
    pub sentinel_secret: &'a str,
    pub config_parts: Vec<String>,
}

fn probes(input: &CanaryInput<'_>) -> Vec<(String, String)> {
    let q = |p: &str| sh_quote(p);
    // Shell builtins only, run in the script's own shell: no process is started or forked.
    let home = q(&input.user_home.display().to_string());
    let mut probes = vec![
        (
            "home".to_owned(),
            format!(
                "if [ -e {home} ]; then shopt -s dotglob nullglob; \
                 for f in {home}/*; do echo \"${{f##*/}}\"; done; else echo absent; false; fi"
            ),
        ),
        (
            "sentinel".to_owned(),
            format!(
                "if exec 3< {}; then read -r line <&3; echo \"$line\"; exec 3<&-; else false; fi",
                q(&input.sentinel.display().to_string())
            ),
        ),
        ("write_root".to_owned(), ": > /paddock-canary".to_owned()),
        ("write_usr".to_owned(), ": > /usr/paddock-canary".to_owned()),
        ("write_etc".to_owned(), ": > /etc/paddock-canary".to_owned()),
        (
            "landlock".to_owned(),
            format!(": > {LANDLOCK_PROBE_INSIDE}/canary"),
        ),
        (
            "proxy".to_owned(),
            format!(
                "if exec 3<>/dev/tcp/127.0.0.1/{BRIDGE_PORT}; then \
                 printf 'CONNECT {CANARY_HOST}:443 HTTP/1.1\\r\\nHost: {CANARY_HOST}:443\\r\\n\\r\\n' >&3 && \
                 read -r line <&3; ok=$?; echo \"$line\"; exec 3<&-; [ $ok -eq 0 ]; else false; fi"
            ),
        ),
        (
            "status".to_owned(),
            "while IFS= read -r l; do case $l in NoNewPrivs:*|Seccomp:*|CapEff:*|CapPrm:*|CapAmb:*) \
             echo \"$l\";; esac; done < /proc/self/status"
                .to_owned(),
        ),
        (
            "netdev".to_owned(),
            "n=0; while IFS=: read -r name rest; do n=$((n+1)); [ $n -gt 2 ] && echo \"${name// /}\"; \
             done < /proc/net/dev; true"
                .to_owned(),
        ),
    ];
    let rw: Vec<&str> = input
        .request
        .folders
        .iter()
        .filter(|f| f.access == FolderAccess::ReadWrite)
        .map(|f| f.path.as_str())
        .collect();
    for (i, folder) in input.request.folders.iter().enumerate() {
        if let Some(parent) = Path::new(&folder.path)
            .parent()
            .map(|p| p.display().to_string())
            && parent != "/"
            && !Path::new(&parent).starts_with("/tmp")
            && !Path::new(&parent).starts_with(HOME_INSIDE)
            && !rw.iter().any(|r| Path::new(&parent).starts_with(r))
        {
            probes.push((
                format!("write_parent_{i}"),
                format!(": > {}", q(&format!("{parent}/.paddock-canary"))),
            ));
        }
    }
    let ro: Vec<&str> = input
        .request
        .folders
        .iter()
        .filter(|f| f.access == FolderAccess::ReadOnly)
        .map(|f| f.path.as_str())
        .collect();
    if ro.is_empty() {
        probes.push((
            "write_ro_0".to_owned(),
            format!(": > {BIN_DIR}/.paddock-canary"),
        ));
    }
    for (i, folder) in ro.iter().enumerate() {
        probes.push((
            format!("write_ro_{i}"),
            format!(": > {}", q(&format!("{folder}/.paddock-canary"))),
        ));
    }
    probes
}

/// Ends each probe's output in the script's stdout.
const END: &str = "__PADDOCK_CANARY_END__";

/// One bash script running every probe in turn; each writes `OBS <name>`, its output, and
/// `<END> <exit code>`.
fn script(probes: &[(String, String)]) -> String {
    let mut script = String::from("set +e\n");
    for (name, command) in probes {
        script.push_str(&format!(
            "echo 'OBS {name}'; {{ {command} ; }} 2>&1; code=$?; printf '\\n{END} %s\\n' \"$code\"\n"
        ));
    }
    script
}

#[derive(Debug, Default)]
struct Observation {
    code: i64,
    /// The probe's output, lines joined with `|`.
    output: String,
}

fn parse(stdout: &str) -> BTreeMap<String, Observation> {
    let mut observations = BTreeMap::new();
    let mut lines = stdout.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line.strip_prefix("OBS ") else {
            continue;
        };
        let mut output = Vec::new();
        let mut code = None;
        for line in lines.by_ref() {
            if let Some(rest) = line.strip_prefix(END) {
                code = rest.trim().parse::<i64>().ok();
                break;
            }
            if !line.is_empty() {
                output.push(line);
            }
        }
        if let Some(code) = code {
            observations.insert(
                name.to_owned(),
                Observation {
                    code,
                    output: output.join("|").chars().take(400).collect(),
                },
            );
        }
    }
    observations
}

fn canary(name: &str, passed: bool, detail: String) -> CanaryResult {
    CanaryResult {
        name: name.to_owned(),
        passed,
        detail,
    }
}

/// The home entries that may exist inside: the first component of every grant (or of the
/// private home) below the user's home.
fn allowed_home_entries(input: &CanaryInput<'_>) -> Result<Vec<String>, String> {
    let mut allowed = Vec::new();
    for path in input
        .request
        .folders
        .iter()
        .map(|f| f.path.as_str())
        .chain([HOME_INSIDE])
    {
        let path = Path::new(path);
        if input.user_home.starts_with(path) {
            return Err(format!("{} is granted to this session", path.display()));
        }
        if let Ok(rest) = path.strip_prefix(input.user_home)
            && let Some(first) = rest.components().next()
        {
            allowed.push(first.as_os_str().to_string_lossy().into_owned());
        }
    }
    Ok(allowed)
}

fn judge(input: &CanaryInput<'_>, obs: &BTreeMap<String, Observation>) -> Vec<CanaryResult> {
    let get = |name: &str| obs.get(name);
    let missing = |name: &str| canary(name, false, "the probe did not report".into());
    let mut results = Vec::new();

    results.push(match (get("home"), allowed_home_entries(input)) {
        (_, Err(granted)) => canary(
            "home_absent",
            true,
            format!("{granted}; nothing else of the home is mounted"),
        ),
        (Some(o), Ok(_)) if o.code != 0 => canary(
            "home_absent",
            true,
            format!(
                "{} does not exist inside ({})",
                input.user_home.display(),
                o.output
            ),
        ),
        (Some(o), Ok(allowed)) => {
            let extra: Vec<&str> = o
                .output
                .split('|')
                .filter(|e| !e.is_empty() && !allowed.iter().any(|a| a == e))
                .collect();
            canary(
                "home_absent",
                extra.is_empty(),
                if extra.is_empty() {
                    format!(
                        "only granted folders exist under {}",
                        input.user_home.display()
                    )
                } else {
                    format!(
                        "{} shows {} inside",
                        input.user_home.display(),
                        extra.join(", ")
                    )
                },
            )
        }
        (None, Ok(_)) => missing("home_absent"),
    });
    results.push(match get("sentinel") {
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
        writes.len() >= 3 && written.is_empty(),
        if written.is_empty() {
            format!("{} writes outside the grants all refused", writes.len())
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
    results.push(match get("landlock") {
        Some(o) => canary(
            "landlock_enforced",
            o.code != 0 && o.output.contains("Permission denied"),
            format!(
                "write into a mounted folder without a Landlock rule: exit {} ({})",
                o.code, o.output
            ),
        ),
        None => missing("landlock_enforced"),
    });
    results.push(match get("proxy") {
        Some(o) => canary(
            "proxy_refuses_unlisted_host",
            o.code == 0 && o.output.contains(" 403 "),
            format!("CONNECT {CANARY_HOST}:443 answered: {}", o.output),
        ),
        None => missing("proxy_refuses_unlisted_host"),
    });
    results.push(match get("netdev") {
        Some(o) => {
            let interfaces: Vec<&str> = o
                .output
                .split('|')
                .map(str::trim)
                .filter(|i| !i.is_empty())
                .collect();
            canary(
                "network_loopback_only",
                interfaces == ["lo"],
                format!("interfaces: {}", interfaces.join(", ")),
            )
        }
        None => missing("network_loopback_only"),
    });
    let status = get("status")
        .map(|o| o.output.replace('|', "\n"))
        .unwrap_or_default();
    let field = |name: &str| {
        status.lines().find_map(|l| {
            l.strip_prefix(&format!("{name}:"))
                .map(|v| v.trim().to_owned())
        })
    };
    results.push(canary(
        "no_new_privs",
        field("NoNewPrivs").as_deref() == Some("1"),
        format!("NoNewPrivs: {}", field("NoNewPrivs").unwrap_or_default()),
    ));
    results.push(canary(
        "seccomp_filter",
        field("Seccomp").as_deref() == Some("2"),
        format!("Seccomp: {}", field("Seccomp").unwrap_or_default()),
    ));
    let held = paddock_wall::privileges::held_capabilities(&status);
    let complete = ["CapEff", "CapPrm", "CapAmb"]
        .iter()
        .all(|n| field(n).is_some());
    results.push(canary(
        "no_capabilities",
        complete && held.is_empty(),
        if held.is_empty() {
            "no capability held".into()
        } else {
            format!("held: {}", held.join(", "))
        },
    ));
    results
}

/// Runs the suite and returns the attestation; refuses the session when a canary failed.
pub async fn attest(
    connection: &RunnerConnection,
    input: &CanaryInput<'_>,
) -> Result<Attestation, ProviderError> {
    let probes = probes(input);
    let cancel = CancellationToken::new();
    let bash = connection.call(
        ToolRequest::RunBash(RunBash {
            command: script(&probes),
            cwd: None,
            env: None,
            stdin: None,
            timeout_ms: Some(20_000),
            max_output_bytes: None,
        }),
        None,
        &cancel,
    );
    let listings = futures::future::join_all(input.request.folders.iter().map(|folder| {
        connection.call(
            ToolRequest::ListDirectory(ListDirectory {
                path: Some(folder.path.clone()),
                depth: Some(1),
                limit: Some(1),
            }),
            None,
            &cancel,
        )
    }));
    let (bash, listings) = tokio::join!(bash, listings);
    let mut canaries = match bash {
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
    };
    let unreachable: Vec<String> = input
        .request
        .folders
        .iter()
        .zip(&listings)
        .filter(|(_, r)| r.is_err())
        .map(|(f, r)| {
            format!(
                "{} ({})",
                f.path,
                r.as_ref()
                    .err()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            )
        })
        .collect();
    canaries.push(canary(
        "grants_reachable",
        unreachable.is_empty(),
        if unreachable.is_empty() {
            format!("{} granted folders listed", listings.len())
        } else {
            format!("unreachable: {}", unreachable.join("; "))
        },
    ));
    let parts: Vec<&str> = input.config_parts.iter().map(String::as_str).collect();
    let attestation = Attestation {
        enforcement: EnforcementLevel::Local,
        config_hash: config_hash(&parts),
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

#[cfg(test)]
#[path = "canaries_tests.rs"]
mod tests;
