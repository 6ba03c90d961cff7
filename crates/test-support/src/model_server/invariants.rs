//! What every request to a model API must satisfy, checked on each request the fake server
//! receives. Each problem is one sentence naming the message and field at fault.

use std::collections::HashSet;

use serde_json::Value;

use super::render::WireFormat;

/// Every problem with `body` as a request of `format` (empty when it is valid).
pub fn check(format: WireFormat, body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    match format {
        WireFormat::Anthropic => check_anthropic(body, &mut problems),
        WireFormat::OpenAi => check_openai(body, &mut problems),
    }
    problems
}

fn check_common(body: &Value, problems: &mut Vec<String>) {
    if !body.is_object() {
        problems.push("the body is not a JSON object".to_owned());
        return;
    }
    if body
        .get("model")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        problems.push("`model` is missing or empty".to_owned());
    }
    if body.get("stream") != Some(&Value::Bool(true)) {
        problems.push("`stream` is not true (this double serves only streams)".to_owned());
    }
}

fn positive_integer(body: &Value, key: &str, problems: &mut Vec<String>) {
    if let Some(value) = body.get(key)
        && value.as_u64().is_none_or(|n| n == 0)
    {
        problems.push(format!("`{key}` must be a positive integer, got {value}"));
    }
}

fn check_anthropic(body: &Value, problems: &mut Vec<String>) {
    check_common(body, problems);
    if body.get("max_tokens").is_none() {
        problems.push("`max_tokens` is required".to_owned());
    }
    positive_integer(body, "max_tokens", problems);
    if let Some(temperature) = body.get("temperature")
        && temperature
            .as_f64()
            .is_none_or(|t| !(0.0..=1.0).contains(&t))
    {
        problems.push(format!("`temperature` must be 0 to 1, got {temperature}"));
    }
    match body.get("system") {
        None | Some(Value::String(_)) | Some(Value::Array(_)) => {}
        Some(other) => problems.push(format!("`system` must be text or blocks, got {other}")),
    }
    check_tools(body, problems, |tool| {
        (tool.get("name"), tool.get("input_schema"))
    });
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        problems.push("`messages` is missing".to_owned());
        return;
    };
    if messages.is_empty() {
        problems.push("`messages` is empty".to_owned());
    }
    let mut seen_tool_ids = HashSet::new();
    // Tool uses of the previous assistant message that the next user message must answer.
    let mut unanswered: Option<(usize, HashSet<String>)> = None;
    let mut previous_role: Option<&str> = None;
    for (i, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        if !matches!(role, "user" | "assistant") {
            problems.push(format!(
                "messages[{i}] has role `{role}` (user or assistant)"
            ));
        }
        if i == 0 && role != "user" {
            problems.push("messages[0] must be a user message".to_owned());
        }
        if previous_role == Some(role) {
            problems.push(format!(
                "messages[{i}] is a second {role} message in a row (roles must alternate)"
            ));
        }
        previous_role = Some(role);
        let blocks: Vec<Value> = match message.get("content") {
            Some(Value::String(text)) if !text.is_empty() => {
                vec![serde_json::json!({ "type": "text", "text": text })]
            }
            Some(Value::Array(blocks)) if !blocks.is_empty() => blocks.clone(),
            _ => {
                problems.push(format!("messages[{i}] has no content"));
                Vec::new()
            }
        };
        let mut answered = HashSet::new();
        let mut uses = HashSet::new();
        let mut seen_other = false;
        for (j, block) in blocks.iter().enumerate() {
            let at = format!("messages[{i}].content[{j}]");
            match block.get("type").and_then(Value::as_str).unwrap_or("") {
                "text" => {
                    seen_other = true;
                    if block
                        .get("text")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                    {
                        problems.push(format!("{at} is an empty text block"));
                    }
                }
                "tool_use" => {
                    seen_other = true;
                    if role != "assistant" {
                        problems.push(format!("{at} is a tool_use in a {role} message"));
                    }
                    let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                    if id.is_empty() || block.get("name").and_then(Value::as_str).is_none() {
                        problems.push(format!("{at} is a tool_use without id or name"));
                    }
                    if !block.get("input").is_some_and(Value::is_object) {
                        problems.push(format!("{at} has an input that is not a JSON object"));
                    }
                    if !seen_tool_ids.insert(id.to_owned()) {
                        problems.push(format!("{at} reuses tool_use id `{id}`"));
                    }
                    uses.insert(id.to_owned());
                }
                "tool_result" => {
                    if role != "user" {
                        problems.push(format!("{at} is a tool_result in a {role} message"));
                    }
                    if seen_other {
                        problems.push(format!(
                            "{at} is a tool_result after other content (tool results come first)"
                        ));
                    }
                    let id = block
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let expected = unanswered.as_ref().is_some_and(|(_, ids)| ids.contains(id));
                    if !expected {
                        problems.push(format!(
                            "{at} answers tool_use `{id}`, which the previous assistant message \
                             did not make (orphan tool result)"
                        ));
                    }
                    if !answered.insert(id.to_owned()) {
                        problems.push(format!("{at} answers tool_use `{id}` twice"));
                    }
                }
                other => {
                    seen_other = true;
                    if !matches!(
                        other,
                        "image" | "document" | "thinking" | "redacted_thinking"
                    ) {
                        problems.push(format!("{at} has unknown block type `{other}`"));
                    }
                }
            }
        }
        if let Some((from, ids)) = unanswered.take() {
            let mut missing: Vec<&String> = ids.difference(&answered).collect();
            missing.sort();
            if !missing.is_empty() {
                problems.push(format!(
                    "messages[{i}] does not answer tool_use {missing:?} of messages[{from}]"
                ));
            }
        }
        if !uses.is_empty() {
            unanswered = Some((i, uses));
        }
    }
}

fn check_openai(body: &Value, problems: &mut Vec<String>) {
    check_common(body, problems);
    positive_integer(body, "max_tokens", problems);
    positive_integer(body, "max_completion_tokens", problems);
    if let Some(temperature) = body.get("temperature")
        && temperature
            .as_f64()
            .is_none_or(|t| !(0.0..=2.0).contains(&t))
    {
        problems.push(format!("`temperature` must be 0 to 2, got {temperature}"));
    }
    check_tools(body, problems, |tool| {
        if tool.get("type").and_then(Value::as_str) != Some("function") {
            return (None, None);
        }
        let function = tool.get("function");
        (
            function.and_then(|f| f.get("name")),
            function.and_then(|f| f.get("parameters")),
        )
    });
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        problems.push("`messages` is missing".to_owned());
        return;
    };
    if messages.is_empty() {
        problems.push("`messages` is empty".to_owned());
    }
    let mut seen_call_ids = HashSet::new();
    // Tool calls of the last assistant message not yet answered by `tool` messages.
    let mut pending: Option<(usize, HashSet<String>)> = None;
    let mut previous_role: Option<&str> = None;
    let mut seen_conversation = false;
    for (i, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        if role != "tool"
            && let Some((from, ids)) = pending.take()
            && !ids.is_empty()
        {
            let mut missing: Vec<String> = ids.into_iter().collect();
            missing.sort();
            problems.push(format!(
                "messages[{i}] ({role}) comes before tool calls {missing:?} of messages[{from}] \
                 were answered"
            ));
        }
        match role {
            "system" | "developer" => {
                if seen_conversation {
                    problems.push(format!(
                        "messages[{i}] is a {role} message mid-conversation"
                    ));
                }
            }
            "user" => {
                if previous_role == Some("user") {
                    problems.push(format!(
                        "messages[{i}] is a second user message in a row (roles must alternate)"
                    ));
                }
                if message
                    .get("content")
                    .is_none_or(|c| c.as_str() == Some("") || c.is_null())
                {
                    problems.push(format!("messages[{i}] is a user message without content"));
                }
            }
            "assistant" => {
                if !seen_conversation {
                    problems.push(format!(
                        "messages[{i}] is an assistant message before any user message"
                    ));
                }
                if previous_role == Some("assistant") {
                    problems.push(format!(
                        "messages[{i}] is a second assistant message in a row (roles must \
                         alternate)"
                    ));
                }
                let calls = message.get("tool_calls").and_then(Value::as_array);
                let has_text = message
                    .get("content")
                    .and_then(Value::as_str)
                    .is_some_and(|t| !t.is_empty());
                if !has_text && calls.is_none_or(Vec::is_empty) {
                    problems.push(format!(
                        "messages[{i}] is an assistant message with neither content nor tool calls"
                    ));
                }
                let mut ids = HashSet::new();
                for (j, call) in calls.into_iter().flatten().enumerate() {
                    let at = format!("messages[{i}].tool_calls[{j}]");
                    let id = call.get("id").and_then(Value::as_str).unwrap_or("");
                    if id.is_empty() {
                        problems.push(format!("{at} has no id"));
                    }
                    if !seen_call_ids.insert(id.to_owned()) {
                        problems.push(format!("{at} reuses tool call id `{id}`"));
                    }
                    if call.get("type").and_then(Value::as_str) != Some("function") {
                        problems.push(format!("{at} is not of type function"));
                    }
                    let arguments = call.pointer("/function/arguments").and_then(Value::as_str);
                    match arguments.map(serde_json::from_str::<Value>) {
                        Some(Ok(Value::Object(_))) => {}
                        _ => problems.push(format!(
                            "{at} has arguments that are not a JSON object encoded as a string"
                        )),
                    }
                    if call
                        .pointer("/function/name")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                    {
                        problems.push(format!("{at} has no function name"));
                    }
                    ids.insert(id.to_owned());
                }
                pending = Some((i, ids));
            }
            "tool" => {
                let id = message
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let answered = pending.as_mut().is_some_and(|(_, ids)| ids.remove(id));
                if !answered {
                    problems.push(format!(
                        "messages[{i}] answers tool call `{id}`, which the previous assistant \
                         message did not make or was already answered (orphan tool result)"
                    ));
                }
                if message.get("content").and_then(Value::as_str).is_none() {
                    problems.push(format!(
                        "messages[{i}] is a tool message without text content"
                    ));
                }
            }
            other => problems.push(format!("messages[{i}] has unknown role `{other}`")),
        }
        if matches!(role, "user" | "assistant") {
            seen_conversation = true;
        }
        previous_role = Some(role);
    }
    if let Some((from, ids)) = pending
        && !ids.is_empty()
    {
        let mut missing: Vec<String> = ids.into_iter().collect();
        missing.sort();
        problems.push(format!(
            "tool calls {missing:?} of messages[{from}] are never answered"
        ));
    }
}

/// Tool definitions: valid unique names and JSON object schemas.
fn check_tools<'a>(
    body: &'a Value,
    problems: &mut Vec<String>,
    name_and_schema: impl Fn(&'a Value) -> (Option<&'a Value>, Option<&'a Value>),
) {
    let Some(tools) = body.get("tools") else {
        return;
    };
    let Some(tools) = tools.as_array() else {
        problems.push("`tools` is not an array".to_owned());
        return;
    };
    let mut names = HashSet::new();
    for (i, tool) in tools.iter().enumerate() {
        let (name, schema) = name_and_schema(tool);
        let name = name.and_then(Value::as_str).unwrap_or("");
        let valid_name = (1..=64).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid_name {
            problems.push(format!("tools[{i}] has an invalid name `{name}`"));
        }
        if !names.insert(name) {
            problems.push(format!("tools[{i}] repeats the name `{name}`"));
        }
        match schema {
            Some(schema) => check_schema(&format!("tools[{i}] schema"), schema, true, problems),
            None => problems.push(format!("tools[{i}] has no input schema")),
        }
    }
}

const SCHEMA_TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// A JSON Schema sanity check: known `type`s, `properties` of schemas, `required` naming
/// properties. `top` schemas must be `"type": "object"`.
fn check_schema(at: &str, schema: &Value, top: bool, problems: &mut Vec<String>) {
    let Some(object) = schema.as_object() else {
        problems.push(format!("{at} is not a JSON object"));
        return;
    };
    let types: Vec<&str> = match object.get("type") {
        None => Vec::new(),
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        Some(other) => {
            problems.push(format!("{at} has a `type` that is not a name: {other}"));
            Vec::new()
        }
    };
    for name in &types {
        if !SCHEMA_TYPES.contains(name) {
            problems.push(format!("{at} has unknown type `{name}`"));
        }
    }
    if top && types != ["object"] {
        problems.push(format!("{at} must have \"type\": \"object\""));
    }
    let properties = match object.get("properties") {
        None => None,
        Some(Value::Object(properties)) => Some(properties),
        Some(_) => {
            problems.push(format!("{at} has `properties` that is not an object"));
            None
        }
    };
    for (name, property) in properties.into_iter().flatten() {
        check_schema(&format!("{at}.{name}"), property, false, problems);
    }
    if let Some(items) = object.get("items") {
        check_schema(&format!("{at}[items]"), items, false, problems);
    }
    if let Some(required) = object.get("required") {
        match required.as_array() {
            Some(list) => {
                for entry in list {
                    let known = entry
                        .as_str()
                        .is_some_and(|name| properties.is_some_and(|p| p.contains_key(name)));
                    if !known {
                        problems.push(format!("{at} requires {entry}, which is not a property"));
                    }
                }
            }
            None => problems.push(format!("{at} has `required` that is not an array")),
        }
    }
}

#[cfg(test)]
#[path = "invariants_tests.rs"]
mod tests;
