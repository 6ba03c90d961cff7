use std::collections::BTreeMap;

use openshell_proto::sandbox::{FilesystemPolicy, NetworkBinary, NetworkPolicyRule, ProcessPolicy};

use super::*;

fn policy() -> SandboxPolicy {
    SandboxPolicy {
        version: 1,
        filesystem: Some(FilesystemPolicy {
            include_workdir: true,
            read_only: vec!["/usr".into()],
            read_write: vec!["/home/alice/project".into()],
        }),
        landlock: None,
        process: Some(ProcessPolicy {
            run_as_user: "1000".into(),
            run_as_group: "1000".into(),
        }),
        network_policies: BTreeMap::from([(
            "pypi".to_owned(),
            NetworkPolicyRule {
                name: "pypi".into(),
                endpoints: vec![NetworkEndpoint {
                    host: "pypi.org".into(),
                    port: 443,
                    ..NetworkEndpoint::default()
                }],
                binaries: vec![NetworkBinary { path: "/**".into() }],
            },
        )]),
    }
}

fn refusal(change: impl FnOnce(&mut SandboxPolicy)) -> String {
    let mut policy = policy();
    change(&mut policy);
    match validate_policy(&policy) {
        Ok(()) => panic!("accepted: {policy:?}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn a_sound_policy_passes() {
    validate_policy(&policy()).unwrap();
}

#[test]
fn paths_must_be_absolute_without_dot_dot_and_root_is_never_writable() {
    let fs = |p: &mut SandboxPolicy| p.filesystem.as_mut().unwrap().read_write.push("x".into());
    assert!(refusal(fs).contains("must be absolute"));
    let dots = |p: &mut SandboxPolicy| {
        p.filesystem
            .as_mut()
            .unwrap()
            .read_only
            .push("/home/a/../../etc".into());
    };
    assert!(refusal(dots).contains("`..`"));
    let root = |p: &mut SandboxPolicy| p.filesystem.as_mut().unwrap().read_write.push("//".into());
    assert!(refusal(root).contains("root folder"));
    let long = |p: &mut SandboxPolicy| {
        p.filesystem
            .as_mut()
            .unwrap()
            .read_only
            .push(format!("/{}", "a".repeat(4096)));
    };
    assert!(refusal(long).contains("4096"));
    let many = |p: &mut SandboxPolicy| {
        let fs = p.filesystem.as_mut().unwrap();
        fs.read_only = (0..256).map(|i| format!("/data/{i}")).collect();
    };
    assert!(refusal(many).contains("at most 256"));
    let newline = |p: &mut SandboxPolicy| {
        p.filesystem
            .as_mut()
            .unwrap()
            .read_only
            .push("/a\nb".into());
    };
    assert!(refusal(newline).contains("line break"));
}

#[test]
fn identities_are_never_root_and_keys_never_provider_rules() {
    let root = |p: &mut SandboxPolicy| p.process.as_mut().unwrap().run_as_user = "0".into();
    assert!(refusal(root).contains("never 0"));
    let max =
        |p: &mut SandboxPolicy| p.process.as_mut().unwrap().run_as_group = "4294967295".into();
    assert!(refusal(max).contains("4294967294"));
    let padded = |p: &mut SandboxPolicy| p.process.as_mut().unwrap().run_as_user = "01000".into();
    assert!(refusal(padded).contains("run_as_user"));
    let reserved = |p: &mut SandboxPolicy| {
        let rule = p.network_policies.remove("pypi").unwrap();
        p.network_policies.insert("_provider_x".into(), rule);
    };
    assert!(refusal(reserved).contains("_provider_"));
    let landlock = |p: &mut SandboxPolicy| {
        p.landlock = Some(openshell_proto::sandbox::LandlockPolicy {
            compatibility: "maybe".into(),
        });
    };
    assert!(refusal(landlock).contains("hard_requirement"));
}

#[test]
fn endpoints_follow_the_gateway_host_and_address_rules() {
    let set = |endpoint: NetworkEndpoint| {
        move |p: &mut SandboxPolicy| {
            p.network_policies.get_mut("pypi").unwrap().endpoints = vec![endpoint];
        }
    };
    let bare = NetworkEndpoint {
        host: "*".into(),
        port: 443,
        ..Default::default()
    };
    assert!(refusal(set(bare)).contains("first label"));
    let tld = NetworkEndpoint {
        host: "*.com".into(),
        port: 443,
        ..Default::default()
    };
    assert!(refusal(set(tld)).contains("top-level-domain"));
    let no_port = NetworkEndpoint {
        host: "pypi.org".into(),
        ..Default::default()
    };
    assert!(refusal(set(no_port)).contains("1 to 65535"));
    let hostless = NetworkEndpoint {
        port: 443,
        ..Default::default()
    };
    assert!(refusal(set(hostless)).contains("allowed_ips"));
    for (ip, why) in [
        ("127.0.0.0/8", "loopback"),
        ("126.0.0.0/7", "loopback"),
        ("169.254.169.254", "link-local"),
        ("0.0.0.0/0", "loopback"),
        ("0.0.0.0/8", "unspecified"),
        ("fe80::/64", "link-local"),
        ("::/0", "loopback"),
        ("10.0.0.1/8", "host bits"),
    ] {
        let endpoint = NetworkEndpoint {
            port: 443,
            allowed_ips: vec![ip.into()],
            ..Default::default()
        };
        let error = refusal(set(endpoint));
        assert!(error.contains(why), "{ip}: {error}");
    }
    let no_binaries =
        |p: &mut SandboxPolicy| p.network_policies.get_mut("pypi").unwrap().binaries.clear();
    assert!(refusal(no_binaries).contains("no binaries"));
}

#[test]
fn environment_keys_values_and_counts() {
    let env = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    check_environment(&env(&[("PATH_EXTRA", "/opt/bin"), ("_X", "")])).unwrap();
    for (key, why) in [
        ("1A", "^[A-Za-z_]"),
        ("A-B", "^[A-Za-z_]"),
        ("", "^[A-Za-z_]"),
        ("OPENSHELL_X", "gateway"),
    ] {
        let error = check_environment(&env(&[(key, "v")]))
            .unwrap_err()
            .to_string();
        assert!(error.contains(why), "{key}: {error}");
    }
    let error = check_environment(&env(&[("K", "hidden-value\nsecond line")]))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("line break") && !error.contains("hidden-value"),
        "{error}"
    );
    let many: BTreeMap<String, String> =
        (0..129).map(|i| (format!("K{i}"), String::new())).collect();
    assert!(matches!(
        check_environment(&many),
        Err(PolicyError::TooManyEnvironmentEntries {
            count: 129,
            max: 128
        })
    ));
}

#[test]
fn labels_and_names_follow_kubernetes_rules() {
    check_label("paddock.session", "0b6f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b").unwrap();
    check_label("example.com/tier", "").unwrap();
    assert!(check_label("paddock.session", "has space").is_err());
    assert!(check_label("paddock.session", &"a".repeat(64)).is_err());
    assert!(check_label("paddock.session", "-lead").is_err());
    assert!(check_label("Bad_Prefix/x", "v").is_err());
    check_dns_label("sandbox name", "pd-0123456789abcdef", MAX_SANDBOX_NAME).unwrap();
    for bad in ["pd-0123456789abcdef0", "PD-1", "-pd", "pd-", "pd_1", ""] {
        assert!(
            check_dns_label("sandbox name", bad, MAX_SANDBOX_NAME).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn absolute_paths_are_normalised() {
    assert_eq!(
        check_absolute_path("f", "/home//alice/").unwrap(),
        "/home/alice"
    );
    assert_eq!(check_absolute_path("f", "/").unwrap(), "/");
    assert!(check_absolute_path("f", "/home/./alice").is_err());
}
