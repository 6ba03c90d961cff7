//! The launcher's two stages.
//!
//! * `outer` runs on the host side, before bubblewrap: it ties itself to its parent's life and,
//!   when started as root for a folder owned by another user, becomes that user for good. Then
//!   it execs bubblewrap.
//! * `inner` runs inside bubblewrap's namespaces and mounts: it refuses to go on if any
//!   capability is left, sets `no_new_privs`, starts the proxy bridge, applies Landlock and
//!   seccomp, and execs the sandbox's main process (the tool-runner) with the configured
//!   environment and nothing else.

use std::convert::Infallible;
use std::ffi::OsString;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bridge;
use std::collections::BTreeMap;

use crate::config::{GrantIdentity, ProtectedIdentity, WallConfig};
use crate::error::WallError;
use crate::landlock_rules;
use crate::pinned;
use crate::privileges::{self, Forked};
use crate::seccomp_policy;

/// A granted folder (or a protected path over a grant) `outer` opens for bubblewrap: at
/// descriptor `fd`, which must be the folder or file with this device and inode (the ones the
/// host pinned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantPin {
    pub fd: i32,
    pub identity: pinned::FolderIdentity,
    pub path: String,
}

impl GrantPin {
    /// `FD:DEVICE:INODE:PATH` (the path last: it may hold `:`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut parts = text.splitn(4, ':');
        let mut number = |what: &str| -> Result<u64, String> {
            parts
                .next()
                .and_then(|p| p.parse().ok())
                .ok_or_else(|| format!("{text:?}: {what} is not a number"))
        };
        let fd = number("the descriptor")?;
        let device = number("the device")?;
        let inode = number("the inode")?;
        let fd = i32::try_from(fd)
            .ok()
            .filter(|fd| *fd > 2)
            .ok_or_else(|| format!("{text:?}: descriptor {fd} is not above 2"))?;
        let path = parts
            .next()
            .filter(|p| p.starts_with('/'))
            .ok_or_else(|| format!("{text:?}: the path is not absolute"))?;
        Ok(Self {
            fd,
            identity: pinned::FolderIdentity { device, inode },
            path: path.to_owned(),
        })
    }

    pub fn to_arg(&self) -> String {
        format!(
            "{}:{}:{}:{}",
            self.fd, self.identity.device, self.identity.inode, self.path
        )
    }
}

/// Opens each grant following no link, refuses one whose identity is not the pinned one, and
/// places it at its descriptor, inherited by the program `outer` execs (bubblewrap mounts it
/// by that descriptor). Then the same for each protected path (a file or a folder).
fn open_pins(grants: &[GrantPin], protected: &[GrantPin]) -> Result<(), WallError> {
    let mut opened = Vec::new();
    for grant in grants {
        let folder = pinned::open_folder(&grant.path)
            .map_err(|e| WallError::Refused(format!("granted folder {e}")))?;
        if folder.identity != grant.identity {
            return Err(WallError::Refused(format!(
                "granted folder {}: it is now {}, not the folder that was granted ({}); it was \
                 replaced while the wall started",
                grant.path, folder.identity, grant.identity
            )));
        }
        opened.push(folder.fd);
    }
    for path in protected {
        let entry = pinned::open_entry(&path.path).map_err(protected_refusal)?;
        if entry.identity != path.identity {
            return Err(WallError::Refused(format!(
                "protected path {}: it is now {}, not what the host found ({}); it was replaced \
                 while the wall started",
                path.path, entry.identity, path.identity
            )));
        }
        opened.push(entry.fd);
    }
    let pins: Vec<&GrantPin> = grants.iter().chain(protected).collect();
    // Targets first checked free of the sources (they are small numbers, the targets large).
    for (pin, fd) in pins.iter().zip(&opened) {
        use std::os::fd::AsRawFd;
        if opened.iter().any(|o| o.as_raw_fd() == pin.fd) {
            return Err(WallError::Config(format!(
                "pinned descriptor {} is already in use",
                pin.fd
            )));
        }
        // SAFETY: dup2 on two integers; the new descriptor is left open for the exec (dup2
        // clears close-on-exec on it), the source is closed when `opened` drops.
        if unsafe { libc::dup2(fd.as_raw_fd(), pin.fd) } < 0 {
            return Err(WallError::last_os(format!(
                "dup2 onto descriptor {}",
                pin.fd
            )));
        }
    }
    Ok(())
}

/// Joins the wall's cgroups (each named by its `cgroup.procs` file, so everything the wall
/// starts is limited from its first process), becomes `drop_to` (when root and asked), dies
/// with the parent, opens the granted folders and the protected paths (checked against their
/// pinned identities) for bubblewrap, and execs `command`.
pub fn outer(
    cgroups: &[PathBuf],
    drop_to: Option<(u32, u32)>,
    grants: &[GrantPin],
    protected: &[GrantPin],
    command: &[OsString],
) -> Result<Infallible, WallError> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| WallError::Config("outer: no command to run after `--`".into()))?;
    // SAFETY: getppid takes no arguments and cannot fail.
    let parent = unsafe { libc::getppid() };
    // Before the drop: the cgroups belong to the user Paddock runs as.
    for procs in cgroups {
        privileges::join_cgroup(procs)?;
    }
    if let Some((uid, gid)) = drop_to
        && privileges::effective_uid() == 0
    {
        privileges::drop_to(uid, gid)?;
    }
    // Set after the drop: changing credentials clears the parent-death signal.
    privileges::die_with_parent()?;
    // SAFETY: as above.
    if unsafe { libc::getppid() } != parent {
        return Err(WallError::Refused(
            "the process that started the wall has already exited".into(),
        ));
    }
    // Opened as the user the wall runs as, after the drop: the same rights bubblewrap has.
    open_pins(grants, protected)?;
    Err(WallError::os(
        format!("exec {}", Path::new(program).display()),
        Command::new(program).args(args).exec(),
    ))
}

/// Finishes the wall from inside the namespaces and execs `command`.
pub fn inner(config_path: &Path, command: &[OsString]) -> Result<Infallible, WallError> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| WallError::Config("inner: no command to run after `--`".into()))?;
    let text = std::fs::read_to_string(config_path)
        .map_err(|e| WallError::os(format!("reading {}", config_path.display()), e))?;
    let config = WallConfig::from_json(&text)?;

    privileges::die_with_parent()?;
    privileges::ensure_no_capabilities()?;
    privileges::set_no_new_privs()?;
    // Before the bridge and the main process start, so both are limited.
    for limit in &config.rlimits {
        privileges::set_rlimit(limit)?;
    }
    let abi = crate::probe::landlock_abi().unwrap_or(0);
    if abi < config.min_landlock_abi {
        return Err(WallError::Refused(format!(
            "Landlock ABI {abi} is below the required {}",
            config.min_landlock_abi
        )));
    }
    let listener = match &config.bridge {
        Some(bridge) => Some(TcpListener::bind(("127.0.0.1", bridge.port)).map_err(|e| {
            WallError::os(
                format!("binding the bridge on 127.0.0.1:{}", bridge.port),
                e,
            )
        })?),
        None => None,
    };
    let pinned = verify_grants(&config.grants)?;
    verify_protected(&config.protected)?;
    landlock_rules::apply(&config.rules, &pinned)?;
    drop(pinned);
    seccomp_policy::apply()?;

    if let (Some(listener), Some(bridge)) = (listener, &config.bridge) {
        start_bridge(&listener, Path::new(&bridge.proxy_socket), &bridge.token)?;
        drop(listener);
    }
    Err(WallError::os(
        format!("exec {}", Path::new(program).display()),
        Command::new(program)
            .args(args)
            .env_clear()
            .envs(&config.env)
            .current_dir(&config.cwd)
            .exec(),
    ))
}

/// Opens every granted folder as mounted, following no link, and refuses to start unless each
/// is the folder the host pinned (same device and inode), as the root of a mount of its own
/// (read-only for a read-only grant): a grant swapped for a link, or a mount that landed
/// elsewhere, stops the wall here.
fn verify_grants(
    grants: &[GrantIdentity],
) -> Result<BTreeMap<String, pinned::PinnedFolder>, WallError> {
    let mut opened = BTreeMap::new();
    for grant in grants {
        let folder = pinned::open_folder(&grant.path)
            .map_err(|e| WallError::Refused(format!("granted folder {e}")))?;
        let expected = pinned::FolderIdentity {
            device: grant.device,
            inode: grant.inode,
        };
        if folder.identity != expected {
            return Err(WallError::Refused(format!(
                "granted folder {}: inside the wall it is {}, not the folder that was granted \
                 ({expected}); it was replaced while the wall started",
                grant.path, folder.identity
            )));
        }
        check_mounted(&folder.fd, "granted folder", &grant.path, grant.read_only)?;
        opened.insert(grant.path.clone(), folder);
    }
    Ok(opened)
}

/// The same for every protected path mounted over a read-write grant: the pinned file or
/// folder, a mount of its own, read-only unless it is a git directory bound onto itself. A
/// mount bubblewrap placed elsewhere (its target was a link for a moment) leaves the path an
/// ordinary, writable part of the grant, and stops the wall.
fn verify_protected(protected: &[ProtectedIdentity]) -> Result<(), WallError> {
    for path in protected {
        let entry = pinned::open_entry(&path.path).map_err(protected_refusal)?;
        let expected = pinned::FolderIdentity {
            device: path.device,
            inode: path.inode,
        };
        if entry.identity != expected {
            return Err(WallError::Refused(format!(
                "protected path {}: inside the wall it is {}, not what the host found \
                 ({expected}); it was replaced while the wall started",
                path.path, entry.identity
            )));
        }
        check_mounted(&entry.fd, "protected path", &path.path, path.read_only)?;
    }
    Ok(())
}

/// A protected path that could not be opened following no link, in words about protected
/// paths (the pinning error speaks of grants).
fn protected_refusal(error: pinned::PinError) -> WallError {
    WallError::Refused(match error {
        pinned::PinError::Link { path, link, target } => format!(
            "protected path {path}: {link} is now a symbolic link{target}; it was replaced while \
             the wall started"
        ),
        other => format!("protected path {other}"),
    })
}

fn check_mounted(
    fd: &std::os::fd::OwnedFd,
    what: &str,
    path: &str,
    read_only: bool,
) -> Result<(), WallError> {
    let state = pinned::mount_state(fd)
        .map_err(|e| WallError::os(format!("{what} {path}: reading its mount"), e))?;
    if !state.mount_root || (read_only && !state.read_only) {
        return Err(WallError::Refused(format!(
            "{what} {path}: inside the wall it is not {}; its mount landed elsewhere (a link \
             was swapped in while the wall started)",
            if read_only {
                "a read-only mount of its own"
            } else {
                "a mount of its own"
            }
        )));
    }
    Ok(())
}

/// Starts the bridge in a grandchild (so the main process never sees it as its child) that
/// inherits the wall; the listener is already bound, so no connection is lost meanwhile. The
/// bridge is made not dumpable before it serves: it holds the wall's bridge token.
fn start_bridge(listener: &TcpListener, proxy_socket: &Path, token: &str) -> Result<(), WallError> {
    match privileges::fork()? {
        Forked::Child => match privileges::fork() {
            Ok(Forked::Child) => {
                if let Err(e) = privileges::set_not_dumpable() {
                    report(&e);
                    privileges::exit_now(1)
                }
                bridge::serve(listener, proxy_socket, token)
            }
            Ok(Forked::Parent { .. }) => privileges::exit_now(0),
            Err(e) => {
                report(&e);
                privileges::exit_now(1)
            }
        },
        Forked::Parent { child } => {
            let code = privileges::wait_for(child)?;
            if code == 0 {
                Ok(())
            } else {
                Err(WallError::Refused(
                    "the proxy bridge could not start".into(),
                ))
            }
        }
    }
}

/// Writes one diagnostic line to stderr (the host forwards it to its log).
pub fn report(error: &WallError) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "paddock-wall: {error}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grant_pins_round_trip_and_bad_ones_are_named() {
        let pin = GrantPin {
            fd: 100,
            identity: pinned::FolderIdentity {
                device: 2049,
                inode: 77,
            },
            path: "/home/u/a:b".into(),
        };
        assert_eq!(pin.to_arg(), "100:2049:77:/home/u/a:b");
        assert_eq!(GrantPin::parse(&pin.to_arg()), Ok(pin));
        for (bad, named) in [
            ("x:1:2:/a", "descriptor"),
            ("2:1:2:/a", "not above 2"),
            ("100:1:2:a", "not absolute"),
            ("100:1:/a", "inode"),
        ] {
            let err = GrantPin::parse(bad).unwrap_err();
            assert!(err.contains(named), "{bad}: {err}");
        }
    }

    #[test]
    fn a_grant_that_is_not_the_pinned_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap().display().to_string();
        let real = pinned::open_folder(&path).unwrap().identity;
        let wrong = GrantPin {
            fd: 150,
            identity: pinned::FolderIdentity {
                device: real.device,
                inode: real.inode + 1,
            },
            path: path.clone(),
        };
        let err = open_pins(&[wrong], &[]).unwrap_err().to_string();
        assert!(err.contains("not the folder that was granted"), "{err}");
        let right = GrantPin {
            fd: 150,
            identity: real,
            path,
        };
        open_pins(&[right], &[]).unwrap();
        // SAFETY: closing the descriptor the test just placed.
        unsafe { libc::close(150) };
    }

    #[test]
    fn a_protected_path_that_is_not_the_pinned_one_or_a_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("config"), "").unwrap();
        let path = root.join("config").display().to_string();
        let real = pinned::open_entry(&path).unwrap().identity;
        let pin = |inode| GrantPin {
            fd: 151,
            identity: pinned::FolderIdentity {
                device: real.device,
                inode,
            },
            path: path.clone(),
        };
        let err = open_pins(&[], &[pin(real.inode + 1)])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("protected path") && err.contains("not what the host found"),
            "{err}"
        );
        std::fs::rename(root.join("config"), root.join("config.real")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("config")).unwrap();
        let err = open_pins(&[], &[pin(real.inode)]).unwrap_err().to_string();
        assert!(
            err.contains("is now a symbolic link (to /etc/passwd)"),
            "{err}"
        );
        assert!(!err.contains("granted folder"), "{err}");
    }
}
