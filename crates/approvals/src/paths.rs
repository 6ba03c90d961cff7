//! Paths without touching the disk: lexical normalisation, resolution against a working
//! folder, folder grants, and the small glob language of rules.
//!
//! Everything here is lexical. A symlink inside a grant that points outside it is invisible
//! to these functions; the sandbox's wall is what stops the write then.

use serde::{Deserialize, Serialize};

use crate::error::ApprovalError;

/// Collapses `//`, `.` and `..` in an absolute path (`..` never climbs above `/`).
/// A relative path is normalised as if it were under `/`.
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("/{}", parts.join("/"))
}

/// `path` resolved against the absolute folder `cwd`, normalised.
pub fn resolve(cwd: &str, path: &str) -> String {
    if path.starts_with('/') {
        normalize(path)
    } else {
        normalize(&format!("{cwd}/{path}"))
    }
}

/// True when the normalised `path` is `dir` or lies under it.
pub fn is_within(path: &str, dir: &str) -> bool {
    dir == "/"
        || path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The last component of a path (`/usr/bin/git` → `git`).
pub fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// How a session may use a granted folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    ReadOnly,
    ReadWrite,
}

/// A folder a session was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// Absolute path of the folder.
    pub path: String,
    pub access: Access,
}

/// A session's folder grants. The most specific grant containing a path decides its access,
/// so a read-only folder inside a read-write one stays read-only.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Grants {
    grants: Vec<Grant>,
}

impl Grants {
    /// Checks that every path is absolute and stores it normalised.
    pub fn new(grants: Vec<Grant>) -> Result<Self, ApprovalError> {
        let mut checked = Vec::with_capacity(grants.len());
        for grant in grants {
            if !grant.path.starts_with('/') {
                return Err(ApprovalError::RelativeGrant { path: grant.path });
            }
            checked.push(Grant {
                path: normalize(&grant.path),
                access: grant.access,
            });
        }
        Ok(Grants { grants: checked })
    }

    pub fn grants(&self) -> &[Grant] {
        &self.grants
    }

    /// The access of the most specific grant containing the absolute `path`, if any.
    pub fn access(&self, path: &str) -> Option<Access> {
        let path = normalize(path);
        self.grants
            .iter()
            .filter(|g| is_within(&path, &g.path))
            .max_by_key(|g| g.path.len())
            .map(|g| g.access)
    }

    pub fn is_writable(&self, path: &str) -> bool {
        self.access(path) == Some(Access::ReadWrite)
    }
}

/// Matches a normalised absolute path against a rule glob: `**` is any number of folders,
/// `*` any text within one component, `?` one character. A pattern that does not start with
/// `/` matches at any depth (as if it began with `**/`).
pub fn glob_match(pattern: &str, path: &str) -> bool {
    let pattern = if pattern.starts_with('/') {
        pattern.to_string()
    } else {
        format!("/**/{pattern}")
    };
    let pattern: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    let path: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match_segments(&pattern, &path)
}

fn match_segments(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| match_segments(rest, &path[skip..])),
        Some((first, rest)) => match path.split_first() {
            Some((segment, path_rest)) => {
                match_component(first.as_bytes(), segment.as_bytes())
                    && match_segments(rest, path_rest)
            }
            None => false,
        },
    }
}

fn match_component(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|skip| match_component(rest, &text[skip..])),
        Some((b'?', rest)) => !text.is_empty() && match_component(rest, &text[1..]),
        Some((c, rest)) => text.first() == Some(c) && match_component(rest, &text[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_is_lexical_and_never_climbs_above_root() {
        assert_eq!(normalize("/a//b/./c/../d/"), "/a/b/d");
        assert_eq!(normalize("/../../etc/passwd"), "/etc/passwd");
        assert_eq!(resolve("/p/src", "../../x"), "/x");
        assert_eq!(resolve("/p", "/etc/x"), "/etc/x");
        assert_eq!(basename("/usr/bin/git"), "git");
        assert_eq!(basename("git"), "git");
    }

    #[test]
    fn within_respects_component_boundaries() {
        assert!(is_within("/p/a", "/p"));
        assert!(is_within("/p", "/p"));
        assert!(!is_within("/pp/a", "/p"));
        assert!(is_within("/anything", "/"));
    }

    #[test]
    fn most_specific_grant_wins() {
        let grants = Grants::new(vec![
            Grant {
                path: "/p".into(),
                access: Access::ReadWrite,
            },
            Grant {
                path: "/p/vendor/".into(),
                access: Access::ReadOnly,
            },
        ])
        .unwrap();
        assert!(grants.is_writable("/p/src/a.rs"));
        assert!(!grants.is_writable("/p/vendor/x"));
        assert!(!grants.is_writable("/other"));
        assert_eq!(grants.access("/p/vendor/../src"), Some(Access::ReadWrite));
        let err = Grants::new(vec![Grant {
            path: "p".into(),
            access: Access::ReadOnly,
        }]);
        assert!(err.unwrap_err().to_string().contains("`p`"));
    }

    #[test]
    fn globs() {
        assert!(glob_match("**/.env", "/p/.env"));
        assert!(glob_match(".env", "/p/sub/.env"));
        assert!(glob_match("*.pem", "/p/k/server.pem"));
        assert!(!glob_match("*.pem", "/p/k/server.pem.txt"));
        assert!(glob_match("/etc/**", "/etc/ssh/sshd_config"));
        assert!(!glob_match("/etc/*", "/etc/ssh/sshd_config"));
        assert!(glob_match("secrets/?.txt", "/p/secrets/a.txt"));
    }
}
