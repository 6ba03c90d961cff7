//! Credential-share entries in the local wall: the copying is shared with the OpenShell
//! provider (`crate::credentials`); here the wall's own parts are filled in: the private home
//! at [`HOME_INSIDE`], the copies handed to the wall's [`Identity`], and ssh reaching hosts
//! through the wall's proxy with `paddock-wall connect`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sandbox_policy::CredentialEntry;

pub use crate::credentials::glob_matches;
use crate::credentials::{HandOver, SshWiring};
use crate::error::ProviderError;
use crate::local::identity::Identity;
use crate::local::layout::{HOME_INSIDE, WALL_INSIDE};

impl HandOver for Identity {
    fn hand_over(&self, path: &Path) -> Result<(), ProviderError> {
        Identity::hand_over(self, path)
    }
}

/// ssh in the local wall: through the wall's proxy, with the copied keys and no agent.
fn ssh_wiring() -> SshWiring {
    SshWiring {
        comment:
            "# Written by Paddock's local wall: ssh reaches hosts only through the wall's proxy,\n\
                  # with the copied keys and no agent.\n"
                .to_owned(),
        home_inside: HOME_INSIDE.to_owned(),
        proxy_command: format!("{WALL_INSIDE} connect %h %p"),
    }
}

/// The entry's environment inside the sandbox.
pub fn environment(entry: &CredentialEntry) -> BTreeMap<String, String> {
    entry.environment(HOME_INSIDE)
}

/// Copies `share` from `user_home` into `private_home`; returns the copied files (relative).
pub fn copy_share(
    share: &CredentialEntry,
    user_home: &Path,
    private_home: &Path,
    identity: &Identity,
) -> Result<Vec<PathBuf>, ProviderError> {
    crate::credentials::copy_share(share, user_home, private_home, identity, &ssh_wiring())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ssh_config_keeps_the_walls_words() {
        let wiring = ssh_wiring();
        assert_eq!(
            wiring.comment,
            "# Written by Paddock's local wall: ssh reaches hosts only through the wall's proxy,\n\
             # with the copied keys and no agent.\n"
        );
        assert_eq!(
            wiring.proxy_command,
            "/run/paddock/bin/paddock-wall connect %h %p"
        );
        assert_eq!(wiring.home_inside, "/home/paddock");
    }
}
