//! The policy knows every tool the runner serves, and agrees with the wire about which ones
//! only read.

use crate::common;

use approvals::ApprovalMode;
use common::{TestCall, policy};
use serde_json::json;
use tool_protocol::ToolName;

#[test]
fn read_only_tools_proceed_and_the_others_ask_in_ask_mode() {
    let p = policy(ApprovalMode::Ask);
    for name in ToolName::ALL {
        let args = match name {
            ToolName::RunBash => json!({"command": "cargo build"}),
            _ => {
                json!({"path": "src/x", "content": "", "pattern": "x", "old_string": "a", "new_string": "b"})
            }
        };
        let verdict = TestCall::new(name.as_str(), args).evaluate(&p);
        assert_eq!(
            verdict.is_allow(),
            name.is_read_only(),
            "{name}: {verdict:?}"
        );
        assert!(!verdict.is_deny(), "{name}: {verdict:?}");
    }
}
