//! `paddock-wall connect HOST PORT`: a `ProxyCommand` for ssh inside the sandbox. It asks the
//! bridge (and so the host proxy) for a CONNECT tunnel and then joins it to stdin and stdout.

use std::io::{self, Write};
use std::net::{Shutdown, TcpStream};
use std::thread;

use crate::bridge::read_response_head;
use crate::error::WallError;

/// Opens the tunnel to `host:port` through the bridge on `127.0.0.1:bridge_port` and copies
/// stdin to it and it to stdout until both sides end.
pub fn run(host: &str, port: u16, bridge_port: u16) -> Result<(), WallError> {
    if host.is_empty() || host.contains(|c: char| c.is_whitespace() || c.is_control()) {
        return Err(WallError::Config(format!("{host:?} is not a host name")));
    }
    let mut stream = TcpStream::connect(("127.0.0.1", bridge_port))
        .map_err(|e| WallError::os(format!("connecting to the bridge on port {bridge_port}"), e))?;
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    write!(
        stream,
        "CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n"
    )
    .map_err(|e| WallError::os("sending CONNECT", e))?;
    let head = read_response_head(&mut stream)
        .map_err(|e| WallError::os("reading the proxy's answer", e))?;
    let status = head.lines().next().unwrap_or_default().to_owned();
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(WallError::Refused(format!(
            "the proxy refused {authority}: {status}"
        )));
    }
    let mut upload = stream
        .try_clone()
        .map_err(|e| WallError::os("cloning the tunnel", e))?;
    let sender = thread::spawn(move || {
        let _ = io::copy(&mut io::stdin().lock(), &mut upload);
        let _ = upload.shutdown(Shutdown::Write);
    });
    io::copy(&mut stream, &mut io::stdout().lock())
        .map_err(|e| WallError::os("copying from the tunnel", e))?;
    drop(sender);
    Ok(())
}
