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

use crate::config::{GrantIdentity, WallConfig};
use crate::error::WallError;
use crate::landlock_rules;
use crate::pinned;
use crate::privileges::{self, Forked};
use crate::seccomp_policy;

/// Joins the wall's cgroups (each named by its `cgroup.procs` file, so everything the wall
/// starts is limited from its first process), becomes `drop_to` (when root and asked), dies
/// with the parent, and execs `command`.
pub fn outer(
    cgroups: &[PathBuf],
    drop_to: Option<(u32, u32)>,
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
/// is the folder the host pinned (same device and inode): a grant swapped for a link, or a
/// mount that landed elsewhere, stops the wall here.
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
        opened.insert(grant.path.clone(), folder);
    }
    Ok(opened)
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
