//! The allow-list under attack: every way to name a forbidden destination must be refused.

use super::*;
use crate::data::SandboxData;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn list(profile: &str, extra: &[&str]) -> NetworkAllowList {
    let data = SandboxData::builtin().unwrap();
    let extra: Vec<HostRule> = extra.iter().map(|h| HostRule::parse(h).unwrap()).collect();
    NetworkAllowList::resolve(
        data.profile_named(profile).unwrap(),
        &extra,
        &[],
        &[],
        &data.companions,
    )
    .unwrap()
}

fn assert_denied(decision: Decision, why: &str) {
    match decision {
        Decision::Denied { reason } => {
            assert!(reason.contains(why), "reason {reason:?} lacks {why:?}")
        }
        allowed => panic!("expected a denial ({why}), got {allowed:?}"),
    }
}

fn assert_allowed(decision: Decision, rule: &str) {
    match decision {
        Decision::Allowed { rule: allowed } => assert_eq!(allowed, rule),
        denied => panic!("expected rule {rule} to allow, got {denied:?}"),
    }
}

#[test]
fn profile_hosts_and_companions_are_allowed_by_name() {
    let strict = list("strict", &[]);
    assert_allowed(strict.check_host("github.com", 443), "profile_strict");
    assert_allowed(strict.check_host("api.github.com", 443), "profile_strict");
    assert_allowed(
        strict.check_host("files.pythonhosted.org", 443),
        "profile_strict",
    );
    assert_allowed(
        strict.check_ip("github.com", 443, ip("140.82.112.3")),
        "profile_strict",
    );
}

#[test]
fn case_and_a_trailing_dot_do_not_matter() {
    let strict = list("strict", &[]);
    assert_allowed(strict.check_host("GitHub.COM", 443), "profile_strict");
    assert_allowed(strict.check_host("github.com.", 443), "profile_strict");
    assert_allowed(
        strict.check_ip("GITHUB.com.", 443, ip("140.82.112.3")),
        "profile_strict",
    );
}

#[test]
fn suffix_and_prefix_tricks_are_refused() {
    let strict = list("strict", &[]);
    for host in [
        "evil.com.github.com",
        "github.com.evil.com",
        "evilgithub.com",
        "github.co",
        "xgithub.com",
        "github.com..",
        "github.com:443",
        "github .com",
    ] {
        assert!(!strict.check_host(host, 443).is_allowed(), "{host}");
    }
    assert_denied(
        strict.check_host("github.com.evil.com", 443),
        "not on the allow list",
    );
}

#[test]
fn port_mismatch_is_refused_and_says_which_ports_are_allowed() {
    let strict = list("strict", &[]);
    assert_denied(strict.check_host("github.com", 22), "port 443 only, not 22");
    assert_denied(strict.check_host("github.com", 80), "port 443 only");
    assert_denied(
        strict.check_ip("pypi.org", 8443, ip("151.101.0.223")),
        "port 443 only",
    );
}

#[test]
fn non_ascii_and_non_canonical_numeric_hosts_are_refused() {
    let open = list("open", &[]);
    assert_denied(open.check_host("gïthub.com", 443), "punycode");
    for host in [
        "2130706433",
        "0177.0.0.1",
        "0x7f.0.0.1",
        "127.1",
        "0x7f000001",
        "017700000001",
    ] {
        assert_denied(open.check_host(host, 443), "non-canonical");
    }
}

#[test]
fn loopback_metadata_and_unspecified_are_refused_even_when_open() {
    let open = list("open", &[]);
    for (host, why) in [
        ("127.0.0.1", "loopback"),
        ("[::1]", "loopback"),
        ("::1", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("[::]", "unspecified"),
        ("169.254.169.254", "link-local"),
        ("[::ffff:127.0.0.1]", "loopback"),
        ("[::ffff:169.254.169.254]", "link-local"),
        ("[fe80::1]", "link-local"),
        ("224.0.0.251", "multicast"),
        ("255.255.255.255", "broadcast"),
    ] {
        assert_denied(open.check_host(host, 80), why);
        assert_denied(open.check_host(host, 443), why);
    }
}

#[test]
fn a_name_resolving_to_a_blocked_or_private_address_is_refused() {
    let strict = list("strict", &[]);
    // DNS rebinding: an allowed name pointing inside.
    assert_denied(
        strict.check_ip("github.com", 443, ip("127.0.0.1")),
        "loopback",
    );
    assert_denied(
        strict.check_ip("github.com", 443, ip("169.254.169.254")),
        "link-local",
    );
    assert_denied(
        strict.check_ip("github.com", 443, ip("::ffff:127.0.0.1")),
        "loopback",
    );
    assert_denied(
        strict.check_ip("github.com", 443, ip("10.0.0.8")),
        "private",
    );
    assert_denied(
        strict.check_ip("github.com", 443, ip("192.168.1.1")),
        "private",
    );
    assert_denied(
        strict.check_ip("github.com", 443, ip("100.64.0.1")),
        "CGNAT",
    );
    assert_denied(
        strict.check_ip("github.com", 443, ip("fd12::1")),
        "unique local",
    );
    assert_denied(
        strict.check_ip("github.com", 443, ip("0.0.0.0")),
        "unspecified",
    );
    let open = list("open", &[]);
    assert_denied(
        open.check_ip("intranet.example", 443, ip("10.1.2.3")),
        "private",
    );
    assert_denied(open.check_ip("x.example", 443, ip("172.16.0.1")), "private");
}

#[test]
fn an_address_literal_must_match_the_connection() {
    let open = list("open", &[]);
    assert_denied(open.check_ip("1.1.1.1", 443, ip("127.0.0.1")), "literal");
    assert_allowed(open.check_ip("1.1.1.1", 443, ip("1.1.1.1")), OPEN_RULE);
}

#[test]
fn the_open_profile_allows_public_ipv4_on_80_and_443_only() {
    let open = list("open", &[]);
    assert_allowed(open.check_host("example.org", 443), OPEN_RULE);
    assert_allowed(
        open.check_ip("example.org", 80, ip("93.184.215.14")),
        OPEN_RULE,
    );
    assert_denied(open.check_host("example.org", 22), "not on the allow list");
    assert_denied(
        open.check_ip("example.org", 8080, ip("93.184.215.14")),
        "not on the allow list",
    );
    assert_denied(
        open.check_ip("example.org", 443, ip("2606:2800:21f::1")),
        "public IPv4",
    );
}

#[test]
fn extra_hosts_the_user_named_may_be_private_but_their_companions_may_not() {
    let strict = list(
        "strict",
        &[
            "intranet.corp.example:8443",
            "huggingface.co",
            "10.9.0.0/16:5432",
        ],
    );
    assert_allowed(
        strict.check_ip("intranet.corp.example", 8443, ip("10.9.8.7")),
        "extra_hosts",
    );
    assert_allowed(
        strict.check_ip("huggingface.co", 443, ip("10.0.0.1")),
        "extra_hosts",
    );
    assert_denied(
        strict.check_ip("cdn-lfs.huggingface.co", 443, ip("10.0.0.1")),
        "private",
    );
    assert_allowed(
        strict.check_ip("cdn-lfs.huggingface.co", 443, ip("18.1.2.3")),
        "extra_hosts",
    );
    // An address rule allows any name that resolves inside it, on its port only.
    assert_allowed(
        strict.check_host("db.internal.example", 5432),
        "extra_hosts",
    );
    assert_allowed(
        strict.check_ip("db.internal.example", 5432, ip("10.9.1.1")),
        "extra_hosts",
    );
    assert_denied(
        strict.check_ip("db.internal.example", 5432, ip("10.10.1.1")),
        "private",
    );
    assert_denied(
        strict.check_ip("db.internal.example", 5433, ip("10.9.1.1")),
        "private",
    );
}

#[test]
fn wildcard_rules_never_allow_private_addresses() {
    let data = SandboxData::builtin().unwrap();
    let aws = data.credential("aws").unwrap();
    let allow = NetworkAllowList::resolve(
        data.profile_named("strict").unwrap(),
        &[],
        &[aws],
        &[],
        &data.companions,
    )
    .unwrap();
    assert_allowed(allow.check_host("s3.amazonaws.com", 443), "credential_aws");
    assert_denied(
        allow.check_host("a.b.amazonaws.com", 443),
        "not on the allow list",
    );
    assert_denied(
        allow.check_host("amazonaws.com", 443),
        "not on the allow list",
    );
    assert_denied(
        allow.check_ip("s3.amazonaws.com", 443, ip("10.0.0.1")),
        "private",
    );
}

#[test]
fn credentials_and_secrets_take_precedence_and_hosts_appear_once() {
    let data = SandboxData::builtin().unwrap();
    let ssh = data.credential("ssh").unwrap();
    let gh = data.credential("gh").unwrap();
    let secret = data.known_secret("GITHUB_TOKEN").unwrap();
    let allow = NetworkAllowList::resolve(
        data.profile_named("strict").unwrap(),
        &[HostRule::parse("github.com").unwrap()],
        &[ssh, gh],
        &[secret],
        &data.companions,
    )
    .unwrap();
    assert_allowed(allow.check_host("github.com", 443), "secret_github_token");
    assert_allowed(
        allow.check_host("api.github.com", 443),
        "secret_github_token",
    );
    assert_allowed(allow.check_host("github.com", 22), "credential_ssh");
    assert_allowed(allow.check_host("codeload.github.com", 443), "extra_hosts");
    let mut seen = BTreeSet::new();
    for rule in allow.rules() {
        for endpoint in &rule.endpoints {
            assert!(
                seen.insert(endpoint.host.to_string()),
                "{} appears twice",
                endpoint.host
            );
        }
    }
    let keys: Vec<&str> = allow.rules().iter().map(|r| r.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "secret_github_token",
            "credential_ssh",
            "extra_hosts",
            "profile_strict"
        ]
    );
}

#[test]
fn a_kube_entry_without_its_kubeconfig_is_an_error() {
    let data = SandboxData::builtin().unwrap();
    let kube = data.credential("kube").unwrap();
    let error = NetworkAllowList::resolve(
        data.profile_named("strict").unwrap(),
        &[],
        &[kube],
        &[],
        &data.companions,
    )
    .unwrap_err();
    assert!(error.to_string().contains("with_kubeconfig"), "{error}");
}
