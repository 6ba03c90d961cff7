//! Finding protected paths on the host: a breadth-first walk of the read-write grants that
//! records every protected path (with its identity), every git directory, every folder it
//! walked (to watch), and the `core.hooksPath` folders and included configuration files the
//! repositories name. Nothing is followed through a symbolic link; a link's target is looked
//! at only to protect it too when it lies in a read-write grant.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs::{self, FileType};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use protocol::{ProtectedKind, ProtectedScope};
use sandbox_policy::{KeyPattern, ProtectedEntry, ProtectedList, setting_values};

/// Configuration files larger than this are not read for `core.hooksPath` and includes.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// What a path is, as far as noticing a change goes.
/// A file's identity and its content's: device, inode and birth time (an inode number can
/// be reused by the next file made), and for files the size and modification time (a change
/// in place).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Identity {
    File {
        dev: u64,
        ino: u64,
        born: Option<std::time::SystemTime>,
        size: u64,
        modified: (i64, i64),
    },
    Folder {
        dev: u64,
        ino: u64,
        born: Option<std::time::SystemTime>,
    },
    Link {
        target: PathBuf,
    },
}

impl Identity {
    pub(crate) fn of(path: &Path) -> io::Result<Self> {
        let meta = fs::symlink_metadata(path)?;
        Ok(if meta.file_type().is_symlink() {
            Identity::Link {
                target: fs::read_link(path)?,
            }
        } else if meta.is_dir() {
            Identity::Folder {
                dev: meta.dev(),
                ino: meta.ino(),
                born: meta.created().ok(),
            }
        } else {
            Identity::File {
                dev: meta.dev(),
                ino: meta.ino(),
                born: meta.created().ok(),
                size: meta.len(),
                modified: (meta.mtime(), meta.mtime_nsec()),
            }
        })
    }

    pub(crate) fn is_file(&self) -> bool {
        matches!(self, Identity::File { .. })
    }

    pub(crate) fn is_dir(&self) -> bool {
        matches!(self, Identity::Folder { .. })
    }

    pub(crate) fn is_link(&self) -> bool {
        matches!(self, Identity::Link { .. })
    }
}

/// Why a path is protected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Role {
    /// A folder entry (`.bashrc`, `.vscode`, a `.git` file).
    Folder { names: Vec<String> },
    /// An entry of a git directory (`hooks`, `config`).
    Git {
        git_dir: PathBuf,
        names: Vec<String>,
    },
    /// A repository's `core.hooksPath` folder.
    HooksPath { git_dir: PathBuf },
    /// A configuration file a repository's config includes.
    Include { git_dir: PathBuf },
    /// What a protected symbolic link points at, inside a read-write grant.
    LinkTarget { link: PathBuf },
}

/// One protected path found on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    pub identity: Identity,
    pub role: Role,
    pub reason: String,
}

impl Hit {
    /// A hit for `name` inside this (folder) hit, with the same reason.
    pub(crate) fn inside(&self, name: &str) -> Hit {
        let push = |names: &[String]| {
            let mut names = names.to_vec();
            names.push(name.to_owned());
            names
        };
        let role = match &self.role {
            Role::Folder { names } => Role::Folder { names: push(names) },
            Role::Git { git_dir, names } => Role::Git {
                git_dir: git_dir.clone(),
                names: push(names),
            },
            other => other.clone(),
        };
        Hit {
            identity: self.identity.clone(),
            role,
            reason: self.reason.clone(),
        }
    }
}

/// A git directory and what its configuration names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct GitDir {
    /// The worktree it belongs to (a `.git` folder's parent), when known: a relative
    /// `core.hooksPath` is relative to it.
    pub worktree: Option<PathBuf>,
    /// The folder `core.hooksPath` names, when it lies in a read-write grant.
    pub hooks_path: Option<PathBuf>,
    /// Folders of the git directory watched for new entries (itself, `modules/**`,
    /// `worktrees/*`).
    pub watched: Vec<PathBuf>,
}

/// Where a walked folder sits: its grant and the names from the grant's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    pub grant: usize,
    pub names: Vec<String>,
}

/// What one walk found.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    pub hits: BTreeMap<PathBuf, Hit>,
    pub git_dirs: BTreeMap<PathBuf, GitDir>,
    /// Plain folders walked (not inside git directories, not protected ones).
    pub folders: BTreeMap<PathBuf, Place>,
    /// `core.hooksPath` folders in a grant → the git directory naming them.
    pub hooks_paths: BTreeMap<PathBuf, PathBuf>,
    /// The names in protected folders that are not mounted read-only (created during the
    /// session, or on a wall without mounts), to notice new entries.
    pub listings: BTreeMap<PathBuf, BTreeSet<String>>,
    /// The walk stopped at the folder limit.
    pub truncated: bool,
}

/// Walks read-write grants for the protected list.
#[derive(Debug, Clone)]
pub(crate) struct Scanner {
    pub list: std::sync::Arc<ProtectedList>,
    /// The session's read-write grants (absolute, as the sandbox sees them).
    pub rw: Vec<PathBuf>,
    /// Read-only grants: not walked (the sandbox cannot write there).
    pub ro: Vec<PathBuf>,
    /// The last name of every folder entry: any other name is not one (the walk's fast path).
    last_names: BTreeSet<String>,
}

/// `path` with `.` and `..` resolved lexically.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

fn names_of(names: &[String]) -> Vec<&str> {
    names.iter().map(String::as_str).collect()
}

impl Scanner {
    pub(crate) fn new(
        list: std::sync::Arc<ProtectedList>,
        rw: Vec<PathBuf>,
        ro: Vec<PathBuf>,
    ) -> Self {
        let last_names = list
            .entries()
            .iter()
            .filter(|e| e.scope == ProtectedScope::Folder)
            .filter_map(|e| e.names.last().cloned())
            .collect();
        Self {
            list,
            rw,
            ro,
            last_names,
        }
    }

    /// The read-write grant holding `path` (the most specific one), unless a read-only grant
    /// inside it holds it.
    pub(crate) fn grant_of(&self, path: &Path) -> Option<usize> {
        let rw = self
            .rw
            .iter()
            .enumerate()
            .filter(|(_, g)| path.starts_with(g))
            .max_by_key(|(_, g)| g.as_os_str().len())?;
        let inside_ro = self
            .ro
            .iter()
            .any(|ro| path.starts_with(ro) && ro.as_os_str().len() > rw.1.as_os_str().len());
        (!inside_ro).then_some(rw.0)
    }

    /// A whole walk of every read-write grant.
    pub(crate) fn scan(&self) -> Snapshot {
        let mut snapshot = Snapshot::default();
        let mut queue = VecDeque::new();
        for (grant, root) in self.rw.iter().enumerate() {
            if self.grant_of(root) == Some(grant) {
                queue.push_back((
                    root.clone(),
                    Place {
                        grant,
                        names: Vec::new(),
                    },
                ));
            }
        }
        self.walk(&mut snapshot, queue);
        snapshot
    }

    /// Walks from the queued folders, breadth first, up to the folder limit.
    pub(crate) fn walk(&self, snapshot: &mut Snapshot, mut queue: VecDeque<(PathBuf, Place)>) {
        while let Some((dir, place)) = queue.pop_front() {
            if snapshot.folders.len() >= self.list.limits.max_folders {
                snapshot.truncated = true;
                break;
            }
            snapshot.folders.insert(dir.clone(), place.clone());
            for (child, child_place) in self.examine(&dir, &place, snapshot) {
                if !snapshot.folders.contains_key(&child) {
                    queue.push_back((child, child_place));
                }
            }
        }
    }

    /// Looks at one plain folder's entries: records what is protected and returns the
    /// sub-folders to walk.
    pub(crate) fn examine(
        &self,
        dir: &Path,
        place: &Place,
        snapshot: &mut Snapshot,
    ) -> Vec<(PathBuf, Place)> {
        let Ok(read) = fs::read_dir(dir) else {
            return Vec::new();
        };
        let entries: Vec<(String, FileType)> = read
            .filter_map(Result::ok)
            .filter_map(|e| Some((e.file_name().into_string().ok()?, e.file_type().ok()?)))
            .collect();
        // A bare repository (or any git directory not named `.git`).
        let has = |name: &str, dir_wanted: bool| {
            entries
                .iter()
                .any(|(n, t)| n == name && t.is_dir() == dir_wanted && !t.is_symlink())
        };
        if !place.names.is_empty()
            && has("HEAD", false)
            && has("objects", true)
            && has("refs", true)
        {
            snapshot.folders.remove(dir);
            self.git_dir(dir, None, snapshot);
            return Vec::new();
        }
        let mut subfolders = Vec::new();
        for (name, file_type) in entries {
            let path = dir.join(&name);
            if self.grant_of(&path) != Some(place.grant) {
                continue; // another grant (walked on its own) or a read-only one
            }
            if let Some(git_dir) = snapshot.hooks_paths.get(&path).cloned() {
                let reason = self.list.hooks_path().reason.clone();
                self.record(snapshot, &path, Role::HooksPath { git_dir }, &reason);
                continue;
            }
            if file_type.is_dir() && name == ".git" {
                self.git_dir(&path, Some(dir), snapshot);
                continue;
            }
            let is_dir = file_type
                .is_dir()
                .then_some(true)
                .or_else(|| (!file_type.is_symlink()).then_some(false));
            if let Some(entry) = self.folder_entry(&place.names, &name, is_dir) {
                self.record(
                    snapshot,
                    &path,
                    Role::Folder {
                        names: entry.names.clone(),
                    },
                    &entry.reason,
                );
                if name == ".git" {
                    self.git_pointer(&path, snapshot);
                }
                continue;
            }
            if file_type.is_dir() {
                let mut names = place.names.clone();
                names.push(name);
                subfolders.push((
                    path,
                    Place {
                        grant: place.grant,
                        names,
                    },
                ));
            }
        }
        subfolders
    }

    /// The folder entry `name` in the folder at `parent` (names from a grant's root) is,
    /// looking from every folder down to the depth limit.
    fn folder_entry(
        &self,
        parent: &[String],
        name: &str,
        is_dir: Option<bool>,
    ) -> Option<&ProtectedEntry> {
        if !self.last_names.contains(name) {
            return None;
        }
        let mut names = names_of(parent);
        names.push(name);
        let deepest = self.list.limits.folder_depth.min(parent.len());
        (0..=deepest).find_map(|start| {
            self.list
                .in_folder(&names[start..], is_dir)
                .filter(|e| e.names.len() == names.len() - start)
        })
    }

    /// Records a protected path; a symbolic link's target is protected too when it lies in a
    /// read-write grant.
    fn record(&self, snapshot: &mut Snapshot, path: &Path, role: Role, reason: &str) {
        let Ok(identity) = Identity::of(path) else {
            return;
        };
        if identity.is_link()
            && let Ok(target) = fs::canonicalize(path)
            && self.grant_of(&target).is_some()
            && let Ok(target_identity) = Identity::of(&target)
        {
            snapshot.hits.entry(target).or_insert(Hit {
                identity: target_identity,
                role: Role::LinkTarget {
                    link: path.to_path_buf(),
                },
                reason: reason.to_owned(),
            });
        }
        snapshot.hits.insert(
            path.to_path_buf(),
            Hit {
                identity,
                role,
                reason: reason.to_owned(),
            },
        );
    }

    /// A `.git` file (or link): the git directory it names, when that lies in a grant.
    fn git_pointer(&self, path: &Path, snapshot: &mut Snapshot) {
        let Some(target) = git_dir_named_by(path) else {
            return;
        };
        if self.grant_of(&target).is_some() && target.is_dir() {
            let worktree = path.parent().map(Path::to_path_buf);
            self.git_dir(&target, worktree.as_deref(), snapshot);
        }
    }

    /// Records a git directory: its protected entries, its hooks folder and includes, and the
    /// git directories of its submodules and linked worktrees.
    pub(crate) fn git_dir(&self, git_dir: &Path, worktree: Option<&Path>, snapshot: &mut Snapshot) {
        if snapshot.git_dirs.contains_key(git_dir) {
            return;
        }
        let mut record = GitDir {
            worktree: worktree.map(Path::to_path_buf),
            hooks_path: None,
            watched: vec![git_dir.to_path_buf()],
        };
        snapshot
            .git_dirs
            .insert(git_dir.to_path_buf(), record.clone());
        for entry in self
            .list
            .entries()
            .iter()
            .filter(|e| e.scope == ProtectedScope::GitDir)
        {
            let path = git_dir.join(entry.path());
            let Ok(identity) = Identity::of(&path) else {
                continue;
            };
            let fits = match entry.kind {
                ProtectedKind::File => !identity.is_dir(),
                ProtectedKind::Folder => !matches!(identity, Identity::File { .. }),
                ProtectedKind::Any => true,
            };
            if fits {
                let role = Role::Git {
                    git_dir: git_dir.to_path_buf(),
                    names: entry.names.clone(),
                };
                self.record(snapshot, &path, role, &entry.reason);
            }
        }
        if let Some(text) = read_small(&git_dir.join("config")) {
            let base = worktree.unwrap_or(git_dir);
            let hooks = KeyPattern::parse("core.hooksPath");
            if let Some(value) = hooks.ok().and_then(|k| setting_values(&text, &k).pop()) {
                let folder = normalize(&base.join(value));
                if self.grant_of(&folder).is_some() {
                    let reason = self.list.hooks_path().reason.clone();
                    snapshot
                        .hooks_paths
                        .insert(folder.clone(), git_dir.to_path_buf());
                    if fs::symlink_metadata(&folder).is_ok() {
                        let role = Role::HooksPath {
                            git_dir: git_dir.to_path_buf(),
                        };
                        self.record(snapshot, &folder, role, &reason);
                    }
                    record.hooks_path = Some(folder);
                }
            }
            for pattern in ["include.path", "includeIf.*.path"] {
                let Ok(key) = KeyPattern::parse(pattern) else {
                    continue;
                };
                for value in setting_values(&text, &key) {
                    let file = normalize(&git_dir.join(value));
                    if self.grant_of(&file).is_some() && file.exists() {
                        let reason = self
                            .list
                            .in_git_dir(&["config"], None)
                            .map_or_else(String::new, |e| {
                                format!("included by a repository's configuration: {}", e.reason)
                            });
                        let role = Role::Include {
                            git_dir: git_dir.to_path_buf(),
                        };
                        self.record(snapshot, &file, role, &reason);
                    }
                }
            }
        }
        // Submodules' git directories (names may hold slashes) and linked worktrees'.
        let mut inner = Vec::new();
        let modules = git_dir.join("modules");
        let mut pending = VecDeque::from([modules]);
        let mut seen = BTreeSet::new();
        while let Some(dir) = pending.pop_front() {
            if seen.len() > 4096 || !seen.insert(dir.clone()) {
                continue;
            }
            let Ok(read) = fs::read_dir(&dir) else {
                continue;
            };
            record.watched.push(dir.clone());
            for entry in read.filter_map(Result::ok) {
                if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                let path = entry.path();
                if path.join("HEAD").is_file() {
                    inner.push(path);
                } else {
                    pending.push_back(path);
                }
            }
        }
        let worktrees = git_dir.join("worktrees");
        if let Ok(read) = fs::read_dir(&worktrees) {
            record.watched.push(worktrees);
            for entry in read.filter_map(Result::ok) {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    inner.push(entry.path());
                }
            }
        }
        snapshot.git_dirs.insert(git_dir.to_path_buf(), record);
        for dir in inner {
            self.git_dir(&dir, None, snapshot);
        }
    }
}

impl Scanner {
    /// The list's entry for a path in a read-write grant, judged from its names alone (folder
    /// entries down to the depth limit, git entries under any lexical git directory).
    pub(crate) fn protected_lexically(&self, path: &Path) -> Option<&ProtectedEntry> {
        let grant = self.grant_of(path)?;
        let relative = path.strip_prefix(&self.rw[grant]).ok()?;
        let names: Vec<&str> = relative
            .components()
            .filter_map(|c| c.as_os_str().to_str())
            .collect();
        self.list
            .lexical(&names, Some(self.list.limits.folder_depth))
    }
}

/// The git directory a `.git` file names (`gitdir: PATH`, relative to the file's folder).
pub(crate) fn git_dir_named_by(path: &Path) -> Option<PathBuf> {
    let meta = fs::symlink_metadata(path).ok()?;
    let folder = path.parent()?;
    if meta.file_type().is_symlink() {
        return Some(normalize(&folder.join(fs::read_link(path).ok()?)));
    }
    let text = read_small(path)?;
    let named = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    Some(normalize(&folder.join(named)))
}

/// A regular file's text, when it is small.
pub(crate) fn read_small(path: &Path) -> Option<String> {
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_CONFIG_BYTES {
        return None;
    }
    fs::read_to_string(path).ok()
}
