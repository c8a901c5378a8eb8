//! The progress line of a long search on stderr: drawn only on a terminal, only once the
//! search has taken more than a moment, at most ten times a second, and erased before any
//! result reaches the same terminal and at the end, so that it never mixes with the output.
//!
//! The counts come from the search's [`Progress`], which its workers update; a thread of
//! ours reads them and draws. [`ProgressLine`] is the drawing alone, driven by the caller's
//! clock, so that it is tested without a terminal or real time.

use std::io::{self, IsTerminal, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pi_retrospect_app::{Progress, ProgressCounts};

/// How long a search runs before its progress is shown: a fast search never flashes a line.
const DELAY: Duration = Duration::from_millis(400);

/// The least time between two drawings of the line.
const INTERVAL: Duration = Duration::from_millis(100);

/// Moves to the start of the line and clears it (carriage return, then ECMA-48 EL 0).
const ERASE: &[u8] = b"\r\x1b[K";

/// Returns whether a progress line belongs on stderr: a terminal that is not `TERM=dumb`,
/// and no `-q`.
pub fn is_wanted() -> bool {
    let is_dumb = std::env::var_os("TERM").is_some_and(|term| term == "dumb");
    io::stderr().is_terminal() && !is_dumb && !crate::output::is_quiet()
}

/// The drawing of one progress line on a terminal writer.
#[derive(Debug)]
pub struct ProgressLine<W: Write> {
    out: W,
    /// Columns available; the line is cut to one less, so it never wraps (a wrapped line
    /// cannot be erased with a carriage return).
    width: Option<usize>,
    /// When the line was last drawn, as time since the search started.
    last_drawn: Option<Duration>,
    /// Whether the line is on the terminal now.
    is_shown: bool,
    /// The text last drawn: the same text is not drawn again.
    shown_text: String,
}

impl<W: Write> ProgressLine<W> {
    /// Returns a line that draws on `out`, cut to `width` columns when known.
    pub fn new(out: W, width: Option<usize>) -> ProgressLine<W> {
        ProgressLine {
            out,
            width,
            last_drawn: None,
            is_shown: false,
            shown_text: String::new(),
        }
    }

    /// Draws `counts` in place of the line shown, if the search has run for `elapsed` past
    /// the delay and the last drawing is at least an interval old.
    pub fn tick(&mut self, elapsed: Duration, counts: &ProgressCounts) -> io::Result<()> {
        if elapsed < DELAY
            || self
                .last_drawn
                .is_some_and(|last| elapsed.saturating_sub(last) < INTERVAL)
        {
            return Ok(());
        }
        let mut text = describe(counts);
        if let Some(width) = self.width {
            // The text is ASCII: one byte per column.
            text.truncate(width.saturating_sub(1));
        }
        if self.is_shown && text == self.shown_text {
            return Ok(());
        }
        let mut bytes = Vec::with_capacity(ERASE.len() + text.len());
        bytes.extend_from_slice(ERASE);
        bytes.extend_from_slice(text.as_bytes());
        self.out.write_all(&bytes)?;
        self.out.flush()?;
        self.last_drawn = Some(elapsed);
        self.is_shown = true;
        self.shown_text = text;
        Ok(())
    }

    /// Erases the line if it is shown, leaving the cursor at the start of an empty line.
    pub fn erase(&mut self) -> io::Result<()> {
        if self.is_shown {
            self.is_shown = false;
            self.out.write_all(ERASE)?;
            self.out.flush()?;
        }
        Ok(())
    }

    /// Returns the writer.
    #[cfg(test)]
    fn into_inner(self) -> W {
        self.out
    }
}

/// Returns the text of the line: files searched of all, bytes, hits.
fn describe(counts: &ProgressCounts) -> String {
    let Some(n_files_total) = counts.n_files_total else {
        return "pi-retrospect: listing sessions ...".to_owned();
    };
    let megabytes = counts.n_bytes_searched / 1_000_000;
    let bytes = if megabytes >= 10_000 {
        format!("{:.1} GB", counts.n_bytes_searched as f64 / 1e9)
    } else {
        format!("{megabytes} MB")
    };
    format!(
        "pi-retrospect: searched {}/{} files, {bytes}, {} {}",
        counts.n_files_searched,
        n_files_total,
        counts.n_hits,
        if counts.n_hits == 1 { "hit" } else { "hits" }
    )
}

/// What the drawing thread and the writer of results share.
struct Shared {
    line: ProgressLine<io::Stderr>,
    is_done: bool,
}

/// Keeps the progress line off the terminal while it lives (see [`ProgressDisplay::hold`]).
pub struct Held<'d> {
    _state: MutexGuard<'d, Shared>,
}

/// The progress line of one search, drawn by a thread of its own from `progress`.
///
/// Dropping it stops the thread and erases the line.
pub struct ProgressDisplay {
    shared: Arc<(Mutex<Shared>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl ProgressDisplay {
    /// Starts drawing `progress` on stderr, timed from now.
    pub fn start(progress: Arc<Progress>) -> ProgressDisplay {
        let width = terminal_size::terminal_size_of(io::stderr())
            .map(|(width, _)| usize::from(width.0))
            .filter(|width| *width > 0);
        let shared = Arc::new((
            Mutex::new(Shared {
                line: ProgressLine::new(io::stderr(), width),
                is_done: false,
            }),
            Condvar::new(),
        ));
        let started = Instant::now();
        let thread = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("search-progress".to_owned())
                .spawn(move || {
                    let (lock, wake) = &*shared;
                    let mut state = lock.lock().unwrap_or_else(PoisonError::into_inner);
                    while !state.is_done {
                        // A failed write to stderr only means no progress is shown.
                        let _ = state.line.tick(started.elapsed(), &progress.counts());
                        state = wake
                            .wait_timeout(state, INTERVAL)
                            .unwrap_or_else(PoisonError::into_inner)
                            .0;
                    }
                })
                .ok()
        };
        ProgressDisplay { shared, thread }
    }

    /// Erases the line and keeps it off the terminal while the returned guard lives: hold it
    /// while a result is written (and flushed) to a standard output that is the same
    /// terminal.
    pub fn hold(&self) -> Held<'_> {
        let mut state = self.lock();
        let _ = state.line.erase();
        Held { _state: state }
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // A poisoned lock only means the drawing thread panicked; the line is still usable.
        self.shared.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for ProgressDisplay {
    fn drop(&mut self) {
        {
            let mut state = self.lock();
            state.is_done = true;
            let _ = state.line.erase();
        }
        self.shared.1.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(n_files_searched: u64, n_hits: u64) -> ProgressCounts {
        ProgressCounts {
            n_files_total: Some(10),
            n_files_searched,
            n_bytes_searched: n_files_searched * 2_500_000,
            n_hits,
        }
    }

    /// One step of a test: a tick at a time (ms since the start) or an erase.
    enum Step {
        Tick(u64, ProgressCounts),
        Erase,
    }

    /// Runs `steps` on a line `width` columns wide and checks the bytes written.
    fn check(width: Option<usize>, steps: &[Step], expected: &str) {
        let mut line = ProgressLine::new(Vec::new(), width);
        for step in steps {
            match step {
                Step::Tick(millis, counts) => {
                    line.tick(Duration::from_millis(*millis), counts)
                        .expect("a Vec takes every write");
                }
                Step::Erase => line.erase().expect("a Vec takes every write"),
            }
        }
        let written = String::from_utf8(line.into_inner()).expect("the line is ASCII");
        assert_eq!(written, expected);
    }

    #[test]
    fn a_fast_search_writes_nothing() {
        check(
            None,
            &[
                Step::Tick(0, counts(0, 0)),
                Step::Tick(100, counts(3, 1)),
                Step::Tick(399, counts(9, 2)),
                Step::Erase,
            ],
            "",
        );
    }

    #[test]
    fn the_line_appears_after_the_delay_and_is_erased_at_the_end() {
        check(
            None,
            &[
                Step::Tick(100, counts(1, 0)),
                Step::Tick(400, counts(4, 1)),
                Step::Erase,
                Step::Erase,
            ],
            "\r\x1b[Kpi-retrospect: searched 4/10 files, 10 MB, 1 hit\r\x1b[K",
        );
    }

    #[test]
    fn drawings_are_at_least_an_interval_apart() {
        check(
            None,
            &[
                Step::Tick(450, counts(4, 0)),
                Step::Tick(500, counts(5, 0)),
                Step::Tick(549, counts(6, 0)),
                Step::Tick(550, counts(7, 3)),
            ],
            "\r\x1b[Kpi-retrospect: searched 4/10 files, 10 MB, 0 hits\
             \r\x1b[Kpi-retrospect: searched 7/10 files, 17 MB, 3 hits",
        );
    }

    #[test]
    fn a_result_erases_the_line_and_the_next_tick_draws_it_again() {
        check(
            None,
            &[
                Step::Tick(500, counts(5, 1)),
                Step::Erase,
                Step::Tick(550, counts(6, 2)),
                Step::Tick(600, counts(6, 2)),
                Step::Tick(700, counts(6, 2)),
                Step::Erase,
            ],
            "\r\x1b[Kpi-retrospect: searched 5/10 files, 12 MB, 1 hit\
             \r\x1b[K\
             \r\x1b[Kpi-retrospect: searched 6/10 files, 15 MB, 2 hits\
             \r\x1b[K",
        );
    }

    #[test]
    fn the_line_is_cut_to_the_terminal_width_and_says_when_listing() {
        let listing = ProgressCounts::default();
        check(
            Some(21),
            &[Step::Tick(500, listing)],
            "\r\x1b[Kpi-retrospect: listi",
        );
        check(
            Some(80),
            &[Step::Tick(500, listing)],
            "\r\x1b[Kpi-retrospect: listing sessions ...",
        );
    }
}
