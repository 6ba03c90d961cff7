//! Paths the host runs later (the protected list): a write that names one is a safety check.
//! The list is data the caller passes in (`sandbox-policy` owns it): globs naming protected
//! paths anywhere, and the exact paths a wall found (a `core.hooksPath` folder, an included
//! configuration), each with the reason it is protected.

use crate::paths::{glob_match, is_within, normalize};

/// Where a path written as `~/…` or `$HOME/…` is checked (the globs match at any depth).
pub(crate) const HOME_MARK: &str = "/~";

/// The protected paths a call is checked against.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProtectedPaths {
    /// Lower-case globs (`**/.bashrc`, `**/*.git/hooks/**`) with their reasons.
    globs: Vec<(String, String)>,
    /// Normalised absolute paths (everything under them counts) with their reasons.
    exact: Vec<(String, String)>,
}

impl ProtectedPaths {
    /// `globs`: the approvals' glob language (`**` any folders, `*` within a name), compared
    /// case-insensitively; `exact`: absolute paths. Each with why it is protected.
    pub fn new(globs: Vec<(String, String)>, exact: Vec<(String, String)>) -> Self {
        Self {
            globs: globs
                .into_iter()
                .map(|(glob, why)| (glob.to_ascii_lowercase(), why))
                .collect(),
            exact: exact
                .into_iter()
                .map(|(path, why)| (normalize(&path), why))
                .collect(),
        }
    }

    /// These paths plus more exact ones (a live wall's findings).
    pub fn with_exact(&self, exact: Vec<(String, String)>) -> Self {
        let mut more = self.clone();
        more.exact
            .extend(exact.into_iter().map(|(path, why)| (normalize(&path), why)));
        more
    }

    /// Why the normalised absolute `path` is protected, if it is.
    pub fn why(&self, path: &str) -> Option<&str> {
        if let Some((_, why)) = self.exact.iter().find(|(p, _)| is_within(path, p)) {
            return Some(why);
        }
        let lower = path.to_ascii_lowercase();
        self.globs
            .iter()
            .find(|(glob, _)| glob_match(glob, &lower))
            .map(|(_, why)| why.as_str())
    }

    /// Whether no path is protected (nothing was passed in).
    pub fn is_empty(&self) -> bool {
        self.globs.is_empty() && self.exact.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_and_exact_paths_say_why() {
        let paths = ProtectedPaths::new(
            vec![
                ("**/.bashrc".into(), "bash runs it".into()),
                ("**/*.git/hooks/**".into(), "git runs them".into()),
            ],
            vec![("/p/githooks".into(), "core.hooksPath".into())],
        );
        assert_eq!(paths.why("/p/.bashrc"), Some("bash runs it"));
        assert_eq!(paths.why("/p/sub/.BASHRC"), Some("bash runs it"));
        assert_eq!(paths.why("/p/.git/hooks/pre-commit"), Some("git runs them"));
        assert_eq!(paths.why("/p/bare.git/hooks"), Some("git runs them"));
        assert_eq!(paths.why("/p/githooks/pre-commit"), Some("core.hooksPath"));
        assert_eq!(
            paths.why(&format!("{HOME_MARK}/.bashrc")),
            Some("bash runs it")
        );
        assert_eq!(paths.why("/p/src/main.rs"), None);
        assert_eq!(paths.why("/p/githooks2/x"), None);
        assert!(ProtectedPaths::default().is_empty());
    }
}
