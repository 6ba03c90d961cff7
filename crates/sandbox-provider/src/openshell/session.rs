//! One session's OpenShell sandbox: the attached runner stream (re-attached after a loss,
//! without losing the sandbox), denials correlated with each command, drafted rules, live
//! policy edits, and deletion with its providers (and its private home) at close.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use openshell_proto::v1::{DeleteProviderRequest, SandboxPhase};
use protocol::{Attestation, DraftedRule, NetworkDenial};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tool_protocol::{Hello, ToolRequest, ToolResult};

use super::gateway::{Gateway, phase_of, time_ms};
use super::ocsf;
use super::private_home::PrivateHome;
use super::transport::GatewayError;
use crate::attestation::now_ms;
use crate::error::ProviderError;
use crate::runner_client::{CallError, OutputChunk, RunnerConnection};
use crate::sandbox::{ClosedSandbox, Sandbox, SandboxRequest, ToolCallOutcome};

/// How long the runner has to say hello on a fresh attach.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// Attach attempts right after READY (the runner may still be creating its socket).
const ATTACH_ATTEMPTS: u32 = 20;
/// The log trails the command: retries after a command that looks network-refused.
const DENIAL_RETRIES: u32 = 3;
const DENIAL_RETRY_DELAY: Duration = Duration::from_millis(300);
/// Log lines this much older than the call's start still count (clock granularity).
const DENIAL_SLACK_MS: i64 = 500;

/// Words in a failed command's output that suggest the network policy refused it.
const NETWORK_HINTS: &[&str] = &[
    "403",
    "forbidden",
    "denied",
    "could not resolve",
    "connection refused",
    "proxy",
    "connect tunnel",
    "failed to connect",
    "network is unreachable",
    "timed out",
];

/// Opens the runner stream: `ExecSandboxInteractive` running the runner's `attach` mode.
pub(crate) async fn attach_runner(
    gateway: &Gateway,
    name: &str,
    argv: &[String],
) -> Result<RunnerConnection, String> {
    let attached = gateway
        .attach(name, argv.to_vec())
        .await
        .map_err(|e| e.to_string())?;
    let ended = attached.ended();
    RunnerConnection::open(attached.output, attached.input, HELLO_TIMEOUT)
        .await
        .map_err(|e| match ended.borrow().clone() {
            Some(why) => format!("{e} ({why})"),
            None => e.to_string(),
        })
}

/// Attaches, retrying briefly while the runner comes up.
pub(crate) async fn attach_with_retries(
    gateway: &Gateway,
    name: &str,
    argv: &[String],
) -> Result<RunnerConnection, String> {
    let mut last = String::new();
    for attempt in 0..ATTACH_ATTEMPTS {
        match attach_runner(gateway, name, argv).await {
            Ok(connection) => return Ok(connection),
            Err(e) => last = e,
        }
        tokio::time::sleep(
            Duration::from_millis(50 * u64::from(attempt + 1)).min(Duration::from_millis(500)),
        )
        .await;
    }
    Err(format!(
        "the runner could not be attached after {ATTACH_ATTEMPTS} attempts: {last}"
    ))
}

/// Refuses, on a re-attach, a runner other than the one the session attested: another
/// process, another build, or other folders. (The runner's socket folder is not writable by
/// its commands, so the path leads to that runner; this catches a runner that was restarted
/// or replaced by other means, never a forger who copied the first hello, whom the fixed
/// folder stops.)
pub(crate) fn same_runner(attested: &Hello, next: &Hello) -> Result<(), String> {
    let mut differs = Vec::new();
    if next.pid != attested.pid {
        differs.push(format!("process {} (was {})", next.pid, attested.pid));
    }
    if next.build_id != attested.build_id {
        differs.push(format!(
            "build {} (was {})",
            next.build_id, attested.build_id
        ));
    }
    if next.roots != attested.roots || next.cwd != attested.cwd {
        differs.push("other folders".to_owned());
    }
    if differs.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the runner answering the re-attach is not the one this session attested ({}); \
             it is refused: close the session and start it again",
            differs.join(", ")
        ))
    }
}

/// A rule OpenShell drafted from denied connections, waiting for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingRule {
    pub id: String,
    pub rule_name: String,
    /// `host:port` of each endpoint the rule would open.
    pub hosts: Vec<String>,
    /// The program that was denied.
    pub binary: String,
    pub rationale: String,
    pub hit_count: i32,
    /// Must accompany the approval; stale once the policy changed.
    pub review_token: String,
}

impl PendingRule {
    /// The rule as front ends show it (without its review token).
    pub fn to_drafted(&self) -> DraftedRule {
        DraftedRule {
            id: self.id.clone(),
            rule_name: self.rule_name.clone(),
            hosts: self.hosts.clone(),
            binary: self.binary.clone(),
            rationale: self.rationale.clone(),
            hit_count: i64::from(self.hit_count),
        }
    }
}

/// A running OpenShell sandbox.
pub struct OpenShellSandbox {
    pub(crate) name: String,
    pub(crate) sandbox_id: String,
    pub(crate) gateway: Gateway,
    pub(crate) request: SandboxRequest,
    pub(crate) attach_argv: Vec<String>,
    pub(crate) attestation: Attestation,
    pub(crate) summary: String,
    pub(crate) policy_yaml: String,
    pub(crate) providers: Vec<DeleteProviderRequest>,
    pub(crate) keep: bool,
    pub(crate) connection: tokio::sync::Mutex<Option<Arc<RunnerConnection>>>,
    /// The hello of the runner the session attested: a re-attach must reach the same one.
    pub(crate) runner: Hello,
    pub(crate) reported: Mutex<HashSet<(i64, String)>>,
    pub(crate) protected: Arc<crate::protected::ProtectedFiles>,
    pub(crate) closed: AtomicBool,
    /// The copies of the enabled credential entries (removed with the sandbox).
    pub(crate) private_home: Mutex<Option<PrivateHome>>,
}

impl std::fmt::Debug for OpenShellSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenShellSandbox")
            .field("name", &self.name)
            .field("sandbox_id", &self.sandbox_id)
            .finish_non_exhaustive()
    }
}

#[allow(clippy::needless_pass_by_value, reason = "used as a map_err adaptor")]
fn gateway_error(context: &str, e: GatewayError) -> ProviderError {
    ProviderError::Unavailable {
        reason: format!("{context}: {e}"),
    }
}

impl OpenShellSandbox {
    /// The OpenShell sandbox's UUID (`metadata.id`).
    pub fn sandbox_id(&self) -> &str {
        &self.sandbox_id
    }

    /// What the session asked for (compare folders to decide on a recreate).
    pub fn request(&self) -> &SandboxRequest {
        &self.request
    }

    /// One paragraph: what the sandbox can read, write and reach.
    pub fn summary(&self) -> &str {
        &self.summary
    }

    /// The policy sent at creation, as OpenShell policy YAML.
    pub fn policy_yaml(&self) -> &str {
        &self.policy_yaml
    }

    /// Whether the sandbox is left running at close.
    pub fn keeps(&self) -> bool {
        self.keep
    }

    /// The open runner stream, attaching a new one when the last was lost. The sandbox is
    /// kept: only the stream is new.
    async fn live_connection(&self) -> Result<Arc<RunnerConnection>, String> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref().filter(|c| c.is_open()) {
            return Ok(connection.clone());
        }
        if self.closed.load(Ordering::Acquire) {
            return Err("the sandbox was closed".into());
        }
        match self.gateway.get_sandbox(&self.name).await {
            Ok(Some(sandbox)) if phase_of(&sandbox) == SandboxPhase::Ready => {}
            Ok(Some(sandbox)) => {
                return Err(format!(
                    "sandbox {} is no longer ready: {}",
                    self.name,
                    super::gateway::describe(&sandbox)
                ));
            }
            Ok(None) => return Err(format!("sandbox {} no longer exists", self.name)),
            Err(e) => return Err(e.to_string()),
        }
        tracing::info!(sandbox = %self.name, "re-attaching to the runner");
        let connection =
            Arc::new(attach_with_retries(&self.gateway, &self.name, &self.attach_argv).await?);
        if let Err(why) = same_runner(&self.runner, connection.hello()) {
            connection.shutdown(Duration::ZERO).await;
            tracing::warn!(sandbox = %self.name, "{why}");
            return Err(why);
        }
        *slot = Some(connection.clone());
        Ok(connection)
    }

    /// Denials logged since `since_ms` that no earlier call reported. With `retry`, waits
    /// briefly for the log to catch up with the command.
    async fn denials_since(&self, since_ms: i64, retry: bool) -> Vec<NetworkDenial> {
        let attempts = if retry { DENIAL_RETRIES + 1 } else { 1 };
        let mut found = Vec::new();
        for attempt in 0..attempts {
            if attempt > 0 {
                tokio::time::sleep(DENIAL_RETRY_DELAY).await;
            }
            let lines = match self
                .gateway
                .logs_since(&self.name, since_ms - DENIAL_SLACK_MS)
                .await
            {
                Ok(lines) => lines,
                Err(e) => {
                    tracing::warn!(sandbox = %self.name, error = %e, "reading the sandbox's OCSF log failed");
                    return found;
                }
            };
            let mut reported = self.reported.lock().unwrap_or_else(PoisonError::into_inner);
            for line in lines.iter().filter(|l| l.level == "OCSF") {
                let time = time_ms(line.event_time.as_ref());
                if time < since_ms - DENIAL_SLACK_MS
                    || !reported.insert((time, line.message.clone()))
                {
                    continue;
                }
                match ocsf::parse_denial(&line.message, time) {
                    Ok(Some(denial)) => found.push(denial),
                    Ok(None) => {}
                    Err(e) => {
                        tracing::warn!(sandbox = %self.name, error = %e, "skipped an OCSF line")
                    }
                }
            }
            if !found.is_empty() {
                break;
            }
        }
        found
    }

    /// Marks every OCSF line logged so far as seen (the attestation's own canary denial must
    /// not be pinned on the first tool call).
    pub(crate) async fn mark_log_seen(&self) {
        if let Ok(lines) = self.gateway.logs_since(&self.name, 0).await {
            let mut reported = self.reported.lock().unwrap_or_else(PoisonError::into_inner);
            for line in lines.iter().filter(|l| l.level == "OCSF") {
                reported.insert((time_ms(line.event_time.as_ref()), line.message.clone()));
            }
        }
    }

    /// Rules OpenShell drafted from this sandbox's denials, pending a decision.
    pub async fn pending_rules(&self) -> Result<Vec<PendingRule>, ProviderError> {
        let chunks = self
            .gateway
            .draft_chunks(&self.name, "pending")
            .await
            .map_err(|e| gateway_error("reading the drafted rules", e))?;
        Ok(chunks
            .into_iter()
            .map(|chunk| {
                let hosts = chunk
                    .proposed_rule
                    .iter()
                    .flat_map(|rule| rule.endpoints.iter())
                    .map(|e| format!("{}:{}", e.host, e.port))
                    .collect();
                PendingRule {
                    id: chunk.id,
                    rule_name: chunk.rule_name,
                    hosts,
                    binary: chunk.binary,
                    rationale: chunk.rationale,
                    hit_count: chunk.hit_count,
                    review_token: chunk.review_token,
                }
            })
            .collect())
    }

    /// Approves a drafted rule; returns the new policy version. A stale review token (the
    /// policy changed since the rule was listed) is refused by the gateway.
    pub async fn approve_rule(&self, rule: &PendingRule) -> Result<u32, ProviderError> {
        self.gateway
            .approve_chunk(&self.name, &rule.id, &rule.review_token)
            .await
            .map_err(|e| match e {
                GatewayError::Precondition(why) => ProviderError::InvalidRequest(format!(
                    "rule {} changed since it was listed; list the pending rules again ({why})",
                    rule.rule_name
                )),
                other => gateway_error("approving the rule", other),
            })
    }

    /// Rejects a drafted rule with a reason.
    pub async fn reject_rule(&self, rule: &PendingRule, reason: &str) -> Result<(), ProviderError> {
        self.gateway
            .reject_chunk(&self.name, &rule.id, reason)
            .await
            .map_err(|e| gateway_error("rejecting the rule", e))
    }

    /// Adds `host` (`name`, `name:port`, `*.name`) to this sandbox's live policy, for any
    /// program, as one merge revision of this sandbox only. Returns the policy version.
    pub async fn allow_host(&self, host: &str) -> Result<u32, ProviderError> {
        let operation = super::rules::add_host_operation(host)?;
        let response = self
            .gateway
            .merge_policy(&self.name, vec![operation])
            .await
            .map_err(|e| gateway_error("adding the host to the policy", e))?;
        Ok(response.version)
    }

    /// The sandbox's live policy (version and rules) as the gateway holds it.
    pub async fn live_policy(
        &self,
    ) -> Result<openshell_proto::sandbox::GetSandboxConfigResponse, ProviderError> {
        self.gateway
            .sandbox_config(&self.name)
            .await
            .map_err(|e| gateway_error("reading the live policy", e))
    }

    /// The host folder holding the copies of the session's credential entries, while it
    /// exists.
    pub fn private_home(&self) -> Option<std::path::PathBuf> {
        self.private_home
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(|home| home.path().to_path_buf())
    }

    /// Deletes the sandbox and its providers, then the private home with the copies (removed
    /// even when the gateway failed to delete the sandbox: copies never outlive a close).
    pub(crate) async fn delete(&self) -> Result<(), ProviderError> {
        let deleted = self
            .gateway
            .delete_sandbox(&self.name)
            .await
            .map_err(|e| gateway_error(&format!("deleting sandbox {}", self.name), e));
        let home = self
            .private_home
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let removed = home.map_or(Ok(()), PrivateHome::remove);
        deleted?;
        for provider in &self.providers {
            if let Err(e) = self.gateway.delete_provider(provider.clone()).await {
                tracing::warn!(provider = %provider.name, error = %e, "deleting a provider failed");
            }
        }
        removed
    }
}

/// True when a failed command's output suggests a refused connection.
fn suggests_network_refusal(result: &Result<ToolResult, CallError>) -> bool {
    let Ok(ToolResult::RunBash(run)) = result else {
        return false;
    };
    if run.exit_code == Some(0) {
        return false;
    }
    let text = format!(
        "{}\n{}",
        run.stdout.to_text_lossy(),
        run.stderr.to_text_lossy()
    )
    .to_ascii_lowercase();
    NETWORK_HINTS.iter().any(|hint| text.contains(hint))
}

#[async_trait]
impl Sandbox for OpenShellSandbox {
    fn id(&self) -> &str {
        &self.name
    }

    fn attestation(&self) -> &Attestation {
        &self.attestation
    }

    fn protected(&self) -> Option<&Arc<crate::protected::ProtectedFiles>> {
        Some(&self.protected)
    }

    async fn call(
        &self,
        request: ToolRequest,
        output: Option<mpsc::UnboundedSender<OutputChunk>>,
        cancel: &CancellationToken,
    ) -> ToolCallOutcome {
        let connection = match self.live_connection().await {
            Ok(connection) => connection,
            Err(reason) => {
                return ToolCallOutcome {
                    result: Err(CallError::Disconnected(reason)),
                    denials: Vec::new(),
                    notes: Vec::new(),
                };
            }
        };
        let is_bash = matches!(request, ToolRequest::RunBash(_));
        let started = now_ms();
        let result = connection.call(request, output, cancel).await;
        let denials = if is_bash {
            self.denials_since(started, suggests_network_refusal(&result))
                .await
        } else {
            Vec::new()
        };
        ToolCallOutcome {
            result,
            denials,
            notes: Vec::new(),
        }
    }

    async fn allow_host_live(&self, host: &str) -> Result<bool, ProviderError> {
        self.allow_host(host).await.map(|_| true)
    }

    async fn drafted_rules(&self) -> Result<Vec<DraftedRule>, ProviderError> {
        Ok(self
            .pending_rules()
            .await?
            .iter()
            .map(PendingRule::to_drafted)
            .collect())
    }

    async fn decide_drafted_rule(
        &self,
        rule_id: &str,
        approve: bool,
        reason: Option<&str>,
    ) -> Result<DraftedRule, ProviderError> {
        let pending = self.pending_rules().await?;
        let Some(rule) = pending.iter().find(|r| r.id == rule_id) else {
            return Err(ProviderError::InvalidRequest(format!(
                "no drafted rule `{rule_id}` is pending for this sandbox (it was decided, or \
                 the policy changed; list the drafted rules again)"
            )));
        };
        if approve {
            self.approve_rule(rule).await?;
        } else {
            self.reject_rule(rule, reason.unwrap_or("rejected by the user"))
                .await?;
        }
        Ok(rule.to_drafted())
    }

    async fn close(&self) -> Result<ClosedSandbox, ProviderError> {
        if self.closed.swap(true, Ordering::AcqRel) {
            return Ok(ClosedSandbox::default());
        }
        let closed = ClosedSandbox {
            checks: vec![
                crate::set_id_sweep::sweep_at_close(
                    &self.name,
                    &self.request.folders,
                    crate::set_id_sweep::MAX_ENTRIES,
                )
                .canary(),
            ],
        };
        // Dropping the stream closes the attach command's stdin; the runner keeps serving.
        self.connection.lock().await.take();
        if self.keep {
            // The kept sandbox still mounts its private home.
            let home = self
                .private_home
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(home) = home {
                home.leave();
            }
            return Ok(closed);
        }
        self.delete().await.map(|()| closed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_protocol::{Root, RootMode};

    fn hello() -> Hello {
        Hello {
            protocol: tool_protocol::PROTOCOL_VERSION,
            build_id: "crc32c:0123abcd".into(),
            roots: vec![Root {
                path: "/work/p".into(),
                mode: RootMode::ReadWrite,
            }],
            cwd: "/work/p".into(),
            pid: 7,
        }
    }

    #[test]
    fn a_re_attach_must_reach_the_attested_runner() {
        assert_eq!(same_runner(&hello(), &hello()), Ok(()));
        let other_process = Hello { pid: 8, ..hello() };
        let err = same_runner(&hello(), &other_process).unwrap_err();
        assert!(err.contains("process 8 (was 7)"), "{err}");
        let other_build = Hello {
            build_id: "crc32c:ffffffff".into(),
            ..hello()
        };
        let err = same_runner(&hello(), &other_build).unwrap_err();
        assert!(err.contains("build crc32c:ffffffff"), "{err}");
        let other_folders = Hello {
            cwd: "/".into(),
            ..hello()
        };
        let err = same_runner(&hello(), &other_folders).unwrap_err();
        assert!(
            err.contains("other folders") && err.contains("refused"),
            "{err}"
        );
    }
}
