//! Credential-share entries, for every provider that has a private home (the local wall and
//! OpenShell): copies of the user's files for tools that act as the user (ssh, gh, aws, kube,
//! custom), placed in the sandbox's private home and deleted with it.
//!
//! The real files are only ever opened read-only. Only regular files are copied (sockets, such
//! as an ssh agent's, never are); copies are owner-only (folders 0700, files 0600) and handed
//! to the sandbox's user. Where the copies live and how ssh reaches a host differ by provider:
//! each passes its [`SshWiring`] and its [`HandOver`].

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sandbox_policy::CredentialEntry;

use crate::error::ProviderError;

/// The most bytes one entry may copy (a guard against copying a cache by mistake).
const MAX_ENTRY_BYTES: u64 = 32 * 1024 * 1024;
/// The deepest folder level copied below an entry's source.
const MAX_DEPTH: usize = 4;

/// Gives a file or folder of the private home to the sandbox's user.
pub(crate) trait HandOver {
    fn hand_over(&self, path: &Path) -> Result<(), ProviderError>;
}

/// How a provider's ssh reaches hosts: written into the private `~/.ssh/config`.
#[derive(Debug, Clone)]
pub(crate) struct SshWiring {
    /// The comment lines at the top of the config (each starting with `#`, ending in `\n`).
    pub comment: String,
    /// The private home's path inside the sandbox.
    pub home_inside: String,
    /// The `ProxyCommand` line's value (`%h` and `%p` are ssh's host and port).
    pub proxy_command: String,
}

/// Matches a file name against a glob of `*` and `?`.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some('?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

/// The entries a session enabled, by name, from those the machine offers. A `kube` entry takes
/// its hosts from the user's kubeconfig. An unknown name is refused with the names on offer.
pub(crate) fn enabled_entries(
    offered: &[CredentialEntry],
    names: &[String],
    user_home: &Path,
) -> Result<Vec<CredentialEntry>, ProviderError> {
    let mut enabled = Vec::new();
    for name in names {
        let entry = offered.iter().find(|s| &s.name == name).ok_or_else(|| {
            let known: Vec<&str> = offered.iter().map(|s| s.name.as_str()).collect();
            ProviderError::InvalidRequest(format!(
                "unknown credential entry `{name}` (this machine offers: {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ))
        })?;
        let entry = if entry.hosts_from_kubeconfig {
            let path = user_home.join(&entry.source).join("config");
            let text = fs::read_to_string(&path)
                .map_err(|e| ProviderError::io(format!("reading {}", path.display()), e))?;
            entry.clone().with_kubeconfig(&text).map_err(|e| {
                ProviderError::InvalidRequest(format!("credential entry `{name}`: {e}"))
            })?
        } else {
            entry.clone()
        };
        if enabled
            .iter()
            .any(|e: &CredentialEntry| e.name == entry.name)
        {
            continue;
        }
        enabled.push(entry);
    }
    Ok(enabled)
}

/// Whether `entry` copies a file called `file_name`.
fn wants(entry: &CredentialEntry, file_name: &str) -> bool {
    let globs = entry.files_to_copy();
    let included = globs.is_empty() || globs.iter().any(|g| glob_matches(g, file_name));
    included && !entry.exclude.iter().any(|g| glob_matches(g, file_name))
}

/// Copies `share` from `user_home` into `private_home`; returns the copied files (relative).
/// The `ssh` entry is also wired: see [`SshWiring`].
pub(crate) fn copy_share(
    share: &CredentialEntry,
    user_home: &Path,
    private_home: &Path,
    owner: &dyn HandOver,
    ssh: &SshWiring,
) -> Result<Vec<PathBuf>, ProviderError> {
    let source = user_home.join(&share.source);
    let target = private_home.join(&share.source);
    let meta = fs::metadata(&source).map_err(|e| {
        ProviderError::InvalidRequest(format!(
            "credential entry `{}`: {} cannot be read ({e})",
            share.name,
            source.display()
        ))
    })?;
    let mut copied = Vec::new();
    let mut budget = MAX_ENTRY_BYTES;
    if let Some(parent) = target.parent() {
        make_private_dirs(private_home, parent, owner)?;
    }
    let mut walk = Walk {
        share,
        owner,
        budget: &mut budget,
        copied: &mut copied,
    };
    if meta.is_dir() {
        walk.copy_dir(&source, &target, 0)?;
    } else if meta.is_file() {
        copy_file(share, &source, &target, owner, &mut budget)?;
        copied.push(PathBuf::from(&share.source));
    }
    if share.name == "ssh" {
        wire_ssh(private_home, owner, ssh)?;
    }
    Ok(copied
        .into_iter()
        .map(|p| {
            p.strip_prefix(private_home)
                .map(Path::to_path_buf)
                .unwrap_or(p)
        })
        .collect())
}

/// Creates the folders from `home` down to `dir` that do not exist yet, owner-only.
pub(crate) fn make_private_dirs(
    home: &Path,
    dir: &Path,
    owner: &dyn HandOver,
) -> Result<(), ProviderError> {
    let mut current = home.to_path_buf();
    let relative = dir.strip_prefix(home).unwrap_or(dir);
    for part in relative.components() {
        current.push(part);
        if !current.is_dir() {
            fs::create_dir(&current)
                .map_err(|e| ProviderError::io(format!("creating {}", current.display()), e))?;
            fs::set_permissions(&current, fs::Permissions::from_mode(0o700))
                .map_err(|e| ProviderError::io(format!("protecting {}", current.display()), e))?;
            owner.hand_over(&current)?;
        }
    }
    Ok(())
}

/// A recursive copy's state.
struct Walk<'a> {
    share: &'a CredentialEntry,
    owner: &'a dyn HandOver,
    budget: &'a mut u64,
    copied: &'a mut Vec<PathBuf>,
}

impl Walk<'_> {
    fn copy_dir(
        &mut self,
        source: &Path,
        target: &Path,
        depth: usize,
    ) -> Result<(), ProviderError> {
        if depth > MAX_DEPTH {
            return Ok(());
        }
        if !target.is_dir() {
            fs::create_dir(target)
                .map_err(|e| ProviderError::io(format!("creating {}", target.display()), e))?;
        }
        fs::set_permissions(target, fs::Permissions::from_mode(0o700))
            .map_err(|e| ProviderError::io(format!("protecting {}", target.display()), e))?;
        self.owner.hand_over(target)?;
        let entries = fs::read_dir(source)
            .map_err(|e| ProviderError::io(format!("listing {}", source.display()), e))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let from = entry.path();
            // Follows a symlink to see what it names; only folders and regular files are copied.
            let Ok(meta) = fs::metadata(&from) else {
                continue;
            };
            if meta.is_dir() {
                if !self.share.exclude.iter().any(|g| glob_matches(g, &name)) {
                    self.copy_dir(&from, &target.join(&name), depth + 1)?;
                }
            } else if meta.is_file() && wants(self.share, &name) {
                let to = target.join(&name);
                copy_file(self.share, &from, &to, self.owner, self.budget)?;
                self.copied.push(to);
            }
        }
        Ok(())
    }
}

fn copy_file(
    share: &CredentialEntry,
    from: &Path,
    to: &Path,
    owner: &dyn HandOver,
    budget: &mut u64,
) -> Result<(), ProviderError> {
    // Read-only: the user's file is never opened for writing.
    let mut source = File::open(from)
        .map_err(|e| ProviderError::io(format!("reading {}", from.display()), e))?;
    let mut bytes = Vec::new();
    Read::by_ref(&mut source)
        .take(*budget + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ProviderError::io(format!("reading {}", from.display()), e))?;
    if bytes.len() as u64 > *budget {
        return Err(ProviderError::InvalidRequest(format!(
            "credential entry `{}` holds more than {} MiB; refusing to copy it",
            share.name,
            MAX_ENTRY_BYTES / (1024 * 1024)
        )));
    }
    *budget -= bytes.len() as u64;
    write_private(to, &bytes, owner)
}

/// Creates `to` (it must not exist yet) owner-only with `bytes`, for the sandbox's user.
pub(crate) fn write_private(
    to: &Path,
    bytes: &[u8],
    owner: &dyn HandOver,
) -> Result<(), ProviderError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(to)
        .map_err(|e| ProviderError::io(format!("creating {}", to.display()), e))?;
    file.write_all(bytes)
        .map_err(|e| ProviderError::io(format!("writing {}", to.display()), e))?;
    owner.hand_over(to)
}

/// Makes ssh (and git over ssh) use the copies, through the provider's proxy, with no agent:
/// the private `~/.ssh/config` forces the proxy command and includes the user's own config
/// after.
fn wire_ssh(
    private_home: &Path,
    owner: &dyn HandOver,
    wiring: &SshWiring,
) -> Result<(), ProviderError> {
    let dir = private_home.join(".ssh");
    make_private_dirs(private_home, &dir, owner)?;
    let user_config = dir.join("config");
    let included = dir.join("config.user");
    if user_config.is_file() {
        fs::rename(&user_config, &included)
            .map_err(|e| ProviderError::io("setting the ssh config aside", e))?;
    }
    let SshWiring {
        comment,
        home_inside,
        proxy_command,
    } = wiring;
    let mut config = format!(
        "{comment}Host *\n    ProxyCommand {proxy_command}\n    IdentityAgent none\n    \
         ForwardAgent no\n    UserKnownHostsFile {home_inside}/.ssh/known_hosts\n"
    );
    if included.is_file() {
        config.push_str(&format!("    Include {home_inside}/.ssh/config.user\n"));
    }
    write_private(&user_config, config.as_bytes(), owner)
}

#[cfg(test)]
#[path = "credentials_tests.rs"]
mod tests;
