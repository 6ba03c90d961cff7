//! What keeps a command away from the runner that started it, and away from set-id bits, on
//! every wall (`serve` mode; the direct provider's `stdio` mode is not confined).
//!
//! * The runner is not dumpable ([`sys::set_not_dumpable`]): `/proc/<runner>/mem`, `fd/`,
//!   `environ` and `pidfd_getfd` fail for processes of the same user.
//! * Commands are started by one dedicated thread, the *spawner*, that confined itself once
//!   and whose confinement every command inherits (seccomp filters and Landlock domains belong
//!   to a thread and pass to the processes it starts):
//!   - a Landlock domain ([`sys::landlock_restrict_commands`]) that scopes signals (ABI 6 and
//!     later): commands may signal one another (a later call can stop what an earlier one
//!     started), never the runner's other threads or anything outside, such as the wall's
//!     bridge; and, when the wall names its writable folders (`serve --writable`, ABI 2 and
//!     later, else the runner refuses to serve), lets commands make, remove, move or link
//!     entries only beneath those, so the runner's socket folder, left out of them, is fixed:
//!     no command can move the socket away and listen at its path in the runner's place (on
//!     OpenShell the host attaches by that path again after a lost stream);
//!   - a seccomp filter ([`program`]) refusing with `EPERM`: `pidfd_open`, `pidfd_getfd`,
//!     `pidfd_send_signal`; `kill`, `tgkill`, `rt_sigqueueinfo` and `rt_tgsigqueueinfo` aimed
//!     at the runner, the spawner thread, the runner's process group or (`kill`) every process
//!     (`-1`); `tkill`; `fcntl(F_SETOWN)` to the same targets and `F_SETOWN_EX`, and
//!     `ioctl(FIOSETOWN/SIOCSPGRP)` (a descriptor's owner receives `SIGIO`); any set-uid or
//!     set-gid bit in the mode of `chmod`, `fchmod`, `fchmodat`, `fchmodat2`, `mkdir`,
//!     `mkdirat`, `mknod`, `mknodat`, `creat`, and `open`/`openat` when they create; `openat2`
//!     answers `ENOSYS` (its mode sits in memory a filter cannot read; libc falls back to
//!     `openat`); `io_uring_setup` is refused (its operations would bypass every check above),
//!     and so is every system call of another architecture or of the x32 ABI (other numbers).
//!
//! The filter is installed by the runner rather than by the wall alone because the runner runs
//! in walls whose filter Paddock does not write (OpenShell's supervisor), and because only the
//! runner knows its own process and thread ids. The local wall's own filter repeats what needs
//! no id (the pidfd calls, the set-id modes, `openat2`).
//!
//! Neither knows every thread id of the runner (its threads come and go), and `kill` or
//! `rt_sigqueueinfo` aimed at any of them reaches the whole runner: without Landlock's signal
//! scope (kernels before 6.12) that is open. The local wall closes it structurally: the runner
//! is the first process of the wall's PID namespace (bubblewrap's `--as-pid-1`), and the
//! kernel delivers to a namespace's first process no signal sent from inside the namespace
//! for which it has no handler, SIGKILL and SIGSTOP included, whichever thread is aimed at.
//! There the runner keeps no handler ([`sys::default_fault_signals`]) and reaps what its
//! commands leave behind ([`wait`] takes a command's status from the reaper).

use std::collections::HashMap;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus};
use std::sync::mpsc::{self, Sender};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread;

use crate::sys::{self, SockFilter};

/// The ids the filter protects from signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Protected {
    pub runner_pid: i32,
    pub runner_pgid: i32,
    pub spawner_tid: i32,
}

/// How far the commands are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Confinement {
    /// Signals scoped by Landlock (ABI 6 or later).
    pub signals_scoped: bool,
    /// Commands change folders' entries only beneath the writable folders they were given.
    pub folders_fixed: bool,
    /// The runner is the first process of its PID namespace (the local wall): the kernel
    /// delivers it no signal from the commands, whatever thread they aim at.
    pub namespace_init: bool,
}

type Job = (Command, Sender<io::Result<Child>>);

struct Spawner {
    jobs: Mutex<Sender<Job>>,
}

static SPAWNER: OnceLock<Spawner> = OnceLock::new();

/// The commands the spawner started, by pid: `None` while they run, their status once the
/// reaper took it and until [`wait`] collects it.
struct Children {
    table: Mutex<ChildTable>,
    changed: Condvar,
}

#[derive(Default)]
struct ChildTable {
    known: HashMap<u32, Option<ExitStatus>>,
    /// Commands started so far (the reaper, finding no child, waits for this to change).
    started: u64,
}

static CHILDREN: OnceLock<Children> = OnceLock::new();

fn children() -> &'static Children {
    CHILDREN.get_or_init(|| Children {
        table: Mutex::new(ChildTable::default()),
        changed: Condvar::new(),
    })
}

fn table() -> MutexGuard<'static, ChildTable> {
    children()
        .table
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Reaps every child of the runner: a command's status goes to its [`wait`]; anything else (a
/// process its command left, re-parented to the runner as the first process of the PID
/// namespace, or the wall's bridge) is reaped and forgotten, so no zombie keeps a slot of the
/// sandbox's process limit. A child is looked at without being reaped first, then reaped under
/// the table's lock, which a spawn holds: a child std is still reaping itself (a command that
/// could not start) is left to std.
fn reap_forever() {
    loop {
        let started = table().started;
        match sys::next_ended_child() {
            Ok(Some(pid)) => {
                let mut table = table();
                if let Ok(Some(raw)) = sys::reap(pid)
                    && let Some(slot) = table.known.get_mut(&pid)
                {
                    *slot = Some(ExitStatus::from_raw(raw));
                    children().changed.notify_all();
                }
            }
            Ok(None) => {
                let mut table = table();
                while table.started == started {
                    table = children()
                        .changed
                        .wait(table)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
            Err(_) => thread::sleep(std::time::Duration::from_millis(10)),
        }
    }
}

/// Waits for a command [`spawn`] started and returns how it ended (through the reaper once
/// confinement is enabled, with std otherwise).
pub fn wait(mut child: Child) -> io::Result<ExitStatus> {
    if SPAWNER.get().is_none() {
        return child.wait();
    }
    let pid = child.id();
    let mut table = table();
    loop {
        match table.known.get(&pid) {
            Some(Some(status)) => {
                let status = *status;
                table.known.remove(&pid);
                return Ok(status);
            }
            Some(None) => {
                table = children()
                    .changed
                    .wait(table)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            None => return Err(io::Error::other("not a command this runner started")),
        }
    }
}

/// Starts `command` under the child table's lock and records it, so the reaper can tell it
/// from what it must merely reap.
fn spawn_recorded(command: &mut Command) -> io::Result<Child> {
    let mut table = table();
    let child = command.spawn()?;
    table.known.insert(child.id(), None);
    table.started += 1;
    children().changed.notify_all();
    Ok(child)
}

/// Confines the runner and starts the spawner; from now on [`spawn`] starts commands there
/// and a reaper thread reaps every child. Fails (and the runner refuses to serve) when the
/// filter cannot be installed. As the first process of a PID namespace (the local wall) the
/// runner also drops std's fault-signal handlers, the only handlers it has.
/// `scope_signals` false leaves out the Landlock signal scope, as on a kernel without it (the
/// runner's `--test-unscoped-signals`, for tests only). `writable`, when given, are the only
/// folders whose entries commands may change (see the module's documentation); a kernel that
/// cannot enforce it (Landlock ABI before 2) fails the call.
pub fn enable(scope_signals: bool, writable: Option<Vec<PathBuf>>) -> io::Result<Confinement> {
    sys::set_not_dumpable()?;
    let namespace_init = sys::own_ids().0 == 1;
    if namespace_init {
        sys::default_fault_signals()?;
    }
    let (ready_tx, ready_rx) = mpsc::channel::<io::Result<Confinement>>();
    let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
    thread::Builder::new()
        .name("spawner".into())
        .spawn(move || {
            let confined = confine_this_thread(scope_signals, writable.as_deref(), namespace_init);
            let ok = confined.is_ok();
            let _ = ready_tx.send(confined);
            if !ok {
                return;
            }
            for (mut command, reply) in jobs_rx {
                let _ = reply.send(spawn_recorded(&mut command));
            }
        })?;
    let confinement = ready_rx
        .recv()
        .map_err(|_| io::Error::other("the spawner thread ended before it was ready"))??;
    thread::Builder::new()
        .name("reaper".into())
        .spawn(reap_forever)?;
    let _ = SPAWNER.set(Spawner {
        jobs: Mutex::new(jobs_tx),
    });
    Ok(confinement)
}

fn confine_this_thread(
    scope_signals: bool,
    writable: Option<&[PathBuf]>,
    namespace_init: bool,
) -> io::Result<Confinement> {
    let (runner_pid, runner_pgid, spawner_tid) = sys::own_ids();
    sys::set_no_new_privs()?;
    let abi = sys::landlock_abi().unwrap_or(0);
    let scope = scope_signals && abi >= 6;
    let signals_scoped = match writable {
        Some(writable) => {
            if abi < 2 {
                return Err(io::Error::other(format!(
                    "keeping commands from replacing the runner's socket needs Landlock ABI 2 \
                     or later; this kernel offers {}",
                    if abi == 0 {
                        "none".to_owned()
                    } else {
                        abi.to_string()
                    }
                )));
            }
            sys::landlock_restrict_commands(scope, Some(writable))?;
            scope
        }
        // Only the signal scope: a kernel that refuses it leaves the filter and, on the local
        // wall, the PID namespace (see the module's documentation).
        None => scope && sys::landlock_restrict_commands(true, None).is_ok(),
    };
    sys::install_seccomp_filter(&program(Protected {
        runner_pid,
        runner_pgid,
        spawner_tid,
    }))?;
    Ok(Confinement {
        signals_scoped,
        folders_fixed: writable.is_some(),
        namespace_init,
    })
}

/// Starts `command`: on the spawner thread when confinement is enabled, here otherwise.
pub fn spawn(mut command: Command) -> io::Result<Child> {
    let Some(spawner) = SPAWNER.get() else {
        return command.spawn();
    };
    let (reply_tx, reply_rx) = mpsc::channel();
    spawner
        .jobs
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .send((command, reply_tx))
        .map_err(|_| io::Error::other("the spawner thread is gone"))?;
    reply_rx
        .recv()
        .map_err(|_| io::Error::other("the spawner thread is gone"))?
}

// --- the seccomp program -----------------------------------------------------------------

const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const EPERM: u32 = 1;
const ENOSYS: u32 = 38;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

const S_ISUID_OR_S_ISGID: u32 = 0o6000;
const F_SETOWN: u32 = 8;
const F_SETOWN_EX: u32 = 15;
const FIOSETOWN: u32 = 0x8901;
const SIOCSPGRP: u32 = 0x8902;

#[cfg(target_arch = "x86_64")]
mod nr {
    pub const AUDIT_ARCH: u32 = 0xc000_003e;
    pub const OPEN_FLAGS: (u32, u32) = (0o100, 0o20_000_000); // O_CREAT, __O_TMPFILE
    pub const OPEN: Option<u32> = Some(2);
    pub const CREAT: Option<u32> = Some(85);
    pub const CHMOD: Option<u32> = Some(90);
    pub const MKDIR: Option<u32> = Some(83);
    pub const MKNOD: Option<u32> = Some(133);
    pub const FCHMOD: u32 = 91;
    pub const FCHMODAT: u32 = 268;
    pub const MKDIRAT: u32 = 258;
    pub const MKNODAT: u32 = 259;
    pub const OPENAT: u32 = 257;
    pub const KILL: u32 = 62;
    pub const TKILL: u32 = 200;
    pub const TGKILL: u32 = 234;
    pub const RT_SIGQUEUEINFO: u32 = 129;
    pub const RT_TGSIGQUEUEINFO: u32 = 297;
    pub const FCNTL: u32 = 72;
    pub const IOCTL: u32 = 16;
}

#[cfg(target_arch = "aarch64")]
mod nr {
    pub const AUDIT_ARCH: u32 = 0xc000_00b7;
    pub const OPEN_FLAGS: (u32, u32) = (0o100, 0o20_000_000);
    pub const OPEN: Option<u32> = None;
    pub const CREAT: Option<u32> = None;
    pub const CHMOD: Option<u32> = None;
    pub const MKDIR: Option<u32> = None;
    pub const MKNOD: Option<u32> = None;
    pub const FCHMOD: u32 = 52;
    pub const FCHMODAT: u32 = 53;
    pub const MKDIRAT: u32 = 34;
    pub const MKNODAT: u32 = 33;
    pub const OPENAT: u32 = 56;
    pub const KILL: u32 = 129;
    pub const TKILL: u32 = 130;
    pub const TGKILL: u32 = 131;
    pub const RT_SIGQUEUEINFO: u32 = 138;
    pub const RT_TGSIGQUEUEINFO: u32 = 240;
    pub const FCNTL: u32 = 25;
    pub const IOCTL: u32 = 29;
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("tool-runner knows the system calls of x86_64 and aarch64 Linux only");

/// The same numbers on every architecture (the unified table).
const PIDFD_SEND_SIGNAL: u32 = 424;
const IO_URING_SETUP: u32 = 425;
const PIDFD_OPEN: u32 = 434;
const OPENAT2: u32 = 437;
const PIDFD_GETFD: u32 = 438;
const FCHMODAT2: u32 = 452;

fn op(code: u16, jt: u8, jf: u8, k: u32) -> SockFilter {
    SockFilter { code, jt, jf, k }
}

fn ret(k: u32) -> SockFilter {
    op(RET_K, 0, 0, k)
}

/// Loads the low 32 bits of argument `index` (little-endian `seccomp_data`); every argument
/// checked here is a C `int` or `mode_t`, of which the kernel reads only those bits.
fn load_arg(index: u32) -> SockFilter {
    op(LD_W_ABS, 0, 0, 16 + 8 * index)
}

/// One system call's checks: entered when the number matches, ends in a return.
struct Block {
    nr: u32,
    body: Vec<SockFilter>,
}

/// Refused outright with `errno`.
fn refuse(nr: u32, errno: u32) -> Block {
    Block {
        nr,
        body: vec![ret(RET_ERRNO | errno)],
    }
}

/// `EPERM` when argument `arg` has any bit of `mask`.
fn refuse_bits(nr: u32, arg: u32, mask: u32) -> Block {
    Block {
        nr,
        body: vec![
            load_arg(arg),
            op(JSET_K, 0, 1, mask),
            ret(RET_ERRNO | EPERM),
            ret(RET_ALLOW),
        ],
    }
}

/// `EPERM` when argument `arg` equals any of `values`.
fn refuse_values(nr: u32, arg: u32, values: &[u32]) -> Block {
    Block {
        nr,
        body: value_checks(arg, values),
    }
}

fn value_checks(arg: u32, values: &[u32]) -> Vec<SockFilter> {
    let n = values.len();
    let mut body = vec![load_arg(arg)];
    for (k, &value) in values.iter().enumerate() {
        body.push(op(JEQ_K, jump(n - k), 0, value));
    }
    body.push(ret(RET_ALLOW));
    body.push(ret(RET_ERRNO | EPERM));
    body
}

/// `open`/`openat`: `EPERM` when the flags create (`O_CREAT`, `O_TMPFILE`) and the mode has a
/// set-id bit.
fn refuse_creating_set_id(nr: u32, flags_arg: u32, mode_arg: u32) -> Block {
    let (creat, tmpfile) = nr::OPEN_FLAGS;
    Block {
        nr,
        body: vec![
            load_arg(flags_arg),
            op(JSET_K, 1, 0, creat | tmpfile),
            ret(RET_ALLOW),
            load_arg(mode_arg),
            op(JSET_K, 0, 1, S_ISUID_OR_S_ISGID),
            ret(RET_ERRNO | EPERM),
            ret(RET_ALLOW),
        ],
    }
}

/// `tgkill`/`rt_tgsigqueueinfo`: `EPERM` when the process (argument 0) or the thread
/// (argument 1) is one of `targets`.
fn refuse_thread_signal(nr: u32, targets: &[u32]) -> Block {
    let n = targets.len();
    // [load 0, n checks, load 1, n checks, allow, refuse]: the refusal is at 2n + 3.
    let refuse_at = 2 * n + 3;
    let mut body = vec![load_arg(0)];
    for (k, &target) in targets.iter().enumerate() {
        let at = 1 + k;
        body.push(op(JEQ_K, jump(refuse_at - at - 1), 0, target));
    }
    body.push(load_arg(1));
    for (k, &target) in targets.iter().enumerate() {
        let at = n + 2 + k;
        body.push(op(JEQ_K, jump(refuse_at - at - 1), 0, target));
    }
    body.push(ret(RET_ALLOW));
    body.push(ret(RET_ERRNO | EPERM));
    Block { nr, body }
}

fn jump(distance: usize) -> u8 {
    u8::try_from(distance).unwrap_or(u8::MAX)
}

/// `fcntl`: `F_SETOWN_EX` refused, `F_SETOWN` to a protected target refused.
fn refuse_fcntl_owner(targets: &[u32]) -> Block {
    let mut body = vec![
        load_arg(1),
        op(JEQ_K, 2, 0, F_SETOWN_EX),
        op(JEQ_K, 2, 0, F_SETOWN),
        ret(RET_ALLOW),
        ret(RET_ERRNO | EPERM),
    ];
    body.extend(value_checks(2, targets));
    Block {
        nr: nr::FCNTL,
        body,
    }
}

/// The filter every command inherits (see the module's documentation).
pub fn program(protected: Protected) -> Vec<SockFilter> {
    let negative = |id: i32| (-id) as u32;
    let runner = protected.runner_pid as u32;
    let spawner = protected.spawner_tid as u32;
    let group = negative(protected.runner_pgid);
    let every = u32::MAX; // -1
    let mut blocks = vec![
        refuse(PIDFD_OPEN, EPERM),
        refuse(PIDFD_GETFD, EPERM),
        refuse(PIDFD_SEND_SIGNAL, EPERM),
        refuse(nr::TKILL, EPERM),
        refuse(OPENAT2, ENOSYS),
        refuse(IO_URING_SETUP, EPERM),
        refuse_values(nr::KILL, 0, &[runner, spawner, group, every]),
        refuse_values(nr::RT_SIGQUEUEINFO, 0, &[runner, spawner, group, every]),
        refuse_thread_signal(nr::TGKILL, &[runner, spawner]),
        refuse_thread_signal(nr::RT_TGSIGQUEUEINFO, &[runner, spawner]),
        refuse_fcntl_owner(&[runner, spawner, group]),
        refuse_values(nr::IOCTL, 1, &[FIOSETOWN, SIOCSPGRP]),
        refuse_bits(nr::FCHMOD, 1, S_ISUID_OR_S_ISGID),
        refuse_bits(nr::FCHMODAT, 2, S_ISUID_OR_S_ISGID),
        refuse_bits(FCHMODAT2, 2, S_ISUID_OR_S_ISGID),
        refuse_bits(nr::MKDIRAT, 2, S_ISUID_OR_S_ISGID),
        refuse_bits(nr::MKNODAT, 2, S_ISUID_OR_S_ISGID),
        refuse_creating_set_id(nr::OPENAT, 2, 3),
    ];
    let legacy = [
        (nr::CHMOD, 1),
        (nr::MKDIR, 1),
        (nr::MKNOD, 1),
        (nr::CREAT, 1),
    ];
    for (number, arg) in legacy {
        if let Some(number) = number {
            blocks.push(refuse_bits(number, arg, S_ISUID_OR_S_ISGID));
        }
    }
    if let Some(open) = nr::OPEN {
        blocks.push(refuse_creating_set_id(open, 1, 2));
    }
    assemble(&blocks)
}

fn assemble(blocks: &[Block]) -> Vec<SockFilter> {
    let mut program = vec![
        // seccomp_data.arch at offset 4: another architecture's numbers mean other calls.
        op(LD_W_ABS, 0, 0, 4),
        op(JEQ_K, 1, 0, nr::AUDIT_ARCH),
        ret(RET_ERRNO | EPERM),
        op(LD_W_ABS, 0, 0, 0),
        op(JGE_K, 0, 1, X32_SYSCALL_BIT),
        ret(RET_ERRNO | EPERM),
    ];
    for block in blocks {
        // Enter the block on its number; otherwise jump over it to the next number check.
        program.push(op(JEQ_K, 0, jump(block.body.len()), block.nr));
        program.extend(block.body.iter().copied());
    }
    program.push(ret(RET_ALLOW));
    program
}

#[cfg(test)]
#[path = "confine_tests.rs"]
mod tests;
