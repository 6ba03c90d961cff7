//! The attack list against the path guard: every case must be refused with the right code,
//! and nothing outside the granted folders (or inside the read-only one) may change.

use std::fs;
use std::os::unix::fs::symlink;

use tool_protocol::{
    Data, Delete, Download, EditFile, ErrorCode, Glob, Grep, ListDirectory, ReadBytes, ReadFile,
    RunBash, Stat, ToolRequest, ToolResult, Upload, WriteFile,
};

use super::harness::{Fixture, Runner, SECRET};

fn read(path: &str) -> ReadFile {
    ReadFile {
        path: path.into(),
        offset: None,
        limit: None,
    }
}

fn write(path: &str) -> WriteFile {
    WriteFile {
        path: path.into(),
        content: Data::from("pwned\n"),
        create_parents: None,
    }
}

fn grep(path: &str) -> Grep {
    Grep {
        pattern: "SECRET".into(),
        path: Some(path.into()),
        include: None,
        exclude: None,
        case_insensitive: None,
        context: None,
        max_matches: None,
    }
}

/// Sets up the traps: symlinks to outside, to /etc, to /proc/self/root, into the read-only
/// root, chains, a symlinked parent folder and a hard link.
fn armed() -> Fixture {
    let fx = Fixture::new();
    let w = &fx.work;
    symlink(fx.outside.join("secret.txt"), w.join("secret_link")).unwrap();
    symlink(&fx.outside, w.join("out_dir")).unwrap();
    symlink("/etc", w.join("etc_link")).unwrap();
    symlink("/proc/self/root", w.join("proc_root")).unwrap();
    symlink(&fx.reference, w.join("ro_dir")).unwrap();
    symlink(fx.reference.join("guide.md"), w.join("ro_file")).unwrap();
    symlink("hop2", w.join("hop1")).unwrap();
    symlink("sub/../../outside", w.join("hop2")).unwrap();
    fs::hard_link(fx.outside.join("secret.txt"), w.join("hard")).unwrap();
    fx
}

/// Runs `request`, asserts it is refused with `code`, and that nothing outside or in the
/// read-only root changed.
fn assert_refused(
    fx: &Fixture,
    runner: &Runner,
    request: impl Into<ToolRequest>,
    code: ErrorCode,
) -> String {
    let outside = fx.outside_snapshot();
    let reference = fx.reference_snapshot();
    let message = runner.refused(request, code);
    assert_eq!(fx.outside_snapshot(), outside, "outside changed");
    assert_eq!(
        fx.reference_snapshot(),
        reference,
        "the read-only root changed"
    );
    assert!(
        !message.contains(SECRET.trim()),
        "the secret leaked: {message}"
    );
    message
}

#[test]
fn dot_dot_and_absolute_escapes() {
    let fx = armed();
    let r = fx.runner();
    let secret = fx.outside.join("secret.txt").display().to_string();
    for path in [
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        "./sub/./../../../../../../etc/passwd",
        &secret,
        "/etc/passwd",
        "/proc/self/root/etc/passwd",
        "/proc/self/cwd/a.txt",
        "/",
    ] {
        let message = assert_refused(&fx, &r, read(path), ErrorCode::OutsideRoots);
        assert_eq!(message, format!("{path}: outside the session's folders"));
    }
}

#[test]
fn symlinks_that_lead_outside() {
    let fx = armed();
    let r = fx.runner();
    for path in [
        "secret_link",
        "out_dir/secret.txt",
        "etc_link/passwd",
        "proc_root/etc/passwd",
        "hop1/secret.txt",
        "sub/../out_dir/secret.txt",
    ] {
        let message = assert_refused(&fx, &r, read(path), ErrorCode::OutsideRoots);
        assert!(
            message.contains("a symbolic link leads to"),
            "{path}: {message}"
        );
    }
    // The links themselves live inside and may be looked at.
    assert!(matches!(
        r.ok(Stat {
            path: "secret_link".into()
        }),
        ToolResult::Stat(_)
    ));
}

#[test]
fn writes_through_symlinks_and_symlinked_parents() {
    let fx = armed();
    let r = fx.runner();
    assert_refused(&fx, &r, write("secret_link"), ErrorCode::OutsideRoots);
    assert_refused(&fx, &r, write("out_dir/new.txt"), ErrorCode::OutsideRoots);
    assert_refused(
        &fx,
        &r,
        write("out_dir/deep/er/new.txt"),
        ErrorCode::OutsideRoots,
    );
    assert_refused(&fx, &r, write("hop1/new.txt"), ErrorCode::OutsideRoots);
    assert_refused(
        &fx,
        &r,
        EditFile {
            path: "secret_link".into(),
            old_string: "TOP".into(),
            new_string: "BOTTOM".into(),
            replace_all: None,
        },
        ErrorCode::OutsideRoots,
    );
}

#[test]
fn writes_into_the_read_only_root_directly_or_through_a_read_write_symlink() {
    let fx = armed();
    let r = fx.runner();
    let guide = fx.reference.join("guide.md").display().to_string();
    assert_refused(&fx, &r, write(&guide), ErrorCode::ReadOnly);
    assert_refused(&fx, &r, write("ro_file"), ErrorCode::ReadOnly);
    assert_refused(&fx, &r, write("ro_dir/new.txt"), ErrorCode::ReadOnly);
    assert_refused(
        &fx,
        &r,
        write("ro_dir/made/up/new.txt"),
        ErrorCode::ReadOnly,
    );
    assert_refused(
        &fx,
        &r,
        EditFile {
            path: "ro_file".into(),
            old_string: "Guide".into(),
            new_string: "Owned".into(),
            replace_all: None,
        },
        ErrorCode::ReadOnly,
    );
    assert_refused(
        &fx,
        &r,
        Delete {
            path: "ro_dir/guide.md".into(),
            recursive: None,
        },
        ErrorCode::ReadOnly,
    );
    assert_refused(
        &fx,
        &r,
        Upload {
            path: "ro_dir/up.bin".into(),
            transfer: "t".into(),
            offset: 0,
            data: Data::from("x"),
            last: true,
            size: Some(1),
            checksum: Some(tool_protocol::checksum::checksum(b"x")),
        },
        ErrorCode::ReadOnly,
    );
}

#[test]
fn hard_links_are_never_written() {
    let fx = armed();
    let r = fx.runner();
    let message = assert_refused(&fx, &r, write("hard"), ErrorCode::PermissionDenied);
    assert!(message.contains("has 2 hard links"), "{message}");
    assert_refused(
        &fx,
        &r,
        EditFile {
            path: "hard".into(),
            old_string: "TOP".into(),
            new_string: "BOTTOM".into(),
            replace_all: None,
        },
        ErrorCode::PermissionDenied,
    );
    assert_refused(
        &fx,
        &r,
        Upload {
            path: "hard".into(),
            transfer: "h".into(),
            offset: 0,
            data: Data::from("x"),
            last: true,
            size: Some(1),
            checksum: Some(tool_protocol::checksum::checksum(b"x")),
        },
        ErrorCode::PermissionDenied,
    );
}

#[test]
fn malformed_paths() {
    let fx = armed();
    let r = fx.runner();
    let nul = assert_refused(&fx, &r, read("a.txt\0/etc/passwd"), ErrorCode::BadArgs);
    assert_eq!(nul, "`args.path`: the path contains a NUL byte");
    let long = "a/".repeat(3000);
    assert_refused(&fx, &r, read(&long), ErrorCode::BadArgs);
    assert_refused(&fx, &r, write(&"n".repeat(300)), ErrorCode::BadArgs);
    assert_refused(&fx, &r, read(""), ErrorCode::BadArgs);
}

#[test]
fn deleting_roots_or_escaping_by_delete() {
    let fx = armed();
    let r = fx.runner();
    for path in [".", "sub/..", fx.work.to_str().unwrap()] {
        assert_refused(
            &fx,
            &r,
            Delete {
                path: path.into(),
                recursive: Some(true),
            },
            ErrorCode::PermissionDenied,
        );
    }
    assert_refused(
        &fx,
        &r,
        Delete {
            path: "out_dir/secret.txt".into(),
            recursive: None,
        },
        ErrorCode::OutsideRoots,
    );
    // Deleting a folder holding links to outside removes the links, never their targets.
    fs::create_dir(fx.work.join("nest")).unwrap();
    symlink(&fx.outside, fx.work.join("nest/out")).unwrap();
    let before = fx.outside_snapshot();
    r.ok(Delete {
        path: "nest".into(),
        recursive: Some(true),
    });
    assert_eq!(fx.outside_snapshot(), before);
}

#[test]
fn other_tools_cannot_reach_outside_either() {
    let fx = armed();
    let r = fx.runner();
    let outside = fx.outside.display().to_string();
    assert_refused(
        &fx,
        &r,
        ListDirectory {
            path: Some("out_dir".into()),
            depth: None,
            limit: None,
        },
        ErrorCode::OutsideRoots,
    );
    assert_refused(
        &fx,
        &r,
        ReadBytes {
            path: "secret_link".into(),
            offset: None,
            length: None,
        },
        ErrorCode::OutsideRoots,
    );
    assert_refused(
        &fx,
        &r,
        Download {
            path: "hop1/secret.txt".into(),
            chunk_bytes: None,
        },
        ErrorCode::OutsideRoots,
    );
    assert_refused(
        &fx,
        &r,
        Stat {
            path: outside.clone(),
        },
        ErrorCode::OutsideRoots,
    );
    assert_refused(
        &fx,
        &r,
        RunBash {
            command: "cat secret.txt".into(),
            cwd: Some("out_dir".into()),
            env: None,
            stdin: None,
            timeout_ms: None,
            max_output_bytes: None,
        },
        ErrorCode::OutsideRoots,
    );
    assert_refused(&fx, &r, grep(&outside), ErrorCode::OutsideRoots);
    assert_refused(&fx, &r, grep("out_dir"), ErrorCode::OutsideRoots);
    assert_refused(
        &fx,
        &r,
        Glob {
            pattern: "*.txt".into(),
            path: Some("etc_link".into()),
            limit: None,
        },
        ErrorCode::OutsideRoots,
    );
}

#[test]
fn search_never_follows_links_out_and_refuses_dot_dot_patterns() {
    let fx = armed();
    let r = fx.runner();
    assert_refused(
        &fx,
        &r,
        Glob {
            pattern: "../outside/*".into(),
            path: None,
            limit: None,
        },
        ErrorCode::InvalidPattern,
    );
    let ToolResult::Grep(found) = r.ok(grep(".")) else {
        panic!()
    };
    assert!(
        found
            .matches
            .iter()
            .all(|m| !m.line.contains("SECRET") || m.path == fx.work_path("hard")),
        "grep followed a link out: {found:?}"
    );
    let ToolResult::Glob(globbed) = r.ok(Glob {
        pattern: "**/secret.txt".into(),
        path: None,
        limit: None,
    }) else {
        panic!()
    };
    assert!(globbed.matches.is_empty(), "{globbed:?}");
}

#[test]
fn special_files_do_not_hang_reads() {
    let fx = armed();
    let status = std::process::Command::new("mkfifo")
        .arg(fx.work.join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let r = fx.runner();
    let message = assert_refused(&fx, &r, read("pipe"), ErrorCode::Io);
    assert!(message.contains("a named pipe"), "{message}");
    assert_refused(&fx, &r, write("pipe"), ErrorCode::Io);
}

#[test]
fn symlink_loops_end() {
    let fx = armed();
    symlink("loop2", fx.work.join("loop1")).unwrap();
    symlink("loop1", fx.work.join("loop2")).unwrap();
    let r = fx.runner();
    let message = assert_refused(&fx, &r, read("loop1"), ErrorCode::Io);
    assert!(
        message.contains("too many levels of symbolic links"),
        "{message}"
    );
}
