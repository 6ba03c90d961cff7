//! The wall's system-call filter: everything is allowed except the calls that reach past the
//! wall or attack the kernel, which fail with `EPERM` (a few with `ENOSYS`, see below).
//!
//! Refused:
//! * sockets of any family but `AF_UNIX`, `AF_INET`, `AF_INET6` and `AF_NETLINK`; raw sockets
//!   and ICMP sockets of `AF_INET`/`AF_INET6`; netlink of any protocol but `NETLINK_ROUTE` (kept
//!   so `ip addr` and glibc's address-family check work; it only sees the wall's own namespace);
//! * `io_uring_*`, `bpf`, `perf_event_open`, `userfaultfd`;
//! * `ptrace`, `process_vm_readv`, `process_vm_writev` (no debugging of any process);
//! * new namespaces: `unshare`/`clone` with any `CLONE_NEW*` flag, and `setns`; `clone3`
//!   answers `ENOSYS` (its flags sit in memory a filter cannot read), so libc falls back to
//!   `clone`, whose flags are checked;
//! * the kernel keyring: `add_key`, `request_key`, `keyctl`;
//! * mounting: `mount`, `umount2`, `pivot_root`, `chroot`, `open_tree`, `move_mount`,
//!   `fsopen`, `fsconfig`, `fsmount`, `fspick`, `mount_setattr`;
//! * kernel and machine control: modules, `kexec_*`, `reboot`, `swapon`/`swapoff`, `acct`,
//!   `quotactl`, `syslog`, `iopl`/`ioperm`, `open_by_handle_at`, `name_to_handle_at`;
//! * terminal input injection: `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)`;
//! * reaching into another process by descriptor: `pidfd_open`, `pidfd_getfd`,
//!   `pidfd_send_signal` (the runner and the bridge are also non-dumpable, and the runner adds
//!   a filter of its own for signals aimed at it, see tool-runner's `confine`);
//! * set-uid and set-gid bits: any mode with `S_ISUID` or `S_ISGID` in `chmod`, `fchmod`,
//!   `fchmodat`, `fchmodat2`, `mkdir`, `mkdirat`, `mknod`, `mknodat`, `creat`, and in
//!   `open`/`openat` with `O_CREAT` or `O_TMPFILE`; `openat2` answers `ENOSYS` (its mode sits
//!   in memory a filter cannot read; libc falls back to `openat`).
//!
//! On x86_64 a second filter refuses the x32 system-call numbers; the first filter kills a
//! process that calls with another architecture's numbers (e.g. 32-bit `int 0x80`).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::error::WallError;

#[cfg(target_arch = "x86_64")]
const ARCH: TargetArch = TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
const ARCH: TargetArch = TargetArch::aarch64;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("paddock-wall knows the system calls of x86_64 and aarch64 Linux only");

const CLONE_NAMESPACE_FLAGS: [u64; 8] = [
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWTIME as u64,
];

/// A one-line description of the policy, part of the wall's configuration hash.
pub const SUMMARY: &str = "seccomp v1: default allow; EPERM: socket families other than unix/inet/inet6/netlink, \
     raw and icmp inet sockets, netlink other than route, io_uring, bpf, perf_event_open, \
     userfaultfd, ptrace, process_vm_readv/writev, unshare/clone with CLONE_NEW*, setns, keyring, \
     mount family, chroot, pivot_root, modules, kexec, reboot, swap, acct, quotactl, syslog, \
     iopl/ioperm, handle syscalls, ioctl TIOCSTI/TIOCLINUX, pidfd_open/getfd/send_signal, \
     set-id modes in chmod/fchmod/fchmodat/fchmodat2/mkdir/mkdirat/mknod/mknodat/creat and \
     creating open/openat; ENOSYS: clone3, openat2; x32 refused; foreign arch killed";

fn condition(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, WallError> {
    SeccompCondition::new(arg, len, op, value).map_err(|e| WallError::Seccomp(e.to_string()))
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, WallError> {
    SeccompRule::new(conditions).map_err(|e| WallError::Seccomp(e.to_string()))
}

fn socket_rules() -> Result<Vec<SeccompRule>, WallError> {
    use SeccompCmpArgLen::Dword;
    use SeccompCmpOp::{Eq, MaskedEq, Ne};
    let family = |op, v: i32| condition(0, Dword, op, v as u64);
    let kind_raw = condition(1, Dword, MaskedEq(0xf), libc::SOCK_RAW as u64)?;
    let mut rules = vec![
        // Any family but the four the tools need.
        rule(vec![
            family(Ne, libc::AF_UNIX)?,
            family(Ne, libc::AF_INET)?,
            family(Ne, libc::AF_INET6)?,
            family(Ne, libc::AF_NETLINK)?,
        ])?,
        // Netlink other than NETLINK_ROUTE.
        rule(vec![
            family(Eq, libc::AF_NETLINK)?,
            condition(2, Dword, Ne, libc::NETLINK_ROUTE as u64)?,
        ])?,
    ];
    for inet in [libc::AF_INET, libc::AF_INET6] {
        rules.push(rule(vec![family(Eq, inet)?, kind_raw.clone()])?);
    }
    rules.push(rule(vec![
        family(Eq, libc::AF_INET)?,
        condition(2, Dword, Eq, libc::IPPROTO_ICMP as u64)?,
    ])?);
    rules.push(rule(vec![
        family(Eq, libc::AF_INET6)?,
        condition(2, Dword, Eq, libc::IPPROTO_ICMPV6 as u64)?,
    ])?);
    Ok(rules)
}

fn namespace_flag_rules(arg: u8) -> Result<Vec<SeccompRule>, WallError> {
    CLONE_NAMESPACE_FLAGS
        .iter()
        .map(|&flag| {
            rule(vec![condition(
                arg,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )?])
        })
        .collect()
}

/// Refused unconditionally with `EPERM`.
const ALWAYS_REFUSED: &[i64] = &[
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_setns,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_keyctl,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_syslog,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_pidfd_open,
    libc::SYS_pidfd_getfd,
    libc::SYS_pidfd_send_signal,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
];

const SET_ID_BITS: [u64; 2] = [libc::S_ISUID as u64, libc::S_ISGID as u64];
/// `O_TMPFILE` without `O_DIRECTORY`: the bit that makes `open` create an unnamed file.
const O_TMPFILE_BIT: u64 = (libc::O_TMPFILE & !libc::O_DIRECTORY) as u64;

/// A set-id bit in argument `mode_arg`.
fn set_id_mode_rules(mode_arg: u8) -> Result<Vec<SeccompRule>, WallError> {
    SET_ID_BITS
        .iter()
        .map(|&bit| {
            rule(vec![condition(
                mode_arg,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(bit),
                bit,
            )?])
        })
        .collect()
}

/// A set-id bit in argument `mode_arg` of an `open` whose flags (`flags_arg`) create a file.
fn creating_set_id_rules(flags_arg: u8, mode_arg: u8) -> Result<Vec<SeccompRule>, WallError> {
    let mut rules = Vec::new();
    for creates in [libc::O_CREAT as u64, O_TMPFILE_BIT] {
        for bit in SET_ID_BITS {
            rules.push(rule(vec![
                condition(
                    flags_arg,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::MaskedEq(creates),
                    creates,
                )?,
                condition(
                    mode_arg,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::MaskedEq(bit),
                    bit,
                )?,
            ])?);
        }
    }
    Ok(rules)
}

fn eperm_filter() -> Result<SeccompFilter, WallError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &nr in ALWAYS_REFUSED {
        rules.insert(nr, Vec::new());
    }
    rules.insert(libc::SYS_socket, socket_rules()?);
    rules.insert(libc::SYS_unshare, namespace_flag_rules(0)?);
    rules.insert(libc::SYS_clone, namespace_flag_rules(0)?);
    for (nr, mode_arg) in [
        (libc::SYS_fchmod, 1),
        (libc::SYS_fchmodat, 2),
        (libc::SYS_fchmodat2, 2),
        (libc::SYS_mkdirat, 2),
        (libc::SYS_mknodat, 2),
    ] {
        rules.insert(nr, set_id_mode_rules(mode_arg)?);
    }
    #[cfg(target_arch = "x86_64")]
    for nr in [
        libc::SYS_chmod,
        libc::SYS_mkdir,
        libc::SYS_mknod,
        libc::SYS_creat,
    ] {
        rules.insert(nr, set_id_mode_rules(1)?);
    }
    #[cfg(target_arch = "x86_64")]
    rules.insert(libc::SYS_open, creating_set_id_rules(1, 2)?);
    rules.insert(libc::SYS_openat, creating_set_id_rules(2, 3)?);
    rules.insert(
        libc::SYS_ioctl,
        [libc::TIOCSTI, libc::TIOCLINUX]
            .iter()
            .map(|&request| {
                rule(vec![condition(
                    1,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Eq,
                    request,
                )?])
            })
            .collect::<Result<_, _>>()?,
    );
    SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        ARCH,
    )
    .map_err(|e| WallError::Seccomp(e.to_string()))
}

fn enosys_filter() -> Result<SeccompFilter, WallError> {
    let rules = BTreeMap::from([
        (libc::SYS_clone3, Vec::new()),
        (libc::SYS_openat2, Vec::new()),
    ]);
    SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        ARCH,
    )
    .map_err(|e| WallError::Seccomp(e.to_string()))
}

/// A filter refusing every x32 system call (numbers with bit 30 set) on x86_64.
#[cfg(target_arch = "x86_64")]
fn x32_filter() -> BpfProgram {
    use seccompiler::sock_filter;
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    let errno = libc::SECCOMP_RET_ERRNO | (libc::EPERM as u32);
    vec![
        // seccomp_data.nr is at offset 0.
        sock_filter {
            code: LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        sock_filter {
            code: JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: errno,
        },
        sock_filter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ALLOW,
        },
    ]
}

/// The compiled filters, in the order they are installed.
pub fn programs() -> Result<Vec<BpfProgram>, WallError> {
    let compile = |filter: SeccompFilter| -> Result<BpfProgram, WallError> {
        filter
            .try_into()
            .map_err(|e: seccompiler::BackendError| WallError::Seccomp(e.to_string()))
    };
    #[allow(unused_mut, reason = "the x32 filter exists on x86_64 only")]
    let mut programs = vec![compile(eperm_filter()?)?, compile(enosys_filter()?)?];
    #[cfg(target_arch = "x86_64")]
    programs.push(x32_filter());
    Ok(programs)
}

/// Installs the filters on the calling thread. `no_new_privs` must already be set.
pub fn apply() -> Result<(), WallError> {
    for program in programs()? {
        seccompiler::apply_filter(&program).map_err(|e| WallError::Seccomp(e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_compile() {
        let programs = programs().unwrap();
        assert!(programs.len() >= 2);
        assert!(programs.iter().all(|p| !p.is_empty()));
    }
}
