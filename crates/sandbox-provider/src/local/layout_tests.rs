use std::os::unix::fs::symlink;

use protocol::{FolderGrant, NetworkProfileName};

use super::*;

/// A fake host root: `/usr`, `/bin` as a link, and an `/etc` with secrets and ordinary files.
fn host_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let p = root.path();
    std::fs::create_dir_all(p.join("usr/bin")).unwrap();
    symlink("usr/bin", p.join("bin")).unwrap();
    std::fs::create_dir_all(p.join("etc/ssh")).unwrap();
    std::fs::create_dir_all(p.join("etc/ssl/private")).unwrap();
    std::fs::create_dir_all(p.join("etc/ssl/certs")).unwrap();
    std::fs::create_dir_all(p.join("etc/sudoers.d")).unwrap();
    for file in [
        "shadow",
        "gshadow",
        "hosts",
        "passwd",
        "group",
        "ssh/ssh_config",
        "ssh/ssh_host_ed25519_key",
    ] {
        std::fs::write(p.join("etc").join(file), "x").unwrap();
    }
    symlink("/run/resolv.conf", p.join("etc/resolv.conf")).unwrap();
    root
}

fn request(folders: &[(&str, FolderAccess)]) -> SandboxRequest {
    SandboxRequest {
        session_id: "s".into(),
        folders: folders
            .iter()
            .map(|(path, access)| FolderGrant {
                path: (*path).into(),
                access: *access,
            })
            .collect(),
        cwd: folders[0].0.into(),
        network_profile: NetworkProfileName::Strict,
        extra_hosts: Vec::new(),
        credentials: Vec::new(),
    }
}

/// The request's folders as pinned grants, with made-up descriptors and identities.
fn grants(request: &SandboxRequest) -> Vec<GrantMount> {
    request
        .folders
        .iter()
        .zip(10..)
        .map(|(folder, fd)| GrantMount {
            path: folder.path.clone(),
            access: folder.access,
            fd,
            identity: FolderIdentity {
                device: 7,
                inode: u64::try_from(fd).unwrap(),
            },
        })
        .collect()
}

fn render_for(root: &Path, dirs: &HostDirs, request: &SandboxRequest) -> Rendered {
    render(&LayoutInput {
        request,
        grants: &grants(request),
        identity: Identity {
            drop_to: None,
            host_uid: 1000,
            host_gid: 1000,
            uid: 1000,
            gid: 1000,
        },
        dirs,
        runner: Path::new("/opt/paddock/tool-runner"),
        wall: Path::new("/opt/paddock/paddock-wall"),
        host_root: root,
        etc: Path::new("/state/etc-cache/etc-0123"),
        disable_userns: true,
        credential_env: BTreeMap::new(),
        bridge_token: "00112233445566778899aabbccddeeff",
        protected: &[],
        unscoped_signals: false,
    })
    .unwrap()
}

fn rule(rendered: &Rendered, path: &str) -> Option<PathAccess> {
    rendered
        .config
        .rules
        .iter()
        .find(|r| r.path == path)
        .map(|r| r.access)
}

/// The host source (or descriptor) bound at `inside`, if any.
fn bound(rendered: &Rendered, inside: &str) -> Option<(String, String)> {
    const BINDS: [&str; 4] = ["--bind", "--ro-bind", "--bind-fd", "--ro-bind-fd"];
    rendered
        .bwrap_args
        .windows(3)
        .find(|w| BINDS.contains(&w[0].as_str()) && w[2] == inside)
        .map(|w| (w[0].clone(), w[1].clone()))
}

#[test]
fn etc_holds_only_allowed_entries_under_one_read_rule() {
    let root = host_root();
    let dirs = HostDirs {
        root: PathBuf::from("/state/wall-1"),
    };
    let r = render_for(
        root.path(),
        &dirs,
        &request(&[("/work", FolderAccess::ReadWrite)]),
    );
    let args = r.bwrap_args.join(" ");
    for absent in [
        "shadow",
        "gshadow",
        "sudoers",
        "ssl/private",
        "ssh_host",
        "resolv.conf",
    ] {
        assert!(!args.contains(absent), "{absent} is mounted: {args}");
    }
    // The synthesized copy at /etc, the wall's passwd and group on it, nothing else.
    assert_eq!(
        bound(&r, "/etc"),
        Some(("--ro-bind".into(), "/state/etc-cache/etc-0123".into()))
    );
    assert_eq!(
        bound(&r, "/etc/passwd").unwrap().1,
        "/state/wall-1/etc/passwd"
    );
    assert_eq!(
        bound(&r, "/etc/group").unwrap().1,
        "/state/wall-1/etc/group"
    );
    assert!(
        !r.bwrap_args
            .iter()
            .any(|a| a.starts_with("/etc/") && a != "/etc/passwd" && a != "/etc/group"),
        "{:?}",
        r.bwrap_args
    );
    assert_eq!(rule(&r, "/etc"), Some(PathAccess::Read));
    assert!(
        !r.config.rules.iter().any(|r| r.path.starts_with("/etc/")),
        "the one /etc rule covers it all"
    );
}

#[test]
fn grants_mount_at_their_paths_with_matching_rules() {
    let root = host_root();
    let dirs = HostDirs {
        root: PathBuf::from("/state/wall-1"),
    };
    let r = render_for(
        root.path(),
        &dirs,
        &request(&[
            ("/work/a/b", FolderAccess::ReadOnly),
            ("/work/a", FolderAccess::ReadWrite),
        ]),
    );
    // Mounted by the pinned handles (the request lists /work/a/b first: fd 10).
    assert_eq!(
        bound(&r, "/work/a"),
        Some(("--bind-fd".into(), "11".into()))
    );
    assert_eq!(
        bound(&r, "/work/a/b"),
        Some(("--ro-bind-fd".into(), "10".into()))
    );
    let identities: Vec<_> = r
        .config
        .grants
        .iter()
        .map(|g| (g.path.as_str(), g.device, g.inode))
        .collect();
    assert_eq!(identities, [("/work/a/b", 7, 10), ("/work/a", 7, 11)]);
    let parent = r.bwrap_args.iter().position(|a| a == "/work/a").unwrap();
    let child = r.bwrap_args.iter().position(|a| a == "/work/a/b").unwrap();
    assert!(
        parent < child,
        "a folder must be mounted before the folders inside it"
    );
    assert_eq!(rule(&r, "/work/a"), Some(PathAccess::ReadWrite));
    assert_eq!(rule(&r, "/work/a/b"), Some(PathAccess::ReadExec));
    assert_eq!(
        rule(&r, LANDLOCK_PROBE_INSIDE),
        None,
        "the probe folder must have no rule"
    );
    assert_eq!(bound(&r, LANDLOCK_PROBE_INSIDE).unwrap().0, "--bind");
    let args = r.bwrap_args.join(" ");
    assert!(args.contains("--symlink usr/bin /bin"), "{args}");
    assert!(
        args.contains("--unshare-user")
            && args.contains("--unshare-net")
            && args.contains("--disable-userns")
    );
    // The runner is the PID namespace's first process (no signal from inside reaches it).
    assert!(args.contains("--unshare-cgroup-try --as-pid-1"), "{args}");
    assert!(args.contains("--remount-ro /"));
    assert!(
        args.contains("--cwd /work/a/b --exit-on-stdin-eof --writable "),
        "{args}"
    );
    // The runner's commands may change entries in the wall's read-write folders, never in the
    // runner's socket folder.
    let writable: Vec<&str> = r
        .bwrap_args
        .windows(2)
        .filter(|pair| pair[0] == "--writable")
        .map(|pair| pair[1].as_str())
        .collect();
    let read_write: Vec<&str> = r
        .config
        .rules
        .iter()
        .filter(|rule| rule.access == PathAccess::ReadWrite && rule.path != RUNNER_DIR_INSIDE)
        .map(|rule| rule.path.as_str())
        .collect();
    assert_eq!(writable, read_write);
    for path in ["/tmp", HOME_INSIDE, "/work/a"] {
        assert!(writable.contains(&path), "{path} missing: {writable:?}");
    }
    assert!(!writable.contains(&RUNNER_DIR_INSIDE), "{writable:?}");
}

#[test]
fn the_environment_points_every_proxy_variable_at_the_bridge() {
    let env = environment(&BTreeMap::from([(
        "GH_CONFIG_DIR".to_owned(),
        "/home/paddock/.config/gh".to_owned(),
    )]));
    for name in [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        assert_eq!(env[name], "http://127.0.0.1:3128", "{name}");
    }
    assert_eq!(env["NO_PROXY"], "localhost,127.0.0.1,::1");
    assert_eq!(env["HOME"], HOME_INSIDE);
    assert_eq!(env["GH_CONFIG_DIR"], "/home/paddock/.config/gh");
    assert!(!env.contains_key("SSH_AUTH_SOCK"));
}

#[test]
fn equal_walls_hash_alike_and_different_ones_do_not() {
    let root = host_root();
    let req = request(&[("/work", FolderAccess::ReadWrite)]);
    let a = render_for(
        root.path(),
        &HostDirs {
            root: PathBuf::from("/state/wall-1"),
        },
        &req,
    );
    let b = render_for(
        root.path(),
        &HostDirs {
            root: PathBuf::from("/state/wall-2"),
        },
        &req,
    );
    let hash = |r: &Rendered, dirs: &str, rules: &str| {
        let parts = hash_parts(
            r,
            rules,
            &HostDirs {
                root: PathBuf::from(dirs),
            },
        );
        crate::attestation::config_hash(&parts.iter().map(String::as_str).collect::<Vec<_>>())
    };
    assert_eq!(
        hash(&a, "/state/wall-1", "strict"),
        hash(&b, "/state/wall-2", "strict")
    );
    assert_ne!(
        hash(&a, "/state/wall-1", "strict"),
        hash(&a, "/state/wall-1", "open")
    );
    let ro = render_for(
        root.path(),
        &HostDirs {
            root: PathBuf::from("/state/wall-1"),
        },
        &request(&[("/work", FolderAccess::ReadOnly)]),
    );
    assert_ne!(
        hash(&a, "/state/wall-1", "strict"),
        hash(&ro, "/state/wall-1", "strict")
    );
}

#[test]
fn the_skeleton_in_the_wall_s_own_tmp_is_a_read_only_tmpfs() {
    let root = host_root();
    let dirs = HostDirs {
        root: PathBuf::from("/state/wall-1"),
    };
    let r = render_for(
        root.path(),
        &dirs,
        &request(&[
            ("/tmp/t1/work", FolderAccess::ReadWrite),
            ("/tmp/t1/docs", FolderAccess::ReadOnly),
            ("/tmp/top", FolderAccess::ReadWrite),
            ("/srv/project", FolderAccess::ReadWrite),
        ]),
    );
    let args = &r.bwrap_args;
    let at = |parts: &[&str]| {
        args.windows(parts.len())
            .position(|w| w.iter().zip(parts).all(|(a, b)| a == b))
    };
    let tmpfs = at(&["--tmpfs", "/tmp/t1"]).expect("a tmpfs for the skeleton");
    let first_grant = args.iter().position(|a| a == "--bind-fd").unwrap();
    let remount = at(&["--remount-ro", "/tmp/t1"]).expect("the skeleton made read-only");
    let last_grant = args.iter().rposition(|a| a.ends_with("bind-fd")).unwrap();
    assert!(tmpfs < first_grant && remount > last_grant, "{args:?}");
    // A grant at the top of /tmp is a mount point itself; outside /tmp the root is read-only.
    assert_eq!(at(&["--tmpfs", "/tmp/top"]), None);
    assert_eq!(at(&["--tmpfs", "/srv"]), None);
    assert_eq!(args.iter().filter(|a| *a == "--tmpfs").count(), 1);
}

#[test]
fn a_bind_source_that_vanished_is_told_apart_from_the_layout_s_own() {
    let args: Vec<String> = [
        "--ro-bind",
        "/opt/paddock/tool-runner",
        "/run/paddock/bin/tool-runner",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    for swapped in [
        "bwrap: Can't find source path /proc/self/fd/104: No such file or directory",
        "bwrap: Can't get type of source /work/swap.link: No such file or directory",
        "bwrap: Can't bind mount /oldroot/work/swap.link on /newroot/work/.git/hooks: No such \
         file or directory",
    ] {
        assert!(swapped_source(swapped, &args), "{swapped}");
    }
    for own in [
        "bwrap: Can't find source path /opt/paddock/tool-runner: No such file or directory",
        "bwrap: Can't bind mount /oldroot/opt/paddock/tool-runner on /newroot/run/paddock/bin/\
         tool-runner: Permission denied",
        "bwrap: Can't mount proc on /newroot/proc: Operation not permitted",
    ] {
        assert!(!swapped_source(own, &args), "{own}");
    }
}
