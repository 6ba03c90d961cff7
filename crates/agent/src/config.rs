//! The knobs of the turn loop.

/// How the agent runs turns. Machine configuration fills it in the composition root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentConfig {
    /// The model used when the session names none.
    pub default_model: String,
    /// Extra instructions appended to the built-in system prompt.
    pub instructions: Option<String>,
    /// Most model requests in one turn.
    pub max_steps: u32,
    /// `max_tokens` of each model request.
    pub max_tokens: u32,
    /// A tool result longer than this many characters is cut (head and tail kept) for the model.
    pub model_output_chars: usize,
    /// A tool result longer than this many characters is cut in the audit trail.
    pub audit_output_chars: usize,
}

impl AgentConfig {
    pub fn new(default_model: impl Into<String>) -> Self {
        Self {
            default_model: default_model.into(),
            instructions: None,
            max_steps: 50,
            max_tokens: 8192,
            model_output_chars: 30_000,
            audit_output_chars: 1_000_000,
        }
    }
}
