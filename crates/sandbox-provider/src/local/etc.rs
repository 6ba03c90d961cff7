//! The wall's `/etc`: a synthesized folder holding only what programs need, never the host's
//! `/etc` with a few files covered. Whatever a host keeps in `/etc` beyond this list (keys,
//! tokens, root-only configuration such as `default/cacerts`, files added after Paddock was
//! written) is simply absent inside, whether Paddock runs as a user (whose rights would
//! already refuse root-only files, but not the files a user may read) or as root (whose
//! sandbox keeps host uid 0 when the folders are root's, and would read them).
//!
//! A copy of the allowed entries ([`cached`]: files with their mode minus set-id bits, links as
//! links, folders whole but for what others may not read), built once in the state folder and
//! rebuilt when any allowed entry changes, is bound read-only at `/etc` in every wall, with the wall's own `passwd` and `group`
//! bound on it (a mount per entry would cost ~0.4 ms each at every start). One Landlock rule
//! (read) covers `/etc`, which holds nothing else.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// Paths below `/etc` a wall shows when the host has them, grouped by who needs them.
pub const ETC_ALLOWED: &[&str] = &[
    // Name services and the network (the proxy resolves names; there is no DNS inside).
    "nsswitch.conf",
    "hosts",
    "host.conf",
    "gai.conf",
    "services",
    "protocols",
    "networks",
    "ethertypes",
    "netconfig",
    "rpc",
    "iproute2",
    "mtab",
    // The dynamic loader.
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    // TLS trust: certificates and library configuration, never private keys.
    "ssl/certs",
    "ssl/openssl.cnf",
    "ssl/ct_log_list.cnf",
    "ca-certificates",
    "ca-certificates.conf",
    "pki/ca-trust",
    "pki/tls/certs",
    "pki/tls/cert.pem",
    "pki/tls/openssl.cnf",
    "crypto-policies",
    "gnutls",
    // The system's identity and time.
    "os-release",
    "lsb-release",
    "debian_version",
    "redhat-release",
    "localtime",
    "timezone",
    "locale.alias",
    "locale.conf",
    "alternatives",
    // Shells.
    "shells",
    "profile",
    "profile.d",
    "bash.bashrc",
    "bash_completion",
    "bash_completion.d",
    "environment",
    "inputrc",
    "terminfo",
    // What ordinary tools read: git, ssh (client only), python, perl, java, file, man, editors.
    "gitconfig",
    "gitattributes",
    "ssh/ssh_config",
    "ssh/ssh_config.d",
    "ssh/ssh_known_hosts",
    "python3",
    "perl",
    "java-17-openjdk",
    "java-21-openjdk",
    "maven",
    "magic",
    "magic.mime",
    "mime.types",
    "mailcap",
    "manpath.config",
    "groff",
    "sgml",
    "xml",
    "fonts",
    "vim",
    "nanorc",
    "wgetrc",
];

/// Whether `name` (a path below `/etc`) is allowed: listed, or a versioned python folder
/// (`python3.11`).
pub fn etc_allowed(name: &str) -> bool {
    ETC_ALLOWED.contains(&name)
        || name
            .strip_prefix("python3.")
            .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()))
}

/// One entry of the wall's `/etc`, as found on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EtcMount {
    /// Bind the host's folder read-only at the same path.
    Bind(String),
    /// Copy the host's file into the wall's `etc`.
    Copy(String),
    /// Recreate the host's link (its target as stored).
    Link { path: String, target: String },
}

/// The synthesized `/etc` for the host's current `host_etc`, built under `cache_root` once and
/// reused by every wall while nothing allowed changes: its name carries a fingerprint of every
/// allowed entry's metadata (walked whole, following no link), so a changed, added or removed
/// file makes the next start build a new one. Files are copied with their permission bits (set-id
/// bits dropped), links recreated, folders copied whole; `passwd` and `group` are empty files
/// the wall's own are bound on.
pub fn cached(host_etc: &Path, cache_root: &Path) -> std::io::Result<PathBuf> {
    let mounts = etc_mounts(host_etc)?;
    let mut fingerprint = std::collections::hash_map::DefaultHasher::new();
    for mount in &mounts {
        let name = match mount {
            EtcMount::Bind(name) | EtcMount::Copy(name) => name,
            EtcMount::Link { path, .. } => path,
        };
        fingerprint_tree(&host_etc.join(name), name, &mut fingerprint);
    }
    let dir = cache_root.join(format!("etc-{:016x}", fingerprint.finish()));
    if dir.is_dir() {
        return Ok(dir);
    }
    std::fs::create_dir_all(cache_root)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let built = cache_root.join(format!("building-{}-{nanos}", std::process::id()));
    std::fs::create_dir(&built)?;
    let root = built.as_path();
    for mount in &mounts {
        match mount {
            EtcMount::Bind(name) | EtcMount::Copy(name) => {
                copy_tree(&host_etc.join(name), &root.join(name))?;
            }
            EtcMount::Link { path, target } => {
                let to = root.join(path);
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::os::unix::fs::symlink(target, to)?;
            }
        }
    }
    for own in ["passwd", "group"] {
        std::fs::write(root.join(own), "")?;
    }
    set_mode(root, 0o755)?;
    match std::fs::rename(&built, &dir) {
        Ok(()) => Ok(dir),
        // Another start built the same one meanwhile.
        Err(_) if dir.is_dir() => {
            let _ = std::fs::remove_dir_all(&built);
            Ok(dir)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&built);
            Err(e)
        }
    }
}

/// Removes every copy in `cache_root` but the newest, and unfinished ones; returns their names.
/// Only when no wall runs: a wall mounts its copy for its whole life.
pub fn reap_old(cache_root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(cache_root) else {
        return Vec::new();
    };
    let mut copies: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let modified = e.metadata().and_then(|m| m.modified()).ok()?;
            Some((modified, e.path()))
        })
        .collect();
    copies.sort();
    let newest = copies
        .iter()
        .rev()
        .find(|(_, p)| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("etc-"))
        })
        .map(|(_, p)| p.clone());
    let mut reaped = Vec::new();
    for (_, path) in copies {
        if Some(&path) != newest.as_ref() && std::fs::remove_dir_all(&path).is_ok() {
            reaped.push(path.display().to_string());
        }
    }
    reaped
}

fn fingerprint_tree(path: &Path, name: &str, hasher: &mut impl Hasher) {
    use std::os::unix::fs::MetadataExt;
    name.hash(hasher);
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        0u8.hash(hasher);
        return;
    };
    (
        meta.mode(),
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
    )
        .hash(hasher);
    if meta.is_dir()
        && let Ok(entries) = std::fs::read_dir(path)
    {
        let mut names: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        names.sort();
        for child in names {
            let child_name = format!("{name}/{}", child.to_string_lossy());
            fingerprint_tree(&path.join(&child), &child_name, hasher);
        }
    }
}

/// Copies `from` to `to` following no link: folders whole, files with their permission bits
/// minus set-id, links as links; anything else (sockets, devices) is left out, and so is what
/// others may not read on the host (a file without `o+r`, a folder without `o+rx`): inside an
/// allowed folder a host may keep root-only files (`ssl/certs/…` 0600, a 0700 folder), which a
/// sandbox running as uid 0 would read in a copy, and which no program run as a user relies on.
///
/// An entry that vanishes on the host while it is copied (a package manager or a tool
/// replacing files under `/etc`) is left out rather than failing every wall's start; the
/// copy is made again when the entries' metadata changes.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    match copy_entry(from, to) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !to.exists() => Ok(()),
        other => other,
    }
}

fn copy_entry(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(from)?;
    let mode = meta.permissions().mode() & 0o777;
    let others_may_read = if meta.is_dir() {
        mode & 0o005 == 0o005
    } else {
        mode & 0o004 != 0
    };
    if !meta.is_symlink() && !others_may_read {
        return Ok(());
    }
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if meta.is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)?;
    } else if meta.is_dir() {
        std::fs::create_dir(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        set_mode(to, mode | 0o700)?;
    } else if meta.is_file() {
        std::fs::copy(from, to)?;
        set_mode(to, mode)?;
    }
    Ok(())
}

fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// What of the host's `etc` folder (`host_etc`) the wall shows, sorted by path.
pub fn etc_mounts(host_etc: &Path) -> std::io::Result<Vec<EtcMount>> {
    let mut names: Vec<String> = ETC_ALLOWED.iter().map(|s| (*s).to_owned()).collect();
    if let Ok(entries) = std::fs::read_dir(host_etc) {
        names.extend(
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| etc_allowed(name) && !ETC_ALLOWED.contains(&name.as_str())),
        );
    }
    names.sort();
    let mut mounts = Vec::new();
    for name in names {
        let host = host_etc.join(&name);
        // A folder above the entry that is a link on the host (e.g. `ssl` itself) is not
        // followed: only plain folders lead to an allowed entry.
        let parent_is_link = Path::new(&name).ancestors().skip(1).any(|a| {
            !a.as_os_str().is_empty()
                && std::fs::symlink_metadata(host_etc.join(a)).is_ok_and(|m| m.is_symlink())
        });
        if parent_is_link {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&host) else {
            continue;
        };
        if meta.is_symlink() {
            let target = std::fs::read_link(&host)?.display().to_string();
            mounts.push(EtcMount::Link { path: name, target });
        } else if meta.is_dir() {
            mounts.push(EtcMount::Bind(name));
        } else if meta.is_file() {
            mounts.push(EtcMount::Copy(name));
        }
    }
    Ok(mounts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_gone_before_it_is_copied_is_left_out() {
        let host = tempfile::tempdir().unwrap();
        let copy = tempfile::tempdir().unwrap();
        let gone = host.path().join("gone.conf");
        copy_tree(&gone, &copy.path().join("gone.conf")).unwrap();
        assert!(!copy.path().join("gone.conf").exists());
        // Any other failure still fails the copy.
        std::fs::create_dir(copy.path().join("taken")).unwrap();
        std::fs::create_dir(host.path().join("taken")).unwrap();
        assert!(copy_tree(&host.path().join("taken"), &copy.path().join("taken")).is_err());
    }

    #[test]
    fn only_listed_entries_and_versioned_python_are_allowed() {
        for name in ["hosts", "ssl/certs", "python3.11", "ld.so.cache"] {
            assert!(etc_allowed(name), "{name}");
        }
        for name in [
            "shadow",
            "sudoers",
            "default",
            "ssl",
            "ssl/private",
            "ssh",
            "python3.",
            "python3.x",
            "machine-id",
            "npmrc",
            "pip.conf",
            "passwd",
        ] {
            assert!(!etc_allowed(name), "{name}");
        }
    }

    #[test]
    fn mounts_what_exists_and_recreates_links() {
        let dir = tempfile::tempdir().unwrap();
        let etc = dir.path();
        std::fs::create_dir_all(etc.join("ssl/certs")).unwrap();
        std::fs::create_dir_all(etc.join("ssl/private")).unwrap();
        std::fs::create_dir_all(etc.join("python3.11")).unwrap();
        std::fs::create_dir_all(etc.join("default")).unwrap();
        std::fs::write(etc.join("hosts"), "").unwrap();
        std::fs::write(etc.join("shadow"), "").unwrap();
        std::fs::write(etc.join("default/cacerts"), "").unwrap();
        std::os::unix::fs::symlink("/usr/share/zoneinfo/UTC", etc.join("localtime")).unwrap();
        // A link on the way to an allowed entry is not followed.
        std::os::unix::fs::symlink("/elsewhere", etc.join("pki")).unwrap();
        let mounts = etc_mounts(etc).unwrap();
        assert_eq!(
            mounts,
            vec![
                EtcMount::Copy("hosts".into()),
                EtcMount::Link {
                    path: "localtime".into(),
                    target: "/usr/share/zoneinfo/UTC".into()
                },
                EtcMount::Bind("python3.11".into()),
                EtcMount::Bind("ssl/certs".into()),
            ]
        );
        std::fs::write(etc.join("hosts"), "127.0.0.1 localhost\n").unwrap();
        std::fs::write(etc.join("ssl/certs/ca.pem"), "CERT\n").unwrap();
        // What others may not read is left out, whoever the sandbox runs as.
        let private = |path: &Path, mode: u32| {
            std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode))
                .unwrap();
        };
        std::fs::write(etc.join("ssl/certs/root-only.key"), "KEY\n").unwrap();
        private(&etc.join("ssl/certs/root-only.key"), 0o600);
        std::fs::write(etc.join("ssl/certs/group-only.key"), "KEY\n").unwrap();
        private(&etc.join("ssl/certs/group-only.key"), 0o640);
        std::fs::create_dir(etc.join("ssl/certs/private")).unwrap();
        std::fs::write(etc.join("ssl/certs/private/inside.pem"), "KEY\n").unwrap();
        private(&etc.join("ssl/certs/private"), 0o711);
        std::fs::set_permissions(
            etc.join("hosts"),
            std::os::unix::fs::PermissionsExt::from_mode(0o4644),
        )
        .unwrap();
        let cache = tempfile::tempdir().unwrap();
        let built = cached(etc, cache.path()).unwrap();
        let w = built.as_path();
        assert_eq!(
            std::fs::read_to_string(w.join("hosts")).unwrap(),
            "127.0.0.1 localhost\n"
        );
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(w.join("hosts")).unwrap().permissions(),
        );
        assert_eq!(mode & 0o7777, 0o644, "mode kept, set-id dropped");
        assert_eq!(
            std::fs::read_link(w.join("localtime")).unwrap(),
            Path::new("/usr/share/zoneinfo/UTC")
        );
        assert_eq!(
            std::fs::read_to_string(w.join("ssl/certs/ca.pem")).unwrap(),
            "CERT\n"
        );
        assert!(w.join("python3.11").is_dir() && w.join("passwd").is_file());
        for absent in [
            "ssl/certs/root-only.key",
            "ssl/certs/group-only.key",
            "ssl/certs/private",
        ] {
            assert!(!w.join(absent).exists(), "{absent} was copied");
        }
        // Reused while nothing changes; rebuilt when an allowed entry does.
        assert_eq!(cached(etc, cache.path()).unwrap(), built);
        std::fs::write(etc.join("ssl/certs/ca.pem"), "NEW CERT\n").unwrap();
        let rebuilt = cached(etc, cache.path()).unwrap();
        assert_ne!(rebuilt, built);
        assert_eq!(
            std::fs::read_to_string(rebuilt.join("ssl/certs/ca.pem")).unwrap(),
            "NEW CERT\n"
        );
        // A change outside the allowed entries does not rebuild.
        std::fs::write(etc.join("shadow"), "changed").unwrap();
        assert_eq!(cached(etc, cache.path()).unwrap(), rebuilt);
        // Once no wall runs, older copies go and the newest stays.
        let reaped = reap_old(cache.path());
        assert_eq!(reaped, [built.display().to_string()]);
        assert!(rebuilt.is_dir() && !built.exists());
        assert!(!rebuilt.join("shadow").exists() && !rebuilt.join("default").exists());
    }
}
