use std::path::Path;

use model_client::{KeyStoreKind, Vendor};
use protocol::{ApprovalMode, NetworkProfileName, ProviderKind};

use super::*;

fn load(text: &str) -> Result<MachineConfig, ConfigError> {
    MachineConfig::from_texts(Some((
        text,
        Path::new("/home/alice/.config/paddock/config.toml"),
    )))
}

#[test]
fn defaults_choose_the_local_wall_and_ask() {
    let config = MachineConfig::from_texts(None).unwrap();
    assert_eq!(config.provider, ProviderKind::Local);
    assert!(!config.provider_explicit);
    assert_eq!(config.network_profile, NetworkProfileName::Strict);
    assert_eq!(config.approval_mode, ApprovalMode::Ask);
    assert_eq!(config.models.vendor, Vendor::Anthropic);
    assert_eq!(config.models.key_store, KeyStoreKind::Env);
    assert!(config.credentials.is_empty());
}

#[test]
fn a_gateway_makes_openshell_the_default() {
    let config = load("[openshell]\ngateway = \"default\"\n").unwrap();
    assert_eq!(config.provider, ProviderKind::Openshell);
    let config = load("[openshell]\ngateway = \"g\"\n[sandbox]\nprovider = \"local\"\n").unwrap();
    assert_eq!(config.provider, ProviderKind::Local);
}

#[test]
fn user_values_override_defaults() {
    let config = load(
        "[sandbox]\nprovider = \"direct\"\nextra_hosts = [\"pypi.org\", \"example.com:8443\"]\n\
         [models]\nprovider = \"ollama\"\nmodel = \"llama3.2\"\n[approvals]\nmode = \"auto-edit\"\n",
    )
    .unwrap();
    assert_eq!(config.provider, ProviderKind::Direct);
    assert_eq!(config.extra_hosts, ["pypi.org", "example.com:8443"]);
    assert_eq!(config.models.vendor, Vendor::OpenAiCompatible);
    assert_eq!(config.models.base_url, "http://localhost:11434/v1");
    assert_eq!(config.approval_mode, ApprovalMode::AutoEdit);
}

#[test]
fn errors_name_the_file_and_the_key() {
    let err = load("[sandbox]\nprovider = \"docker\"\n").unwrap_err();
    assert_eq!(err.key, "sandbox.provider");
    assert!(err.file.ends_with("config.toml"), "{err}");
    assert!(err.to_string().contains("docker"), "{err}");

    let err = load("[approvals]\nmode = \"yolo\"\n").unwrap_err();
    assert_eq!(err.key, "approvals.mode");

    let err = load("[sandbox]\nextra_hosts = [\"https://evil.example/x\"]\n").unwrap_err();
    assert_eq!(err.key, "sandbox.extra_hosts");

    let err = load("[sandbox]\nnetwork_profile = \"wide\"\n").unwrap_err();
    assert_eq!(err.key, "sandbox.network_profile");

    let err = load("[models]\nkey_store = \"plaintext\"\n").unwrap_err();
    assert_eq!(err.key, "models.key_store");
}

#[test]
fn an_extra_ca_file_must_be_an_absolute_path() {
    let config = load("[models]\nextra_ca_file = \"/etc/ssl/corp-ca.pem\"\n").unwrap();
    assert_eq!(
        config.models.extra_ca_file.as_deref(),
        Some(Path::new("/etc/ssl/corp-ca.pem"))
    );
    assert_eq!(
        MachineConfig::from_texts(None)
            .unwrap()
            .models
            .extra_ca_file,
        None
    );
    let err = load("[models]\nextra_ca_file = \"corp-ca.pem\"\n").unwrap_err();
    assert_eq!(err.key, "models.extra_ca_file");
    assert!(err.to_string().contains("not an absolute path"), "{err}");
}

#[test]
fn unknown_keys_are_refused() {
    let err = load("[sandbox]\nprovder = \"local\"\n").unwrap_err();
    assert!(err.to_string().contains("provder"), "{err}");
    let err = load("[models]\napi_key = \"sk-secret-value\"\n").unwrap_err();
    assert!(err.to_string().contains("api_key"), "{err}");
    assert!(
        !err.to_string().contains("sk-secret-value"),
        "the error must not echo a secret: {err}"
    );
}

#[test]
fn type_errors_name_the_key_but_never_echo_the_value() {
    let err = load("[sandbox]\nextra_hosts = \"ghp_pasted_token_value\"\n").unwrap_err();
    assert_eq!(err.key, "extra_hosts");
    assert!(err.problem.contains("line 2"), "{err}");
    assert!(!err.to_string().contains("ghp_pasted_token_value"), "{err}");
}

#[test]
fn openshell_without_a_gateway_is_refused() {
    let err = load("[sandbox]\nprovider = \"openshell\"\n").unwrap_err();
    assert_eq!(err.key, "openshell.gateway");
}

#[test]
fn credential_entries_name_files_not_secrets() {
    let config = load(
        "[[sandbox_credentials]]\nname = \"mytool\"\nsource = \".config/mytool\"\nhosts = [\"api.example.com\"]\n",
    )
    .unwrap();
    assert_eq!(config.credentials[0].source, ".config/mytool");
    assert_eq!(config.credentials[0].to_policy().unwrap().name, "mytool");
    let err = load(
        "[[sandbox_credentials]]\nname = \"escape\"\nsource = \"../../etc\"\nhosts = [\"a.example\"]\n",
    )
    .unwrap_err();
    assert_eq!(err.key, "sandbox_credentials[0]");
    let err =
        load("[[sandbox_credentials]]\nname = \"x\"\nsource = \".x\"\nhosts = []\n").unwrap_err();
    assert_eq!(err.key, "sandbox_credentials[0].hosts");
    let err = load(
        "[[sandbox_credentials]]\nname = \"x\"\nsource = \".x\"\nhosts = [\"a.example\"]\nvalue = \"ghp_secret\"\n",
    )
    .unwrap_err();
    assert!(!err.to_string().contains("ghp_secret"), "{err}");
}

#[test]
fn host_checks() {
    assert!(check_host("github.com").is_ok());
    assert!(check_host("example.com:8443").is_ok());
    assert!(check_host("example.com:0").is_err());
    assert!(check_host("example.com:99999").is_err());
    assert!(check_host("exa mple.com").is_err());
    assert!(check_host("").is_err());
}

#[test]
fn sandbox_limits_default_and_override_per_key() {
    use sandbox_provider::local::resources::{Amount, LimitSettings};

    let config = MachineConfig::from_texts(None).unwrap();
    assert_eq!(config.limits, LimitSettings::default());
    assert_eq!(config.proxy_limits.connections, 256);

    let config = load(
        "[sandbox.limits]\nmemory = \"4GiB\"\ncpus = 1.5\nprocesses = 512\nconnections = 64\n",
    )
    .unwrap();
    assert_eq!(
        config.limits,
        LimitSettings {
            processes: Amount::Exactly(512),
            memory: Amount::Exactly(4 << 30),
            swap: Amount::Exactly(0),
            cpus: Amount::Exactly(1500),
        }
    );
    assert_eq!(config.proxy_limits.connections, 64);
    let config = load("[sandbox.limits]\nmemory = \"unlimited\"\ncpus = \"50%\"\n").unwrap();
    assert_eq!(
        (config.limits.memory, config.limits.cpus),
        (Amount::Unlimited, Amount::Percent(50))
    );
}

#[test]
fn bad_sandbox_limits_name_the_key() {
    for (text, key, words) in [
        ("memory = \"4 parsecs\"", "sandbox.limits.memory", "unit"),
        ("cpus = \"lots\"", "sandbox.limits.cpus", "number of CPUs"),
        ("processes = 3", "sandbox.limits.processes", "16 or more"),
        ("swap = \"200%\"", "sandbox.limits.swap", "1% to 100%"),
        (
            "connections = 0",
            "sandbox.limits.connections",
            "from 1 to 65536",
        ),
    ] {
        let err = load(&format!("[sandbox.limits]\n{text}\n")).unwrap_err();
        assert_eq!(err.key, key, "{err}");
        assert!(err.to_string().contains(words), "{err}");
        assert!(err.file.ends_with("config.toml"), "{err}");
    }
    let err = load("[sandbox.limits]\ndisk = \"1G\"\n").unwrap_err();
    assert!(err.to_string().contains("disk"), "{err}");
}
