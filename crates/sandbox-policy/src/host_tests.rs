use super::*;

fn rule(text: &str) -> HostRule {
    HostRule::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn refused(text: &str) -> String {
    match HostRule::parse(text) {
        Ok(rule) => panic!("{text} was accepted as {rule:?}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn names_are_lower_cased_without_trailing_dot_and_get_port_443() {
    let parsed = rule("GitHub.COM.");
    assert_eq!(parsed.pattern, HostPattern::Exact("github.com".into()));
    assert_eq!(parsed.port, 443);
    assert_eq!(parsed.transport, Transport::Proxy);
    assert_eq!(rule("example.com:8443").port, 8443);
    assert_eq!(rule("example.com:8443").to_string(), "example.com:8443");
}

#[test]
fn wildcards_only_as_the_whole_first_label_with_three_labels() {
    assert_eq!(
        rule("*.amazonaws.com").pattern,
        HostPattern::OneLabel("amazonaws.com".into())
    );
    assert_eq!(
        rule("**.example.org:80").pattern,
        HostPattern::AnyLabels("example.org".into())
    );
    for (bad, why) in [
        ("*", "first label"),
        ("**", "first label"),
        ("*.com", "top-level-domain"),
        ("**.com", "top-level-domain"),
        ("api.*.com", "first label"),
        ("a*.example.com", "first label"),
        ("*.*.example.com", "first label"),
        ("*.10.0.0.1", "not addresses"),
    ] {
        let error = refused(bad);
        assert!(error.contains(why), "{bad}: {error}");
    }
}

#[test]
fn one_label_and_any_label_wildcards_match_as_documented() {
    let one = HostPattern::OneLabel("example.com".into());
    assert!(one.matches_name("a.example.com"));
    assert!(!one.matches_name("a.b.example.com"));
    assert!(!one.matches_name("example.com"));
    assert!(!one.matches_name("evilexample.com"));
    let any = HostPattern::AnyLabels("example.com".into());
    assert!(any.matches_name("a.b.example.com"));
    assert!(!any.matches_name("example.com"));
    assert!(!any.matches_name("a.example.com.evil.net"));
}

#[test]
fn addresses_and_networks_become_address_rules() {
    let single = rule("10.0.0.5:8080");
    assert_eq!(single.port, 8080);
    assert_eq!(single.to_string(), "10.0.0.5:8080");
    let network = rule("10.0.0.0/24");
    assert_eq!(network.to_string(), "10.0.0.0/24:443");
    let v6 = rule("[2001:db8::1]:8443");
    assert_eq!(v6.to_string(), "[2001:db8::1]:8443");
    assert_eq!(rule("2001:db8::/32").to_string(), "[2001:db8::/32]:443");
    assert!(refused("10.0.0.1/24").contains("host bits"));
    assert!(refused("10.0.0.0/33").contains("prefix"));
}

#[test]
fn bad_ports_and_odd_forms_are_refused_with_the_reason() {
    for (bad, why) in [
        ("example.com:0", "1 to 65535"),
        ("example.com:65536", "1 to 65535"),
        ("example.com:", "number"),
        ("example.com:+1", "number"),
        ("exa mple.com", "characters"),
        ("-bad.example.com", "`-`"),
        ("bücher.de", "ASCII"),
        ("2130706433", "non-canonical"),
        ("0177.0.0.1", "non-canonical"),
        ("127.1", "non-canonical"),
        ("0x7f.0.0.1", "non-canonical"),
        ("a..b.com", "empty label"),
        ("[::1", "`]`"),
        ("https://example.com", "URL"),
        ("http://example.com:8080/path", "URL"),
    ] {
        let error = refused(bad);
        assert!(error.contains(why), "{bad}: {error}");
    }
}

#[test]
fn normalize_host_reads_literals_and_refuses_zone_ids() {
    assert_eq!(
        normalize_host("[::1]").unwrap(),
        NormalHost::Ip("::1".parse().unwrap())
    );
    assert_eq!(
        normalize_host("::ffff:127.0.0.1").unwrap(),
        NormalHost::Ip("::ffff:127.0.0.1".parse().unwrap())
    );
    assert_eq!(
        normalize_host("127.0.0.1.").unwrap(),
        NormalHost::Ip("127.0.0.1".parse().unwrap())
    );
    assert!(normalize_host("[fe80::1%eth0]").is_err());
    assert!(normalize_host("").is_err());
    assert!(normalize_host(".").is_err());
}

#[test]
fn cidr_containment_and_overlap() {
    let ten = Cidr::parse("10.0.0.0/8").unwrap();
    assert!(ten.contains("10.255.0.1".parse().unwrap()));
    assert!(!ten.contains("11.0.0.1".parse().unwrap()));
    assert!(
        !ten.contains("::ffff:10.0.0.1".parse().unwrap()),
        "families differ"
    );
    assert!(ten.overlaps(&Cidr::parse("10.1.0.0/16").unwrap()));
    assert!(!ten.overlaps(&Cidr::parse("11.0.0.0/8").unwrap()));
    let everything = Cidr::parse("0.0.0.0/0").unwrap();
    assert!(everything.contains("203.0.113.9".parse().unwrap()));
    let v6 = Cidr::parse("fe80::/10").unwrap();
    assert!(v6.contains("febf::1".parse().unwrap()));
    assert!(!v6.contains("fec0::1".parse().unwrap()));
}
