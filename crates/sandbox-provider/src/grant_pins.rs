//! Granted folders pinned at every wall start (a new session, a resume, a grant change), on
//! both walls: each grant is opened from `/` following no link (`paddock_wall::pinned`), and a
//! grant that is, or lies below, a symbolic link is refused with an error naming it. The local
//! wall mounts by the open handle and checks the identity again from inside; OpenShell (whose
//! gateway mounts by path) compares the identity seen through the runner with the pinned one
//! before the first tool call.
//!
//! The protected paths the walls mount over a read-write grant ([`crate::protected`]) are
//! pinned the same way right before a wall is built ([`pin_protected`]): the local wall mounts
//! them by handle too and checks each from inside (identity, a mount of its own, read-only);
//! OpenShell compares their identity inside.

use paddock_wall::pinned::{self, FolderIdentity, PinnedFolder};
use protocol::FolderGrant;

use crate::error::ProviderError;
use crate::protected::ProtectedMount;
use crate::sandbox::SandboxRequest;

/// One granted folder, open and identified.
#[derive(Debug)]
pub struct PinnedGrant {
    pub grant: FolderGrant,
    pub folder: PinnedFolder,
}

impl PinnedGrant {
    pub fn identity(&self) -> FolderIdentity {
        self.folder.identity
    }
}

/// Pins every folder of `request`, refusing the first that cannot be reached without a link.
pub fn pin_grants(request: &SandboxRequest) -> Result<Vec<PinnedGrant>, ProviderError> {
    request
        .folders
        .iter()
        .map(|grant| {
            let folder = pinned::open_folder(&grant.path)
                .map_err(|e| ProviderError::InvalidRequest(e.to_string()))?;
            Ok(PinnedGrant {
                grant: grant.clone(),
                folder,
            })
        })
        .collect()
}

/// A protected mount with the identity of what the host found at its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedMount {
    pub mount: ProtectedMount,
    pub identity: FolderIdentity,
}

/// Opens every protected path to be mounted following no link and keeps its identity. A path
/// gone since the walk is left out (nothing to protect; a new one is caught by the sweeps); one
/// that is now a link, or no longer a file or folder, refuses the start, naming it: another
/// writer of the grant replaced it while the wall started, and mounting it would follow the
/// link.
pub fn pin_protected(mounts: Vec<ProtectedMount>) -> Result<Vec<PinnedMount>, ProviderError> {
    let mut pinned = Vec::with_capacity(mounts.len());
    for mount in mounts {
        let text = mount.path.display().to_string();
        match pinned::open_entry(&text) {
            Ok(entry) => pinned.push(PinnedMount {
                mount,
                identity: entry.identity,
            }),
            Err(pinned::PinError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound => {}
            Err(pinned::PinError::Link { link, target, .. }) => {
                return Err(ProviderError::InvalidRequest(format!(
                    "protected path {text}: {link} is now a symbolic link{target}; it was \
                     replaced while the wall started, so nothing was mounted (start again; \
                     something outside the sandbox is changing this folder)"
                )));
            }
            Err(e) => {
                return Err(ProviderError::InvalidRequest(format!(
                    "protected path {e}; it changed while the wall started, so nothing was \
                     mounted"
                )));
            }
        }
    }
    Ok(pinned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn mount(path: PathBuf) -> ProtectedMount {
        ProtectedMount {
            path,
            read_only: true,
        }
    }

    #[test]
    fn protected_paths_are_pinned_a_gone_one_left_out_and_a_link_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".bashrc"), "").unwrap();
        let pins = pin_protected(vec![
            mount(root.join(".git/hooks")),
            mount(root.join(".bashrc")),
            mount(root.join(".zshrc")),
        ])
        .unwrap();
        assert_eq!(pins.len(), 2, "{pins:?}");
        std::fs::rename(root.join(".git/hooks"), root.join("hooks.real")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join(".git/hooks")).unwrap();
        let err = pin_protected(vec![mount(root.join(".git/hooks"))])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&root.join(".git/hooks").display().to_string())
                && err.contains("symbolic link (to /etc)"),
            "{err}"
        );
    }
}
