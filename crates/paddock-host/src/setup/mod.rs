//! `machine sandbox setup`: for each failed check of a wall's status, the exact change — a
//! unified diff of the file Paddock would edit, the command it would run as this user, or the
//! command left to the user (anything needing root: Paddock never runs `sudo`). A plan is
//! shown first; applying it re-plans and refuses when the machine changed since
//! ([`HostError::SetupChanged`]), backs every edited file up (never over an older backup),
//! and is idempotent: a machine with nothing left to fix gets an empty plan. The machine
//! config is switched to the wall only when every check passes.

pub mod files;
pub mod gateway_toml;
mod local;
mod openshell;

use std::path::PathBuf;

use protocol::{MachineSandboxStatus, ProviderKind, StatusCheck};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::{ConfigError, MachineConfig};
use crate::error::HostError;
use crate::host::Host;
use crate::settings::{SettingValue, apply_changes};
use crate::wiring;

pub use gateway_toml::RESTART_GATEWAY;

/// What a setup step does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SetupAction {
    /// Paddock edits this file (keeping comments and order); the previous version is kept as
    /// a backup beside it.
    EditFile {
        path: String,
        /// The change as a unified diff (`--- /dev/null` for a new file).
        diff: String,
    },
    /// Paddock runs this command as the current user (never with `sudo`).
    RunCommand { argv: Vec<String> },
    /// Left to the user: it needs root (or a reboot, or a choice Paddock does not make).
    ByHand { command: String, needs_root: bool },
}

/// The new text of a file a step edits (not part of the wire: the diff is).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct PlannedEdit {
    pub path: PathBuf,
    pub text: String,
    /// The mode of a file that does not exist yet.
    pub new_mode: u32,
    /// The file is the machine config: the host reloads it.
    pub reloads_config: bool,
}

/// One change that fixes a failed check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct SetupStep {
    /// Stable within a plan (`gateway-bind-mounts`, `select-provider`, …): what to apply.
    pub id: String,
    /// The check it fixes.
    pub check: String,
    /// What it does and why, in one sentence.
    pub summary: String,
    pub action: SetupAction,
    /// What the user must do once it is made (e.g. restart the gateway).
    pub then: Option<String>,
    #[serde(skip)]
    #[cfg_attr(feature = "wire-schemas", ts(skip))]
    pub(crate) edit: Option<PlannedEdit>,
}

impl SetupStep {
    pub(crate) fn new(id: &str, check: &str, summary: String, action: SetupAction) -> Self {
        Self {
            id: id.to_owned(),
            check: check.to_owned(),
            summary,
            action,
            then: None,
            edit: None,
        }
    }

    /// Paddock makes this step itself (an edit or a command as this user).
    pub fn automatic(&self) -> bool {
        !matches!(self.action, SetupAction::ByHand { .. })
    }
}

/// What setup would do for a wall.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct SetupPlan {
    pub provider: ProviderKind,
    /// The wall's checks now (the machine's and, for OpenShell, the gateway's).
    pub status: MachineSandboxStatus,
    /// The machine config already selects this wall (`[sandbox] provider`).
    pub selected: bool,
    /// In check order; the config switch (`select-provider`) only when every check passes.
    pub steps: Vec<SetupStep>,
    /// Names this exact plan: applying checks it, so what is applied is what was shown.
    pub fingerprint: String,
}

impl SetupPlan {
    /// Every check passes and the config selects the wall: nothing is left to do.
    pub fn done(&self) -> bool {
        self.status.ready() && self.selected
    }

    /// The steps Paddock would make itself.
    pub fn automatic(&self) -> impl Iterator<Item = &SetupStep> {
        self.steps.iter().filter(|s| s.automatic())
    }
}

/// Applying a plan: its provider and fingerprint, and which of its automatic steps (all when
/// `steps` is absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct SetupRequest {
    pub provider: ProviderKind,
    pub fingerprint: String,
    #[serde(default)]
    pub steps: Option<Vec<String>>,
}

/// A step that was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct AppliedStep {
    pub id: String,
    /// What happened (`wrote …`, `ran …`).
    pub detail: String,
    /// Where the edited file's previous version is.
    pub backup: Option<String>,
}

/// A step that could not be made (the steps after it were not tried).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct FailedStep {
    pub id: String,
    pub reason: String,
}

/// What applying a plan did, and the plan now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct SetupOutcome {
    pub applied: Vec<AppliedStep>,
    pub failed: Option<FailedStep>,
    /// What the user must do now (from the applied steps' `then`).
    pub then: Vec<String>,
    /// The plan after the changes: what is still failing and what is left.
    pub after: SetupPlan,
}

/// The status of a wall with what setup needs to plan its steps.
pub(crate) struct Inspected {
    pub status: MachineSandboxStatus,
    openshell: Option<openshell::Inspection>,
}

fn fingerprint(provider: ProviderKind, steps: &[SetupStep]) -> String {
    let json = serde_json::to_string(&(provider, steps)).unwrap_or_default();
    hex::encode(&Sha256::digest(json.as_bytes())[..12])
}

impl Host {
    /// The wall's checks with what the machine says beyond the provider (OpenShell: the CLI,
    /// `gateway.toml`, the image).
    pub(crate) async fn inspect_wall(&self, kind: ProviderKind) -> Result<Inspected, HostError> {
        if kind != ProviderKind::Openshell {
            let status = self.provider(kind)?.status().await;
            return Ok(Inspected {
                status,
                openshell: None,
            });
        }
        let config = self.config();
        let probes = self.probes();
        let image = config.openshell_image.clone();
        let inspection = tokio::task::spawn_blocking(move || {
            openshell::inspect(probes.as_ref(), image.as_deref())
        })
        .await
        .map_err(|e| HostError::Internal(format!("inspecting OpenShell: {e}")))?;
        // The provider's checks never read the image; a missing one is the image check's.
        let mut for_status = config;
        for_status.openshell_image.get_or_insert_with(String::new);
        let provider = wiring::openshell_provider_in(
            &for_status,
            self.paths(),
            self.helpers(),
            &wiring::SecretValues::default(),
            self.probes().environment(),
        )?;
        let gateway = sandbox_provider::SandboxProvider::status(&provider).await;
        let mut checks: Vec<StatusCheck> = vec![inspection.cli_check()];
        checks.extend(gateway.checks);
        checks.extend(inspection.machine_checks());
        Ok(Inspected {
            status: MachineSandboxStatus { checks, ..gateway },
            openshell: Some(inspection),
        })
    }

    /// What setup would do to make `kind` this machine's working wall.
    pub async fn setup_plan(&self, kind: ProviderKind) -> Result<SetupPlan, HostError> {
        let inspected = self.inspect_wall(kind).await?;
        let status = inspected.status;
        let mut steps = match (&kind, &inspected.openshell) {
            (ProviderKind::Openshell, Some(inspection)) => openshell::steps(&status, inspection),
            (ProviderKind::Local, _) => local::steps(
                &status,
                self.probes().local().as_ref(),
                &self.probes().environment(),
                &sandbox_provider::local::default_bwrap(),
            ),
            _ => status
                .checks
                .iter()
                .filter(|c| !c.ok)
                .map(local::other_step)
                .collect(),
        };
        let config = self.config();
        let selected = config.provider == kind && config.provider_explicit;
        if status.ready() && !selected {
            steps.push(self.select_step(kind)?);
        }
        Ok(SetupPlan {
            fingerprint: fingerprint(kind, &steps),
            provider: kind,
            status,
            selected,
            steps,
        })
    }

    /// The edit of the machine config that selects `kind`, validated as a whole.
    fn select_step(&self, kind: ProviderKind) -> Result<SetupStep, HostError> {
        let path = self.paths().config_file();
        let before = files::read_optional(&path)?;
        let after = apply_changes(
            before.as_deref().unwrap_or(""),
            &[(
                "sandbox.provider".to_owned(),
                SettingValue::Text(kind.as_str().to_owned()),
            )],
        )?;
        MachineConfig::from_texts(Some((&after, &path))).map_err(
            |ConfigError { key, problem, .. }| HostError::InvalidSetting { key, problem },
        )?;
        let mut summary = format!(
            "select the {} wall for new sessions ([sandbox] provider in the machine config)",
            kind.as_str()
        );
        if kind == ProviderKind::Direct {
            summary = format!(
                "{summary}. WARNING: {}",
                sandbox_provider::direct::DIRECT_WARNING
            );
        }
        let mut step = SetupStep::new(
            "select-provider",
            "provider",
            summary,
            SetupAction::EditFile {
                path: path.display().to_string(),
                diff: files::unified_diff(&path, before.as_deref(), &after),
            },
        );
        step.edit = Some(PlannedEdit {
            path,
            text: after,
            new_mode: 0o644,
            reloads_config: true,
        });
        Ok(step)
    }

    /// Makes the plan's automatic steps (or those named in `request.steps`), after checking
    /// the plan is still the one shown.
    pub async fn setup_apply(&self, request: SetupRequest) -> Result<SetupOutcome, HostError> {
        let plan = self.setup_plan(request.provider).await?;
        if plan.fingerprint != request.fingerprint {
            return Err(HostError::SetupChanged {
                what: format!(
                    "its plan is now {} where {} was shown",
                    plan.fingerprint, request.fingerprint
                ),
            });
        }
        let chosen: Vec<&SetupStep> = match &request.steps {
            None => plan.automatic().collect(),
            Some(ids) => {
                let mut chosen = Vec::new();
                for (i, id) in ids.iter().enumerate() {
                    let field = format!("steps[{i}]");
                    let step = plan.steps.iter().find(|s| &s.id == id).ok_or_else(|| {
                        HostError::invalid(&field, format!("the plan has no step `{id}`"))
                    })?;
                    if !step.automatic() {
                        return Err(HostError::invalid(
                            &field,
                            format!("step `{id}` is left to you: Paddock never runs it"),
                        ));
                    }
                    chosen.push(step);
                }
                chosen
            }
        };
        let mut applied = Vec::new();
        let mut then = Vec::new();
        let mut failed = None;
        for step in chosen {
            match self.apply_step(step).await {
                Ok(done) => {
                    applied.push(done);
                    then.extend(step.then.clone());
                }
                Err(reason) => {
                    failed = Some(FailedStep {
                        id: step.id.clone(),
                        reason,
                    });
                    break;
                }
            }
        }
        let after = self.setup_plan(request.provider).await?;
        Ok(SetupOutcome {
            applied,
            failed,
            then,
            after,
        })
    }

    async fn apply_step(&self, step: &SetupStep) -> Result<AppliedStep, String> {
        match (&step.action, &step.edit) {
            (SetupAction::EditFile { path, .. }, Some(edit)) => {
                let planned = edit.clone();
                let backup = tokio::task::spawn_blocking(move || {
                    files::write_with_backup(&planned.path, &planned.text, planned.new_mode)
                })
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
                if edit.reloads_config {
                    let config = MachineConfig::from_texts(Some((&edit.text, &edit.path)))
                        .map_err(|e| e.to_string())?;
                    self.replace_config(config);
                }
                Ok(AppliedStep {
                    id: step.id.clone(),
                    detail: format!("wrote {path}"),
                    backup: backup.map(|b| b.display().to_string()),
                })
            }
            (SetupAction::RunCommand { argv }, _) => {
                let probes = self.probes();
                let command = argv.clone();
                let output = tokio::task::spawn_blocking(move || {
                    let (program, args) = command
                        .split_first()
                        .ok_or_else(|| "an empty command".to_owned())?;
                    probes.run(program, args, None)
                })
                .await
                .map_err(|e| e.to_string())??;
                let shown = argv.join(" ");
                if output.success {
                    Ok(AppliedStep {
                        id: step.id.clone(),
                        detail: format!("ran {shown}"),
                        backup: None,
                    })
                } else {
                    Err(format!(
                        "`{shown}` failed ({}): {}",
                        output
                            .code
                            .map_or("ended by a signal".into(), |c| format!("exit {c}")),
                        output.tail(5)
                    ))
                }
            }
            _ => Err(format!("step `{}` is not one Paddock makes", step.id)),
        }
    }
}
