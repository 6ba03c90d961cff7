//! One writer thread per connection: frames from every call arrive over a bounded channel and
//! are written whole, so lines never interleave. The writer flushes when the queue runs dry,
//! which batches bursts (downloads) and keeps single frames prompt.

use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use tool_protocol::RunnerFrame;

/// Frames queued before a sender waits for the writer (back-pressure for big downloads).
const QUEUE_FRAMES: usize = 8;
/// Written line buffers kept for reuse, so big frames do not fault in fresh pages each time.
const SPARE_BUFFERS: usize = 8;
/// Buffers larger than this are not kept.
const SPARE_CAPACITY: usize = 8 * 1024 * 1024;

type Spares = Arc<Mutex<Vec<Vec<u8>>>>;

/// Sends encoded frames to the connection's writer. Cheap to clone.
#[derive(Clone)]
pub struct FrameSender {
    tx: SyncSender<Vec<u8>>,
    broken: Arc<AtomicBool>,
    spares: Spares,
}

impl FrameSender {
    /// Queues one encoded line (`\n` included). False once the output is gone.
    pub fn send_line(&self, line: Vec<u8>) -> bool {
        !self.is_broken() && self.tx.send(line).is_ok()
    }

    pub fn send(&self, frame: &RunnerFrame) -> bool {
        self.send_line(frame.encode().into_bytes())
    }

    /// An empty buffer to encode a line into, recycled from lines already written.
    pub fn buffer(&self) -> Vec<u8> {
        self.spares
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .unwrap_or_default()
    }

    /// True once a write failed (the peer went away).
    pub fn is_broken(&self) -> bool {
        self.broken.load(Ordering::SeqCst)
    }
}

pub struct FrameWriter {
    sender: Option<FrameSender>,
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
        let broken = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&broken);
        let spares = Spares::default();
        let recycle = Arc::clone(&spares);
        let (done_tx, done) = sync_channel::<()>(0);
        thread::Builder::new()
            .name("frame-writer".into())
            .spawn(move || {
                write_frames(output, &rx, &flag, &recycle, on_broken);
                drop(done_tx);
            })?;
        Ok(Self {
            sender: Some(FrameSender { tx, broken, spares }),
            done,
        })
    }

    pub fn sender(&self) -> Option<FrameSender> {
        self.sender.clone()
    }

    /// Closes this handle's sender and waits until every queued frame is written, which
    /// happens once every other sender is gone too; at most `limit` when given. True when the
    /// writer finished.
    pub fn finish(mut self, limit: Option<Duration>) -> bool {
        self.sender = None;
        match limit {
            None => self.done.recv().is_err(),
            Some(limit) => matches!(
                self.done.recv_timeout(limit),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
            ),
        }
    }
}

fn write_frames(
    output: impl Write,
    rx: &Receiver<Vec<u8>>,
    broken: &AtomicBool,
    spares: &Spares,
    on_broken: impl FnOnce(),
) {
    let mut out = BufWriter::with_capacity(256 * 1024, output);
    let healthy = (|| {
        while let Ok(line) = rx.recv() {
            out.write_all(&line)?;
            recycle(spares, line);
            while let Ok(more) = rx.try_recv() {
                out.write_all(&more)?;
                recycle(spares, more);
            }
            out.flush()?;
        }
        std::io::Result::Ok(())
    })();
    if healthy.is_err() {
        broken.store(true, Ordering::SeqCst);
        on_broken();
        // Keep draining so no sender ever blocks on a full queue.
        while rx.recv().is_ok() {}
    }
}

fn recycle(spares: &Spares, mut line: Vec<u8>) {
    if line.capacity() > SPARE_CAPACITY {
        return;
    }
    let mut spares = spares.lock().unwrap_or_else(PoisonError::into_inner);
    if spares.len() < SPARE_BUFFERS {
        line.clear();
        spares.push(line);
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
