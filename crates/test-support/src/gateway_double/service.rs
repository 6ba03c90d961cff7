//! The double's RPCs: status and identity, the sandbox lifecycle (with the main process run
//! for real), logs and watches, live policy, drafted rules and providers.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use openshell_proto::sandbox::{GetSandboxConfigRequest, GetSandboxConfigResponse};
use openshell_proto::v1::open_shell_server::OpenShell;
use openshell_proto::v1::{
    ApproveDraftChunkRequest, ApproveDraftChunkResponse, ComputeDriverInfo, CreateProviderRequest,
    CreateSandboxRequest, DeleteProviderRequest, DeleteProviderResponse, DeleteSandboxRequest,
    DeleteSandboxResponse, DeletionOutcome, ExecSandboxEvent, ExecSandboxInput, ExecSandboxRequest,
    GetCurrentUserRequest, GetCurrentUserResponse, GetDraftPolicyRequest, GetDraftPolicyResponse,
    GetGatewayInfoRequest, GetGatewayInfoResponse, GetSandboxLogsRequest, GetSandboxLogsResponse,
    GetSandboxRequest, HealthRequest, HealthResponse, ListProvidersRequest, ListProvidersResponse,
    ListSandboxesRequest, ListSandboxesResponse, ProviderResponse, RejectDraftChunkRequest,
    RejectDraftChunkResponse, SandboxPhase, SandboxResponse, SandboxStreamEvent, ServiceStatus,
    UpdateConfigRequest, UpdateConfigResponse, WatchSandboxRequest, sandbox_stream_event,
};
use sandbox_provider::local::proxy::{self, BridgeToken, DenialLog, ProxyConfig, StaticResolver};
use tokio_util::sync::CancellationToken;
use tonic::codegen::BoxStream;
use tonic::{Request, Response, Status, Streaming};

use super::egress::{self, LiveEgress};
use super::launch::{self, Layout, Mount, WORKDIR};
use super::state::{Record, State};
use super::{DOUBLE_VERSION, DoubleConfig, Knobs, get, pki, validate};

/// The log target of a sandbox main process's stderr lines.
const MAIN_LOG_TARGET: &str = "main";
/// How many of those lines a `MainProcessExited` condition quotes.
const STDERR_TAIL_LINES: usize = 5;
/// How long an exited main process's stderr is read to its end before the condition is set.
const STDERR_DRAIN: Duration = Duration::from_secs(2);

/// Who called.
pub struct Principal {
    pub subject: String,
    pub roles: Vec<String>,
}

#[derive(Clone)]
pub struct DoubleService {
    pub(super) config: Arc<DoubleConfig>,
    pub(super) state: Arc<State>,
    pub(super) knobs: Arc<Knobs>,
}

impl DoubleService {
    pub fn new(config: DoubleConfig, state: Arc<State>, knobs: Arc<Knobs>) -> Self {
        Self {
            config: Arc::new(config),
            state,
            knobs,
        }
    }

    /// The caller's principal: the bearer token (OIDC mode), the verified client certificate
    /// (mTLS), or anonymous on a plaintext double.
    pub(super) fn principal<T>(&self, request: &Request<T>) -> Result<Principal, Status> {
        if get(&self.knobs.reject_credentials) {
            return Err(Status::unauthenticated(
                "the gateway no longer accepts these credentials",
            ));
        }
        if let Some(token) = &self.config.bearer_token {
            let presented = request
                .metadata()
                .get("authorization")
                .and_then(|v| v.to_str().ok());
            return match presented {
                Some(value) if value == format!("Bearer {token}") => Ok(Principal {
                    subject: "oidc-user".into(),
                    roles: vec!["openshell-admin".into()],
                }),
                Some(_) => Err(Status::unauthenticated("the bearer token is not valid")),
                None => Err(Status::unauthenticated("a bearer token is required")),
            };
        }
        if self.config.tls.is_some() {
            let certs = request
                .peer_certs()
                .ok_or_else(|| Status::unauthenticated("a client certificate is required"))?;
            let (subject, roles) = certs
                .first()
                .and_then(|der| pki::subject_of(der.as_ref()))
                .ok_or_else(|| Status::unauthenticated("the client certificate has no subject"))?;
            return Ok(Principal { subject, roles });
        }
        Ok(Principal {
            subject: "anonymous".into(),
            roles: vec!["allow_unauthenticated_users".into()],
        })
    }

    pub(super) fn ready_layout(&self, name: &str) -> Result<Arc<Layout>, Status> {
        let memory = self.state.lock();
        let record = memory
            .sandboxes
            .get(name)
            .ok_or_else(|| Status::not_found(format!("sandbox {name} not found")))?;
        match (&record.layout, record.phase) {
            (Some(layout), SandboxPhase::Ready) => Ok(layout.clone()),
            _ => Err(Status::failed_precondition("sandbox is not ready")),
        }
    }

    fn base_env(&self, request: &CreateSandboxRequest) -> Result<BTreeMap<String, String>, Status> {
        let spec = request.spec.clone().unwrap_or_default();
        let proxy = format!("http://127.0.0.1:{}", paddock_wall::config::BRIDGE_PORT);
        let mut env = BTreeMap::from([
            ("OPENSHELL_SANDBOX".to_owned(), "1".to_owned()),
            ("HOME".to_owned(), WORKDIR.to_owned()),
            ("USER".to_owned(), "sandbox".to_owned()),
            ("SHELL".to_owned(), "/bin/bash".to_owned()),
            (
                "PATH".to_owned(),
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_owned(),
            ),
            ("TERM".to_owned(), "dumb".to_owned()),
            ("NODE_USE_ENV_PROXY".to_owned(), "1".to_owned()),
            ("grpc_proxy".to_owned(), proxy.clone()),
        ]);
        for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
            env.insert(name.to_owned(), proxy.clone());
            env.insert(name.to_ascii_lowercase(), proxy.clone());
        }
        for name in ["NO_PROXY", "no_proxy"] {
            env.insert(name.to_owned(), "localhost,127.0.0.1,::1".to_owned());
        }
        let template_env = spec.template.clone().unwrap_or_default().environment;
        for (key, value) in template_env.iter().chain(&spec.environment) {
            if !key.starts_with("OPENSHELL_") {
                env.insert(key.clone(), value.clone());
            }
        }
        let memory = self.state.lock();
        for provider in &spec.providers {
            let stored = memory.providers.get(provider).ok_or_else(|| {
                Status::failed_precondition(format!("provider {provider} does not exist"))
            })?;
            for key in stored.credentials.keys() {
                env.insert(key.clone(), format!("openshell:resolve:env:{key}"));
            }
        }
        Ok(env)
    }

    /// Provisions, launches the main process inside the wall, and follows it until it ends.
    async fn run_sandbox(
        self,
        name: String,
        layout: Arc<Layout>,
        egress: Arc<LiveEgress>,
        stop: CancellationToken,
    ) {
        let delay = get(&self.knobs.ready_delay);
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(delay) => {}
        }
        let mut held = self.knobs.held.subscribe();
        tokio::select! {
            () = stop.cancelled() => return,
            _ = held.wait_for(|held| !*held) => {}
        }
        let fail = |reason: &str, message: String| {
            self.state
                .set_phase(&name, SandboxPhase::Error, reason, &message);
        };
        if let Err(e) = layout.prepare() {
            return fail(
                "ProvisionFailed",
                format!("preparing the sandbox's folders: {e}"),
            );
        }
        let denials = DenialLog::default();
        let mut resolver = StaticResolver::new();
        for (host, ips) in &self.config.hosts {
            resolver = resolver.with(host, ips);
        }
        let mut proxy_config = ProxyConfig::new(egress, Arc::new(resolver), denials.clone());
        proxy_config.bridge_token = Some(layout.bridge_token.clone());
        if let Err(e) = proxy::start(&layout.proxy_socket(), proxy_config, stop.clone()) {
            return fail(
                "ProvisionFailed",
                format!("starting the sandbox proxy: {e}"),
            );
        }
        if let Err(e) =
            std::os::unix::fs::chown(layout.proxy_socket(), Some(layout.uid), Some(layout.gid))
        {
            return fail(
                "ProvisionFailed",
                format!("handing the proxy socket over: {e}"),
            );
        }
        let mut feed = denials.subscribe();
        let (state, feed_name, feed_stop) = (self.state.clone(), name.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = feed_stop.cancelled() => break,
                    denial = feed.recv() => match denial {
                        Ok(denial) => egress::record_denial(&state, &feed_name, &denial),
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(_) => break,
                    },
                }
            }
        });
        let command = self
            .state
            .lock()
            .sandboxes
            .get(&name)
            .map(|r| r.spec.command.clone())
            .unwrap_or_default();
        let spawned = layout
            .command(&command, layout.env.clone(), WORKDIR)
            .and_then(|mut c| c.spawn());
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => return fail("StartFailed", format!("starting the main process: {e}")),
        };
        let stderr_reader = child.stderr.take().map(|stderr| {
            let (state, name) = (self.state.clone(), name.clone());
            tokio::spawn(async move {
                use tokio::io::AsyncBufReadExt;
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    state.log(&name, "INFO", MAIN_LOG_TARGET, line);
                }
            })
        });
        self.state.set_phase(
            &name,
            SandboxPhase::Ready,
            "Ready",
            "the main process is running",
        );
        tokio::select! {
            () = stop.cancelled() => {
                let _ = child.kill().await;
            }
            status = child.wait() => {
                let code = status.ok().and_then(|s| {
                    use std::os::unix::process::ExitStatusExt;
                    s.code().or_else(|| s.signal().map(|n| 128 + n))
                }).unwrap_or(1);
                let phase = if code == 0 { SandboxPhase::Completed } else { SandboxPhase::Error };
                // The last lines the process wrote, so a failed start says why (a process that
                // left a child holding its stderr open is not waited for long).
                if let Some(reader) = stderr_reader {
                    let _ = tokio::time::timeout(STDERR_DRAIN, reader).await;
                }
                let mut message = format!("the main process exited with {code}");
                let tail = self.state.log_tail(&name, MAIN_LOG_TARGET, STDERR_TAIL_LINES);
                if !tail.is_empty() {
                    message.push_str("; its stderr ended with: ");
                    message.push_str(&tail.join(" | "));
                }
                self.state.update(&name, |r| r.exit_code = Some(code));
                self.state.set_phase(&name, phase, "MainProcessExited", &message);
            }
        }
    }
}

pub(super) fn selector_matches(
    selector: &str,
    labels: &BTreeMap<String, String>,
) -> Result<bool, Status> {
    for part in selector.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once('=').ok_or_else(|| {
            Status::invalid_argument(format!("label selector {part:?} is not k=v"))
        })?;
        if labels.get(key.trim()) != Some(&value.trim().to_owned()) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `page_token` is an offset; the next token is empty at the end.
pub(super) fn page<T>(
    items: Vec<T>,
    page_size: i32,
    token: &str,
) -> Result<(Vec<T>, String), Status> {
    let start: usize = if token.is_empty() {
        0
    } else {
        token
            .parse()
            .map_err(|_| Status::invalid_argument(format!("page_token {token:?} is not valid")))?
    };
    let size = usize::try_from(page_size)
        .ok()
        .filter(|s| *s > 0)
        .unwrap_or(100);
    let total = items.len();
    let taken: Vec<T> = items.into_iter().skip(start).take(size).collect();
    let next = if start + size < total {
        (start + size).to_string()
    } else {
        String::new()
    };
    Ok((taken, next))
}

fn terminal(phase: SandboxPhase) -> bool {
    matches!(
        phase,
        SandboxPhase::Ready | SandboxPhase::Error | SandboxPhase::Completed | SandboxPhase::Stopped
    )
}

fn time_ms(t: Option<&openshell_proto::prost_types::Timestamp>) -> i64 {
    t.map_or(0, |t| t.seconds * 1000 + i64::from(t.nanos / 1_000_000))
}

#[tonic::async_trait]
impl OpenShell for DoubleService {
    async fn health(&self, _: Request<HealthRequest>) -> Result<Response<HealthResponse>, Status> {
        Ok(Response::new(HealthResponse {
            status: get(&self.knobs.health).into(),
            version: DOUBLE_VERSION.into(),
        }))
    }

    async fn get_gateway_info(
        &self,
        request: Request<GetGatewayInfoRequest>,
    ) -> Result<Response<GetGatewayInfoResponse>, Status> {
        self.principal(&request)?;
        Ok(Response::new(GetGatewayInfoResponse {
            status: ServiceStatus::Healthy.into(),
            gateway_version: DOUBLE_VERSION.into(),
            compute_drivers: vec![ComputeDriverInfo {
                name: self.config.driver.clone(),
                capabilities: None,
            }],
        }))
    }

    async fn get_current_user(
        &self,
        request: Request<GetCurrentUserRequest>,
    ) -> Result<Response<GetCurrentUserResponse>, Status> {
        let principal = self.principal(&request)?;
        Ok(Response::new(GetCurrentUserResponse {
            subject: principal.subject.clone(),
            display_name: principal.subject,
            roles: principal.roles,
            scopes: Vec::new(),
            identity_provider: if self.config.bearer_token.is_some() {
                "oidc"
            } else {
                "mtls"
            }
            .into(),
        }))
    }

    async fn create_sandbox(
        &self,
        request: Request<CreateSandboxRequest>,
    ) -> Result<Response<SandboxResponse>, Status> {
        self.principal(&request)?;
        let request = request.into_inner();
        let checked = validate::create_request(&self.config, &request)?;
        let env = self.base_env(&request)?;
        let spec = request.spec.clone().unwrap_or_default();
        let policy = spec.policy.clone().unwrap_or_default();
        let filesystem = policy.filesystem.clone().unwrap_or_default();
        let hard = policy
            .landlock
            .as_ref()
            .is_some_and(|l| l.compatibility == "hard_requirement");
        let provided: Vec<String> = checked
            .mounts
            .iter()
            .map(|m| match m {
                Mount::Bind { target, .. } | Mount::Tmpfs { target } => target.clone(),
            })
            .collect();
        let exposed = get(&self.knobs.exposed);
        let rules = launch::landlock_rules(
            &filesystem.read_only,
            &filesystem.read_write,
            filesystem.include_workdir,
            hard,
            &provided,
            &exposed,
        )
        .map_err(Status::failed_precondition)?;
        let mut memory = self.state.lock();
        if memory.sandboxes.contains_key(&request.name) {
            return Err(Status::already_exists(format!(
                "sandbox {} already exists",
                request.name
            )));
        }
        let id = uuid::Uuid::new_v4().to_string();
        let layout = Arc::new(Layout {
            uid: checked.uid,
            gid: checked.gid,
            mounts: checked.mounts,
            shadowed: get(&self.knobs.shadowed),
            exposed,
            rules,
            dir: self.config.state_dir.join(format!("sandbox-{}", &id[..8])),
            env,
            wall: self.config.wall.clone(),
            bwrap: self.config.bwrap.clone(),
            bridge_token: BridgeToken::generate().map_err(|e| {
                Status::internal(format!("drawing the sandbox's bridge token: {e}"))
            })?,
        });
        let live_policy = Arc::new(Mutex::new(policy));
        let egress = Arc::new(LiveEgress {
            policy: live_policy.clone(),
            mapped: self.config.hosts.clone(),
        });
        let stop = CancellationToken::new();
        let record = Record {
            id,
            name: request.name.clone(),
            labels: request.labels.clone(),
            annotations: request.annotations.clone(),
            spec,
            policy: live_policy,
            policy_version: 1,
            phase: SandboxPhase::Provisioning,
            conditions: Vec::new(),
            exit_code: None,
            layout: Some(layout.clone()),
            logs: Vec::new(),
            drafts: Vec::new(),
            draft_version: 0,
            stop: stop.clone(),
            deleting: false,
        };
        let response = record.to_proto();
        memory.sandboxes.insert(request.name.clone(), record);
        drop(memory);
        self.state.touch();
        tokio::spawn(self.clone().run_sandbox(request.name, layout, egress, stop));
        Ok(Response::new(SandboxResponse {
            sandbox: Some(response),
        }))
    }

    async fn get_sandbox(
        &self,
        request: Request<GetSandboxRequest>,
    ) -> Result<Response<SandboxResponse>, Status> {
        self.principal(&request)?;
        let request = request.into_inner();
        validate::workspace(request.workspace_scope.as_ref())?;
        let memory = self.state.lock();
        match memory.sandboxes.get(&request.name) {
            Some(record) => Ok(Response::new(SandboxResponse {
                sandbox: Some(record.to_proto()),
            })),
            None => Err(Status::not_found(format!(
                "sandbox {} not found",
                request.name
            ))),
        }
    }

    async fn list_sandboxes(
        &self,
        request: Request<ListSandboxesRequest>,
    ) -> Result<Response<ListSandboxesResponse>, Status> {
        self.principal(&request)?;
        let request = request.into_inner();
        validate::workspace(request.workspace_scope.as_ref())?;
        let mut matching = Vec::new();
        for record in self.state.lock().sandboxes.values() {
            if selector_matches(&request.label_selector, &record.labels)? {
                matching.push(record.to_proto());
            }
        }
        let (sandboxes, next_page_token) = page(matching, request.page_size, &request.page_token)?;
        Ok(Response::new(ListSandboxesResponse {
            sandboxes,
            next_page_token,
        }))
    }

    async fn watch_sandbox(
        &self,
        request: Request<WatchSandboxRequest>,
    ) -> Result<Response<BoxStream<SandboxStreamEvent>>, Status> {
        self.principal(&request)?;
        let request = request.into_inner();
        validate::workspace(request.workspace_scope.as_ref())?;
        if !self.state.lock().sandboxes.contains_key(&request.sandbox) {
            return Err(Status::not_found(format!(
                "sandbox {} not found",
                request.sandbox
            )));
        }
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let state = self.state.clone();
        tokio::spawn(async move {
            let mut changed = state.subscribe();
            let mut sent_logs = 0usize;
            let mut last_phase = None;
            loop {
                let (snapshot, phase, logs) = {
                    let memory = state.lock();
                    let Some(record) = memory.sandboxes.get(&request.sandbox) else {
                        break;
                    };
                    (record.to_proto(), record.phase, record.logs.clone())
                };
                if request.follow_status && last_phase != Some(phase) {
                    last_phase = Some(phase);
                    let event = SandboxStreamEvent {
                        payload: Some(sandbox_stream_event::Payload::Sandbox(snapshot)),
                        cursor: String::new(),
                    };
                    if tx.send(Ok(event)).await.is_err() {
                        break;
                    }
                    if request.stop_on_terminal && terminal(phase) {
                        break;
                    }
                }
                if request.follow_logs {
                    for line in logs.into_iter().skip(sent_logs) {
                        sent_logs += 1;
                        let event = SandboxStreamEvent {
                            payload: Some(sandbox_stream_event::Payload::Log(line)),
                            cursor: sent_logs.to_string(),
                        };
                        if tx.send(Ok(event)).await.is_err() {
                            return;
                        }
                    }
                }
                if changed.changed().await.is_err() {
                    break;
                }
            }
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }

    async fn delete_sandbox(
        &self,
        request: Request<DeleteSandboxRequest>,
    ) -> Result<Response<DeleteSandboxResponse>, Status> {
        self.principal(&request)?;
        let request = request.into_inner();
        validate::workspace(request.workspace_scope.as_ref())?;
        let found = self.state.update(&request.name, |record| {
            record.deleting = true;
            record.phase = SandboxPhase::Deleting;
            record.stop.cancel();
            (record.id.clone(), record.layout.clone())
        });
        let Some((id, layout)) = found else {
            if request.allow_missing {
                return Ok(Response::new(DeleteSandboxResponse {
                    outcome: DeletionOutcome::AlreadyAbsent.into(),
                    sandbox_id: String::new(),
                }));
            }
            return Err(Status::not_found(format!(
                "sandbox {} not found",
                request.name
            )));
        };
        // Asynchronous, as the gateway's: gone a moment after the answer.
        let (state, name, gone_id) = (self.state.clone(), request.name, id.clone());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            let mut memory = state.lock();
            if memory.sandboxes.get(&name).is_some_and(|r| r.id == gone_id) {
                memory.sandboxes.remove(&name);
            }
            drop(memory);
            state.touch();
            if let Some(layout) = layout {
                let _ = std::fs::remove_dir_all(&layout.dir);
            }
        });
        Ok(Response::new(DeleteSandboxResponse {
            outcome: DeletionOutcome::Accepted.into(),
            sandbox_id: id,
        }))
    }

    async fn exec_sandbox(
        &self,
        request: Request<ExecSandboxRequest>,
    ) -> Result<Response<BoxStream<ExecSandboxEvent>>, Status> {
        self.principal(&request)?;
        super::exec::exec(self, &request.into_inner()).map(Response::new)
    }

    async fn exec_sandbox_interactive(
        &self,
        request: Request<Streaming<ExecSandboxInput>>,
    ) -> Result<Response<BoxStream<ExecSandboxEvent>>, Status> {
        self.principal(&request)?;
        super::exec::interactive(self, request.into_inner())
            .await
            .map(Response::new)
    }

    async fn get_sandbox_logs(
        &self,
        request: Request<GetSandboxLogsRequest>,
    ) -> Result<Response<GetSandboxLogsResponse>, Status> {
        self.principal(&request)?;
        let request = request.into_inner();
        validate::workspace(request.workspace_scope.as_ref())?;
        let memory = self.state.lock();
        let record = memory
            .sandboxes
            .get(&request.sandbox)
            .ok_or_else(|| Status::not_found(format!("sandbox {} not found", request.sandbox)))?;
        let since = time_ms(request.since_time.as_ref());
        let mut logs: Vec<_> = record
            .logs
            .iter()
            .filter(|l| time_ms(l.event_time.as_ref()) >= since)
            .filter(|l| request.sources.is_empty() || request.sources.contains(&l.source))
            .cloned()
            .collect();
        let lines = if request.lines == 0 {
            2000
        } else {
            request.lines as usize
        };
        if logs.len() > lines {
            logs.drain(..logs.len() - lines);
        }
        Ok(Response::new(GetSandboxLogsResponse {
            buffer_total: u32::try_from(record.logs.len()).unwrap_or(u32::MAX),
            logs,
        }))
    }

    async fn get_sandbox_config(
        &self,
        request: Request<GetSandboxConfigRequest>,
    ) -> Result<Response<GetSandboxConfigResponse>, Status> {
        self.principal(&request)?;
        self.get_sandbox_config_rpc(request.into_inner())
            .map(Response::new)
    }

    async fn update_config(
        &self,
        request: Request<UpdateConfigRequest>,
    ) -> Result<Response<UpdateConfigResponse>, Status> {
        self.principal(&request)?;
        self.update_config_rpc(request.into_inner())
            .map(Response::new)
    }

    async fn get_draft_policy(
        &self,
        request: Request<GetDraftPolicyRequest>,
    ) -> Result<Response<GetDraftPolicyResponse>, Status> {
        self.principal(&request)?;
        self.get_draft_policy_rpc(request.into_inner())
            .map(Response::new)
    }

    async fn approve_draft_chunk(
        &self,
        request: Request<ApproveDraftChunkRequest>,
    ) -> Result<Response<ApproveDraftChunkResponse>, Status> {
        self.principal(&request)?;
        self.approve_draft_chunk_rpc(request.into_inner())
            .map(Response::new)
    }

    async fn reject_draft_chunk(
        &self,
        request: Request<RejectDraftChunkRequest>,
    ) -> Result<Response<RejectDraftChunkResponse>, Status> {
        self.principal(&request)?;
        self.reject_draft_chunk_rpc(request.into_inner())
            .map(Response::new)
    }

    async fn create_provider(
        &self,
        request: Request<CreateProviderRequest>,
    ) -> Result<Response<ProviderResponse>, Status> {
        self.principal(&request)?;
        self.create_provider_rpc(request.into_inner())
            .map(Response::new)
    }

    async fn delete_provider(
        &self,
        request: Request<DeleteProviderRequest>,
    ) -> Result<Response<DeleteProviderResponse>, Status> {
        self.principal(&request)?;
        self.delete_provider_rpc(request.into_inner())
            .map(Response::new)
    }

    async fn list_providers(
        &self,
        request: Request<ListProvidersRequest>,
    ) -> Result<Response<ListProvidersResponse>, Status> {
        self.principal(&request)?;
        self.list_providers_rpc(request.into_inner())
            .map(Response::new)
    }
}
