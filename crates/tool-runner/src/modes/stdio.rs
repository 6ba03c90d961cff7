//! `stdio`: one connection on stdin/stdout (direct mode and tests). The runner exits when the
//! connection ends (stdin EOF after the calls in flight are answered, or `shutdown`), or when
//! its parent goes away.

use std::sync::Arc;

use tool_runner::server::SHUTDOWN_GRACE;

use super::{ModeError, parent, runner, std_streams};
use crate::cli::ServeOptions;

pub fn stdio(options: &ServeOptions) -> Result<(), ModeError> {
    let runner = runner(options)?;
    let (input, output) = std_streams()?;
    let watched = Arc::clone(&runner);
    parent::watch(move || {
        super::diagnostic("the parent process went away; stopping");
        watched.cancel_all();
        watched.wait_idle(SHUTDOWN_GRACE);
        std::process::exit(0);
    });
    runner.serve_connection(input, output);
    Ok(())
}
