//! Applies the wall's Landlock rules to the calling thread (and everything it later starts).
//!
//! ABI 3 is a hard requirement (the kernel must know every right up to `truncate`); rights of
//! newer ABIs (`ioctl` on devices from ABI 5, abstract-socket and signal scoping from ABI 6) are
//! added when the kernel has them. Only ABIs up to [`TESTED_ABI`] are asked for, so a newer kernel
//! never changes what the wall does without a test run on it.

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};

use std::collections::BTreeMap;

use crate::config::{PathAccess, PathRule};
use crate::error::WallError;
use crate::pinned::PinnedFolder;

/// The newest Landlock ABI whose rights the wall uses.
pub const TESTED_ABI: ABI = ABI::V7;

/// How far the kernel enforced the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    /// Every right the wall asked for is enforced.
    Full,
    /// The ABI-3 floor is enforced; some newer rights are not known to this kernel.
    Partial,
}

/// The rights `access` stands for, limited to what a file (as opposed to a folder) can carry.
pub fn rights(access: PathAccess, is_dir: bool) -> BitFlags<AccessFs> {
    let all = AccessFs::from_all(TESTED_ABI);
    let wanted = match access {
        PathAccess::Read => AccessFs::ReadFile | AccessFs::ReadDir,
        PathAccess::ReadExec => AccessFs::ReadFile | AccessFs::ReadDir | AccessFs::Execute,
        PathAccess::ReadWrite => all,
        PathAccess::Device => {
            AccessFs::ReadFile
                | AccessFs::ReadDir
                | AccessFs::WriteFile
                | AccessFs::Truncate
                | AccessFs::IoctlDev
        }
    };
    if is_dir {
        wanted
    } else {
        wanted & AccessFs::from_file(TESTED_ABI)
    }
}

/// Restricts the calling thread to `rules`. Fails (and the wall refuses to start) when the
/// kernel lacks ABI 3, a rule's path cannot be opened, or nothing was enforced. A rule whose
/// path is in `pinned` (granted folders, opened following no link and checked) is made from
/// that handle instead of opening the path again.
pub fn apply(
    rules: &[PathRule],
    pinned: &BTreeMap<String, PinnedFolder>,
) -> Result<Enforcement, WallError> {
    let landlock = |e: landlock::RulesetError| WallError::Landlock(e.to_string());
    let ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V3))
        .map_err(landlock)?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(TESTED_ABI))
        .map_err(landlock)?
        .scope(Scope::from_all(TESTED_ABI))
        .map_err(landlock)?;
    let mut created = ruleset.create().map_err(landlock)?;
    for rule in rules {
        if let Some(folder) = pinned.get(&rule.path) {
            created = created
                .add_rule(PathBeneath::new(&folder.fd, rights(rule.access, true)))
                .map_err(landlock)?;
            continue;
        }
        let fd = PathFd::new(&rule.path).map_err(|e| {
            WallError::Landlock(format!("cannot open {} for its rule: {e}", rule.path))
        })?;
        let is_dir = std::fs::metadata(&rule.path)
            .map(|m| m.is_dir())
            .map_err(|e| WallError::os(format!("stat {}", rule.path), e))?;
        created = created
            .add_rule(PathBeneath::new(fd, rights(rule.access, is_dir)))
            .map_err(landlock)?;
    }
    let status = created.restrict_self().map_err(landlock)?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok(Enforcement::Full),
        RulesetStatus::PartiallyEnforced => Ok(Enforcement::Partial),
        RulesetStatus::NotEnforced => Err(WallError::Landlock(
            "the kernel enforced none of the rules".into(),
        )),
    }
}

/// One line per rule, for the wall's configuration hash.
pub fn summary(rules: &[PathRule]) -> String {
    let mut lines = vec![format!(
        "landlock min_abi=3 tested_abi={} scopes=abstract_unix_socket,signal",
        TESTED_ABI as u32
    )];
    lines.extend(
        rules
            .iter()
            .map(|r| format!("{} {}", r.access.as_str(), r.path)),
    );
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_never_carry_folder_rights() {
        let file = rights(PathAccess::ReadWrite, false);
        assert!(!file.contains(AccessFs::MakeReg));
        assert!(!file.contains(AccessFs::ReadDir));
        assert!(file.contains(AccessFs::WriteFile));
        let dir = rights(PathAccess::ReadWrite, true);
        assert!(dir.contains(AccessFs::MakeReg) && dir.contains(AccessFs::Refer));
    }

    #[test]
    fn read_only_access_has_no_write_right() {
        for access in [PathAccess::Read, PathAccess::ReadExec] {
            let r = rights(access, true);
            assert!(
                !r.intersects(AccessFs::from_write(TESTED_ABI)),
                "{access:?}"
            );
        }
        assert!(!rights(PathAccess::Device, true).contains(AccessFs::MakeChar));
    }
}
