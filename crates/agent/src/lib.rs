//! # agent
//!
//! Paddock's turn loop. A [`Session`] takes ops ([`protocol::Op`]) and emits events
//! ([`protocol::Event`]): the user's message goes to the model, the model's tool calls pass the
//! approval gate and run in the session's sandbox, their results go back to the model, until
//! the model stops, the user interrupts, or a step limit is hit.
//!
//! The agent depends on traits only: [`model_client::ModelClient`],
//! [`sandbox_provider::SandboxProvider`], [`EventSink`] (the audit store, wired in by the
//! composition root) and [`SessionStore`] (the SQLite store lives in `session-store`).

mod approval_gate;
mod call_outcome;
mod config;
mod error;
mod event_bus;
mod in_memory_store;
mod protected;
mod sandbox_slot;
mod session;
mod session_files;
mod session_store;
mod settings_change;
mod shared;
mod standing;
mod tool_approval;
mod tool_call;
mod tool_execution;
pub mod tools;
mod turn;

pub use approval_gate::listed_approval;
pub use config::AgentConfig;
pub use error::AgentError;
pub use event_bus::{DiscardSink, EventBus, EventScrubber, EventSink, SinkError};
pub use in_memory_store::InMemorySessionStore;
pub use sandbox_slot::DIAGNOSE_COMMAND;
pub use session::{Session, SessionDeps};
pub use session_store::{SessionRecord, SessionStore, SessionSummary, StoreError, session_title};
pub use settings_change::check_host;
pub use tools::{
    HostTool, HostToolEntry, HostToolError, HostToolOutput, HostToolSource, ToolEffect,
    ToolRegistry,
};
