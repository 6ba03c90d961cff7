//! The proxy cannot be exhausted: a command floods it with about 20,000 connections from
//! inside the wall (straight to the proxy's socket and through the bridge), each asking for a
//! tunnel to an allowed host that never closes, and holds them. Meanwhile an allowed request
//! from another sandbox is served, the flooding sandbox's own request is answered with a
//! refusal naming the limit (and recorded), and the host process keeps its file descriptors.
//! After the flood ends, the flooding sandbox is served again.
//!
//! This file holds one test: it lowers its own process's descriptor limit (to 4096, so the
//! flood would exhaust the host if nothing bounded it, whatever this machine's limit is), and
//! nextest runs each test in a process of its own.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed set-up step fails the test"
)]

use crate::support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sandbox_provider::Sandbox;
use sandbox_provider::local::proxy::StaticResolver;
use support::*;
use tokio_util::sync::CancellationToken;
use tool_protocol::{RunBash, ToolRequest, ToolResult};

/// The host process's descriptor limit during the test.
const HOST_FD_LIMIT: u64 = 4096;
/// Connections the flood opens straight to the proxy's socket, and through the bridge.
const DIRECT: usize = 20_000;
const THROUGH_BRIDGE: usize = 300;
const FLOOD_PROCESSES: usize = 8;

fn set_fd_limit(limit: u64) {
    let value = libc::rlimit {
        rlim_cur: limit,
        rlim_max: limit,
    };
    // SAFETY: `value` is a valid rlimit for the duration of the call.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &value) }, 0);
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// An HTTP server on the host's loopback counting requests.
fn counting_server() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            counter.fetch_add(1, Ordering::SeqCst);
            let mut stream = stream;
            let mut buf = [0u8; 1024];
            let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 8\r\n\r\nREACHED\n");
        }
    });
    (port, hits)
}

/// A server on the host's loopback that accepts connections and holds them open.
fn holding_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    port
}

/// The flood: `FLOOD_PROCESSES` processes each open their share of connections to the proxy's
/// socket, one more opens connections through the bridge; every connection asks for a tunnel
/// to `allowed.test:{hold}`. Each process reports `held failed` in a file of the work folder
/// and holds on until `flood-stop` appears there.
fn flood_script(work: &str, hold: u16) -> String {
    format!(
        r#"import os, socket, resource, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
work = {work:?}
def hold(index, count, bridge):
    held, failed = [], 0
    for _ in range(count):
        try:
            if bridge:
                s = socket.create_connection(('127.0.0.1', 3128), timeout=5)
                s.sendall(b'CONNECT allowed.test:{hold} HTTP/1.1\r\n\r\n')
            else:
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(5)
                s.connect('/run/paddock/proxy/proxy.sock')
            s.sendall(b'CONNECT allowed.test:{hold} HTTP/1.1\r\n\r\n')
            held.append(s)
        except OSError:
            failed += 1
    with open(f'{{work}}/flood-{{index}}.tmp', 'w') as f:
        f.write(f'{{len(held)}} {{failed}}\n')
    os.rename(f'{{work}}/flood-{{index}}.tmp', f'{{work}}/flood-{{index}}')
    while not os.path.exists(f'{{work}}/flood-stop'):
        time.sleep(0.05)
children = []
for i in range({FLOOD_PROCESSES} + 1):
    pid = os.fork()
    if pid == 0:
        if i == {FLOOD_PROCESSES}:
            hold(i, {THROUGH_BRIDGE}, True)
        else:
            hold(i, {DIRECT} // {FLOOD_PROCESSES}, False)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
print('flood over')
"#
    )
}

fn bash_request(command: String, timeout_ms: u64) -> ToolRequest {
    ToolRequest::RunBash(RunBash {
        command,
        cwd: None,
        env: None,
        stdin: None,
        timeout_ms: Some(timeout_ms),
        max_output_bytes: None,
    })
}

async fn output(sandbox: &dyn Sandbox, command: String, timeout_ms: u64) -> String {
    let outcome = sandbox
        .call(
            bash_request(command, timeout_ms),
            None,
            &CancellationToken::new(),
        )
        .await;
    match outcome.result {
        Ok(ToolResult::RunBash(r)) => format!("{}{}", stdout(&r), stderr(&r)),
        other => panic!("run_bash: {other:?}"),
    }
}

fn curl(port: u16) -> String {
    format!("curl -sS -i --max-time 20 http://allowed.test:{port}/ 2>&1; true")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_flood_leaves_every_proxy_answering() {
    set_fd_limit(HOST_FD_LIMIT);
    let (port, hits) = counting_server();
    let hold = holding_server();
    let w = world_with(WorldOptions {
        loopback_hosts: vec![("allowed.test".into(), port), ("allowed.test".into(), hold)],
        resolver: StaticResolver::new().with("allowed.test", &[LOOPBACK]),
        ..WorldOptions::default()
    });
    let flooding = w.start().await;
    let other = w.start().await;
    let work = w.work().display().to_string();

    let flood = tokio::spawn({
        let flooding = flooding.clone();
        let script = flood_script(&work, hold);
        async move {
            output(
                &*flooding,
                format!("python3 - <<'PY'\n{script}\nPY"),
                240_000,
            )
            .await
        }
    });
    let started = Instant::now();
    let mut reports = Vec::new();
    while reports.len() <= FLOOD_PROCESSES {
        assert!(
            !flood.is_finished(),
            "the flood ended early: {}",
            flood.await.unwrap()
        );
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "the flood did not report in time: {reports:?}"
        );
        reports = (0..=FLOOD_PROCESSES)
            .filter_map(|i| std::fs::read_to_string(w.work().join(format!("flood-{i}"))).ok())
            .collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Each report is "held failed": connections the flood holds, and connects that failed on
    // its side (a full listen backlog times a connect out on a loaded machine).
    let counts: Vec<(usize, usize)> = reports
        .iter()
        .map(|r| {
            let mut numbers = r.split_whitespace().map(|n| n.parse::<usize>().unwrap());
            (numbers.next().unwrap(), numbers.next().unwrap())
        })
        .collect();
    let held: usize = counts.iter().map(|(held, _)| held).sum();
    let failed: usize = counts.iter().map(|(_, failed)| failed).sum();
    assert_eq!(held + failed, DIRECT + THROUGH_BRIDGE, "{reports:?}");
    assert!(
        held > 2 * HOST_FD_LIMIT as usize,
        "the flood holds only {held} connections, too few to exhaust the host: {reports:?}"
    );

    // The proxy has taken every connection the flood holds off its socket.
    let stats = flooding.proxy_stats().clone();
    let started = Instant::now();
    while stats.open() + stats.refused() < held as u64 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the proxy took {} + {} of the {held} connections the flood holds",
            stats.open(),
            stats.refused()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // While the flood holds its connections: another sandbox is served, the flooding
    // sandbox's own request is answered, and the host keeps its descriptors.
    let mut problems = Vec::new();
    let answer = output(&*other, curl(port), 60_000).await;
    if !answer.contains("REACHED") {
        problems.push(format!(
            "another sandbox's allowed request failed during the flood: {answer}"
        ));
    }
    // Over-limit connections are answered through a narrow lane (REFUSAL_LANE at once); one
    // that arrives while the lane is still busy with the flood's last refusals is closed
    // unanswered, so the request is tried again a few times while the lane drains.
    let mut answer = String::new();
    for _ in 0..20 {
        answer = output(&*flooding, curl(port), 60_000).await;
        if !answer.contains("Empty reply from server") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    if !answer.starts_with("HTTP/1.1 503") || !answer.contains("limit") {
        let stats = flooding.proxy_stats();
        problems.push(format!(
            "the flooding sandbox's request was not answered with the limit ({} open, {} refused): {answer}",
            stats.open(),
            stats.refused()
        ));
    }
    let recorded = flooding.all_denials().into_iter().any(|d| {
        d.rule.as_deref() == Some(protocol::NetworkDenial::CONNECTION_LIMIT_RULE)
            && d.host == "allowed.test"
            && d.port == port
            && d.binary.as_deref().is_some_and(|b| b.contains("curl"))
    });
    if !recorded {
        problems.push("the refusal of curl's request over the limit was not recorded".into());
    }
    let fds = open_fds();
    if fds >= 1024 {
        problems.push(format!("the host holds {fds} descriptors during the flood"));
    }

    std::fs::write(w.work().join("flood-stop"), "").unwrap();
    let flood_output = flood.await.unwrap();
    assert!(flood_output.contains("flood over"), "{flood_output}");
    let started = Instant::now();
    loop {
        let answer = output(&*flooding, curl(port), 60_000).await;
        if answer.contains("REACHED") {
            break;
        }
        if started.elapsed() > Duration::from_secs(60) {
            problems.push(format!(
                "the flooding sandbox is not served after its flood ended: {answer}"
            ));
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(hits.load(Ordering::SeqCst) >= 2);
    flooding.close().await.unwrap();
    other.close().await.unwrap();
}
