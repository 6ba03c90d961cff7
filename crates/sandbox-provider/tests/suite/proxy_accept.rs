//! The proxy's accept loop survives running out of file descriptors: with the process's soft
//! limit lowered below what a client's connections need, accepting fails with `EMFILE`; once
//! the client lets go, the proxy serves again.
//!
//! This file holds one test: it lowers its own process's descriptor limit, and nextest runs
//! each test in a process of its own.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox_provider::local::proxy::{
    self, Decision, DenialLog, DescriptorBudget, EgressPolicy, ProxyConfig, ProxyLimits,
    StaticResolver,
};
use tokio_util::sync::CancellationToken;

/// Allows `open.test` (to the test's echo server on loopback) and nothing else.
#[derive(Debug)]
struct OneHost;

impl EgressPolicy for OneHost {
    fn profile(&self) -> String {
        "test".into()
    }
    fn check_host(&self, host: &str, _port: u16) -> Decision {
        if host == "open.test" {
            Decision::Allowed {
                rule: "test".into(),
            }
        } else {
            Decision::Denied {
                reason: "not open.test".into(),
            }
        }
    }
    fn check_ip(&self, _host: &str, _port: u16, _ip: IpAddr) -> Decision {
        Decision::Allowed {
            rule: "test".into(),
        }
    }
    fn describe(&self) -> String {
        "open.test".into()
    }
}

fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd").unwrap().count() as u64
}

fn set_soft_fd_limit(soft: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is valid and writable for the duration of each call.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = soft;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
}

/// One request through the proxy at `socket`; `None` when the connection failed or nothing
/// came back.
fn request(socket: &std::path::Path, port: u16) -> Option<String> {
    let mut stream = UnixStream::connect(socket).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "CONNECT open.test:{port} HTTP/1.1\r\n\r\nhello").ok()?;
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    (!answer.is_empty()).then_some(answer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_accept_loop_survives_running_out_of_descriptors() {
    let echo = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = echo.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in echo.incoming().flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 64];
            let n = stream.read(&mut buf).unwrap_or(0);
            let _ = stream.write_all(&buf[..n]);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("proxy.sock");
    let mut config = ProxyConfig::new(
        Arc::new(OneHost),
        Arc::new(StaticResolver::new().with("open.test", &[IpAddr::V4(Ipv4Addr::LOCALHOST)])),
        DenialLog::default(),
    );
    // Neither the wall's cap nor the budget stops the flood: the process's limit does.
    config.limits = ProxyLimits {
        connections: 100_000,
    };
    config.budget = DescriptorBudget::new(100_000);
    let stats = config.stats.clone();
    proxy::start(&socket, config, CancellationToken::new()).unwrap();
    assert!(
        request(&socket, port).is_some_and(|a| a.ends_with("hello")),
        "served before the flood"
    );

    set_soft_fd_limit(open_fds() + 32);
    let mut holder = Command::new("python3")
        .arg("-c")
        .arg(format!(
            "import resource, socket, sys\n\
             soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n\
             resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))\n\
             held = []\n\
             for _ in range(300):\n    s = socket.socket(socket.AF_UNIX)\n    s.connect({:?})\n    held.append(s)\n\
             print('held', len(held), flush=True)\n\
             sys.stdin.read()\n",
            socket.display().to_string()
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is needed for this test");
    let mut line = String::new();
    BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "held 300");
    // The proxy accepted what its descriptors allowed and no more.
    let started = Instant::now();
    while stats.open() < 20 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{}",
            stats.open()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(stats.open() < 300, "{} accepted", stats.open());

    drop(holder.stdin.take());
    holder.wait().unwrap();
    let started = Instant::now();
    loop {
        if let Some(answer) = request(&socket, port)
            && answer.ends_with("hello")
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the proxy does not serve after the flood ended"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
