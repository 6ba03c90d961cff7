//! What keeps a flood from exhausting the host: a cap on the connections one wall's proxy
//! serves at once, a budget of file descriptors shared by every proxy of the process (sized
//! from the process's descriptor limit, with a reserve kept for everything else), and the
//! process's soft descriptor limit raised to its hard limit once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Connections one wall's proxy serves at once by default.
pub const DEFAULT_CONNECTIONS: usize = 256;
/// Over-limit connections one proxy keeps open at once to answer them (reading the request
/// first, so the answer reaches the client); past this, they are closed at once.
pub const REFUSAL_LANE: usize = 16;
/// How long an over-limit connection may take to send its request head.
pub const REFUSAL_HEAD_TIMEOUT: Duration = Duration::from_secs(2);
/// Descriptors of the process the proxies never use: the audit trail, the runners' sockets,
/// the walls' processes and whatever else the host opens.
pub const RESERVED_DESCRIPTORS: u64 = 512;

/// How much one wall's proxy serves at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyLimits {
    /// Connections served at once (each may hold two of the host's descriptors: the client
    /// and the upstream).
    pub connections: usize,
}

impl Default for ProxyLimits {
    fn default() -> Self {
        Self {
            connections: DEFAULT_CONNECTIONS,
        }
    }
}

/// Descriptors the proxies may hold, shared by every wall of the process.
#[derive(Debug, Clone)]
pub struct DescriptorBudget {
    permits: Arc<Semaphore>,
    size: u64,
}

impl DescriptorBudget {
    /// A budget of `size` descriptors.
    pub fn new(size: u64) -> Self {
        let size = size.min(Semaphore::MAX_PERMITS as u64);
        Self {
            permits: Arc::new(Semaphore::new(size as usize)),
            size,
        }
    }

    /// The process's budget: its soft descriptor limit (raised to the hard limit first) less
    /// [`RESERVED_DESCRIPTORS`].
    pub fn process() -> Self {
        static BUDGET: OnceLock<DescriptorBudget> = OnceLock::new();
        BUDGET
            .get_or_init(|| {
                let limit = raise_descriptor_limit().raised;
                Self::new(limit.saturating_sub(RESERVED_DESCRIPTORS))
            })
            .clone()
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Takes `n` descriptors from the budget, if it has them.
    pub fn try_take(&self, n: u32) -> Option<OwnedSemaphorePermit> {
        self.permits.clone().try_acquire_many_owned(n).ok()
    }
}

/// The process's descriptor limit before and after [`raise_descriptor_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DescriptorLimit {
    /// The soft limit the process started with (children get it back).
    pub original: u64,
    /// The soft limit now.
    pub raised: u64,
}

/// Raises the process's soft `RLIMIT_NOFILE` to its hard limit, once; later calls return the
/// first call's result. Programs started by the walls get the original soft limit back (the
/// launcher sets it), as some still use `select()`.
pub fn raise_descriptor_limit() -> DescriptorLimit {
    static RAISED: OnceLock<DescriptorLimit> = OnceLock::new();
    *RAISED.get_or_init(|| {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `limit` is a valid, writable rlimit for the duration of the call.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
            return DescriptorLimit {
                original: 1024,
                raised: 1024,
            };
        }
        let original = limit.rlim_cur;
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: `raised` is a valid rlimit for the duration of the call.
        let now = if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit.rlim_max
        } else {
            original
        };
        DescriptorLimit {
            original,
            raised: now,
        }
    })
}

/// What one proxy has done about its limits, for diagnostics and tests.
#[derive(Debug, Clone, Default)]
pub struct ProxyStats {
    inner: Arc<Counters>,
}

#[derive(Debug, Default)]
struct Counters {
    open: AtomicU64,
    refused: AtomicU64,
}

impl ProxyStats {
    /// Connections being served now.
    pub fn open(&self) -> u64 {
        self.inner.open.load(Ordering::SeqCst)
    }

    /// Connections refused because the wall or the host was at its limit, since the start.
    pub fn refused(&self) -> u64 {
        self.inner.refused.load(Ordering::SeqCst)
    }

    pub(super) fn opened(&self) -> OpenConnection {
        self.inner.open.fetch_add(1, Ordering::SeqCst);
        OpenConnection {
            stats: self.clone(),
        }
    }

    /// Counts a refusal; returns how many there have been.
    pub(super) fn refused_one(&self) -> u64 {
        self.inner.refused.fetch_add(1, Ordering::SeqCst) + 1
    }
}

/// Counts one connection as open until dropped.
#[derive(Debug)]
pub(super) struct OpenConnection {
    stats: ProxyStats,
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.stats.inner.open.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_hands_out_what_it_has() {
        let budget = DescriptorBudget::new(5);
        let a = budget.try_take(2).unwrap();
        let _b = budget.try_take(2).unwrap();
        assert!(budget.try_take(2).is_none());
        drop(a);
        assert!(budget.try_take(2).is_some());
    }

    #[test]
    fn the_process_limit_is_raised_to_the_hard_limit() {
        let limit = raise_descriptor_limit();
        let mut now = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `now` is valid and writable.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) }, 0);
        assert_eq!(limit.raised, now.rlim_cur);
        assert_eq!(now.rlim_cur, now.rlim_max);
        assert!(limit.original <= limit.raised);
        assert_eq!(
            DescriptorBudget::process().size(),
            limit.raised.saturating_sub(RESERVED_DESCRIPTORS)
        );
    }
}
