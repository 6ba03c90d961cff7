//! Granted folders pinned at every wall start (a new session, a resume, a grant change), on
//! both walls: each grant is opened from `/` following no link (`paddock_wall::pinned`), and a
//! grant that is, or lies below, a symbolic link is refused with an error naming it. The local
//! wall mounts by the open handle and checks the identity again from inside; OpenShell (whose
//! gateway mounts by path) compares the identity seen through the runner with the pinned one
//! before the first tool call.

use paddock_wall::pinned::{self, FolderIdentity, PinnedFolder};
use protocol::FolderGrant;

use crate::error::ProviderError;
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
