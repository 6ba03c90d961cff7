//! Escape suite, filesystem and processes: attacks run through the real tool-runner inside the
//! local wall, each asserting the refusal. Needs bubblewrap, python3 and a Landlock kernel.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use crate::support;

use sandbox_provider::Sandbox;
use support::*;
use tokio_util::sync::CancellationToken;
use tool_protocol::{ReadFile, ToolRequest, ToolResult};

/// Runs `command` and asserts it failed without printing `ESCAPED`.
async fn refused(sandbox: &dyn Sandbox, name: &str, command: &str) -> String {
    let r = bash(sandbox, command).await;
    let out = format!("{}{}", stdout(&r), stderr(&r));
    assert_ne!(r.exit_code, Some(0), "{name}: the attack succeeded: {out}");
    assert!(!out.contains("ESCAPED"), "{name}: {out}");
    out
}

fn q(path: &std::path::Path) -> String {
    sandbox_provider::local::sh_quote(&path.display().to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_of_the_host_are_absent() {
    let w = world();
    let s = w.start().await;
    let s = s.as_ref();
    let real_home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let out = refused(
        s,
        "read ~/.ssh",
        &format!("ls -la {real_home}/.ssh; cat {real_home}/.ssh/*"),
    )
    .await;
    assert!(out.contains("No such file"), "{out}");
    let out = refused(s, "list /root", "ls -la /root").await;
    assert!(out.contains("No such file"), "{out}");
    // Covered by empty files and refused by Landlock: nothing of them can be read.
    for file in ["/etc/shadow", "/etc/gshadow", "/etc/sudoers"] {
        let out = refused(s, file, &format!("cat {file}")).await;
        let refused_here = out.contains("Permission denied") || out.contains("No such file");
        assert!(refused_here && !out.contains("root:"), "{file}: {out}");
    }
    let r = bash(s, "cat /etc/ssh/*key* 2>&1; ls /etc/ssl/private 2>&1").await;
    assert!(
        !stdout(&r).contains("PRIVATE KEY"),
        "host keys readable: {}",
        stdout(&r)
    );
    assert!(
        stdout(&r).contains("Permission denied") || stdout(&r).contains("No such file"),
        "{}",
        stdout(&r)
    );
    let out = refused(
        s,
        "fake user home",
        &format!("cat {}/.bash_history", q(&w.home())),
    )
    .await;
    assert!(!out.contains("HOME-SECRET"), "{out}");
    let out = refused(
        s,
        "sibling folder",
        &format!("cat {}/secret.txt", q(&w.outside())),
    )
    .await;
    assert!(
        out.contains("No such file") && !out.contains("OUTSIDE-SECRET"),
        "{out}"
    );
    refused(s, "wall config", "cat /run/paddock/wall.json").await;
    // The runner's own guard refuses too, but even bash-level access found nothing above.
    let r = bash(s, "cat /etc/passwd").await;
    assert!(
        !stdout(&r).contains("root:x:0:0:root:/root:/bin/bash"),
        "the host's passwd leaked"
    );
    assert!(stdout(&r).contains("paddock:x:"), "{}", stdout(&r));
    s.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_outside_the_grants_fail() {
    let w = world();
    let s = w.start().await;
    let s = s.as_ref();
    refused(
        s,
        "write a sibling folder",
        &format!("echo ESCAPED > {}/pwn", q(&w.outside())),
    )
    .await;
    assert!(!exists(&w.outside().join("pwn")));
    refused(s, "write /usr/bin", "echo ESCAPED > /usr/bin/pwn").await;
    refused(s, "write /etc", "echo ESCAPED > /etc/pwn").await;
    refused(s, "write /", "echo ESCAPED > /pwn").await;
    refused(
        s,
        "replace the runner",
        "cp /bin/true /run/paddock/bin/tool-runner",
    )
    .await;
    let out = refused(
        s,
        "write the Landlock probe",
        "echo ESCAPED > /run/paddock/landlock-probe/x",
    )
    .await;
    assert!(
        out.contains("Permission denied"),
        "Landlock did not answer: {out}"
    );
    refused(s, "make a device", "mknod /tmp/sda b 8 0").await;
    s.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_grants_refuse_every_kind_of_write() {
    let w = world();
    let s = w.start().await;
    let s = s.as_ref();
    let (docs, work) = (q(&w.docs()), q(&w.work()));
    let original = std::fs::read_to_string(w.docs().join("readme.txt")).unwrap();
    refused(s, "create in ro", &format!("echo ESCAPED > {docs}/new.txt")).await;
    refused(
        s,
        "overwrite in ro",
        &format!("echo ESCAPED > {docs}/readme.txt"),
    )
    .await;
    refused(
        s,
        "append in ro",
        &format!("echo ESCAPED >> {docs}/readme.txt"),
    )
    .await;
    refused(
        s,
        "truncate in ro",
        &format!("truncate -s 0 {docs}/readme.txt"),
    )
    .await;
    refused(s, "chmod in ro", &format!("chmod 777 {docs}/readme.txt")).await;
    refused(
        s,
        "write via symlink",
        &format!("ln -s {docs}/readme.txt {work}/link && echo ESCAPED > {work}/link"),
    )
    .await;
    refused(
        s,
        "rename out of ro",
        &format!("mv {docs}/readme.txt {work}/stolen.txt"),
    )
    .await;
    refused(
        s,
        "rename into ro",
        &format!("echo ESCAPED > {work}/in.txt && mv {work}/in.txt {docs}/in.txt"),
    )
    .await;
    refused(
        s,
        "hard link then write",
        &format!("ln {docs}/readme.txt {work}/hard && echo ESCAPED > {work}/hard"),
    )
    .await;
    refused(s, "delete in ro", &format!("rm {docs}/readme.txt")).await;
    assert_eq!(
        std::fs::read_to_string(w.docs().join("readme.txt")).unwrap(),
        original
    );
    assert!(!exists(&w.docs().join("new.txt")) && !exists(&w.docs().join("in.txt")));
    s.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn symlink_swap_races_never_reach_outside() {
    let w = world();
    std::fs::write(w.work().join("ok.txt"), "harmless\n").unwrap();
    let s = w.start().await;
    let (work, outside) = (q(&w.work()), q(&w.outside()));
    // A swapper flips work/swap between a harmless file and the secret outside the grants
    // while readers (bash and the runner's read_file) read through it.
    let swapper = format!(
        "( end=$((SECONDS+3)); while [ $SECONDS -lt $end ]; do ln -sfn {outside}/secret.txt {work}/swap; ln -sfn {work}/ok.txt {work}/swap; done ) >/dev/null 2>&1 &\n\
         for i in $(seq 1 300); do cat {work}/swap 2>/dev/null; done; wait"
    );
    let racer = bash(s.as_ref(), &swapper);
    let reader = async {
        let mut leaked = Vec::new();
        for _ in 0..200 {
            let outcome = s
                .call(
                    ToolRequest::ReadFile(ReadFile {
                        path: w.work().join("swap").display().to_string(),
                        offset: None,
                        limit: None,
                    }),
                    None,
                    &CancellationToken::new(),
                )
                .await;
            if let Ok(ToolResult::ReadFile(r)) = outcome.result
                && r.content.contains("OUTSIDE-SECRET")
            {
                leaked.push(r.content);
            }
        }
        leaked
    };
    let (bash_result, leaked) = tokio::join!(racer, reader);
    assert!(
        !stdout(&bash_result).contains("OUTSIDE-SECRET"),
        "bash read the secret through the swap"
    );
    assert!(
        stdout(&bash_result).contains("harmless"),
        "the race did not run: {}",
        stderr(&bash_result)
    );
    assert!(leaked.is_empty(), "read_file leaked: {leaked:?}");
    s.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn proc_gives_no_way_out() {
    let w = world();
    let s = w.start().await;
    let s = s.as_ref();
    let host_pid = std::process::id();
    let out = refused(s, "host environ", &format!("cat /proc/{host_pid}/environ")).await;
    assert!(!out.contains("CARGO"), "{out}");
    refused(
        s,
        "pid 1 root",
        "ls /proc/1/root/root/ && cat /proc/1/root/etc/shadow",
    )
    .await;
    refused(s, "kill the host", &format!("kill -0 {host_pid}")).await;
    // Kernel knobs: read-only /proc/sys (bubblewrap) and no Landlock write right on /proc,
    // even where the sandbox's processes are host uid 0 (Paddock as root).
    refused(s, "write a sysctl", "echo 3 > /proc/sys/vm/drop_caches").await;
    refused(s, "sysrq", "echo h > /proc/sysrq-trigger").await;
    refused(
        s,
        "core pattern",
        "echo '|/tmp/x' > /proc/sys/kernel/core_pattern",
    )
    .await;
    refused(s, "kernel log", "dmesg").await;
    let out = refused(s, "sysfs", "ls /sys/kernel").await;
    assert!(out.contains("No such file"), "{out}");
    let r = bash(s, "ls /proc | grep -E '^[0-9]+$' | wc -l").await;
    let visible: usize = stdout(&r).trim().parse().unwrap();
    assert!(
        visible < 20,
        "{visible} processes visible: not a private pid namespace"
    );
    s.close().await.unwrap();
}

/// A python3 snippet calling one system call through libc; prints `rc <n> errno <e>`.
fn syscall_script(nr: i64, args: &str) -> String {
    format!(
        "python3 - <<'PY'\nimport ctypes, os, sys\nlibc = ctypes.CDLL(None, use_errno=True)\n\
         rc = libc.syscall({nr}{args})\nerr = ctypes.get_errno()\nprint('rc', rc, 'errno', err, os.strerror(err))\n\
         sys.exit(0 if rc == -1 else 3)\nPY"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_kernel_surface_is_filtered() {
    let w = world();
    let s = w.start().await;
    let s = s.as_ref();
    // Each of these must come back with rc -1 (python exits 0 then) and a refusing errno.
    let calls: &[(&str, i64, &str, &str)] = &[
        (
            "ptrace attach to the runner's parent",
            libc::SYS_ptrace,
            ", 16, os.getppid(), 0, 0",
            "Operation not permitted",
        ),
        (
            "ptrace attach to pid 1",
            libc::SYS_ptrace,
            ", 16, 1, 0, 0",
            "Operation not permitted",
        ),
        (
            "process_vm_readv",
            libc::SYS_process_vm_readv,
            ", 1, 0, 0, 0, 0, 0",
            "Operation not permitted",
        ),
        (
            "mount",
            libc::SYS_mount,
            ", b'none', b'/tmp', b'tmpfs', 0, 0",
            "Operation not permitted",
        ),
        (
            "umount2",
            libc::SYS_umount2,
            ", b'/proc', 2",
            "Operation not permitted",
        ),
        (
            "pivot_root",
            libc::SYS_pivot_root,
            ", b'/tmp', b'/tmp'",
            "Operation not permitted",
        ),
        (
            "open_tree",
            libc::SYS_open_tree,
            ", -100, b'/usr', 1",
            "Operation not permitted",
        ),
        (
            "fsopen",
            libc::SYS_fsopen,
            ", b'tmpfs', 0",
            "Operation not permitted",
        ),
        (
            "unshare user",
            libc::SYS_unshare,
            ", 0x10000000",
            "Operation not permitted",
        ),
        (
            "unshare net",
            libc::SYS_unshare,
            ", 0x40000000",
            "Operation not permitted",
        ),
        (
            "clone with CLONE_NEWUSER",
            libc::SYS_clone,
            ", 0x10000000 | 17, 0, 0, 0, 0",
            "Operation not permitted",
        ),
        (
            "clone3",
            libc::SYS_clone3,
            ", 0, 0",
            "Function not implemented",
        ),
        (
            "setns",
            libc::SYS_setns,
            ", 0, 0",
            "Operation not permitted",
        ),
        (
            "add_key",
            libc::SYS_add_key,
            ", b'user', b'x', b'y', 1, -2",
            "Operation not permitted",
        ),
        (
            "keyctl",
            libc::SYS_keyctl,
            ", 0, -3, 0, 0, 0",
            "Operation not permitted",
        ),
        (
            "request_key",
            libc::SYS_request_key,
            ", b'user', b'x', 0, 0",
            "Operation not permitted",
        ),
        ("bpf", libc::SYS_bpf, ", 0, 0, 0", "Operation not permitted"),
        (
            "perf_event_open",
            libc::SYS_perf_event_open,
            ", 0, 0, -1, -1, 0",
            "Operation not permitted",
        ),
        (
            "io_uring_setup",
            libc::SYS_io_uring_setup,
            ", 8, 0",
            "Operation not permitted",
        ),
        (
            "userfaultfd",
            libc::SYS_userfaultfd,
            ", 0",
            "Operation not permitted",
        ),
        (
            "chroot",
            libc::SYS_chroot,
            ", b'/tmp'",
            "Operation not permitted",
        ),
        (
            "setuid root (0 is not mapped)",
            libc::SYS_setuid,
            ", 0",
            "Invalid argument",
        ),
        (
            "x32 socket",
            0x4000_0000 + libc::SYS_socket,
            ", 2, 3, 1",
            "Operation not permitted",
        ),
    ];
    for (name, nr, args, errno) in calls {
        let r = bash(s, &syscall_script(*nr, args)).await;
        let out = format!("{}{}", stdout(&r), stderr(&r));
        assert_eq!(
            r.exit_code,
            Some(0),
            "{name}: the call was not refused: {out}"
        );
        assert!(out.contains(errno), "{name}: expected {errno}: {out}");
    }
    for command in [
        "unshare -U true",
        "unshare -r true",
        "unshare -m true",
        "mount -t tmpfs none /tmp",
    ] {
        refused(s, command, command).await;
    }
    let r = bash(
        s,
        "python3 -c 'import fcntl,termios; fcntl.ioctl(0, termios.TIOCSTI, b\"x\")'",
    )
    .await;
    assert!(
        stderr(&r).contains("Operation not permitted")
            || stderr(&r).contains("Inappropriate ioctl"),
        "TIOCSTI: {}",
        stderr(&r)
    );
    s.close().await.unwrap();
}
