//! Where Paddock keeps its files (XDG base directories).

use std::path::PathBuf;

/// Paddock's folders on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `$XDG_CONFIG_HOME/paddock`
    pub config_dir: PathBuf,
    /// `$XDG_STATE_HOME/paddock`
    pub state_dir: PathBuf,
}

fn home() -> Result<PathBuf, String> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| "HOME is not set; set XDG_CONFIG_HOME and XDG_STATE_HOME instead".into())
}

/// An XDG variable's folder when it is set to an absolute path (the spec says to ignore
/// relative ones), else `$HOME/<fallback>`.
fn xdg(variable: &str, fallback: &str) -> Result<PathBuf, String> {
    match std::env::var_os(variable).map(PathBuf::from) {
        Some(path) if path.is_absolute() => Ok(path),
        _ => Ok(home()?.join(fallback)),
    }
}

impl Paths {
    /// Paddock's folders under `root` (`root/config`, `root/state`): tests and embedders that
    /// keep everything in one place.
    pub fn under(root: &std::path::Path) -> Self {
        Self {
            config_dir: root.join("config"),
            state_dir: root.join("state"),
        }
    }

    pub fn from_env() -> Result<Self, String> {
        Ok(Self {
            config_dir: xdg("XDG_CONFIG_HOME", ".config")?.join("paddock"),
            state_dir: xdg("XDG_STATE_HOME", ".local/state")?.join("paddock"),
        })
    }

    pub fn config_file(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }

    pub fn audit_db(&self) -> PathBuf {
        self.state_dir.join("audit.db")
    }

    pub fn sessions_db(&self) -> PathBuf {
        self.state_dir.join("sessions.db")
    }

    pub fn runs_dir(&self) -> PathBuf {
        self.state_dir.join("runs")
    }

    /// The durable per-session event log.
    pub fn events_db(&self) -> PathBuf {
        self.state_dir.join("events.db")
    }

    /// Which process runs which session: one lock file per live session.
    pub fn leases_dir(&self) -> PathBuf {
        self.state_dir.join("leases")
    }

    /// The API token of `paddock up` (owner-only).
    pub fn api_token_file(&self) -> PathBuf {
        self.state_dir.join("api-token")
    }

    /// Where protected files a session planted are moved, one folder per session.
    pub fn quarantine_dir(&self) -> PathBuf {
        self.state_dir.join("quarantine")
    }
}
