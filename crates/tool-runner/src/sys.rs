//! The operating-system interface std does not offer: `open(2)` flags for the path guard and
//! `kill(2)` for process groups.
//!
//! This is the crate's only `unsafe` code: `extern "C"` declarations of libc's `kill` and
//! `fcntl`, which std already links. Nothing here allocates, dereferences or keeps pointers.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

/// `open(2)` flags std has no names for. The values differ between architectures.
#[cfg(target_arch = "x86_64")]
mod open_flags {
    pub const O_NOFOLLOW: i32 = 0o400_000;
    pub const O_DIRECTORY: i32 = 0o200_000;
    pub const O_PATH: i32 = 0o10_000_000;
    pub const O_NONBLOCK: i32 = 0o4_000;
}

#[cfg(target_arch = "aarch64")]
mod open_flags {
    pub const O_NOFOLLOW: i32 = 0o100_000;
    pub const O_DIRECTORY: i32 = 0o40_000;
    pub const O_PATH: i32 = 0o10_000_000;
    pub const O_NONBLOCK: i32 = 0o4_000;
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("tool-runner knows the open(2) flags of x86_64 and aarch64 Linux only");

pub use open_flags::{O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_PATH};

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
    }
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
        let file = std::fs::File::open("/proc/self/exe").unwrap();
        assert!(grow_pipe(&file, 1 << 20).is_err());
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
