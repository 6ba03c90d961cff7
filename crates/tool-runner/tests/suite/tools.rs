//! Every file tool's success and refusal paths, through the real binary.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};

use tool_protocol::{
    Data, Delete, EditFile, ErrorCode, FileKind, ListDirectory, ReadBytes, ReadFile, RootMode,
    Stat, ToolResult, WriteFile,
};

use super::harness::Fixture;

fn read(path: &str) -> ReadFile {
    ReadFile {
        path: path.into(),
        offset: None,
        limit: None,
    }
}

fn write(path: &str, content: &str) -> WriteFile {
    WriteFile {
        path: path.into(),
        content: Data::from(content),
        create_parents: None,
    }
}

fn edit(path: &str, old: &str, new: &str, all: Option<bool>) -> EditFile {
    EditFile {
        path: path.into(),
        old_string: old.into(),
        new_string: new.into(),
        replace_all: all,
    }
}

#[test]
fn hello_names_the_roots_and_working_folder() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let hello = runner.hello();
    assert_eq!(hello.protocol, tool_protocol::PROTOCOL_VERSION);
    assert_eq!(hello.cwd, fx.work.display().to_string());
    let roots: Vec<_> = hello
        .roots
        .iter()
        .map(|r| (r.path.clone(), r.mode))
        .collect();
    assert_eq!(
        roots,
        vec![
            (fx.work.display().to_string(), RootMode::ReadWrite),
            (fx.reference.display().to_string(), RootMode::ReadOnly)
        ]
    );
    assert!(hello.build_id.starts_with("crc32c:"), "{}", hello.build_id);
}

#[test]
fn read_file_numbers_lines_and_pages() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let ToolResult::ReadFile(all) = runner.ok(read("a.txt")) else {
        panic!()
    };
    assert_eq!(all.content, "     1\talpha\n     2\tbeta\n     3\tgamma\n");
    assert_eq!(all.path, fx.work_path("a.txt"));
    assert_eq!((all.total_lines, all.size, all.truncated), (3, 17, false));
    let ToolResult::ReadFile(page) = runner.ok(ReadFile {
        path: "a.txt".into(),
        offset: Some(2),
        limit: Some(1),
    }) else {
        panic!()
    };
    assert_eq!(page.content, "     2\tbeta\n");
    assert!(page.truncated);
    // The read-only root reads fine.
    let guide = fx.reference.join("guide.md").display().to_string();
    assert!(matches!(runner.ok(read(&guide)), ToolResult::ReadFile(_)));
}

#[test]
fn read_file_refusals_name_the_problem() {
    let fx = Fixture::new();
    fs::write(fx.work.join("blob.bin"), [0u8, 159, 146, 150]).unwrap();
    let runner = fx.runner();
    let binary = runner.refused(read("blob.bin"), ErrorCode::BinaryFile);
    assert!(binary.contains("use read_bytes"), "{binary}");
    assert_eq!(
        runner.refused(read("missing.txt"), ErrorCode::NotFound),
        format!("{}: not found", fx.work_path("missing.txt"))
    );
    runner.refused(read("sub"), ErrorCode::IsADirectory);
    let zero = runner.refused(
        ReadFile {
            path: "a.txt".into(),
            offset: Some(0),
            limit: None,
        },
        ErrorCode::BadArgs,
    );
    assert_eq!(zero, "`args.offset`: lines are numbered from 1");
}

#[test]
fn read_bytes_returns_exact_ranges() {
    let fx = Fixture::new();
    let bytes: Vec<u8> = (0..=255).collect();
    fs::write(fx.work.join("all.bin"), &bytes).unwrap();
    let runner = fx.runner();
    let ToolResult::ReadBytes(range) = runner.ok(ReadBytes {
        path: "all.bin".into(),
        offset: Some(250),
        length: Some(100),
    }) else {
        panic!()
    };
    assert_eq!(range.data.as_bytes(), &bytes[250..]);
    assert_eq!((range.offset, range.size, range.eof), (250, 256, true));
    let too_long = runner.refused(
        ReadBytes {
            path: "all.bin".into(),
            offset: None,
            length: Some(5 * 1024 * 1024),
        },
        ErrorCode::BadArgs,
    );
    assert!(too_long.contains("4194304"), "{too_long}");
}

#[test]
fn write_file_creates_parents_replaces_atomically_and_keeps_the_mode() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let ToolResult::WriteFile(made) = runner.ok(write("deep/er/new.txt", "hi\n")) else {
        panic!()
    };
    assert!(made.created);
    assert_eq!(made.bytes_written, 3);
    assert_eq!(
        fs::read_to_string(fx.work.join("deep/er/new.txt")).unwrap(),
        "hi\n"
    );

    let script = fx.work.join("run.sh");
    fs::write(&script, "old").unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o751)).unwrap();
    let ToolResult::WriteFile(replaced) = runner.ok(write("run.sh", "#!/bin/sh\n")) else {
        panic!()
    };
    assert!(!replaced.created);
    assert_eq!(fs::read_to_string(&script).unwrap(), "#!/bin/sh\n");
    let mode = fs::metadata(&script).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o751);
    // No temporary file is left behind.
    let leftovers: Vec<_> = fs::read_dir(&fx.work)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".paddock-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn write_file_refusals() {
    let fx = Fixture::new();
    let runner = fx.runner();
    runner.refused(write("sub", "x"), ErrorCode::IsADirectory);
    runner.refused(
        WriteFile {
            path: "no/such/dir.txt".into(),
            content: Data::from("x"),
            create_parents: Some(false),
        },
        ErrorCode::NotFound,
    );
    assert!(!fx.work.join("no").exists());
    let guide = fx.reference.join("guide.md").display().to_string();
    assert_eq!(
        runner.refused(write(&guide, "x"), ErrorCode::ReadOnly),
        format!("{guide}: in a read-only folder")
    );
    runner.refused(write(".", "x"), ErrorCode::IsADirectory);
}

#[test]
fn edit_file_replaces_exact_strings() {
    let fx = Fixture::new();
    fs::write(fx.work.join("e.txt"), "foo bar foo baz foo\n").unwrap();
    fs::set_permissions(fx.work.join("e.txt"), fs::Permissions::from_mode(0o600)).unwrap();
    let runner = fx.runner();
    let many = runner.refused(edit("e.txt", "foo", "qux", None), ErrorCode::NotUnique);
    assert!(many.contains("occurs 3 times"), "{many}");
    runner.refused(edit("e.txt", "absent", "x", None), ErrorCode::NoMatch);
    runner.refused(edit("e.txt", "", "x", None), ErrorCode::BadArgs);
    runner.refused(edit("e.txt", "foo", "foo", None), ErrorCode::BadArgs);
    let ToolResult::EditFile(one) = runner.ok(edit("e.txt", "bar", "BAR", None)) else {
        panic!()
    };
    assert_eq!(one.replacements, 1);
    let ToolResult::EditFile(all) = runner.ok(edit("e.txt", "foo", "qux", Some(true))) else {
        panic!()
    };
    assert_eq!(all.replacements, 3);
    assert_eq!(
        fs::read_to_string(fx.work.join("e.txt")).unwrap(),
        "qux BAR qux baz qux\n"
    );
    let mode = fs::metadata(fx.work.join("e.txt"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    fs::write(fx.work.join("bin.dat"), [0xffu8, 0xfe, b'a']).unwrap();
    runner.refused(edit("bin.dat", "a", "b", None), ErrorCode::BinaryFile);
}

#[test]
fn delete_files_links_and_folders() {
    let fx = Fixture::new();
    fs::create_dir_all(fx.work.join("tree/x/y")).unwrap();
    fs::write(fx.work.join("tree/x/y/f"), "f").unwrap();
    fs::write(fx.work.join("tree/g"), "g").unwrap();
    symlink(&fx.outside, fx.work.join("tree/out")).unwrap();
    symlink("a.txt", fx.work.join("link")).unwrap();
    let runner = fx.runner();

    let ToolResult::Delete(link) = runner.ok(Delete {
        path: "link".into(),
        recursive: None,
    }) else {
        panic!()
    };
    assert_eq!(link.kind, FileKind::Symlink);
    assert!(fx.work.join("a.txt").exists(), "the link's target stays");

    let not_empty = runner.refused(
        Delete {
            path: "tree".into(),
            recursive: None,
        },
        ErrorCode::Io,
    );
    assert!(not_empty.contains("set `recursive`"), "{not_empty}");
    let ToolResult::Delete(tree) = runner.ok(Delete {
        path: "tree".into(),
        recursive: Some(true),
    }) else {
        panic!()
    };
    // tree, x, y, f, g, out
    assert_eq!((tree.kind, tree.removed), (FileKind::Directory, 6));
    assert!(!fx.work.join("tree").exists());
    assert_eq!(
        fs::read_to_string(fx.outside.join("secret.txt")).unwrap(),
        super::harness::SECRET
    );

    runner.refused(
        Delete {
            path: "nothing".into(),
            recursive: None,
        },
        ErrorCode::NotFound,
    );
    let root = runner.refused(
        Delete {
            path: ".".into(),
            recursive: Some(true),
        },
        ErrorCode::PermissionDenied,
    );
    assert!(root.contains("one of the session's folders"), "{root}");
}

#[test]
fn list_directory_sorted_with_depth_and_limit() {
    let fx = Fixture::new();
    symlink("a.txt", fx.work.join("link")).unwrap();
    let runner = fx.runner();
    let ToolResult::ListDirectory(flat) = runner.ok(ListDirectory {
        path: None,
        depth: None,
        limit: None,
    }) else {
        panic!()
    };
    let names: Vec<_> = flat
        .entries
        .iter()
        .map(|e| (e.path.as_str(), e.kind))
        .collect();
    assert_eq!(
        names,
        vec![
            ("a.txt", FileKind::File),
            ("link", FileKind::Symlink),
            ("sub", FileKind::Directory)
        ]
    );
    assert_eq!(flat.entries[0].size, 17);
    assert!(flat.entries[0].modified_ms.is_some());
    let ToolResult::ListDirectory(deep) = runner.ok(ListDirectory {
        path: Some(fx.work.display().to_string()),
        depth: Some(2),
        limit: Some(3),
    }) else {
        panic!()
    };
    let paths: Vec<_> = deep.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, vec!["a.txt", "link", "sub"]);
    assert!(deep.truncated);
    let ToolResult::ListDirectory(all) = runner.ok(ListDirectory {
        path: None,
        depth: Some(2),
        limit: None,
    }) else {
        panic!()
    };
    let paths: Vec<_> = all.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, vec!["a.txt", "link", "sub", "sub/b.txt"]);
    runner.refused(
        ListDirectory {
            path: Some("a.txt".into()),
            depth: None,
            limit: None,
        },
        ErrorCode::NotADirectory,
    );
    runner.refused(
        ListDirectory {
            path: None,
            depth: Some(0),
            limit: None,
        },
        ErrorCode::BadArgs,
    );
}

#[test]
fn stat_reports_without_following_a_final_link() {
    let fx = Fixture::new();
    symlink("a.txt", fx.work.join("link")).unwrap();
    fs::set_permissions(fx.work.join("a.txt"), fs::Permissions::from_mode(0o640)).unwrap();
    let runner = fx.runner();
    let ToolResult::Stat(link) = runner.ok(Stat {
        path: "link".into(),
    }) else {
        panic!()
    };
    assert_eq!(link.kind, FileKind::Symlink);
    assert_eq!(link.link_target.as_deref(), Some("a.txt"));
    assert_eq!(link.size, 5);
    let ToolResult::Stat(file) = runner.ok(Stat {
        path: "a.txt".into(),
    }) else {
        panic!()
    };
    assert_eq!(
        (file.kind, file.mode, file.read_only),
        (FileKind::File, 0o640, false)
    );
    let ToolResult::Stat(root) = runner.ok(Stat {
        path: fx.reference.display().to_string(),
    }) else {
        panic!()
    };
    assert_eq!((root.kind, root.read_only), (FileKind::Directory, true));
    runner.refused(
        Stat {
            path: "ghost".into(),
        },
        ErrorCode::NotFound,
    );
}
