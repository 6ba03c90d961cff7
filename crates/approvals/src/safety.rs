//! Safety checks: calls that always ask (except in `bypass`), whatever the rules and the
//! standing approvals say: writes to files the host runs later (the protected list: git
//! hooks and config, shell dotfiles, editor and agent settings), `git config` changes and
//! repositories made from a template, CI files and Paddock's own config, and running a file
//! that was just downloaded or just made executable.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::analysis::{Analysis, Arg, Unit};
use crate::downloads::{covers, downloads};
use crate::git;
use crate::paths::{normalize, resolve};
use crate::protected::{HOME_MARK, ProtectedPaths};

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
    /// A file the host runs later (the protected list: shell dotfiles, editor and agent
    /// settings, git's files in every repository): read-only inside the sandbox.
    ProtectedPath,
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

/// Programs that only read the paths they are given (or take no paths).
const READS_ONLY: &[&str] = &[
    "true",
    "false",
    ":",
    "sleep",
    "date",
    "seq",
    "expr",
    "pwd",
    "whoami",
    "id",
    "uname",
    "env",
    "printenv",
    "which",
    "type",
    "export",
    "local",
    "declare",
    "typeset",
    "readonly",
    "read",
    "set",
    "unset",
    "shift",
    "exit",
    "return",
    "cd",
    "pushd",
    "popd",
    "cut",
    "tr",
    "column",
    "nl",
    "fold",
    "basenc",
    "base64",
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

/// Whether a program only reads the paths it is given.
pub(crate) fn reads_only(name: &str) -> bool {
    READS_ONLY.contains(&name)
}

/// Whether a unit's arguments may be paths it writes (false for read-only programs and git's
/// reading subcommands).
pub(crate) fn may_write_args(unit: &Unit) -> bool {
    match unit.program_name() {
        None => true,
        Some("git") => {
            let call = git::read(unit);
            !call.name(unit).is_some_and(|s| GIT_READS.contains(&s))
        }
        Some(name) => !reads_only(name),
    }
}

/// The check a write of `path` trips: the approvals' own list (hooks, CI, Paddock's config),
/// then the protected list.
fn check_written(path: &str, protected: &ProtectedPaths, what: &str) -> Option<SafetyCheck> {
    if let Some(kind) = protected_path(path) {
        return Some(SafetyCheck {
            kind,
            detail: format!("{what} `{}`", shown_path(path)),
        });
    }
    protected.why(path).map(|why| SafetyCheck {
        kind: SafetyCheckKind::ProtectedPath,
        detail: format!(
            "{what} `{}`, a file the host runs later: {why}",
            shown_path(path)
        ),
    })
}

/// A path as people read it (`~/x` for the home marker).
fn shown_path(path: &str) -> String {
    match path.strip_prefix(HOME_MARK) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("~{rest}"),
        _ => path.to_owned(),
    }
}

/// The safety check a file tool trips by writing `path` (normalised, absolute).
pub fn check_path(tool: &str, path: &str, protected: &ProtectedPaths) -> Option<SafetyCheck> {
    let mut check = check_written(path, protected, &format!("`{tool}` writes"))?;
    if check.kind == SafetyCheckKind::ProtectedPath {
        check.detail.push_str(
            ". It is read-only inside the sandbox; approved, Paddock writes it outside the sandbox",
        );
    }
    Some(check)
}

/// The first safety check a shell command trips.
pub fn check_command(
    analysis: &Analysis,
    cwd: &str,
    recently_downloaded: &BTreeSet<String>,
    protected: &ProtectedPaths,
) -> Option<SafetyCheck> {
    for write in &analysis.writes {
        let paths = match &write.resolved {
            Some(path) => vec![path.clone()],
            None if !write.candidates.is_empty() => write.candidates.clone(),
            None => vec![write.display.clone()],
        };
        for path in paths {
            if let Some(check) = check_written(&path, protected, "the command writes") {
                return Some(check);
            }
        }
    }
    for unit in &analysis.units {
        if let Some(check) = check_unit_paths(analysis, cwd, unit, protected) {
            return Some(check);
        }
        if let Some(check) = check_inline_code(unit, cwd, protected) {
            return Some(check);
        }
    }
    check_runs_downloaded(analysis, cwd, recently_downloaded)
}

pub(crate) fn unit_text(unit: &Unit) -> String {
    let shown: Vec<&str> = unit.argv.iter().map(|a| a.display.as_str()).collect();
    shown.join(" ")
}

/// The paths an argument may name, resolved against `cwd` (its variables' every value;
/// the value of `--option=value` too); the text as written when it cannot be resolved.
fn arg_paths(analysis: &Analysis, cwd: &str, arg: &Arg) -> Vec<String> {
    let texts: Vec<String> = arg.text.iter().chain(&arg.candidates).cloned().collect();
    let option = texts.iter().any(|t| t.starts_with('-'));
    let mut forms: Vec<String> = Vec::new();
    for text in &texts {
        if let Some((_, value)) = text.split_once('=') {
            forms.push(match value.strip_prefix('~') {
                Some(rest) => normalize(&format!("{HOME_MARK}{rest}")),
                None if value.starts_with('/') => normalize(value),
                None => resolve(cwd, value),
            });
        }
    }
    if !option {
        let resolved = analysis.resolve_all(cwd, arg);
        if resolved.is_empty() {
            // Known only as written (after `cd`, or a variable): checked as written.
            forms.extend(texts.iter().cloned());
            if texts.is_empty() {
                forms.push(arg.display.clone());
            }
        }
        forms.extend(resolved);
    }
    forms
}

fn check_unit_paths(
    analysis: &Analysis,
    cwd: &str,
    unit: &Unit,
    protected: &ProtectedPaths,
) -> Option<SafetyCheck> {
    let name = unit.program_name()?;
    let mut folder = cwd.to_owned();
    let mut args = &unit.argv[1..];
    if name == "git" {
        let call = git::read(unit);
        let sub = call.name(unit);
        if sub == Some("config") {
            let reads = call
                .args(unit)
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
        if call.uses_template(unit) {
            return Some(SafetyCheck {
                kind: SafetyCheckKind::GitHooks,
                detail: format!(
                    "`{}` makes a repository from a template, which copies the template's hooks in",
                    unit_text(unit)
                ),
            });
        }
        if call.clone_sets_config(unit) {
            return Some(SafetyCheck {
                kind: SafetyCheckKind::GitConfig,
                detail: format!(
                    "`{}` writes settings into the configuration of the repository it makes",
                    unit_text(unit)
                ),
            });
        }
        if sub.is_some_and(|s| GIT_READS.contains(&s)) {
            return None;
        }
        folder = call.folder(analysis, cwd).unwrap_or(folder);
        args = call.args(unit);
    } else if reads_only(name) {
        return None;
    }
    for arg in args {
        for candidate in arg_paths(analysis, &folder, arg) {
            let what = format!("`{}` touches", unit_text(unit));
            if let Some(check) = check_written(&candidate, protected, &what) {
                return Some(check);
            }
        }
    }
    None
}

/// Settings and names that, in code given to an interpreter, point at what the host runs.
const CODE_WORDS: &[&str] = &["core.hookspath", "core.fsmonitor", "hookspath", "fsmonitor"];

/// Code given inline (`python3 -c`, `perl -e`, a here-document) is not parsed, but the paths
/// it spells out are checked: a quoted `.git/hooks/x`, `~/.bashrc`, `core.hooksPath`.
fn check_inline_code(unit: &Unit, cwd: &str, protected: &ProtectedPaths) -> Option<SafetyCheck> {
    for code in &unit.inline_code {
        let tokens: Vec<&str> = code
            .split(|c: char| !(c.is_ascii_alphanumeric() || "._/~-".contains(c)))
            .filter(|t| !t.is_empty())
            .collect();
        let program = unit.program_name().unwrap_or("the interpreter");
        for token in &tokens {
            if CODE_WORDS.contains(&token.to_ascii_lowercase().as_str()) {
                return Some(SafetyCheck {
                    kind: SafetyCheckKind::GitConfig,
                    detail: format!("the code `{program}` runs names `{token}`"),
                });
            }
            let path = match token.strip_prefix('~') {
                Some(rest) => normalize(&format!("{HOME_MARK}{rest}")),
                None => resolve(cwd, token),
            };
            if let Some(check) = check_written(
                &path,
                protected,
                &format!("the code `{program}` runs names"),
            ) {
                return Some(check);
            }
        }
        // `os.path.join(".git", "hooks", …)`: the names apart.
        let has = |name: &str| tokens.iter().any(|t| t.eq_ignore_ascii_case(name));
        if has(".git") && (has("hooks") || has("config") || has("info")) {
            return Some(SafetyCheck {
                kind: SafetyCheckKind::GitHooks,
                detail: format!("the code `{program}` runs names `.git` and its hooks or config"),
            });
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
