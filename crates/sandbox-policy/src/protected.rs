//! The protected list (`config/protected.toml`): files and folders the host runs later, which a
//! session must not change without the user's approval. Pure: it answers whether a path
//! (given as names relative to a folder or to a git directory) is protected and why, gives the
//! lexical patterns the approvals check writes against, and judges what a repository created
//! during a session may keep in its configuration ([`crate::git_config`]).
//!
//! Finding these paths on disk, mounting them read-only and sweeping for new ones is the
//! sandbox provider's job.

use protocol::{ProtectedKind, ProtectedPath, ProtectedScope};
use serde::Deserialize;

use crate::error::PolicyError;
use crate::git_config::{self, ConfigJudgement, KeyPattern};

/// The list as shipped.
const BUILTIN: &str = include_str!("../../../config/protected.toml");

/// One protected path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedEntry {
    pub scope: ProtectedScope,
    /// Names relative to the scope (`[".config", "git"]`); empty for `hooks_path`.
    pub names: Vec<String>,
    pub kind: ProtectedKind,
    pub group: String,
    pub reason: String,
}

impl ProtectedEntry {
    /// The path as written in the list (`.config/git`).
    pub fn path(&self) -> String {
        self.names.join("/")
    }

    /// The entry as front ends show it.
    pub fn describe(&self) -> ProtectedPath {
        ProtectedPath {
            scope: self.scope,
            path: self.path(),
            kind: self.kind,
            group: self.group.clone(),
            reason: self.reason.clone(),
        }
    }

    /// Whether the entry covers a path of this type (`is_dir`) at `names` exactly (the entry
    /// itself) or below it (inside a folder entry).
    fn covers(&self, names: &[&str], is_dir: Option<bool>) -> bool {
        if names.len() < self.names.len()
            || !self.names.iter().zip(names).all(|(a, b)| a.as_str() == *b)
        {
            return false;
        }
        if names.len() > self.names.len() {
            return self.kind != ProtectedKind::File;
        }
        !matches!(
            (self.kind, is_dir),
            (ProtectedKind::File, Some(true)) | (ProtectedKind::Folder, Some(false))
        )
    }
}

/// How far the host looks for protected paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanLimits {
    /// Folder entries are looked for this many folders below a grant (0: the grant itself).
    pub folder_depth: usize,
    /// Folders walked and watched per session, breadth first.
    pub max_folders: usize,
}

/// What a new repository may keep: the configuration keys `git init`/`clone` write, the
/// `.gitmodules` keys, the hooks git never runs, the `info/` files that name no program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRepositoryRules {
    pub config_keys: Vec<KeyPattern>,
    pub gitmodules_keys: Vec<KeyPattern>,
    pub inert_hook_suffix: String,
    pub inert_info_files: Vec<String>,
}

/// The protected list, parsed and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedList {
    entries: Vec<ProtectedEntry>,
    pub limits: ScanLimits,
    pub new_repository: NewRepositoryRules,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawList {
    limits: RawLimits,
    #[serde(default)]
    git: Vec<RawEntry>,
    #[serde(default)]
    folder: Vec<RawEntry>,
    hooks_path: RawHooksPath,
    new_repository: RawNewRepository,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    folder_depth: usize,
    max_folders: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    path: String,
    kind: String,
    group: String,
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHooksPath {
    group: String,
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNewRepository {
    config_keys: Vec<String>,
    gitmodules_keys: Vec<String>,
    inert_hook_suffix: String,
    inert_info_files: Vec<String>,
}

fn bad(what: impl Into<String>, reason: impl Into<String>) -> PolicyError {
    PolicyError::data(what, reason)
}

fn names(field: &str, path: &str) -> Result<Vec<String>, PolicyError> {
    if path.is_empty() || path.starts_with('/') || path.ends_with('/') {
        return Err(bad(
            field,
            format!("`{path}` must be a relative path of one or more names"),
        ));
    }
    let names: Vec<String> = path.split('/').map(str::to_owned).collect();
    if let Some(name) = names
        .iter()
        .find(|n| n.is_empty() || *n == "." || *n == ".." || n.contains(['*', '?', '[']))
    {
        return Err(bad(
            field,
            format!("`{path}`: `{name}` is not a plain file or folder name"),
        ));
    }
    Ok(names)
}

fn kind(field: &str, text: &str) -> Result<ProtectedKind, PolicyError> {
    match text {
        "file" => Ok(ProtectedKind::File),
        "folder" => Ok(ProtectedKind::Folder),
        "any" => Ok(ProtectedKind::Any),
        other => Err(bad(
            field,
            format!("kind `{other}` is not one of file, folder, any"),
        )),
    }
}

fn non_empty(field: &str, text: &str) -> Result<String, PolicyError> {
    if text.trim().is_empty() {
        return Err(bad(field, "must not be empty"));
    }
    Ok(text.to_owned())
}

impl ProtectedList {
    /// The list Paddock ships (`config/protected.toml`).
    pub fn builtin() -> Result<Self, PolicyError> {
        Self::parse(BUILTIN)
    }

    /// Parses and checks a list of the same shape.
    pub fn parse(text: &str) -> Result<Self, PolicyError> {
        let raw: RawList =
            toml::from_str(text).map_err(|e| bad("protected.toml", e.to_string()))?;
        let mut entries = Vec::new();
        for (scope, list, section) in [
            (ProtectedScope::GitDir, &raw.git, "git"),
            (ProtectedScope::Folder, &raw.folder, "folder"),
        ] {
            for (i, entry) in list.iter().enumerate() {
                let field = format!("{section}[{i}]");
                let entry = ProtectedEntry {
                    scope,
                    names: names(&field, &entry.path)?,
                    kind: kind(&field, &entry.kind)?,
                    group: non_empty(&format!("{field}.group"), &entry.group)?,
                    reason: non_empty(&format!("{field}.reason"), &entry.reason)?,
                };
                if entries
                    .iter()
                    .any(|e: &ProtectedEntry| e.scope == scope && e.names == entry.names)
                {
                    return Err(bad(field, format!("`{}` is listed twice", entry.path())));
                }
                entries.push(entry);
            }
        }
        entries.push(ProtectedEntry {
            scope: ProtectedScope::HooksPath,
            names: Vec::new(),
            kind: ProtectedKind::Folder,
            group: non_empty("hooks_path.group", &raw.hooks_path.group)?,
            reason: non_empty("hooks_path.reason", &raw.hooks_path.reason)?,
        });
        if raw.limits.max_folders == 0 {
            return Err(bad("limits.max_folders", "must be at least 1"));
        }
        let keys = |field: &str, list: &[String]| -> Result<Vec<KeyPattern>, PolicyError> {
            list.iter()
                .map(|k| KeyPattern::parse(k).map_err(|reason| bad(field, reason)))
                .collect()
        };
        let rules = raw.new_repository;
        let new_repository = NewRepositoryRules {
            config_keys: keys("new_repository.config_keys", &rules.config_keys)?,
            gitmodules_keys: keys("new_repository.gitmodules_keys", &rules.gitmodules_keys)?,
            inert_hook_suffix: non_empty(
                "new_repository.inert_hook_suffix",
                &rules.inert_hook_suffix,
            )?,
            inert_info_files: rules.inert_info_files,
        };
        Ok(Self {
            entries,
            limits: ScanLimits {
                folder_depth: raw.limits.folder_depth,
                max_folders: raw.limits.max_folders,
            },
            new_repository,
        })
    }

    /// Every entry, in the list's order.
    pub fn entries(&self) -> &[ProtectedEntry] {
        &self.entries
    }

    /// The list as front ends show it.
    pub fn describe(&self) -> Vec<ProtectedPath> {
        self.entries.iter().map(ProtectedEntry::describe).collect()
    }

    /// The entry for `core.hooksPath` folders.
    pub fn hooks_path(&self) -> &ProtectedEntry {
        self.entries
            .iter()
            .find(|e| e.scope == ProtectedScope::HooksPath)
            .unwrap_or(&self.entries[self.entries.len() - 1])
    }

    fn scoped(&self, scope: ProtectedScope) -> impl Iterator<Item = &ProtectedEntry> {
        self.entries.iter().filter(move |e| e.scope == scope)
    }

    /// The folder entry protecting the path `names` (relative to some folder, e.g.
    /// `[".vscode", "tasks.json"]`), when `names` starts with one. `is_dir` is the path's
    /// type when known (a `file` entry does not cover a folder of the same name).
    pub fn in_folder(&self, names: &[&str], is_dir: Option<bool>) -> Option<&ProtectedEntry> {
        self.scoped(ProtectedScope::Folder)
            .find(|e| e.covers(names, is_dir))
    }

    /// The git entry protecting `names` relative to a git directory (`["hooks",
    /// "pre-commit"]`, `["config"]`).
    pub fn in_git_dir(&self, names: &[&str], is_dir: Option<bool>) -> Option<&ProtectedEntry> {
        self.scoped(ProtectedScope::GitDir)
            .find(|e| e.covers(names, is_dir))
    }

    /// The protected path a relative path names, looking at every folder it passes through
    /// (down to the depth limit) and at every git directory it names lexically (`.git`,
    /// `*.git`, `.git/modules/**`, `.git/worktrees/*`). For a grant-relative path on the host
    /// and for what a command writes, before it runs.
    pub fn lexical(&self, names: &[&str], depth_limit: Option<usize>) -> Option<&ProtectedEntry> {
        for start in 0..names.len() {
            if let Some(entry) = self.in_git_dir_at(names, start) {
                return Some(entry);
            }
            if depth_limit.is_none_or(|limit| start <= limit)
                && let Some(entry) = self.in_folder(&names[start..], None)
            {
                return Some(entry);
            }
        }
        None
    }

    /// A git entry for `names[start..]` when `names[..start]` ends in a git directory.
    fn in_git_dir_at(&self, names: &[&str], start: usize) -> Option<&ProtectedEntry> {
        if !ends_in_git_dir(&names[..start]) {
            return None;
        }
        self.in_git_dir(&names[start..], None)
    }

    /// Judges a configuration file of a repository created during the session: what it may
    /// keep, and the settings that must go.
    pub fn judge_new_config(&self, text: &str) -> ConfigJudgement {
        git_config::judge(text, &self.new_repository.config_keys)
    }

    /// Judges a `.gitmodules` file created during the session.
    pub fn judge_new_gitmodules(&self, text: &str) -> ConfigJudgement {
        git_config::judge(text, &self.new_repository.gitmodules_keys)
    }

    /// Whether a hook file of that name is one git never runs (`pre-commit.sample`).
    pub fn hook_is_inert(&self, name: &str) -> bool {
        name.ends_with(&self.new_repository.inert_hook_suffix)
    }

    /// Whether a file of that name in `info/` names no program (`exclude`).
    pub fn info_file_is_inert(&self, name: &str) -> bool {
        self.new_repository
            .inert_info_files
            .iter()
            .any(|n| n == name)
    }

    /// Globs (the approvals crate's language: `**` any folders, `*` within a name) naming
    /// every protected path lexically, each with the entry's reason. `core.hooksPath`
    /// folders are not lexical: the provider lists the ones it found.
    pub fn globs(&self) -> Vec<(String, String)> {
        let mut globs = Vec::new();
        for entry in &self.entries {
            let path = entry.path();
            let bases: Vec<String> = match entry.scope {
                ProtectedScope::Folder => vec![format!("**/{path}")],
                ProtectedScope::GitDir => vec![
                    format!("**/*.git/{path}"),
                    format!("**/*.git/modules/**/{path}"),
                    format!("**/*.git/worktrees/*/{path}"),
                ],
                ProtectedScope::HooksPath => Vec::new(),
            };
            for base in bases {
                if entry.kind != ProtectedKind::File {
                    globs.push((format!("{base}/**"), entry.reason.clone()));
                } else {
                    globs.push((base, entry.reason.clone()));
                }
            }
        }
        globs
    }
}

/// Whether a path (as names) names a git directory lexically: a name ending in `.git` (`.git`,
/// a bare `repo.git`), a linked worktree's (`<git>/worktrees/NAME`) or a submodule's
/// (`<git>/modules/NAME…`, whose names may hold slashes).
pub fn ends_in_git_dir(names: &[&str]) -> bool {
    let Some(git) = names.iter().rposition(|n| n.ends_with(".git")) else {
        return false;
    };
    match &names[git + 1..] {
        [] | ["worktrees", _] => true,
        ["modules", rest @ ..] => !rest.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
#[path = "protected_tests.rs"]
mod tests;
