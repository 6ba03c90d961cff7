//! The session's folders: checked, normalised, laid out as Landlock grants and mounts, and the
//! one owner the sandbox runs as.

use std::collections::BTreeSet;

use protocol::FolderAccess;

use super::request::RUNNER_SOCKET_DIR;
use super::{FolderSpec, Owner, SessionSpec};
use crate::data::SandboxData;
use crate::error::PolicyError;
use crate::validate::check_absolute_path;

/// Folders a grant may not be, nor contain: the image's system folders, the workspace root and
/// OpenShell's own. Mounting a host folder there would replace what the sandbox runs on.
const SYSTEM_ROOTS: &[&str] = &[
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/sbin",
    "/etc",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/tmp",
    "/var",
    "/boot",
    "/sandbox",
    "/opt/openshell",
];

/// Folders a grant may not be inside: kernel interfaces and OpenShell's reserved paths.
const RESERVED_TREES: &[&str] = &[
    "/proc",
    "/sys",
    "/dev",
    "/opt/openshell",
    "/etc/openshell",
    "/etc/openshell-tls",
    "/run/openshell",
    "/run/openshell-sidecar",
    RUNNER_SOCKET_DIR,
];

/// The checked layout of a session's paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Granted folders, normalised, in the session's order.
    pub folders: Vec<(String, FolderAccess)>,
    pub cwd: String,
    pub runner_dir: String,
    /// Mounted and granted only when credential entries are enabled.
    pub private_home: Option<String>,
    pub owner: Owner,
    /// Landlock grants: the baseline, the folders, the runner, the socket folder, the home.
    pub read_only: Vec<String>,
    pub read_write: Vec<String>,
    /// Protected mounts, checked to lie inside a read-write folder, parents first.
    pub protected: Vec<(String, bool)>,
}

/// `true` when `inner` is `outer` or lies inside it (component-wise).
pub(crate) fn is_within(inner: &str, outer: &str) -> bool {
    outer == "/"
        || inner == outer
        || inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn check_mount_source(field: &str, path: &str) -> Result<String, PolicyError> {
    let path = check_absolute_path(field, path)?;
    if path == "/" {
        return Err(PolicyError::path(
            field,
            &path,
            "is the root folder; grant a folder inside it",
        ));
    }
    if let Some(root) = SYSTEM_ROOTS.iter().find(|root| is_within(root, &path)) {
        return Err(PolicyError::path(
            field,
            &path,
            format!("would replace the sandbox's own {root}; grant a folder of your own"),
        ));
    }
    if let Some(tree) = RESERVED_TREES.iter().find(|tree| is_within(&path, tree)) {
        return Err(PolicyError::path(
            field,
            &path,
            format!("lies inside {tree}, which is reserved"),
        ));
    }
    Ok(path)
}

/// The one owner the sandbox runs as: the owner of the read-write folders (all must share it),
/// or, with read-only folders only, the owner of the folder holding the working folder.
/// Never root: uid or gid 0 is refused with an explanation.
pub fn run_as_owner(folders: &[FolderSpec], cwd: &str) -> Result<Owner, PolicyError> {
    let writable: Vec<&FolderSpec> = folders
        .iter()
        .filter(|folder| folder.access == FolderAccess::ReadWrite)
        .collect();
    let owners: BTreeSet<Owner> = writable.iter().map(|folder| folder.owner).collect();
    if owners.len() > 1 {
        let listed: Vec<String> = writable
            .iter()
            .map(|folder| {
                format!(
                    "{} is {}:{}",
                    folder.path, folder.owner.uid, folder.owner.gid
                )
            })
            .collect();
        return Err(PolicyError::MixedOwners {
            owners: listed.join(", "),
        });
    }
    let chosen = match writable.first() {
        Some(folder) => *folder,
        None => folders
            .iter()
            .filter(|folder| is_within(cwd, &folder.path))
            .max_by_key(|folder| folder.path.len())
            .or(folders.first())
            .ok_or(PolicyError::NoFolders)?,
    };
    let refuse = |which: &str| PolicyError::RootOwner {
        folder: chosen.path.clone(),
        which: which.to_owned(),
    };
    if chosen.owner.uid == 0 {
        return Err(refuse("user"));
    }
    if chosen.owner.gid == 0 {
        return Err(refuse("group"));
    }
    if chosen.owner.uid == u32::MAX || chosen.owner.gid == u32::MAX {
        return Err(PolicyError::name(
            "folder owner",
            &format!("{}:{}", chosen.owner.uid, chosen.owner.gid),
            "4294967295 is not a usable id",
        ));
    }
    Ok(chosen.owner)
}

pub(crate) fn layout(data: &SandboxData, spec: &SessionSpec) -> Result<Layout, PolicyError> {
    if spec.folders.is_empty() {
        return Err(PolicyError::NoFolders);
    }
    let mut folders = Vec::new();
    let mut normalised = Vec::new();
    for folder in &spec.folders {
        let path = check_mount_source("folders", &folder.path)?;
        if folders.iter().any(|(seen, _)| seen == &path) {
            return Err(PolicyError::path("folders", &path, "is granted twice"));
        }
        folders.push((path.clone(), folder.access));
        normalised.push(FolderSpec {
            path,
            ..folder.clone()
        });
    }
    let cwd = check_absolute_path("cwd", &spec.cwd)?;
    if !folders.iter().any(|(path, _)| is_within(&cwd, path)) {
        return Err(PolicyError::CwdOutsideFolders { cwd });
    }
    let owner = run_as_owner(&normalised, &cwd)?;
    let runner_dir = check_mount_source("runner_dir", &spec.runner_dir)?;
    let private_home = match (&spec.private_home, spec.credentials.is_empty()) {
        (_, true) => None,
        (None, false) => return Err(PolicyError::MissingPrivateHome),
        (Some(home), false) => Some(check_mount_source("private_home", home)?),
    };
    for extra in std::iter::once(&runner_dir).chain(private_home.as_ref()) {
        if let Some((path, _)) = folders.iter().find(|(path, _)| path == extra) {
            return Err(PolicyError::path(
                "folders",
                path,
                "is also the runner's or the private home's folder; keep them apart",
            ));
        }
    }

    let mut read_only = data.baseline.read_only.clone();
    let mut read_write = data.baseline.read_write.clone();
    for (path, access) in &folders {
        match access {
            FolderAccess::ReadOnly => read_only.push(path.clone()),
            FolderAccess::ReadWrite => read_write.push(path.clone()),
        }
    }
    read_only.push(runner_dir.clone());
    read_write.push(RUNNER_SOCKET_DIR.to_owned());
    read_write.extend(private_home.iter().cloned());
    dedup(&mut read_only);
    dedup(&mut read_write);
    let mut protected = Vec::new();
    for mount in &spec.protected {
        let path = check_absolute_path("protected", &mount.path)?;
        let inside = folders.iter().any(|(folder, access)| {
            *access == FolderAccess::ReadWrite && is_within(&path, folder) && path != *folder
        });
        if !inside {
            return Err(PolicyError::path(
                "protected",
                &path,
                "is not inside a read-write folder of the session",
            ));
        }
        if protected.iter().any(|(seen, _)| seen == &path) {
            return Err(PolicyError::path("protected", &path, "is listed twice"));
        }
        protected.push((path, mount.read_only));
    }
    protected.sort_by_key(|(path, read_only)| (path.matches('/').count(), *read_only));
    Ok(Layout {
        folders,
        cwd,
        runner_dir,
        private_home,
        owner,
        read_only,
        read_write,
        protected,
    })
}

fn dedup(paths: &mut Vec<String>) {
    let mut seen = BTreeSet::new();
    paths.retain(|path| seen.insert(path.clone()));
}
