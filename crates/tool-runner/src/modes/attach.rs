//! `attach`: relays stdin to a serving runner's socket and the socket to stdout. Each
//! OpenShell exec stream runs one; when the stream is cut, only this relay dies. The socket is
//! reached by its path, which only the runner can have bound: its commands cannot change the
//! socket's folder (`serve --writable`), and the host refuses a re-attach that reaches another
//! runner than the one it attested.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::thread;

use super::{ModeError, std_streams};

pub fn attach(socket: &str) -> Result<(), ModeError> {
    // Not dumpable, like the runner: a command of the same user cannot read or write the
    // relay's memory or take its descriptors, and so cannot alter what it relays.
    tool_runner::sys::set_not_dumpable()
        .map_err(|e| ModeError(format!("cannot make the relay non-dumpable: {e}")))?;
    let stream = UnixStream::connect(socket)
        .map_err(|e| ModeError(format!("cannot connect to {socket}: {e}")))?;
    let (mut input, mut output) = std_streams()?;
    let mut to_runner = stream
        .try_clone()
        .map_err(|e| ModeError(format!("cannot use the socket: {e}")))?;
    thread::Builder::new()
        .name("attach-in".into())
        .spawn(move || {
            // Whatever ends the copy (EOF or error), tell the runner no more frames come; it
            // answers the calls in flight and then closes its side.
            let _ = relay(&mut input, &mut to_runner);
            let _ = to_runner.shutdown(Shutdown::Write);
        })
        .map_err(|e| ModeError(format!("cannot start a thread: {e}")))?;
    let mut from_runner = &stream;
    relay(&mut from_runner, &mut output)
        .map_err(|e| ModeError(format!("relaying from {socket} failed: {e}")))?;
    Ok(())
}

/// Copies until end of file, forwarding every read at once. (`io::copy` may splice, and a
/// splice between a pipe and a socket can hold bytes back until more arrive; a relay of
/// request frames must never hold a frame back.)
fn relay(from: &mut impl Read, to: &mut impl Write) -> io::Result<()> {
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buf[..n])?;
        to.flush()?;
    }
}
