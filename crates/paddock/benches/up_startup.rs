//! `cargo bench -p paddock --bench up_startup`: how fast `paddock up` is ready and how much
//! memory it holds idle. Starts the built binary (this bench profile's) on a fresh machine
//! folder several times; start to ready = from spawn until an authenticated
//! `GET /v1/health` answers 200 (the token file is read as soon as it exists). Idle RSS =
//! `VmRSS` of the process after it answered and sat idle for a second, without a model key
//! (the server starts anyway). Targets: ready < 300 ms, RSS < 40 MB.
//! `PADDOCK_BENCH_STARTS` sets the number of starts (default 10).

// A bench binary reports on stdout by design.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn health(port: u16, token: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let request = format!(
        "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// One start on a fresh machine folder: (start to ready, idle RSS in KiB).
fn start(root: &Path) -> (Duration, u64) {
    let port = free_port();
    let token_file = root.join("state/paddock/api-token");
    let began = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_paddock"))
        .args(["up", "--listen", &format!("127.0.0.1:{port}")])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", root.join("home"))
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env("XDG_STATE_HOME", root.join("state"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ready = loop {
        if let Ok(token) = std::fs::read_to_string(&token_file)
            && token.ends_with('\n')
            && health(port, token.trim())
        {
            break began.elapsed();
        }
        assert!(began.elapsed() < Duration::from_secs(30), "never ready");
        std::thread::sleep(Duration::from_millis(2));
    };
    std::thread::sleep(Duration::from_secs(1));
    let rss = rss_kib(child.id());
    let _ = child.kill();
    let _ = child.wait();
    (ready, rss)
}

fn main() {
    let starts: usize = std::env::var("PADDOCK_BENCH_STARTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("paddock-up-bench");
    std::fs::create_dir_all(&base).unwrap();
    let mut readies = Vec::new();
    let mut rss = Vec::new();
    for _ in 0..starts {
        let root = tempfile::Builder::new()
            .prefix("u")
            .tempdir_in(&base)
            .unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        let (ready, kib) = start(root.path());
        readies.push(ready);
        rss.push(kib);
    }
    readies.sort();
    rss.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "paddock up, {starts} starts on fresh state folders (first start: token, databases created)"
    );
    println!(
        "start to ready: median {:.1} ms, max {:.1} ms (target < 300 ms)",
        ms(readies[readies.len() / 2]),
        ms(*readies.last().unwrap())
    );
    println!(
        "idle RSS: median {:.1} MB, max {:.1} MB (target < 40 MB)",
        rss[rss.len() / 2] as f64 / 1024.0,
        *rss.last().unwrap() as f64 / 1024.0
    );
}
