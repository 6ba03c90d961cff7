//! The binary's modes: `serve`, `stdio`, `attach` (and the parent watch they share). These
//! live in the binary, not the library, because they report to stderr.

mod attach;
mod parent;
mod serve;
mod stdio;

use std::fmt;
use std::fs::File;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;

use tool_runner::call::Limits;
use tool_runner::path_guard::PathGuard;
use tool_runner::server::Runner;

use crate::cli::ServeOptions;

pub use attach::attach;
pub use serve::serve;
pub use stdio::stdio;

/// Why a mode could not start or had to stop.
#[derive(Debug)]
pub struct ModeError(pub String);

impl fmt::Display for ModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ModeError {}

/// Opens the roots and builds the runner every connection shares.
fn runner(options: &ServeOptions) -> Result<Arc<Runner>, ModeError> {
    let guard = PathGuard::new(&options.roots, options.cwd.as_deref())
        .map_err(|e| ModeError(e.to_string()))?;
    let mut limits = Limits::default();
    if let Some(ms) = options.max_timeout_ms {
        limits.max_timeout = Duration::from_millis(ms);
    }
    Ok(Runner::new(
        guard,
        limits,
        tool_runner::build_id::of_this_executable(),
    ))
}

/// Our own handles on stdin and stdout (duplicates), so protocol bytes bypass std's
/// line-buffered `Stdout`.
fn std_streams() -> Result<(File, File), ModeError> {
    let input = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| ModeError(format!("cannot use stdin: {e}")))?;
    let output = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| ModeError(format!("cannot use stdout: {e}")))?;
    // A larger pipe to the host means fewer context switches on big downloads; stdout may
    // not be a pipe at all (a socket, a file), which is fine.
    let _ = tool_runner::sys::grow_pipe(&output, PIPE_BYTES);
    Ok((File::from(input), File::from(output)))
}

/// The pipe capacity asked for on stdout (the default limit for unprivileged processes).
const PIPE_BYTES: usize = 1024 * 1024;

/// Writes one diagnostic line to stderr (never stdout: that carries the protocol).
#[allow(
    clippy::print_stderr,
    reason = "the runner's diagnostics go to stderr by design"
)]
pub fn diagnostic(message: &str) {
    eprintln!("tool-runner: {message}");
}
