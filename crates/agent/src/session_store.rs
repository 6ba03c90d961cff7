//! What a session keeps across restarts, and the trait a store implements (the SQLite one
//! lives in the `session-store` crate; the agent never touches a database itself).

use approvals::StandingApproval;
use async_trait::async_trait;
use model_client::{ContentBlock, Message, Role};
use protocol::{FolderGrant, ProviderKind, SessionSettings};
use serde::{Deserialize, Serialize};

/// Everything needed to resume a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    pub id: String,
    /// The settings in force, grants included (they change with grant/revoke ops).
    pub settings: SessionSettings,
    /// The conversation as sent to the model.
    pub messages: Vec<Message>,
    /// The session-scoped approvals in force (machine-wide `always` approvals are kept apart).
    pub session_approvals: Vec<StandingApproval>,
    /// Absolute paths the session's commands downloaded (`approvals::downloads_of`); running
    /// one of them (or a file under a downloaded folder) always asks.
    #[serde(default)]
    pub downloads: Vec<String>,
    /// Absolute paths the session wrote (file tools, and what its commands' redirections
    /// name: `approvals::writes_of`); running one of them cannot be checked, so
    /// `auto-in-sandbox` asks.
    #[serde(default)]
    pub written: Vec<String>,
    /// The wall the session last ran with (`None` for sessions stored before it was kept).
    #[serde(default)]
    pub provider: Option<ProviderKind>,
    /// The last event number used, so a resumed session continues the sequence.
    pub last_seq: u64,
    pub created_ms: i64,
    pub updated_ms: i64,
}

/// One line of a session listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub id: String,
    pub created_ms: i64,
    pub updated_ms: i64,
    pub message_count: u64,
    /// The first user message, cut to a line.
    pub title: String,
    /// The granted folders.
    pub folders: Vec<FolderGrant>,
    /// The wall the session last ran with, when known.
    pub provider: Option<ProviderKind>,
}

/// Why the store failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("no session with id `{0}`")]
    NotFound(String),
    #[error("a session with id `{0}` already exists")]
    AlreadyExists(String),
    /// The stored data cannot be read back (a newer schema, a damaged row).
    #[error("the session store holds data this version cannot read: {0}")]
    Corrupt(String),
    #[error("the session store failed: {0}")]
    Backend(String),
    /// Another process held the store's lock for longer than the store waits and retries.
    #[error("the session store stayed locked by another Paddock process: {0}")]
    Busy(String),
}

/// Sessions that outlive the process.
#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Stores a new session.
    async fn create(&self, record: &SessionRecord) -> Result<(), StoreError>;

    /// Loads a session, or `None` when there is none with this id.
    async fn load(&self, id: &str) -> Result<Option<SessionRecord>, StoreError>;

    /// Replaces the messages from index `from` on with `messages` (the conversation only grows,
    /// except that a user turn may extend the last user message), and records `last_seq`.
    async fn save_messages(
        &self,
        id: &str,
        from: usize,
        messages: &[Message],
        last_seq: u64,
    ) -> Result<(), StoreError>;

    async fn save_settings(&self, id: &str, settings: &SessionSettings) -> Result<(), StoreError>;

    async fn save_session_approvals(
        &self,
        id: &str,
        approvals: &[StandingApproval],
    ) -> Result<(), StoreError>;

    /// The machine-wide `always` approvals.
    async fn always_approvals(&self) -> Result<Vec<StandingApproval>, StoreError>;

    /// Adds a machine-wide `always` approval (one with the same id is ignored).
    async fn add_always_approval(&self, approval: &StandingApproval) -> Result<(), StoreError>;

    /// Removes a machine-wide `always` approval; `false` when there was none with this id.
    async fn remove_always_approval(&self, approval_id: &str) -> Result<bool, StoreError>;

    /// Adds paths to the session's downloaded files (ones already kept are ignored).
    async fn add_downloads(&self, id: &str, paths: &[String]) -> Result<(), StoreError>;

    /// Adds paths to the session's written files (ones already kept are ignored).
    async fn add_written(&self, id: &str, paths: &[String]) -> Result<(), StoreError>;

    /// Records the wall the session runs with.
    async fn save_provider(&self, id: &str, provider: ProviderKind) -> Result<(), StoreError>;

    /// Sessions, most recently updated first.
    async fn list(&self) -> Result<Vec<SessionSummary>, StoreError>;
}

/// A session's title for listings: the first line of its first user text.
pub fn session_title(messages: &[Message]) -> String {
    messages
        .iter()
        .filter(|m| m.role == Role::User)
        .flat_map(|m| &m.content)
        .find_map(|block| match block {
            ContentBlock::Text { text } => Some(text.lines().next().unwrap_or("").to_owned()),
            _ => None,
        })
        .unwrap_or_default()
}
