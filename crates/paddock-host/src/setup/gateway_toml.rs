//! OpenShell's `gateway.toml` (schema v2, OpenShell 0.1.x): where it is, whether it lets
//! Paddock bind-mount a session's folders for the active compute driver, and the edit that
//! does. Pure: text in, text out; edited with `toml_edit`, so comments, order and formatting
//! survive.

use std::path::PathBuf;

use sandbox_provider::openshell::HostEnvironment;
use toml_edit::{DocumentMut, Item, TableLike, Value};

/// How the user restarts the gateway so it reads the file again.
pub const RESTART_GATEWAY: &str = "systemctl --user restart openshell-gateway (or restart \
                                   `openshell-gateway` however you run it)";

/// The driver assumed when neither the file nor `OPENSHELL_COMPUTE_DRIVER` names one.
pub const ASSUMED_DRIVER: &str = "docker";

/// `OPENSHELL_GATEWAY_CONFIG`, else `$XDG_CONFIG_HOME/openshell/gateway.toml` (default
/// `~/.config`): where the gateway reads its configuration (the Debian and RPM packages'
/// user service included).
pub fn location(env: &HostEnvironment) -> Option<PathBuf> {
    if let Some(path) = env.var("OPENSHELL_GATEWAY_CONFIG") {
        return Some(PathBuf::from(path));
    }
    env.user_root().map(|root| root.join("gateway.toml"))
}

/// What the file allows, and the edit that makes it allow bind mounts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    /// The compute driver the keys were checked for.
    pub driver: String,
    /// The driver was not named (file or environment): [`ASSUMED_DRIVER`].
    pub driver_assumed: bool,
    /// What keeps bind mounts off, one item per key; empty when they are allowed.
    pub missing: Vec<String>,
    /// The file with every missing key set, when an edit can fix it.
    pub fixed: Option<String>,
    /// Why no edit can fix it (the user decides).
    pub blocked: Option<String>,
}

impl Review {
    pub fn allows_bind_mounts(&self) -> bool {
        self.missing.is_empty() && self.blocked.is_none()
    }

    fn blocked(driver: &str, assumed: bool, why: String) -> Self {
        Self {
            driver: driver.to_owned(),
            driver_assumed: assumed,
            missing: Vec::new(),
            fixed: None,
            blocked: Some(why),
        }
    }
}

/// The file a missing `gateway.toml` becomes.
fn new_file(driver: &str) -> String {
    format!(
        "# OpenShell gateway configuration (schema 2, OpenShell 0.1.x).\n\
         [openshell]\n\
         version = 2\n\
         \n\
         # Paddock's sessions reach their folders as bind mounts at the same paths.\n\
         [openshell.drivers.{driver}]\n\
         allow_driver_config = true\n\
         enable_bind_mounts = true\n\
         \n\
         # Raw host bind mounts carry no admission labels: admission would reject them.\n\
         [openshell.drivers.{driver}.resource_admission]\n\
         enabled = false\n"
    )
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Checks `current` (`None`: the file does not exist, so the built-in defaults apply and bind
/// mounts are off) for the driver named in the file, else `env_driver`
/// (`OPENSHELL_COMPUTE_DRIVER`), else [`ASSUMED_DRIVER`].
pub fn review(current: Option<&str>, env_driver: Option<&str>) -> Review {
    let Some(text) = current else {
        let driver = env_driver.unwrap_or(ASSUMED_DRIVER);
        if !matches!(driver, "docker" | "podman") {
            return Review::blocked(driver, false, no_mounts(driver));
        }
        return Review {
            driver: driver.to_owned(),
            driver_assumed: env_driver.is_none(),
            missing: vec![
                "the file does not exist, so the gateway's defaults keep caller mounts off".into(),
            ],
            fixed: Some(new_file(driver)),
            blocked: None,
        };
    };
    let mut document: DocumentMut = match text.parse() {
        Ok(document) => document,
        Err(e) => {
            // The parser's message quotes the line; the position is enough.
            let at = e
                .span()
                .map(|s| format!(" (line {})", line_of(text, s.start)))
                .unwrap_or_default();
            return Review::blocked(
                env_driver.unwrap_or(ASSUMED_DRIVER),
                env_driver.is_none(),
                format!("the file is not valid TOML{at}; fix it by hand first"),
            );
        }
    };
    let named = document
        .get("openshell")
        .and_then(|o| o.get("gateway"))
        .and_then(|g| g.get("compute_driver"))
        .and_then(Item::as_str)
        .map(str::to_owned);
    let assumed = named.is_none() && env_driver.is_none();
    let driver = named
        .or_else(|| env_driver.map(str::to_owned))
        .unwrap_or_else(|| ASSUMED_DRIVER.to_owned());
    let version = document
        .get("openshell")
        .and_then(|o| o.get("version"))
        .map(|v| v.as_integer());
    match version {
        Some(Some(2)) | None => {}
        Some(Some(1)) => {
            return Review::blocked(
                &driver,
                assumed,
                "the file is schema 1 (OpenShell 0.0.x); an OpenShell 0.1.x gateway needs \
                 `version = 2` and the 0.1 key names (see OpenShell's upgrade notes for 0.1.0); \
                 migrate it by hand"
                    .into(),
            );
        }
        Some(_) => {
            return Review::blocked(
                &driver,
                assumed,
                "`[openshell] version` is not 2, the schema OpenShell 0.1.x reads".into(),
            );
        }
    }
    if !matches!(driver.as_str(), "docker" | "podman") {
        return Review::blocked(&driver, assumed, no_mounts(&driver));
    }
    let mut missing = Vec::new();
    let edited = edit(&mut document, &driver, version.is_none(), &mut missing);
    match edited {
        Err(why) => Review::blocked(&driver, assumed, why),
        Ok(()) => Review {
            fixed: (!missing.is_empty()).then(|| document.to_string()),
            driver,
            driver_assumed: assumed,
            missing,
            blocked: None,
        },
    }
}

fn no_mounts(driver: &str) -> String {
    format!(
        "the gateway's compute driver is `{driver}`, which has no host bind mounts; Paddock's \
         OpenShell sessions need the docker or podman driver (`[openshell.gateway] \
         compute_driver`)"
    )
}

/// The table `key` of `parent`, created when absent: implicit (no empty header is written)
/// unless it gets a `comment` above its header.
fn table<'a>(
    parent: &'a mut dyn TableLike,
    key: &str,
    path: &str,
    comment: Option<&str>,
) -> Result<&'a mut dyn TableLike, String> {
    if !parent.contains_key(key) {
        let mut table = toml_edit::Table::new();
        match comment {
            Some(comment) => table.decor_mut().set_prefix(format!("\n# {comment}\n")),
            None => table.set_implicit(true),
        }
        parent.insert(key, Item::Table(table));
    }
    parent
        .get_mut(key)
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| format!("`{path}` in the file is not a table; fix it by hand"))
}

/// Sets `key` to `wanted` unless it already is; a replaced value keeps its comment.
fn set_bool(
    table: &mut dyn TableLike,
    key: &str,
    wanted: bool,
    path: &str,
    missing: &mut Vec<String>,
) {
    let current = table.get(key).and_then(Item::as_bool);
    if current == Some(wanted) {
        return;
    }
    missing.push(match table.get(key) {
        None => format!("`{path}.{key}` is not set (default: {})", !wanted),
        Some(_) => format!("`{path}.{key}` is not {wanted}"),
    });
    let mut value = Value::from(wanted);
    if let Some(old) = table.get(key).and_then(Item::as_value) {
        *value.decor_mut() = old.decor().clone();
    }
    table.insert(key, Item::Value(value));
}

/// Sets what bind mounts need for `driver`, recording each change in `missing`.
fn edit(
    document: &mut DocumentMut,
    driver: &str,
    add_version: bool,
    missing: &mut Vec<String>,
) -> Result<(), String> {
    let root: &mut dyn TableLike = document.as_table_mut();
    let openshell = table(root, "openshell", "openshell", None)?;
    if add_version {
        missing.push("`openshell.version` is not set (OpenShell 0.1.x needs 2)".into());
        openshell.insert("version", toml_edit::value(2));
    }
    let drivers = table(openshell, "drivers", "openshell.drivers", None)?;
    let path = format!("openshell.drivers.{driver}");
    let driver_table = table(
        drivers,
        driver,
        &path,
        Some("Paddock's sessions reach their folders as bind mounts at the same paths."),
    )?;
    set_bool(driver_table, "allow_driver_config", true, &path, missing);
    set_bool(driver_table, "enable_bind_mounts", true, &path, missing);
    let admission_path = format!("{path}.resource_admission");
    let admission = table(
        driver_table,
        "resource_admission",
        &admission_path,
        Some("Raw host bind mounts carry no admission labels: admission would reject them."),
    )?;
    set_bool(admission, "enabled", false, &admission_path, missing);
    Ok(())
}

#[cfg(test)]
#[path = "gateway_toml_tests.rs"]
mod tests;
