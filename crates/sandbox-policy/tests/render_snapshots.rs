//! Snapshots of what Paddock sends OpenShell, for every network profile × credential mix, plus
//! the create request (JSON) and the summary. A planted secret must appear in none of them.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a failed test with a line number"
)]

use std::collections::BTreeMap;

use protocol::{FolderAccess, NetworkProfileName};
use sandbox_policy::{
    CredentialEntry, FolderSpec, HostRule, MountDriver, Owner, ProtectedMountSpec, RenderedSandbox,
    SandboxData, SecretSpec, SecretValue, SessionSpec, render,
};

const DIGEST: &str = "4f5e6d7c8b9a0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899a";
const PLANTED_SECRET: &str = "ghp_PLANTEDsecretVALUE_do_not_leak_0123456789";
const KUBECONFIG: &str = "\
apiVersion: v1
clusters:
- name: prod
  cluster:
    server: https://api.prod.k8s.example.com:6443
- name: lab
  cluster:
    server: https://10.20.30.40:6443
- name: kind
  cluster:
    server: https://127.0.0.1:39443
";

fn data() -> SandboxData {
    SandboxData::builtin().unwrap()
}

fn alice(path: &str, access: FolderAccess) -> FolderSpec {
    FolderSpec {
        path: path.into(),
        access,
        owner: Owner {
            uid: 1000,
            gid: 1000,
        },
    }
}

fn base(network: NetworkProfileName) -> SessionSpec {
    SessionSpec {
        session_id: "0b6f3a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b".into(),
        machine_id: "workstation-1".into(),
        folders: vec![
            alice("/home/alice/project", FolderAccess::ReadWrite),
            alice("/home/alice/ref-docs", FolderAccess::ReadOnly),
        ],
        cwd: "/home/alice/project".into(),
        network,
        extra_hosts: Vec::new(),
        credentials: Vec::new(),
        private_home: None,
        runner_dir: "/opt/paddock/bin".into(),
        image: format!("ghcr.io/example/paddock-sandbox@sha256:{DIGEST}"),
        driver: MountDriver::Docker,
        secrets: Vec::new(),
        environment: BTreeMap::new(),
        protected: Vec::new(),
    }
}

/// The credential mixes: none, ssh, gh+aws, kube, custom.
fn mixes() -> Vec<(&'static str, Vec<CredentialEntry>)> {
    let data = data();
    vec![
        ("none", Vec::new()),
        ("ssh", vec![data.credential("ssh").unwrap()]),
        (
            "gh_aws",
            vec![
                data.credential("gh").unwrap(),
                data.credential("aws").unwrap().with_optional_files(),
            ],
        ),
        (
            "kube",
            vec![
                data.credential("kube")
                    .unwrap()
                    .with_kubeconfig(KUBECONFIG)
                    .unwrap(),
            ],
        ),
        (
            "custom",
            vec![
                CredentialEntry::custom(
                    "netrc",
                    ".netrc",
                    &[
                        "git.internal.example:443",
                        "artifacts.internal.example:8443",
                    ],
                )
                .unwrap(),
            ],
        ),
    ]
}

fn render_with(spec: &SessionSpec) -> RenderedSandbox {
    let values = spec
        .secrets
        .iter()
        .map(|s| (s.name.clone(), SecretValue::new(PLANTED_SECRET)))
        .collect();
    render(&data(), spec, &values).unwrap_or_else(|e| panic!("render failed: {e}"))
}

/// Everything a human or the audit trail may see, as one text.
fn shown(rendered: &RenderedSandbox) -> String {
    format!(
        "{}\n{}\n{}\n{:?}\n{:#?}",
        rendered.summary,
        rendered.policy_yaml,
        serde_json::to_string_pretty(&rendered.request_json()).unwrap(),
        rendered,
        rendered.providers
    )
}

#[test]
fn every_profile_and_credential_mix() {
    for network in [
        NetworkProfileName::Strict,
        NetworkProfileName::Standard,
        NetworkProfileName::Open,
    ] {
        for (mix, credentials) in mixes() {
            let mut spec = base(network);
            if !credentials.is_empty() {
                spec.private_home = Some("/home/alice/.local/state/paddock/homes/s1".into());
            }
            spec.credentials = credentials;
            let rendered = render_with(&spec);
            insta::assert_snapshot!(
                format!("policy_{}_{mix}", network.as_str()),
                format!("# {}\n{}", rendered.summary, rendered.policy_yaml)
            );
        }
    }
}

fn full_session(driver: MountDriver) -> SessionSpec {
    let data = data();
    let mut spec = base(NetworkProfileName::Strict);
    spec.driver = driver;
    spec.extra_hosts = vec![
        HostRule::parse("huggingface.co").unwrap(),
        HostRule::parse("intranet.example.com:8443").unwrap(),
    ];
    spec.credentials = vec![data.credential("ssh").unwrap()];
    spec.private_home = Some("/home/alice/.local/state/paddock/homes/s1".into());
    spec.secrets = vec![
        data.known_secret("GITHUB_TOKEN").unwrap(),
        SecretSpec::new("SEARCH_API_KEY", &["api.search.example.com"]).unwrap(),
    ];
    spec.environment = BTreeMap::from([("RUST_BACKTRACE".to_owned(), "1".to_owned())]);
    let mount = |path: &str, read_only| ProtectedMountSpec {
        path: format!("/home/alice/project/{path}"),
        read_only,
    };
    spec.protected = vec![
        mount(".vscode", true),
        mount(".git/hooks", true),
        mount(".git", false),
        mount(".git/config", true),
    ];
    spec
}

#[test]
fn create_request_docker_with_secrets_and_ssh() {
    let rendered = render_with(&full_session(MountDriver::Docker));
    insta::assert_json_snapshot!("request_docker", rendered.request_json());
    insta::assert_snapshot!("summary_docker", rendered.summary);
    let providers: Vec<String> = rendered
        .providers
        .iter()
        .map(|p| format!("{p:?}"))
        .collect();
    insta::assert_yaml_snapshot!("providers_docker", providers);
}

#[test]
fn create_request_podman_read_only_session() {
    let mut spec = base(NetworkProfileName::Open);
    spec.driver = MountDriver::Podman;
    spec.folders = vec![alice("/home/alice/ref-docs", FolderAccess::ReadOnly)];
    spec.cwd = "/home/alice/ref-docs".into();
    let rendered = render_with(&spec);
    insta::assert_json_snapshot!("request_podman", rendered.request_json());
    insta::assert_snapshot!("summary_podman", rendered.summary);
}

#[test]
fn a_planted_secret_appears_nowhere_but_the_provider_call() {
    let rendered = render_with(&full_session(MountDriver::Docker));
    let visible = shown(&rendered);
    assert!(
        !visible.contains(PLANTED_SECRET),
        "secret leaked:\n{visible}"
    );
    let request_debug = format!("{:?}", rendered.request);
    assert!(!request_debug.contains(PLANTED_SECRET));
    // The sandbox environment holds no secret variables at all: the gateway sets placeholders.
    let env = rendered.request.spec.clone().unwrap().environment;
    assert!(!env.contains_key("GITHUB_TOKEN") && !env.contains_key("SEARCH_API_KEY"));
    // Only the provider call carries it, to the gateway.
    let call = rendered.providers[0].create_request();
    let credentials = call.provider.as_ref().unwrap().credentials.clone();
    assert_eq!(credentials["GITHUB_TOKEN"], PLANTED_SECRET);
    assert!(!format!("{call:?}").contains(PLANTED_SECRET));
    // Errors that concern secrets name them, never their values.
    let mut leaky = full_session(MountDriver::Docker);
    leaky
        .environment
        .insert("TOKEN_COPY".into(), PLANTED_SECRET.into());
    let values = BTreeMap::from([
        ("GITHUB_TOKEN".to_owned(), SecretValue::new(PLANTED_SECRET)),
        ("SEARCH_API_KEY".to_owned(), SecretValue::new("other")),
    ]);
    let error = render(&data(), &leaky, &values).unwrap_err();
    assert!(!format!("{error} {error:?}").contains(PLANTED_SECRET));
}

#[test]
fn secret_endpoints_are_bound_rest_endpoints_and_the_spec_lists_the_providers() {
    let rendered = render_with(&full_session(MountDriver::Docker));
    let spec = rendered.request.spec.clone().unwrap();
    let names: Vec<&str> = rendered.providers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(spec.providers, names);
    let rule = &rendered.policy.network_policies["secret_github_token"];
    assert!(rule.endpoints.iter().all(|e| e.protocol == "rest"
        && e.credential_binding.as_ref().map(|b| b.provider.as_str()) == Some(names[0])));
    // The secret's hosts appear in no other rule.
    for (key, rule) in &rendered.policy.network_policies {
        if key != "secret_github_token" {
            assert!(
                rule.endpoints
                    .iter()
                    .all(|e| !(e.host == "github.com" && e.port == 443)),
                "{key} repeats github.com:443"
            );
        }
    }
}

#[test]
fn rendering_is_deterministic() {
    let first = render_with(&full_session(MountDriver::Docker));
    let second = render_with(&full_session(MountDriver::Docker));
    assert_eq!(first.policy_yaml, second.policy_yaml);
    assert_eq!(first.request_json(), second.request_json());
    assert_eq!(first.request, second.request);
}
