//! Escape suite, network: every way out but the proxy is closed, and the proxy refuses what the
//! allow-list does not name. Attacks run through the real tool-runner inside the local wall;
//! servers and sockets are the test's own, on this machine only.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use crate::support;

use std::io::{Read, Write};
use std::net::{IpAddr, TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use sandbox_provider::Sandbox;
use sandbox_provider::local::proxy::StaticResolver;
use support::*;

/// A TCP server on `address` counting the connections it accepted.
fn counting_server(address: &str) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind(address).unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            counter.fetch_add(1, Ordering::SeqCst);
            let mut stream = stream;
            let mut buf = [0u8; 1024];
            let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
            let n = stream.read(&mut buf).unwrap_or(0);
            let _ = stream.write_all(b"HTTP/1.0 200 OK\r\n\r\nREACHED ");
            let _ = stream.write_all(&buf[..n]);
        }
    });
    (port, hits)
}

/// This machine's own non-loopback IPv4 addresses (from the kernel's local routing table).
fn own_addresses() -> Vec<IpAddr> {
    let trie = std::fs::read_to_string("/proc/net/fib_trie").unwrap();
    let lines: Vec<&str> = trie.lines().collect();
    let mut found = Vec::new();
    for pair in lines.windows(2) {
        if pair[1].contains("/32 host LOCAL")
            && let Some(ip) = pair[0]
                .trim()
                .trim_start_matches("|-- ")
                .parse::<IpAddr>()
                .ok()
            && !ip.is_loopback()
            && !found.contains(&ip)
        {
            found.push(ip);
        }
    }
    found
}

/// Runs a python3 script inside; returns stdout+stderr and asserts python itself ran.
async fn python(s: &dyn Sandbox, script: &str) -> String {
    let r = bash(s, &format!("python3 - <<'PY'\n{script}\nPY")).await;
    let out = format!("{}{}", stdout(&r), stderr(&r));
    assert!(
        !out.contains("command not found"),
        "python3 is missing inside the wall: {out}"
    );
    out
}

/// Opens a socket of `family, kind, proto`; prints REFUSED with the error or ESCAPED.
fn socket_attempt(family: &str, kind: &str, proto: &str) -> String {
    format!(
        "import socket\ntry:\n    socket.socket({family}, {kind}, {proto})\n    print('ESCAPED')\nexcept OSError as e:\n    print('REFUSED', e)"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn sockets_other_than_the_proxy_are_closed() {
    let w = world();
    let s = w.start().await;
    let s = s.as_ref();
    let attempts = [
        (
            "raw ICMP socket",
            "socket.AF_INET",
            "socket.SOCK_RAW",
            "socket.IPPROTO_ICMP",
        ),
        (
            "raw IPv6 socket",
            "socket.AF_INET6",
            "socket.SOCK_RAW",
            "58",
        ),
        (
            "raw TCP socket",
            "socket.AF_INET",
            "socket.SOCK_RAW",
            "socket.IPPROTO_TCP",
        ),
        (
            "ICMP ping socket",
            "socket.AF_INET",
            "socket.SOCK_DGRAM",
            "socket.IPPROTO_ICMP",
        ),
        ("packet socket", "17", "socket.SOCK_RAW", "0"),
        ("netlink audit", "socket.AF_NETLINK", "socket.SOCK_RAW", "9"),
        (
            "netlink uevent",
            "socket.AF_NETLINK",
            "socket.SOCK_RAW",
            "15",
        ),
        ("vsock", "40", "socket.SOCK_STREAM", "0"),
        ("bluetooth", "31", "socket.SOCK_STREAM", "0"),
        ("kernel crypto", "38", "socket.SOCK_SEQPACKET", "0"),
    ];
    for (name, family, kind, proto) in attempts {
        let out = python(s, &socket_attempt(family, kind, proto)).await;
        assert!(
            out.contains("REFUSED") && out.contains("Operation not permitted"),
            "{name}: {out}"
        );
        assert!(!out.contains("ESCAPED"), "{name}: {out}");
    }
    // What tools do need still works: TCP, UDP, unix sockets and netlink route.
    let out = python(
        s,
        &socket_attempt("socket.AF_NETLINK", "socket.SOCK_RAW", "0"),
    )
    .await;
    assert!(
        out.contains("ESCAPED"),
        "NETLINK_ROUTE must stay available: {out}"
    );
    s.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn direct_connections_never_leave_the_wall() {
    let (loopback_port, loopback_hits) = counting_server("127.0.0.1:0");
    let (any_port, any_hits) = counting_server("0.0.0.0:0");
    let dns = UdpSocket::bind("0.0.0.0:0").unwrap();
    let dns_port = dns.local_addr().unwrap().port();
    dns.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let w = world();
    let s = w.start().await;
    let s = s.as_ref();

    let out = refused_bash(
        s,
        &format!("echo ESCAPED > /dev/tcp/127.0.0.1/{loopback_port}"),
    )
    .await;
    assert!(out.contains("Connection refused"), "host loopback: {out}");
    refused_bash(s, "exec 3<>/dev/tcp/example.com/80 && echo ESCAPED").await;
    let own = own_addresses();
    assert!(
        !own.is_empty(),
        "this machine has no non-loopback address to aim at"
    );
    for ip in &own {
        let out = refused_bash(s, &format!("echo ESCAPED > /dev/tcp/{ip}/{any_port}")).await;
        assert!(out.contains("unreachable"), "direct connect to {ip}: {out}");
        let out = python(s, &format!(
            "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.settimeout(1)\n\
             query = bytes.fromhex('abcd01000001000000000000076578616d706c6503636f6d0000010001')\n\
             try:\n    s.sendto(query, ('{ip}', {dns_port}))\n    print('ESCAPED', s.recvfrom(512))\n\
             except OSError as e:\n    print('REFUSED', e)"
        )).await;
        assert!(
            out.contains("REFUSED") && !out.contains("ESCAPED"),
            "DNS to {ip}: {out}"
        );
    }
    let out = python(s, "import socket\ntry:\n    print('ESCAPED', socket.gethostbyname('example.com'))\nexcept OSError as e:\n    print('REFUSED', e)").await;
    assert!(out.contains("REFUSED"), "system DNS lookup: {out}");
    let out = refused_bash(
        s,
        &format!(
            "curl --noproxy '*' -sS -m 3 http://{}:{any_port}/ && echo ESCAPED",
            own[0]
        ),
    )
    .await;
    assert!(!out.contains("REACHED"), "curl bypassing the proxy: {out}");
    let r = bash(s, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '").await;
    assert_eq!(
        stdout(&r).trim(),
        "lo",
        "interfaces other than loopback exist"
    );

    assert_eq!(
        loopback_hits.load(Ordering::SeqCst),
        0,
        "the host's loopback server was reached"
    );
    assert_eq!(
        any_hits.load(Ordering::SeqCst),
        0,
        "the host's server was reached directly"
    );
    let mut buf = [0u8; 512];
    assert!(
        dns.recv_from(&mut buf).is_err(),
        "the outside resolver received a query"
    );
    s.close().await.unwrap();
}

async fn refused_bash(s: &dyn Sandbox, command: &str) -> String {
    let r = bash(s, command).await;
    let out = format!("{}{}", stdout(&r), stderr(&r));
    assert_ne!(r.exit_code, Some(0), "{command}: succeeded: {out}");
    assert!(!out.contains("ESCAPED"), "{command}: {out}");
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn the_hosts_unix_sockets_are_unreachable() {
    let w = world();
    let docker = w.outside().join("docker.sock");
    let dbus = w.outside().join("dbus-session.sock");
    let _docker = UnixListener::bind(&docker).unwrap();
    let _dbus = UnixListener::bind(&dbus).unwrap();
    let abstract_name = format!("paddock-test-bus-{}", std::process::id());
    let address =
        <std::os::unix::net::SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(
            abstract_name.as_bytes(),
        )
        .unwrap();
    let _abstract = UnixListener::bind_addr(&address).unwrap();
    let s = w.start().await;
    let s = s.as_ref();
    for path in [&docker, &dbus] {
        let out = python(s, &format!(
            "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect({:?})\n    print('ESCAPED')\nexcept OSError as e:\n    print('REFUSED', e)",
            path.display().to_string()
        )).await;
        assert!(
            out.contains("REFUSED") && out.contains("No such file"),
            "{}: {out}",
            path.display()
        );
    }
    for path in [
        "/run/docker.sock",
        "/var/run/docker.sock",
        "/run/dbus/system_bus_socket",
    ] {
        let out = python(s, &format!(
            "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect({path:?})\n    print('ESCAPED')\nexcept OSError as e:\n    print('REFUSED', e)"
        )).await;
        assert!(out.contains("REFUSED"), "{path}: {out}");
    }
    let out = python(s, &format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect('\\0{abstract_name}')\n    print('ESCAPED')\nexcept OSError as e:\n    print('REFUSED', e)"
    )).await;
    assert!(
        out.contains("REFUSED"),
        "abstract socket of the host: {out}"
    );
    s.close().await.unwrap();
}

/// Sends `request` to the bridge inside and returns the proxy's status line.
fn through_proxy(request: &str) -> String {
    format!(
        "import socket\ns = socket.create_connection(('127.0.0.1', 3128), timeout=5)\n\
         s.sendall({request:?}.encode())\ndata = b''\n\
         while True:\n    chunk = s.recv(4096)\n    if not chunk: break\n    data += chunk\n\
         print(data.decode(errors='replace'))"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn proxy_tricks_are_refused_and_reported() {
    let (port, hits) = counting_server("127.0.0.1:0");
    let w = world_with(WorldOptions {
        loopback_hosts: vec![("allowed.test".into(), port)],
        extra_hosts: vec![format!("rebind.test:{port}")],
        resolver: StaticResolver::new()
            .with("allowed.test", &[LOOPBACK])
            .with("rebind.test", &[LOOPBACK])
            .with("pypi.org", &[LOOPBACK]),
        ..WorldOptions::default()
    });
    let s = w.start().await;
    let cases = [
        (
            "metadata IP literal",
            "CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n".to_owned(),
            "169.254.169.254",
        ),
        (
            "host loopback literal",
            format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n"),
            "127.0.0.1",
        ),
        (
            "private literal",
            "CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n".to_owned(),
            "10.0.0.1",
        ),
        (
            "IPv6 loopback literal",
            format!("CONNECT [::1]:{port} HTTP/1.1\r\n\r\n"),
            "::1",
        ),
        (
            "Host header mismatch",
            format!("GET http://allowed.test:{port}/ HTTP/1.1\r\nHost: blocked.test\r\n\r\n"),
            "allowed.test",
        ),
        (
            "absolute form to a blocked host",
            "GET http://blocked.test/ HTTP/1.1\r\nHost: blocked.test\r\n\r\n".to_owned(),
            "blocked.test",
        ),
        (
            "CONNECT to a blocked host",
            "CONNECT blocked.test:443 HTTP/1.1\r\n\r\n".to_owned(),
            "blocked.test",
        ),
        (
            "allowed host, other port",
            format!("CONNECT allowed.test:{} HTTP/1.1\r\n\r\n", port + 1),
            "allowed.test",
        ),
        (
            "rebinding: profile host to loopback",
            "CONNECT pypi.org:443 HTTP/1.1\r\n\r\n".to_owned(),
            "pypi.org",
        ),
        (
            "rebinding: user's extra host to loopback",
            format!("CONNECT rebind.test:{port} HTTP/1.1\r\n\r\n"),
            "rebind.test",
        ),
    ];
    for (name, request, host) in cases {
        let outcome = s
            .call(
                python_call(&through_proxy(&request)),
                None,
                &tokio_util::sync::CancellationToken::new(),
            )
            .await;
        let out = match &outcome.result {
            Ok(tool_protocol::ToolResult::RunBash(r)) => format!("{}{}", stdout(r), stderr(r)),
            other => panic!("{name}: {other:?}"),
        };
        assert!(out.starts_with("HTTP/1.1 403 Forbidden"), "{name}: {out}");
        assert!(
            out.contains("network policy"),
            "{name}: the refusal does not name the policy: {out}"
        );
        assert_eq!(outcome.denials.len(), 1, "{name}: {:?}", outcome.denials);
        assert!(
            outcome.denials[0].host.contains(host),
            "{name}: {:?}",
            outcome.denials[0]
        );
        assert!(
            outcome.denials[0]
                .binary
                .as_deref()
                .is_some_and(|b| b.contains("python")),
            "{name}: program not named: {:?}",
            outcome.denials[0]
        );
    }
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "a refused request reached the server"
    );
    s.close().await.unwrap();
}

fn python_call(script: &str) -> tool_protocol::ToolRequest {
    tool_protocol::ToolRequest::RunBash(tool_protocol::RunBash {
        command: format!("python3 - <<'PY'\n{script}\nPY"),
        cwd: None,
        env: None,
        stdin: None,
        timeout_ms: Some(20_000),
        max_output_bytes: None,
    })
}

/// Sends `request` on a connection opened by `connect` (python) and prints the whole answer.
fn raw_exchange(connect: &str, request: &str) -> String {
    format!(
        "import socket\n{connect}\ns.settimeout(5)\ns.sendall({request:?}.encode())\ndata = b''\n\
         while True:\n    chunk = s.recv(4096)\n    if not chunk: break\n    data += chunk\n\
         print(data.decode(errors='replace'))"
    )
}

/// A command claims to be another program in a preamble of its own, on a connection it opens
/// to the proxy's socket itself or through the bridge: straight to the socket the denial is
/// recorded and names no program; through the bridge the forged line is only request bytes
/// (a malformed request, nothing recorded).
#[tokio::test(flavor = "multi_thread")]
async fn a_forged_bridge_preamble_is_not_believed() {
    let w = world();
    let s = w.start().await;
    let direct = "s = socket.socket(socket.AF_UNIX)\ns.connect('/run/paddock/proxy/proxy.sock')";
    let bridge = "s = socket.create_connection(('127.0.0.1', 3128), timeout=5)";
    let forgeries = [
        "PADDOCK-BRIDGE program=/usr/bin/git-FORGED\n",
        "PADDOCK-BRIDGE token=00000000000000000000000000000000 program=/usr/bin/git-FORGED\n",
    ];
    for (path, connect) in [("direct", direct), ("bridge", bridge)] {
        for forgery in forgeries {
            let request = format!("{forgery}CONNECT blocked.test:443 HTTP/1.1\r\n\r\n");
            let outcome = s
                .call(
                    python_call(&raw_exchange(connect, &request)),
                    None,
                    &tokio_util::sync::CancellationToken::new(),
                )
                .await;
            let out = match &outcome.result {
                Ok(tool_protocol::ToolResult::RunBash(r)) => format!("{}{}", stdout(r), stderr(r)),
                other => panic!("{path}: {other:?}"),
            };
            if path == "direct" {
                // Straight to the proxy's socket the line is read as a preamble without the
                // wall's token: the request is judged (refused) and recorded, naming no
                // program ("an unknown program" on every surface).
                assert!(out.starts_with("HTTP/1.1 403"), "{path} {forgery:?}: {out}");
                assert_eq!(
                    outcome.denials.len(),
                    1,
                    "{path} {forgery:?}: one denial recorded: {:?}",
                    outcome.denials
                );
                let denial = &outcome.denials[0];
                assert_eq!(
                    (denial.host.as_str(), denial.port, denial.binary.as_deref()),
                    ("blocked.test", 443, None),
                    "{path} {forgery:?}: {denial:?}"
                );
            } else {
                // Through the bridge, which sent its own preamble first, the forged line is
                // the client's first bytes: a malformed request, refused before any rule, so
                // nothing is recorded under any name.
                assert!(
                    out.starts_with("HTTP/1.1 400") && out.contains("malformed request line"),
                    "{path} {forgery:?}: {out}"
                );
                assert!(
                    out.contains(forgery.trim_end()),
                    "{path}: the forged line was not taken as request bytes: {out}"
                );
                assert!(
                    outcome.denials.is_empty(),
                    "{path} {forgery:?}: the forged line was believed: {:?}",
                    outcome.denials
                );
            }
        }
    }
    s.close().await.unwrap();
}

/// The bridge token cannot be read from inside: the wall's configuration is behind Landlock
/// once the launcher has read it, and the bridge that holds it is not dumpable (its memory and
/// environment closed to the commands, although they run as the same user).
#[tokio::test(flavor = "multi_thread")]
async fn the_bridge_token_cannot_be_read_from_inside() {
    let w = world();
    let s = w.start().await;
    let out = python(
        s.as_ref(),
        "import glob\n\
         bridges = []\n\
         for d in glob.glob('/proc/[0-9]*'):\n    try:\n        cmd = open(d + '/cmdline', 'rb').read()\n    except OSError:\n        continue\n    if cmd.startswith(b'/run/paddock/bin/paddock-wall'):\n        bridges.append(d)\n\
         print('BRIDGES', len(bridges))\n\
         for d in bridges:\n    for name in ('mem', 'environ', 'maps'):\n        try:\n            f = open(d + '/' + name, 'rb')\n        except OSError as e:\n            print('REFUSED', name, e.errno)\n            continue\n        print('OPENED', name)\n\
         try:\n    print('READ config', open('/run/paddock/wall.json').read(40))\nexcept OSError as e:\n    print('REFUSED config', e.errno)",
    )
    .await;
    assert!(out.contains("BRIDGES 1"), "the bridge was not found: {out}");
    assert!(!out.contains("READ") && !out.contains("OPENED"), "{out}");
    for name in ["mem", "environ", "maps", "config"] {
        assert!(out.contains(&format!("REFUSED {name}")), "{name}: {out}");
    }
    s.close().await.unwrap();
}
