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

fn render_for(root: &Path, dirs: &HostDirs, request: &SandboxRequest) -> Rendered {
    render(&LayoutInput {
        request,
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
        disable_userns: true,
        credential_env: BTreeMap::new(),
        bridge_token: "00112233445566778899aabbccddeeff",
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

/// The host source bound at `inside`, if any.
fn bound(rendered: &Rendered, inside: &str) -> Option<(String, String)> {
    rendered
        .bwrap_args
        .windows(3)
        .find(|w| (w[0] == "--bind" || w[0] == "--ro-bind") && w[2] == inside)
        .map(|w| (w[0].clone(), w[1].clone()))
}

#[test]
fn secrets_are_covered_and_left_out_of_the_rules() {
    let root = host_root();
    let dirs = HostDirs {
        root: PathBuf::from("/state/wall-1"),
    };
    let r = render_for(
        root.path(),
        &dirs,
        &request(&[("/work", FolderAccess::ReadWrite)]),
    );
    for secret in [
        "/etc/shadow",
        "/etc/gshadow",
        "/etc/ssh/ssh_host_ed25519_key",
    ] {
        assert_eq!(
            bound(&r, secret),
            Some(("--ro-bind".into(), "/state/wall-1/etc/empty".into())),
            "{secret}"
        );
        assert_eq!(rule(&r, secret), None, "{secret} has a Landlock rule");
    }
    for folder in ["/etc/sudoers.d", "/etc/ssl/private"] {
        assert_eq!(
            bound(&r, folder),
            Some(("--ro-bind".into(), "/state/wall-1/etc/empty.d".into())),
            "{folder}: {:?}",
            r.bwrap_args
        );
        assert_eq!(rule(&r, folder), None);
    }
    assert_eq!(
        bound(&r, "/etc/passwd").unwrap().1,
        "/state/wall-1/etc/passwd"
    );
    assert_eq!(rule(&r, "/etc/hosts"), Some(PathAccess::Read));
    assert_eq!(rule(&r, "/etc/ssh/ssh_config"), Some(PathAccess::Read));
    assert_eq!(rule(&r, "/etc/ssl/certs"), Some(PathAccess::Read));
    // A link in /etc gets no rule of its own (its target may not exist inside).
    assert_eq!(rule(&r, "/etc/resolv.conf"), None);
    assert_eq!(
        rule(&r, "/etc"),
        None,
        "a rule on /etc would cover its secrets"
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
    assert_eq!(
        bound(&r, "/work/a"),
        Some(("--bind".into(), "/work/a".into()))
    );
    assert_eq!(
        bound(&r, "/work/a/b"),
        Some(("--ro-bind".into(), "/work/a/b".into()))
    );
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
    assert!(args.contains("--remount-ro /"));
    assert!(
        args.ends_with("--cwd /work/a/b --exit-on-stdin-eof"),
        "{args}"
    );
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
