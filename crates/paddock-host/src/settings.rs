//! The machine's settings as front ends read and change them. A change is validated as a
//! whole (the file it would write must load), then written back with `toml_edit`, so the
//! user's comments, order and formatting survive; an error names the key and why, and writes
//! nothing. Only the keys below can be changed this way (`sandbox.tool_runner` stays
//! hand-edited; custom credential entries have their own editor in `credentials.rs`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, MachineConfig};
use crate::error::HostError;
use crate::host::Host;

/// A setting's value: text, a list of texts, or `null` to remove the key from the user's file
/// (the built-in default applies again).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
#[serde(untagged)]
pub enum SettingValue {
    Text(String),
    List(Vec<String>),
    Unset,
}

/// The shape a key takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Text,
    List,
}

/// The keys a settings update may change, with their shapes.
const SETTABLE: &[(&str, Shape)] = &[
    ("sandbox.provider", Shape::Text),
    ("sandbox.network_profile", Shape::Text),
    ("sandbox.extra_hosts", Shape::List),
    ("sandbox.secrets", Shape::List),
    ("sandbox.credentials", Shape::List),
    ("openshell.gateway", Shape::Text),
    ("openshell.image", Shape::Text),
    ("models.provider", Shape::Text),
    ("models.model", Shape::Text),
    ("models.vendor", Shape::Text),
    ("models.base_url", Shape::Text),
    ("models.key_store", Shape::Text),
    ("models.extra_ca_file", Shape::Text),
    ("approvals.mode", Shape::Text),
];

/// The settings in force and where the user's own file is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wire-schemas", derive(ts_rs::TS, utoipa::ToSchema))]
pub struct SettingsView {
    /// The user's config file (it may not exist yet: then every value is a default).
    pub file: String,
    /// Every settable key's value in force (built-in default or the user's).
    pub values: BTreeMap<String, SettingValue>,
    /// The keys the user's file sets.
    pub set_in_file: Vec<String>,
}

fn text(value: impl Into<String>) -> SettingValue {
    SettingValue::Text(value.into())
}

fn optional(value: Option<String>) -> SettingValue {
    value.map_or(SettingValue::Unset, SettingValue::Text)
}

/// The values in force of `config`.
fn values(config: &MachineConfig) -> BTreeMap<String, SettingValue> {
    let models = &config.models;
    let vendor = match models.vendor {
        model_client::Vendor::Anthropic => "anthropic",
        model_client::Vendor::OpenAiCompatible => "openai_compatible",
    };
    BTreeMap::from([
        ("sandbox.provider".into(), text(config.provider.as_str())),
        (
            "sandbox.network_profile".into(),
            text(config.network_profile.as_str()),
        ),
        (
            "sandbox.extra_hosts".into(),
            SettingValue::List(config.extra_hosts.clone()),
        ),
        (
            "sandbox.secrets".into(),
            SettingValue::List(config.secrets.clone()),
        ),
        (
            "sandbox.credentials".into(),
            SettingValue::List(config.enabled_credentials.clone()),
        ),
        (
            "openshell.gateway".into(),
            optional(config.openshell_gateway.clone()),
        ),
        (
            "openshell.image".into(),
            optional(config.openshell_image.clone()),
        ),
        ("models.provider".into(), text(&models.provider)),
        ("models.model".into(), text(&models.model)),
        ("models.vendor".into(), text(vendor)),
        ("models.base_url".into(), text(&models.base_url)),
        (
            "models.key_store".into(),
            text(models.key_store.to_string()),
        ),
        (
            "models.extra_ca_file".into(),
            optional(
                models
                    .extra_ca_file
                    .as_ref()
                    .map(|p| p.display().to_string()),
            ),
        ),
        (
            "approvals.mode".into(),
            text(config.approval_mode.as_str().replace('_', "-")),
        ),
    ])
}

/// The settable keys the user's file sets.
fn set_in_file(document: &toml_edit::DocumentMut) -> Vec<String> {
    SETTABLE
        .iter()
        .filter(|(key, _)| {
            let (table, name) = split(key);
            document
                .get(table)
                .and_then(|t| t.as_table_like())
                .is_some_and(|t| t.contains_key(name))
        })
        .map(|(key, _)| (*key).to_owned())
        .collect()
}

fn split(key: &str) -> (&str, &str) {
    key.split_once('.').unwrap_or((key, ""))
}

fn invalid(key: &str, problem: impl Into<String>) -> HostError {
    HostError::InvalidSetting {
        key: key.to_owned(),
        problem: problem.into(),
    }
}

/// `current` (the user's file) with `changes` applied, keeping everything else as written.
pub fn apply_changes(
    current: &str,
    changes: &[(String, SettingValue)],
) -> Result<String, HostError> {
    let mut document = parse_for_edit(current)?;
    // A file of comments only: they head the file, so they stay above the first table made
    // (toml_edit keeps them as the document's trailing text, which would put them below).
    let trailing = document.trailing().as_str().unwrap_or_default().to_owned();
    let heading = (document.as_table().is_empty() && !trailing.is_empty()).then(|| {
        document.set_trailing("");
        trailing
    });
    for (key, value) in changes {
        let Some((_, shape)) = SETTABLE.iter().find(|(k, _)| k == key) else {
            let known: Vec<&str> = SETTABLE.iter().map(|(k, _)| *k).collect();
            return Err(invalid(
                key,
                format!(
                    "not a setting that can be changed here (these can: {})",
                    known.join(", ")
                ),
            ));
        };
        let (table_name, name) = split(key);
        let item = match (value, shape) {
            (SettingValue::Unset, _) => None,
            (SettingValue::Text(text), Shape::Text) => Some(toml_edit::value(text.as_str())),
            (SettingValue::List(list), Shape::List) => {
                let mut array = toml_edit::Array::new();
                for entry in list {
                    array.push(entry.as_str());
                }
                Some(toml_edit::value(array))
            }
            (SettingValue::List(_), Shape::Text) => {
                return Err(invalid(key, "takes one text value, not a list"));
            }
            (SettingValue::Text(_), Shape::List) => {
                return Err(invalid(key, "takes a list of texts"));
            }
        };
        if document.get(table_name).is_none() {
            document[table_name] = toml_edit::table();
        }
        let Some(table) = document[table_name].as_table_like_mut() else {
            return Err(invalid(
                key,
                format!("`{table_name}` in the config file is not a table"),
            ));
        };
        match item {
            Some(item) => replace_keeping_comments(table, name, item),
            None => {
                table.remove(name);
            }
        }
    }
    if let Some(heading) = heading {
        let first = document
            .as_table_mut()
            .iter_mut()
            .next()
            .and_then(|(_, item)| item.as_table_mut());
        match first {
            Some(first) => {
                let prefix = first
                    .decor()
                    .prefix()
                    .and_then(|p| p.as_str())
                    .unwrap_or("");
                let prefix = format!("{heading}{prefix}");
                first.decor_mut().set_prefix(prefix);
            }
            None => document.set_trailing(heading),
        }
    }
    Ok(document.to_string())
}

/// Sets `name` in `table` to `item`; an existing key keeps its comments (the lines above it
/// and the one after its value).
pub(crate) fn replace_keeping_comments(
    table: &mut dyn toml_edit::TableLike,
    name: &str,
    item: toml_edit::Item,
) {
    match table.get_mut(name) {
        Some(existing) => {
            let decor = existing.as_value().map(|value| value.decor().clone());
            *existing = item;
            if let (Some(decor), Some(value)) = (decor, existing.as_value_mut()) {
                *value.decor_mut() = decor;
            }
        }
        None => {
            table.insert(name, item);
        }
    }
}

/// Writes `text` to `path` atomically (temporary file, then rename), keeping the previous
/// version as `config.toml.bak`.
pub(crate) fn write_atomically(path: &Path, text: &str) -> Result<(), HostError> {
    let dir = path
        .parent()
        .ok_or_else(|| HostError::Internal("the config path has no folder".into()))?;
    std::fs::create_dir_all(dir)
        .map_err(|e| HostError::io(format!("creating {}", dir.display()), e))?;
    if path.exists() {
        let backup = path.with_extension("toml.bak");
        std::fs::copy(path, &backup)
            .map_err(|e| HostError::io(format!("backing up {}", path.display()), e))?;
    }
    let temporary = path.with_extension("toml.tmp");
    std::fs::write(&temporary, text)
        .map_err(|e| HostError::io(format!("writing {}", temporary.display()), e))?;
    std::fs::rename(&temporary, path)
        .map_err(|e| HostError::io(format!("replacing {}", path.display()), e))
}

impl Host {
    /// The settings in force.
    pub fn settings(&self) -> Result<SettingsView, HostError> {
        let path = self.paths().config_file();
        let current = read_user_file(&path)?;
        let document: toml_edit::DocumentMut = current.parse().unwrap_or_default();
        Ok(SettingsView {
            file: path.display().to_string(),
            values: values(&self.config()),
            set_in_file: set_in_file(&document),
        })
    }

    /// Changes settings: validated as a whole, written back keeping the file's comments and
    /// order, then in force for new sessions (running sessions keep theirs).
    pub async fn update_settings(
        &self,
        changes: Vec<(String, SettingValue)>,
    ) -> Result<SettingsView, HostError> {
        if changes.is_empty() {
            return Err(invalid("(none)", "name at least one setting to change"));
        }
        self.rewrite_user_file(|current| apply_changes(current, &changes))?;
        self.settings()
    }

    /// Edits the user's config file: `edit` turns its text into the new text, which must load
    /// (else nothing is written and the error names the key); then it is written atomically
    /// and in force for new sessions.
    pub(crate) fn rewrite_user_file(
        &self,
        edit: impl FnOnce(&str) -> Result<String, HostError>,
    ) -> Result<(), HostError> {
        let path = self.paths().config_file();
        let current = read_user_file(&path)?;
        let updated = edit(&current)?;
        let config = MachineConfig::from_texts(Some((&updated, &path))).map_err(
            |ConfigError { key, problem, .. }| HostError::InvalidSetting { key, problem },
        )?;
        write_atomically(&path, &updated)?;
        self.replace_config(config);
        Ok(())
    }
}

/// The user's file parsed for editing; a file that is not TOML is refused with its line only
/// (the line itself may hold a pasted secret).
pub(crate) fn parse_for_edit(current: &str) -> Result<toml_edit::DocumentMut, HostError> {
    current.parse().map_err(|e: toml_edit::TomlError| {
        let at = e
            .span()
            .map(|span| {
                let line = current[..span.start.min(current.len())]
                    .matches('\n')
                    .count()
                    + 1;
                format!(" (line {line})")
            })
            .unwrap_or_default();
        invalid(
            "(file)",
            format!("the config file is not valid TOML{at}; fix it by hand first"),
        )
    })
}

pub(crate) fn read_user_file(path: &Path) -> Result<String, HostError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(HostError::io(format!("reading {}", path.display()), e)),
    }
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
