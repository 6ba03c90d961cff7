//! Typed calls to the gateway: status, sandbox lifecycle (create, wait for READY, list by label,
//! delete and wait), logs, live policy, drafted rules and providers. Every request names the
//! `default` workspace explicitly (0.1.x requires it).

use std::time::{Duration, Instant};

use openshell_proto::sandbox::GetSandboxConfigRequest;
use openshell_proto::sandbox::GetSandboxConfigResponse;
use openshell_proto::v1::{
    self, ApproveDraftChunkRequest, CreateSandboxRequest, DeleteSandboxRequest, DeletionOutcome,
    GetCurrentUserRequest, GetCurrentUserResponse, GetDraftPolicyRequest, GetGatewayInfoRequest,
    GetGatewayInfoResponse, GetSandboxLogsRequest, GetSandboxRequest, HealthRequest,
    HealthResponse, ListProvidersRequest, ListSandboxesRequest, PolicyChunk,
    RejectDraftChunkRequest, Sandbox, SandboxLogLine, SandboxPhase, UpdateConfigRequest,
    UpdateConfigResponse, WatchSandboxRequest, sandbox_stream_event,
};
use openshell_proto::{datamodel, default_workspace, prost_types};

use super::discovery::GatewayTarget;
use super::transport::{self, GatewayClient, GatewayError};

/// One page of a listing.
const PAGE_SIZE: i32 = 100;
/// How long a deletion may take before we stop waiting.
const DELETE_WAIT: Duration = Duration::from_secs(60);

/// A connected gateway. Cheap to clone (the channel is shared).
#[derive(Clone, Debug)]
pub struct Gateway {
    client: GatewayClient,
    target: GatewayTarget,
}

/// What a sandbox's phase means for a session waiting on it.
fn phase_name(phase: SandboxPhase) -> &'static str {
    match phase {
        SandboxPhase::Unspecified => "unspecified",
        SandboxPhase::Provisioning => "provisioning",
        SandboxPhase::Ready => "ready",
        SandboxPhase::Error => "error",
        SandboxPhase::Deleting => "deleting",
        SandboxPhase::Unknown => "unknown",
        SandboxPhase::Stopping => "stopping",
        SandboxPhase::Stopped => "stopped",
        SandboxPhase::Starting => "starting",
        SandboxPhase::Completed => "completed",
    }
}

/// The sandbox's phase and the message of its conditions, for progress and refusals.
pub fn describe(sandbox: &Sandbox) -> String {
    let status = sandbox.status.clone().unwrap_or_default();
    let mut text = phase_name(status.phase()).to_owned();
    let notes: Vec<String> = status
        .conditions
        .iter()
        .filter(|c| !c.message.is_empty() || !c.reason.is_empty())
        .map(|c| format!("{}={} {}: {}", c.r#type, c.status, c.reason, c.message))
        .collect();
    if let Some(code) = status.exit_code {
        text.push_str(&format!(" (main process exited with {code})"));
    }
    if !notes.is_empty() {
        text.push_str(&format!(" [{}]", notes.join("; ")));
    }
    text
}

pub fn phase_of(sandbox: &Sandbox) -> SandboxPhase {
    sandbox
        .status
        .as_ref()
        .map_or(SandboxPhase::Unspecified, |s| s.phase())
}

pub fn id_of(sandbox: &Sandbox) -> String {
    sandbox
        .metadata
        .as_ref()
        .map(|m| m.id.clone())
        .unwrap_or_default()
}

pub fn time_ms(time: Option<&prost_types::Timestamp>) -> i64 {
    time.map_or(0, |t| {
        t.seconds
            .saturating_mul(1000)
            .saturating_add(i64::from(t.nanos / 1_000_000))
    })
}

pub fn timestamp(ms: i64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: ms.div_euclid(1000),
        nanos: i32::try_from(ms.rem_euclid(1000) * 1_000_000).unwrap_or(0),
    }
}

impl Gateway {
    pub async fn connect(target: GatewayTarget) -> Result<Self, GatewayError> {
        let client = transport::connect(&target).await?;
        Ok(Self { client, target })
    }

    pub fn target(&self) -> &GatewayTarget {
        &self.target
    }

    pub(crate) fn client(&self) -> GatewayClient {
        self.client.clone()
    }

    pub async fn health(&self) -> Result<HealthResponse, GatewayError> {
        Ok(self.client().health(HealthRequest {}).await?.into_inner())
    }

    pub async fn current_user(&self) -> Result<GetCurrentUserResponse, GatewayError> {
        Ok(self
            .client()
            .get_current_user(GetCurrentUserRequest {})
            .await?
            .into_inner())
    }

    pub async fn gateway_info(&self) -> Result<GetGatewayInfoResponse, GatewayError> {
        Ok(self
            .client()
            .get_gateway_info(GetGatewayInfoRequest {})
            .await?
            .into_inner())
    }

    pub async fn create_sandbox(
        &self,
        request: CreateSandboxRequest,
    ) -> Result<Sandbox, GatewayError> {
        let response = self.client().create_sandbox(request).await?.into_inner();
        response
            .sandbox
            .ok_or_else(|| GatewayError::Setup("CreateSandbox answered without a sandbox".into()))
    }

    /// The sandbox, or `None` when the gateway does not know it.
    pub async fn get_sandbox(&self, name: &str) -> Result<Option<Sandbox>, GatewayError> {
        let request = GetSandboxRequest {
            name: name.to_owned(),
            workspace_scope: Some(default_workspace()),
        };
        match self.client().get_sandbox(request).await {
            Ok(response) => Ok(response.into_inner().sandbox),
            Err(status) if status.code() == tonic::Code::NotFound => Ok(None),
            Err(status) => Err(status.into()),
        }
    }

    /// Every sandbox matching `k=v[,k=v]`, across pages.
    pub async fn list_sandboxes(&self, selector: &str) -> Result<Vec<Sandbox>, GatewayError> {
        let mut all = Vec::new();
        let mut page_token = String::new();
        loop {
            let response = self
                .client()
                .list_sandboxes(ListSandboxesRequest {
                    page_size: PAGE_SIZE,
                    page_token: page_token.clone(),
                    label_selector: selector.to_owned(),
                    workspace_scope: Some(default_workspace()),
                })
                .await?
                .into_inner();
            all.extend(response.sandboxes);
            if response.next_page_token.is_empty() || response.next_page_token == page_token {
                return Ok(all);
            }
            page_token = response.next_page_token;
        }
    }

    /// Waits until the sandbox is READY, reporting each phase change. Follows `WatchSandbox`;
    /// when the watch is unavailable or ends early, polls `GetSandbox` with backoff.
    pub async fn wait_ready(
        &self,
        name: &str,
        timeout: Duration,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Sandbox, GatewayError> {
        let deadline = Instant::now() + timeout;
        let mut last = String::new();
        let mut report = |sandbox: &Sandbox| {
            let now = describe(sandbox);
            if now != last {
                progress(format!("sandbox {name}: {now}"));
                last = now;
            }
        };
        let watch = WatchSandboxRequest {
            sandbox: name.to_owned(),
            follow_status: true,
            stop_on_terminal: true,
            workspace_scope: Some(default_workspace()),
            ..WatchSandboxRequest::default()
        };
        if let Ok(Ok(response)) =
            tokio::time::timeout_at(deadline.into(), self.client().watch_sandbox(watch)).await
        {
            let mut stream = response.into_inner();
            while let Ok(Ok(Some(event))) =
                tokio::time::timeout_at(deadline.into(), stream.message()).await
            {
                if let Some(sandbox_stream_event::Payload::Sandbox(sandbox)) = event.payload {
                    report(&sandbox);
                    if let Some(done) = settled(name, sandbox)? {
                        return Ok(done);
                    }
                }
            }
        }
        let mut delay = Duration::from_millis(100);
        loop {
            match self.get_sandbox(name).await? {
                Some(sandbox) => {
                    report(&sandbox);
                    if let Some(done) = settled(name, sandbox)? {
                        return Ok(done);
                    }
                }
                None => {
                    return Err(GatewayError::NotFound(format!(
                        "sandbox {name} disappeared while starting"
                    )));
                }
            }
            if Instant::now() + delay > deadline {
                return Err(GatewayError::Precondition(format!(
                    "sandbox {name} was not ready within {timeout:?} ({last})"
                )));
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(1));
        }
    }

    /// Deletes the sandbox (missing is fine) and, when the gateway accepted the deletion
    /// asynchronously, waits until it is gone (NOT_FOUND or a sandbox with another id).
    pub async fn delete_sandbox(&self, name: &str) -> Result<(), GatewayError> {
        let response = self
            .client()
            .delete_sandbox(DeleteSandboxRequest {
                name: name.to_owned(),
                workspace_scope: Some(default_workspace()),
                allow_missing: true,
                request_id: String::new(),
            })
            .await?
            .into_inner();
        if response.outcome() != DeletionOutcome::Accepted {
            return Ok(());
        }
        let deadline = Instant::now() + DELETE_WAIT;
        let mut delay = Duration::from_millis(50);
        loop {
            match self.get_sandbox(name).await? {
                None => return Ok(()),
                Some(sandbox)
                    if !response.sandbox_id.is_empty()
                        && id_of(&sandbox) != response.sandbox_id =>
                {
                    return Ok(());
                }
                Some(_) if Instant::now() > deadline => {
                    return Err(GatewayError::Precondition(format!(
                        "sandbox {name} was still being deleted after {DELETE_WAIT:?}"
                    )));
                }
                Some(_) => {}
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_millis(500));
        }
    }

    /// The sandbox's log lines at or after `since_ms` (sandbox source).
    pub async fn logs_since(
        &self,
        name: &str,
        since_ms: i64,
    ) -> Result<Vec<SandboxLogLine>, GatewayError> {
        let response = self
            .client()
            .get_sandbox_logs(GetSandboxLogsRequest {
                sandbox: name.to_owned(),
                lines: 0,
                sources: vec!["sandbox".into()],
                min_level: String::new(),
                workspace_scope: Some(default_workspace()),
                since_time: Some(timestamp(since_ms)),
            })
            .await?
            .into_inner();
        Ok(response.logs)
    }

    pub async fn draft_chunks(
        &self,
        name: &str,
        status: &str,
    ) -> Result<Vec<PolicyChunk>, GatewayError> {
        let response = self
            .client()
            .get_draft_policy(GetDraftPolicyRequest {
                sandbox: name.to_owned(),
                status_filter: status.to_owned(),
                workspace_scope: Some(default_workspace()),
            })
            .await?
            .into_inner();
        Ok(response.chunks)
    }

    pub async fn approve_chunk(
        &self,
        name: &str,
        chunk_id: &str,
        review_token: &str,
    ) -> Result<u32, GatewayError> {
        let response = self
            .client()
            .approve_draft_chunk(ApproveDraftChunkRequest {
                sandbox: name.to_owned(),
                chunk_id: chunk_id.to_owned(),
                workspace_scope: Some(default_workspace()),
                review_token: review_token.to_owned(),
                request_id: String::new(),
            })
            .await?
            .into_inner();
        Ok(response.policy_version)
    }

    pub async fn reject_chunk(
        &self,
        name: &str,
        chunk_id: &str,
        reason: &str,
    ) -> Result<(), GatewayError> {
        self.client()
            .reject_draft_chunk(RejectDraftChunkRequest {
                sandbox: name.to_owned(),
                chunk_id: chunk_id.to_owned(),
                reason: reason.to_owned(),
                workspace_scope: Some(default_workspace()),
                request_id: String::new(),
            })
            .await?;
        Ok(())
    }

    /// Applies merge operations to the sandbox's own policy (never the global one).
    pub async fn merge_policy(
        &self,
        name: &str,
        operations: Vec<v1::PolicyMergeOperation>,
    ) -> Result<UpdateConfigResponse, GatewayError> {
        Ok(self
            .client()
            .update_config(UpdateConfigRequest {
                sandbox: name.to_owned(),
                global: false,
                merge_operations: operations,
                workspace_scope: Some(default_workspace()),
                ..UpdateConfigRequest::default()
            })
            .await?
            .into_inner())
    }

    pub async fn sandbox_config(
        &self,
        name: &str,
    ) -> Result<GetSandboxConfigResponse, GatewayError> {
        Ok(self
            .client()
            .get_sandbox_config(GetSandboxConfigRequest {
                name: name.to_owned(),
                workspace_scope: Some(default_workspace()),
            })
            .await?
            .into_inner())
    }

    pub async fn create_provider(
        &self,
        request: v1::CreateProviderRequest,
    ) -> Result<(), GatewayError> {
        self.client().create_provider(request).await?;
        Ok(())
    }

    pub async fn delete_provider(
        &self,
        request: v1::DeleteProviderRequest,
    ) -> Result<(), GatewayError> {
        self.client().delete_provider(request).await?;
        Ok(())
    }

    /// Providers matching `k=v[,k=v]`, across pages.
    pub async fn list_providers(
        &self,
        selector: &str,
    ) -> Result<Vec<datamodel::Provider>, GatewayError> {
        let mut all = Vec::new();
        let mut page_token = String::new();
        loop {
            let response = self
                .client()
                .list_providers(ListProvidersRequest {
                    page_size: PAGE_SIZE,
                    page_token: page_token.clone(),
                    workspace_scope: Some(default_workspace()),
                    label_selector: selector.to_owned(),
                })
                .await?
                .into_inner();
            all.extend(response.providers);
            if response.next_page_token.is_empty() || response.next_page_token == page_token {
                return Ok(all);
            }
            page_token = response.next_page_token;
        }
    }
}

/// `Some` when the sandbox reached READY; an error for a phase a session cannot use.
fn settled(name: &str, sandbox: Sandbox) -> Result<Option<Sandbox>, GatewayError> {
    match phase_of(&sandbox) {
        SandboxPhase::Ready => Ok(Some(sandbox)),
        SandboxPhase::Error
        | SandboxPhase::Completed
        | SandboxPhase::Stopped
        | SandboxPhase::Stopping
        | SandboxPhase::Deleting => Err(GatewayError::Precondition(format!(
            "sandbox {name} did not become ready: {}",
            describe(&sandbox)
        ))),
        _ => Ok(None),
    }
}
