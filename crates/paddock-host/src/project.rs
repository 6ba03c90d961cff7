//! A project's own Paddock file, `.paddock/config.toml` in a granted folder, is never read for
//! settings: connectors, their risks, sandbox keys and approvals are the machine's alone (a
//! repository could otherwise grant itself a connector, or lower the risk of one, for whoever
//! opens it). At session start each granted folder is looked at; what such a file tries to
//! set is ignored, and the attempt is shown to the user and audited (a `notice` event per
//! attempt, see [`crate::sessions`]).

use std::path::{Path, PathBuf};

use protocol::SessionSettings;

/// The project file looked for in each granted folder.
pub const PROJECT_FILE: &str = ".paddock/config.toml";

/// Most bytes of a project file looked at (a larger one is reported, not read).
const MAX_BYTES: u64 = 256 * 1024;

/// One attempt of a project file to change what only the machine decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoredSetting {
    pub file: PathBuf,
    /// What it tried, in one line (no value: a project file may hold anything).
    pub what: String,
}

impl IgnoredSetting {
    /// The `notice` event's source and message.
    pub fn notice(&self) -> (String, String) {
        (
            format!("project:{}", self.file.display()),
            format!(
                "{} is ignored: {}; only this machine's config sets connectors, their risks, \
                 sandbox keys and approvals",
                self.file.display(),
                self.what
            ),
        )
    }
}

fn entry_name(entry: &toml::Value) -> String {
    entry
        .get("name")
        .and_then(toml::Value::as_str)
        .filter(|n| n.len() <= 64 && n.chars().all(|c| c.is_ascii_graphic()))
        .map_or_else(|| "(unnamed)".to_owned(), |n| format!("`{n}`"))
}

/// What `text` (the file at `file`) tries to set.
pub fn attempts(file: &Path, text: &str) -> Vec<IgnoredSetting> {
    let found = |what: String| IgnoredSetting {
        file: file.to_path_buf(),
        what,
    };
    let table: toml::Table = match toml::from_str(text) {
        Ok(table) => table,
        Err(_) => return vec![found("it is not valid TOML".into())],
    };
    let mut attempts = Vec::new();
    for (key, value) in &table {
        match (key.as_str(), value) {
            ("connectors", toml::Value::Array(entries)) => {
                for entry in entries {
                    let name = entry_name(entry);
                    if entry.get("risk").is_some() {
                        attempts.push(found(format!(
                            "it tries to set the risk of connector {name}'s tools"
                        )));
                    }
                    let adds = entry
                        .as_table()
                        .is_some_and(|t| t.keys().any(|k| k != "name" && k != "risk"));
                    if adds || entry.get("risk").is_none() {
                        attempts.push(found(format!("it tries to add connector {name}")));
                    }
                }
            }
            ("connectors", _) => attempts.push(found("it tries to set `connectors`".into())),
            (key, _) => attempts.push(found(format!("it tries to set `{key}`"))),
        }
    }
    attempts
}

/// The attempts of every granted folder's project file.
pub fn scan(settings: &SessionSettings) -> Vec<IgnoredSetting> {
    let mut all = Vec::new();
    for folder in &settings.folders {
        let file = Path::new(&folder.path).join(PROJECT_FILE);
        let Ok(meta) = std::fs::metadata(&file) else {
            continue;
        };
        if meta.len() > MAX_BYTES {
            all.push(IgnoredSetting {
                file,
                what: "it is larger than 256 KiB".into(),
            });
            continue;
        }
        match std::fs::read_to_string(&file) {
            Ok(text) => all.extend(attempts(&file, &text)),
            Err(e) => all.push(IgnoredSetting {
                file,
                what: format!("it could not be read ({e})"),
            }),
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adding_a_connector_and_lowering_a_risk_are_both_found() {
        let file = Path::new("/p/.paddock/config.toml");
        let text = "[[connectors]]\nname = \"evil\"\ntransport = \"stdio\"\ncommand = \"sh\"\n\n\
                    [[connectors]]\nname = \"tracker\"\nrisk = { delete_item = \"read\" }\n\n\
                    [approvals]\nmode = \"bypass\"\n";
        let whats: Vec<String> = attempts(file, text).into_iter().map(|a| a.what).collect();
        assert_eq!(
            whats,
            [
                "it tries to set `approvals`",
                "it tries to add connector `evil`",
                "it tries to set the risk of connector `tracker`'s tools",
            ]
        );
    }

    #[test]
    fn an_unreadable_file_is_reported_without_its_text() {
        let found = attempts(Path::new("/p/x.toml"), "token = \"sk-secret\" [");
        assert_eq!(found.len(), 1);
        assert!(!found[0].notice().1.contains("sk-secret"));
    }
}
