//! What this kernel offers the wall: the Landlock ABI and seccomp filtering. The host's
//! preflight calls these; they change nothing.

/// The kernel's Landlock ABI version, or `None` when Landlock is not built in or not enabled
/// (e.g. missing from the `lsm=` boot parameter).
pub fn landlock_abi() -> Option<u32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_long = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the kernel only
    // returns the ABI number (or an error); no memory is read or written.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(v).ok().filter(|&v| v > 0)
}

/// Why seccomp filtering is unusable, or `Ok` when filters can be installed and can answer
/// with an errno and kill a process.
pub fn seccomp_filtering() -> Result<(), String> {
    // SAFETY: PR_GET_SECCOMP takes no pointer; it fails with EINVAL without CONFIG_SECCOMP.
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    if mode < 0 {
        return Err(format!(
            "the kernel has no seccomp support ({})",
            std::io::Error::last_os_error()
        ));
    }
    match std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail") {
        Ok(actions) => {
            let actions: Vec<&str> = actions.split_whitespace().collect();
            let missing: Vec<&str> = ["errno", "kill_process", "allow"]
                .into_iter()
                .filter(|a| !actions.contains(a))
                .collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "the kernel's seccomp lacks the actions {}",
                    missing.join(", ")
                ))
            }
        }
        Err(e) => Err(format!(
            "/proc/sys/kernel/seccomp/actions_avail is unreadable ({e}); the kernel lacks seccomp filters"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_kernel_has_what_the_wall_needs() {
        // The machines this project runs on (Debian 12, kernel 6.x) have both.
        let abi = landlock_abi().expect("Landlock is enabled on this machine");
        assert!(abi >= 3, "Landlock ABI {abi}");
        seccomp_filtering().unwrap();
    }
}
