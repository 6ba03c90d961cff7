//! The output side of a connection: frames from every call are written whole, so lines
//! never interleave.
//!
//! A small frame (a result, an error, a bash output chunk) is written at once by the thread
//! that produced it when nothing is queued ahead of it: no hand-off, no wake-up of another
//! thread. Big frames (download data) and anything behind them go through a bounded queue to a
//! writer thread, so the producer encodes the next chunk while the previous one is written.
//! Either way, frames sent one after another from the same thread (a call's output frames and
//! then its result) reach the stream in that order.

use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Duration;

use tool_protocol::RunnerFrame;

/// Frames queued before a sender waits for the writer (back-pressure for big downloads).
const QUEUE_FRAMES: usize = 8;
/// Frames up to this size are written directly when nothing is queued.
const DIRECT_BYTES: usize = 64 * 1024;
/// Written line buffers kept for reuse, so big frames do not fault in fresh pages each time.
const SPARE_BUFFERS: usize = 8;
/// Buffers larger than this are not kept.
const SPARE_CAPACITY: usize = 8 * 1024 * 1024;

type Sink = BufWriter<Box<dyn Write + Send>>;

/// The stream, and how many queued frames are not written yet.
struct Output {
    sink: Option<Sink>,
    queued: usize,
}

struct Shared {
    output: Mutex<Output>,
    broken: AtomicBool,
    on_broken: Mutex<Option<Box<dyn FnOnce() + Send>>>,
    spares: Mutex<Vec<Vec<u8>>>,
}

impl Shared {
    fn output(&self) -> MutexGuard<'_, Output> {
        self.output.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks the output broken and runs `on_broken` once (never under the output lock).
    fn fail(&self) {
        self.broken.store(true, Ordering::SeqCst);
        let callback = self
            .on_broken
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(callback) = callback {
            callback();
        }
    }

    fn recycle(&self, mut line: Vec<u8>) {
        if line.capacity() > SPARE_CAPACITY {
            return;
        }
        let mut spares = self.spares.lock().unwrap_or_else(PoisonError::into_inner);
        if spares.len() < SPARE_BUFFERS {
            line.clear();
            spares.push(line);
        }
    }
}

/// Writes `line` and flushes; false when the stream is gone or failed.
fn write_line(output: &mut Output, line: &[u8], flush: bool) -> bool {
    let Some(sink) = output.sink.as_mut() else {
        return false;
    };
    sink.write_all(line).is_ok() && (!flush || sink.flush().is_ok())
}

/// Sends encoded frames to the connection's output. Cheap to clone.
#[derive(Clone)]
pub struct FrameSender {
    tx: SyncSender<Vec<u8>>,
    shared: Arc<Shared>,
}

impl FrameSender {
    /// Sends one encoded line (`\n` included). False once the output is gone.
    pub fn send_line(&self, line: Vec<u8>) -> bool {
        if self.is_broken() {
            return false;
        }
        let mut output = self.shared.output();
        if line.len() <= DIRECT_BYTES && output.queued == 0 {
            let written = write_line(&mut output, &line, true);
            drop(output);
            self.shared.recycle(line);
            if !written {
                self.shared.fail();
            }
            return written;
        }
        // Take a place in the queue before letting go of the lock, so a later frame from
        // this thread cannot be written directly ahead of this one.
        output.queued += 1;
        drop(output);
        if self.tx.send(line).is_ok() {
            return true;
        }
        self.shared.output().queued -= 1;
        false
    }

    pub fn send(&self, frame: &RunnerFrame) -> bool {
        self.send_line(frame.encode().into_bytes())
    }

    /// An empty buffer to encode a line into, recycled from lines already written.
    pub fn buffer(&self) -> Vec<u8> {
        self.shared
            .spares
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .unwrap_or_default()
    }

    /// True once a write failed (the peer went away).
    pub fn is_broken(&self) -> bool {
        self.shared.broken.load(Ordering::SeqCst)
    }
}

pub struct FrameWriter {
    sender: Option<FrameSender>,
    shared: Arc<Shared>,
    /// Disconnects when the writer thread ends.
    done: Receiver<()>,
}

impl FrameWriter {
    /// Starts the writer thread. `on_broken` runs once if a write fails.
    pub fn start(
        output: impl Write + Send + 'static,
        on_broken: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<Self> {
        let (tx, rx) = sync_channel(QUEUE_FRAMES);
        let sink: Sink = BufWriter::with_capacity(256 * 1024, Box::new(output));
        let shared = Arc::new(Shared {
            output: Mutex::new(Output {
                sink: Some(sink),
                queued: 0,
            }),
            broken: AtomicBool::new(false),
            on_broken: Mutex::new(Some(Box::new(on_broken))),
            spares: Mutex::new(Vec::new()),
        });
        let writer = Arc::clone(&shared);
        let (done_tx, done) = sync_channel::<()>(0);
        thread::Builder::new()
            .name("frame-writer".into())
            .spawn(move || {
                write_queued(&writer, &rx);
                drop(done_tx);
            })?;
        Ok(Self {
            sender: Some(FrameSender {
                tx,
                shared: Arc::clone(&shared),
            }),
            shared,
            done,
        })
    }

    pub fn sender(&self) -> Option<FrameSender> {
        self.sender.clone()
    }

    /// Closes this handle's sender, waits until every queued frame is written (which happens
    /// once every other sender is gone too; at most `limit` when given), then closes the
    /// stream. True when the writer finished.
    pub fn finish(mut self, limit: Option<Duration>) -> bool {
        self.sender = None;
        let finished = match limit {
            None => self.done.recv().is_err(),
            Some(limit) => matches!(
                self.done.recv_timeout(limit),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
            ),
        };
        let sink = self.shared.output().sink.take();
        if let Some(mut sink) = sink {
            // The peer may be gone; there is nobody left to tell.
            let _ = sink.flush();
        }
        finished
    }
}

fn write_queued(shared: &Shared, rx: &Receiver<Vec<u8>>) {
    while let Ok(line) = rx.recv() {
        let mut output = shared.output();
        output.queued -= 1;
        let flush = output.queued == 0;
        let written = shared.broken.load(Ordering::SeqCst) || write_line(&mut output, &line, flush);
        drop(output);
        shared.recycle(line);
        if !written {
            // Keep draining afterwards, so no sender ever blocks on a full queue.
            shared.fail();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_from_many_threads_never_interleave() {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let writer = FrameWriter::start(Shared(Arc::clone(&buf)), || {}).unwrap();
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let sender = writer.sender().unwrap();
                thread::spawn(move || {
                    for i in 0..100 {
                        let line =
                            format!("{{\"t\":{t},\"i\":{i},\"pad\":\"{}\"}}\n", "x".repeat(5000));
                        assert!(sender.send_line(line.into_bytes()));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(writer.finish(None));
        let text = String::from_utf8(buf.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 800);
        for line in text.lines() {
            assert!(
                line.starts_with("{\"t\":") && line.ends_with("\"}"),
                "torn line"
            );
        }
    }

    #[test]
    fn a_small_frame_never_overtakes_a_queued_big_one_from_the_same_thread() {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let writer = FrameWriter::start(Shared(Arc::clone(&buf)), || {}).unwrap();
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let sender = writer.sender().unwrap();
                thread::spawn(move || {
                    for i in 0..50 {
                        let big = format!("{t} {i} big {}\n", "x".repeat(100_000));
                        assert!(sender.send_line(big.into_bytes()));
                        assert!(sender.send_line(format!("{t} {i} small\n").into_bytes()));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(writer.finish(None));
        let text = String::from_utf8(buf.lock().unwrap().clone()).unwrap();
        for t in 0..4 {
            let mine: Vec<String> = text
                .lines()
                .filter(|l| l.starts_with(&format!("{t} ")))
                .map(|l| l.split(' ').take(3).collect::<Vec<_>>().join(" "))
                .collect();
            let expected: Vec<String> = (0..50)
                .flat_map(|i| [format!("{t} {i} big"), format!("{t} {i} small")])
                .collect();
            assert_eq!(mine, expected);
        }
    }

    #[test]
    fn a_broken_output_is_reported_once_and_senders_never_block() {
        let (tx, rx) = std::sync::mpsc::channel();
        let writer = FrameWriter::start(Closed, move || tx.send(()).unwrap()).unwrap();
        let sender = writer.sender().unwrap();
        sender.send_line(b"x\n".to_vec());
        rx.recv().unwrap();
        for _ in 0..100 {
            assert!(!sender.send_line(b"y\n".to_vec()));
        }
        assert!(sender.is_broken());
        drop(sender);
        assert!(writer.finish(Some(Duration::from_secs(5))));
    }

    #[test]
    fn finish_waits_for_the_frames_of_other_senders() {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let writer = FrameWriter::start(Shared(Arc::clone(&buf)), || {}).unwrap();
        let late = writer.sender().unwrap();
        let t = thread::spawn(move || {
            thread::sleep(Duration::from_millis(50));
            assert!(late.send_line(b"late\n".to_vec()));
        });
        assert!(writer.finish(Some(Duration::from_secs(5))));
        t.join().unwrap();
        assert_eq!(buf.lock().unwrap().as_slice(), b"late\n");
    }
}
