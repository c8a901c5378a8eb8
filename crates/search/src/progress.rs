//! How far a run has got: counters the workers and the consumer update as they go, which
//! another thread may read at any time to show progress (a line on a terminal, a
//! notification). Nothing here draws; a front end decides how and when.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The counters of one run, shared between the run and whoever shows its progress.
///
/// Every count only grows during a run. Counts are updated with relaxed atomics, so a reader
/// sees each one up to date on its own but not always all of them at the same instant.
#[derive(Debug, Default)]
pub struct Progress {
    n_files_total: AtomicU64,
    is_total_known: AtomicBool,
    n_files_searched: AtomicU64,
    n_bytes_searched: AtomicU64,
    n_hits: AtomicU64,
    is_interrupted: AtomicBool,
}

/// Returns one reading of a [`Progress`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProgressCounts {
    /// How many files the run will search (`None` while they are still being listed).
    pub n_files_total: Option<u64>,
    /// Files whose scan is finished.
    pub n_files_searched: u64,
    /// Bytes read so far.
    pub n_bytes_searched: u64,
    /// Hits delivered so far (after the limit).
    pub n_hits: u64,
}

impl Progress {
    /// Returns a reading of every counter.
    pub fn counts(&self) -> ProgressCounts {
        ProgressCounts {
            n_files_total: self
                .is_total_known
                .load(Ordering::Relaxed)
                .then(|| self.n_files_total.load(Ordering::Relaxed)),
            n_files_searched: self.n_files_searched.load(Ordering::Relaxed),
            n_bytes_searched: self.n_bytes_searched.load(Ordering::Relaxed),
            n_hits: self.n_hits.load(Ordering::Relaxed),
        }
    }

    /// Asks the run to stop as soon as it can: no new file is started and files being read
    /// stop at their next chunk. The run then returns what it has delivered so far.
    pub fn interrupt(&self) {
        self.is_interrupted.store(true, Ordering::Relaxed);
    }

    /// Returns whether [`Progress::interrupt`] was called.
    pub fn is_interrupted(&self) -> bool {
        self.is_interrupted.load(Ordering::Relaxed)
    }

    /// Returns the flag [`Progress::interrupt`] sets, for a scan that checks one flag.
    pub(crate) fn interrupt_flag(&self) -> &AtomicBool {
        &self.is_interrupted
    }

    /// Records how many files the run will search.
    pub(crate) fn set_total(&self, n_files: u64) {
        self.n_files_total.store(n_files, Ordering::Relaxed);
        self.is_total_known.store(true, Ordering::Relaxed);
    }

    /// Records that one more file has been scanned, `n_bytes` long.
    pub(crate) fn add_file(&self, n_bytes: u64) {
        self.n_bytes_searched.fetch_add(n_bytes, Ordering::Relaxed);
        self.n_files_searched.fetch_add(1, Ordering::Relaxed);
    }

    /// Records the hits delivered so far.
    pub(crate) fn set_hits(&self, n_hits: u64) {
        self.n_hits.store(n_hits, Ordering::Relaxed);
    }
}

/// A run's interrupt also stops the reads of a thread that watches it
/// ([`pi_retrospect_read::reading_until_stopped`]): a parse or scan outside the run ends too.
impl pi_retrospect_read::StopFlag for Progress {
    fn is_stopped(&self) -> bool {
        self.is_interrupted()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_say_the_total_is_unknown_until_it_is_set() {
        let progress = Progress::default();
        assert_eq!(progress.counts(), ProgressCounts::default());
        progress.set_total(3);
        progress.add_file(10);
        progress.add_file(5);
        progress.set_hits(2);
        assert_eq!(
            progress.counts(),
            ProgressCounts {
                n_files_total: Some(3),
                n_files_searched: 2,
                n_bytes_searched: 15,
                n_hits: 2,
            }
        );
    }
}
