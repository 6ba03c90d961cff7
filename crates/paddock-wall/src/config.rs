//! The wall's configuration as the host renders it and the launcher reads it: the Landlock
//! rules, the proxy bridge and the environment of the sandbox's main process.
//!
//! The host writes it as JSON into a file that is bind-mounted read-only into the sandbox; the
//! launcher's `inner` mode reads it there. Both sides link this module, so they cannot drift.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::WallError;

/// The lowest Landlock ABI the wall accepts (ABI 3 brought `truncate` control).
pub const MIN_LANDLOCK_ABI: u32 = 3;

/// The loopback port inside the sandbox where the bridge to the host's proxy listens.
pub const BRIDGE_PORT: u16 = 3128;

/// What a Landlock rule allows beneath one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathAccess {
    /// Read files and list folders.
    Read,
    /// Read, list and execute (system folders, read-only grants, the wall's own binaries).
    ReadExec,
    /// Everything: read, write, create, remove, execute (read-write grants, `/tmp`, the home).
    ReadWrite,
    /// Device files: read, write, truncate and ioctl, nothing created or removed (`/dev`).
    Device,
}

impl PathAccess {
    pub fn as_str(self) -> &'static str {
        match self {
            PathAccess::Read => "read",
            PathAccess::ReadExec => "read_exec",
            PathAccess::ReadWrite => "read_write",
            PathAccess::Device => "device",
        }
    }
}

/// One Landlock rule: `access` is allowed beneath `path` (as seen inside the sandbox).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PathRule {
    pub path: String,
    pub access: PathAccess,
}

/// Where the in-sandbox bridge listens and what it forwards to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BridgeConfig {
    /// Port on 127.0.0.1 inside the sandbox's network namespace.
    pub port: u16,
    /// The host proxy's unix socket, as mounted inside the sandbox.
    pub proxy_socket: String,
    /// The wall's bridge secret (hex): the bridge puts it in every preamble, and the proxy
    /// believes a preamble's program only when it carries this token.
    pub token: String,
}

/// A resource the launcher limits per process (`setrlimit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitedResource {
    /// `RLIMIT_NPROC`: processes of the sandbox's user in the sandbox's user namespace.
    Processes,
    /// `RLIMIT_DATA`: a process's writable private memory, in bytes.
    Data,
    /// `RLIMIT_NOFILE`: open file descriptors.
    OpenFiles,
}

impl LimitedResource {
    pub fn as_str(self) -> &'static str {
        match self {
            LimitedResource::Processes => "processes",
            LimitedResource::Data => "data",
            LimitedResource::OpenFiles => "open_files",
        }
    }
}

/// One per-process limit the launcher sets before it starts the sandbox's processes (inside
/// the sandbox's user namespace, so a process count is the sandbox's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceRlimit {
    pub resource: LimitedResource,
    pub soft: u64,
    /// `None` keeps the hard limit (only the soft one is lowered).
    pub hard: Option<u64>,
}

/// A granted folder as the host pinned it: inside the wall, the launcher opens `path` following
/// no link and refuses to start unless it finds this device and inode (the folder the host
/// opened and mounted by handle).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantIdentity {
    pub path: String,
    pub device: u64,
    pub inode: u64,
    /// Mounted read-only (the launcher checks the mount is).
    #[serde(default)]
    pub read_only: bool,
}

/// A protected path the host mounts over a read-write grant, as it pinned it: inside the wall
/// the launcher opens `path` following no link and refuses to start unless it finds this
/// device and inode, as the root of a mount of its own, read-only when `read_only` (a git
/// directory bound onto itself is read-write).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtectedIdentity {
    pub path: String,
    pub device: u64,
    pub inode: u64,
    pub read_only: bool,
}

/// Everything `paddock-wall inner` needs to finish the wall and start the sandbox's main process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WallConfig {
    /// Refuse to start below this Landlock ABI.
    pub min_landlock_abi: u32,
    /// The Landlock rules; anything not beneath one of them is refused.
    pub rules: Vec<PathRule>,
    pub bridge: Option<BridgeConfig>,
    /// The main process's whole environment (nothing of the launcher's is inherited).
    pub env: BTreeMap<String, String>,
    /// The main process's working folder.
    pub cwd: String,
    /// Per-process limits set before the bridge and the main process start.
    #[serde(default)]
    pub rlimits: Vec<ResourceRlimit>,
    /// The granted folders' identities, checked from inside before Landlock (whose rules for
    /// these paths are made from the same handles).
    #[serde(default)]
    pub grants: Vec<GrantIdentity>,
    /// The protected paths mounted over the read-write grants, checked from inside after the
    /// grants.
    #[serde(default)]
    pub protected: Vec<ProtectedIdentity>,
}

impl WallConfig {
    pub fn to_json(&self) -> String {
        // Serialising plain strings, numbers and maps cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    pub fn from_json(text: &str) -> Result<Self, WallError> {
        let config: WallConfig = serde_json::from_str(text)
            .map_err(|e| WallError::Config(format!("the wall configuration is unreadable: {e}")))?;
        config.validate()?;
        Ok(config)
    }

    /// Refuses relative paths, an empty rule list and an ABI floor below the wall's own.
    pub fn validate(&self) -> Result<(), WallError> {
        if self.min_landlock_abi < MIN_LANDLOCK_ABI {
            return Err(WallError::Config(format!(
                "min_landlock_abi {} is below the wall's floor {MIN_LANDLOCK_ABI}",
                self.min_landlock_abi
            )));
        }
        if self.rules.is_empty() {
            return Err(WallError::Config(
                "the wall configuration has no Landlock rules".into(),
            ));
        }
        for rule in &self.rules {
            if !rule.path.starts_with('/') {
                return Err(WallError::Config(format!(
                    "Landlock rule path {:?} is not absolute",
                    rule.path
                )));
            }
        }
        if let Some(grant) = self.grants.iter().find(|g| !g.path.starts_with('/')) {
            return Err(WallError::Config(format!(
                "granted folder {:?} is not absolute",
                grant.path
            )));
        }
        if let Some(path) = self.protected.iter().find(|p| !p.path.starts_with('/')) {
            return Err(WallError::Config(format!(
                "protected path {:?} is not absolute",
                path.path
            )));
        }
        if !self.cwd.starts_with('/') {
            return Err(WallError::Config(format!(
                "working folder {:?} is not absolute",
                self.cwd
            )));
        }
        if let Some(bridge) = &self.bridge {
            if !bridge.proxy_socket.starts_with('/') {
                return Err(WallError::Config(format!(
                    "proxy socket {:?} is not absolute",
                    bridge.proxy_socket
                )));
            }
            if bridge.token.len() < 32 || !bridge.token.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(WallError::Config(
                    "the bridge token must be at least 32 hexadecimal digits".into(),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> WallConfig {
        WallConfig {
            min_landlock_abi: 3,
            rules: vec![PathRule {
                path: "/usr".into(),
                access: PathAccess::ReadExec,
            }],
            bridge: Some(BridgeConfig {
                port: BRIDGE_PORT,
                proxy_socket: "/run/paddock/proxy/proxy.sock".into(),
                token: "0123456789abcdef0123456789abcdef".into(),
            }),
            env: BTreeMap::from([("HOME".into(), "/home/paddock".into())]),
            cwd: "/".into(),
            rlimits: vec![ResourceRlimit {
                resource: LimitedResource::Data,
                soft: 1 << 30,
                hard: Some(1 << 30),
            }],
            grants: vec![GrantIdentity {
                path: "/work".into(),
                device: 1,
                inode: 2,
                read_only: false,
            }],
            protected: vec![ProtectedIdentity {
                path: "/work/.git/hooks".into(),
                device: 1,
                inode: 3,
                read_only: true,
            }],
        }
    }

    #[test]
    fn round_trips_through_json() {
        let config = sample();
        assert_eq!(WallConfig::from_json(&config.to_json()).unwrap(), config);
    }

    #[test]
    fn refuses_relative_paths_and_low_abi() {
        let mut relative = sample();
        relative.rules[0].path = "usr".into();
        let err = WallConfig::from_json(&relative.to_json()).unwrap_err();
        assert!(err.to_string().contains("\"usr\" is not absolute"), "{err}");

        let mut low = sample();
        low.min_landlock_abi = 2;
        let err = WallConfig::from_json(&low.to_json()).unwrap_err();
        assert!(
            err.to_string().contains("below the wall's floor 3"),
            "{err}"
        );

        let mut empty = sample();
        empty.rules.clear();
        assert!(WallConfig::from_json(&empty.to_json()).is_err());

        let mut weak = sample();
        if let Some(bridge) = weak.bridge.as_mut() {
            bridge.token = "1234".into();
        }
        let err = WallConfig::from_json(&weak.to_json()).unwrap_err();
        assert!(err.to_string().contains("bridge token"), "{err}");

        let mut protected = sample();
        protected.protected[0].path = ".git/hooks".into();
        let err = WallConfig::from_json(&protected.to_json()).unwrap_err();
        assert!(err.to_string().contains("protected path"), "{err}");

        let err = WallConfig::from_json("{").unwrap_err();
        assert!(err.to_string().contains("unreadable"), "{err}");
    }
}
