//! The local wall's canary suite on recorded observations: its probes, and the judge's verdict and words for
//! a sound wall, a wall with holes, and a script that reported nothing (the script's framing is
//! tested with the shared pieces in `crate::canaries`).

#![allow(clippy::unwrap_used, reason = "test code")]

use super::*;
use crate::canaries::tests::{request, stdout, verdicts};

const HOME: &str = "/home/u";
const SENTINEL: &str = "/var/lib/paddock/wall-1/sentinel";
const SECRET: &str = "paddock-sentinel-0123456789abcdef";

fn two_folders() -> SandboxRequest {
    request(&[
        ("/home/u/proj", FolderAccess::ReadWrite),
        ("/srv/data", FolderAccess::ReadOnly),
    ])
}

/// The per-process limits of a wall without a cgroup, as the launcher was told to set them.
const RLIMITS: &[ResourceRlimit] = &[
    ResourceRlimit {
        resource: LimitedResource::OpenFiles,
        soft: 1024,
        hard: None,
    },
    ResourceRlimit {
        resource: LimitedResource::Data,
        soft: 1 << 30,
        hard: Some(1 << 30),
    },
    ResourceRlimit {
        resource: LimitedResource::Processes,
        soft: 256,
        hard: Some(256),
    },
];

fn in_force() -> &'static ResourceLimits {
    Box::leak(Box::new(ResourceLimits {
        mechanism: protocol::LimitMechanism::Rlimit,
        processes: Some(256),
        memory_bytes: Some(1 << 30),
        swap_bytes: None,
        cpu_millis: None,
        detail: "no cgroup here".into(),
    }))
}

fn input(request: &SandboxRequest) -> CanaryInput<'_> {
    CanaryInput {
        request,
        user_home: Path::new(HOME),
        sentinel: Path::new(SENTINEL),
        sentinel_secret: SECRET,
        config_parts: Vec::new(),
        limits: LimitsCheck {
            in_force: in_force(),
            in_cgroup: Ok(()),
            rlimits: RLIMITS,
        },
    }
}

/// `/proc/self/limits` lines as the probe prints them.
const LIMITS_SEEN: &str = "Max processes             256                  256                  processes\n\
                           Max data size             1073741824           1073741824           bytes\n\
                           Max open files            1024                 20000                files";

fn judged(request: &SandboxRequest, observations: &[(&str, i64, &str)]) -> Vec<String> {
    verdicts(&judge(&input(request), &parse(&stdout(observations))))
}

const DENIED: &str = "bash: line 1: Permission denied";
const READ_ONLY: &str = "bash: line 1: Read-only file system";

#[test]
fn probes_cover_system_folders_grant_parents_and_read_only_grants() {
    let request = two_folders();
    let names: Vec<String> = probes(&input(&request))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        names,
        [
            "home",
            "sentinel",
            "write_root",
            "write_usr",
            "write_etc",
            "landlock",
            "proxy",
            "status",
            "limits",
            "netdev",
            "write_parent_0",
            "write_parent_1",
            "write_ro_0",
            "socket_folder",
        ]
    );
    // Without a read-only grant the read-only runner folder stands in.
    let request = request_rw_only();
    let probes = probes(&input(&request));
    let (_, fallback) = probes.iter().find(|(n, _)| n == "write_ro_0").unwrap();
    assert!(
        fallback.contains(&format!("{BIN_DIR}/.paddock-canary")),
        "{fallback}"
    );
}

fn request_rw_only() -> SandboxRequest {
    request(&[("/home/u/proj", FolderAccess::ReadWrite)])
}

fn sound_wall() -> Vec<(&'static str, i64, &'static str)> {
    vec![
        ("home", 0, "proj"),
        ("sentinel", 1, DENIED),
        ("write_root", 1, READ_ONLY),
        ("write_usr", 1, READ_ONLY),
        ("write_etc", 1, READ_ONLY),
        ("write_parent_0", 1, DENIED),
        ("write_parent_1", 1, DENIED),
        ("write_ro_0", 1, READ_ONLY),
        ("landlock", 1, DENIED),
        ("proxy", 0, "HTTP/1.1 403 Forbidden"),
        (
            "status",
            0,
            "NoNewPrivs:\t1\nSeccomp:\t2\nCapEff:\t0000000000000000\n\
             CapPrm:\t0000000000000000\nCapAmb:\t0000000000000000",
        ),
        ("limits", 0, LIMITS_SEEN),
        ("netdev", 0, "lo"),
        ("socket_folder", 1, DENIED),
    ]
}

#[test]
fn a_sound_wall_passes_every_canary_with_its_reasons() {
    assert_eq!(
        judged(&two_folders(), &sound_wall()),
        [
            "home_absent pass only granted folders exist under /home/u".to_owned(),
            format!("outside_read_refused pass cat {SENTINEL}: exit 1 ({DENIED})"),
            "outside_write_refused pass 5 writes outside the grants all refused".to_owned(),
            "read_only_grant_refuses_write pass 1 read-only folders refused a write".to_owned(),
            format!(
                "landlock_enforced pass write into a mounted folder without a Landlock rule: \
                 exit 1 ({DENIED})"
            ),
            format!(
                "proxy_refuses_unlisted_host pass CONNECT {CANARY_HOST}:{CANARY_PORT} answered: \
                 HTTP/1.1 403 Forbidden"
            ),
            "network_loopback_only pass interfaces: lo".to_owned(),
            "no_new_privs pass NoNewPrivs: 1".to_owned(),
            "seccomp_filter pass Seccomp: 2".to_owned(),
            "no_capabilities pass no capability held".to_owned(),
            "resource_limits pass rlimit: 256 processes, 1.0 GiB memory, swap unlimited, \
             CPU unlimited (no cgroup here)"
                .to_owned(),
            format!(
                "runner_socket_fixed pass a command making a file in the runner's socket \
                 folder: exit 1 ({DENIED})"
            ),
        ]
    );
}

#[test]
fn every_hole_fails_its_canary_and_says_what_was_seen() {
    let holes = vec![
        ("home", 0, "proj\n.ssh\n.aws"),
        ("sentinel", 0, SECRET),
        ("write_root", 1, READ_ONLY),
        ("write_usr", 0, ""),
        ("write_etc", 1, READ_ONLY),
        ("write_parent_0", 0, ""),
        ("write_parent_1", 1, DENIED),
        ("write_ro_0", 0, ""),
        ("landlock", 0, ""),
        ("proxy", 0, "HTTP/1.1 200 Connection established"),
        (
            "status",
            0,
            "NoNewPrivs:\t0\nSeccomp:\t0\nCapEff:\t00000000a80425fb\n\
             CapPrm:\t00000000a80425fb\nCapAmb:\t0000000000000000",
        ),
        (
            "limits",
            0,
            "Max processes             unlimited            unlimited            processes\n\
             Max open files            20000                20000                files",
        ),
        ("netdev", 0, "lo\neth0"),
        ("socket_folder", 0, "created"),
    ];
    assert_eq!(
        judged(&two_folders(), &holes),
        [
            "home_absent FAIL /home/u shows .ssh, .aws inside".to_owned(),
            format!("outside_read_refused FAIL cat {SENTINEL}: exit 0 (CONTENT LEAKED)"),
            "outside_write_refused FAIL writes succeeded: write_parent_0, write_usr".to_owned(),
            "read_only_grant_refuses_write FAIL writes succeeded: write_ro_0".to_owned(),
            "landlock_enforced FAIL write into a mounted folder without a Landlock rule: exit 0 ()"
                .to_owned(),
            format!(
                "proxy_refuses_unlisted_host FAIL CONNECT {CANARY_HOST}:{CANARY_PORT} answered: \
                 HTTP/1.1 200 Connection established"
            ),
            "network_loopback_only FAIL interfaces: lo, eth0".to_owned(),
            "no_new_privs FAIL NoNewPrivs: 0".to_owned(),
            "seccomp_filter FAIL Seccomp: 0".to_owned(),
            "no_capabilities FAIL held: CapEff=00000000a80425fb, CapPrm=00000000a80425fb"
                .to_owned(),
            "resource_limits FAIL Max open files is 20000 inside, not 1024; Max data size is \
             missing inside, not 1073741824; Max processes is 18446744073709551615 inside, not 256"
                .to_owned(),
            "runner_socket_fixed FAIL a command making a file in the runner's socket folder: \
             exit 0 (created)"
                .to_owned(),
        ]
    );
}

#[test]
fn a_script_that_reported_nothing_fails_every_canary() {
    let silent = "the probe did not report";
    assert_eq!(
        judged(&two_folders(), &[]),
        [
            format!("home_absent FAIL {silent}"),
            format!("outside_read_refused FAIL {silent}"),
            "outside_write_refused FAIL 0 writes outside the grants all refused".to_owned(),
            "read_only_grant_refuses_write FAIL 0 read-only folders refused a write".to_owned(),
            format!("landlock_enforced FAIL {silent}"),
            format!("proxy_refuses_unlisted_host FAIL {silent}"),
            format!("network_loopback_only FAIL {silent}"),
            "no_new_privs FAIL NoNewPrivs: ".to_owned(),
            "seccomp_filter FAIL Seccomp: ".to_owned(),
            "no_capabilities FAIL no capability held".to_owned(),
            format!("resource_limits FAIL {silent}"),
            format!("runner_socket_fixed FAIL {silent}"),
        ]
    );
}

#[test]
fn a_wall_process_outside_its_cgroup_fails_the_limits_canary() {
    let request = two_folders();
    let input = CanaryInput {
        limits: LimitsCheck {
            in_force: in_force(),
            in_cgroup: Err("the wall's process 42 is not in /sys/fs/cgroup/pids/w".into()),
            rlimits: RLIMITS,
        },
        ..input(&request)
    };
    let results = verdicts(&judge(&input, &parse(&stdout(&sound_wall()))));
    assert!(
        results.contains(
            &"resource_limits FAIL the wall's process 42 is not in /sys/fs/cgroup/pids/w"
                .to_owned()
        ),
        "{results:?}"
    );
}

#[test]
fn fewer_than_the_three_system_folder_writes_is_not_proof() {
    let mut partial = sound_wall();
    partial.retain(|(name, _, _)| !name.starts_with("write_") || name.starts_with("write_ro_"));
    partial.push(("write_root", 1, READ_ONLY));
    partial.push(("write_usr", 1, READ_ONLY));
    let results = judged(&request_rw_only(), &partial);
    assert!(
        results.contains(
            &"outside_write_refused FAIL 2 writes outside the grants all refused".to_owned()
        ),
        "{results:?}"
    );
}

#[test]
fn a_missing_home_passes_and_a_granted_home_is_said_so() {
    let mut absent = sound_wall();
    absent[0] = ("home", 1, "absent");
    assert_eq!(
        judged(&two_folders(), &absent)[0],
        "home_absent pass /home/u does not exist inside (absent)"
    );
    let granted = request(&[("/home/u", FolderAccess::ReadWrite)]);
    let mut listed = sound_wall();
    listed[0] = ("home", 0, "proj\n.ssh");
    assert_eq!(
        judged(&granted, &listed)[0],
        "home_absent pass /home/u is granted to this session; nothing else of the home is mounted"
    );
}

#[test]
fn the_private_home_below_the_users_home_is_allowed_there() {
    // A machine whose user home is `/home`: the wall's private home `/home/paddock` shows.
    let request = two_folders();
    let input = CanaryInput {
        user_home: Path::new("/home"),
        ..input(&request)
    };
    let mut listed = sound_wall();
    listed[0] = ("home", 0, "u\npaddock");
    let results = verdicts(&judge(&input, &parse(&stdout(&listed))));
    assert_eq!(
        results[0],
        "home_absent pass only granted folders exist under /home"
    );
}
