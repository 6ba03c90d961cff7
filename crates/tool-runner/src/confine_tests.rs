//! The filter, run by a small classic-BPF interpreter over made-up system calls (the real
//! filter is attacked through the real runner inside the walls, in sandbox-provider's suites).

use super::*;

const IDS: Protected = Protected {
    runner_pid: 2,
    runner_pgid: 2,
    spawner_tid: 7,
};

/// Runs `program` on one call (`args` as 64-bit registers) and returns the action.
fn run(program: &[SockFilter], arch: u32, number: u32, args: [u64; 6]) -> u32 {
    let mut data = Vec::new();
    data.extend_from_slice(&number.to_le_bytes());
    data.extend_from_slice(&arch.to_le_bytes());
    data.extend_from_slice(&0u64.to_le_bytes());
    for arg in args {
        data.extend_from_slice(&arg.to_le_bytes());
    }
    let mut acc = 0u32;
    let mut pc = 0usize;
    loop {
        let i = program[pc];
        match i.code {
            LD_W_ABS => {
                let at = i.k as usize;
                acc = u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
                pc += 1;
            }
            JEQ_K | JGE_K | JSET_K => {
                let taken = match i.code {
                    JEQ_K => acc == i.k,
                    JGE_K => acc >= i.k,
                    _ => acc & i.k != 0,
                };
                pc += 1 + usize::from(if taken { i.jt } else { i.jf });
            }
            RET_K => return i.k,
            other => panic!("unknown instruction {other:#x}"),
        }
    }
}

fn call(number: u32, args: &[i64]) -> u32 {
    let mut regs = [0u64; 6];
    for (reg, arg) in regs.iter_mut().zip(args) {
        *reg = *arg as u64;
    }
    run(&program(IDS), nr::AUDIT_ARCH, number, regs)
}

const REFUSED: u32 = RET_ERRNO | EPERM;
const NO_SUCH_CALL: u32 = RET_ERRNO | ENOSYS;

#[test]
fn pidfd_calls_and_tkill_are_refused() {
    for number in [PIDFD_OPEN, PIDFD_GETFD, PIDFD_SEND_SIGNAL, nr::TKILL] {
        assert_eq!(call(number, &[2, 0]), REFUSED, "{number}");
    }
    assert_eq!(call(OPENAT2, &[]), NO_SUCH_CALL);
    assert_eq!(call(IO_URING_SETUP, &[]), REFUSED);
}

#[test]
fn signals_to_the_runner_its_group_its_spawner_and_everyone_are_refused() {
    for target in [2, 7, -2, -1] {
        assert_eq!(call(nr::KILL, &[target, 9]), REFUSED, "kill {target}");
        assert_eq!(
            call(nr::RT_SIGQUEUEINFO, &[target, 9, 0]),
            REFUSED,
            "sigqueue {target}"
        );
    }
    for target in [3, 100, -100, 0] {
        assert_eq!(call(nr::KILL, &[target, 9]), RET_ALLOW, "kill {target}");
    }
    // The upper half of a register is not read by the kernel (pid_t is an int): no way around.
    assert_eq!(call(nr::KILL, &[(1 << 32) | 2, 9]), REFUSED);
    for (tgid, tid) in [(2, 2), (2, 5), (100, 7), (7, 7)] {
        assert_eq!(call(nr::TGKILL, &[tgid, tid, 9]), REFUSED, "{tgid}/{tid}");
        assert_eq!(
            call(nr::RT_TGSIGQUEUEINFO, &[tgid, tid, 9, 0]),
            REFUSED,
            "{tgid}/{tid}"
        );
    }
    assert_eq!(call(nr::TGKILL, &[100, 101, 9]), RET_ALLOW);
}

#[test]
fn sigio_owners_pointing_at_the_runner_are_refused() {
    for owner in [2, 7, -2] {
        assert_eq!(
            call(nr::FCNTL, &[3, i64::from(F_SETOWN), owner]),
            REFUSED,
            "{owner}"
        );
    }
    assert_eq!(call(nr::FCNTL, &[3, i64::from(F_SETOWN), 100]), RET_ALLOW);
    assert_eq!(call(nr::FCNTL, &[3, i64::from(F_SETOWN_EX), 0]), REFUSED);
    assert_eq!(call(nr::FCNTL, &[3, 1, 0]), RET_ALLOW, "F_GETFD");
    assert_eq!(call(nr::IOCTL, &[3, i64::from(FIOSETOWN), 0]), REFUSED);
    assert_eq!(call(nr::IOCTL, &[3, 0x5401, 0]), RET_ALLOW, "TCGETS");
}

#[test]
fn set_id_modes_are_refused_and_plain_modes_allowed() {
    let (creat, tmpfile) = nr::OPEN_FLAGS;
    let (creat, tmpfile) = (i64::from(creat), i64::from(tmpfile));
    for mode in [0o4755, 0o2755, 0o6000] {
        assert_eq!(call(nr::FCHMOD, &[3, mode]), REFUSED, "{mode:o}");
        assert_eq!(call(nr::FCHMODAT, &[-100, 0, mode]), REFUSED);
        assert_eq!(call(FCHMODAT2, &[-100, 0, mode, 0]), REFUSED);
        assert_eq!(call(nr::MKDIRAT, &[-100, 0, mode]), REFUSED);
        assert_eq!(call(nr::MKNODAT, &[-100, 0, 0o100_000 | mode, 0]), REFUSED);
        assert_eq!(call(nr::OPENAT, &[-100, 0, creat | 1, mode]), REFUSED);
        assert_eq!(call(nr::OPENAT, &[-100, 0, tmpfile | 2, mode]), REFUSED);
        // Without O_CREAT the mode register is not a mode.
        assert_eq!(call(nr::OPENAT, &[-100, 0, 0, mode]), RET_ALLOW);
        if let Some(open) = nr::OPEN {
            assert_eq!(call(open, &[0, creat, mode]), REFUSED);
            assert_eq!(call(open, &[0, 0, mode]), RET_ALLOW);
        }
        for number in [nr::CHMOD, nr::MKDIR, nr::CREAT].into_iter().flatten() {
            assert_eq!(call(number, &[0, mode]), REFUSED, "{number} {mode:o}");
        }
    }
    for mode in [0o755, 0o1777, 0o644] {
        assert_eq!(call(nr::FCHMODAT, &[-100, 0, mode]), RET_ALLOW, "{mode:o}");
        assert_eq!(call(nr::OPENAT, &[-100, 0, creat | 1, mode]), RET_ALLOW);
    }
}

#[test]
fn other_architectures_and_x32_are_refused_and_ordinary_calls_allowed() {
    let program = program(IDS);
    assert_eq!(
        run(&program, 0x4000_0003, nr::KILL, [0; 6]),
        REFUSED,
        "i386"
    );
    #[cfg(target_arch = "x86_64")]
    assert_eq!(
        run(&program, nr::AUDIT_ARCH, 0x4000_0000 | 62, [0; 6]),
        REFUSED
    );
    for number in [0, 1, 3, 59, 257] {
        assert_eq!(call(number, &[0, 0, 0, 0o644]), RET_ALLOW, "{number}");
    }
}
