//! Which local walls are orphans. A wall's folder (`<state>/wall-<pid>-<session>-<n>`) records
//! the session it was built for (its `owner` file); a wall is an orphan when no live process
//! runs that session (the host's session leases, [`SessionOwners`]) and this process did not
//! build it. The pid in the name is never asked: a live Paddock in another PID namespace
//! sharing the state folder has a pid this process cannot see, and a dead one's pid may have
//! been given to another process since.
//!
//! A wall's cgroup is named after its folder (`paddock-` and the folder's name) and is removed
//! with it, before it: the folder is the record that says whose the cgroup is, so it goes
//! last. Cgroups with no folder in this state folder belong to another state folder's walls
//! and are left to that folder's Paddock.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::sandbox::SessionOwners;

/// The file in a wall's folder naming the session it was built for.
pub(crate) const OWNER_FILE: &str = "owner";

/// The wall folders this process built and has not yet removed.
static OWN_WALLS: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// Marks a wall folder as this process's until dropped: a reap in this process never takes it,
/// whatever the owners say (callers without session leases, like the provider's own tests).
#[derive(Debug)]
pub(crate) struct OwnWall(PathBuf);

impl OwnWall {
    pub(crate) fn register(root: &Path) -> Self {
        OWN_WALLS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(root.to_path_buf());
        Self(root.to_path_buf())
    }
}

impl Drop for OwnWall {
    fn drop(&mut self) {
        OWN_WALLS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.0);
    }
}

fn is_own(root: &Path) -> bool {
    OWN_WALLS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .contains(root)
}

/// The session part of a wall folder's name (`wall-<pid>-<session>-<n>`): exact for the
/// host's session ids (UUIDs), which the name keeps as they are.
fn session_from_name(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("wall-")?;
    let (_pid, rest) = rest.split_once('-')?;
    let (session, n) = rest.rsplit_once('-')?;
    n.parse::<u64>().ok()?;
    (!session.is_empty()).then_some(session)
}

/// The session a wall folder was built for: its owner record, or for a folder built before
/// walls had one, the session in its name.
pub(crate) fn wall_session(root: &Path) -> Option<String> {
    if let Ok(text) = std::fs::read_to_string(root.join(OWNER_FILE)) {
        let session = text.trim();
        if !session.is_empty() {
            return Some(session.to_owned());
        }
    }
    let name = root.file_name()?.to_str()?;
    session_from_name(name).map(str::to_owned)
}

/// What one look at the state folder found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct WallCensus {
    /// Orphaned wall folders: (folder name, path).
    pub orphans: Vec<(String, PathBuf)>,
    /// True when a wall is kept (some wall may still mount the shared `/etc` copy).
    pub walls_kept: bool,
}

/// Sorts the wall folders of `state_dir` into orphans and kept ones. A folder whose session
/// cannot be read is kept (never reap what cannot be attributed).
pub(crate) fn census(state_dir: &Path, owners: &dyn SessionOwners) -> WallCensus {
    let mut census = WallCensus::default();
    let Ok(entries) = std::fs::read_dir(state_dir) else {
        return census;
    };
    let mut found: Vec<(String, PathBuf)> = entries
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(name, _)| name.starts_with("wall-"))
        .collect();
    found.sort();
    for (name, path) in found {
        let orphan =
            !is_own(&path) && wall_session(&path).is_some_and(|session| !owners.is_live(&session));
        if orphan {
            census.orphans.push((name, path));
        } else {
            census.walls_kept = true;
        }
    }
    census
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    struct Live(&'static [&'static str]);

    impl SessionOwners for Live {
        fn is_live(&self, session_id: &str) -> bool {
            self.0.contains(&session_id)
        }
    }

    #[test]
    fn the_session_is_read_from_the_record_then_the_name() {
        assert_eq!(
            session_from_name("wall-12-0b7c1f3e-8d2a-4c39-9f51-2a6e0c1d7b44-3"),
            Some("0b7c1f3e-8d2a-4c39-9f51-2a6e0c1d7b44")
        );
        assert_eq!(session_from_name("wall-12-check-77-0"), Some("check-77"));
        for bad in [
            "wall-12",
            "wall-12-s",
            "wall-12--0",
            "etc-cache",
            "wall-1-s-x",
        ] {
            assert_eq!(session_from_name(bad), None, "{bad}");
        }
        let state = tempfile::tempdir().unwrap();
        let wall = state.path().join("wall-9-a_b-0");
        std::fs::create_dir(&wall).unwrap();
        assert_eq!(wall_session(&wall).as_deref(), Some("a_b"));
        std::fs::write(wall.join(OWNER_FILE), "a.b\n").unwrap();
        assert_eq!(
            wall_session(&wall).as_deref(),
            Some("a.b"),
            "the record wins"
        );
    }

    /// The pid in a folder's name decides nothing: a wall named after a pid that is alive
    /// here (this process's own) is an orphan when its session is not live, and one named
    /// after a pid no process has is kept while its session is.
    #[test]
    fn sessions_decide_never_pids() {
        let state = tempfile::tempdir().unwrap();
        let me = std::process::id();
        let reused = state.path().join(format!("wall-{me}-dead-0"));
        let elsewhere = state.path().join("wall-0-live-0");
        let unreadable = state.path().join("wall-odd");
        for dir in [&reused, &elsewhere, &unreadable] {
            std::fs::create_dir(dir).unwrap();
        }
        let census = census(state.path(), &Live(&["live"]));
        assert_eq!(
            census.orphans,
            [(format!("wall-{me}-dead-0"), reused.clone())]
        );
        assert!(census.walls_kept);
        // This process's own walls are kept whatever the owners say.
        let own = OwnWall::register(&reused);
        let census = super::census(state.path(), &Live(&[]));
        assert_eq!(census.orphans, [("wall-0-live-0".to_owned(), elsewhere)]);
        drop(own);
        assert_eq!(super::census(state.path(), &Live(&[])).orphans.len(), 2);
    }
}
