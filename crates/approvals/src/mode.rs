//! The approval modes a session can run in.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::ApprovalError;

/// How much a session lets through without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Every call that writes, deletes or runs a command asks; reads proceed.
    Ask,
    /// Reads and file edits inside read-write grants proceed; commands ask.
    AutoEdit,
    /// Everything proceeds when a wall (`openshell` or `local`) confines the call; without one
    /// the session behaves as `ask`.
    AutoInSandbox,
    /// Everything proceeds except what a deny rule refuses; safety checks do not ask.
    /// An explicit opt-in, shown loudly everywhere (see [`ApprovalMode::warning`]).
    Bypass,
}

impl ApprovalMode {
    pub const ALL: [ApprovalMode; 4] = [
        ApprovalMode::Ask,
        ApprovalMode::AutoEdit,
        ApprovalMode::AutoInSandbox,
        ApprovalMode::Bypass,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Ask => "ask",
            ApprovalMode::AutoEdit => "auto-edit",
            ApprovalMode::AutoInSandbox => "auto-in-sandbox",
            ApprovalMode::Bypass => "bypass",
        }
    }

    /// True when every surface must show [`ApprovalMode::warning`] while this mode is on.
    pub fn is_loud(self) -> bool {
        self == ApprovalMode::Bypass
    }

    /// The warning to show for a loud mode.
    pub fn warning(self) -> Option<&'static str> {
        self.is_loud().then_some(
            "APPROVALS BYPASSED: every tool call runs without asking, including edits to git \
             hooks, CI files and Paddock's own config, and running downloaded files. Only deny \
             rules still refuse.",
        )
    }
}

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ApprovalMode {
    type Err = ApprovalError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ApprovalMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| ApprovalError::UnknownMode {
                value: s.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_and_only_bypass_is_loud() {
        for mode in ApprovalMode::ALL {
            assert_eq!(mode.as_str().parse::<ApprovalMode>().unwrap(), mode);
            let json = serde_json::to_string(&mode).unwrap();
            assert_eq!(json, format!("\"{}\"", mode.as_str()));
            assert_eq!(mode.is_loud(), mode == ApprovalMode::Bypass);
            assert_eq!(mode.warning().is_some(), mode.is_loud());
        }
        let err = "yolo".parse::<ApprovalMode>().unwrap_err().to_string();
        assert!(
            err.contains("`yolo`") && err.contains("auto-in-sandbox"),
            "{err}"
        );
    }
}
