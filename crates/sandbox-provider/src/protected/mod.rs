//! Files the host runs later (`sandbox-policy`'s protected list), on the host side of every
//! wall:
//!
//! 1. at start, a walk of the read-write grants finds the protected paths that exist (git
//!    configuration and hooks, shell dotfiles, editor and agent settings, `core.hooksPath`
//!    folders, included configs) and the git directories; the walls mount the paths
//!    read-only over the grant and bind each top-level git directory onto itself (a mount
//!    point cannot be renamed away) — see [`ProtectedFiles::mounts`];
//! 2. after each call that can write, at turn end and at close, [`ProtectedFiles::sweep`]
//!    looks at the folders that gained entries (inotify) for protected paths the start did
//!    not have, and undoes them ([`sweep`]);
//! 3. [`ProtectedFiles::write`] carries out a write the user approved, on the host, outside
//!    the wall ([`host_write`]).

mod host_write;
mod quarantine;
mod scan;
mod sweep;
mod watch;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use protocol::{FolderAccess, ProtectedAction, ProtectedPath, StatusCheck};
use sandbox_policy::ProtectedList;
use tool_protocol::{ToolRequest, ToolResult};

use crate::runner_client::CallError;
use crate::sandbox::SandboxRequest;
use quarantine::Quarantine;
use scan::{Hit, Identity, Scanner, Snapshot};
use sweep::Judge;
use watch::Watcher;

/// Something a sweep found and what was done about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedChange {
    /// Absolute path on the host.
    pub path: PathBuf,
    /// Why the path is protected.
    pub reason: String,
    pub action: ProtectedAction,
    /// Where the original went.
    pub quarantined_to: Option<PathBuf>,
    /// What was found, in plain words.
    pub detail: String,
}

/// A mount a wall adds over a read-write grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedMount {
    /// The same path on the host and inside.
    pub path: PathBuf,
    /// `true`: read-only (a protected path); `false`: the folder bound onto itself, still
    /// writable (a git directory, so it cannot be renamed away and replaced).
    pub read_only: bool,
}

/// The protected list as front ends show it; when it does not load, a failed check saying
/// so joins `checks` (sessions are refused then: no wall starts without it).
pub fn listed(checks: &mut Vec<StatusCheck>) -> Vec<ProtectedPath> {
    match ProtectedList::builtin() {
        Ok(list) => list.describe(),
        Err(e) => {
            checks.push(StatusCheck {
                name: "protected list".into(),
                ok: false,
                detail: format!("the protected list does not load: {e}"),
                fix: Some(
                    "reinstall Paddock: its built-in config/protected.toml is damaged".into(),
                ),
            });
            Vec::new()
        }
    }
}

/// The protected list as the approvals check writes against it: a glob and the reason for
/// each entry (`core.hooksPath` folders are not lexical; a live sandbox's
/// [`ProtectedFiles::paths`] adds them).
pub fn approval_globs() -> Result<Vec<(String, String)>, String> {
    ProtectedList::builtin()
        .map(|list| list.globs())
        .map_err(|e| format!("the protected list does not load: {e}"))
}

/// Loads the protected list and walks the request's read-write grants (on a blocking thread);
/// sweeps quarantine into `<quarantine_root>/<session>`.
pub async fn start_for(
    request: &SandboxRequest,
    quarantine_root: &Path,
    walled: bool,
) -> Result<Arc<ProtectedFiles>, crate::ProviderError> {
    let files = start_unwatched_for(request, quarantine_root, walled).await?;
    let watching = Arc::clone(&files);
    tokio::task::spawn_blocking(move || watching.add_watches())
        .await
        .map_err(|e| crate::ProviderError::Unavailable {
            reason: format!("watching the granted folders failed: {e}"),
        })?;
    Ok(files)
}

/// [`start_for`] without the inotify watches: the caller adds them
/// ([`ProtectedFiles::add_watches`]) before the session's first command, e.g. while its wall
/// is built (watching every folder of a large grant costs tens of milliseconds).
pub async fn start_unwatched_for(
    request: &SandboxRequest,
    quarantine_root: &Path,
    walled: bool,
) -> Result<Arc<ProtectedFiles>, crate::ProviderError> {
    let list = ProtectedList::builtin().map_err(|e| crate::ProviderError::Unavailable {
        reason: format!("the protected list does not load: {e}"),
    })?;
    if let Some(folder) = request.folders.iter().find(|f| {
        f.access == FolderAccess::ReadWrite && quarantine_root.starts_with(Path::new(&f.path))
    }) {
        return Err(crate::ProviderError::InvalidRequest(format!(
            "{}: this folder holds Paddock's quarantine ({}); grant a folder inside it instead",
            folder.path,
            quarantine_root.display()
        )));
    }
    let session: String = request
        .session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let quarantine = quarantine_root.join(session);
    let request = request.clone();
    tokio::task::spawn_blocking(move || {
        Arc::new(ProtectedFiles::start_unwatched(
            Arc::new(list),
            &request,
            quarantine,
            walled,
        ))
    })
    .await
    .map_err(|e| crate::ProviderError::Unavailable {
        reason: format!("looking for protected files failed: {e}"),
    })
}

struct State {
    baseline: Snapshot,
    watcher: Option<Watcher>,
    /// The content of protected files that are not mounted, to write back when one is
    /// changed (up to [`MAX_PREIMAGE`] each).
    preimages: BTreeMap<PathBuf, Vec<u8>>,
}

/// Protected files larger than this are not kept to be written back (a change is quarantined).
const MAX_PREIMAGE: u64 = 1 << 20;

/// Most entries inside protected folders that are not mounted that are tracked one by one.
const MAX_TRACKED_INSIDE: usize = 10_000;

/// Makes every entry inside a protected folder that is not mounted a hit of its own (so a
/// file changed in place there is noticed and written back, and each one is watched).
fn expand_unmounted(snapshot: &mut Snapshot, mounted: &[PathBuf]) {
    let mut queue: VecDeque<(PathBuf, Hit)> = snapshot
        .hits
        .iter()
        .filter(|(p, h)| h.identity.is_dir() && !mounted.iter().any(|m| p.starts_with(m)))
        .map(|(p, h)| (p.clone(), h.clone()))
        .collect();
    let mut tracked = 0;
    while let Some((folder, hit)) = queue.pop_front() {
        let Ok(read) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in read.filter_map(Result::ok) {
            let path = entry.path();
            if snapshot.hits.contains_key(&path) {
                continue;
            }
            let Ok(identity) = Identity::of(&path) else {
                continue;
            };
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = Hit {
                identity,
                ..hit.inside(&name)
            };
            if child.identity.is_dir() {
                queue.push_back((path.clone(), child.clone()));
            }
            snapshot.hits.insert(path, child);
            tracked += 1;
            if tracked >= MAX_TRACKED_INSIDE {
                return;
            }
        }
    }
}

/// Keeps the content of every protected file that is not mounted.
fn keep_preimages(
    snapshot: &Snapshot,
    mounted: &[PathBuf],
    preimages: &mut BTreeMap<PathBuf, Vec<u8>>,
) {
    for (path, hit) in &snapshot.hits {
        if !hit.identity.is_file() || mounted.iter().any(|m| path.starts_with(m)) {
            continue;
        }
        let small =
            std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() <= MAX_PREIMAGE);
        match std::fs::read(path) {
            Ok(bytes) if small => {
                preimages.insert(path.clone(), bytes);
            }
            _ => {
                preimages.remove(path);
            }
        }
    }
}

/// A session's protected files: what its wall mounts read-only, and the sweeps that catch
/// what was created since.
pub struct ProtectedFiles {
    scanner: Scanner,
    quarantine: Quarantine,
    /// What the wall mounts read-only (nothing for `direct`): no sweep looks inside.
    mounted: Vec<PathBuf>,
    state: Mutex<State>,
}

impl std::fmt::Debug for ProtectedFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtectedFiles")
            .field("quarantine", &self.quarantine.root())
            .finish_non_exhaustive()
    }
}

impl ProtectedFiles {
    /// Walks the request's read-write grants and starts watching them. `quarantine` is this
    /// session's quarantine folder (created on first use); `walled` says whether the wall
    /// mounts [`Self::mounts`] (false for `direct`). Blocking I/O.
    pub fn start(
        list: Arc<ProtectedList>,
        request: &SandboxRequest,
        quarantine: PathBuf,
        walled: bool,
    ) -> Self {
        let files = Self::start_unwatched(list, request, quarantine, walled);
        files.add_watches();
        files
    }

    /// [`Self::start`] without the watches, which [`Self::add_watches`] adds. No sweep may run
    /// before (it would take the missing watcher for a degraded one and walk everything).
    pub fn start_unwatched(
        list: Arc<ProtectedList>,
        request: &SandboxRequest,
        quarantine: PathBuf,
        walled: bool,
    ) -> Self {
        let grants = |access| {
            request
                .folders
                .iter()
                .filter(|f| f.access == access)
                .map(|f| scan::normalize(Path::new(&f.path)))
                .collect()
        };
        let scanner = Scanner::new(
            list,
            grants(FolderAccess::ReadWrite),
            grants(FolderAccess::ReadOnly),
        );
        let mut baseline = scanner.scan();
        let mounted: Vec<PathBuf> = if walled {
            read_only_mounts(&baseline)
        } else {
            Vec::new()
        };
        expand_unmounted(&mut baseline, &mounted);
        for (path, hit) in &baseline.hits {
            if hit.identity.is_dir() && !mounted.iter().any(|m| path.starts_with(m)) {
                baseline.listings.insert(path.clone(), listing(path));
            }
        }
        let mut preimages = BTreeMap::new();
        keep_preimages(&baseline, &mounted, &mut preimages);
        Self {
            scanner,
            quarantine: Quarantine::new(quarantine),
            mounted,
            state: Mutex::new(State {
                baseline,
                watcher: None,
                preimages,
            }),
        }
    }

    /// Watches (inotify) every folder the start walked and every protected path not mounted.
    /// The state is locked only to read what to watch and to store the watcher, so the wall's
    /// build can read the mounts meanwhile. Blocking I/O.
    pub fn add_watches(&self) {
        let (folders, files) = watch_targets(&self.state().baseline, &self.mounted);
        let watcher = Watcher::new().ok().map(|mut watcher| {
            for folder in &folders {
                watcher.watch(folder);
            }
            for file in &files {
                watcher.watch_file(file);
            }
            watcher
        });
        self.state().watcher = watcher;
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The mounts the wall adds over the read-write grants, parents first: each top-level git
    /// directory bound onto itself, then every protected path that exists (not links: their
    /// targets, when in a grant, are listed themselves) read-only.
    pub fn mounts(&self) -> Vec<ProtectedMount> {
        let state = self.state();
        let baseline = &state.baseline;
        let mut mounts: Vec<ProtectedMount> = Vec::new();
        for git_dir in baseline.git_dirs.keys() {
            let nested = baseline
                .git_dirs
                .keys()
                .any(|other| other != git_dir && git_dir.starts_with(other));
            let real = std::fs::symlink_metadata(git_dir).is_ok_and(|m| m.is_dir());
            if !nested && real {
                mounts.push(ProtectedMount {
                    path: git_dir.clone(),
                    read_only: false,
                });
            }
        }
        mounts.extend(
            read_only_mounts(baseline)
                .into_iter()
                .map(|path| ProtectedMount {
                    path,
                    read_only: true,
                }),
        );
        mounts.sort_by_key(|m| (m.path.components().count(), m.read_only));
        mounts
    }

    /// Every protected path found (and each repository's `core.hooksPath` folder, found or
    /// not), with why, for the approvals to ask before a write that names one.
    pub fn paths(&self) -> Vec<(String, String)> {
        let state = self.state();
        let mut paths: Vec<(String, String)> = state
            .baseline
            .hits
            .iter()
            .map(|(path, hit)| (path.display().to_string(), hit.reason.clone()))
            .collect();
        let reason = &self.scanner.list.hooks_path().reason;
        for git_dir in state.baseline.git_dirs.values() {
            if let Some(folder) = &git_dir.hooks_path {
                paths.push((folder.display().to_string(), reason.clone()));
            }
        }
        paths.sort();
        paths.dedup();
        paths
    }

    /// One line for the provisioning progress and the logs.
    pub fn summary(&self) -> String {
        let state = self.state();
        let watched = state.watcher.as_ref().map_or(0, Watcher::watched);
        let mut text = format!(
            "protected files: {} read-only, {} git directories, {} folders watched",
            state.baseline.hits.len(),
            state.baseline.git_dirs.len(),
            watched
        );
        if state.baseline.truncated {
            text.push_str(&format!(
                " (stopped at the limit of {} folders: deeper ones are not swept)",
                self.scanner.list.limits.max_folders
            ));
        }
        if state.watcher.as_ref().is_none_or(|w| w.degraded) {
            text.push_str(" (no inotify watch: every sweep walks the folders)");
        }
        text
    }

    /// Finds protected paths created (or links replaced) since the start or the last sweep,
    /// and undoes them. Blocking I/O; cheap when nothing changed.
    pub fn sweep(&self) -> Vec<ProtectedChange> {
        let mut guard = self.state();
        let state = &mut *guard;
        let changes = match state.watcher.as_mut() {
            Some(watcher) => watcher.drain(),
            None => watch::Changes {
                rescan: true,
                ..watch::Changes::default()
            },
        };
        // Deleted folders first: one made again under the same name is new.
        for folder in &changes.gone {
            state.baseline.folders.remove(folder);
            state.baseline.listings.remove(folder);
        }
        if !changes.rescan && changes.dirty.is_empty() {
            return Vec::new();
        }
        let mut now = if changes.rescan {
            let mut now = self.scanner.scan();
            now.listings = state.baseline.listings.clone();
            now
        } else {
            self.look_at(&state.baseline, &changes.dirty)
        };
        // What is inside protected folders that are not mounted is compared entry by entry.
        expand_unmounted(&mut now, &self.mounted);
        let in_grant = |path: &Path| self.scanner.grant_of(path).is_some();
        let judge = Judge {
            list: &self.scanner.list,
            quarantine: &self.quarantine,
            in_grant: &in_grant,
        };
        let mut found = Vec::new();
        let mut acted_on: Vec<PathBuf> = Vec::new();
        let already =
            |acted_on: &[PathBuf], path: &Path| acted_on.iter().any(|d| path.starts_with(d));
        for (path, hit) in &now.hits {
            let before = state.baseline.hits.get(path);
            let mut candidates: Vec<(PathBuf, Hit, Option<&Hit>)> = Vec::new();
            if before.is_some_and(|b| b.identity == hit.identity) {
                // The same protected folder: new entries in it count when it is not mounted.
                if hit.identity.is_dir() && !self.is_mounted(path) {
                    let known = state.baseline.listings.get(path);
                    for (name, child) in new_entries(path, known) {
                        candidates.push((child, hit.inside(&name), None));
                    }
                }
            } else {
                match before {
                    // Mounted read-only: the sandbox cannot have changed it; the host did.
                    Some(b) if self.is_mounted(path) && !b.identity.is_link() => {}
                    // A link is put back.
                    Some(b) if b.identity.is_link() => {
                        candidates.push((path.clone(), hit.clone(), Some(b)));
                    }
                    // A file kept as it was: written back.
                    Some(_) if hit.identity.is_file() && state.preimages.contains_key(path) => {
                        if !already(&acted_on, path)
                            && let Some(content) = state.preimages.get(path)
                        {
                            found.push(judge.restore(path, &hit.reason, content));
                            acted_on.push(path.clone());
                        }
                    }
                    // Anything else not mounted is judged as new.
                    _ => candidates.push((path.clone(), hit.clone(), None)),
                }
            }
            for (path, hit, before) in candidates {
                if already(&acted_on, &path) {
                    continue;
                }
                let changes = judge.judge(&path, &hit, before);
                if !changes.is_empty() {
                    acted_on.push(path);
                }
                found.extend(changes);
            }
        }
        // What is there now (after the undoing) becomes the new baseline.
        refresh(&mut now);
        let mut fresh = now.clone();
        fresh
            .hits
            .retain(|path, _| !state.preimages.contains_key(path) || acted_on.contains(path));
        keep_preimages(&fresh, &self.mounted, &mut state.preimages);
        for (path, hit) in &now.hits {
            if hit.identity.is_dir() && !self.is_mounted(path) {
                now.listings.insert(path.clone(), listing(path));
            }
        }
        if changes.rescan {
            state.baseline = now;
            if let Some(watcher) = state.watcher.as_mut() {
                watch_all(watcher, &state.baseline, &self.mounted);
            }
        } else {
            // Only what this sweep saw for the first time needs a watch.
            if let Some(watcher) = state.watcher.as_mut() {
                watch_all(watcher, &now, &self.mounted);
            }
            state.baseline.hits.extend(now.hits);
            state.baseline.folders.extend(now.folders);
            state.baseline.git_dirs.extend(now.git_dirs);
            state.baseline.hooks_paths.extend(now.hooks_paths);
            state.baseline.listings.extend(now.listings);
        }
        found
    }

    /// A snapshot of what the folders that gained entries hold now (and of every folder new
    /// since the baseline, walked whole).
    fn look_at(&self, baseline: &Snapshot, dirty: &BTreeSet<PathBuf>) -> Snapshot {
        let mut now = Snapshot {
            hooks_paths: baseline.hooks_paths.clone(),
            ..Snapshot::default()
        };
        let mut queue = VecDeque::new();
        for dir in dirty {
            if let Some(place) = baseline.folders.get(dir) {
                for (child, place) in self.scanner.examine(dir, place, &mut now) {
                    if !baseline.folders.contains_key(&child) {
                        queue.push_back((child, place));
                    }
                }
                now.folders.insert(dir.clone(), place.clone());
            }
            let owner = baseline
                .git_dirs
                .iter()
                .find(|(_, g)| g.watched.contains(dir))
                .map(|(path, g)| (path.clone(), g.worktree.clone()));
            if let Some((git_dir, worktree)) = owner {
                self.scanner
                    .git_dir(&git_dir, worktree.as_deref(), &mut now);
            }
            // A protected folder or file that is not mounted (and so watched itself): compared
            // with its listing, or with what it was.
            if let Some(hit) = baseline.hits.get(dir)
                && let Ok(identity) = Identity::of(dir)
            {
                now.hits.entry(dir.clone()).or_insert(Hit {
                    identity,
                    ..hit.clone()
                });
            }
        }
        self.scanner.walk(&mut now, queue);
        now
    }

    fn is_mounted(&self, path: &Path) -> bool {
        self.mounted.iter().any(|m| path.starts_with(m))
    }

    /// Whether `path` (absolute) is protected: the list's patterns in a read-write grant, or
    /// a path the walk found (a `core.hooksPath` folder, an included config).
    pub fn is_protected(&self, path: &Path) -> bool {
        let path = scan::normalize(path);
        if self.scanner.protected_lexically(&path).is_some() {
            return true;
        }
        let state = self.state();
        state.baseline.hits.keys().any(|p| path.starts_with(p))
            || state
                .baseline
                .git_dirs
                .values()
                .filter_map(|g| g.hooks_path.as_ref())
                .any(|folder| path.starts_with(folder))
    }

    /// Carries out an approved `write_file`, `edit_file` or `delete` of a protected path on
    /// the host, outside the wall: the path is resolved from its grant's root one name at a
    /// time without following symbolic links, and the file is changed in place (so a
    /// read-only mount of it inside shows the new content). The result is the tool's own.
    pub fn write(&self, request: &ToolRequest) -> Result<ToolResult, CallError> {
        let result = host_write::write(&self.scanner, request);
        if let Some(path) = host_write::target(request) {
            self.accept(&scan::normalize(Path::new(path)));
        }
        result
    }

    /// Takes what is at `path` (just written with the user's approval) into the baseline.
    fn accept(&self, path: &Path) {
        let mut guard = self.state();
        let state = &mut *guard;
        let mut now = Snapshot {
            hooks_paths: state.baseline.hooks_paths.clone(),
            ..Snapshot::default()
        };
        // The nearest walked folder above the path sees the protected path it lies in.
        let walked = path.ancestors().skip(1).find_map(|a| {
            state
                .baseline
                .folders
                .get(a)
                .map(|place| (a, place.clone()))
        });
        if let Some((folder, place)) = walked {
            self.scanner.examine(folder, &place, &mut now);
        }
        let owner = state
            .baseline
            .git_dirs
            .iter()
            .find(|(git_dir, _)| path.starts_with(git_dir))
            .map(|(g, d)| (g.clone(), d.worktree.clone()));
        if let Some((git_dir, worktree)) = owner {
            self.scanner
                .git_dir(&git_dir, worktree.as_deref(), &mut now);
        }
        expand_unmounted(&mut now, &self.mounted);
        for (hit_path, hit) in now.hits {
            if !(hit_path.starts_with(path) || path.starts_with(&hit_path)) {
                continue;
            }
            if !self.is_mounted(&hit_path) {
                if hit.identity.is_dir() {
                    state
                        .baseline
                        .listings
                        .insert(hit_path.clone(), listing(&hit_path));
                }
                if let Some(watcher) = state.watcher.as_mut() {
                    if hit.identity.is_dir() {
                        watcher.watch(&hit_path);
                    } else if hit.identity.is_file() {
                        watcher.watch_file(&hit_path);
                    }
                }
            }
            state.baseline.hits.insert(hit_path, hit);
        }
        if std::fs::symlink_metadata(path).is_err() {
            state.baseline.hits.remove(path);
            state.preimages.remove(path);
        }
        // What the user approved is what a later change is undone to.
        let approved = Snapshot {
            hits: state
                .baseline
                .hits
                .iter()
                .filter(|(p, _)| p.starts_with(path))
                .map(|(p, h)| (p.clone(), h.clone()))
                .collect(),
            ..Snapshot::default()
        };
        keep_preimages(&approved, &self.mounted, &mut state.preimages);
    }
}

/// Re-reads the identity of every hit (some were just moved or rewritten).
fn refresh(snapshot: &mut Snapshot) {
    let paths: Vec<PathBuf> = snapshot.hits.keys().cloned().collect();
    for path in paths {
        match Identity::of(&path) {
            Ok(identity) => {
                if let Some(hit) = snapshot.hits.get_mut(&path) {
                    hit.identity = identity;
                }
            }
            Err(_) => {
                snapshot.hits.remove(&path);
            }
        }
    }
}

/// The protected paths mounted read-only: every one found but links (a link's target, when
/// in a grant, is a hit of its own), none inside another.
fn read_only_mounts(snapshot: &Snapshot) -> Vec<PathBuf> {
    let read_only: Vec<&PathBuf> = snapshot
        .hits
        .iter()
        .filter(|(_, hit)| !hit.identity.is_link())
        .map(|(path, _)| path)
        .collect();
    read_only
        .iter()
        .filter(|path| {
            !read_only
                .iter()
                .any(|other| other != *path && path.starts_with(other))
        })
        .map(|path| (*path).clone())
        .collect()
}

/// The names in a folder.
fn listing(folder: &Path) -> BTreeSet<String> {
    std::fs::read_dir(folder)
        .map(|read| {
            read.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Entries of `folder` not in `known`.
fn new_entries(folder: &Path, known: Option<&BTreeSet<String>>) -> Vec<(String, PathBuf)> {
    listing(folder)
        .into_iter()
        .filter(|name| known.is_none_or(|known| !known.contains(name)))
        .map(|name| {
            let path = folder.join(&name);
            (name, path)
        })
        .collect()
}

fn watch_all(watcher: &mut Watcher, snapshot: &Snapshot, mounted: &[PathBuf]) {
    let (folders, files) = watch_targets(snapshot, mounted);
    for folder in &folders {
        watcher.watch(folder);
    }
    for file in &files {
        watcher.watch_file(file);
    }
}

/// What a snapshot's watcher watches: every folder walked (and each git directory's watched
/// folders), and the protected paths not mounted (folders, then files).
fn watch_targets(snapshot: &Snapshot, mounted: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut folders: Vec<PathBuf> = snapshot.folders.keys().cloned().collect();
    for git_dir in snapshot.git_dirs.values() {
        folders.extend(git_dir.watched.iter().cloned());
    }
    let mut files = Vec::new();
    for (path, hit) in &snapshot.hits {
        if mounted.iter().any(|m| path.starts_with(m)) {
            continue;
        }
        if hit.identity.is_dir() {
            folders.push(path.clone());
        } else if hit.identity.is_file() {
            files.push(path.clone());
        }
    }
    (folders, files)
}

#[cfg(test)]
#[path = "protected_tests.rs"]
mod tests;
