//! The proxy's record of refusals: each becomes a [`NetworkDenial`] for the audit trail, and a
//! tool call collects those that happened while it ran.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use protocol::NetworkDenial;
use tokio::sync::broadcast;

/// Denials kept for calls to collect; older ones are dropped (the broadcast has them all).
const KEPT: usize = 4096;

#[derive(Debug, Default)]
struct Log {
    /// Sequence number of the first kept denial.
    first: u64,
    kept: VecDeque<NetworkDenial>,
}

/// Shared between the proxy (which records) and the sandbox (which reads).
#[derive(Debug, Clone)]
pub struct DenialLog {
    log: Arc<Mutex<Log>>,
    feed: broadcast::Sender<NetworkDenial>,
}

impl Default for DenialLog {
    fn default() -> Self {
        Self {
            log: Arc::default(),
            feed: broadcast::channel(256).0,
        }
    }
}

impl DenialLog {
    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn record(&self, denial: NetworkDenial) {
        {
            let mut log = self.lock();
            log.kept.push_back(denial.clone());
            if log.kept.len() > KEPT {
                log.kept.pop_front();
                log.first += 1;
            }
        }
        let _ = self.feed.send(denial);
    }

    /// A position in the log; [`DenialLog::since`] returns what was recorded after it.
    pub fn mark(&self) -> u64 {
        let log = self.lock();
        log.first + log.kept.len() as u64
    }

    pub fn since(&self, mark: u64) -> Vec<NetworkDenial> {
        let log = self.lock();
        let skip = mark.saturating_sub(log.first) as usize;
        log.kept.iter().skip(skip).cloned().collect()
    }

    /// Every denial from now on, as it happens (for the audit trail).
    pub fn subscribe(&self) -> broadcast::Receiver<NetworkDenial> {
        self.feed.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn denial(host: &str) -> NetworkDenial {
        NetworkDenial {
            host: host.into(),
            port: 443,
            binary: None,
            reason: "test".into(),
            rule: None,
            time_ms: 0,
        }
    }

    #[test]
    fn since_returns_only_later_denials() {
        let log = DenialLog::default();
        log.record(denial("a"));
        let mark = log.mark();
        log.record(denial("b"));
        log.record(denial("c"));
        let hosts: Vec<String> = log.since(mark).into_iter().map(|d| d.host).collect();
        assert_eq!(hosts, ["b", "c"]);
        assert!(log.since(log.mark()).is_empty());
    }
}
