//! The wall's `/etc`: a synthesized folder holding only what programs need, never the host's
//! `/etc` with a few files covered. Whatever a host keeps in `/etc` beyond this list (keys,
//! tokens, root-only configuration such as `default/cacerts`, files added after Paddock was
//! written) is simply absent inside, whether Paddock runs as a user (whose rights would
//! already refuse root-only files, but not the files a user may read) or as root (whose
//! sandbox keeps host uid 0 when the folders are root's, and would read them).
//!
//! The wall's own `etc` folder (in its host folder) is bound read-only at `/etc`. In it the host
//! puts a copy of each allowed file (mode kept, set-id bits dropped), the same link for each
//! allowed link, the wall's own `passwd` and `group`, and an empty folder where each allowed
//! folder of the host's `/etc` is then bound read-only (a mount per file would cost ~0.4 ms
//! each at every start). One Landlock rule (read) covers `/etc`, which holds nothing else.

use std::path::Path;

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

/// Fills the wall's `etc` folder (`wall_etc`, existing) for `mounts`: copies, links, and the
/// empty folders the binds mount on. Copies keep the host file's permission bits, without
/// set-id bits.
pub fn populate(host_etc: &Path, wall_etc: &Path, mounts: &[EtcMount]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let parent_of = |name: &str| -> std::io::Result<std::path::PathBuf> {
        let path = wall_etc.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        Ok(path)
    };
    for mount in mounts {
        match mount {
            EtcMount::Bind(name) => std::fs::create_dir_all(wall_etc.join(name))?,
            EtcMount::Copy(name) => {
                let to = parent_of(name)?;
                let from = host_etc.join(name);
                let mode = std::fs::metadata(&from)?.permissions().mode() & 0o777;
                std::fs::copy(&from, &to)?;
                std::fs::set_permissions(&to, std::fs::Permissions::from_mode(mode))?;
            }
            EtcMount::Link { path, target } => {
                std::os::unix::fs::symlink(target, parent_of(path)?)?;
            }
        }
    }
    Ok(())
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
        let wall = tempfile::tempdir().unwrap();
        std::fs::write(etc.join("hosts"), "127.0.0.1 localhost\n").unwrap();
        std::fs::set_permissions(
            etc.join("hosts"),
            std::os::unix::fs::PermissionsExt::from_mode(0o4640),
        )
        .unwrap();
        populate(etc, wall.path(), &mounts).unwrap();
        let w = wall.path();
        assert_eq!(
            std::fs::read_to_string(w.join("hosts")).unwrap(),
            "127.0.0.1 localhost\n"
        );
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(w.join("hosts")).unwrap().permissions(),
        );
        assert_eq!(mode & 0o7777, 0o640, "mode kept, set-id dropped");
        assert_eq!(
            std::fs::read_link(w.join("localtime")).unwrap(),
            Path::new("/usr/share/zoneinfo/UTC")
        );
        assert!(w.join("ssl/certs").is_dir() && w.join("python3.11").is_dir());
        assert!(!w.join("shadow").exists() && !w.join("default").exists());
    }
}
