//! A tool call as the policy sees it, read and checked once.

use std::collections::BTreeSet;

use protocol::EnforcementLevel;
use serde_json::Value;

use crate::analysis::{Analysis, analyze, is_safe_env};
use crate::canonical::call_key;
use crate::error::ApprovalError;
use crate::paths::resolve;
use crate::protected::ProtectedPaths;
use crate::shell::{self, ParseError};

/// What the policy is asked about: one tool call, borrowed from the caller.
#[derive(Debug, Clone, Copy)]
pub struct ToolCallView<'a> {
    /// The tool's name on the wire (`run_bash`, `write_file`, or a connector's tool).
    pub tool: &'a str,
    /// The arguments the model gave (a JSON object).
    pub args_json: &'a Value,
    /// The session's working folder (absolute): relative paths are resolved against it.
    pub cwd: &'a str,
    /// The wall that will run the call.
    pub enforcement: EnforcementLevel,
    /// Absolute paths written in this session by `upload` or downloaded by an earlier command
    /// (see [`crate::downloads_of`]); running one of them, or a file under one of them (a
    /// cloned repository's folder), is a safety check.
    pub recently_downloaded: &'a BTreeSet<String>,
    /// Absolute paths written in this session by the file tools or by an earlier command's
    /// redirections (see [`crate::writes_of`]); running one is not understood (what it does
    /// was never checked), so `auto-in-sandbox` asks.
    pub written: &'a BTreeSet<String>,
    /// The protected list (files the host runs later): writing one is a safety check.
    pub protected: &'a ProtectedPaths,
}

/// How a tool touches the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolKind {
    Read,
    Edit,
    Command,
    Other,
}

impl ToolKind {
    pub(crate) fn of(tool: &str) -> ToolKind {
        match tool {
            "read_file" | "read_bytes" | "list_directory" | "stat" | "glob" | "grep"
            | "download" => ToolKind::Read,
            "write_file" | "edit_file" | "delete" | "upload" => ToolKind::Edit,
            "run_bash" => ToolKind::Command,
            _ => ToolKind::Other,
        }
    }

    /// Tools whose `path` argument is required.
    fn needs_path(tool: &str) -> bool {
        matches!(
            tool,
            "read_file"
                | "read_bytes"
                | "stat"
                | "write_file"
                | "edit_file"
                | "delete"
                | "upload"
                | "download"
        )
    }
}

/// A `run_bash` command: parsed and analysed, or why it could not be.
pub(crate) struct CommandCall {
    pub cwd: String,
    pub parsed: Result<Analysis, ParseError>,
}

/// A call, checked and read.
pub(crate) struct Call<'a> {
    pub view: &'a ToolCallView<'a>,
    pub kind: ToolKind,
    pub key: String,
    /// The resolved `path` argument of a file tool.
    pub path: Option<String>,
    pub command: Option<CommandCall>,
}

fn invalid(tool: &str, message: impl Into<String>) -> ApprovalError {
    ApprovalError::InvalidCall {
        tool: tool.to_string(),
        message: message.into(),
    }
}

impl<'a> Call<'a> {
    pub(crate) fn read(view: &'a ToolCallView<'a>) -> Result<Self, ApprovalError> {
        let tool = view.tool;
        if !view.cwd.starts_with('/') {
            return Err(ApprovalError::RelativeCwd {
                cwd: view.cwd.to_string(),
            });
        }
        let Value::Object(args) = view.args_json else {
            return Err(invalid(tool, "arguments must be a JSON object"));
        };
        let string = |name: &str| -> Result<Option<&str>, ApprovalError> {
            match args.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(_) => Err(invalid(tool, format!("`{name}` must be a string"))),
            }
        };
        let kind = ToolKind::of(tool);
        let path = string("path")?.map(|p| resolve(view.cwd, p));
        if path.is_none() && ToolKind::needs_path(tool) {
            return Err(invalid(tool, "`path` is required"));
        }
        let command = if kind == ToolKind::Command {
            let source =
                string("command")?.ok_or_else(|| invalid(tool, "`command` is required"))?;
            let cwd = resolve(view.cwd, string("cwd")?.unwrap_or("."));
            let env_names: Vec<String> = match args.get("env") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Object(env)) => env.keys().cloned().collect(),
                Some(_) => return Err(invalid(tool, "`env` must be an object of strings")),
            };
            let parsed = shell::parse(source).map(|script| {
                let mut analysis = analyze(&script, &cwd);
                for name in env_names.iter().filter(|n| !is_safe_env(n)) {
                    analysis.issues.push(format!(
                        "the call sets `{name}` in the environment, which can change what runs"
                    ));
                }
                analysis
            });
            Some(CommandCall { cwd, parsed })
        } else {
            None
        };
        Ok(Call {
            view,
            kind,
            key: call_key(tool, view.args_json, view.cwd),
            path,
            command,
        })
    }

    /// True for a recursive `delete`.
    pub(crate) fn is_recursive_delete(&self) -> bool {
        self.view.tool == "delete"
            && self
                .view
                .args_json
                .get("recursive")
                .and_then(Value::as_bool)
                .unwrap_or(false)
    }
}
