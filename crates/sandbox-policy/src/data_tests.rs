use std::net::{IpAddr, Ipv4Addr};

use super::*;
use crate::ip_class::{AddressClass, classify};

fn builtin() -> SandboxData {
    SandboxData::builtin().expect("config/sandbox.toml parses and passes its checks")
}

fn hosts(profile: &NetworkProfile) -> Vec<String> {
    profile.hosts.iter().map(ToString::to_string).collect()
}

#[test]
fn strict_has_code_hosts_and_registries_on_443() {
    let data = builtin();
    let strict = data.profile(NetworkProfileName::Strict).unwrap();
    for host in [
        "github.com:443",
        "gitlab.com:443",
        "pypi.org:443",
        "registry.npmjs.org:443",
        "crates.io:443",
        "static.crates.io:443",
        "index.crates.io:443",
        "proxy.golang.org:443",
        "sum.golang.org:443",
    ] {
        assert!(hosts(strict).contains(&host.to_owned()), "{host}");
    }
    assert!(strict.open.is_none());
}

#[test]
fn standard_is_strict_plus_search_apis() {
    let data = builtin();
    let strict = hosts(data.profile(NetworkProfileName::Strict).unwrap());
    let standard = hosts(data.profile(NetworkProfileName::Standard).unwrap());
    assert!(strict.iter().all(|host| standard.contains(host)));
    for search in [
        "api.search.brave.com:443",
        "api.tavily.com:443",
        "api.duckduckgo.com:443",
    ] {
        assert!(standard.contains(&search.to_owned()), "{search}");
        assert!(!strict.contains(&search.to_owned()), "{search}");
    }
}

/// The open profile's networks are exactly public IPv4 unicast: they avoid every address the
/// classifier calls blocked or private (LAN, CGNAT), and cover every public /8's worth of space
/// but those. Checked by sampling every /16 of the IPv4 space at both ends.
#[test]
fn open_networks_are_public_ipv4_only_and_cover_it() {
    let data = builtin();
    let open = data
        .profile(NetworkProfileName::Open)
        .unwrap()
        .open
        .clone()
        .unwrap();
    assert_eq!(open.ports, [80, 443]);
    let inside = |ip: IpAddr| open.networks.iter().any(|n| n.contains(ip));
    for high in 0u32..=0xffff {
        for low in [0u32, 0xffff] {
            let ip = IpAddr::V4(Ipv4Addr::from((high << 16) | low));
            let lan_or_blocked = match classify(ip) {
                AddressClass::AlwaysBlocked(_) => true,
                AddressClass::NonPublic(what) => {
                    what.starts_with("private") || what.starts_with("shared")
                }
                AddressClass::Public => false,
            };
            if lan_or_blocked {
                assert!(
                    !inside(ip),
                    "{ip} is not public but the open profile allows it"
                );
            } else if classify(ip) == AddressClass::Public {
                assert!(inside(ip), "{ip} is public but the open profile misses it");
            }
        }
    }
}

#[test]
fn companions_come_with_their_key_host() {
    let data = builtin();
    let companions = data.companions.of("github.com");
    for host in [
        "api.github.com",
        "codeload.github.com",
        "objects.githubusercontent.com",
        "raw.githubusercontent.com",
    ] {
        assert!(companions.contains(&host.to_owned()), "{host}");
    }
    assert_eq!(data.companions.of("pypi.org"), ["files.pythonhosted.org"]);
    assert!(
        data.companions
            .of("huggingface.co")
            .contains(&"cdn-lfs.huggingface.co".to_owned())
    );
    assert!(data.companions.of("example.com").is_empty());
}

#[test]
fn builtin_credential_entries_carry_their_hosts() {
    let data = builtin();
    assert_eq!(data.credential_names(), ["aws", "gh", "kube", "ssh"]);
    let ssh = data.credential("ssh").unwrap();
    let shown: Vec<String> = ssh.hosts.iter().map(ToString::to_string).collect();
    assert_eq!(shown, ["github.com:22 (tcp)", "gitlab.com:22 (tcp)"]);
    assert!(ssh.exclude.contains(&"authorized_keys".to_owned()));
    let gh = data.credential("gh").unwrap();
    assert_eq!(gh.source, ".config/gh");
    let aws = data.credential("aws").unwrap();
    assert_eq!(aws.files_to_copy(), ["config"]);
    assert_eq!(
        aws.clone().with_optional_files().files_to_copy(),
        ["config", "credentials"]
    );
    assert_eq!(aws.hosts[0].to_string(), "*.amazonaws.com:443");
    let kube = data.credential("kube").unwrap();
    assert!(kube.hosts_from_kubeconfig && kube.hosts.is_empty());
    let error = data.credential("gpg").unwrap_err().to_string();
    assert!(error.contains("gpg") && error.contains("ssh"), "{error}");
}

#[test]
fn known_secrets_have_hosts_and_unknown_ones_say_so() {
    let data = builtin();
    assert_eq!(
        data.known_secret_names(),
        [
            "ANTHROPIC_API_KEY",
            "GH_TOKEN",
            "GITHUB_TOKEN",
            "HF_TOKEN",
            "NPM_TOKEN",
            "OPENAI_API_KEY"
        ]
    );
    let github = data.known_secret("GITHUB_TOKEN").unwrap();
    assert_eq!(github.hosts.len(), 2);
    assert!(!github.hosts_named_by_user);
    let error = data.known_secret("MY_TOKEN").unwrap_err().to_string();
    assert!(
        error.contains("MY_TOKEN") && error.contains("name them"),
        "{error}"
    );
}

#[test]
fn bad_data_is_refused_with_the_field() {
    let base = include_str!("../../../config/sandbox.toml");
    for (from, to, why) in [
        ("\"gitlab.com\",\n", "\"*.com\",\n", "top-level-domain"),
        (
            "extends = \"strict\"",
            "extends = \"nope\"",
            "unknown profile",
        ),
        ("\"1.0.0.0/8\",", "\"127.0.0.0/8\",", "loopback"),
        ("source = \".ssh\"", "source = \"/root/.ssh\"", "relative"),
        (
            "\"gitlab.com:22\"]\nprotocol = \"tcp\"",
            "\"gitlab.com:22\"]\nprotocol = \"udp\"",
            "not supported",
        ),
        ("[baseline]", "[baseline]\nsurprise = 1", "unknown field"),
        ("GITHUB_TOKEN =", "GITHUB-TOKEN =", "must match"),
    ] {
        assert!(base.contains(from), "fixture text missing: {from}");
        let error = SandboxData::parse(&base.replacen(from, to, 1))
            .map(|_| format!("accepted: {from} -> {to}"))
            .unwrap_or_else(|e| e.to_string());
        assert!(error.contains(why), "{from} -> {to}: {error}");
    }
}
