use serde_json::json;
use tool_protocol::{ToolName, ToolRequest};

use super::runner_request;

#[test]
fn run_bash_maps_to_the_runner_request() {
    let request = runner_request("run_bash", &json!({"command": "ls", "timeout_ms": 5})).unwrap();
    let ToolRequest::RunBash(args) = request else {
        panic!("wrong request: {request:?}");
    };
    assert_eq!(args.command, "ls");
    assert_eq!(args.timeout_ms, Some(5));
    assert_eq!(args.env, None);
}

#[test]
fn every_offered_tool_parses_a_minimal_input() {
    let cases = [
        ("run_bash", json!({"command": "true"}), ToolName::RunBash),
        ("read_file", json!({"path": "a"}), ToolName::ReadFile),
        (
            "write_file",
            json!({"path": "a", "content": ""}),
            ToolName::WriteFile,
        ),
        (
            "edit_file",
            json!({"path": "a", "old_string": "x", "new_string": "y"}),
            ToolName::EditFile,
        ),
        ("delete", json!({"path": "a"}), ToolName::Delete),
        ("glob", json!({"pattern": "*"}), ToolName::Glob),
        ("grep", json!({"pattern": "x"}), ToolName::Grep),
        ("list_directory", json!({}), ToolName::ListDirectory),
    ];
    for (tool, input, name) in cases {
        let request = runner_request(tool, &input).unwrap();
        assert_eq!(request.name(), name, "{tool}");
        assert_eq!(request.name().as_str(), tool);
    }
}

#[test]
fn unknown_field_is_refused_by_name() {
    let err = runner_request("read_file", &json!({"path": "a", "sudo": true})).unwrap_err();
    assert_eq!(err.tool, "read_file");
    assert!(err.problem.contains("sudo"), "{err}");
}

#[test]
fn missing_and_mistyped_fields_are_named() {
    let err = runner_request("write_file", &json!({"path": "a"})).unwrap_err();
    assert!(err.problem.contains("content"), "{err}");
    let err = runner_request("run_bash", &json!({"command": 7})).unwrap_err();
    assert!(err.to_string().contains("run_bash"), "{err}");
    let err = runner_request("run_bash", &json!({"command": "  "})).unwrap_err();
    assert!(err.problem.contains("command"), "{err}");
    let err = runner_request("grep", &json!("x")).unwrap_err();
    assert!(err.problem.contains("JSON object"), "{err}");
}

#[test]
fn tools_the_model_is_not_offered_are_refused() {
    // `upload` exists on the runner wire but is not offered to the model.
    let err = runner_request("upload", &json!({})).unwrap_err();
    assert_eq!(err.problem, "no such tool");
}
