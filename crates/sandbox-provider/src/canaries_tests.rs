//! The shared canary pieces on their own; each provider's suite is tested in its module.

#![allow(clippy::unwrap_used, reason = "test code")]

use protocol::{FolderGrant, NetworkProfileName};

use super::*;

fn observations(list: &[(&str, i64, &str)]) -> Observations {
    list.iter()
        .map(|(name, code, output)| {
            (
                (*name).to_owned(),
                Observation {
                    code: *code,
                    output: (*output).to_owned(),
                },
            )
        })
        .collect()
}

/// A canary script's stdout for these observations, in the script's own framing.
pub(crate) fn stdout(observations: &[(&str, i64, &str)]) -> String {
    observations
        .iter()
        .map(|(name, code, output)| format!("OBS {name}\n{output}\n\n{END} {code}\n"))
        .collect()
}

/// One line a canary: `name pass|FAIL detail`.
pub(crate) fn verdicts(results: &[CanaryResult]) -> Vec<String> {
    results
        .iter()
        .map(|c| {
            let verdict = if c.passed { "pass" } else { "FAIL" };
            format!("{} {verdict} {}", c.name, c.detail)
        })
        .collect()
}

#[test]
fn the_script_frames_each_probe_for_the_parser() {
    let probes = vec![
        (
            "two_lines".to_owned(),
            "echo one; echo; echo two".to_owned(),
        ),
        ("fails".to_owned(), "echo nope >&2; false".to_owned()),
        ("exits".to_owned(), "echo bye >&2; exit 3".to_owned()),
        ("quiet".to_owned(), "true".to_owned()),
    ];
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(script(&probes))
        .output()
        .unwrap();
    let observed = parse(&String::from_utf8_lossy(&out.stdout));
    let seen: Vec<(&str, i64, &str)> = observed
        .iter()
        .map(|(name, o)| (name.as_str(), o.code, o.output.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("exits", 3, "bye"),
            ("fails", 1, "nope"),
            ("quiet", 0, ""),
            ("two_lines", 0, "one|two")
        ]
    );
}

#[test]
fn a_probe_without_its_end_line_is_not_an_observation() {
    let cut = format!("{}OBS sentinel\nsecret\n", stdout(&[("home", 1, "absent")]));
    let observed = parse(&cut);
    assert_eq!(observed.keys().collect::<Vec<_>>(), ["home"]);
}

/// A session asking for `folders` (the first is the working folder).
pub(crate) fn request(folders: &[(&str, FolderAccess)]) -> SandboxRequest {
    SandboxRequest {
        session_id: "s1".into(),
        folders: folders
            .iter()
            .map(|(path, access)| FolderGrant {
                path: (*path).to_owned(),
                access: *access,
            })
            .collect(),
        cwd: folders[0].0.to_owned(),
        network_profile: NetworkProfileName::Strict,
        extra_hosts: Vec::new(),
        credentials: Vec::new(),
    }
}

#[test]
fn quoting_survives_a_real_shell() {
    for text in [
        "plain",
        "two words",
        "it's",
        "$HOME `id` $(id)",
        "a\\b\nc",
        "'",
    ] {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("printf %s {}", sh_quote(text)))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), text);
    }
}

#[test]
fn every_read_only_grant_gets_a_write_probe_and_none_falls_back() {
    let request_with_two = request(&[
        ("/srv/a", FolderAccess::ReadOnly),
        ("/srv/rw", FolderAccess::ReadWrite),
        ("/srv/it's", FolderAccess::ReadOnly),
    ]);
    assert_eq!(
        read_only_write_probes(&request_with_two, "/unused"),
        [
            (
                "write_ro_0".to_owned(),
                ": > '/srv/a/.paddock-canary'".to_owned()
            ),
            (
                "write_ro_1".to_owned(),
                ": > '/srv/it'\\''s/.paddock-canary'".to_owned()
            ),
        ]
    );
    let none = request(&[("/srv/rw", FolderAccess::ReadWrite)]);
    assert_eq!(
        read_only_write_probes(&none, "/run/bin"),
        [(
            "write_ro_0".to_owned(),
            ": > '/run/bin/.paddock-canary'".to_owned()
        )]
    );
}

#[test]
fn only_paths_below_the_home_allow_an_entry() {
    let home = Path::new("/home/u");
    let paths = [
        "/home/u/proj/sub",
        "/home/u",
        "/home/other",
        "/srv",
        "/home/u/.cfg",
    ];
    assert_eq!(
        entries_below(home, paths.iter().map(Path::new)),
        ["proj", ".cfg"]
    );
}

#[test]
fn the_proxy_canary_wants_a_403_status_line_from_a_probe_that_ran() {
    let verdict = |code: i64, line: &str| {
        proxy_refuses_unlisted_host(&observations(&[(probe::PROXY, code, line)])).passed
    };
    assert!(verdict(0, "HTTP/1.1 403 Forbidden"));
    assert!(verdict(0, "HTTP/1.0 403"));
    assert!(!verdict(0, "HTTP/1.1 200 Connection established"));
    assert!(!verdict(0, "HTTP/1.1 200 OK (not 403 )"));
    assert!(!verdict(0, "HTTP/1.1 4030 Odd"));
    assert!(!verdict(1, "HTTP/1.1 403 Forbidden"));
    assert!(!proxy_refuses_unlisted_host(&Observations::new()).passed);
}

#[test]
fn read_only_writes_need_one_report_and_no_success() {
    let refused = observations(&[("write_ro_0", 1, "Read-only file system")]);
    assert!(read_only_grant_refuses_write(&refused).passed);
    // A system-folder write is not a read-only grant's.
    let other = observations(&[("write_root", 1, "Read-only file system")]);
    assert!(!read_only_grant_refuses_write(&other).passed);
    let written = observations(&[("write_ro_0", 1, ""), ("write_ro_1", 0, "")]);
    let result = read_only_grant_refuses_write(&written);
    assert!(!result.passed);
    assert_eq!(result.detail, "writes succeeded: write_ro_1");
}

#[test]
fn status_fields_are_read_by_name_and_a_missing_one_fails() {
    let status = ProcStatus::observed(&observations(&[(
        probe::STATUS,
        0,
        "NoNewPrivs:\t1|Seccomp:\t2|Seccomp_filters:\t1",
    )]));
    assert_eq!(status.field("Seccomp").as_deref(), Some("2"));
    assert!(no_new_privs(&status).passed && seccomp_filter(&status).passed);
    let silent = ProcStatus::observed(&Observations::new());
    let result = no_new_privs(&silent);
    assert!(!result.passed);
    assert_eq!(result.detail, "NoNewPrivs: ");
}
