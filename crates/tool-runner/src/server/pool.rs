//! A bounded pool of call threads shared by every connection. Calls beyond the bound wait in a
//! queue, so the connection's reader never blocks and a `cancel` is always read.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;

/// Most calls running at once, across all connections.
pub const MAX_WORKERS: usize = 128;

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    /// Workers blocked waiting for a job.
    waiting: usize,
    workers: usize,
}

pub struct Pool {
    state: Mutex<State>,
    wake: Condvar,
    max_workers: usize,
}

impl Pool {
    pub fn new(max_workers: usize) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            max_workers: max_workers.max(1),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `job`; starts a worker when every existing one is busy (up to the bound).
    pub fn submit(self: &Arc<Self>, job: impl FnOnce() + Send + 'static) {
        let mut state = self.lock();
        state.jobs.push_back(Box::new(job));
        if state.jobs.len() > state.waiting && state.workers < self.max_workers {
            let pool = Arc::clone(self);
            let spawned = thread::Builder::new()
                .name("call".into())
                .spawn(move || pool.work());
            if spawned.is_ok() {
                state.workers += 1;
            }
        }
        drop(state);
        self.wake.notify_one();
    }

    fn work(&self) {
        let mut state = self.lock();
        loop {
            if let Some(job) = state.jobs.pop_front() {
                drop(state);
                job();
                state = self.lock();
                continue;
            }
            state.waiting += 1;
            state = self
                .wake
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            state.waiting -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn runs_more_jobs_than_workers_and_never_exceeds_the_bound() {
        let pool = Pool::new(4);
        let running = Arc::new(Mutex::new((0usize, 0usize))); // (now, peak)
        let (tx, rx) = mpsc::channel();
        for i in 0..20 {
            let running = Arc::clone(&running);
            let tx = tx.clone();
            pool.submit(move || {
                {
                    let mut r = running.lock().unwrap();
                    r.0 += 1;
                    r.1 = r.1.max(r.0);
                }
                thread::sleep(Duration::from_millis(20));
                running.lock().unwrap().0 -= 1;
                tx.send(i).unwrap();
            });
        }
        let mut done: Vec<i32> = (0..20).map(|_| rx.recv().unwrap()).collect();
        done.sort_unstable();
        assert_eq!(done, (0..20).collect::<Vec<_>>());
        let peak = running.lock().unwrap().1;
        assert!((2..=4).contains(&peak), "peak {peak}");
        assert!(pool.lock().workers <= 4);
    }
}
