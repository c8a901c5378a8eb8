//! Searching many files: a pool of workers scans files in parallel, and one consumer on the
//! calling thread receives every result in the caller's file order.
//!
//! Workers claim files in order and may run ahead of the consumer by a bounded window of
//! files (a few dozen per worker when results carry hits; 4096 when they are counts of a
//! few dozen bytes), so memory holds at most a window's results whatever the number of
//! files. A limit, the consumer or an interrupt (`Progress::interrupt`) stops the run early: no new file is
//! started and files being read stop at their next chunk.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use pi_retrospect_core::search::{FileCount, SearchHit, SearchTotals, SearchWarning};

use crate::progress::Progress;
use crate::searcher::{FileResult, Mode, Scratch, SearchFile, Searcher};

/// Returns how a run over many files goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// What to deliver.
    pub mode: Mode,
    /// Stop after this many hits in all (`None`: no limit).
    pub limit: Option<u64>,
    /// Read at most this many hits of each file, as ripgrep's `--max-count` (`None`: all);
    /// the scan of a file stops at the last one it takes.
    pub max_per_file: Option<u64>,
    /// Worker threads; 0 means one per available core.
    pub threads: usize,
}

/// Returns one thing a run delivers, in order: for each file, its hits in file order, then
/// its warnings, then its [`Event::FileDone`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// A hit (only in [`Mode::Hits`]).
    Hit(&'a SearchHit),
    /// A problem with the file.
    Warning(&'a SearchWarning),
    /// The file is finished; its count of hits.
    FileDone(&'a FileCount),
}

/// Files each worker may be ahead of the consumer, per worker, when results carry hits.
const WINDOW_PER_THREAD: usize = 32;

/// Files the workers may be ahead of the consumer when results are counts only (a few dozen
/// bytes each): wide enough that a consumer slow to be scheduled on a busy machine never
/// holds the workers up.
const COUNT_WINDOW: usize = 4096;

/// Results a worker gathers before handing them over, unless the consumer waits for one of
/// them: one wake-up of the consumer per batch instead of one per file.
const BATCH: usize = 16;

/// How often the consumer, waiting for a result, looks whether the run was interrupted.
const INTERRUPT_POLL: Duration = Duration::from_millis(20);

/// Searches `files` in parallel and hands every result to `on_event` on the calling thread,
/// in the order of `files`; `on_event` returns [`ControlFlow::Break`] to stop the run.
/// Returns the totals of what was delivered.
pub fn search_files(
    searcher: &Searcher,
    files: &[SearchFile],
    options: &RunOptions,
    on_event: &mut dyn FnMut(Event<'_>) -> ControlFlow<()>,
) -> SearchTotals {
    search_files_with_progress(searcher, files, options, &Progress::default(), on_event)
}

/// Searches like [`search_files`] and keeps `progress` up to date as it goes: the number of
/// files first, then each file as a worker finishes it, and the hits as they are delivered.
pub fn search_files_with_progress(
    searcher: &Searcher,
    files: &[SearchFile],
    options: &RunOptions,
    progress: &Progress,
    on_event: &mut dyn FnMut(Event<'_>) -> ControlFlow<()>,
) -> SearchTotals {
    progress.set_total(files.len() as u64);
    let mut consumer = Consumer {
        on_event,
        totals: SearchTotals::default(),
        limit: options.limit,
        max_per_file: options.max_per_file,
        is_stopped: false,
        progress,
        searcher,
        scratch: Scratch::default(),
    };
    if options.limit == Some(0) {
        consumer.totals.is_limit_reached = true;
        return consumer.totals;
    }
    let n_threads = match options.threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        threads => threads,
    }
    .min(files.len());
    let pool = if n_threads > 1 {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n_threads)
            .thread_name(|idx| format!("search-{idx}"))
            .build()
            .ok()
    } else {
        None
    };
    match pool {
        Some(pool) => run_parallel(searcher, files, options, &mut consumer, &pool),
        // One thread, or no pool to be had: the same work on the calling thread.
        None => {
            let mut scratch = Scratch::default();
            for file in files {
                if progress.is_interrupted() {
                    break;
                }
                let max_hits = consumer
                    .remaining()
                    .min(options.max_per_file.unwrap_or(u64::MAX));
                let result = searcher.search_file_in_run(
                    file,
                    options.mode,
                    max_hits,
                    &mut scratch,
                    progress.interrupt_flag(),
                );
                progress.add_file(result.n_bytes);
                consumer.deliver(file, result);
                if consumer.is_stopped {
                    break;
                }
            }
        }
    }
    consumer.totals
}

/// Runs the workers on `pool` and the consumer on the calling thread.
fn run_parallel(
    searcher: &Searcher,
    files: &[SearchFile],
    options: &RunOptions,
    consumer: &mut Consumer<'_>,
    pool: &rayon::ThreadPool,
) {
    let (mode, max_per_file) = (options.mode, options.max_per_file);
    let n_workers = pool.current_num_threads();
    let window = match mode {
        Mode::Hits => (n_workers * WINDOW_PER_THREAD).max(2 * BATCH),
        Mode::Count | Mode::FilesWithMatches => COUNT_WINDOW,
    };
    // A worker takes a ticket before it claims a file and the consumer gives one back for
    // each file it delivers, so claimed files stay within `window` of the consumer. A worker
    // hands over the results it holds before it waits for a ticket, and the file the
    // consumer waits for is always claimed already (claims are in order), so it is either
    // being read or handed over: the run cannot deadlock.
    let (ticket_sender, tickets) = crossbeam_channel::bounded::<()>(window);
    for _ in 0..window {
        // The channel has room for exactly `window` tickets.
        let _ = ticket_sender.send(());
    }
    let (result_sender, results) = crossbeam_channel::unbounded::<Vec<(usize, FileResult)>>();
    let next_file = AtomicUsize::new(0);
    // The file the consumer delivers next.
    let head = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let n_delivered_hits = AtomicU64::new(0);
    let limit = consumer.limit;
    let progress = consumer.progress;
    pool.in_place_scope(|scope| {
        for _ in 0..n_workers {
            let tickets = tickets.clone();
            let result_sender = result_sender.clone();
            let (next_file, head, stop, n_delivered_hits) =
                (&next_file, &head, &stop, &n_delivered_hits);
            scope.spawn(move |_| {
                // A worker of its own copy: the regex crate keeps its matching caches in a
                // pool whose owner thread takes one without a lock, every other thread with.
                let searcher = searcher.clone();
                let mut scratch = Scratch::default();
                let mut batch = Vec::with_capacity(BATCH);
                let hand_over = |batch: &mut Vec<(usize, FileResult)>| {
                    batch.is_empty() || result_sender.send(std::mem::take(batch)).is_ok()
                };
                while !stop.load(Ordering::Relaxed) {
                    let has_ticket = match tickets.try_recv() {
                        Ok(()) => true,
                        Err(crossbeam_channel::TryRecvError::Empty) => {
                            hand_over(&mut batch) && tickets.recv().is_ok()
                        }
                        Err(crossbeam_channel::TryRecvError::Disconnected) => false,
                    };
                    if !has_ticket {
                        break;
                    }
                    let idx = next_file.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = files.get(idx) else {
                        break;
                    };
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    // No file needs more hits than the limit has left when it starts.
                    let max_hits = limit
                        .map_or(u64::MAX, |limit| {
                            limit.saturating_sub(n_delivered_hits.load(Ordering::Relaxed))
                        })
                        .min(max_per_file.unwrap_or(u64::MAX));
                    let result =
                        searcher.search_file_in_run(file, mode, max_hits, &mut scratch, stop);
                    progress.add_file(result.n_bytes);
                    batch.push((idx, result));
                    // A worker claims in increasing order, so its batch starts with its
                    // oldest result, the only one the consumer can be waiting for.
                    let is_awaited = batch
                        .first()
                        .is_some_and(|(first, _)| *first <= head.load(Ordering::Relaxed));
                    if (is_awaited || batch.len() >= BATCH) && !hand_over(&mut batch) {
                        break;
                    }
                }
                hand_over(&mut batch);
            });
        }
        drop(result_sender);
        drop(tickets);
        let mut waiting: BTreeMap<usize, FileResult> = BTreeMap::new();
        let mut next = 0usize;
        while next < files.len() && !consumer.is_stopped && !progress.is_interrupted() {
            let Some(result) = waiting.remove(&next) else {
                // Waits in short steps so that an interrupt from another thread is seen
                // while every worker is busy with a long file.
                match results.recv_timeout(INTERRUPT_POLL) {
                    Ok(batch) => waiting.extend(batch),
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                    // Every worker is gone (one panicked; the scope re-raises it).
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
                }
                continue;
            };
            consumer.deliver(&files[next], result);
            n_delivered_hits.store(consumer.totals.n_hits, Ordering::Relaxed);
            next += 1;
            head.store(next, Ordering::Relaxed);
            // A full channel means the workers are done with their tickets anyway.
            let _ = ticket_sender.try_send(());
        }
        stop.store(true, Ordering::Relaxed);
        // Wakes workers waiting for a ticket; they see the stop flag or a closed channel.
        drop(ticket_sender);
    });
}

/// Returns the consumer's side of a run: the callback, the totals and the limit, and what
/// it needs to read a deferred file's hits itself.
struct Consumer<'c> {
    on_event: &'c mut dyn FnMut(Event<'_>) -> ControlFlow<()>,
    totals: SearchTotals,
    limit: Option<u64>,
    max_per_file: Option<u64>,
    is_stopped: bool,
    progress: &'c Progress,
    searcher: &'c Searcher,
    scratch: Scratch,
}

impl Consumer<'_> {
    /// Returns how many more hits the limit allows.
    fn remaining(&self) -> u64 {
        self.limit
            .map_or(u64::MAX, |limit| limit.saturating_sub(self.totals.n_hits))
    }

    fn emit(&mut self, event: Event<'_>) {
        if (self.on_event)(event).is_break() {
            self.is_stopped = true;
        }
    }

    /// Delivers one file's result, cut to the limit; a deferred file's hits are read again
    /// here and delivered as they are found.
    fn deliver(&mut self, file: &SearchFile, result: FileResult) {
        if result.is_deferred {
            self.deliver_streamed(file);
            return;
        }
        let remaining = self.remaining();
        let n_hits = result.n_hits.min(remaining);
        self.count_file(result.n_bytes, n_hits);
        for hit in result
            .hits
            .iter()
            .take(usize::try_from(n_hits).unwrap_or(usize::MAX))
        {
            self.emit(Event::Hit(hit));
            if self.is_stopped {
                return;
            }
        }
        self.finish_file(file, &result.warnings, n_hits);
    }

    /// Reads the hits of `file`, too many for a worker to hold, and delivers each as it is
    /// found, then the file's warnings and count.
    fn deliver_streamed(&mut self, file: &SearchFile) {
        let max_hits = self.remaining().min(self.max_per_file.unwrap_or(u64::MAX));
        let mut scratch = std::mem::take(&mut self.scratch);
        let (on_event, progress, searcher) = (&mut *self.on_event, self.progress, self.searcher);
        let mut n_hits = 0u64;
        let n_before = self.totals.n_hits;
        let mut is_stopped = false;
        let result = searcher.stream_file(
            file,
            max_hits,
            &mut scratch,
            progress.interrupt_flag(),
            &mut |hit| {
                n_hits += 1;
                progress.set_hits(n_before + n_hits);
                if on_event(Event::Hit(hit)).is_break() {
                    is_stopped = true;
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            },
        );
        self.scratch = scratch;
        self.count_file(result.n_bytes, n_hits);
        if is_stopped {
            self.is_stopped = true;
            return;
        }
        self.finish_file(file, &result.warnings, n_hits);
    }

    /// Adds a file of `n_bytes` with `n_hits` hits to the totals.
    fn count_file(&mut self, n_bytes: u64, n_hits: u64) {
        self.totals.n_files_searched += 1;
        self.totals.n_bytes_searched += n_bytes;
        if n_hits > 0 {
            self.totals.n_files_with_hits += 1;
        }
        self.totals.n_hits += n_hits;
        self.progress.set_hits(self.totals.n_hits);
    }

    /// Delivers the warnings and the end of `file`, and stops the run at its limit.
    fn finish_file(&mut self, file: &SearchFile, warnings: &[SearchWarning], n_hits: u64) {
        for warning in warnings {
            self.emit(Event::Warning(warning));
            if self.is_stopped {
                return;
            }
        }
        let count = FileCount {
            path: file.path.clone(),
            depth: file.depth,
            n_hits,
        };
        self.emit(Event::FileDone(&count));
        if self.limit.is_some() && self.remaining() == 0 {
            self.totals.is_limit_reached = true;
            self.is_stopped = true;
        }
    }
}
