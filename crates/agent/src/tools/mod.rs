//! The tools offered to the model. Today every tool runs in the session's sandbox; connector
//! tools (MCP, `web_fetch`) will run in the host and join the registry as another
//! [`ToolPlacement`].

mod input;
mod output;
mod schemas;

use model_client::ToolSpec;
use serde_json::Value;
use tool_protocol::ToolRequest;

pub use input::{ToolInputError, sandbox_request};
pub use output::{RenderedResult, append_denials, render_error, render_result, truncate_middle};

/// What a tool does to the world, which decides how calls are scheduled: reads run in
/// parallel, everything else runs alone and in the model's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolEffect {
    Read,
    Write,
    Command,
}

/// Where a tool's calls run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolPlacement {
    /// Inside the session's sandbox, through the tool-runner.
    Sandbox,
}

/// One tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    pub spec: ToolSpec,
    pub effect: ToolEffect,
    pub placement: ToolPlacement,
}

/// The tools of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRegistry {
    tools: Vec<ToolDefinition>,
}

impl ToolRegistry {
    /// The eight sandbox tools: `run_bash`, `read_file`, `write_file`, `edit_file`, `delete`,
    /// `glob`, `grep`, `list_directory`.
    pub fn sandbox_tools() -> Self {
        let tools = schemas::sandbox_tool_schemas()
            .into_iter()
            .map(|(name, description, input_schema)| ToolDefinition {
                effect: match name {
                    "run_bash" => ToolEffect::Command,
                    "write_file" | "edit_file" | "delete" => ToolEffect::Write,
                    _ => ToolEffect::Read,
                },
                placement: ToolPlacement::Sandbox,
                spec: ToolSpec {
                    name: name.to_owned(),
                    description: description.to_owned(),
                    input_schema,
                },
            })
            .collect();
        Self { tools }
    }

    /// The specs to send with every model request.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| t.spec.clone()).collect()
    }

    pub fn get(&self, name: &str) -> Option<&ToolDefinition> {
        self.tools.iter().find(|t| t.spec.name == name)
    }

    /// Turns a model's call into a runner request, or says what is wrong with it.
    pub fn prepare(&self, name: &str, input: &Value) -> Result<PreparedCall, ToolInputError> {
        let Some(definition) = self.get(name) else {
            return Err(ToolInputError {
                tool: name.to_owned(),
                problem: format!(
                    "no such tool; the tools are: {}",
                    self.tools
                        .iter()
                        .map(|t| t.spec.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        };
        match definition.placement {
            ToolPlacement::Sandbox => Ok(PreparedCall {
                effect: definition.effect,
                request: sandbox_request(name, input)?,
            }),
        }
    }
}

/// A model's call, validated and ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedCall {
    pub effect: ToolEffect,
    pub request: ToolRequest,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_offers_exactly_the_eight_sandbox_tools() {
        let registry = ToolRegistry::sandbox_tools();
        let names: Vec<String> = registry.specs().into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "run_bash",
                "read_file",
                "write_file",
                "edit_file",
                "delete",
                "glob",
                "grep",
                "list_directory"
            ]
        );
        for spec in registry.specs() {
            assert_eq!(spec.input_schema["type"], "object", "{}", spec.name);
            assert_eq!(
                spec.input_schema["additionalProperties"], false,
                "{}",
                spec.name
            );
        }
    }

    #[test]
    fn effects_follow_the_runner_read_only_flag() {
        let registry = ToolRegistry::sandbox_tools();
        for spec in registry.specs() {
            let name = tool_protocol::ToolName::from_wire(&spec.name).unwrap();
            let effect = registry.get(&spec.name).unwrap().effect;
            assert_eq!(
                effect == ToolEffect::Read,
                name.is_read_only(),
                "{}",
                spec.name
            );
        }
    }

    #[test]
    fn unknown_tool_lists_the_real_ones() {
        let err = ToolRegistry::sandbox_tools()
            .prepare("format_disk", &serde_json::json!({}))
            .unwrap_err();
        assert!(err.problem.contains("run_bash"), "{err}");
    }
}
