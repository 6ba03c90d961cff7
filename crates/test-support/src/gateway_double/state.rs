//! The double's memory: sandboxes (phase, live policy, logs, drafted rules), providers, and a
//! change counter that watch streams follow.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use openshell_proto::datamodel::{ObjectMeta, Provider};
use openshell_proto::sandbox::SandboxPolicy;
use openshell_proto::v1::{
    PolicyChunk, Sandbox, SandboxCondition, SandboxLogLine, SandboxPhase, SandboxSpec,
    SandboxStatus,
};
use sha2::{Digest, Sha256};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::launch::Layout;

/// One sandbox as the double holds it.
#[derive(Debug)]
pub struct Record {
    pub id: String,
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub spec: SandboxSpec,
    /// The live policy (creation policy plus approved and merged rules).
    pub policy: Arc<Mutex<SandboxPolicy>>,
    pub policy_version: u32,
    pub phase: SandboxPhase,
    pub conditions: Vec<SandboxCondition>,
    pub exit_code: Option<i32>,
    pub layout: Option<Arc<Layout>>,
    pub logs: Vec<SandboxLogLine>,
    pub drafts: Vec<PolicyChunk>,
    pub draft_version: u64,
    /// Stops the main process, the proxy and the denial feed.
    pub stop: CancellationToken,
    /// Set once deletion was accepted.
    pub deleting: bool,
}

impl Record {
    pub fn to_proto(&self) -> Sandbox {
        Sandbox {
            metadata: Some(ObjectMeta {
                id: self.id.clone(),
                name: self.name.clone(),
                labels: self.labels.clone(),
                annotations: self.annotations.clone(),
                workspace: openshell_proto::DEFAULT_WORKSPACE.to_owned(),
                ..ObjectMeta::default()
            }),
            spec: Some(self.spec.clone()),
            status: Some(SandboxStatus {
                conditions: self.conditions.clone(),
                phase: self.phase.into(),
                current_policy_version: self.policy_version,
                exit_code: self.exit_code,
                ..SandboxStatus::default()
            }),
        }
    }

    /// The token an approval must carry: bound to the chunk and the current policy version,
    /// so any policy change makes earlier tokens stale.
    pub fn review_token(&self, chunk_id: &str) -> String {
        let digest = Sha256::digest(format!("{}:{chunk_id}:{}", self.id, self.policy_version));
        hex::encode(&digest[..12])
    }

    pub fn policy(&self) -> SandboxPolicy {
        self.policy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Everything the double remembers, behind one lock.
#[derive(Debug, Default)]
pub struct Memory {
    pub sandboxes: BTreeMap<String, Record>,
    pub providers: BTreeMap<String, Provider>,
    /// Every UpdateConfig request's scope, for tests that assert "never global".
    pub update_scopes: Vec<bool>,
}

/// Shared state plus the change notification.
#[derive(Debug)]
pub struct State {
    memory: Mutex<Memory>,
    changed: watch::Sender<u64>,
}

impl Default for State {
    fn default() -> Self {
        Self {
            memory: Mutex::default(),
            changed: watch::channel(0).0,
        }
    }
}

impl State {
    pub fn lock(&self) -> MutexGuard<'_, Memory> {
        self.memory.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells watchers something changed.
    pub fn touch(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Applies `f` to the named sandbox, then notifies watchers.
    pub fn update<T>(&self, name: &str, f: impl FnOnce(&mut Record) -> T) -> Option<T> {
        let out = self.lock().sandboxes.get_mut(name).map(f);
        self.touch();
        out
    }

    pub fn set_phase(&self, name: &str, phase: SandboxPhase, reason: &str, message: &str) {
        self.update(name, |record| {
            record.phase = phase;
            let ready = phase == SandboxPhase::Ready;
            record.conditions = vec![SandboxCondition {
                r#type: "Ready".into(),
                status: if ready { "True" } else { "False" }.into(),
                reason: reason.into(),
                message: message.into(),
                transition_time: Some(super::now_timestamp()),
            }];
        });
    }

    /// The last `lines` log messages of `target` (oldest first).
    pub fn log_tail(&self, name: &str, target: &str, lines: usize) -> Vec<String> {
        let memory = self.lock();
        let Some(record) = memory.sandboxes.get(name) else {
            return Vec::new();
        };
        let mut tail: Vec<String> = record
            .logs
            .iter()
            .rev()
            .filter(|line| line.target == target)
            .take(lines)
            .map(|line| line.message.clone())
            .collect();
        tail.reverse();
        tail
    }

    /// Appends a log line (source `sandbox`).
    pub fn log(&self, name: &str, level: &str, target: &str, message: String) {
        self.update(name, |record| {
            record.logs.push(SandboxLogLine {
                sandbox_id: record.id.clone(),
                level: level.into(),
                target: target.into(),
                message,
                source: "sandbox".into(),
                fields: BTreeMap::new(),
                event_time: Some(super::now_timestamp()),
            });
        });
    }
}
