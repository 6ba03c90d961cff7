//! Safety checks: calls that always ask (except in `bypass`), whatever the rules and the
//! standing approvals say: edits to git hooks and config, CI files and Paddock's own config,
//! and running a file that was just downloaded or just made executable.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::analysis::{Analysis, Unit};
use crate::downloads::{covers, downloads};
use crate::paths::normalize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SafetyCheckKind {
    /// `.git/hooks/*` (and hook managers: `.husky/`, `.pre-commit-config.yaml`): code that
    /// runs on the user's next git command.
    GitHooks,
    /// `.git/config` or `git config` writes: aliases, `core.hooksPath`, `core.fsmonitor`.
    GitConfig,
    /// CI definitions: code that runs with the repository's secrets.
    CiConfig,
    /// `.paddock/*`, `paddock.toml`: the rules this agent runs under.
    PaddockConfig,
    /// Running a file downloaded in this session or by this command.
    RunsDownloadedFile,
    /// Running a file this command just made executable.
    RunsNewExecutable,
}

/// Why a call asks regardless of rules and standing approvals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SafetyCheck {
    pub kind: SafetyCheckKind,
    /// What was seen, e.g. "writes `.git/hooks/pre-commit`".
    pub detail: String,
}

/// The protected kind of a path (absolute, or as written when it cannot be resolved).
/// Compared case-insensitively, for case-insensitive filesystems.
pub fn protected_path(path: &str) -> Option<SafetyCheckKind> {
    let parts: Vec<String> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .map(str::to_ascii_lowercase)
        .collect();
    for (i, part) in parts.iter().enumerate() {
        let next = parts.get(i + 1).map(String::as_str);
        let kind = match (part.as_str(), next) {
            (".git", Some("hooks")) | (".git", None) => Some(SafetyCheckKind::GitHooks),
            (".git", Some("config")) if i + 2 == parts.len() => Some(SafetyCheckKind::GitConfig),
            (".husky", _) | (".pre-commit-config.yaml", None) => Some(SafetyCheckKind::GitHooks),
            (".github", Some("workflows" | "actions"))
            | (".gitea" | ".forgejo", Some("workflows"))
            | (".circleci" | ".buildkite" | ".woodpecker", _) => Some(SafetyCheckKind::CiConfig),
            (
                ".gitlab-ci.yml"
                | ".travis.yml"
                | "jenkinsfile"
                | "azure-pipelines.yml"
                | "bitbucket-pipelines.yml"
                | ".drone.yml"
                | ".woodpecker.yml",
                None,
            ) => Some(SafetyCheckKind::CiConfig),
            (".paddock", _) | ("paddock.toml", None) => Some(SafetyCheckKind::PaddockConfig),
            (".config", Some("paddock")) => Some(SafetyCheckKind::PaddockConfig),
            _ => None,
        };
        if kind.is_some() {
            return kind;
        }
    }
    None
}

/// Programs that only read the paths they are given.
const READS_ONLY: &[&str] = &[
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ls",
    "stat",
    "file",
    "wc",
    "diff",
    "cmp",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "test",
    "[",
    "echo",
    "printf",
    "realpath",
    "readlink",
    "basename",
    "dirname",
    "jq",
    "tree",
    "du",
    "od",
    "hexdump",
];

/// Git subcommands that do not write the paths they are given.
const GIT_READS: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "blame",
    "grep",
    "ls-files",
    "rev-parse",
    "describe",
    "cat-file",
    "shortlog",
    "add",
    "commit",
    "check-ignore",
];

/// `git config` options that only read.
const GIT_CONFIG_READS: &[&str] = &[
    "--get",
    "--get-all",
    "--get-regexp",
    "--get-urlmatch",
    "--list",
    "-l",
    "--show-origin",
    "--show-scope",
    "get",
    "list",
];

/// The safety check a file tool trips by writing `path` (normalised, absolute).
pub fn check_path(tool: &str, path: &str) -> Option<SafetyCheck> {
    protected_path(path).map(|kind| SafetyCheck {
        kind,
        detail: format!("`{tool}` writes `{path}`"),
    })
}

/// The first safety check a shell command trips.
pub fn check_command(
    analysis: &Analysis,
    cwd: &str,
    recently_downloaded: &BTreeSet<String>,
) -> Option<SafetyCheck> {
    for write in &analysis.writes {
        let shown = write.resolved.as_deref().unwrap_or(&write.display);
        if let Some(kind) = protected_path(shown) {
            return Some(SafetyCheck {
                kind,
                detail: format!("the command writes `{shown}`"),
            });
        }
    }
    for unit in &analysis.units {
        if let Some(check) = check_unit_paths(analysis, cwd, unit) {
            return Some(check);
        }
    }
    check_runs_downloaded(analysis, cwd, recently_downloaded)
}

fn unit_text(unit: &Unit) -> String {
    let shown: Vec<&str> = unit.argv.iter().map(|a| a.display.as_str()).collect();
    shown.join(" ")
}

fn check_unit_paths(analysis: &Analysis, cwd: &str, unit: &Unit) -> Option<SafetyCheck> {
    let name = unit.program_name()?;
    let sub = unit.argv.get(1).and_then(|a| a.text.as_deref());
    if name == "git" && sub == Some("config") {
        let reads = unit.argv[2..]
            .iter()
            .filter_map(|a| a.text.as_deref())
            .any(|a| GIT_CONFIG_READS.contains(&a));
        if !reads {
            return Some(SafetyCheck {
                kind: SafetyCheckKind::GitConfig,
                detail: format!("`{}` changes git's configuration", unit_text(unit)),
            });
        }
        return None;
    }
    if READS_ONLY.contains(&name) || (name == "git" && sub.is_some_and(|s| GIT_READS.contains(&s)))
    {
        return None;
    }
    for arg in &unit.argv[1..] {
        let shown = analysis
            .resolve_arg(cwd, arg)
            .unwrap_or_else(|| arg.display.clone());
        // `--output=.git/hooks/x`: the value of an option is a path too.
        let value = shown.split_once('=').map_or(shown.as_str(), |(_, v)| v);
        for candidate in [shown.as_str(), value] {
            if let Some(kind) = protected_path(candidate) {
                return Some(SafetyCheck {
                    kind,
                    detail: format!("`{}` touches `{candidate}`", unit_text(unit)),
                });
            }
        }
    }
    None
}

/// True when a `chmod` mode adds an execute bit.
fn mode_adds_execute(mode: &str) -> bool {
    if !mode.is_empty() && mode.chars().all(|c| c.is_digit(8)) {
        return u32::from_str_radix(mode, 8).is_ok_and(|m| m & 0o111 != 0);
    }
    mode.split(',').any(|clause| {
        clause
            .split_once(['+', '='])
            .is_some_and(|(_, perms)| perms.contains('x'))
    })
}

fn made_executable(analysis: &Analysis, cwd: &str) -> (BTreeSet<String>, bool) {
    let mut paths = BTreeSet::new();
    let mut unknown = false;
    for unit in analysis
        .units
        .iter()
        .filter(|u| u.program_name() == Some("chmod"))
    {
        // Options are `-R`, `-v`, `-c`, `-f`, `-h` and `--long` ones; `-x` is a mode.
        let is_option = |t: &str| {
            t.starts_with("--")
                || (t.len() > 1
                    && t.starts_with('-')
                    && t[1..].chars().all(|c| "Rvcfh".contains(c)))
        };
        let mut operands = unit.argv[1..]
            .iter()
            .filter(|a| !a.text.as_deref().is_some_and(is_option));
        let Some(mode) = operands.next() else {
            continue;
        };
        if !mode.text.as_deref().is_some_and(mode_adds_execute) {
            continue;
        }
        for file in operands {
            match analysis.resolve_arg(cwd, file) {
                Some(path) => {
                    paths.insert(path);
                }
                None => unknown = true,
            }
        }
    }
    (paths, unknown)
}

fn check_runs_downloaded(
    analysis: &Analysis,
    cwd: &str,
    recently_downloaded: &BTreeSet<String>,
) -> Option<SafetyCheck> {
    let downloaded = downloads(analysis, cwd);
    let (executable, executable_unknown) = made_executable(analysis, cwd);
    let recent: BTreeSet<String> = recently_downloaded.iter().map(|p| normalize(p)).collect();
    for unit in &analysis.units {
        let Some(file) = &unit.runs_file else {
            continue;
        };
        let path = analysis.resolve_arg(cwd, file);
        let shown = path.clone().unwrap_or_else(|| file.display.clone());
        let check = |kind, why: &str| {
            Some(SafetyCheck {
                kind,
                detail: format!("it runs `{shown}`, {why}"),
            })
        };
        let known = |set: &BTreeSet<String>| path.as_ref().is_some_and(|p| set.contains(p));
        let under = |roots: &BTreeSet<String>| {
            path.as_ref()
                .is_some_and(|p| roots.iter().any(|root| covers(root, p)))
        };
        if under(&recent) {
            return check(
                SafetyCheckKind::RunsDownloadedFile,
                "a file downloaded in this session",
            );
        }
        if under(&downloaded.paths) {
            return check(
                SafetyCheckKind::RunsDownloadedFile,
                "a file this command downloads",
            );
        }
        let relative_or_unknown =
            path.is_none() || !file.text.as_deref().is_some_and(|t| t.starts_with('/'));
        if downloaded.unknown_names && relative_or_unknown {
            return check(
                SafetyCheckKind::RunsDownloadedFile,
                "and this command downloads files under names known only when it runs",
            );
        }
        if known(&executable) {
            return check(
                SafetyCheckKind::RunsNewExecutable,
                "a file this command makes executable",
            );
        }
        if path.is_none()
            && (!downloaded.paths.is_empty() || !executable.is_empty() || executable_unknown)
        {
            return check(
                SafetyCheckKind::RunsNewExecutable,
                "a path known only when the command runs, in a command that downloads or makes files executable",
            );
        }
        if executable_unknown && relative_or_unknown {
            return check(
                SafetyCheckKind::RunsNewExecutable,
                "in a command that makes files executable under names known only when it runs",
            );
        }
    }
    None
}

#[cfg(test)]
#[path = "safety_tests.rs"]
mod tests;
