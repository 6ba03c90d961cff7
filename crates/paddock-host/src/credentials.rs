//! The machine's credential-share rows as front ends show and edit them: the built-in entries
//! (`ssh`, `gh`, `aws`, `kube`) and the custom `[[sandbox_credentials]]` ones, each with the
//! folder it copies and the hosts it opens, and whether it is on for every session
//! (`sandbox.credentials`). Custom entries are added, changed and removed here, written back
//! with `toml_edit` so the rest of the file (comments, order) stays as the user wrote it; each
//! field is checked on its own first, so an error names the field.

use serde::{Deserialize, Serialize};

use crate::config::{MachineConfig, builtin_credential_names};
use crate::error::HostError;
use crate::host::Host;
use crate::settings::parse_for_edit;

/// One credential-share entry, as Settings ▸ Sandbox shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct CredentialRow {
    pub name: String,
    /// What enabling it lets the agent do, in one line.
    pub description: String,
    /// The folder or file copied from the user's home into the sandbox's private home.
    pub source: String,
    /// The hosts its tools need (`host:port`; `(tcp)` for SSH-style endpoints).
    pub hosts: Vec<String>,
    /// The hosts come from the user's kubeconfig (`kube`), not from this list.
    pub hosts_from_kubeconfig: bool,
    /// Built into Paddock (else a custom `[[sandbox_credentials]]` entry).
    pub builtin: bool,
    /// On for every session on this machine (`sandbox.credentials`).
    pub enabled: bool,
}

/// A custom credential-share entry to add or change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct CustomCredential {
    /// `[a-z][a-z0-9-]*`, at most 32 characters, not a built-in entry's name.
    pub name: String,
    /// A folder or file relative to the home folder (e.g. `.config/mytool`).
    pub source: String,
    /// The hosts its commands need (`host`, `host:port` or `*.host`); at least one.
    pub hosts: Vec<String>,
}

/// The rows of `config`: built-in entries first, then the custom ones in file order.
pub fn credential_rows(config: &MachineConfig) -> Result<Vec<CredentialRow>, HostError> {
    let data = sandbox_policy::SandboxData::builtin()
        .map_err(|e| HostError::Internal(format!("the built-in sandbox data: {e}")))?;
    let enabled = |name: &str| config.enabled_credentials.iter().any(|n| n == name);
    let mut rows = Vec::new();
    for name in data.credential_names() {
        let entry = data
            .credential(&name)
            .map_err(|e| HostError::Internal(format!("built-in credential `{name}`: {e}")))?;
        rows.push(CredentialRow {
            enabled: enabled(&name),
            name,
            description: entry.description,
            source: entry.source,
            hosts: entry.hosts.iter().map(ToString::to_string).collect(),
            hosts_from_kubeconfig: entry.hosts_from_kubeconfig,
            builtin: true,
        });
    }
    for entry in &config.credentials {
        rows.push(CredentialRow {
            name: entry.name.clone(),
            description: format!("custom entry `{}`", entry.name),
            source: entry.source.clone(),
            hosts: entry.hosts.clone(),
            hosts_from_kubeconfig: false,
            builtin: false,
            enabled: enabled(&entry.name),
        });
    }
    Ok(rows)
}

/// Checks each field of a custom entry on its own, so the error names the field.
pub fn check_custom(entry: &CustomCredential) -> Result<(), HostError> {
    let policy_problem = |e: sandbox_policy::PolicyError| e.to_string();
    sandbox_policy::CredentialEntry::custom(&entry.name, ".probe", &[])
        .map_err(|e| HostError::invalid("name", policy_problem(e)))?;
    let builtin = builtin_credential_names().map_err(HostError::Internal)?;
    if builtin.contains(&entry.name) {
        return Err(HostError::invalid(
            "name",
            format!(
                "`{}` is a built-in entry's name; choose another name",
                entry.name
            ),
        ));
    }
    sandbox_policy::CredentialEntry::custom("probe", &entry.source, &[])
        .map_err(|e| HostError::invalid("source", policy_problem(e)))?;
    if entry.hosts.is_empty() {
        return Err(HostError::invalid(
            "hosts",
            "list at least one host its commands need",
        ));
    }
    for (index, host) in entry.hosts.iter().enumerate() {
        crate::config::check_host(host)
            .map_err(|problem| HostError::invalid(format!("hosts[{index}]"), problem))?;
    }
    Ok(())
}

/// `current` with the custom entry `entry` added (or replaced, keeping its place).
pub fn write_custom(current: &str, entry: &CustomCredential) -> Result<String, HostError> {
    let mut document = parse_for_edit(current)?;
    let mut table = toml_edit::Table::new();
    table.insert("name", toml_edit::value(entry.name.as_str()));
    table.insert("source", toml_edit::value(entry.source.as_str()));
    let mut hosts = toml_edit::Array::new();
    for host in &entry.hosts {
        hosts.push(host.as_str());
    }
    table.insert("hosts", toml_edit::value(hosts));
    let entries = entries_mut(&mut document)?;
    match position(entries, &entry.name) {
        Some(index) => {
            if let Some(existing) = entries.get_mut(index) {
                for (key, value) in table.iter() {
                    crate::settings::replace_keeping_comments(existing, key, value.clone());
                }
            }
        }
        None => entries.push(table),
    }
    Ok(document.to_string())
}

/// `current` without the custom entry `name`, and without it in `sandbox.credentials`.
pub fn remove_custom(current: &str, name: &str) -> Result<String, HostError> {
    let mut document = parse_for_edit(current)?;
    let entries = entries_mut(&mut document)?;
    let Some(index) = position(entries, name) else {
        return Err(HostError::invalid(
            "name",
            format!("`{name}` is not a custom entry in the config file"),
        ));
    };
    entries.remove(index);
    if entries.is_empty() {
        document.remove("sandbox_credentials");
    }
    if let Some(list) = document
        .get_mut("sandbox")
        .and_then(|t| t.as_table_like_mut())
        .and_then(|t| t.get_mut("credentials"))
        .and_then(|item| item.as_array_mut())
    {
        list.retain(|value| value.as_str() != Some(name));
    }
    Ok(document.to_string())
}

fn entries_mut(
    document: &mut toml_edit::DocumentMut,
) -> Result<&mut toml_edit::ArrayOfTables, HostError> {
    if document.get("sandbox_credentials").is_none() {
        document.insert(
            "sandbox_credentials",
            toml_edit::Item::ArrayOfTables(toml_edit::ArrayOfTables::new()),
        );
    }
    document
        .get_mut("sandbox_credentials")
        .and_then(toml_edit::Item::as_array_of_tables_mut)
        .ok_or_else(|| HostError::InvalidSetting {
            key: "sandbox_credentials".into(),
            problem: "is not written as [[sandbox_credentials]] tables in the config file; \
                          fix it by hand first"
                .into(),
        })
}

fn position(entries: &toml_edit::ArrayOfTables, name: &str) -> Option<usize> {
    entries
        .iter()
        .position(|table| table.get("name").and_then(|v| v.as_str()) == Some(name))
}

impl Host {
    /// Every credential-share entry this machine offers, and which are on for every session.
    pub fn credential_rows(&self) -> Result<Vec<CredentialRow>, HostError> {
        credential_rows(&self.config())
    }

    /// Adds a custom entry, or changes the one of that name; new sessions see it.
    pub fn save_custom_credential(
        &self,
        entry: &CustomCredential,
    ) -> Result<Vec<CredentialRow>, HostError> {
        check_custom(entry)?;
        self.rewrite_user_file(|current| write_custom(current, entry))?;
        self.credential_rows()
    }

    /// Removes a custom entry (and turns it off for every session).
    pub fn remove_custom_credential(&self, name: &str) -> Result<Vec<CredentialRow>, HostError> {
        self.rewrite_user_file(|current| remove_custom(current, name))?;
        self.credential_rows()
    }
}

#[cfg(test)]
#[path = "credentials_tests.rs"]
mod tests;
