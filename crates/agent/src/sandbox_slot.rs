//! The session's sandbox: created on the first tool call that needs it, rebuilt when the
//! session's folders change, and never replaced by another provider when refused.

use std::sync::Arc;

use protocol::{EventMsg, SessionSettings};
use sandbox_provider::protected::ProtectedFiles;
use sandbox_provider::{ProviderError, Sandbox, SandboxProvider, SandboxRequest};
use tokio::sync::{OwnedRwLockReadGuard, RwLock, mpsc};

use crate::event_bus::{SessionEvents, SinkError};

/// The command that explains why a wall cannot be built.
pub const DIAGNOSE_COMMAND: &str = "paddock machine sandbox status";

/// Why no sandbox could be had.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SlotError {
    #[error("{0}")]
    Refused(#[from] ProviderError),
    #[error(transparent)]
    Sink(#[from] SinkError),
}

type Current = Option<Arc<dyn Sandbox>>;

/// A live sandbox, held for the length of one call.
pub(crate) struct SandboxLease {
    guard: OwnedRwLockReadGuard<Current>,
}

impl SandboxLease {
    pub(crate) fn sandbox(&self) -> Option<&Arc<dyn Sandbox>> {
        self.guard.as_ref()
    }
}

pub(crate) struct SandboxSlot {
    provider: Arc<dyn SandboxProvider>,
    /// Calls hold a read guard while they run, so a rebuild waits for them to finish.
    current: Arc<RwLock<Current>>,
}

/// The sandbox request for a session's settings.
pub(crate) fn wall_request(session_id: &str, settings: &SessionSettings) -> SandboxRequest {
    let cwd = settings
        .cwd
        .clone()
        .or_else(|| settings.folders.first().map(|f| f.path.clone()))
        .unwrap_or_default();
    SandboxRequest {
        session_id: session_id.to_owned(),
        folders: settings.folders.clone(),
        cwd,
        network_profile: settings.network_profile,
        extra_hosts: settings.extra_hosts.clone(),
        credentials: settings.credentials.clone(),
    }
}

impl SandboxSlot {
    pub(crate) fn new(provider: Arc<dyn SandboxProvider>) -> Self {
        Self {
            provider,
            current: Arc::new(RwLock::new(None)),
        }
    }

    pub(crate) fn provider(&self) -> &Arc<dyn SandboxProvider> {
        &self.provider
    }

    /// Whether a sandbox is live now.
    pub(crate) async fn is_live(&self) -> bool {
        self.current.read().await.is_some()
    }

    /// The live sandbox, building it first when there is none.
    pub(crate) async fn acquire(
        &self,
        request: &SandboxRequest,
        events: &SessionEvents,
        turn_id: Option<&str>,
    ) -> Result<SandboxLease, SlotError> {
        loop {
            let guard = Arc::clone(&self.current).read_owned().await;
            if guard.is_some() {
                return Ok(SandboxLease { guard });
            }
            drop(guard);
            let mut slot = self.current.write().await;
            if slot.is_none() {
                let sandbox = self.build(request, events, turn_id).await?;
                events
                    .emit(
                        turn_id,
                        EventMsg::SandboxReady {
                            sandbox_id: sandbox.id().to_owned(),
                            enforcement: sandbox.enforcement(),
                            attestation: sandbox.attestation().clone(),
                        },
                    )
                    .await?;
                *slot = Some(sandbox);
            }
        }
    }

    /// The live sandbox, if one is built (for operations on the wall itself: live policy
    /// changes, drafted rules).
    pub(crate) async fn current(&self) -> Option<Arc<dyn Sandbox>> {
        self.current.read().await.clone()
    }

    /// Rebuilds a live sandbox for new settings (waiting for running calls to end first).
    /// `request` is read once the running calls have ended, so the rebuilt wall has the
    /// settings in force then. When no sandbox is live nothing happens: the next call builds
    /// one with the new settings anyway. `rebuilt` runs before any call can use the new
    /// sandbox.
    pub(crate) async fn recreate(
        &self,
        request: impl FnOnce() -> SandboxRequest,
        reason: &str,
        events: &SessionEvents,
        rebuilt: impl FnOnce(),
    ) -> Result<(), SlotError> {
        let mut slot = self.current.write().await;
        let Some(old) = slot.take() else {
            return Ok(());
        };
        let request = request();
        close_and_record(old.as_ref(), events).await?;
        // Before the new wall takes what is there as its start: what the old one's processes
        // left behind is found and undone now.
        if let Some(files) = old.protected().cloned() {
            crate::protected::sweep_and_report(events, None, None, files).await?;
        }
        let sandbox = self.build(&request, events, None).await?;
        events
            .emit(
                None,
                EventMsg::SandboxRecreated {
                    sandbox_id: sandbox.id().to_owned(),
                    enforcement: sandbox.enforcement(),
                    attestation: sandbox.attestation().clone(),
                    reason: reason.to_owned(),
                },
            )
            .await?;
        rebuilt();
        *slot = Some(sandbox);
        Ok(())
    }

    /// Tears the sandbox down, if one is live, and records what the close found; returns its
    /// protected files for a last sweep (its processes are gone by then).
    pub(crate) async fn close(
        &self,
        events: &SessionEvents,
    ) -> Result<Option<Arc<ProtectedFiles>>, SlotError> {
        let Some(sandbox) = self.current.write().await.take() else {
            return Ok(None);
        };
        close_and_record(sandbox.as_ref(), events).await?;
        Ok(sandbox.protected().cloned())
    }

    /// The live sandbox's protected files, if a sandbox is live.
    pub(crate) async fn protected(&self) -> Option<Arc<ProtectedFiles>> {
        self.current
            .read()
            .await
            .as_ref()
            .and_then(|s| s.protected().cloned())
    }

    /// Builds a sandbox, turning the provider's progress into events.
    async fn build(
        &self,
        request: &SandboxRequest,
        events: &SessionEvents,
        turn_id: Option<&str>,
    ) -> Result<Arc<dyn Sandbox>, SlotError> {
        let (progress_tx, mut progress_rx) = mpsc::unbounded_channel::<String>();
        let progress = move |message: String| {
            let _ = progress_tx.send(message);
        };
        let result = {
            let start = self.provider.start(request, &progress);
            tokio::pin!(start);
            loop {
                tokio::select! {
                    result = &mut start => break result,
                    Some(message) = progress_rx.recv() => {
                        events.emit(turn_id, EventMsg::SandboxProvisioning { message }).await?;
                    }
                }
            }
        };
        drop(progress);
        while let Ok(message) = progress_rx.try_recv() {
            events
                .emit(turn_id, EventMsg::SandboxProvisioning { message })
                .await?;
        }
        match result {
            Ok(sandbox) => Ok(sandbox),
            Err(error) => {
                events
                    .emit(
                        turn_id,
                        EventMsg::SandboxRefused {
                            reason: error.to_string(),
                            diagnose: DIAGNOSE_COMMAND.to_owned(),
                        },
                    )
                    .await?;
                Err(SlotError::Refused(error))
            }
        }
    }
}

/// Closes `sandbox` and commits a `sandbox_closed` event with the checks the close ran on
/// what the sandbox left (set-id files stripped from the read-write folders), so they reach
/// the audit trail. A close that fails is logged; the sandbox is gone from the slot either way.
async fn close_and_record(sandbox: &dyn Sandbox, events: &SessionEvents) -> Result<(), SlotError> {
    match sandbox.close().await {
        Ok(closed) => {
            events
                .emit(
                    None,
                    EventMsg::SandboxClosed {
                        sandbox_id: sandbox.id().to_owned(),
                        checks: closed.checks,
                    },
                )
                .await?;
        }
        Err(e) => tracing::warn!(sandbox = sandbox.id(), "closing the sandbox failed: {e}"),
    }
    Ok(())
}
