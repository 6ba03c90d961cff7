//! The tools offered to the model, and where each one runs ([`ToolPlacement`]): the sandbox
//! tools run inside the session's wall through the tool-runner; host tools (connectors) run in
//! the host process, with enforcement `host`, so no approval mode treats them as confined.

mod host;
mod input;
mod output;
mod schemas;

use std::collections::BTreeMap;
use std::sync::Arc;

use model_client::ToolSpec;
use serde_json::Value;
use tool_protocol::ToolRequest;

pub use host::{HostTool, HostToolEntry, HostToolError, HostToolOutput, HostToolSource};
pub use input::{ToolInputError, runner_request};
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
    /// Inside the session's sandbox, through the tool-runner. Enforcement: the wall's.
    Sandbox,
    /// In the host process (a connector). Enforcement `host`: no wall confines the call, so
    /// `auto-in-sandbox` never lets it through unasked.
    Host,
}

/// One tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    pub spec: ToolSpec,
    pub effect: ToolEffect,
    pub placement: ToolPlacement,
}

/// Why a tool cannot join a registry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool `{name}` cannot be registered: {problem}")]
pub struct RegistryError {
    pub name: String,
    pub problem: String,
}

/// The tools of a session.
#[derive(Clone)]
pub struct ToolRegistry {
    tools: Vec<ToolDefinition>,
    host: BTreeMap<String, Arc<dyn HostTool>>,
    sources: Vec<Arc<dyn HostToolSource>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl PartialEq for ToolRegistry {
    fn eq(&self, other: &Self) -> bool {
        self.tools == other.tools
    }
}

/// Tool names the approval policy reads as sandbox file tools or commands. A host tool may
/// not take one: it would inherit leniencies (reads proceed in every mode) meant for calls a
/// wall confines.
const SANDBOX_NAMES: &[&str] = &[
    "run_bash",
    "read_file",
    "read_bytes",
    "write_file",
    "edit_file",
    "delete",
    "glob",
    "grep",
    "list_directory",
    "stat",
    "upload",
    "download",
];

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
        Self {
            tools,
            host: BTreeMap::new(),
            sources: Vec::new(),
        }
    }

    /// Adds a source of host tools whose list may change while a session runs. Its tools
    /// are checked like [`ToolRegistry::with_host_tool`]'s each time they are read: one that
    /// takes a sandbox tool's name, a name already offered, or a non-object schema is left
    /// out.
    pub fn with_host_source(mut self, source: Arc<dyn HostToolSource>) -> Self {
        self.sources.push(source);
        self
    }

    /// What the sources want the model told (for the system prompt).
    pub fn notices(&self) -> Vec<String> {
        self.sources.iter().flat_map(|s| s.notices()).collect()
    }

    /// Tells every source that the session's settings changed.
    pub fn settings_changed(&self, settings: &protocol::SessionSettings) {
        for source in &self.sources {
            source.settings_changed(settings);
        }
    }

    /// The sources' tool of `name` as it stands now: from the first source that offers it
    /// (later ones were left out of [`ToolRegistry::dynamic`]), never under a fixed tool's
    /// name or with a non-object schema.
    fn dynamic_tool(&self, name: &str) -> Option<HostToolEntry> {
        if SANDBOX_NAMES.contains(&name) || self.tools.iter().any(|t| t.spec.name == name) {
            return None;
        }
        self.sources.iter().find_map(|source| {
            source.tool(name).filter(|entry| {
                entry.spec.input_schema.get("type").and_then(Value::as_str) == Some("object")
            })
        })
    }

    /// The sources' tools as they stand now, without names taken before them.
    fn dynamic(&self) -> Vec<HostToolEntry> {
        let mut seen: Vec<String> = self.tools.iter().map(|t| t.spec.name.clone()).collect();
        let mut entries = Vec::new();
        for source in &self.sources {
            for entry in source.tools() {
                let name = &entry.spec.name;
                if SANDBOX_NAMES.contains(&name.as_str())
                    || seen.contains(name)
                    || entry.spec.input_schema.get("type").and_then(Value::as_str) != Some("object")
                {
                    continue;
                }
                seen.push(name.clone());
                entries.push(entry);
            }
        }
        entries
    }

    /// Adds a tool that runs in the host process. Its calls are recorded with enforcement
    /// `host` and always pass the approval gate as a non-sandbox tool. Refused when the name
    /// is taken or is a sandbox tool's name.
    pub fn with_host_tool(
        mut self,
        spec: ToolSpec,
        effect: ToolEffect,
        tool: Arc<dyn HostTool>,
    ) -> Result<Self, RegistryError> {
        let refuse = |problem: &str| RegistryError {
            name: spec.name.clone(),
            problem: problem.to_owned(),
        };
        if SANDBOX_NAMES.contains(&spec.name.as_str()) {
            return Err(refuse(
                "the name is a sandbox tool's; a host tool needs a name of its own",
            ));
        }
        if self.get(&spec.name).is_some() {
            return Err(refuse("a tool with this name is already registered"));
        }
        if spec.input_schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(refuse("its input schema must be a JSON object schema"));
        }
        self.host.insert(spec.name.clone(), tool);
        self.tools.push(ToolDefinition {
            spec,
            effect,
            placement: ToolPlacement::Host,
        });
        Ok(self)
    }

    /// The specs to send with every model request.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = self.tools.iter().map(|t| t.spec.clone()).collect();
        specs.extend(self.dynamic().into_iter().map(|e| e.spec));
        specs
    }

    pub fn get(&self, name: &str) -> Option<ToolDefinition> {
        if let Some(definition) = self.tools.iter().find(|t| t.spec.name == name) {
            return Some(definition.clone());
        }
        self.dynamic_tool(name).map(|e| ToolDefinition {
            spec: e.spec,
            effect: e.effect,
            placement: ToolPlacement::Host,
        })
    }

    /// The host tool of `name`, fixed or from a source.
    fn host_tool(&self, name: &str) -> Option<Arc<dyn HostTool>> {
        if let Some(tool) = self.host.get(name) {
            return Some(Arc::clone(tool));
        }
        self.dynamic_tool(name).map(|e| e.tool)
    }

    /// Turns a model's call into a runner request or a host call, or says what is wrong.
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
        let target = match definition.placement {
            ToolPlacement::Sandbox => CallTarget::Sandbox(runner_request(name, input)?),
            ToolPlacement::Host => {
                let tool = self.host_tool(name).ok_or_else(|| ToolInputError {
                    tool: name.to_owned(),
                    problem: "the host tool is not available".into(),
                })?;
                if !input.is_object() {
                    return Err(ToolInputError {
                        tool: name.to_owned(),
                        problem: format!("the input must be a JSON object, got {input}"),
                    });
                }
                CallTarget::Host(tool)
            }
        };
        Ok(PreparedCall {
            effect: definition.effect,
            target,
        })
    }
}

/// Where a prepared call goes.
#[derive(Clone)]
pub enum CallTarget {
    /// The runner request to send into the session's sandbox.
    Sandbox(ToolRequest),
    /// The host tool to call with the model's input.
    Host(Arc<dyn HostTool>),
}

impl std::fmt::Debug for CallTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallTarget::Sandbox(request) => f.debug_tuple("Sandbox").field(request).finish(),
            CallTarget::Host(_) => f.write_str("Host"),
        }
    }
}

/// A model's call, validated and ready to run.
#[derive(Debug, Clone)]
pub struct PreparedCall {
    pub effect: ToolEffect,
    pub target: CallTarget,
}

impl PreparedCall {
    /// The runner request, for a sandbox tool.
    pub fn runner_request(&self) -> Option<&ToolRequest> {
        match &self.target {
            CallTarget::Sandbox(request) => Some(request),
            CallTarget::Host(_) => None,
        }
    }
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
