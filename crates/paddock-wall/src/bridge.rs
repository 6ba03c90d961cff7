//! The bridge inside the sandbox: a TCP listener on `127.0.0.1:<port>` whose every connection is
//! forwarded to the host proxy's unix socket. The sandbox's network namespace has only loopback,
//! so this is its one way out, and the proxy decides what passes.
//!
//! Before the client's bytes the bridge sends one preamble line naming the program that
//! connected, when it can tell, found through `/proc/net/tcp` and the processes' open sockets:
//! `PADDOCK-BRIDGE token=<hex> program=/usr/bin/curl`. The token is the wall's bridge secret,
//! known only to the host and this process (read from the wall's configuration before Landlock
//! hides it, and kept in a process no command can read: see [`serve`]); the proxy believes the
//! program only from a line carrying it, since any command can reach the proxy's socket
//! itself. The program is for the record (denials, the audit trail); the proxy's decisions
//! never depend on it.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

/// The first bytes of the preamble line.
pub const PREAMBLE_PREFIX: &str = "PADDOCK-BRIDGE ";

/// The preamble line for a connection from `program` (`None`: not found).
pub fn preamble(token: &str, program: Option<&str>) -> String {
    let program = program.map_or_else(|| "-".to_owned(), sanitize);
    format!("{PREAMBLE_PREFIX}token={token} program={program}\n")
}

/// The token and the program of a preamble line (without its prefix and newline); the program
/// is `None` when the bridge did not find it. `None` when the line is not a preamble.
pub fn parse_preamble(line: &str) -> Option<(&str, Option<&str>)> {
    let rest = line.strip_prefix("token=")?;
    let (token, program) = rest.split_once(' ')?;
    let program = program.strip_prefix("program=")?;
    Some((
        token,
        (!program.is_empty() && program != "-").then_some(program),
    ))
}

/// Pauses before accepting again after an error, longer while errors repeat (at most 1 s):
/// running out of descriptors (`EMFILE`, `ENFILE`) or memory lasts until connections close.
/// (The host's proxy backs off the same way.)
pub fn accept_backoff(failures: u32) -> Duration {
    Duration::from_millis((5u64 << failures.min(8)).min(1000))
}

/// Serves `listener` forever, forwarding each connection to `proxy_socket` with the preamble
/// carrying `token`. No error of `accept` ends it: it backs off and retries. Call it in a
/// process no command can read (the launcher's bridge is not dumpable).
pub fn serve(listener: &TcpListener, proxy_socket: &Path, token: &str) -> ! {
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let mut failures = 0;
    loop {
        let (client, peer) = match listener.accept() {
            Ok(pair) => {
                failures = 0;
                pair
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => {
                thread::sleep(accept_backoff(failures));
                failures += 1;
                continue;
            }
        };
        let socket = proxy_socket.to_path_buf();
        let token = token.to_owned();
        // One thread per connection; if threads run out, this connection is dropped.
        let _ = thread::Builder::new()
            .name("bridge".into())
            .spawn(move || forward(client, peer, port, &socket, &token));
    }
}

fn forward(
    client: TcpStream,
    peer: SocketAddr,
    listen_port: u16,
    proxy_socket: &Path,
    token: &str,
) {
    // Found before connecting, so the proxy's time for the request does not run meanwhile.
    let program = program_of(peer, listen_port).map(|p| p.display().to_string());
    let Ok(mut upstream) = UnixStream::connect(proxy_socket) else {
        let mut client = client;
        let _ = client.write_all(
            b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 41\r\n\r\n\
              paddock: the host proxy is not reachable\n",
        );
        return;
    };
    let preamble = preamble(token, program.as_deref());
    if upstream.write_all(preamble.as_bytes()).is_err() {
        return;
    }
    let (Ok(mut client_read), Ok(mut upstream_write)) = (client.try_clone(), upstream.try_clone())
    else {
        return;
    };
    let to_proxy = thread::spawn(move || {
        let _ = io::copy(&mut client_read, &mut upstream_write);
        let _ = upstream_write.shutdown(Shutdown::Write);
    });
    let mut client_write = client;
    let _ = io::copy(&mut upstream, &mut client_write);
    let _ = client_write.shutdown(Shutdown::Write);
    let _ = to_proxy.join();
}

/// Keeps a program path on one line of printable characters.
fn sanitize(program: &str) -> String {
    program
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// How many descriptors one lookup reads at most before it gives up (the program is then
/// reported unknown): a command holding many sockets must not make every lookup slow.
const LOOKUP_BUDGET: usize = 65_536;

/// Finds the executable of the process that owns the TCP connection from `peer` to the bridge:
/// the socket's inode from `/proc/net/tcp{,6}`, then the process holding it in `/proc/*/fd`,
/// newest process first (the one connecting has usually just started; the bridge, started with
/// the wall, comes near the end).
fn program_of(peer: SocketAddr, listen_port: u16) -> Option<PathBuf> {
    let table = match peer {
        SocketAddr::V4(_) => "/proc/net/tcp",
        SocketAddr::V6(_) => "/proc/net/tcp6",
    };
    let text = std::fs::read_to_string(table).ok()?;
    let inode = socket_inode(&text, peer.port(), listen_port)?;
    let needle = format!("socket:[{inode}]");
    let mut pids: Vec<u32> = std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable_by(|a, b| b.cmp(a));
    let mut budget = LOOKUP_BUDGET;
    for pid in pids {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if budget == 0 {
                return None;
            }
            budget -= 1;
            if std::fs::read_link(fd.path()).is_ok_and(|t| t.as_os_str() == needle.as_str()) {
                return std::fs::read_link(format!("/proc/{pid}/exe")).ok();
            }
        }
    }
    None
}

/// In a `/proc/net/tcp` table, the inode of the socket whose local port is `local_port` and
/// whose remote port is `remote_port`.
pub fn socket_inode(table: &str, local_port: u16, remote_port: u16) -> Option<u64> {
    let port_of = |field: &str| {
        field
            .rsplit_once(':')
            .and_then(|(_, p)| u16::from_str_radix(p, 16).ok())
    };
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let local = port_of(fields.get(1)?)?;
        let remote = port_of(fields.get(2)?)?;
        (local == local_port && remote == remote_port)
            .then(|| fields.get(9)?.parse().ok())
            .flatten()
    })
}

/// Reads an HTTP response head (through the blank line) from `stream`, at most 16 KiB.
pub fn read_response_head(stream: &mut impl Read) -> io::Result<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 16 * 1024 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the proxy's answer has an over-long head",
            ));
        }
        if stream.read(&mut byte)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the proxy closed the connection",
            ));
        }
        head.push(byte[0]);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_inode_of_a_connection() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:0C38 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0000000000000000 100 0 0 10 0\n\
   1: 0100007F:A2B4 0100007F:0C38 01 00000000:00000000 00:00000000 00000000  1000        0 222 1 0000000000000000 20 4 30 10 -1\n";
        assert_eq!(socket_inode(table, 0xA2B4, 3128), Some(222));
        assert_eq!(socket_inode(table, 0xA2B5, 3128), None);
    }

    #[test]
    fn preambles_round_trip_and_keep_to_one_line() {
        let line = preamble("ab12", Some("/usr/bin/cu\nrl"));
        assert_eq!(line, "PADDOCK-BRIDGE token=ab12 program=/usr/bin/cu?rl\n");
        let body = line.strip_prefix(PREAMBLE_PREFIX).unwrap().trim_end();
        assert_eq!(parse_preamble(body), Some(("ab12", Some("/usr/bin/cu?rl"))));
        let unknown = preamble("ab12", None);
        let body = unknown.strip_prefix(PREAMBLE_PREFIX).unwrap().trim_end();
        assert_eq!(parse_preamble(body), Some(("ab12", None)));
        assert_eq!(parse_preamble("program=/usr/bin/git"), None);
        assert_eq!(parse_preamble("token=ab12"), None);
    }

    #[test]
    fn accept_backoff_grows_to_a_bound() {
        assert_eq!(accept_backoff(0), Duration::from_millis(5));
        assert!(accept_backoff(3) > accept_backoff(2));
        assert_eq!(accept_backoff(100), Duration::from_secs(1));
    }

    #[test]
    fn forwards_both_ways_with_a_preamble() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("proxy.sock");
        let proxy = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let socket_for_bridge = socket;
        thread::spawn(move || serve(&listener, &socket_for_bridge, "c0ffee"));

        let mut client = TcpStream::connect(addr).unwrap();
        client.write_all(b"ping").unwrap();
        client.shutdown(Shutdown::Write).unwrap();
        let (mut upstream, _) = proxy.accept().unwrap();
        let mut received = String::new();
        upstream.read_to_string(&mut received).unwrap();
        let (preamble, rest) = received.split_once('\n').unwrap();
        let (token, program) = parse_preamble(preamble.strip_prefix(PREAMBLE_PREFIX).unwrap())
            .unwrap_or_else(|| panic!("{preamble}"));
        assert_eq!(token, "c0ffee");
        // The test process itself opened the connection.
        let me = std::env::current_exe().unwrap();
        assert_eq!(program, Some(me.display().to_string().as_str()));
        assert_eq!(rest, "ping");
        upstream.write_all(b"pong").unwrap();
        drop(upstream);
        let mut answer = String::new();
        client.read_to_string(&mut answer).unwrap();
        assert_eq!(answer, "pong");
    }
}
