//! A [`SessionStore`] that keeps sessions in memory: for embedders that do not resume sessions
//! after a restart (one-shot runs, tests of other parts). The durable store is `session-store`.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use approvals::StandingApproval;
use async_trait::async_trait;
use model_client::Message;
use protocol::{ProviderKind, SessionSettings};

use crate::event_bus::now_ms;
use crate::session_store::{
    SessionRecord, SessionStore, SessionSummary, StoreError, session_title,
};

#[derive(Debug, Default)]
pub struct InMemorySessionStore {
    sessions: Mutex<HashMap<String, SessionRecord>>,
    always: Mutex<Vec<StandingApproval>>,
}

impl InMemorySessionStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(
        &self,
        id: &str,
        change: impl FnOnce(&mut SessionRecord) -> T,
    ) -> Result<T, StoreError> {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let record = sessions
            .get_mut(id)
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
        record.updated_ms = now_ms();
        Ok(change(record))
    }
}

#[async_trait]
impl SessionStore for InMemorySessionStore {
    async fn create(&self, record: &SessionRecord) -> Result<(), StoreError> {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if sessions.contains_key(&record.id) {
            return Err(StoreError::AlreadyExists(record.id.clone()));
        }
        sessions.insert(record.id.clone(), record.clone());
        Ok(())
    }

    async fn load(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(sessions.get(id).cloned())
    }

    async fn save_messages(
        &self,
        id: &str,
        from: usize,
        messages: &[Message],
        last_seq: u64,
    ) -> Result<(), StoreError> {
        self.with(id, |record| {
            if from > record.messages.len() {
                return Err(StoreError::Corrupt(format!(
                    "saving messages from index {from}, but only {} are stored",
                    record.messages.len()
                )));
            }
            record.messages.truncate(from);
            record.messages.extend_from_slice(messages);
            record.last_seq = last_seq;
            Ok(())
        })?
    }

    async fn save_settings(&self, id: &str, settings: &SessionSettings) -> Result<(), StoreError> {
        self.with(id, |record| record.settings = settings.clone())
    }

    async fn save_session_approvals(
        &self,
        id: &str,
        approvals: &[StandingApproval],
    ) -> Result<(), StoreError> {
        self.with(id, |record| record.session_approvals = approvals.to_vec())
    }

    async fn always_approvals(&self) -> Result<Vec<StandingApproval>, StoreError> {
        Ok(self
            .always
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone())
    }

    async fn add_always_approval(&self, approval: &StandingApproval) -> Result<(), StoreError> {
        let mut always = self.always.lock().unwrap_or_else(PoisonError::into_inner);
        if !always.iter().any(|a| a.id == approval.id) {
            always.push(approval.clone());
        }
        Ok(())
    }

    async fn remove_always_approval(&self, approval_id: &str) -> Result<bool, StoreError> {
        let mut always = self.always.lock().unwrap_or_else(PoisonError::into_inner);
        let before = always.len();
        always.retain(|a| a.id != approval_id);
        Ok(always.len() != before)
    }

    async fn add_downloads(&self, id: &str, paths: &[String]) -> Result<(), StoreError> {
        self.with(id, |record| {
            for path in paths {
                if !record.downloads.contains(path) {
                    record.downloads.push(path.clone());
                }
            }
        })
    }

    async fn add_written(&self, id: &str, paths: &[String]) -> Result<(), StoreError> {
        self.with(id, |record| {
            for path in paths {
                if !record.written.contains(path) {
                    record.written.push(path.clone());
                }
            }
        })
    }

    async fn save_provider(&self, id: &str, provider: ProviderKind) -> Result<(), StoreError> {
        self.with(id, |record| record.provider = Some(provider))
    }

    async fn list(&self) -> Result<Vec<SessionSummary>, StoreError> {
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let mut list: Vec<SessionSummary> = sessions
            .values()
            .map(|r| SessionSummary {
                id: r.id.clone(),
                created_ms: r.created_ms,
                updated_ms: r.updated_ms,
                message_count: r.messages.len() as u64,
                title: session_title(&r.messages),
                folders: r.settings.folders.clone(),
                provider: r.provider,
            })
            .collect();
        list.sort_by(|a, b| b.updated_ms.cmp(&a.updated_ms).then(a.id.cmp(&b.id)));
        Ok(list)
    }
}
