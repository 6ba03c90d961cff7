//! From a model's tool input (JSON) to a `tool_protocol` request. Every refusal names the tool
//! and the field, and goes back to the model as a tool error.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tool_protocol::{
    Data, Delete, EditFile, Glob, Grep, ListDirectory, ReadFile, RunBash, ToolRequest, WriteFile,
};

/// Why a model's tool input cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid input for `{tool}`: {problem}")]
pub struct ToolInputError {
    pub tool: String,
    pub problem: String,
}

fn parse<T: DeserializeOwned>(tool: &str, input: &Value) -> Result<T, ToolInputError> {
    if !input.is_object() {
        return Err(ToolInputError {
            tool: tool.to_owned(),
            problem: format!("the input must be a JSON object, got {input}"),
        });
    }
    serde_json::from_value(input.clone()).map_err(|e| ToolInputError {
        tool: tool.to_owned(),
        problem: e.to_string(),
    })
}

fn non_empty(tool: &str, field: &str, value: &str) -> Result<(), ToolInputError> {
    if value.trim().is_empty() {
        return Err(ToolInputError {
            tool: tool.to_owned(),
            problem: format!("`{field}` must not be empty"),
        });
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunBashInput {
    command: String,
    cwd: Option<String>,
    timeout_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadFileInput {
    path: String,
    offset: Option<u64>,
    limit: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteFileInput {
    path: String,
    content: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditFileInput {
    path: String,
    old_string: String,
    new_string: String,
    replace_all: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteInput {
    path: String,
    recursive: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GlobInput {
    pattern: String,
    path: Option<String>,
    limit: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GrepInput {
    pattern: String,
    path: Option<String>,
    include: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
    case_insensitive: Option<bool>,
    context: Option<u64>,
    max_matches: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListDirectoryInput {
    path: Option<String>,
    depth: Option<u64>,
    limit: Option<u64>,
}

/// Turns the model's input for the sandbox tool `tool` into a runner request.
pub fn runner_request(tool: &str, input: &Value) -> Result<ToolRequest, ToolInputError> {
    let request = match tool {
        "run_bash" => {
            let i: RunBashInput = parse(tool, input)?;
            non_empty(tool, "command", &i.command)?;
            if i.timeout_ms == Some(0) {
                return Err(ToolInputError {
                    tool: tool.to_owned(),
                    problem: "`timeout_ms` must be at least 1".into(),
                });
            }
            ToolRequest::RunBash(RunBash {
                command: i.command,
                cwd: i.cwd,
                env: None,
                stdin: None,
                timeout_ms: i.timeout_ms,
                max_output_bytes: None,
            })
        }
        "read_file" => {
            let i: ReadFileInput = parse(tool, input)?;
            non_empty(tool, "path", &i.path)?;
            ToolRequest::ReadFile(ReadFile {
                path: i.path,
                offset: i.offset,
                limit: i.limit,
            })
        }
        "write_file" => {
            let i: WriteFileInput = parse(tool, input)?;
            non_empty(tool, "path", &i.path)?;
            ToolRequest::WriteFile(WriteFile {
                path: i.path,
                content: Data::Text(i.content),
                create_parents: Some(true),
            })
        }
        "edit_file" => {
            let i: EditFileInput = parse(tool, input)?;
            non_empty(tool, "path", &i.path)?;
            if i.old_string.is_empty() {
                return Err(ToolInputError {
                    tool: tool.to_owned(),
                    problem: "`old_string` must not be empty".into(),
                });
            }
            ToolRequest::EditFile(EditFile {
                path: i.path,
                old_string: i.old_string,
                new_string: i.new_string,
                replace_all: i.replace_all,
            })
        }
        "delete" => {
            let i: DeleteInput = parse(tool, input)?;
            non_empty(tool, "path", &i.path)?;
            ToolRequest::Delete(Delete {
                path: i.path,
                recursive: i.recursive,
            })
        }
        "glob" => {
            let i: GlobInput = parse(tool, input)?;
            non_empty(tool, "pattern", &i.pattern)?;
            ToolRequest::Glob(Glob {
                pattern: i.pattern,
                path: i.path,
                limit: i.limit,
            })
        }
        "grep" => {
            let i: GrepInput = parse(tool, input)?;
            non_empty(tool, "pattern", &i.pattern)?;
            ToolRequest::Grep(Grep {
                pattern: i.pattern,
                path: i.path,
                include: i.include,
                exclude: i.exclude,
                case_insensitive: i.case_insensitive,
                context: i.context,
                max_matches: i.max_matches,
            })
        }
        "list_directory" => {
            let i: ListDirectoryInput = parse(tool, input)?;
            ToolRequest::ListDirectory(ListDirectory {
                path: i.path,
                depth: i.depth,
                limit: i.limit,
            })
        }
        other => {
            return Err(ToolInputError {
                tool: other.to_owned(),
                problem: "no such tool".into(),
            });
        }
    };
    Ok(request)
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
