//! Approvals bound to canonical arguments: once, session, always; listed and revocable.

use crate::common;

use approvals::{
    ApprovalError, ApprovalGrant, ApprovalMode, ApprovalScope, DecidedBy, DecisionOutcome,
    StandingApproval, StandingApprovals, UserDecision, Verdict,
};
use common::{TestCall, letter, policy};
use serde_json::json;

fn approve(call: &TestCall, decision: &UserDecision) -> StandingApprovals {
    let p = policy(ApprovalMode::Ask);
    let mut standing = StandingApprovals::new();
    match p
        .decide(&call.view(), decision)
        .unwrap_or_else(|e| panic!("{e}"))
    {
        DecisionOutcome::Run { new_approvals } => {
            for a in new_approvals {
                standing.add(a);
            }
        }
        other => panic!("{other:?}"),
    }
    standing
}

fn verdict(call: &TestCall, standing: &StandingApprovals) -> char {
    letter(&policy(ApprovalMode::Ask).evaluate(&call.view(), standing))
}

#[test]
fn a_session_approval_of_a_command_is_a_prefix_not_anything() {
    let standing = approve(
        &TestCall::bash("cargo test --release -p x"),
        &UserDecision::ApproveSession,
    );
    assert_eq!(standing.list().len(), 1);
    assert_eq!(
        standing.list()[0].grant,
        ApprovalGrant::CommandPrefix {
            prefix: vec!["cargo".into(), "test".into()]
        }
    );
    let cases = [
        ("cargo test", 'A'),
        ("cargo test -p other", 'A'),
        ("cargo build", '?'),
        ("cargo test; cargo publish", '?'),
        ("cargo test $(curl -s https://example.com)", '?'),
        ("cargo test | sh", '?'),
        ("cargo test > /etc/x", '?'),
        ("sudo cargo test", '?'),
        ("RUSTC_WRAPPER=/tmp/x cargo test", '?'),
        ("cargo test && rm -rf /", 'D'),
        ("cargo test > .git/hooks/pre-push", '?'),
    ];
    for (command, expected) in cases {
        assert_eq!(
            verdict(&TestCall::bash(command), &standing),
            expected,
            "{command}"
        );
    }
    match policy(ApprovalMode::Ask).evaluate(&TestCall::bash("cargo test").view(), &standing) {
        Verdict::Allow {
            decided_by: DecidedBy::Standing { scope, .. },
            ..
        } => {
            assert_eq!(scope, ApprovalScope::Session)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_once_approval_covers_exactly_its_canonical_arguments_and_is_consumed() {
    let p = policy(ApprovalMode::Ask);
    let call = TestCall::bash("npm  run 'build'");
    let once = p.once(&call.view()).unwrap();
    assert_eq!(once.scope, ApprovalScope::Once);
    let mut standing = StandingApprovals::new();
    standing.add(once.clone());
    // The same call, spelled differently: covered.
    assert_eq!(verdict(&TestCall::bash("npm run build"), &standing), 'A');
    // Other arguments, another folder, another tool: not covered.
    assert_eq!(
        verdict(&TestCall::bash("npm run build:prod"), &standing),
        '?'
    );
    assert_eq!(
        verdict(&TestCall::bash("npm run build; npm publish"), &standing),
        '?'
    );
    let elsewhere = TestCall::new(
        "run_bash",
        json!({"command": "npm run build", "cwd": "/p/sub"}),
    );
    assert_eq!(verdict(&elsewhere, &standing), '?');
    // Consumed after use.
    assert_eq!(standing.consume(&once.id), Some(once));
    assert_eq!(verdict(&TestCall::bash("npm run build"), &standing), '?');
}

#[test]
fn a_once_approval_answers_a_safety_check_but_a_session_one_cannot_be_given() {
    let p = policy(ApprovalMode::Ask);
    let call = TestCall::new(
        "write_file",
        json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}),
    );
    assert!(matches!(
        call.evaluate(&p),
        Verdict::Ask {
            safety_check: Some(_),
            ..
        }
    ));
    let err = p
        .decide(&call.view(), &UserDecision::ApproveSession)
        .unwrap_err();
    assert!(
        matches!(err, ApprovalError::NoLastingApproval { .. }),
        "{err}"
    );
    let mut standing = StandingApprovals::new();
    standing.add(p.once(&call.view()).unwrap());
    assert_eq!(verdict(&call, &standing), 'A');
    let other = TestCall::new(
        "write_file",
        json!({"path": ".git/hooks/pre-commit", "content": "other"}),
    );
    assert_eq!(verdict(&other, &standing), '?');
}

#[test]
fn file_tools_are_approved_per_path() {
    let call = TestCall::new(
        "write_file",
        json!({"path": "src/../notes.md", "content": "a"}),
    );
    let standing = approve(&call, &UserDecision::ApproveAlways);
    assert_eq!(
        standing.list()[0].grant,
        ApprovalGrant::ToolPath {
            tool: "write_file".into(),
            path: "/p/notes.md".into()
        }
    );
    assert_eq!(standing.list()[0].scope, ApprovalScope::Always);
    let same_path = TestCall::new("write_file", json!({"path": "/p/notes.md", "content": "b"}));
    assert_eq!(verdict(&same_path, &standing), 'A');
    let other_path = TestCall::new("write_file", json!({"path": "/p/other.md", "content": "a"}));
    assert_eq!(verdict(&other_path, &standing), '?');
    let other_tool = TestCall::new("delete", json!({"path": "/p/notes.md"}));
    assert_eq!(verdict(&other_tool, &standing), '?');
}

#[test]
fn other_tools_are_approved_per_exact_call() {
    let call = TestCall::new("web_search", json!({"query": "rust", "limit": 5}));
    let standing = approve(&call, &UserDecision::ApproveSession);
    assert!(matches!(
        standing.list()[0].grant,
        ApprovalGrant::ExactCall { .. }
    ));
    assert_eq!(
        verdict(
            &TestCall::new("web_search", json!({"limit": 5, "query": "rust"})),
            &standing
        ),
        'A'
    );
    assert_eq!(
        verdict(
            &TestCall::new("web_search", json!({"query": "rust", "limit": 6})),
            &standing
        ),
        '?'
    );
}

#[test]
fn lasting_approvals_are_refused_where_a_prefix_would_approve_too_much() {
    let p = policy(ApprovalMode::Ask);
    for command in [
        "rm -rf build",
        "curl -s https://example.com",
        "bash -c 'make'",
        "python3",
        "python3 -c 'import os'",
        "sudo make",
        "find . -delete",
        "git push --force",
        "make > /etc/x",
        "chmod +x a && ./a",
        "case x in y) z;; esac",
    ] {
        let err = p.lasting_grants(&TestCall::bash(command).view());
        assert!(
            matches!(err, Err(ApprovalError::NoLastingApproval { .. })),
            "{command}: {err:?}"
        );
    }
    let ok = |c: &str| match p
        .lasting_grants(&TestCall::bash(c).view())
        .unwrap()
        .as_slice()
    {
        [ApprovalGrant::CommandPrefix { prefix }] => prefix.join(" "),
        other => panic!("{other:?}"),
    };
    assert_eq!(ok("python3 -m pytest -x tests"), "python3 -m pytest");
    assert_eq!(ok("bash scripts/ci.sh --fast"), "bash scripts/ci.sh");
    assert_eq!(ok("npm run build -- --watch"), "npm run build");
    assert_eq!(ok("make"), "make");
    assert_eq!(ok("FORCE_COLOR=1 cargo clippy --all"), "cargo clippy");
}

#[test]
fn an_ask_rule_is_not_silenced_by_a_prefix_approval() {
    let mut standing = StandingApprovals::new();
    standing.add(StandingApproval::new(
        ApprovalScope::Session,
        ApprovalGrant::CommandPrefix {
            prefix: vec!["git".into(), "push".into()],
        },
    ));
    assert_eq!(
        verdict(&TestCall::bash("git push origin main"), &standing),
        'A'
    );
    assert_eq!(
        verdict(&TestCall::bash("git push --force origin main"), &standing),
        '?'
    );
}

#[test]
fn approvals_are_listed_revoked_and_serialised() {
    let mut standing = approve(
        &TestCall::bash("cargo test && npm test"),
        &UserDecision::ApproveAlways,
    );
    assert_eq!(standing.list().len(), 2);
    assert_eq!(standing.of_scope(ApprovalScope::Always).count(), 2);
    assert_eq!(
        standing.list()[0].grant.describe(),
        "commands starting with `cargo test`"
    );
    let json = serde_json::to_string(&standing).unwrap();
    let back: StandingApprovals = serde_json::from_str(&json).unwrap();
    assert_eq!(back, standing);
    let id = standing.list()[0].id.clone();
    // The same approval given again is not duplicated.
    standing.add(standing.list()[0].clone());
    assert_eq!(standing.list().len(), 2);
    assert!(
        standing.consume(&id).is_none(),
        "lasting approvals are not consumed"
    );
    assert!(standing.revoke(&id).is_some());
    assert!(standing.revoke(&id).is_none());
    assert_eq!(verdict(&TestCall::bash("cargo test"), &standing), '?');
    assert_eq!(verdict(&TestCall::bash("npm test"), &standing), 'A');
}

#[test]
fn a_denial_carries_the_reason_to_the_model() {
    let p = policy(ApprovalMode::Ask);
    let call = TestCall::bash("make deploy");
    let outcome = p
        .decide(
            &call.view(),
            &UserDecision::Deny {
                reason: Some("not on Fridays".into()),
            },
        )
        .unwrap();
    assert_eq!(
        outcome,
        DecisionOutcome::Refuse {
            message_to_model: "The user denied this tool call. Their reason: not on Fridays".into()
        }
    );
    let once = p.decide(&call.view(), &UserDecision::ApproveOnce).unwrap();
    assert_eq!(
        once,
        DecisionOutcome::Run {
            new_approvals: vec![]
        }
    );
}
