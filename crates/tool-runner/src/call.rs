//! What a running call shares with the connection that started it: the cancel switch (which
//! also kills the call's process group) and the sink its `output` frames go to.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tool_protocol::{Encoding, Stream};

use crate::sys;

/// Limits a runner applies to every call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// `run_bash` timeout when the call names none.
    pub default_timeout: Duration,
    /// The longest `run_bash` timeout a call may ask for (`--max-timeout-ms`).
    pub max_timeout: Duration,
    /// `run_bash` capture cap per stream when the call names none.
    pub default_output_bytes: u64,
    /// The largest capture cap a call may ask for (keeps a result frame under 8 MiB).
    pub max_output_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            default_timeout: Duration::from_secs(30),
            max_timeout: Duration::from_secs(600),
            default_output_bytes: 256 * 1024,
            max_output_bytes: 2 * 1024 * 1024,
        }
    }
}

/// The cancel switch of one call.
#[derive(Debug, Default)]
pub struct CallControl {
    cancelled: AtomicBool,
    /// The process group of the call's command, while it runs.
    group: Mutex<Option<u32>>,
}

impl CallControl {
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks the call cancelled and kills its process group, if it has one.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        self.kill_process_group();
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// The flag long-running tools poll (`grep`, `glob`).
    pub fn flag(&self) -> &AtomicBool {
        &self.cancelled
    }

    /// Records the process group of the call's command. A cancel that arrived before this
    /// kills the group at once.
    pub fn set_process_group(&self, pgid: u32) {
        let mut group = self.group.lock().unwrap_or_else(PoisonError::into_inner);
        *group = Some(pgid);
        if self.is_cancelled() {
            // Already gone is fine: there is nothing left to stop.
            let _ = sys::kill_process_group(pgid);
        }
    }

    /// Forgets the process group (its leader has been reaped and nothing holds its pipes), so
    /// a late cancel cannot signal a reused process group id.
    pub fn clear_process_group(&self) {
        *self.group.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Kills the whole process group of the call's command, if one is recorded.
    pub fn kill_process_group(&self) {
        let group = self.group.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(pgid) = *group {
            // ESRCH (everyone already exited) is the outcome we want anyway.
            let _ = sys::kill_process_group(pgid);
        }
    }
}

/// Where a call's `output` frames go.
pub trait OutputSink: Send + Sync {
    /// Sends one chunk. `Encoding::Utf8` requires `bytes` to be UTF-8 (otherwise they are sent
    /// as base64). Returns false when nobody can receive it any more (the connection is gone).
    fn send(&self, stream: Stream, bytes: &[u8], encoding: Encoding) -> bool;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::process::Command;

    #[test]
    fn cancel_before_the_group_exists_kills_it_on_arrival() {
        let control = CallControl::new();
        control.cancel();
        assert!(control.is_cancelled());
        let mut child = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        control.set_process_group(child.id());
        assert_eq!(child.wait().unwrap().signal(), Some(sys::SIGKILL));
    }

    #[test]
    fn a_cleared_group_is_not_signalled() {
        let control = CallControl::new();
        let mut child = Command::new("sleep")
            .arg("0.3")
            .process_group(0)
            .spawn()
            .unwrap();
        control.set_process_group(child.id());
        control.clear_process_group();
        control.cancel();
        assert_eq!(child.wait().unwrap().code(), Some(0));
    }
}
