//! The canaries both walled providers (`local` and `openshell`) run from inside: the probes
//! every wall must refuse, running a canary script through the runner, and the verdicts on what
//! the probes observed.
//!
//! Each provider writes its own script (its framing, and how each probe is phrased for the
//! tools its sandbox has) and parses it into [`Observations`], using the probe names below. It
//! judges its own probes itself (the local wall's Landlock probe, loopback-only network and
//! capabilities; OpenShell's folder and private-home verification).
//!
//! | canary | probe | passes when |
//! |---|---|---|
//! | `home_absent` | [`probe::HOME`] lists the user's home | it failed, or lists nothing but the allowed entries |
//! | `outside_read_refused` | [`probe::SENTINEL`] reads a host file outside the grants | it failed and its output holds no secret |
//! | `outside_write_refused` | `write_*` writes into `/`, `/usr`, `/etc` (and more) | at least the three reported, none succeeded |
//! | `read_only_grant_refuses_write` | `write_ro_*` writes into each read-only folder | at least one reported, none succeeded |
//! | `proxy_refuses_unlisted_host` | [`probe::PROXY`] sends `CONNECT` for [`CANARY_HOST`]:[`CANARY_PORT`] | the proxy answered with status 403 |
//! | `no_new_privs` | [`probe::STATUS`] reads `/proc/self/status` | `NoNewPrivs: 1` |
//! | `seccomp_filter` | [`probe::STATUS`] | `Seccomp: 2` (filter mode) |
//! | `runner_socket_fixed` | [`probe::SOCKET_FOLDER`] makes a file in the runner's socket folder | it failed: no command can move the socket away and listen in the runner's place |

use std::collections::BTreeMap;
use std::path::Path;

use protocol::{CanaryResult, FolderAccess};
use tokio_util::sync::CancellationToken;
use tool_protocol::{RunBash, ToolRequest, ToolResult};

use crate::runner_client::RunnerConnection;
use crate::sandbox::SandboxRequest;

/// A host name no allow-list names (`.invalid` never resolves either).
pub const CANARY_HOST: &str = "paddock-canary.invalid";

/// The canary's port: one no profile allows (strict and standard allow 443 by name, `open`
/// any public address on 80 and 443), so every profile refuses the request itself rather than
/// failing to resolve the name (which `open`, allowing any name, answered with 502).
pub const CANARY_PORT: u16 = 9;

/// How long a canary script may run.
const SCRIPT_TIMEOUT_MS: u64 = 20_000;

/// The names of the probes the shared verdicts read.
pub(crate) mod probe {
    /// Lists the user's home, one entry a line.
    pub const HOME: &str = "home";
    /// Reads the sentinel file.
    pub const SENTINEL: &str = "sentinel";
    /// Asks the sandbox's proxy to `CONNECT` to the canary host; prints its first answer line.
    pub const PROXY: &str = "proxy";
    /// Prints the `NoNewPrivs:` and `Seccomp:` lines (and any other) of `/proc/self/status`.
    pub const STATUS: &str = "status";
    /// Every write a wall must refuse starts so; `outside_write_refused` counts those that do
    /// not start with [`READ_ONLY_WRITE`].
    pub const WRITE: &str = "write_";
    /// Writes into read-only folders.
    pub const READ_ONLY_WRITE: &str = "write_ro_";
    /// Makes a file in the runner's socket folder.
    pub const SOCKET_FOLDER: &str = "socket_folder";
}

/// Ends each probe's output in a canary script's stdout.
const END: &str = "__PADDOCK_CANARY_END__";

/// One bash script running every probe in turn, each in its own subshell (a probe that
/// `exit`s ends only itself); each writes `OBS <name>`, its output, and `<END> <exit code>`.
pub(crate) fn script(probes: &[(String, String)]) -> String {
    let mut script = String::from("set +e\n");
    for (name, command) in probes {
        script.push_str(&format!(
            "echo 'OBS {name}'; ( {command} ) 2>&1; code=$?; printf '\\n{END} %s\\n' \"$code\"\n"
        ));
    }
    script
}

/// The observations in a canary script's stdout: a probe's non-empty output lines joined
/// with `|` (at most 400 characters). A probe whose end line is missing (the script was cut
/// short) is not an observation.
pub(crate) fn parse(stdout: &str) -> Observations {
    let mut observations = Observations::new();
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

/// Quotes `text` for a POSIX shell.
pub fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// What one probe reported.
#[derive(Debug)]
pub(crate) struct Observation {
    pub code: i64,
    /// The probe's output, lines joined with `|`.
    pub output: String,
}

/// Every probe that reported, by name.
pub(crate) type Observations = BTreeMap<String, Observation>;

pub(crate) fn canary(name: &str, passed: bool, detail: String) -> CanaryResult {
    CanaryResult {
        name: name.to_owned(),
        passed,
        detail,
    }
}

/// The failed canary whose probe did not report.
pub(crate) fn missing(name: &str) -> CanaryResult {
    canary(name, false, "the probe did not report".into())
}

/// Writes into `/`, `/usr` and `/etc`: the three every wall refuses.
pub(crate) fn system_write_probes() -> Vec<(String, String)> {
    [
        ("write_root", "/paddock-canary"),
        ("write_usr", "/usr/paddock-canary"),
        ("write_etc", "/etc/paddock-canary"),
    ]
    .into_iter()
    .map(|(name, path)| (name.to_owned(), format!(": > {path}")))
    .collect()
}

/// Makes a file in the runner's socket folder `folder` (removed again if that worked, with
/// `created` printed): what a command taking the runner's place would do first.
pub(crate) fn socket_folder_probe(folder: &str) -> (String, String) {
    let file = sh_quote(&format!("{folder}/.paddock-canary"));
    (
        probe::SOCKET_FOLDER.to_owned(),
        format!("if : > {file}; then rm -f {file}; echo created; else false; fi"),
    )
}

/// `runner_socket_fixed`: the [`socket_folder_probe`] reported and was refused.
pub(crate) fn runner_socket_fixed(obs: &Observations) -> CanaryResult {
    let name = "runner_socket_fixed";
    let Some(o) = obs.get(probe::SOCKET_FOLDER) else {
        return missing(name);
    };
    canary(
        name,
        o.code != 0 && !o.output.contains("created"),
        format!(
            "a command making a file in the runner's socket folder: exit {} ({})",
            o.code, o.output
        ),
    )
}

/// A write into each read-only grant; into `fallback` (a folder the wall mounts read-only)
/// when the session has none.
pub(crate) fn read_only_write_probes(
    request: &SandboxRequest,
    fallback: &str,
) -> Vec<(String, String)> {
    let mut folders: Vec<&str> = request
        .folders
        .iter()
        .filter(|f| f.access == FolderAccess::ReadOnly)
        .map(|f| f.path.as_str())
        .collect();
    if folders.is_empty() {
        folders.push(fallback);
    }
    folders
        .iter()
        .enumerate()
        .map(|(i, folder)| {
            (
                format!("{}{i}", probe::READ_ONLY_WRITE),
                format!(": > {}", sh_quote(&format!("{folder}/.paddock-canary"))),
            )
        })
        .collect()
}

/// Runs a canary script through the runner: its stdout, or the failed `suite` canary.
pub(crate) async fn run_script(
    connection: &RunnerConnection,
    script: String,
    cancel: &CancellationToken,
) -> Result<String, CanaryResult> {
    let request = ToolRequest::RunBash(RunBash {
        command: script,
        cwd: None,
        env: None,
        stdin: None,
        timeout_ms: Some(SCRIPT_TIMEOUT_MS),
        max_output_bytes: None,
    });
    match connection.call(request, None, cancel).await {
        Ok(ToolResult::RunBash(result)) => Ok(result.stdout.to_text_lossy()),
        Ok(other) => Err(canary(
            "suite",
            false,
            format!("the canary script got a {} result", other.name()),
        )),
        Err(e) => Err(canary(
            "suite",
            false,
            format!("the canary script failed: {e}"),
        )),
    }
}

/// The first component of each of `paths` that lies below `home`: the home's entries those
/// paths may show inside.
pub(crate) fn entries_below<'a>(
    home: &Path,
    paths: impl IntoIterator<Item = &'a Path>,
) -> Vec<String> {
    paths
        .into_iter()
        .filter_map(|path| path.strip_prefix(home).ok())
        .filter_map(|rest| rest.components().next())
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect()
}

/// `home_absent`: the home probe failed (`failed_means` says what its failure proves), or the
/// home lists nothing but `allowed`.
pub(crate) fn home_absent(
    obs: &Observations,
    home: &Path,
    allowed: &[String],
    failed_means: &str,
) -> CanaryResult {
    let name = "home_absent";
    match obs.get(probe::HOME) {
        Some(o) if o.code != 0 => canary(
            name,
            true,
            format!("{} {failed_means} ({})", home.display(), o.output),
        ),
        Some(o) => {
            let extra: Vec<&str> = o
                .output
                .split('|')
                .filter(|e| !e.is_empty() && !allowed.iter().any(|a| a == e))
                .collect();
            canary(
                name,
                extra.is_empty(),
                if extra.is_empty() {
                    format!("only granted folders exist under {}", home.display())
                } else {
                    format!("{} shows {} inside", home.display(), extra.join(", "))
                },
            )
        }
        None => missing(name),
    }
}

/// `outside_read_refused`: reading the sentinel failed, and nothing of its secret came out.
pub(crate) fn outside_read_refused(
    obs: &Observations,
    sentinel: &Path,
    secret: &str,
) -> CanaryResult {
    let name = "outside_read_refused";
    let Some(o) = obs.get(probe::SENTINEL) else {
        return missing(name);
    };
    let leaked = o.output.contains(secret);
    canary(
        name,
        o.code != 0 && !leaked,
        format!(
            "cat {}: exit {} ({})",
            sentinel.display(),
            o.code,
            if leaked {
                "CONTENT LEAKED"
            } else {
                o.output.as_str()
            }
        ),
    )
}

/// The write probes `select` picks: how many reported, and those that succeeded.
fn writes<'a>(obs: &'a Observations, select: impl Fn(&str) -> bool) -> (usize, Vec<&'a str>) {
    let reported: Vec<(&'a String, &'a Observation)> =
        obs.iter().filter(|(name, _)| select(name)).collect();
    let written = reported
        .iter()
        .filter(|(_, o)| o.code == 0)
        .map(|(name, _)| name.as_str())
        .collect();
    (reported.len(), written)
}

/// `outside_write_refused`: at least the three [`system_write_probes`] reported (a provider
/// may add more writes outside the grants), and every write was refused.
pub(crate) fn outside_write_refused(obs: &Observations) -> CanaryResult {
    let (reported, written) = writes(obs, |name| {
        name.starts_with(probe::WRITE) && !name.starts_with(probe::READ_ONLY_WRITE)
    });
    canary(
        "outside_write_refused",
        reported >= 3 && written.is_empty(),
        if written.is_empty() {
            format!("{reported} writes outside the grants all refused")
        } else {
            format!("writes succeeded: {}", written.join(", "))
        },
    )
}

/// `read_only_grant_refuses_write`: a [`read_only_write_probes`] reported, and every one was
/// refused.
pub(crate) fn read_only_grant_refuses_write(obs: &Observations) -> CanaryResult {
    let (reported, written) = writes(obs, |name| name.starts_with(probe::READ_ONLY_WRITE));
    canary(
        "read_only_grant_refuses_write",
        reported > 0 && written.is_empty(),
        if written.is_empty() {
            format!("{reported} read-only folders refused a write")
        } else {
            format!("writes succeeded: {}", written.join(", "))
        },
    )
}

/// `proxy_refuses_unlisted_host`: the proxy answered the canary host's `CONNECT` with 403.
pub(crate) fn proxy_refuses_unlisted_host(obs: &Observations) -> CanaryResult {
    let name = "proxy_refuses_unlisted_host";
    let Some(o) = obs.get(probe::PROXY) else {
        return missing(name);
    };
    // The status line: `HTTP/1.1 403 Forbidden`.
    let status = o.output.split_whitespace().nth(1);
    canary(
        name,
        o.code == 0 && status == Some("403"),
        format!("CONNECT {CANARY_HOST}:{CANARY_PORT} answered: {}", o.output),
    )
}

/// The lines the status probe printed from `/proc/self/status`.
pub(crate) struct ProcStatus {
    text: String,
}

impl ProcStatus {
    /// The status probe's lines (none when it did not report).
    pub fn observed(obs: &Observations) -> Self {
        Self {
            text: obs
                .get(probe::STATUS)
                .map(|o| o.output.replace('|', "\n"))
                .unwrap_or_default(),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The value of the `name:` line.
    pub fn field(&self, name: &str) -> Option<String> {
        self.text.lines().find_map(|l| {
            l.strip_prefix(&format!("{name}:"))
                .map(|v| v.trim().to_owned())
        })
    }

    fn canary(&self, name: &str, field: &str, wanted: &str) -> CanaryResult {
        let value = self.field(field);
        canary(
            name,
            value.as_deref() == Some(wanted),
            format!("{field}: {}", value.unwrap_or_default()),
        )
    }
}

/// `no_new_privs`: `NoNewPrivs: 1`.
pub(crate) fn no_new_privs(status: &ProcStatus) -> CanaryResult {
    status.canary("no_new_privs", "NoNewPrivs", "1")
}

/// `seccomp_filter`: `Seccomp: 2` (filter mode).
pub(crate) fn seccomp_filter(status: &ProcStatus) -> CanaryResult {
    status.canary("seccomp_filter", "Seccomp", "2")
}

#[cfg(test)]
#[path = "canaries_tests.rs"]
pub(crate) mod tests;
