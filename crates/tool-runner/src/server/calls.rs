//! The calls in flight on one connection, by id.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::call::CallControl;

#[derive(Default)]
pub struct Calls {
    in_flight: Mutex<HashMap<String, Arc<CallControl>>>,
    idle: Condvar,
}

impl Calls {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<CallControl>>> {
        self.in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a call; `None` when a call with this id is still in flight.
    pub fn begin(&self, id: &str) -> Option<Arc<CallControl>> {
        let mut in_flight = self.lock();
        if in_flight.contains_key(id) {
            return None;
        }
        let control = Arc::new(CallControl::new());
        in_flight.insert(id.to_owned(), Arc::clone(&control));
        Some(control)
    }

    /// Forgets a finished call (before its final frame is sent, so the host may reuse the id
    /// as soon as it sees that frame).
    pub fn end(&self, id: &str) {
        let mut in_flight = self.lock();
        in_flight.remove(id);
        if in_flight.is_empty() {
            self.idle.notify_all();
        }
    }

    /// Cancels the call `id`; an id not in flight is ignored (the call already ended).
    pub fn cancel(&self, id: &str) {
        let control = self.lock().get(id).cloned();
        if let Some(control) = control {
            control.cancel();
        }
    }

    pub fn cancel_all(&self) {
        let controls: Vec<_> = self.lock().values().cloned().collect();
        for control in controls {
            control.cancel();
        }
    }

    /// Waits until no call is in flight, at most `limit` (forever when `None`). True when idle.
    pub fn wait_idle(&self, limit: Option<Duration>) -> bool {
        let deadline = limit.map(|limit| Instant::now() + limit);
        let mut in_flight = self.lock();
        while !in_flight.is_empty() {
            match deadline {
                None => {
                    in_flight = self
                        .idle
                        .wait(in_flight)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return false;
                    }
                    in_flight = self
                        .idle
                        .wait_timeout(in_flight, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_duplicate_ids_until_the_first_ends() {
        let calls = Calls::new();
        let first = calls.begin("7").unwrap();
        assert!(calls.begin("7").is_none());
        calls.cancel("7");
        assert!(first.is_cancelled());
        calls.cancel("unknown");
        calls.end("7");
        assert!(calls.begin("7").is_some());
    }

    #[test]
    fn wait_idle_returns_when_the_last_call_ends() {
        let calls = Arc::new(Calls::new());
        calls.begin("a").unwrap();
        assert!(!calls.wait_idle(Some(Duration::from_millis(20))));
        let ender = Arc::clone(&calls);
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            ender.end("a");
        });
        assert!(calls.wait_idle(None));
        t.join().unwrap();
    }
}
