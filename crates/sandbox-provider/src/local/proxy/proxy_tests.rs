use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use protocol::NetworkDenial;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UnixStream};

use super::*;

/// A stand-in allow-list until `sandbox-policy`'s is wired: exact names and ports; every
/// address that is not plain public unicast refused.
#[derive(Debug)]
struct ListPolicy {
    hosts: Vec<(String, u16)>,
}

fn public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_documentation())
        }
        IpAddr::V6(v6) => !(v6.is_loopback() || v6.is_unspecified()),
    }
}

impl EgressPolicy for ListPolicy {
    fn profile(&self) -> String {
        "strict".into()
    }
    fn check_host(&self, host: &str, port: u16) -> Decision {
        if self.hosts.iter().any(|(h, p)| h == host && *p == port) {
            Decision::Allowed {
                rule: "profile_strict".into(),
            }
        } else {
            Decision::Denied {
                reason: format!("`{host}:{port}` is not on the allow list"),
            }
        }
    }
    fn check_ip(&self, _host: &str, _port: u16, ip: IpAddr) -> Decision {
        if public(ip) {
            Decision::Allowed {
                rule: "profile_strict".into(),
            }
        } else {
            Decision::Denied {
                reason: format!("{ip} is not a public address"),
            }
        }
    }
    fn describe(&self) -> String {
        format!("{:?}", self.hosts)
    }
}

const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// The fixture's bridge token (fixed, so requests can carry it).
fn token() -> BridgeToken {
    BridgeToken::from_hex_for_tests("5ec2e75ec2e75ec2e75ec2e75ec2e75e")
}

/// A TCP server on the host's loopback that answers every connection with what it read first.
async fn echo_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let n = stream.read(&mut buf).await.unwrap_or(0);
                let _ = stream
                    .write_all(format!("ECHO {}", String::from_utf8_lossy(&buf[..n])).as_bytes())
                    .await;
            });
        }
    });
    port
}

struct Fixture {
    config: ProxyConfig,
    port: u16,
    _dir: tempfile::TempDir,
    socket: std::path::PathBuf,
}

async fn fixture() -> Fixture {
    fixture_with(ProxyLimits::default(), DescriptorBudget::new(10_000)).await
}

async fn fixture_with(limits: ProxyLimits, budget: DescriptorBudget) -> Fixture {
    let port = echo_server().await;
    let policy = WithExplicitAddresses {
        inner: ListPolicy {
            hosts: vec![("rebind.test".into(), port), ("public.test".into(), 443)],
        },
        addresses: vec![ExplicitAddress {
            host: "allowed.test".into(),
            port,
            ip: LOOPBACK,
        }],
    };
    let resolver = StaticResolver::new()
        .with("allowed.test", &[LOOPBACK])
        .with("rebind.test", &[LOOPBACK]);
    let mut config = ProxyConfig::new(Arc::new(policy), Arc::new(resolver), DenialLog::default());
    config.bridge_token = Some(token());
    config.limits = limits;
    config.budget = budget;
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("proxy.sock");
    start(&socket, config.clone(), CancellationToken::new()).unwrap();
    Fixture {
        config,
        port,
        _dir: dir,
        socket,
    }
}

async fn exchange(f: &Fixture, request: &str) -> String {
    let mut stream = UnixStream::connect(&f.socket).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn tunnels_to_an_explicitly_named_loopback_server() {
    let f = fixture().await;
    let answer = exchange(
        &f,
        &format!(
            "CONNECT allowed.test:{0} HTTP/1.1\r\nHost: allowed.test:{0}\r\n\r\nhello",
            f.port
        ),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("ECHO hello"), "{answer}");
    assert!(f.config.denials.since(0).is_empty());
}

#[tokio::test]
async fn forwards_absolute_form_in_origin_form() {
    let f = fixture().await;
    let answer = exchange(&f, &format!("GET http://allowed.test:{0}/x HTTP/1.1\r\nHost: allowed.test:{0}\r\nProxy-Connection: keep-alive\r\n\r\n", f.port)).await;
    assert!(answer.starts_with("ECHO GET /x HTTP/1.1\r\n"), "{answer}");
    assert!(
        !answer.to_lowercase().contains("proxy-connection"),
        "{answer}"
    );
}

#[tokio::test]
async fn refuses_an_unlisted_host_with_403_and_records_it() {
    let f = fixture().await;
    let answer = exchange(
        &f,
        "PADDOCK-BRIDGE token=5ec2e75ec2e75ec2e75ec2e75ec2e75e program=/usr/bin/curl\nCONNECT blocked.test:443 HTTP/1.1\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden"), "{answer}");
    assert!(
        answer.contains("blocked.test:443") && answer.contains("profile strict"),
        "{answer}"
    );
    let denials = f.config.denials.since(0);
    assert_eq!(denials.len(), 1);
    assert_eq!(
        (denials[0].host.as_str(), denials[0].port),
        ("blocked.test", 443)
    );
    assert_eq!(denials[0].binary.as_deref(), Some("/usr/bin/curl"));
    assert_eq!(denials[0].rule.as_deref(), Some("policy:strict"));
}

#[tokio::test]
async fn refuses_dns_rebinding_to_loopback_without_an_explicit_rule() {
    let f = fixture().await;
    let answer = exchange(
        &f,
        &format!("CONNECT rebind.test:{} HTTP/1.1\r\n\r\n", f.port),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert!(answer.contains("127.0.0.1"), "{answer}");
    assert_eq!(
        f.config.denials.since(0)[0].rule.as_deref(),
        Some("engine:address")
    );
}

#[tokio::test]
async fn refuses_blocked_ip_literals() {
    let f = fixture().await;
    for target in [
        "127.0.0.1:22",
        "169.254.169.254:80",
        "10.0.0.1:443",
        "[::1]:443",
    ] {
        let answer = exchange(&f, &format!("CONNECT {target} HTTP/1.1\r\n\r\n")).await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{target}: {answer}");
    }
    assert_eq!(f.config.denials.since(0).len(), 4);
}

#[tokio::test]
async fn refuses_a_host_header_naming_another_host() {
    let f = fixture().await;
    let answer = exchange(
        &f,
        &format!(
            "GET http://allowed.test:{}/ HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
            f.port
        ),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert!(answer.contains("Host header"), "{answer}");
    assert_eq!(
        f.config.denials.since(0)[0].rule.as_deref(),
        Some("engine:host-header")
    );
}

#[tokio::test]
async fn answers_malformed_requests_with_400_and_unresolvable_names_with_502() {
    let f = fixture().await;
    let answer = exchange(&f, "GET / HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let answer = exchange(&f, "CONNECT public.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 502"), "{answer}");
    assert!(f.config.denials.since(0).is_empty());
}

#[tokio::test]
async fn only_a_preamble_with_the_walls_token_names_the_program() {
    let f = fixture().await;
    let request = "CONNECT blocked.test:443 HTTP/1.1\r\n\r\n";
    let cases = [
        (
            "no token",
            "PADDOCK-BRIDGE program=/usr/bin/git-FORGED\n",
            None,
        ),
        (
            "a wrong token",
            "PADDOCK-BRIDGE token=00000000000000000000000000000000 program=/usr/bin/git-FORGED\n",
            None,
        ),
        (
            "a truncated token",
            "PADDOCK-BRIDGE token=5ec2e75ec2e75ec2e75ec2e75ec2e75 program=/usr/bin/git-FORGED\n",
            None,
        ),
        ("no preamble", "", None),
        (
            "the wall's token",
            "PADDOCK-BRIDGE token=5ec2e75ec2e75ec2e75ec2e75ec2e75e program=/usr/bin/curl\n",
            Some("/usr/bin/curl"),
        ),
        (
            "the wall's token, program not found",
            "PADDOCK-BRIDGE token=5ec2e75ec2e75ec2e75ec2e75ec2e75e program=-\n",
            None,
        ),
    ];
    for (name, preamble, program) in cases {
        let mark = f.config.denials.mark();
        let answer = exchange(&f, &format!("{preamble}{request}")).await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{name}: {answer}");
        let denials = f.config.denials.since(mark);
        assert_eq!(denials.len(), 1, "{name}: {denials:?}");
        assert_eq!(denials[0].binary.as_deref(), program, "{name}");
    }
    // A second preamble (a command's, behind the bridge's) is part of the request: malformed.
    let answer = exchange(
        &f,
        &format!(
            "PADDOCK-BRIDGE token=5ec2e75ec2e75ec2e75ec2e75ec2e75e program=/usr/bin/python3\n\
             PADDOCK-BRIDGE token=5ec2e75ec2e75ec2e75ec2e75ec2e75e program=/usr/bin/git-FORGED\n{request}"
        ),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
}

/// Waits until the proxy has closed every connection (it notices a client's end on its own).
async fn until_idle(f: &Fixture) {
    for _ in 0..500 {
        if f.config.stats.open() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{} connections stay open", f.config.stats.open());
}

#[tokio::test]
async fn connections_over_the_walls_limit_are_answered_503_and_recorded() {
    let f = fixture_with(
        ProxyLimits { connections: 2 },
        DescriptorBudget::new(10_000),
    )
    .await;
    let held = [
        UnixStream::connect(&f.socket).await.unwrap(),
        UnixStream::connect(&f.socket).await.unwrap(),
    ];
    let answer = exchange(
        &f,
        &format!(
            "PADDOCK-BRIDGE token=5ec2e75ec2e75ec2e75ec2e75ec2e75e program=/usr/bin/curl\n\
             CONNECT allowed.test:{} HTTP/1.1\r\n\r\n",
            f.port
        ),
    )
    .await;
    assert!(
        answer.starts_with("HTTP/1.1 503 Service Unavailable"),
        "{answer}"
    );
    assert!(
        answer.contains("already has 2 connections open through the proxy, its limit"),
        "{answer}"
    );
    let denials = f.config.denials.since(0);
    assert_eq!(denials.len(), 1, "{denials:?}");
    assert_eq!(
        denials[0].rule.as_deref(),
        Some(NetworkDenial::CONNECTION_LIMIT_RULE)
    );
    assert_eq!(
        (denials[0].host.as_str(), denials[0].binary.as_deref()),
        ("allowed.test", Some("/usr/bin/curl"))
    );
    assert_eq!(f.config.stats.refused(), 1);

    drop(held);
    until_idle(&f).await;
    let answer = exchange(
        &f,
        &format!("CONNECT allowed.test:{} HTTP/1.1\r\n\r\nhello", f.port),
    )
    .await;
    assert!(answer.ends_with("ECHO hello"), "{answer}");
}

#[tokio::test]
async fn walls_share_the_hosts_descriptor_budget() {
    // Room for two connections in all (two descriptors each), and one place to refuse.
    let budget = DescriptorBudget::new(5);
    let a = fixture_with(ProxyLimits::default(), budget.clone()).await;
    let b = fixture_with(ProxyLimits::default(), budget).await;
    let held = [
        UnixStream::connect(&a.socket).await.unwrap(),
        UnixStream::connect(&a.socket).await.unwrap(),
    ];
    while a.config.stats.open() < 2 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let answer = exchange(&b, "CONNECT blocked.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        answer.contains("every file descriptor they may use"),
        "{answer}"
    );
    drop(held);
    until_idle(&a).await;
    let answer = exchange(&b, "CONNECT blocked.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
}

#[tokio::test]
async fn over_the_limit_with_no_place_to_answer_a_connection_is_closed_at_once() {
    let f = fixture_with(
        ProxyLimits { connections: 1 },
        DescriptorBudget::new(10_000),
    )
    .await;
    let _held = UnixStream::connect(&f.socket).await.unwrap();
    // Fill the refusal lane with clients that send nothing.
    let mut lane = Vec::new();
    for _ in 0..REFUSAL_LANE {
        lane.push(UnixStream::connect(&f.socket).await.unwrap());
    }
    while f.config.stats.refused() < REFUSAL_LANE as u64 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let answer = exchange(&f, "CONNECT blocked.test:443 HTTP/1.1\r\n\r\n").await;
    assert_eq!(answer, "", "closed without an answer");
    assert_eq!(f.config.stats.refused(), REFUSAL_LANE as u64 + 1);
}
