//! A connector tool's risk. Every connector call asks (except under `bypass`); the risk
//! decides the rest: a `read` tool's calls may run side by side, a `destructive` tool's calls
//! are approved `once` each (no `session` or `always` approval covers them).
//!
//! The server's annotations are its own claims, so they only ever make a tool stricter than
//! the default (`write`); a `readOnlyHint` is shown, not trusted. Only the user's machine
//! config (`risk = { tool = "read" }`) lowers a risk; a project's files never do.

use serde::{Deserialize, Serialize};

/// How much a tool can do, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[cfg_attr(
    feature = "wire-schemas",
    ts(rename = "ConnectorRisk"),
    schema(as = ConnectorRisk)
)]
pub enum Risk {
    /// Reads only.
    Read,
    /// Changes something (the default of every connector tool).
    Write,
    /// May destroy something: each call is approved once.
    Destructive,
}

impl Risk {
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Read => "read",
            Risk::Write => "write",
            Risk::Destructive => "destructive",
        }
    }

    /// The risk a tool gets when neither its server nor the user says more.
    pub const DEFAULT: Risk = Risk::Write;
}

/// The hints of an MCP tool's annotations that bear on risk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hints {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
}

impl Hints {
    /// What the server claims, read as MCP defines the hints: `readOnlyHint` true means
    /// `read`; otherwise `destructiveHint` (default true) decides between `destructive` and
    /// `write`.
    pub fn claimed(self) -> Risk {
        if self.read_only == Some(true) {
            Risk::Read
        } else if self.destructive == Some(false) {
            Risk::Write
        } else {
            Risk::Destructive
        }
    }
}

/// The risk in force: the user's machine setting when there is one (it may lower or raise),
/// else the stricter of the default and what the server claims.
pub fn effective(hints: Hints, user: Option<Risk>) -> Risk {
    match user {
        Some(risk) => risk,
        None => Risk::DEFAULT.max(hints.claimed()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_only_make_a_tool_stricter() {
        let read_only = Hints {
            read_only: Some(true),
            destructive: None,
        };
        assert_eq!(read_only.claimed(), Risk::Read);
        assert_eq!(
            effective(read_only, None),
            Risk::Write,
            "a claim never lowers"
        );
        let destructive = Hints {
            read_only: Some(false),
            destructive: Some(true),
        };
        assert_eq!(effective(destructive, None), Risk::Destructive);
        // MCP's defaults: a tool that says nothing may be destructive.
        assert_eq!(effective(Hints::default(), None), Risk::Destructive);
        let additive = Hints {
            read_only: Some(false),
            destructive: Some(false),
        };
        assert_eq!(effective(additive, None), Risk::Write);
    }

    #[test]
    fn the_user_setting_decides_either_way() {
        let destructive = Hints {
            read_only: None,
            destructive: Some(true),
        };
        assert_eq!(effective(destructive, Some(Risk::Read)), Risk::Read);
        let read_only = Hints {
            read_only: Some(true),
            destructive: None,
        };
        assert_eq!(effective(read_only, Some(Risk::Read)), Risk::Read);
        assert_eq!(
            effective(read_only, Some(Risk::Destructive)),
            Risk::Destructive
        );
    }
}
