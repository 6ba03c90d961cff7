//! Parent-death detection without `prctl`: a thread polls `getppid` (std's
//! `os::unix::process::parent_id`). When the parent exits, the runner is re-parented (to init
//! or a subreaper) and the id changes; the runner then cancels everything and exits.
//!
//! A runner whose parent id is 0 or 1 at start (the first process of a PID namespace, or
//! already orphaned) has no parent to watch; it relies on `shutdown` or stdin EOF.

use std::os::unix::process::parent_id;
use std::thread;
use std::time::Duration;

/// How often the parent is checked.
const POLL: Duration = Duration::from_millis(200);

/// Calls `on_gone` once, from a background thread, when the parent process goes away.
/// Returns false when there is no parent worth watching.
pub fn watch(on_gone: impl FnOnce() + Send + 'static) -> bool {
    let original = parent_id();
    if original <= 1 {
        return false;
    }
    thread::Builder::new()
        .name("parent-watch".into())
        .spawn(move || {
            while parent_id() == original {
                thread::sleep(POLL);
            }
            on_gone();
        })
        .is_ok()
}
