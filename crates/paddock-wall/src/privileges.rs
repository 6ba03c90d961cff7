//! Process-level pieces of the wall that std has no names for: `prctl` flags, dropping to
//! another user, checking that no capability is left, and `fork`.

use std::io;

use crate::config::{LimitedResource, ResourceRlimit};
use crate::error::WallError;

/// Sets `PR_SET_NO_NEW_PRIVS`: no exec of this process or its children can gain privileges
/// (setuid bits and file capabilities are ignored). Required before seccomp and Landlock.
pub fn set_no_new_privs() -> Result<(), WallError> {
    // SAFETY: prctl with integer arguments only; no memory is passed.
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(WallError::last_os("prctl(PR_SET_NO_NEW_PRIVS)"))
    }
}

/// Makes this process not dumpable: its memory, descriptors and `/proc` entries are closed
/// to every process without a capability, even those of the same user (no
/// `/proc/PID/mem`, no `pidfd_getfd`). Reset by exec, so it protects only a process that does
/// not exec (the bridge).
pub fn set_not_dumpable() -> Result<(), WallError> {
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(WallError::last_os("prctl(PR_SET_DUMPABLE, 0)"));
    }
    Ok(())
}

/// Sets one per-process limit; a soft limit above the hard one is lowered to it, and the
/// hard limit is never raised (that needs a capability nobody here has).
pub fn set_rlimit(limit: &ResourceRlimit) -> Result<(), WallError> {
    let resource = match limit.resource {
        LimitedResource::Processes => libc::RLIMIT_NPROC,
        LimitedResource::Data => libc::RLIMIT_DATA,
        LimitedResource::OpenFiles => libc::RLIMIT_NOFILE,
    };
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `current` is a valid, writable rlimit for the duration of the call.
    if unsafe { libc::getrlimit(resource, &mut current) } != 0 {
        return Err(WallError::last_os(format!(
            "getrlimit({})",
            limit.resource.as_str()
        )));
    }
    let hard = limit
        .hard
        .map_or(current.rlim_max, |h| h.min(current.rlim_max));
    let wanted = libc::rlimit {
        rlim_cur: limit.soft.min(hard),
        rlim_max: hard,
    };
    // SAFETY: `wanted` is a valid rlimit for the duration of the call.
    if unsafe { libc::setrlimit(resource, &wanted) } != 0 {
        return Err(WallError::last_os(format!(
            "setrlimit({}, {})",
            limit.resource.as_str(),
            limit.soft
        )));
    }
    Ok(())
}

/// Moves this process into the cgroup whose `cgroup.procs` file is `procs` (its children
/// follow it there).
pub fn join_cgroup(procs: &std::path::Path) -> Result<(), WallError> {
    std::fs::write(procs, format!("{}\n", std::process::id()))
        .map_err(|e| WallError::os(format!("joining the cgroup of {}", procs.display()), e))
}

/// Asks the kernel to SIGKILL this process when its parent dies. Kept across exec.
pub fn die_with_parent() -> Result<(), WallError> {
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    if rc != 0 {
        return Err(WallError::last_os("prctl(PR_SET_PDEATHSIG)"));
    }
    Ok(())
}

/// Leaves root for `uid`/`gid` for good: supplementary groups reduced to `gid`, then group,
/// then user. Checks afterwards that root cannot be regained.
pub fn drop_to(uid: u32, gid: u32) -> Result<(), WallError> {
    let groups = [gid as libc::gid_t];
    // SAFETY: `groups` outlives the call and holds exactly the one element passed as its length.
    if unsafe { libc::setgroups(1, groups.as_ptr()) } != 0 {
        return Err(WallError::last_os("setgroups"));
    }
    // SAFETY: plain integer arguments.
    if unsafe { libc::setresgid(gid, gid, gid) } != 0 {
        return Err(WallError::last_os(format!("setresgid({gid})")));
    }
    // SAFETY: plain integer arguments.
    if unsafe { libc::setresuid(uid, uid, uid) } != 0 {
        return Err(WallError::last_os(format!("setresuid({uid})")));
    }
    // SAFETY: plain integer arguments; this must fail now that root is gone.
    if uid != 0 && unsafe { libc::setuid(0) } == 0 {
        return Err(WallError::Refused(
            "root could be regained after dropping privileges".into(),
        ));
    }
    Ok(())
}

/// The effective user id.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid cannot fail and takes no arguments.
    unsafe { libc::geteuid() }
}

/// Parses the `CapEff`/`CapPrm`/`CapAmb` lines of a `/proc/<pid>/status` text; returns the
/// names of those that are not all zero.
pub fn held_capabilities(status: &str) -> Vec<String> {
    status
        .lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            let name = name.trim();
            if !matches!(name, "CapEff" | "CapPrm" | "CapAmb") {
                return None;
            }
            let value = value.trim();
            (u64::from_str_radix(value, 16) != Ok(0)).then(|| format!("{name}={value}"))
        })
        .collect()
}

/// Refuses to go on when this process holds any capability (effective, permitted or ambient).
pub fn ensure_no_capabilities() -> Result<(), WallError> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| WallError::os("reading /proc/self/status", e))?;
    let held = held_capabilities(&status);
    if held.is_empty() {
        Ok(())
    } else {
        Err(WallError::Refused(format!(
            "the sandbox's process still holds capabilities ({})",
            held.join(", ")
        )))
    }
}

/// Which side of a fork this is.
pub enum Forked {
    Parent { child: i32 },
    Child,
}

/// `fork(2)`. Only call while the process has a single thread.
pub fn fork() -> Result<Forked, WallError> {
    // SAFETY: the launcher calls this before it starts any thread, so the child inherits a
    // consistent copy of the process (no lock can be held by a thread that does not exist).
    match unsafe { libc::fork() } {
        -1 => Err(WallError::last_os("fork")),
        0 => Ok(Forked::Child),
        child => Ok(Forked::Parent { child }),
    }
}

/// Waits for `pid` to end; returns its exit code (128 + signal when killed).
pub fn wait_for(pid: i32) -> Result<i32, WallError> {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid, writable int for the duration of the call.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            break;
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(WallError::os(format!("waitpid({pid})"), err));
        }
    }
    if libc::WIFEXITED(status) {
        Ok(libc::WEXITSTATUS(status))
    } else {
        Ok(128 + libc::WTERMSIG(status))
    }
}

/// Ends the calling process at once with `code`, running no destructors or atexit handlers
/// (for the intermediate child of a double fork).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns and touches no Rust state.
    unsafe { libc::_exit(code) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_capability_lines() {
        let none = "Name:\tx\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n\
                    CapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\n";
        assert!(held_capabilities(none).is_empty());
        let some = none.replace("CapEff:\t0000000000000000", "CapEff:\t0000000000200000");
        assert_eq!(held_capabilities(&some), vec!["CapEff=0000000000200000"]);
    }
}
