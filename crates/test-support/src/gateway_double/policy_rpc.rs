//! The double's live-policy, drafted-rule and provider RPCs (called from the `OpenShell`
//! impl in `service.rs`): UpdateConfig merges, GetDraftPolicy with review tokens bound to the
//! policy version, approvals that merge the rule and bump the version, and providers whose
//! credentials never leave the double in a response.

use std::collections::BTreeMap;

use openshell_proto::datamodel::Provider;
use openshell_proto::sandbox::{GetSandboxConfigRequest, GetSandboxConfigResponse, PolicySource};
use openshell_proto::v1::{
    self, ApproveDraftChunkRequest, ApproveDraftChunkResponse, CreateProviderRequest,
    DeleteProviderRequest, DeleteProviderResponse, DeletionOutcome, GetDraftPolicyRequest,
    GetDraftPolicyResponse, ListProvidersRequest, ListProvidersResponse, ProviderResponse,
    RejectDraftChunkRequest, RejectDraftChunkResponse, UpdateConfigRequest, UpdateConfigResponse,
    policy_merge_operation,
};
use tonic::Status;

use super::service::{DoubleService, page, selector_matches};
use super::validate;

#[allow(
    clippy::needless_pass_by_value,
    reason = "handlers take the decoded request by value, as tonic hands it over"
)]
impl DoubleService {
    pub(super) fn get_sandbox_config_rpc(
        &self,
        request: GetSandboxConfigRequest,
    ) -> Result<GetSandboxConfigResponse, Status> {
        validate::workspace(request.workspace_scope.as_ref())?;
        let memory = self.state.lock();
        let record = memory
            .sandboxes
            .get(&request.name)
            .ok_or_else(|| Status::not_found(format!("sandbox {} not found", request.name)))?;
        Ok(GetSandboxConfigResponse {
            policy: Some(record.policy()),
            version: record.policy_version,
            policy_source: PolicySource::Sandbox.into(),
            workspace: openshell_proto::DEFAULT_WORKSPACE.into(),
            configuration_admitted: true,
            ..GetSandboxConfigResponse::default()
        })
    }

    pub(super) fn update_config_rpc(
        &self,
        request: UpdateConfigRequest,
    ) -> Result<UpdateConfigResponse, Status> {
        validate::workspace(request.workspace_scope.as_ref())?;
        self.state.lock().update_scopes.push(request.global);
        if request.global {
            return Err(Status::invalid_argument(
                "the double models sandbox-scoped policy only",
            ));
        }
        let result = self.state.update(&request.sandbox, |record| {
            let mut policy = record.policy();
            if let Some(replacement) = &request.policy {
                let same_static = replacement.filesystem == policy.filesystem
                    && replacement.landlock == policy.landlock
                    && replacement.process == policy.process;
                if !same_static {
                    return Err(Status::invalid_argument(
                        "only network_policies may change after creation (filesystem, landlock and process are static)",
                    ));
                }
                policy.network_policies = replacement.network_policies.clone();
            }
            for operation in &request.merge_operations {
                match &operation.operation {
                    Some(policy_merge_operation::Operation::AddRule(add)) => {
                        sandbox_policy::check_rule_key(&add.rule_name)
                            .map_err(|e| Status::invalid_argument(e.to_string()))?;
                        let rule = add
                            .rule
                            .clone()
                            .ok_or_else(|| Status::invalid_argument("add_rule needs a rule"))?;
                        let entry = policy.network_policies.entry(add.rule_name.clone()).or_default();
                        if entry.name.is_empty() {
                            entry.name = rule.name.clone();
                        }
                        entry.endpoints.extend(rule.endpoints);
                        for binary in rule.binaries {
                            if !entry.binaries.contains(&binary) {
                                entry.binaries.push(binary);
                            }
                        }
                    }
                    Some(policy_merge_operation::Operation::RemoveRule(remove)) => {
                        policy.network_policies.remove(&remove.rule_name);
                    }
                    _ => return Err(Status::unimplemented("the double merges add_rule and remove_rule only")),
                }
            }
            sandbox_policy::validate_policy(&policy).map_err(|e| Status::invalid_argument(e.to_string()))?;
            *record.policy.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = policy;
            record.policy_version += 1;
            Ok(record.policy_version)
        });
        let version = result
            .ok_or_else(|| Status::not_found(format!("sandbox {} not found", request.sandbox)))??;
        self.state.log(
            &request.sandbox,
            "OCSF",
            "ocsf",
            format!("CONFIG:UPDATE [INFO] policy version {version} loaded"),
        );
        Ok(UpdateConfigResponse {
            version,
            ..UpdateConfigResponse::default()
        })
    }

    pub(super) fn get_draft_policy_rpc(
        &self,
        request: GetDraftPolicyRequest,
    ) -> Result<GetDraftPolicyResponse, Status> {
        validate::workspace(request.workspace_scope.as_ref())?;
        let memory = self.state.lock();
        let record = memory
            .sandboxes
            .get(&request.sandbox)
            .ok_or_else(|| Status::not_found(format!("sandbox {} not found", request.sandbox)))?;
        let chunks = record
            .drafts
            .iter()
            .filter(|c| request.status_filter.is_empty() || c.status == request.status_filter)
            .map(|c| v1::PolicyChunk {
                review_token: if c.status == "pending" {
                    record.review_token(&c.id)
                } else {
                    String::new()
                },
                ..c.clone()
            })
            .collect();
        Ok(GetDraftPolicyResponse {
            chunks,
            draft_version: record.draft_version,
            ..GetDraftPolicyResponse::default()
        })
    }

    pub(super) fn approve_draft_chunk_rpc(
        &self,
        request: ApproveDraftChunkRequest,
    ) -> Result<ApproveDraftChunkResponse, Status> {
        validate::workspace(request.workspace_scope.as_ref())?;
        let result = self.state.update(&request.sandbox, |record| {
            let token = record.review_token(&request.chunk_id);
            let index = record
                .drafts
                .iter()
                .position(|c| c.id == request.chunk_id && c.status == "pending")
                .ok_or_else(|| {
                    Status::not_found(format!("no pending chunk {}", request.chunk_id))
                })?;
            if request.review_token != token {
                return Err(Status::failed_precondition(
                    "the review token is stale: the policy changed since the chunk was read",
                ));
            }
            let chunk = &mut record.drafts[index];
            chunk.status = "approved".into();
            chunk.decided_time = Some(super::now_timestamp());
            let (key, rule) = (
                chunk.rule_name.clone(),
                chunk.proposed_rule.clone().unwrap_or_default(),
            );
            record
                .policy
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .network_policies
                .insert(key, rule);
            record.policy_version += 1;
            Ok(record.policy_version)
        });
        let version = result
            .ok_or_else(|| Status::not_found(format!("sandbox {} not found", request.sandbox)))??;
        Ok(ApproveDraftChunkResponse {
            policy_version: version,
            policy_hash: String::new(),
        })
    }

    pub(super) fn reject_draft_chunk_rpc(
        &self,
        request: RejectDraftChunkRequest,
    ) -> Result<RejectDraftChunkResponse, Status> {
        validate::workspace(request.workspace_scope.as_ref())?;
        let result = self.state.update(&request.sandbox, |record| {
            let chunk = record
                .drafts
                .iter_mut()
                .find(|c| c.id == request.chunk_id && c.status == "pending")
                .ok_or_else(|| {
                    Status::not_found(format!("no pending chunk {}", request.chunk_id))
                })?;
            chunk.status = "rejected".into();
            chunk.rejection_reason = request.reason.clone();
            chunk.decided_time = Some(super::now_timestamp());
            Ok::<(), Status>(())
        });
        result
            .ok_or_else(|| Status::not_found(format!("sandbox {} not found", request.sandbox)))??;
        Ok(RejectDraftChunkResponse {})
    }

    pub(super) fn create_provider_rpc(
        &self,
        request: CreateProviderRequest,
    ) -> Result<ProviderResponse, Status> {
        validate::workspace(request.workspace_scope.as_ref())?;
        let provider = request
            .provider
            .ok_or_else(|| Status::invalid_argument("provider is required"))?;
        let name = provider
            .metadata
            .as_ref()
            .map(|m| m.name.clone())
            .unwrap_or_default();
        sandbox_policy::check_dns_label("provider name", &name, 63)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        if provider.r#type.is_empty() {
            return Err(Status::invalid_argument("provider type is required"));
        }
        if provider.credentials.is_empty() {
            return Err(Status::invalid_argument(
                "a provider needs at least one credential",
            ));
        }
        let keys: BTreeMap<String, String> = provider
            .credentials
            .keys()
            .map(|k| (k.clone(), String::new()))
            .collect();
        sandbox_policy::check_environment(&keys)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let mut memory = self.state.lock();
        if memory.providers.contains_key(&name) {
            return Err(Status::already_exists(format!(
                "provider {name} already exists"
            )));
        }
        memory.providers.insert(name, provider.clone());
        Ok(ProviderResponse {
            provider: Some(Provider {
                credentials: BTreeMap::new(),
                ..provider
            }),
            mutation_id: uuid::Uuid::new_v4().to_string(),
        })
    }

    pub(super) fn delete_provider_rpc(
        &self,
        request: DeleteProviderRequest,
    ) -> Result<DeleteProviderResponse, Status> {
        validate::workspace(request.workspace_scope.as_ref())?;
        let removed = self.state.lock().providers.remove(&request.name).is_some();
        let outcome = match (removed, request.allow_missing) {
            (true, _) => DeletionOutcome::Completed,
            (false, true) => DeletionOutcome::AlreadyAbsent,
            (false, false) => {
                return Err(Status::not_found(format!(
                    "provider {} not found",
                    request.name
                )));
            }
        };
        Ok(DeleteProviderResponse {
            outcome: outcome.into(),
        })
    }

    pub(super) fn list_providers_rpc(
        &self,
        request: ListProvidersRequest,
    ) -> Result<ListProvidersResponse, Status> {
        validate::workspace(request.workspace_scope.as_ref())?;
        let mut matching = Vec::new();
        for provider in self.state.lock().providers.values() {
            let labels = provider
                .metadata
                .as_ref()
                .map(|m| m.labels.clone())
                .unwrap_or_default();
            if selector_matches(&request.label_selector, &labels)? {
                matching.push(Provider {
                    credentials: BTreeMap::new(),
                    ..provider.clone()
                });
            }
        }
        let (providers, next_page_token) = page(matching, request.page_size, &request.page_token)?;
        Ok(ListProvidersResponse {
            providers,
            next_page_token,
        })
    }
}
