//! `serve`: listens on a unix socket and serves every connection on its own thread until a
//! `shutdown` frame arrives, the parent goes away, or (with `--exit-on-stdin-eof`) stdin ends.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::mpsc;
use std::thread;

use tool_runner::server::{Ending, SHUTDOWN_GRACE};

use super::{ModeError, diagnostic, parent, runner};
use crate::cli::ServeOptions;

pub fn serve(
    socket: &str,
    options: &ServeOptions,
    exit_on_stdin_eof: bool,
) -> Result<(), ModeError> {
    // Serving means running inside a wall: confine the commands before the first can start.
    let writable = fixed_socket_folder(socket, &options.writable)?;
    let confinement = tool_runner::confine::enable(!options.unscoped_signals, writable)
        .map_err(|e| ModeError(format!("cannot confine the commands: {e}")))?;
    if options.unscoped_signals {
        diagnostic("--test-unscoped-signals: the commands' signals are not scoped (tests only)");
    } else if !confinement.signals_scoped && !confinement.namespace_init {
        diagnostic(
            "Landlock cannot scope signals here (ABI 6 needed) and the runner is not the first \
             process of its PID namespace: only the seccomp filter keeps commands from \
             signalling the runner, and it knows the ids of only two of its threads",
        );
    }
    if !confinement.folders_fixed {
        diagnostic(
            "no --writable folders given: the commands may change the socket's folder as far \
             as the wall lets them (a command could take the socket's place)",
        );
    }
    let runner = runner(options)?;
    let listener = bind(socket)?;
    let (stop_tx, stop_rx) = mpsc::channel::<&'static str>();
    let parent_stop = stop_tx.clone();
    parent::watch(move || {
        let _ = parent_stop.send("the parent process went away");
    });
    if exit_on_stdin_eof {
        let stdin_stop = stop_tx.clone();
        thread::Builder::new()
            .name("stdin-watch".into())
            .spawn(move || {
                let _ = io::copy(&mut io::stdin().lock().by_ref(), &mut io::sink());
                let _ = stdin_stop.send("stdin reached end of file");
            })
            .map_err(|e| ModeError(format!("cannot start a thread: {e}")))?;
    }
    let accepting = std::sync::Arc::clone(&runner);
    thread::Builder::new()
        .name("accept".into())
        .spawn(move || {
            for stream in listener.incoming() {
                match stream {
                    Ok(stream) => connect(&accepting, stream, stop_tx.clone()),
                    Err(e) => diagnostic(&format!("accepting a connection failed: {e}")),
                }
            }
        })
        .map_err(|e| ModeError(format!("cannot start a thread: {e}")))?;
    let reason = stop_rx.recv().unwrap_or("every stop signal is gone");
    diagnostic(&format!("stopping: {reason}"));
    runner.cancel_all();
    runner.wait_idle(SHUTDOWN_GRACE);
    let _ = fs::remove_file(socket);
    Ok(())
}

fn connect(
    runner: &std::sync::Arc<tool_runner::server::Runner>,
    stream: UnixStream,
    stop: mpsc::Sender<&'static str>,
) {
    let runner = std::sync::Arc::clone(runner);
    let spawned = thread::Builder::new()
        .name("connection".into())
        .spawn(move || {
            let Ok(input) = stream.try_clone() else {
                return;
            };
            if runner.serve_connection(input, stream) == Ending::Shutdown {
                let _ = stop.send("a shutdown frame arrived");
            }
        });
    if let Err(e) = spawned {
        diagnostic(&format!("cannot serve a connection: {e}"));
    }
}

/// The folders commands may change (`--writable`), refused when one holds the socket's folder:
/// a command could then move the socket away and listen in the runner's place. `None` when
/// none were given (the commands' folders are then the wall's business alone).
fn fixed_socket_folder(
    socket: &str,
    writable: &[String],
) -> Result<Option<Vec<std::path::PathBuf>>, ModeError> {
    if writable.is_empty() {
        return Ok(None);
    }
    let folder = Path::new(socket).parent().unwrap_or(Path::new("/"));
    if let Some(holding) = writable.iter().find(|w| folder.starts_with(w)) {
        return Err(ModeError(format!(
            "--writable {holding} holds the runner's socket folder {}: its commands could \
             replace the socket",
            folder.display()
        )));
    }
    Ok(Some(
        writable.iter().map(std::path::PathBuf::from).collect(),
    ))
}

/// Binds the socket, replacing a stale one (a socket file nobody listens on) but never
/// another live runner's socket or a file that is not a socket. Only the owner may connect.
fn bind(socket: &str) -> Result<UnixListener, ModeError> {
    let path = Path::new(socket);
    if let Ok(meta) = fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(ModeError(format!("{socket}: exists and is not a socket")));
        }
        if UnixStream::connect(path).is_ok() {
            return Err(ModeError(format!(
                "{socket}: another runner is serving here"
            )));
        }
        fs::remove_file(path)
            .map_err(|e| ModeError(format!("{socket}: cannot remove the stale socket: {e}")))?;
    }
    let listener =
        UnixListener::bind(path).map_err(|e| ModeError(format!("{socket}: cannot listen: {e}")))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .map_err(|e| ModeError(format!("{socket}: cannot restrict the socket: {e}")))?;
    Ok(listener)
}
