//! One running local wall: the bubblewrap process tree, the runner connection, the proxy, and
//! the wall's host folder (private home with credential copies, private `/tmp`), all removed at
//! close.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use protocol::{Attestation, NetworkDenial};
use tokio::process::Child;
use tokio::sync::{Mutex, broadcast, mpsc};
use tokio_util::sync::CancellationToken;
use tool_protocol::ToolRequest;

use crate::error::ProviderError;
use crate::local::proxy::{DenialLog, ProxyStats};
use crate::local::resources::WallCgroup;
use crate::protected::ProtectedFiles;
use crate::runner_client::{OutputChunk, RunnerConnection};
use crate::sandbox::{ClosedSandbox, Sandbox, ToolCallOutcome};
use crate::sandbox_folder::remove_sandbox_folder;

/// A running local wall.
pub struct LocalSandbox {
    pub(crate) id: String,
    pub(crate) connection: RunnerConnection,
    pub(crate) attestation: Attestation,
    pub(crate) child: Mutex<Option<Child>>,
    /// The wall's cgroup, removed (every process in it killed) at close.
    pub(crate) cgroup: Option<WallCgroup>,
    /// The wall's own processes in its cgroup (bubblewrap, the runner, the bridge), seen
    /// before any command ran.
    pub(crate) own_processes: Vec<u32>,
    /// Forks the cgroup had refused at the last look.
    pub(crate) refused_forks_seen: std::sync::Mutex<u64>,
    pub(crate) dir: PathBuf,
    pub(crate) denials: DenialLog,
    pub(crate) proxy_stats: ProxyStats,
    pub(crate) stop_proxy: CancellationToken,
    /// The session's folders, swept for set-id files at close.
    pub(crate) folders: Vec<protocol::FolderGrant>,
    /// The most entries that sweep looks at ([`super::LocalConfig::set_id_sweep_limit`]).
    pub(crate) set_id_sweep_limit: usize,
    pub(crate) protected: Arc<ProtectedFiles>,
    /// Keeps this process's orphan reaping off the wall until it is dropped.
    pub(crate) _own_wall: crate::local::reaping::OwnWall,
}

impl std::fmt::Debug for LocalSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalSandbox")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl LocalSandbox {
    /// The wall's folder on the host (private home, `/tmp`, sockets), deleted at close.
    pub fn host_dir(&self) -> &Path {
        &self.dir
    }

    /// The private home's folder on the host.
    pub fn private_home(&self) -> PathBuf {
        self.dir.join("home")
    }

    /// Every network denial from now on, as it happens (for the audit trail).
    pub fn subscribe_denials(&self) -> broadcast::Receiver<NetworkDenial> {
        self.denials.subscribe()
    }

    /// The wall's cgroup, if the machine gave it one.
    pub fn cgroup(&self) -> Option<&WallCgroup> {
        self.cgroup.as_ref()
    }

    /// The proxy's connections open now and refused over its limits so far.
    pub fn proxy_stats(&self) -> &ProxyStats {
        &self.proxy_stats
    }

    /// Denials recorded since the wall started (attestation canary included).
    pub fn all_denials(&self) -> Vec<NetworkDenial> {
        self.denials.since(0)
    }
}

/// How near its process limit a sandbox must be (and have had forks refused) before the wall
/// stops what its commands left running.
const PROCESS_LIMIT_MARGIN: u64 = 16;

impl LocalSandbox {
    /// When the sandbox ran into its process limit and is still at it, kills every process
    /// its commands left running (the wall's own kept) so commands can start again; returns
    /// the note for the model.
    fn relieve_process_limit(&self) -> Option<String> {
        let cgroup = self.cgroup.as_ref()?;
        let refused_forks = cgroup.refused_forks()?;
        {
            let mut seen = self
                .refused_forks_seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let more = refused_forks > *seen;
            *seen = refused_forks;
            if !more {
                return None;
            }
        }
        let pressure = cgroup.process_pressure()?;
        if pressure.current + PROCESS_LIMIT_MARGIN < pressure.max {
            return None;
        }
        let max = pressure.max;
        Some(match cgroup.stop_all_but(&self.own_processes) {
            Ok(stopped) => {
                tracing::warn!(sandbox = %self.id, stopped, max, "the sandbox was at its process limit; its commands' processes were stopped");
                format!(
                    "the sandbox reached its limit of {max} processes, so commands could not start; \
                     Paddock stopped the {stopped} processes its commands had left running. Start \
                     fewer processes, or fewer in the background."
                )
            }
            Err(e) => format!(
                "the sandbox reached its limit of {max} processes, and Paddock could not stop \
                 them: {e}"
            ),
        })
    }
}

#[async_trait]
impl Sandbox for LocalSandbox {
    fn id(&self) -> &str {
        &self.id
    }

    fn attestation(&self) -> &Attestation {
        &self.attestation
    }

    fn protected(&self) -> Option<&Arc<ProtectedFiles>> {
        Some(&self.protected)
    }

    async fn call(
        &self,
        request: ToolRequest,
        output: Option<mpsc::UnboundedSender<OutputChunk>>,
        cancel: &CancellationToken,
    ) -> ToolCallOutcome {
        let mark = self.denials.mark();
        // Only a command starts processes, and a call that could not start a thread fails:
        // other calls pay nothing for the check (three small cgroup files).
        let starts_processes = matches!(request, ToolRequest::RunBash(_));
        let mut notes = Vec::new();
        if starts_processes {
            notes.extend(self.relieve_process_limit());
        }
        let result = self.connection.call(request, output, cancel).await;
        if starts_processes || result.is_err() {
            notes.extend(self.relieve_process_limit());
        }
        ToolCallOutcome {
            result,
            denials: self.denials.since(mark),
            notes,
        }
    }

    async fn close(&self) -> Result<ClosedSandbox, ProviderError> {
        let child = self.child.lock().await.take();
        let first_close = child.is_some();
        if let Some(mut child) = child {
            self.connection.shutdown(Duration::from_secs(2)).await;
            drop(child.stdin.take());
            if tokio::time::timeout(Duration::from_secs(2), child.wait())
                .await
                .is_err()
            {
                child
                    .kill()
                    .await
                    .map_err(|e| ProviderError::io("stopping the local wall", e))?;
            }
        }
        self.stop_proxy.cancel();
        let cgroup = match self.cgroup.clone() {
            Some(cgroup) => tokio::task::spawn_blocking(move || cgroup.remove())
                .await
                .unwrap_or_else(|e| Err(format!("removing the wall's cgroup: {e}"))),
            None => Ok(()),
        };
        // After the cgroup is gone, so nothing of the sandbox still runs.
        let checks = if first_close {
            vec![
                crate::set_id_sweep::sweep_at_close(
                    &self.id,
                    &self.folders,
                    self.set_id_sweep_limit,
                )
                .canary(),
            ]
        } else {
            Vec::new()
        };
        remove_sandbox_folder(&self.dir)
            .map_err(|e| ProviderError::io(format!("removing {}", self.dir.display()), e))?;
        cgroup.map_err(|reason| ProviderError::Unavailable { reason })?;
        Ok(ClosedSandbox { checks })
    }
}

impl Drop for LocalSandbox {
    fn drop(&mut self) {
        // Not closed: the child dies with kill_on_drop; the folder must not outlive us.
        self.stop_proxy.cancel();
        if let Ok(mut child) = self.child.try_lock()
            && let Some(child) = child.as_mut()
        {
            let _ = child.start_kill();
        }
        if let Some(cgroup) = self.cgroup.take() {
            // Its processes take a moment to go; the cgroup is removed once they have.
            std::thread::spawn(move || cgroup.remove());
        }
        let _ = remove_sandbox_folder(&self.dir);
    }
}
