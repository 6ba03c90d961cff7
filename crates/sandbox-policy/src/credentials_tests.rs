use super::*;

const KUBECONFIG: &str = r#"
apiVersion: v1
kind: Config
clusters:
  - name: prod
    cluster:
      server: https://api.prod.example.com:6443
      certificate-authority-data: AAAA
  - name: staging
    cluster:
      server: https://K8S.staging.example.com/
  - name: office
    cluster:
      server: https://10.1.2.3:6443
  - name: kind
    cluster:
      server: https://127.0.0.1:45123
  - name: v6
    cluster:
      server: "https://[2001:db8::10]:6443"
  - name: plain
    cluster:
      server: http://legacy.example.com
  - name: duplicate
    cluster:
      server: https://api.prod.example.com:6443
users: []
"#;

#[test]
fn kubeconfig_servers_become_hosts_and_loopback_ones_are_set_aside() {
    let servers = kubeconfig_servers(KUBECONFIG).unwrap();
    let shown: Vec<String> = servers.reachable.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "api.prod.example.com:6443",
            "k8s.staging.example.com:443",
            "10.1.2.3:6443",
            "[2001:db8::10]:6443",
            "legacy.example.com:80",
        ]
    );
    assert_eq!(servers.unreachable.len(), 1);
    assert_eq!(servers.unreachable[0].0, "https://127.0.0.1:45123");
    assert!(servers.unreachable[0].1.contains("loopback"));
}

#[test]
fn kubeconfig_errors_say_what_is_wrong() {
    for (text, why) in [
        ("clusters: [", "not valid YAML"),
        ("clusters: 3", "not a list"),
        (
            "clusters:\n- cluster:\n    server: ftp://x.example.com",
            "https://",
        ),
        (
            "clusters:\n- cluster:\n    server: https://u:p@x.example.com",
            "user information",
        ),
        (
            "clusters:\n- cluster:\n    server: https://x.example.com:99999",
            "port",
        ),
        ("clusters:\n- cluster:\n    server: 42", "not a string"),
    ] {
        let error = kubeconfig_servers(text).unwrap_err().to_string();
        assert!(error.contains(why), "{text}: {error}");
    }
    assert_eq!(
        kubeconfig_servers("kind: Config").unwrap(),
        KubeServers::default()
    );
}

#[test]
fn the_kube_entry_takes_its_hosts_from_the_kubeconfig() {
    let entry = crate::data::SandboxData::builtin()
        .unwrap()
        .credential("kube")
        .unwrap()
        .with_kubeconfig(KUBECONFIG)
        .unwrap();
    assert_eq!(entry.hosts.len(), 5);
    assert!(entry.hosts_named_by_user);
    assert_eq!(
        entry.environment("/home/alice/.paddock-home")["KUBECONFIG"],
        "/home/alice/.paddock-home/.kube/config"
    );
}

#[test]
fn custom_entries_are_checked() {
    let entry = CredentialEntry::custom("npmrc", ".npmrc", &["registry.npmjs.org"]).unwrap();
    assert_eq!(entry.source, ".npmrc");
    assert!(entry.hosts_named_by_user);
    for (name, source, why) in [
        ("Bad", ".x", "a-z"),
        ("1x", ".x", "start with a letter"),
        ("ok", "/etc/passwd", "relative"),
        ("ok", "~/.x", "relative"),
        ("ok", ".x/../../etc", "`..`"),
        ("ok", "", "relative"),
    ] {
        let error = CredentialEntry::custom(name, source, &[])
            .unwrap_err()
            .to_string();
        assert!(error.contains(why), "{name} {source}: {error}");
    }
    let error = CredentialEntry::custom("ok", ".x", &["*"])
        .unwrap_err()
        .to_string();
    assert!(error.contains("first label"), "{error}");
}
