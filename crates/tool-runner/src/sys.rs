//! The operating-system interface std does not offer: `open(2)` flags for the path guard,
//! `openat(2)` for the search walk, `kill(2)` for process groups, and what confines the
//! commands (`crate::confine`): `prctl(2)` for dumpability, `no_new_privs` and seccomp,
//! Landlock's three system calls, the process's own ids, waiting for any child (the runner
//! reaps what is left to it as the first process of a PID namespace) and default actions for
//! the fault signals.
//!
//! This is the crate's only `unsafe` code: `extern "C"` declarations of libc functions std
//! already links (`kill`, `fcntl`, `openat`, `prctl`, `syscall`, `getpid`, `getpgrp`,
//! `waitid`, `waitpid`, `signal`). Nothing here keeps a pointer past a call; those that pass
//! one of ours (`install_seccomp_filter`, `landlock_restrict_commands`, the two waits) pass
//! memory borrowed for the call.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

/// `open(2)` flags std has no names for. The values differ between architectures.
#[cfg(target_arch = "x86_64")]
mod open_flags {
    pub const O_NOFOLLOW: i32 = 0o400_000;
    pub const O_DIRECTORY: i32 = 0o200_000;
    pub const O_PATH: i32 = 0o10_000_000;
    pub const O_NONBLOCK: i32 = 0o4_000;
    pub const O_CLOEXEC: i32 = 0o2_000_000;
}

#[cfg(target_arch = "aarch64")]
mod open_flags {
    pub const O_NOFOLLOW: i32 = 0o100_000;
    pub const O_DIRECTORY: i32 = 0o40_000;
    pub const O_PATH: i32 = 0o10_000_000;
    pub const O_NONBLOCK: i32 = 0o4_000;
    pub const O_CLOEXEC: i32 = 0o2_000_000;
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("tool-runner knows the open(2) flags of x86_64 and aarch64 Linux only");

pub use open_flags::{O_CLOEXEC, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_PATH};

/// `SIGKILL` (the same number on every Linux architecture).
pub const SIGKILL: i32 = 9;

/// `fcntl(2)` command that sets a pipe's capacity.
const F_SETPIPE_SZ: i32 = 1031;

mod ffi {
    unsafe extern "C" {
        /// `int kill(pid_t pid, int sig)` from libc.
        pub fn kill(pid: i32, sig: i32) -> i32;
        /// `int fcntl(int fd, int cmd, ...)` from libc.
        pub fn fcntl(fd: i32, cmd: i32, ...) -> i32;
        /// `int openat(int dirfd, const char *pathname, int flags, ...)` from libc.
        pub fn openat(dirfd: i32, pathname: *const std::ffi::c_char, flags: i32, ...) -> i32;
        /// `int prctl(int option, ...)` from libc.
        pub fn prctl(option: i32, ...) -> i32;
        /// `long syscall(long number, ...)` from libc.
        pub fn syscall(number: i64, ...) -> i64;
        /// `pid_t getpid(void)` from libc.
        pub fn getpid() -> i32;
        /// `pid_t getpgrp(void)` from libc.
        pub fn getpgrp() -> i32;
        /// `int waitid(idtype_t idtype, id_t id, siginfo_t *infop, int options)` from libc.
        pub fn waitid(idtype: i32, id: u32, info: *mut super::SigInfo, options: i32) -> i32;
        /// `pid_t waitpid(pid_t pid, int *wstatus, int options)` from libc.
        pub fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
        /// `sighandler_t signal(int signum, sighandler_t handler)` from libc.
        pub fn signal(signum: i32, handler: usize) -> usize;
    }
}

/// `siginfo_t` as `waitid(2)` fills it on 64-bit Linux: the child's pid is the first field of
/// the union, at offset 16.
#[repr(C)]
pub struct SigInfo {
    signo: i32,
    errno: i32,
    code: i32,
    pad: i32,
    pid: i32,
    rest: [u8; 108],
}

const P_ALL: i32 = 0;
const WNOHANG: i32 = 1;
const WEXITED: i32 = 4;
const WNOWAIT: i32 = 0x0100_0000;
const ECHILD: i32 = 10;
const ENOENT: i32 = 2;
const ENOTDIR: i32 = 20;
const SIGBUS: i32 = 7;
const SIGSEGV: i32 = 11;
const SIG_DFL: usize = 0;
const SIG_ERR: usize = usize::MAX;

const PR_SET_DUMPABLE: i32 = 4;
const PR_SET_SECCOMP: i32 = 22;
const PR_SET_NO_NEW_PRIVS: i32 = 38;
const SECCOMP_MODE_FILTER: u64 = 2;

#[cfg(target_arch = "x86_64")]
const SYS_GETTID: i64 = 186;
#[cfg(target_arch = "aarch64")]
const SYS_GETTID: i64 = 178;
const SYS_LANDLOCK_CREATE_RULESET: i64 = 444;
const SYS_LANDLOCK_ADD_RULE: i64 = 445;
const SYS_LANDLOCK_RESTRICT_SELF: i64 = 446;
const LANDLOCK_RULE_PATH_BENEATH: u32 = 1;
const LANDLOCK_ACCESS_FS_REFER: u64 = 1 << 13;
const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
const LANDLOCK_SCOPE_SIGNAL: u64 = 1 << 1;

fn check(rc: i64) -> io::Result<i64> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// Makes this process non-dumpable: its `/proc/<pid>/mem`, `fd/`, `environ` and `pidfd_getfd`
/// are closed to other processes of the same user (a ptrace-access check now fails).
pub fn set_not_dumpable() -> io::Result<()> {
    // SAFETY: PR_SET_DUMPABLE takes one integer argument; no memory is passed.
    check(i64::from(unsafe {
        ffi::prctl(PR_SET_DUMPABLE, 0u64, 0u64, 0u64, 0u64)
    }))
    .map(drop)
}

/// Sets `no_new_privs` on the calling thread (needed to install a seccomp filter or a Landlock
/// domain without privileges; inherited by every process the thread starts).
pub fn set_no_new_privs() -> io::Result<()> {
    // SAFETY: PR_SET_NO_NEW_PRIVS takes integer arguments only.
    check(i64::from(unsafe {
        ffi::prctl(PR_SET_NO_NEW_PRIVS, 1u64, 0u64, 0u64, 0u64)
    }))
    .map(drop)
}

/// One classic-BPF instruction (`struct sock_filter`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SockFilter {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

/// `struct sock_fprog`.
#[repr(C)]
struct SockFprog {
    len: u16,
    filter: *const SockFilter,
}

/// Installs `program` as a seccomp filter on the calling thread (inherited by every process it
/// starts). `no_new_privs` must be set.
pub fn install_seccomp_filter(program: &[SockFilter]) -> io::Result<()> {
    let len = u16::try_from(program.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "seccomp program too long"))?;
    let prog = SockFprog {
        len,
        filter: program.as_ptr(),
    };
    // SAFETY: `prog` points at `program`, which outlives the call; the kernel copies the
    // program and keeps no pointer to our memory.
    check(i64::from(unsafe {
        ffi::prctl(
            PR_SET_SECCOMP,
            SECCOMP_MODE_FILTER,
            &raw const prog,
            0u64,
            0u64,
        )
    }))
    .map(drop)
}

/// The Landlock ABI version the kernel offers (an error when Landlock is off or missing).
pub fn landlock_abi() -> io::Result<i64> {
    // SAFETY: a NULL attribute with size 0 and the VERSION flag only queries the ABI.
    check(unsafe {
        ffi::syscall(
            SYS_LANDLOCK_CREATE_RULESET,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    })
}

/// `struct landlock_ruleset_attr` as of ABI 6.
#[repr(C)]
struct LandlockRulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct LandlockPathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Landlock's rights to change a folder's entries (ABI 1): remove a folder or a file, make a
/// character device, folder, regular file, socket, FIFO, block device or symbolic link.
const LANDLOCK_ACCESS_FS_DIR_CHANGES: u64 = (1 << 4)
    | (1 << 5)
    | (1 << 6)
    | (1 << 7)
    | (1 << 8)
    | (1 << 9)
    | (1 << 10)
    | (1 << 11)
    | (1 << 12);

/// Puts the calling thread in a new Landlock domain for the commands it starts.
///
/// * `scope_signals` (ABI 6): whatever the thread starts can signal only processes of this
///   domain (or below it), never the rest of the runner.
/// * `writable` (ABI 2): when given, the commands may make, remove, move or link entries only
///   beneath these folders (the wall's writable folders, without the runner's socket folder),
///   so nothing of the runner's, its socket included, can be replaced. A path that does not
///   exist or is not a folder (`/dev/null`) gets no rule.
///
/// `refer` is granted beneath `/` either way: Landlock refuses moving or linking a file into
/// another folder (`EXDEV`) in every domain that does not grant `refer` explicitly, even one
/// that handles no other file right, and that broke `ln` across folders, `mv` of a folder, and
/// git writing objects (`git push` into a bare repository). The wall's own domain still decides
/// what may be moved where.
pub fn landlock_restrict_commands(
    scope_signals: bool,
    writable: Option<&[std::path::PathBuf]>,
) -> io::Result<()> {
    let attr = LandlockRulesetAttr {
        handled_access_fs: LANDLOCK_ACCESS_FS_REFER
            | if writable.is_some() {
                LANDLOCK_ACCESS_FS_DIR_CHANGES
            } else {
                0
            },
        handled_access_net: 0,
        scoped: if scope_signals {
            LANDLOCK_SCOPE_SIGNAL
        } else {
            0
        },
    };
    // SAFETY: `attr` is a valid ruleset attribute of the size given, borrowed for the call
    // (the kernel accepts the ABI 6 size from older kernels while the newer fields are 0).
    let fd = check(unsafe {
        ffi::syscall(
            SYS_LANDLOCK_CREATE_RULESET,
            &raw const attr,
            size_of::<LandlockRulesetAttr>(),
            0u32,
        )
    })?;
    let fd = i32::try_from(fd).map_err(|_| io::Error::other("ruleset descriptor out of range"))?;
    // SAFETY: `fd` was just returned by the kernel and is owned here alone; the OwnedFd
    // closes it when dropped.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    add_beneath(&owned, "/", LANDLOCK_ACCESS_FS_REFER)?;
    for folder in writable.unwrap_or_default() {
        match add_beneath(
            &owned,
            folder,
            LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_DIR_CHANGES,
        ) {
            Err(e) if matches!(e.raw_os_error(), Some(ENOENT | ENOTDIR)) => {}
            other => other?,
        }
    }
    // SAFETY: integer arguments only.
    check(unsafe { ffi::syscall(SYS_LANDLOCK_RESTRICT_SELF, i64::from(fd), 0u32) })?;
    drop(owned);
    Ok(())
}

/// Adds a rule granting `access` beneath `folder` to the ruleset `ruleset`.
fn add_beneath(
    ruleset: &OwnedFd,
    folder: impl AsRef<std::path::Path>,
    access: u64,
) -> io::Result<()> {
    // O_PATH: the wall's own domain may not let this process read the folder itself.
    let folder = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(O_PATH | O_DIRECTORY)
            .open(folder)?
    };
    let rule = LandlockPathBeneathAttr {
        allowed_access: access,
        parent_fd: folder.as_raw_fd(),
    };
    // SAFETY: `ruleset` is an open ruleset and `rule` a valid path-beneath attribute borrowed
    // for the call; `folder` stays open until after it.
    check(unsafe {
        ffi::syscall(
            SYS_LANDLOCK_ADD_RULE,
            i64::from(ruleset.as_raw_fd()),
            LANDLOCK_RULE_PATH_BENEATH,
            &raw const rule,
            0u32,
        )
    })
    .map(drop)
}

/// The process id, its process group, and the calling thread's id.
pub fn own_ids() -> (i32, i32, i32) {
    // SAFETY: getpid, getpgrp and gettid take no arguments and cannot fail.
    unsafe {
        let tid = ffi::syscall(SYS_GETTID);
        (
            ffi::getpid(),
            ffi::getpgrp(),
            i32::try_from(tid).unwrap_or(-1),
        )
    }
}

/// Opens `name`, one entry of the open folder `dir`, read-only with `flags` added
/// (`O_CLOEXEC` always): `openat(2)`, which std does not offer. The kernel resolves `name`
/// from the folder the handle holds, not from a path, so the walk of a tree costs one lookup
/// per file and a folder renamed or swapped meanwhile cannot redirect it. `name` must be a
/// single component (a `/` in it is refused).
pub fn open_at(dir: &impl AsFd, name: &OsStr, flags: i32) -> io::Result<File> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.contains(&b'/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a single path component",
        ));
    }
    let name = CString::new(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte in a file name"))?;
    let dir = dir.as_fd().as_raw_fd();
    // SAFETY: `dir` is borrowed from a live `AsFd` for the duration of the call; `name` is a
    // NUL-terminated string that outlives the call; no mode argument is read without
    // `O_CREAT`/`O_TMPFILE`, which `flags` never carries here (read-only opens).
    let fd = unsafe { ffi::openat(dir, name.as_ptr(), flags | O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `openat` just returned this descriptor; nothing else owns it.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Asks the kernel to give the pipe behind `fd` a capacity of `bytes` (rounded up to a
/// power of two pages; unprivileged processes may go up to `/proc/sys/fs/pipe-max-size`).
/// Fewer, larger pipe transfers mean fewer context switches on big downloads. Fails with
/// `EBADF`/`EINVAL` when `fd` is not a pipe; callers treat that as "nothing to do".
pub fn grow_pipe(fd: &impl AsFd, bytes: usize) -> io::Result<usize> {
    let bytes = i32::try_from(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "pipe size too large"))?;
    let fd = fd.as_fd().as_raw_fd();
    // SAFETY: `fd` is borrowed from a live `AsFd` for the duration of the call, and
    // F_SETPIPE_SZ takes one plain `int` argument; no memory of ours is passed.
    let rc = unsafe { ffi::fcntl(fd, F_SETPIPE_SZ, bytes) };
    usize::try_from(rc).map_err(|_| io::Error::last_os_error())
}

/// Blocks until a child of this process has ended and returns its pid, leaving it to be reaped
/// (`waitid(P_ALL, …, WEXITED | WNOWAIT)`); `Ok(None)` when the process has no child at all.
pub fn next_ended_child() -> io::Result<Option<u32>> {
    let mut info = SigInfo {
        signo: 0,
        errno: 0,
        code: 0,
        pad: 0,
        pid: 0,
        rest: [0; 108],
    };
    loop {
        // SAFETY: `info` is a writable `siginfo_t`-sized buffer borrowed for the call.
        let rc = unsafe { ffi::waitid(P_ALL, 0, &raw mut info, WEXITED | WNOWAIT) };
        if rc == 0 {
            return Ok(u32::try_from(info.pid).ok().filter(|&pid| pid > 0));
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            Some(ECHILD) => return Ok(None),
            _ if error.kind() == io::ErrorKind::Interrupted => {}
            _ => return Err(error),
        }
    }
}

/// Reaps `pid` if it has ended (`waitpid(pid, …, WNOHANG)`): its raw wait status, `Ok(None)`
/// while it runs, an error (`ECHILD`) when it is not, or no longer, a child of this process.
pub fn reap(pid: u32) -> io::Result<Option<i32>> {
    let pid = i32::try_from(pid)
        .ok()
        .filter(|&p| p > 0)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a process id"))?;
    let mut status = 0i32;
    loop {
        // SAFETY: `status` is a writable int borrowed for the call; `pid` is positive, so
        // exactly that child is waited for.
        let rc = unsafe { ffi::waitpid(pid, &raw mut status, WNOHANG) };
        match rc {
            0 => return Ok(None),
            rc if rc > 0 => return Ok(Some(status)),
            _ => {
                let error = io::Error::last_os_error();
                if error.kind() != io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
        }
    }
}

/// Gives `SIGSEGV` and `SIGBUS` their default action again (std's handlers tell a stack
/// overflow apart by the fault address, which a queued signal's sender chooses). A real fault
/// still ends the process: the kernel forces fault signals through.
pub fn default_fault_signals() -> io::Result<()> {
    for signal in [SIGSEGV, SIGBUS] {
        // SAFETY: SIG_DFL is a valid disposition for both; no handler of ours is installed.
        if unsafe { ffi::signal(signal, SIG_DFL) } == SIG_ERR {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Sends `SIGKILL` to every process of the process group `pgid`.
///
/// Refuses group ids 0 and 1 (`kill(0)` and `kill(-1)` would hit the runner's own group or
/// every process it may signal), so a bug upstream can never turn this into a mass kill.
pub fn kill_process_group(pgid: u32) -> io::Result<()> {
    let pgid = i32::try_from(pgid)
        .ok()
        .filter(|&p| p > 1)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "refusing process group id"))?;
    // SAFETY: `kill` takes two plain integers and touches no memory of ours; any value is a
    // valid argument (the kernel validates it). `-pgid` is negative because `pgid > 1`, so it
    // addresses exactly that process group.
    let rc = unsafe { ffi::kill(-pgid, SIGKILL) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn refuses_dangerous_group_ids() {
        for pgid in [0, 1, u32::MAX] {
            let err = kill_process_group(pgid).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "pgid {pgid}");
        }
    }

    #[test]
    fn grows_a_pipe_and_refuses_a_file() {
        let (reader, _writer) = io::pipe().unwrap();
        let size = grow_pipe(&reader, 1 << 20).unwrap();
        assert!(size >= 1 << 20, "{size}");
        let file = File::open("/proc/self/exe").unwrap();
        assert!(grow_pipe(&file, 1 << 20).is_err());
    }

    #[test]
    fn opens_an_entry_of_a_folder_handle_only() {
        let dir = std::env::temp_dir().join(format!("paddock-sys-open-at-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/file.txt"), "inside").unwrap();
        std::os::unix::fs::symlink("sub/file.txt", dir.join("link")).unwrap();
        let folder = File::open(&dir).unwrap();
        let sub = open_at(&folder, OsStr::new("sub"), O_DIRECTORY | O_NOFOLLOW).unwrap();
        let content =
            io::read_to_string(open_at(&sub, OsStr::new("file.txt"), O_NOFOLLOW).unwrap()).unwrap();
        assert_eq!(content, "inside");
        // A link with O_NOFOLLOW, a path of two components, an empty name, a NUL: refused.
        let link = open_at(&folder, OsStr::new("link"), O_NOFOLLOW).unwrap_err();
        assert_eq!(link.raw_os_error(), Some(40), "ELOOP: {link}");
        for bad in ["sub/file.txt", "", "a\0b"] {
            let error = open_at(&folder, OsStr::new(bad), O_NOFOLLOW).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{bad:?}");
        }
        let missing = open_at(&folder, OsStr::new("missing"), 0).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn kills_a_whole_group() {
        let mut child = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        kill_process_group(child.id()).unwrap();
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(SIGKILL));
    }
}
