//! The approval modes a session can run in. The type is `protocol::ApprovalMode` (one type for
//! the wire, the config and the policy); this module adds what the policy needs on top: every
//! mode, the people-facing spelling, parsing with a clear error, and the loud-mode warning.

use protocol::ApprovalMode;

use crate::error::ApprovalError;

/// Every mode, strictest first.
pub const ALL: [ApprovalMode; 4] = [
    ApprovalMode::Ask,
    ApprovalMode::AutoEdit,
    ApprovalMode::AutoInSandbox,
    ApprovalMode::Bypass,
];

/// The spelling people read and type (`auto-edit`); the wire spelling is
/// [`ApprovalMode::as_str`] (`auto_edit`).
pub fn label(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::Ask => "ask",
        ApprovalMode::AutoEdit => "auto-edit",
        ApprovalMode::AutoInSandbox => "auto-in-sandbox",
        ApprovalMode::Bypass => "bypass",
    }
}

/// Parses a mode as configs and command lines write it: kebab-case (`auto-edit`) or
/// snake_case (`auto_edit`). The error names the value and the accepted ones.
pub fn parse(text: &str) -> Result<ApprovalMode, ApprovalError> {
    ApprovalMode::parse(text).ok_or_else(|| ApprovalError::UnknownMode {
        value: text.to_string(),
    })
}

/// True when every surface must show [`warning`] while this mode is on.
pub fn is_loud(mode: ApprovalMode) -> bool {
    mode == ApprovalMode::Bypass
}

/// The warning to show for a loud mode.
pub fn warning(mode: ApprovalMode) -> Option<&'static str> {
    is_loud(mode).then_some(
        "APPROVALS BYPASSED: every tool call runs without asking, including edits to git \
         hooks, CI files and Paddock's own config, and running downloaded files. Only deny \
         rules still refuse.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_parse_and_only_bypass_is_loud() {
        for mode in ALL {
            assert_eq!(parse(label(mode)).unwrap(), mode);
            assert_eq!(parse(mode.as_str()).unwrap(), mode);
            let json = serde_json::to_string(&mode).unwrap();
            assert_eq!(json, format!("\"{}\"", mode.as_str()));
            assert_eq!(is_loud(mode), mode == ApprovalMode::Bypass);
            assert_eq!(warning(mode).is_some(), is_loud(mode));
        }
        assert_eq!(
            parse("auto-in-sandbox").unwrap(),
            ApprovalMode::AutoInSandbox
        );
        assert_eq!(
            parse("auto_in_sandbox").unwrap(),
            ApprovalMode::AutoInSandbox
        );
        let err = parse("yolo").unwrap_err().to_string();
        assert!(
            err.contains("`yolo`") && err.contains("auto-in-sandbox"),
            "{err}"
        );
    }
}
