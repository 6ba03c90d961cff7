//! Credential-share entries: copies of the user's files for tools that act as the user (ssh,
//! gh, aws, kube, custom), placed in the sandbox's private home and deleted with it.
//!
//! The real files are only ever opened read-only. Only regular files are copied (sockets, such
//! as an ssh agent's, never are); copies are owner-only (folders 0700, files 0600).

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sandbox_policy::CredentialEntry;

use crate::error::ProviderError;
use crate::local::identity::Identity;
use crate::local::layout::{HOME_INSIDE, WALL_INSIDE};

/// The most bytes one entry may copy (a guard against copying a cache by mistake).
const MAX_ENTRY_BYTES: u64 = 32 * 1024 * 1024;
/// The deepest folder level copied below an entry's source.
const MAX_DEPTH: usize = 4;

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

/// Whether `entry` copies a file called `file_name`.
fn wants(entry: &CredentialEntry, file_name: &str) -> bool {
    let globs = entry.files_to_copy();
    let included = globs.is_empty() || globs.iter().any(|g| glob_matches(g, file_name));
    included && !entry.exclude.iter().any(|g| glob_matches(g, file_name))
}

/// The entry's environment inside the sandbox.
pub fn environment(entry: &CredentialEntry) -> BTreeMap<String, String> {
    entry.environment(HOME_INSIDE)
}

/// Copies `share` from `user_home` into `private_home`; returns the copied files (relative).
pub fn copy_share(
    share: &CredentialEntry,
    user_home: &Path,
    private_home: &Path,
    identity: &Identity,
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
        make_private_dirs(private_home, parent, identity)?;
    }
    if meta.is_dir() {
        copy_dir(
            share,
            &source,
            &target,
            0,
            identity,
            &mut budget,
            &mut copied,
        )?;
    } else if meta.is_file() {
        copy_file(share, &source, &target, identity, &mut budget)?;
        copied.push(PathBuf::from(&share.source));
    }
    if share.name == "ssh" {
        wire_ssh(private_home, identity)?;
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

fn make_private_dirs(home: &Path, dir: &Path, identity: &Identity) -> Result<(), ProviderError> {
    let mut current = home.to_path_buf();
    let relative = dir.strip_prefix(home).unwrap_or(dir);
    for part in relative.components() {
        current.push(part);
        if !current.is_dir() {
            fs::create_dir(&current)
                .map_err(|e| ProviderError::io(format!("creating {}", current.display()), e))?;
            fs::set_permissions(&current, fs::Permissions::from_mode(0o700))
                .map_err(|e| ProviderError::io(format!("protecting {}", current.display()), e))?;
            identity.hand_over(&current)?;
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments, reason = "a recursive walk's state")]
fn copy_dir(
    share: &CredentialEntry,
    source: &Path,
    target: &Path,
    depth: usize,
    identity: &Identity,
    budget: &mut u64,
    copied: &mut Vec<PathBuf>,
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
    identity.hand_over(target)?;
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
            if !share.exclude.iter().any(|g| glob_matches(g, &name)) {
                copy_dir(
                    share,
                    &from,
                    &target.join(&name),
                    depth + 1,
                    identity,
                    budget,
                    copied,
                )?;
            }
        } else if meta.is_file() && wants(share, &name) {
            let to = target.join(&name);
            copy_file(share, &from, &to, identity, budget)?;
            copied.push(to);
        }
    }
    Ok(())
}

fn copy_file(
    share: &CredentialEntry,
    from: &Path,
    to: &Path,
    identity: &Identity,
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
    write_private(to, &bytes, identity)
}

fn write_private(to: &Path, bytes: &[u8], identity: &Identity) -> Result<(), ProviderError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(to)
        .map_err(|e| ProviderError::io(format!("creating {}", to.display()), e))?;
    file.write_all(bytes)
        .map_err(|e| ProviderError::io(format!("writing {}", to.display()), e))?;
    identity.hand_over(to)
}

/// Makes ssh (and git over ssh) use the copies, through the wall's proxy, with no agent: the
/// private `~/.ssh/config` forces the proxy command and includes the user's own config after.
fn wire_ssh(private_home: &Path, identity: &Identity) -> Result<(), ProviderError> {
    let dir = private_home.join(".ssh");
    make_private_dirs(private_home, &dir, identity)?;
    let user_config = dir.join("config");
    let included = dir.join("config.user");
    if user_config.is_file() {
        fs::rename(&user_config, &included)
            .map_err(|e| ProviderError::io("setting the ssh config aside", e))?;
    }
    let mut config = format!(
        "# Written by Paddock's local wall: ssh reaches hosts only through the wall's proxy,\n\
         # with the copied keys and no agent.\n\
         Host *\n    ProxyCommand {WALL_INSIDE} connect %h %p\n    IdentityAgent none\n    \
         ForwardAgent no\n    UserKnownHostsFile {HOME_INSIDE}/.ssh/known_hosts\n"
    );
    if included.is_file() {
        config.push_str(&format!("    Include {HOME_INSIDE}/.ssh/config.user\n"));
    }
    write_private(&user_config, config.as_bytes(), identity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_names() {
        assert!(glob_matches("*.sock", "agent.sock"));
        assert!(glob_matches("agent.*", "agent.123"));
        assert!(glob_matches("id_?sa", "id_rsa"));
        assert!(!glob_matches("authorized_keys", "authorized_keys2"));
        assert!(glob_matches("*", ""));
        assert!(!glob_matches("config", "config.bak"));
    }
}
