//! A `grep` over a folder: one thread walks, worker threads search, and the walking thread
//! puts the results back in walk order.
//!
//! * The walk runs on the calling thread and hands files, numbered in walk order, to a bounded
//!   queue in batches of [`BATCH`] files from at most [`FOLDERS_PER_BATCH`] folders (one
//!   hand-over per file cost a thread wake-up per file, more than searching a small file). One worker per available core (at most [`MAX_WORKERS`])
//!   takes batches from the queue, each with its own DFA cache and read buffer, and sends back
//!   what it found.
//! * [`Collector`] applies the results strictly in walk order, so the answer is the one a
//!   single thread would give, whatever order the workers finish in: the same matches, the
//!   same counts, `truncated` set at the same file. Workers may search a few files past the
//!   point where the result fills up; those results are dropped.
//! * When no worker thread can be started (or none is asked for), the walking thread searches
//!   each file itself as the walk finds it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread;

use tool_protocol::GrepResult;

use super::SearchError;
use super::grep::PathFilter;
use super::grep_file::{FileOutcome, FileSearcher};
use super::regex::Regex;
use super::walk::{Entry, EntryKind, Visit, WalkOptions, open_entry, walk};

/// The most search threads one `grep` starts.
pub(crate) const MAX_WORKERS: usize = 8;
/// Files per hand-over to a worker.
const BATCH: usize = 64;
/// Folders a batch may hold open (each file keeps its folder's handle until it is searched), so
/// that a tree of one file per folder cannot run the process out of file descriptors: at most
/// this many per batch queued or being searched.
const FOLDERS_PER_BATCH: usize = 16;
/// Batches queued per worker (bounds the work done past a full result).
const QUEUE_PER_WORKER: usize = 2;

/// What one `grep` over a tree needs besides the base.
pub(crate) struct TreeSearch<'a> {
    pub(crate) regex: &'a Regex,
    pub(crate) filter: &'a PathFilter,
    pub(crate) context: usize,
    pub(crate) max_matches: u64,
    /// How many search threads to use; `None`: one per available core; `Some(0)`: none, the
    /// walking thread searches each file as it is found.
    pub(crate) workers: Option<usize>,
}

/// Files for a worker: consecutive in walk order, starting at `first`.
struct Batch {
    first: usize,
    files: Vec<FileRef>,
    /// How many different folders `files` come from (a folder's files are consecutive).
    folders: usize,
}

/// A file found by the walk: its folder's handle, its name there, and its path as reported.
struct FileRef {
    folder: Arc<File>,
    name: OsString,
    path: PathBuf,
}

impl FileRef {
    fn of(entry: &Entry<'_>) -> Self {
        Self {
            folder: Arc::clone(entry.folder),
            name: entry.name.to_owned(),
            path: entry.path.to_path_buf(),
        }
    }
}

/// A worker's answers for a batch, in its order: `None` for a file that could not be read
/// (it is skipped) and for files not searched after `stop` or `cancel` was set.
struct Done {
    first: usize,
    outcomes: Vec<Option<FileOutcome>>,
}

/// Searches the folder `base` as described in the module documentation.
pub(crate) fn search_tree(
    base: &Path,
    search: &TreeSearch<'_>,
    cancel: &AtomicBool,
) -> Result<GrepResult, SearchError> {
    let workers = search
        .workers
        .unwrap_or_else(|| thread::available_parallelism().map_or(1, NonZeroUsize::get))
        .min(MAX_WORKERS);
    let stop = AtomicBool::new(false);
    let (batch_sender, batches) = mpsc::sync_channel::<Batch>(workers.max(1) * QUEUE_PER_WORKER);
    let batches = Arc::new(Mutex::new(batches));
    let (done_sender, done) = mpsc::channel::<Done>();
    let collector = thread::scope(|scope| {
        let mut started = 0;
        for _ in 0..workers {
            let (batches, done_sender, stop) = (Arc::clone(&batches), done_sender.clone(), &stop);
            let worker = thread::Builder::new()
                .name("grep-search".to_owned())
                .spawn_scoped(scope, move || {
                    let mut searcher =
                        FileSearcher::new(search.regex, search.context, search.max_matches);
                    work(&batches, &done_sender, &mut searcher, stop, cancel);
                });
            if worker.is_ok() {
                started += 1;
            }
        }
        drop(done_sender);
        let feed = if started == 0 {
            Feed::Inline(Box::new(FileSearcher::new(
                search.regex,
                search.context,
                search.max_matches,
            )))
        } else {
            Feed::Workers {
                sender: batch_sender,
                done,
                batch: Batch::starting_at(0),
            }
        };
        let mut dispatcher = Dispatcher {
            feed,
            next_index: 0,
            collector: Collector::new(search.max_matches),
        };
        let walked = walk(
            base,
            WalkOptions {
                respect_gitignore: true,
            },
            cancel,
            |entry| match entry.kind {
                EntryKind::Dir if search.filter.excludes_dir(entry.components) => Visit::SkipDir,
                EntryKind::File if search.filter.allows_file(entry.components) => {
                    dispatcher.push(entry);
                    if dispatcher.collector.is_complete() {
                        Visit::Stop
                    } else {
                        Visit::Continue
                    }
                }
                _ => Visit::Continue,
            },
        );
        // Workers skip what is left once the answer is complete or the walk failed.
        stop.store(
            walked.is_err() || dispatcher.collector.is_complete(),
            Ordering::Relaxed,
        );
        walked.map(|()| dispatcher.finish())
    })?;
    if cancel.load(Ordering::Relaxed) {
        // Workers skip their files once it is set: the answer may lack some.
        return Err(SearchError::Cancelled);
    }
    Ok(collector.finish())
}

/// Takes the walk's files in order and has them searched.
struct Dispatcher<'r> {
    feed: Feed<'r>,
    /// The walk index of the next file pushed.
    next_index: usize,
    collector: Collector,
}

/// Where the walk's files go.
enum Feed<'r> {
    /// To the worker threads, in batches; their answers come back on `done`.
    Workers {
        sender: SyncSender<Batch>,
        done: Receiver<Done>,
        batch: Batch,
    },
    /// No worker could be started: each file is searched on the walking thread.
    Inline(Box<FileSearcher<'r>>),
}

impl Batch {
    fn starting_at(first: usize) -> Self {
        Self {
            first,
            files: Vec::with_capacity(BATCH),
            folders: 0,
        }
    }

    fn push(&mut self, file: FileRef) {
        let same_folder = self
            .files
            .last()
            .is_some_and(|last| Arc::ptr_eq(&last.folder, &file.folder));
        if !same_folder {
            self.folders += 1;
        }
        self.files.push(file);
    }

    fn is_full(&self) -> bool {
        self.files.len() >= BATCH || self.folders >= FOLDERS_PER_BATCH
    }
}

impl Dispatcher<'_> {
    fn push(&mut self, entry: &Entry<'_>) {
        let index = self.next_index;
        self.next_index += 1;
        match &mut self.feed {
            Feed::Inline(searcher) => {
                let outcome = search_one(searcher, &FileRef::of(entry));
                self.collector.accept(Done {
                    first: index,
                    outcomes: vec![outcome],
                });
            }
            Feed::Workers { batch, .. } => {
                batch.push(FileRef::of(entry));
                if batch.is_full() {
                    self.hand_over();
                }
            }
        }
    }

    /// Sends the batch being filled to the workers, after taking in the answers that came.
    fn hand_over(&mut self) {
        let Feed::Workers {
            sender,
            done,
            batch,
        } = &mut self.feed
        else {
            return;
        };
        while let Ok(finished) = done.try_recv() {
            self.collector.accept(finished);
        }
        let full = std::mem::replace(batch, Batch::starting_at(self.next_index));
        if !full.files.is_empty() && !self.collector.is_complete() {
            // Every worker takes batches until the queue closes, so this returns.
            let _ = sender.send(full);
        }
    }

    /// Sends the last batch, closes the queue and waits for every answer.
    fn finish(mut self) -> Collector {
        self.hand_over();
        if let Feed::Workers { sender, done, .. } = self.feed {
            drop(sender);
            for finished in done.iter() {
                self.collector.accept(finished);
            }
        }
        self.collector
    }
}

/// A worker: searches queued batches until the queue closes (skipping their files once
/// `stop` or `cancel` is set, so the walk never blocks on a full queue).
fn work(
    jobs: &Mutex<Receiver<Batch>>,
    done: &Sender<Done>,
    searcher: &mut FileSearcher<'_>,
    stop: &AtomicBool,
    cancel: &AtomicBool,
) {
    loop {
        let batch = match jobs.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        let Ok(batch) = batch else { return };
        let outcomes = batch
            .files
            .iter()
            .map(|file| {
                if stop.load(Ordering::Relaxed) || cancel.load(Ordering::Relaxed) {
                    None
                } else {
                    search_one(searcher, file)
                }
            })
            .collect();
        let finished = Done {
            first: batch.first,
            outcomes,
        };
        if done.send(finished).is_err() {
            return;
        }
    }
}

/// Searches one file of the walk. A file that cannot be read (gone, permission denied,
/// swapped for a link since the listing) gives `None`: it is skipped.
fn search_one(searcher: &mut FileSearcher<'_>, file: &FileRef) -> Option<FileOutcome> {
    open_entry(&file.folder, &file.name)
        .and_then(|opened| searcher.search(&file.path, opened))
        .ok()
}

/// Applies per-file results in walk order and builds the answer.
pub(crate) struct Collector {
    result: GrepResult,
    max_matches: u64,
    /// The walk index of the next result to apply.
    next: usize,
    /// Results that arrived before the ones ahead of them.
    waiting: BTreeMap<usize, Option<FileOutcome>>,
}

impl Collector {
    pub(crate) fn new(max_matches: u64) -> Self {
        Self {
            result: GrepResult {
                matches: Vec::new(),
                files_searched: 0,
                files_skipped_binary: 0,
                truncated: false,
            },
            max_matches,
            next: 0,
            waiting: BTreeMap::new(),
        }
    }

    /// True once `max_matches` is reached and a further match was seen: nothing after this
    /// changes the answer.
    pub(crate) fn is_complete(&self) -> bool {
        self.result.truncated
    }

    fn accept(&mut self, done: Done) {
        for (offset, outcome) in done.outcomes.into_iter().enumerate() {
            self.waiting.insert(done.first + offset, outcome);
        }
        while !self.is_complete() {
            let Some(outcome) = self.waiting.remove(&self.next) else {
                break;
            };
            self.next += 1;
            if let Some(outcome) = outcome {
                self.apply(outcome);
            }
        }
    }

    /// Adds the next file's outcome, in walk order.
    pub(crate) fn apply(&mut self, outcome: FileOutcome) {
        if self.is_complete() {
            return;
        }
        let mut found = match outcome {
            FileOutcome::Binary => {
                self.result.files_skipped_binary += 1;
                return;
            }
            FileOutcome::Searched(found) => found,
        };
        self.result.files_searched += 1;
        let room = self
            .max_matches
            .saturating_sub(self.result.matches.len() as u64);
        if found.more || found.matches.len() as u64 > room {
            found.cut(usize::try_from(room).unwrap_or(usize::MAX));
            self.result.truncated = true;
        }
        self.result.matches.append(&mut found.matches);
    }

    pub(crate) fn finish(self) -> GrepResult {
        self.result
    }
}

#[cfg(test)]
#[path = "grep_tree_tests.rs"]
mod tests;
