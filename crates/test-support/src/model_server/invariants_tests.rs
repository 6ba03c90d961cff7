use super::*;
use serde_json::json;

fn schema() -> Value {
    json!({ "type": "object", "properties": { "path": { "type": "string" } }, "required": ["path"] })
}

fn anthropic(messages: &Value) -> Value {
    json!({
        "model": "m", "max_tokens": 10, "stream": true,
        "tools": [{ "name": "read_file", "description": "d", "input_schema": schema() }],
        "messages": messages,
    })
}

fn openai(messages: &Value) -> Value {
    json!({
        "model": "m", "max_tokens": 10, "stream": true,
        "tools": [{ "type": "function", "function": { "name": "read_file", "parameters": schema() } }],
        "messages": messages,
    })
}

fn assert_one_problem(problems: &[String], needle: &str) {
    assert!(
        problems.iter().any(|p| p.contains(needle)),
        "expected a problem containing {needle:?}, got {problems:?}"
    );
}

fn anthropic_tool_turns(result_id: &str) -> Value {
    json!([
        { "role": "user", "content": "read a" },
        { "role": "assistant", "content": [
            { "type": "text", "text": "ok" },
            { "type": "tool_use", "id": "t1", "name": "read_file", "input": { "path": "a" } },
        ] },
        { "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": result_id, "content": "x", "is_error": false },
        ] },
    ])
}

#[test]
fn a_valid_anthropic_tool_conversation_has_no_problems() {
    assert_eq!(
        check(
            WireFormat::Anthropic,
            &anthropic(&anthropic_tool_turns("t1"))
        ),
        Vec::<String>::new()
    );
}

#[test]
fn an_orphan_anthropic_tool_result_and_the_unanswered_use_are_both_named() {
    let problems = check(
        WireFormat::Anthropic,
        &anthropic(&anthropic_tool_turns("t9")),
    );
    assert_one_problem(&problems, "orphan tool result");
    assert_one_problem(&problems, "does not answer tool_use [\"t1\"]");
}

#[test]
fn anthropic_roles_must_alternate_and_start_with_user() {
    let problems = check(
        WireFormat::Anthropic,
        &anthropic(&json!([
            { "role": "assistant", "content": "hi" },
            { "role": "user", "content": "a" },
            { "role": "user", "content": "b" },
        ])),
    );
    assert_one_problem(&problems, "messages[0] must be a user message");
    assert_one_problem(&problems, "messages[2] is a second user message in a row");
}

#[test]
fn anthropic_tool_results_must_come_first_and_text_must_not_be_empty() {
    let problems = check(
        WireFormat::Anthropic,
        &anthropic(&json!([
            { "role": "user", "content": "read a" },
            { "role": "assistant", "content": [
                { "type": "tool_use", "id": "t1", "name": "read_file", "input": { "path": "a" } },
            ] },
            { "role": "user", "content": [
                { "type": "text", "text": "" },
                { "type": "tool_result", "tool_use_id": "t1", "content": "x" },
            ] },
        ])),
    );
    assert_one_problem(&problems, "empty text block");
    assert_one_problem(&problems, "tool results come first");
}

#[test]
fn anthropic_request_fields_are_checked() {
    let mut body = anthropic(&json!([{ "role": "user", "content": "hi" }]));
    body["stream"] = json!(false);
    body["temperature"] = json!(1.5);
    body["max_tokens"] = json!(0);
    body["model"] = json!("");
    let problems = check(WireFormat::Anthropic, &body);
    assert_one_problem(&problems, "`stream` is not true");
    assert_one_problem(&problems, "`temperature` must be 0 to 1");
    assert_one_problem(&problems, "`max_tokens` must be a positive integer");
    assert_one_problem(&problems, "`model` is missing or empty");
}

#[test]
fn tool_definitions_need_valid_names_and_object_schemas() {
    let mut body = anthropic(&json!([{ "role": "user", "content": "hi" }]));
    body["tools"] = json!([
        { "name": "read file", "input_schema": schema() },
        { "name": "a", "input_schema": { "type": "string" } },
        { "name": "a", "input_schema": { "type": "object", "required": ["nope"] } },
        { "name": "b", "input_schema": { "type": "object", "properties": { "x": { "type": "text" } } } },
    ]);
    let problems = check(WireFormat::Anthropic, &body);
    assert_one_problem(&problems, "tools[0] has an invalid name `read file`");
    assert_one_problem(&problems, "tools[1] schema must have \"type\": \"object\"");
    assert_one_problem(&problems, "tools[2] repeats the name `a`");
    assert_one_problem(&problems, "requires \"nope\", which is not a property");
    assert_one_problem(&problems, "unknown type `text`");
}

fn openai_tool_turns() -> Value {
    json!([
        { "role": "system", "content": "s" },
        { "role": "user", "content": "read a and b" },
        { "role": "assistant", "content": null, "tool_calls": [
            { "id": "c1", "type": "function", "function": { "name": "read_file", "arguments": "{\"path\":\"a\"}" } },
            { "id": "c2", "type": "function", "function": { "name": "read_file", "arguments": "{\"path\":\"b\"}" } },
        ] },
        { "role": "tool", "tool_call_id": "c2", "content": "B" },
        { "role": "tool", "tool_call_id": "c1", "content": "A" },
        { "role": "assistant", "content": "A and B" },
        { "role": "user", "content": "thanks" },
    ])
}

#[test]
fn a_valid_openai_tool_conversation_has_no_problems() {
    assert_eq!(
        check(WireFormat::OpenAi, &openai(&openai_tool_turns())),
        Vec::<String>::new()
    );
}

#[test]
fn openai_orphan_and_unanswered_tool_calls_are_named() {
    let mut messages = openai_tool_turns();
    messages[4]["tool_call_id"] = json!("c9");
    let problems = check(WireFormat::OpenAi, &openai(&messages));
    assert_one_problem(&problems, "answers tool call `c9`");
    assert_one_problem(
        &problems,
        "before tool calls [\"c1\"] of messages[2] were answered",
    );
}

#[test]
fn openai_calls_need_json_object_arguments_and_roles_must_alternate() {
    let problems = check(
        WireFormat::OpenAi,
        &openai(&json!([
            { "role": "user", "content": "a" },
            { "role": "assistant", "content": "b" },
            { "role": "assistant", "content": null, "tool_calls": [
                { "id": "c1", "type": "function", "function": { "name": "read_file", "arguments": "{path: a}" } },
            ] },
            { "role": "tool", "tool_call_id": "c1", "content": "x" },
            { "role": "system", "content": "late" },
        ])),
    );
    assert_one_problem(&problems, "second assistant message in a row");
    assert_one_problem(&problems, "arguments that are not a JSON object");
    assert_one_problem(&problems, "system message mid-conversation");
}

#[test]
fn openai_tool_calls_left_unanswered_at_the_end_are_named() {
    let messages = json!([
        { "role": "user", "content": "a" },
        { "role": "assistant", "content": null, "tool_calls": [
            { "id": "c1", "type": "function", "function": { "name": "read_file", "arguments": "{}" } },
        ] },
    ]);
    let problems = check(WireFormat::OpenAi, &openai(&messages));
    assert_one_problem(&problems, "are never answered");
}
