//! Serving connections: the [`Runner`] shared by all of them, and per connection a reader
//! (this thread), an output (see [`writer`]) and calls run by the shared pool.
//!
//! * The first frame on every connection is `hello`.
//! * Each `call` is registered by id (a duplicate in flight is refused with `duplicate_id`)
//!   and run on the pool; its `output` frames and its one final `result` or `error` go
//!   through the connection's output, in that order. `upload` chunks run on the reader itself, in order.
//! * A line that is not a usable frame is answered with an `error` frame and skipped; calls
//!   in flight are not disturbed.
//! * End of input lets the calls in flight finish and answers them; `shutdown` or a broken
//!   output cancels them.

mod calls;
mod connection;
pub mod pool;
pub mod writer;

use std::io::{Read, Write};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use tool_protocol::{Hello, PROTOCOL_VERSION, Root};

use crate::call::Limits;
use crate::path_guard::PathGuard;
use calls::Calls;
use pool::Pool;

/// How long a `shutdown` waits for cancelled calls to send their final frames.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Why a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The host closed its side; calls in flight were finished and answered.
    Eof,
    /// The host sent `shutdown`: the whole runner should exit.
    Shutdown,
    /// Writing to the host failed; calls in flight were cancelled.
    OutputClosed,
}

/// Everything connections share: the path guard, limits, build id and call pool.
pub struct Runner {
    guard: PathGuard,
    limits: Limits,
    build_id: String,
    pool: Arc<Pool>,
    connections: Mutex<Vec<Weak<Calls>>>,
}

impl Runner {
    pub fn new(guard: PathGuard, limits: Limits, build_id: String) -> Arc<Self> {
        Arc::new(Self {
            guard,
            limits,
            build_id,
            pool: Pool::new(pool::MAX_WORKERS),
            connections: Mutex::new(Vec::new()),
        })
    }

    pub fn guard(&self) -> &PathGuard {
        &self.guard
    }

    /// The first frame of every connection.
    pub fn hello(&self) -> Hello {
        Hello {
            protocol: PROTOCOL_VERSION,
            build_id: self.build_id.clone(),
            roots: self
                .guard
                .roots()
                .iter()
                .map(|root| Root {
                    path: root.path().to_string_lossy().into_owned(),
                    mode: root.mode(),
                })
                .collect(),
            cwd: self.guard.cwd().to_string_lossy().into_owned(),
            pid: u64::from(std::process::id()),
        }
    }

    fn live_connections(&self) -> Vec<Arc<Calls>> {
        let mut connections = self
            .connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        connections.retain(|calls| calls.strong_count() > 0);
        connections.iter().filter_map(Weak::upgrade).collect()
    }

    /// Cancels every call on every connection (shutdown, parent gone).
    pub fn cancel_all(&self) {
        for calls in self.live_connections() {
            calls.cancel_all();
        }
    }

    /// Waits until no connection has a call in flight, at most `limit`. True when idle.
    pub fn wait_idle(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        self.live_connections()
            .iter()
            .all(|calls| calls.wait_idle(Some(deadline.saturating_duration_since(Instant::now()))))
    }

    /// Serves one connection until it ends: sends `hello`, then reads frames from `input` and
    /// answers on `output`.
    pub fn serve_connection(
        self: &Arc<Self>,
        input: impl Read,
        output: impl Write + Send + 'static,
    ) -> Ending {
        let calls = Arc::new(Calls::new());
        self.connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Arc::downgrade(&calls));
        connection::serve(self, &calls, input, output)
    }
}
