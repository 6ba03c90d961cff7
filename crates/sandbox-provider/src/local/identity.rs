//! Who the sandbox's processes are: on the host (the kernel uid that owns what they write) and
//! inside (the uid they see, always unprivileged), and the passwd/group files that name them.
//!
//! Files written into read-write grants belong to the grant's owner on the host: when Paddock
//! runs as root and the folder belongs to another user, the launcher becomes that user before
//! bubblewrap starts. When the folder belongs to root (CI), the processes keep kernel uid 0 but
//! run as uid 1000 inside a user namespace with no capability at all.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use protocol::FolderAccess;

use crate::error::ProviderError;
use crate::sandbox::SandboxRequest;

/// The user name inside the sandbox.
pub const USER_NAME: &str = "paddock";
/// The uid (and gid) inside when the host side is root.
pub const UNPRIVILEGED_ID: u32 = 1000;

/// The sandbox's identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// The host user and group the launcher becomes before bubblewrap (`None`: stay as is).
    pub drop_to: Option<(u32, u32)>,
    /// The kernel uid/gid of the sandbox's processes on the host.
    pub host_uid: u32,
    pub host_gid: u32,
    /// The uid/gid the processes see inside (never 0).
    pub uid: u32,
    pub gid: u32,
}

/// Chooses the identity for `request`, given the host process's effective uid and gid.
pub fn choose(request: &SandboxRequest, euid: u32, egid: u32) -> Result<Identity, ProviderError> {
    let owner_folder = request
        .folders
        .iter()
        .find(|f| f.access == FolderAccess::ReadWrite)
        .or_else(|| request.folders.first())
        .ok_or_else(|| ProviderError::InvalidRequest("the session has no folders".into()))?;
    let meta = std::fs::metadata(&owner_folder.path)
        .map_err(|e| ProviderError::io(format!("reading the owner of {}", owner_folder.path), e))?;
    let (owner_uid, owner_gid) = (meta.uid(), meta.gid());
    Ok(if euid != 0 {
        Identity {
            drop_to: None,
            host_uid: euid,
            host_gid: egid,
            uid: euid,
            gid: egid,
        }
    } else if owner_uid != 0 {
        Identity {
            drop_to: Some((owner_uid, owner_gid)),
            host_uid: owner_uid,
            host_gid: owner_gid,
            uid: owner_uid,
            gid: owner_gid,
        }
    } else {
        Identity {
            drop_to: None,
            host_uid: 0,
            host_gid: egid,
            uid: UNPRIVILEGED_ID,
            gid: UNPRIVILEGED_ID,
        }
    })
}

impl Identity {
    /// `/etc/passwd` inside: root, the sandbox user (home = the private home), nobody.
    pub fn passwd(&self, home: &str) -> String {
        format!(
            "root:x:0:0:root:/root:/usr/sbin/nologin\n\
             {USER_NAME}:x:{}:{}:Paddock sandbox:{home}:/bin/bash\n\
             nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
            self.uid, self.gid
        )
    }

    /// `/etc/group` inside.
    pub fn group(&self) -> String {
        format!("root:x:0:\n{USER_NAME}:x:{}:\nnogroup:x:65534:\n", self.gid)
    }

    /// Gives `path` to the sandbox's host user when this process is root and they differ.
    pub fn hand_over(&self, path: &Path) -> Result<(), ProviderError> {
        if self.host_uid == 0 {
            return Ok(());
        }
        std::os::unix::fs::lchown(path, Some(self.host_uid), Some(self.host_gid))
            .or_else(|e| {
                // Not root: the files are ours already.
                if e.kind() == std::io::ErrorKind::PermissionDenied {
                    Ok(())
                } else {
                    Err(e)
                }
            })
            .map_err(|e| {
                ProviderError::io(
                    format!("handing {} to the sandbox's user", path.display()),
                    e,
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use protocol::{FolderGrant, NetworkProfileName};

    use super::*;

    fn request(path: &Path) -> SandboxRequest {
        SandboxRequest {
            session_id: "s".into(),
            folders: vec![FolderGrant {
                path: path.display().to_string(),
                access: FolderAccess::ReadWrite,
            }],
            cwd: path.display().to_string(),
            network_profile: NetworkProfileName::Strict,
            extra_hosts: Vec::new(),
            credentials: Vec::new(),
        }
    }

    #[test]
    fn a_user_stays_that_user() {
        let dir = tempfile::tempdir().unwrap();
        let id = choose(&request(dir.path()), 1234, 1234).unwrap();
        assert_eq!((id.drop_to, id.host_uid, id.uid), (None, 1234, 1234));
    }

    #[test]
    fn root_becomes_the_folders_owner_or_an_unprivileged_uid() {
        let dir = tempfile::tempdir().unwrap();
        let owner = std::fs::metadata(dir.path()).unwrap();
        let id = choose(&request(dir.path()), 0, 0).unwrap();
        if owner.uid() == 0 {
            assert_eq!(
                (id.drop_to, id.host_uid, id.uid),
                (None, 0, UNPRIVILEGED_ID)
            );
        } else {
            assert_eq!(id.drop_to, Some((owner.uid(), owner.gid())));
            assert_eq!(id.uid, owner.uid());
        }
        assert_ne!(id.uid, 0, "never root inside");
    }

    #[test]
    fn passwd_names_the_private_home() {
        let id = Identity {
            drop_to: None,
            host_uid: 0,
            host_gid: 0,
            uid: 1000,
            gid: 1000,
        };
        assert!(
            id.passwd("/home/paddock")
                .contains("paddock:x:1000:1000:Paddock sandbox:/home/paddock:/bin/bash")
        );
        assert!(id.group().contains("paddock:x:1000:"));
    }
}
