//! Mode × enforcement level × kind of call, as an explicit table.

use crate::common;

use approvals::{ApprovalMode, DecidedBy, Verdict, mode};
use common::{TestCall, letter, policy};
use protocol::EnforcementLevel;
use serde_json::json;

fn calls() -> Vec<(&'static str, TestCall)> {
    vec![
        (
            "read inside",
            TestCall::new("read_file", json!({"path": "src/main.rs"})),
        ),
        (
            "read outside",
            TestCall::new("read_file", json!({"path": "/etc/hosts"})),
        ),
        (
            "edit inside rw",
            TestCall::new("write_file", json!({"path": "src/a.rs", "content": "x"})),
        ),
        (
            "edit outside",
            TestCall::new(
                "edit_file",
                json!({"path": "/etc/hosts", "old_string": "a", "new_string": "b"}),
            ),
        ),
        (
            "edit in ro grant",
            TestCall::new("write_file", json!({"path": "vendor/x", "content": "x"})),
        ),
        (
            "delete file",
            TestCall::new("delete", json!({"path": "build/x.o"})),
        ),
        (
            "delete folder",
            TestCall::new("delete", json!({"path": "build", "recursive": true})),
        ),
        ("command no rule", TestCall::bash("cargo build")),
        ("command by rule", TestCall::bash("git status")),
        (
            "connector tool",
            TestCall::new("web_search", json!({"query": "x"})),
        ),
        (
            "safety edit",
            TestCall::new(
                "write_file",
                json!({"path": ".git/hooks/pre-commit", "content": "x"}),
            ),
        ),
        (
            "safety command",
            TestCall::bash("echo x > .github/workflows/ci.yml"),
        ),
        ("denied command", TestCall::bash("rm -rf /")),
        ("unparseable", TestCall::bash("case x in y) z;; esac")),
    ]
}

/// Columns: ask, auto-edit, auto-in-sandbox (walled), auto-in-sandbox (unwalled), bypass.
const EXPECTED: &[(&str, [char; 5])] = &[
    ("read inside", ['A', 'A', 'A', 'A', 'A']),
    ("read outside", ['A', 'A', 'A', 'A', 'A']),
    ("edit inside rw", ['?', 'A', 'A', '?', 'A']),
    ("edit outside", ['?', '?', 'A', '?', 'A']),
    ("edit in ro grant", ['?', '?', 'A', '?', 'A']),
    ("delete file", ['?', 'A', 'A', '?', 'A']),
    ("delete folder", ['?', '?', 'A', '?', 'A']),
    ("command no rule", ['?', '?', 'A', '?', 'A']),
    ("command by rule", ['A', 'A', 'A', 'A', 'A']),
    ("connector tool", ['?', '?', 'A', '?', 'A']),
    ("safety edit", ['?', '?', '?', '?', 'A']),
    ("safety command", ['?', '?', '?', '?', 'A']),
    ("denied command", ['D', 'D', 'D', 'D', 'D']),
    ("unparseable", ['?', '?', '?', '?', 'A']),
];

#[test]
fn the_mode_matrix() {
    let columns: [(ApprovalMode, &[EnforcementLevel]); 5] = [
        (
            ApprovalMode::Ask,
            &[
                EnforcementLevel::Openshell,
                EnforcementLevel::Local,
                EnforcementLevel::None,
            ],
        ),
        (
            ApprovalMode::AutoEdit,
            &[
                EnforcementLevel::Openshell,
                EnforcementLevel::Local,
                EnforcementLevel::None,
            ],
        ),
        (
            ApprovalMode::AutoInSandbox,
            &[EnforcementLevel::Openshell, EnforcementLevel::Local],
        ),
        (
            ApprovalMode::AutoInSandbox,
            &[EnforcementLevel::None, EnforcementLevel::Host],
        ),
        (
            ApprovalMode::Bypass,
            &[
                EnforcementLevel::Openshell,
                EnforcementLevel::None,
                EnforcementLevel::Host,
            ],
        ),
    ];
    let mut failures = Vec::new();
    let calls = calls();
    assert_eq!(calls.len(), EXPECTED.len());
    for ((name, call), (expected_name, row)) in calls.into_iter().zip(EXPECTED) {
        assert_eq!(name, *expected_name);
        for (column, (mode, levels)) in columns.iter().enumerate() {
            for level in *levels {
                let verdict = call.clone_on(*level).evaluate(&policy(*mode));
                if letter(&verdict) != row[column] {
                    failures.push(format!(
                        "{name} / {} / {}: expected {}, got {verdict:?}",
                        mode::label(*mode),
                        level.as_str(),
                        row[column]
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

trait CloneOn {
    fn clone_on(&self, level: EnforcementLevel) -> TestCall;
}

impl CloneOn for TestCall {
    fn clone_on(&self, level: EnforcementLevel) -> TestCall {
        TestCall::new(&self.tool, self.args.clone()).on(level)
    }
}

#[test]
fn who_decided_is_recorded() {
    let by = |mode, call: TestCall| match call.evaluate(&policy(mode)) {
        Verdict::Allow { decided_by, .. } | Verdict::Deny { decided_by, .. } => Some(decided_by),
        Verdict::Ask { .. } => None,
    };
    assert_eq!(
        by(ApprovalMode::Bypass, TestCall::bash("cargo build")),
        Some(DecidedBy::Bypass)
    );
    assert_eq!(
        by(
            ApprovalMode::AutoInSandbox,
            TestCall::bash("cargo build").on(EnforcementLevel::Openshell)
        ),
        Some(DecidedBy::Mode {
            mode: ApprovalMode::AutoInSandbox
        })
    );
    assert_eq!(
        by(ApprovalMode::Ask, TestCall::bash("git status | grep x")),
        Some(DecidedBy::Rule {
            name: "git-read-only, read-only-inspection".into()
        })
    );
    assert_eq!(
        by(ApprovalMode::Bypass, TestCall::bash("rm -rf ~")),
        Some(DecidedBy::Rule {
            name: "delete-root-or-home".into()
        })
    );
}

#[test]
fn auto_in_sandbox_without_a_wall_says_so() {
    let verdict = TestCall::bash("cargo build")
        .on(EnforcementLevel::None)
        .evaluate(&policy(ApprovalMode::AutoInSandbox));
    assert!(
        verdict
            .reason()
            .contains("without a wall (enforcement `none`)"),
        "{}",
        verdict.reason()
    );
}

#[test]
fn ask_rules_ask_even_when_the_mode_would_allow() {
    let verdict = TestCall::bash("git push --force origin main")
        .on(EnforcementLevel::Openshell)
        .evaluate(&policy(ApprovalMode::AutoInSandbox));
    assert!(
        verdict.is_ask() && verdict.reason().contains("git-rewrites-history"),
        "{verdict:?}"
    );
}

#[test]
fn malformed_calls_are_denied_with_what_was_wrong() {
    let p = policy(ApprovalMode::Bypass);
    let cases = [
        (
            TestCall::new("run_bash", json!({})),
            "run_bash: `command` is required",
        ),
        (
            TestCall::new("run_bash", json!({"command": 5})),
            "run_bash: `command` must be a string",
        ),
        (
            TestCall::new("write_file", json!({"content": "x"})),
            "write_file: `path` is required",
        ),
        (
            TestCall::new("read_file", json!(["x"])),
            "read_file: arguments must be a JSON object",
        ),
        (
            TestCall::new("run_bash", json!({"command": "ls", "env": "x"})),
            "`env` must be an object",
        ),
    ];
    for (call, message) in cases {
        let verdict = call.evaluate(&p);
        assert!(
            verdict.is_deny() && verdict.reason().contains(message),
            "{verdict:?}"
        );
    }
}

#[test]
fn the_bypass_warning_is_loud() {
    assert!(mode::is_loud(ApprovalMode::Bypass));
    assert!(mode::warning(ApprovalMode::Bypass).is_some_and(|w| w.contains("BYPASSED")));
    assert!(!mode::is_loud(ApprovalMode::AutoInSandbox));
}
