//! Judging what a sweep found that the session's start did not have, and undoing it.
//!
//! - A repository created during the session keeps its configuration only with the settings
//!   `git init`/`clone` write (the rest is removed, the original kept in quarantine); hooks
//!   other than git's `.sample` files and `info/` files other than `exclude` are moved to
//!   quarantine.
//! - A new `.gitconfig` or `.gitmodules` is judged the same way; a new `.git` file stays when
//!   the git directory it names lies in a read-write grant (that directory is judged too).
//! - Any other new protected path (a `.vscode/`, a `.bashrc`, a `core.hooksPath` folder's
//!   scripts) is moved to quarantine whole.
//! - A protected symbolic link that now points elsewhere (or was replaced) is put back.
//!
//! Protected paths that existed at the start were mounted read-only: the sandbox cannot have
//! changed them, so a change seen there was made on the host and is left alone. One that is
//! not mounted (made during the session with the user's approval, or on a wall without
//! mounts) and is replaced is judged as new.

use std::fs;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};

use protocol::ProtectedAction;
use sandbox_policy::{ConfigJudgement, ProtectedList};

use super::ProtectedChange;
use super::quarantine::Quarantine;
use super::scan::{Hit, Identity, Role, git_dir_named_by, read_small};

/// What to do with one new protected path.
pub(crate) struct Judge<'a> {
    pub list: &'a ProtectedList,
    pub quarantine: &'a Quarantine,
    /// Whether a path lies in a read-write grant.
    pub in_grant: &'a dyn Fn(&Path) -> bool,
}

fn change(
    path: &Path,
    reason: &str,
    action: ProtectedAction,
    to: Option<PathBuf>,
    detail: String,
) -> ProtectedChange {
    ProtectedChange {
        path: path.to_path_buf(),
        reason: reason.to_owned(),
        action,
        quarantined_to: to,
        detail,
    }
}

impl Judge<'_> {
    /// Moves `path` to quarantine and says so; when it cannot be moved, says that instead.
    fn take(&self, path: &Path, reason: &str, what: &str) -> ProtectedChange {
        match self.quarantine.take(path) {
            Ok(to) => change(
                path,
                reason,
                ProtectedAction::Quarantined,
                Some(to),
                format!("{what}; moved to quarantine"),
            ),
            Err(e) => change(
                path,
                reason,
                ProtectedAction::Reported,
                None,
                format!("{what}; it could not be moved to quarantine: {e}"),
            ),
        }
    }

    /// A new protected path (or a changed link).
    pub(crate) fn judge(
        &self,
        path: &Path,
        hit: &Hit,
        before: Option<&Hit>,
    ) -> Vec<ProtectedChange> {
        if let Some(before) = before {
            return self.changed(path, hit, before);
        }
        match &hit.role {
            Role::Git { names, .. } => match names.first().map(String::as_str) {
                Some("config" | "config.worktree") => {
                    self.config(path, &hit.reason, ConfigKind::Repository)
                }
                Some(folder @ ("hooks" | "info")) => {
                    self.folder_of_scripts(path, &hit.reason, folder)
                }
                _ => vec![self.take(path, &hit.reason, "created during the session")],
            },
            Role::HooksPath { .. } => self.folder_of_scripts(path, &hit.reason, "hooks"),
            Role::Folder { names } => {
                match names.iter().map(String::as_str).collect::<Vec<_>>()[..] {
                    [".gitconfig"] => self.config(path, &hit.reason, ConfigKind::Repository),
                    [".gitmodules"] => self.config(path, &hit.reason, ConfigKind::Modules),
                    [".git"] => self.pointer(path, &hit.reason),
                    _ => vec![self.take(path, &hit.reason, "created during the session")],
                }
            }
            // A configuration's include or a link's target: the configuration (judged on its
            // own) or the link is what names it.
            Role::Include { .. } | Role::LinkTarget { .. } => Vec::new(),
        }
    }

    /// A protected file that is not mounted (made during the session with approval, kept as a
    /// clean new repository's, or on a wall without mounts) and was changed: the change goes to
    /// quarantine and the file is written back as it was.
    pub(crate) fn restore(&self, path: &Path, reason: &str, before: &[u8]) -> ProtectedChange {
        let owner = fs::symlink_metadata(path).map(|m| (m.uid(), m.gid())).ok();
        let moved = match self.quarantine.take(path) {
            Ok(to) => to,
            Err(e) => {
                return change(
                    path,
                    reason,
                    ProtectedAction::Reported,
                    None,
                    format!("changed during the session; it could not be moved to quarantine: {e}"),
                );
            }
        };
        let written = fs::write(path, before).and_then(|()| match owner {
            Some((uid, gid)) => std::os::unix::fs::lchown(path, Some(uid), Some(gid)),
            None => Ok(()),
        });
        match written {
            Ok(()) => change(
                path,
                reason,
                ProtectedAction::Restored,
                Some(moved),
                "changed during the session; the change was moved to quarantine and the file written back as it was".into(),
            ),
            Err(e) => change(
                path,
                reason,
                ProtectedAction::Quarantined,
                Some(moved),
                format!("changed during the session and moved to quarantine; writing it back failed: {e}"),
            ),
        }
    }

    /// A protected link that was replaced or points elsewhere now: put back.
    fn changed(&self, path: &Path, hit: &Hit, before: &Hit) -> Vec<ProtectedChange> {
        let Identity::Link { target } = &before.identity else {
            return Vec::new();
        };
        let mut changes = Vec::new();
        let moved = self.quarantine.take(path);
        let (to, moved_detail) = match moved {
            Ok(to) => (
                Some(to),
                "the replacement was moved to quarantine".to_owned(),
            ),
            Err(e) => (None, format!("the replacement could not be moved: {e}")),
        };
        let restored = to.is_some() && symlink(target, path).is_ok();
        changes.push(change(
            path,
            &hit.reason,
            if restored {
                ProtectedAction::Restored
            } else {
                ProtectedAction::Reported
            },
            to,
            format!(
                "a symbolic link to {} was replaced during the session; {moved_detail}{}",
                target.display(),
                if restored {
                    "; the link was put back"
                } else {
                    ""
                }
            ),
        ));
        changes
    }

    /// A configuration: kept when clean, otherwise the original goes to quarantine and the
    /// allowed settings are written back in its place.
    fn config(&self, path: &Path, reason: &str, kind: ConfigKind) -> Vec<ProtectedChange> {
        let Some(text) = read_small(path) else {
            return vec![self.take(
                path,
                reason,
                "created during the session, not a small text file",
            )];
        };
        let judged: ConfigJudgement = match kind {
            ConfigKind::Repository => self.list.judge_new_config(&text),
            ConfigKind::Modules => self.list.judge_new_gitmodules(&text),
        };
        if judged.is_clean() {
            return Vec::new();
        }
        let removed = judged.removed.join(", ");
        let owner = fs::symlink_metadata(path).map(|m| (m.uid(), m.gid())).ok();
        let to = match self.quarantine.take(path) {
            Ok(to) => to,
            Err(e) => {
                return vec![change(
                    path,
                    reason,
                    ProtectedAction::Reported,
                    None,
                    format!(
                        "created during the session with {removed}; it could not be moved to quarantine: {e}"
                    ),
                )];
            }
        };
        let written = fs::write(path, judged.kept).and_then(|()| match owner {
            Some((uid, gid)) => std::os::unix::fs::lchown(path, Some(uid), Some(gid)),
            None => Ok(()),
        });
        let detail = match written {
            Ok(()) => format!(
                "created during the session with settings that run programs, removed: {removed}"
            ),
            Err(e) => format!(
                "created during the session with {removed}; moved to quarantine, the cleaned copy could not be written: {e}"
            ),
        };
        vec![change(
            path,
            reason,
            ProtectedAction::Sanitized,
            Some(to),
            detail,
        )]
    }

    /// A `hooks`, `info` or `core.hooksPath` folder (or a file in one): everything in it but
    /// what git never runs goes to quarantine.
    fn folder_of_scripts(&self, path: &Path, reason: &str, folder: &str) -> Vec<ProtectedChange> {
        let inert = |name: &str| match folder {
            "info" => self.list.info_file_is_inert(name),
            _ => self.list.hook_is_inert(name),
        };
        let Ok(meta) = fs::symlink_metadata(path) else {
            return Vec::new();
        };
        if !meta.is_dir() {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if meta.is_file() && name.as_deref().is_some_and(inert) {
                return Vec::new();
            }
            return vec![self.take(path, reason, "created during the session")];
        }
        let Ok(read) = fs::read_dir(path) else {
            return vec![self.take(path, reason, "created during the session, not readable")];
        };
        let mut changes = Vec::new();
        for entry in read.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_file = entry.file_type().is_ok_and(|t| t.is_file());
            if is_file && inert(&name) {
                continue;
            }
            changes.push(self.take(&entry.path(), reason, "created during the session"));
        }
        changes
    }

    /// A new `.git` file: it stays when the git directory it names lies in a read-write grant
    /// (where the sweep judges that directory); otherwise it goes.
    fn pointer(&self, path: &Path, reason: &str) -> Vec<ProtectedChange> {
        match git_dir_named_by(path) {
            Some(target) if (self.in_grant)(&target) => Vec::new(),
            Some(target) => vec![self.take(
                path,
                reason,
                &format!(
                    "created during the session, naming {} outside the session's read-write folders",
                    target.display()
                ),
            )],
            None => vec![self.take(path, reason, "created during the session, not a git pointer")],
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum ConfigKind {
    Repository,
    Modules,
}
