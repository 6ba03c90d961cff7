//! The OpenShell canary suite on recorded observations: its probes, and the judge's verdict and words for
//! a sound sandbox, one with holes, and a script that reported nothing (the script's framing is
//! tested with the shared pieces in `crate::canaries`).

#![allow(clippy::unwrap_used, reason = "test code")]

use super::*;
use crate::canaries::tests::{request, stdout, verdicts};

const HOME: &str = "/home/u";
const SENTINEL: &str = "/var/lib/paddock/sentinel-1";
const SECRET: &str = "paddock-sentinel-0123456789abcdef";
const RUNNER_DIR: &str = "/opt/paddock runner";

fn two_folders() -> SandboxRequest {
    request(&[
        ("/home/u/proj", FolderAccess::ReadWrite),
        ("/srv/data", FolderAccess::ReadOnly),
    ])
}

fn input<'a>(request: &'a SandboxRequest, private_home: Option<&'a Path>) -> AttestInput<'a> {
    AttestInput {
        request,
        pins: &[],
        protected: &[],
        user_home: Path::new(HOME),
        sentinel: Path::new(SENTINEL),
        sentinel_secret: SECRET,
        runner_dir: RUNNER_DIR,
        private_home,
        config_hash: "sha256:00".into(),
    }
}

fn judged(input: &AttestInput<'_>, observations: &[(&str, i64, &str)]) -> Vec<String> {
    verdicts(&judge(input, &parse(&stdout(observations))))
}

const DENIED: &str = "cat: /var/lib/paddock/sentinel-1: Permission denied";
const READ_ONLY: &str = "bash: line 1: Read-only file system";

#[test]
fn probes_cover_system_folders_and_read_only_grants() {
    let both = two_folders();
    let names: Vec<String> = probes(&input(&both, None))
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
            "proxy",
            "status",
            "write_ro_0",
            "socket_folder",
        ]
    );
    // Without a read-only grant the read-only runner folder stands in, quoted.
    let rw_only = request(&[("/home/u/proj", FolderAccess::ReadWrite)]);
    let probes = probes(&input(&rw_only, None));
    let (_, fallback) = probes.iter().find(|(n, _)| n == "write_ro_0").unwrap();
    assert_eq!(fallback, ": > '/opt/paddock runner/.paddock-canary'");
}

fn sound_sandbox() -> Vec<(&'static str, i64, &'static str)> {
    vec![
        (
            "home",
            2,
            "ls: cannot access '/home/u': No such file or directory",
        ),
        ("sentinel", 1, DENIED),
        ("write_root", 1, READ_ONLY),
        ("write_usr", 1, READ_ONLY),
        ("write_etc", 1, READ_ONLY),
        ("proxy", 0, "HTTP/1.1 403 Forbidden"),
        ("status", 0, "NoNewPrivs:\t1\nSeccomp:\t2"),
        ("write_ro_0", 1, READ_ONLY),
        ("socket_folder", 1, SOCKET_DENIED),
    ]
}

const SOCKET_DENIED: &str = "bash: line 1: /run/paddock/.paddock-canary: Permission denied";

#[test]
fn a_sound_sandbox_passes_every_canary_with_its_reasons() {
    let request = two_folders();
    assert_eq!(
        judged(&input(&request, None), &sound_sandbox()),
        [
            "home_absent pass /home/u is not there \
             (ls: cannot access '/home/u': No such file or directory)"
                .to_owned(),
            format!("outside_read_refused pass cat {SENTINEL}: exit 1 ({DENIED})"),
            "outside_write_refused pass 3 writes outside the grants all refused".to_owned(),
            "read_only_grant_refuses_write pass 1 read-only folders refused a write".to_owned(),
            format!(
                "proxy_refuses_unlisted_host pass CONNECT {CANARY_HOST}:{CANARY_PORT} answered: \
                 HTTP/1.1 403 Forbidden"
            ),
            "no_new_privs pass NoNewPrivs: 1".to_owned(),
            "seccomp_filter pass Seccomp: 2".to_owned(),
            format!(
                "runner_socket_fixed pass a command making a file in the runner's socket \
                 folder: exit 1 ({SOCKET_DENIED})"
            ),
        ]
    );
}

#[test]
fn every_hole_fails_its_canary_and_says_what_was_seen() {
    let request = two_folders();
    let holes = vec![
        ("home", 0, "proj\n.ssh"),
        ("sentinel", 0, SECRET),
        ("write_root", 0, ""),
        ("write_usr", 1, READ_ONLY),
        ("write_etc", 0, ""),
        ("proxy", 2, "no HTTPS_PROXY"),
        ("status", 0, "NoNewPrivs:\t0\nSeccomp:\t0"),
        ("write_ro_0", 0, ""),
        ("socket_folder", 0, "created"),
    ];
    assert_eq!(
        judged(&input(&request, None), &holes),
        [
            "home_absent FAIL /home/u shows .ssh inside".to_owned(),
            format!("outside_read_refused FAIL cat {SENTINEL}: exit 0 (CONTENT LEAKED)"),
            "outside_write_refused FAIL writes succeeded: write_etc, write_root".to_owned(),
            "read_only_grant_refuses_write FAIL writes succeeded: write_ro_0".to_owned(),
            format!(
                "proxy_refuses_unlisted_host FAIL CONNECT {CANARY_HOST}:{CANARY_PORT} answered: \
                 no HTTPS_PROXY"
            ),
            "no_new_privs FAIL NoNewPrivs: 0".to_owned(),
            "seccomp_filter FAIL Seccomp: 0".to_owned(),
            "runner_socket_fixed FAIL a command making a file in the runner's socket folder: \
             exit 0 (created)"
                .to_owned(),
        ]
    );
}

#[test]
fn a_script_that_reported_nothing_fails_every_canary() {
    let request = two_folders();
    let silent = "the probe did not report";
    assert_eq!(
        judged(&input(&request, None), &[]),
        [
            format!("home_absent FAIL {silent}"),
            format!("outside_read_refused FAIL {silent}"),
            "outside_write_refused FAIL 0 writes outside the grants all refused".to_owned(),
            "read_only_grant_refuses_write FAIL 0 read-only folders refused a write".to_owned(),
            format!("proxy_refuses_unlisted_host FAIL {silent}"),
            "no_new_privs FAIL NoNewPrivs: ".to_owned(),
            "seccomp_filter FAIL Seccomp: ".to_owned(),
            format!("runner_socket_fixed FAIL {silent}"),
        ]
    );
}

#[test]
fn granted_folders_and_the_private_home_may_show_under_the_home() {
    let request = two_folders();
    let private = Path::new("/home/u/.local/state/paddock/homes/s1");
    let mut listed = sound_sandbox();
    listed[0] = ("home", 0, "proj\n.local");
    assert_eq!(
        judged(&input(&request, Some(private)), &listed)[0],
        "home_absent pass only granted folders exist under /home/u"
    );
    assert_eq!(
        judged(&input(&request, None), &listed)[0],
        "home_absent FAIL /home/u shows .local inside"
    );
}
