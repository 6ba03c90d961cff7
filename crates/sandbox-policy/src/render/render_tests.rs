//! Rendering refuses what it cannot honour, and says why.

use super::*;

const DIGEST: &str = "0000000000000000000000000000000000000000000000000000000000000abc";

fn owner(uid: u32) -> Owner {
    Owner { uid, gid: uid }
}

fn folder(path: &str, access: FolderAccess, uid: u32) -> FolderSpec {
    FolderSpec {
        path: path.into(),
        access,
        owner: owner(uid),
    }
}

fn spec() -> SessionSpec {
    SessionSpec {
        session_id: "0b6f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b".into(),
        machine_id: "workstation-1".into(),
        folders: vec![
            folder("/home/alice/project", FolderAccess::ReadWrite, 1000),
            folder("/home/alice/ref-docs", FolderAccess::ReadOnly, 1000),
        ],
        cwd: "/home/alice/project".into(),
        network: NetworkProfileName::Strict,
        extra_hosts: Vec::new(),
        credentials: Vec::new(),
        private_home: None,
        runner_dir: "/opt/paddock/bin".into(),
        image: format!("registry.example/paddock/sandbox@sha256:{DIGEST}"),
        driver: MountDriver::Docker,
        secrets: Vec::new(),
        environment: BTreeMap::new(),
        protected: Vec::new(),
    }
}

fn data() -> SandboxData {
    SandboxData::builtin().unwrap()
}

fn refusal(change: impl FnOnce(&mut SessionSpec)) -> String {
    let mut spec = spec();
    change(&mut spec);
    match render(&data(), &spec, &BTreeMap::new()) {
        Ok(rendered) => panic!("rendered: {}", rendered.policy_yaml),
        Err(error) => error.to_string(),
    }
}

#[test]
fn the_name_is_a_deterministic_19_character_dns_label() {
    let name = sandbox_name("0b6f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b");
    assert_eq!(name.len(), 19);
    assert!(name.starts_with("pd-"));
    assert_eq!(name, sandbox_name("0b6f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"));
    assert_ne!(name, sandbox_name("another session"));
    crate::validate::check_dns_label("name", &name, 19).unwrap();
}

#[test]
fn a_sound_session_renders() {
    let rendered = render(&data(), &spec(), &BTreeMap::new()).unwrap();
    let process = rendered.policy.process.clone().unwrap();
    assert_eq!(
        (process.run_as_user.as_str(), process.run_as_group.as_str()),
        ("1000", "1000")
    );
    assert_eq!(rendered.request.name, rendered.name);
    let spec = rendered.request.spec.clone().unwrap();
    assert!(!spec.tty);
    assert_eq!(
        spec.restart_policy(),
        openshell_proto::v1::SandboxRestartPolicy::Never
    );
    assert_eq!(
        rendered.request.workspace_scope,
        Some(openshell_proto::default_workspace())
    );
}

#[test]
fn root_owned_folders_are_refused_with_an_explanation() {
    let error = refusal(|s| {
        s.folders = vec![folder("/srv/data", FolderAccess::ReadWrite, 0)];
        s.cwd = "/srv/data".into();
    });
    assert!(
        error.contains("/srv/data") && error.contains("root") && error.contains("chown"),
        "{error}"
    );
    let error = refusal(|s| {
        s.folders = vec![FolderSpec {
            path: "/srv/data".into(),
            access: FolderAccess::ReadWrite,
            owner: Owner { uid: 1000, gid: 0 },
        }];
        s.cwd = "/srv/data".into();
    });
    assert!(error.contains("group 0"), "{error}");
}

#[test]
fn writable_folders_of_different_owners_are_refused_naming_them() {
    let error = refusal(|s| {
        s.folders
            .push(folder("/home/bob/shared", FolderAccess::ReadWrite, 1001))
    });
    assert!(
        error.contains("/home/alice/project is 1000:1000")
            && error.contains("/home/bob/shared is 1001:1001"),
        "{error}"
    );
    // A read-only folder of another owner is fine: the sandbox runs as the writer.
    let mut ok = spec();
    ok.folders
        .push(folder("/home/bob/docs", FolderAccess::ReadOnly, 1001));
    render(&data(), &ok, &BTreeMap::new()).unwrap();
}

#[test]
fn folders_that_would_replace_the_system_or_escape_are_refused() {
    for (path, why) in [
        ("/", "root folder"),
        ("/usr", "/usr"),
        ("/etc", "/etc"),
        ("/home/../etc", "`..`"),
        ("relative/path", "absolute"),
        ("/proc/1", "/proc"),
        ("/run/paddock/x", "reserved"),
        ("/opt", "/opt/openshell"),
        ("/sandbox", "/sandbox"),
        ("/tmp", "/tmp"),
    ] {
        let error = refusal(|s| {
            s.folders = vec![folder(path, FolderAccess::ReadOnly, 1000)];
        });
        assert!(error.contains(why), "{path}: {error}");
    }
    let error = refusal(|s| {
        s.folders
            .push(folder("/home/alice/project/", FolderAccess::ReadOnly, 1000))
    });
    assert!(error.contains("granted twice"), "{error}");
    let error = refusal(|s| s.folders.clear());
    assert!(error.contains("no folders"), "{error}");
}

#[test]
fn cwd_outside_the_folders_is_refused() {
    let error = refusal(|s| s.cwd = "/home/alice/project-other".into());
    assert!(error.contains("not inside a granted folder"), "{error}");
    let mut ok = spec();
    ok.cwd = "/home/alice/project/src".into();
    render(&data(), &ok, &BTreeMap::new()).unwrap();
}

#[test]
fn an_image_without_a_digest_is_refused_with_how_to_get_one() {
    for image in [
        "ubuntu:24.04",
        "nvcr.io/nvidia/base/ubuntu:24.04",
        "ubuntu@sha256:abc",
        "ubuntu@sha256:0000000000000000000000000000000000000000000000000000000000000ABC",
        "@sha256:0000000000000000000000000000000000000000000000000000000000000abc",
    ] {
        let error = refusal(|s| s.image = image.into());
        assert!(
            error.contains("not pinned") && error.contains("imagetools inspect"),
            "{image}: {error}"
        );
    }
}

#[test]
fn credential_entries_need_a_private_home() {
    let error = refusal(|s| s.credentials = vec![data().credential("gh").unwrap()]);
    assert!(error.contains("private home"), "{error}");
}

#[test]
fn a_missing_secret_is_named() {
    let error = refusal(|s| s.secrets = vec![data().known_secret("GITHUB_TOKEN").unwrap()]);
    assert!(error.contains("`GITHUB_TOKEN` is not set"), "{error}");
}

#[test]
fn environment_may_not_set_a_secret_or_carry_its_value() {
    const PLANTED: &str = "planted-secret-7f3a9c";
    let values = BTreeMap::from([("MY_TOKEN".to_owned(), SecretValue::new(PLANTED))]);
    let mut spec = spec();
    spec.secrets = vec![SecretSpec::new("MY_TOKEN", &["api.example.com"]).unwrap()];
    spec.environment.insert("MY_TOKEN".into(), "x".into());
    let error = render(&data(), &spec, &values).unwrap_err().to_string();
    assert!(error.contains("placeholder"), "{error}");
    spec.environment.clear();
    spec.environment
        .insert("LEAK".into(), format!("Bearer {PLANTED}"));
    let error = render(&data(), &spec, &values).unwrap_err().to_string();
    assert!(
        error.contains("LEAK") && !error.contains(PLANTED),
        "{error}"
    );
}

#[test]
fn labels_must_be_valid_kubernetes_label_values() {
    let error = refusal(|s| s.machine_id = "my laptop".into());
    assert!(error.contains("paddock.machine"), "{error}");
    let error = refusal(|s| s.session_id = "x".repeat(64));
    assert!(error.contains("paddock.session"), "{error}");
}

#[test]
fn the_runner_command_serves_every_folder_with_its_access() {
    let rendered = render(&data(), &spec(), &BTreeMap::new()).unwrap();
    assert_eq!(
        rendered.request.spec.unwrap().command,
        [
            "/opt/paddock/bin/tool-runner",
            "serve",
            "--socket",
            "/run/paddock/runner.sock",
            "--root",
            "/home/alice/project:rw",
            "--root",
            "/home/alice/ref-docs:ro",
            "--cwd",
            "/home/alice/project",
            // The policy's read-write paths but the runner's socket folder: the only places
            // the runner's commands may change entries.
            "--writable",
            "/tmp",
            "--writable",
            "/dev/null",
            "--writable",
            "/home/alice/project",
            "--writable",
            "/sandbox",
        ]
    );
}

#[test]
fn protected_mounts_must_lie_inside_a_read_write_folder() {
    let mount = |path: &str| ProtectedMountSpec {
        path: path.into(),
        read_only: true,
    };
    for (path, expected) in [
        (
            "/home/alice/ref-docs/.bashrc",
            "not inside a read-write folder",
        ),
        ("/etc/passwd", "not inside a read-write folder"),
        ("/home/alice/project", "not inside a read-write folder"),
        ("relative/.bashrc", "absolute"),
    ] {
        let error = refusal(|spec| spec.protected = vec![mount(path)]);
        assert!(error.contains(expected), "{path}: {error}");
    }
    let twice = refusal(|spec| {
        spec.protected = vec![
            mount("/home/alice/project/.bashrc"),
            mount("/home/alice/project/.bashrc"),
        ]
    });
    assert!(twice.contains("listed twice"), "{twice}");
}
