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
//! | `resource_limits` | the wall's process is in its cgroup, and the per-process limits read inside are the ones set |
//! | `runner_socket_fixed` | a command cannot make a file in the runner's socket folder (so cannot replace the socket) |
//!
//! The canaries it shares with OpenShell are judged in `crate::canaries`; the wall's own ones,
//! its probes (shell builtins only) and the script's framing are here.

use std::path::Path;

use paddock_wall::config::{LimitedResource, ResourceRlimit};
use protocol::{Attestation, CanaryResult, EnforcementLevel, FolderAccess, ResourceLimits};
use tokio_util::sync::CancellationToken;
use tool_protocol::{ListDirectory, ToolRequest, ToolResult};

use crate::attestation::{self, config_hash};
use crate::canaries::{
    CANARY_HOST, CANARY_PORT, Observations, ProcStatus, canary, entries_below, home_absent,
    missing, no_new_privs, outside_read_refused, outside_write_refused, parse, probe,
    proxy_refuses_unlisted_host, read_only_grant_refuses_write, read_only_write_probes, run_script,
    runner_socket_fixed, script, seccomp_filter, sh_quote, socket_folder_probe,
    system_write_probes,
};
use crate::error::ProviderError;
use crate::local::layout::{BIN_DIR, HOME_INSIDE, LANDLOCK_PROBE_INSIDE, RUNNER_DIR_INSIDE};
use crate::runner_client::{CallError, RunnerConnection};
use crate::sandbox::SandboxRequest;
use paddock_wall::config::BRIDGE_PORT;

/// What the attestation needs to know about the wall.
pub struct CanaryInput<'a> {
    pub request: &'a SandboxRequest,
    pub user_home: &'a Path,
    pub sentinel: &'a Path,
    pub sentinel_secret: &'a str,
    pub config_parts: Vec<String>,
    pub limits: LimitsCheck<'a>,
}

/// What the `resource_limits` canary checks.
pub struct LimitsCheck<'a> {
    /// The limits the wall set and read back.
    pub in_force: &'a ResourceLimits,
    /// Whether the wall's process is in its cgroup (checked by the host; `Ok` without one).
    pub in_cgroup: Result<(), String>,
    /// The per-process limits the launcher was told to set.
    pub rlimits: &'a [ResourceRlimit],
}

fn probes(input: &CanaryInput<'_>) -> Vec<(String, String)> {
    let q = |p: &str| sh_quote(p);
    // Shell builtins only, run in the script's own shell: no process is started or forked.
    let home = q(&input.user_home.display().to_string());
    let mut probes = vec![
        (
            probe::HOME.to_owned(),
            format!(
                "if [ -e {home} ]; then shopt -s dotglob nullglob; \
                 for f in {home}/*; do echo \"${{f##*/}}\"; done; else echo absent; false; fi"
            ),
        ),
        (
            probe::SENTINEL.to_owned(),
            format!(
                "if exec 3< {}; then read -r line <&3; echo \"$line\"; exec 3<&-; else false; fi",
                q(&input.sentinel.display().to_string())
            ),
        ),
    ];
    probes.extend(system_write_probes());
    probes.extend([
        (
            "landlock".to_owned(),
            format!(": > {LANDLOCK_PROBE_INSIDE}/canary"),
        ),
        (
            probe::PROXY.to_owned(),
            format!(
                "if exec 3<>/dev/tcp/127.0.0.1/{BRIDGE_PORT}; then \
                 printf 'CONNECT {CANARY_HOST}:{CANARY_PORT} HTTP/1.1\\r\\nHost: {CANARY_HOST}:{CANARY_PORT}\\r\\n\\r\\n' >&3 && \
                 read -r line <&3; ok=$?; echo \"$line\"; exec 3<&-; [ $ok -eq 0 ]; else false; fi"
            ),
        ),
        (
            probe::STATUS.to_owned(),
            "while IFS= read -r l; do case $l in NoNewPrivs:*|Seccomp:*|CapEff:*|CapPrm:*|CapAmb:*) \
             echo \"$l\";; esac; done < /proc/self/status"
                .to_owned(),
        ),
        (
            "limits".to_owned(),
            "while IFS= read -r l; do case $l in 'Max processes'*|'Max data size'*|'Max open files'*) \
             echo \"$l\";; esac; done < /proc/self/limits"
                .to_owned(),
        ),
        (
            "netdev".to_owned(),
            "n=0; while IFS=: read -r name rest; do n=$((n+1)); [ $n -gt 2 ] && echo \"${name// /}\"; \
             done < /proc/net/dev; true"
                .to_owned(),
        ),
    ]);
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
    probes.extend(read_only_write_probes(input.request, BIN_DIR));
    probes.push(socket_folder_probe(RUNNER_DIR_INSIDE));
    probes
}

/// The home entries that may exist inside: the first component of every grant (or of the
/// private home) below the user's home. Refused when a grant holds the whole home.
fn allowed_home_entries(input: &CanaryInput<'_>) -> Result<Vec<String>, String> {
    let paths: Vec<&Path> = input
        .request
        .folders
        .iter()
        .map(|f| Path::new(&f.path))
        .chain([Path::new(HOME_INSIDE)])
        .collect();
    if let Some(granted) = paths.iter().find(|path| input.user_home.starts_with(path)) {
        return Err(format!("{} is granted to this session", granted.display()));
    }
    Ok(entries_below(input.user_home, paths))
}

fn judge(input: &CanaryInput<'_>, obs: &Observations) -> Vec<CanaryResult> {
    let status = ProcStatus::observed(obs);
    vec![
        match allowed_home_entries(input) {
            Err(granted) => canary(
                "home_absent",
                true,
                format!("{granted}; nothing else of the home is mounted"),
            ),
            Ok(allowed) => home_absent(obs, input.user_home, &allowed, "does not exist inside"),
        },
        outside_read_refused(obs, input.sentinel, input.sentinel_secret),
        outside_write_refused(obs),
        read_only_grant_refuses_write(obs),
        landlock_enforced(obs),
        proxy_refuses_unlisted_host(obs),
        network_loopback_only(obs),
        no_new_privs(&status),
        seccomp_filter(&status),
        no_capabilities(&status),
        resource_limits(&input.limits, obs),
        runner_socket_fixed(obs),
    ]
}

/// The soft limit of `name` (`Max processes`, …) in `/proc/self/limits` lines joined by `|`.
fn soft_limit(limits: &str, name: &str) -> Option<u64> {
    limits.split('|').find_map(|line| {
        let value = line.strip_prefix(name)?.split_whitespace().next()?;
        Some(if value == "unlimited" {
            u64::MAX
        } else {
            value.parse().ok()?
        })
    })
}

fn resource_limits(check: &LimitsCheck<'_>, obs: &Observations) -> CanaryResult {
    const NAME: &str = "resource_limits";
    if let Err(why) = &check.in_cgroup {
        return canary(NAME, false, why.clone());
    }
    let Some(seen) = obs.get("limits") else {
        return missing(NAME);
    };
    let wrong: Vec<String> = check
        .rlimits
        .iter()
        .filter_map(|limit| {
            let name = match limit.resource {
                LimitedResource::Processes => "Max processes",
                LimitedResource::Data => "Max data size",
                LimitedResource::OpenFiles => "Max open files",
            };
            let found = soft_limit(&seen.output, name);
            (found != Some(limit.soft)).then(|| {
                format!(
                    "{name} is {} inside, not {}",
                    found.map_or_else(|| "missing".to_owned(), |n| n.to_string()),
                    limit.soft
                )
            })
        })
        .collect();
    if wrong.is_empty() {
        canary(
            NAME,
            true,
            format!(
                "{} ({})",
                crate::local::resources::describe(check.in_force),
                check.in_force.detail
            ),
        )
    } else {
        canary(NAME, false, wrong.join("; "))
    }
}

fn landlock_enforced(obs: &Observations) -> CanaryResult {
    match obs.get("landlock") {
        Some(o) => canary(
            "landlock_enforced",
            o.code != 0 && o.output.contains("Permission denied"),
            format!(
                "write into a mounted folder without a Landlock rule: exit {} ({})",
                o.code, o.output
            ),
        ),
        None => missing("landlock_enforced"),
    }
}

fn network_loopback_only(obs: &Observations) -> CanaryResult {
    match obs.get("netdev") {
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
    }
}

fn no_capabilities(status: &ProcStatus) -> CanaryResult {
    let held = paddock_wall::privileges::held_capabilities(status.text());
    let complete = ["CapEff", "CapPrm", "CapAmb"]
        .iter()
        .all(|n| status.field(n).is_some());
    canary(
        "no_capabilities",
        complete && held.is_empty(),
        if held.is_empty() {
            "no capability held".into()
        } else {
            format!("held: {}", held.join(", "))
        },
    )
}

fn grants_reachable(
    input: &CanaryInput<'_>,
    listings: &[Result<ToolResult, CallError>],
) -> CanaryResult {
    let unreachable: Vec<String> = input
        .request
        .folders
        .iter()
        .zip(listings)
        .filter_map(|(f, r)| r.as_ref().err().map(|e| format!("{} ({e})", f.path)))
        .collect();
    canary(
        "grants_reachable",
        unreachable.is_empty(),
        if unreachable.is_empty() {
            format!("{} granted folders listed", listings.len())
        } else {
            format!("unreachable: {}", unreachable.join("; "))
        },
    )
}

/// Runs the suite and returns the attestation; refuses the session when a canary failed.
pub async fn attest(
    connection: &RunnerConnection,
    input: &CanaryInput<'_>,
) -> Result<Attestation, ProviderError> {
    let cancel = CancellationToken::new();
    let suite = run_script(connection, script(&probes(input)), &cancel);
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
    let (suite, listings) = tokio::join!(suite, listings);
    let mut canaries = match suite {
        Ok(stdout) => judge(input, &parse(&stdout)),
        Err(failed) => vec![failed],
    };
    canaries.push(grants_reachable(input, &listings));
    let parts: Vec<&str> = input.config_parts.iter().map(String::as_str).collect();
    attestation::conclude(EnforcementLevel::Local, config_hash(&parts), canaries)
}

#[cfg(test)]
#[path = "canaries_tests.rs"]
mod tests;
