//! Token and cost statistics over Pi session stores, counted the way Pi counts them.
//!
//! Pi's own session statistics (`/session`, `AgentSession.getSessionStats`) add up, over
//! every entry of one file, the usage of assistant messages, of `usage` entries, of
//! compactions and branch summaries, and of tool results that did nested model work. This
//! crate counts exactly that for every session of a [`Listing`], and then answers what Pi
//! cannot:
//!
//! - **Forks are counted once.** A forked or cloned session (header `parentSession`, or a
//!   pi-subagents run under `forks/`) starts with a verbatim copy of its parent's entries, same
//!   ids and timestamps. Each session row reports `pi` (what Pi reports for the file) and
//!   `own` (without the copies); every aggregate counts a copied record once, in its parent.
//! - **Subagent runs are counted once**, each on its own row and rolled up into the session
//!   that launched them (`withRuns`), so a session's true cost includes its delegated work.
//!   `subagent-artifacts/` copies are never in a listing, so never counted.
//! - **Unknown cost is said.** Tokens always count; a record whose provider recorded no cost
//!   (none, or not a finite number) is counted in [`Usage::n_cost_unknown`].
//! - Rows can be grouped by session, project, model, day, week and month, combined, with
//!   periods in any time zone, and limited to records whose own timestamp is in a range.
//!
//! The work is split so that the caller owns the threads: [`StatsPlan::new`] plans the files,
//! [`StatsPlan::scan`] reads one (call it from any pool), [`StatsPlan::finish`] aggregates.
//! [`stats`] does all three on the current rayon pool. Each file is read once, and only lines
//! that can carry usage are decoded; memory grows with the number of rows, not with the files.
//! Nothing is ever written, and a file or line that cannot be counted is a warning.

#![deny(missing_docs)]

mod error;
mod options;
mod plan;
mod scan;

pub use error::StatsError;
pub use options::{StatsOptions, parse_group_keys};
pub use pi_retrospect_core::stats::{Figures, GroupKey, RowSession, StatsReport, StatsRow, Usage};
pub use plan::StatsPlan;
pub use scan::FileScan;

use std::collections::HashMap;

use pi_retrospect_core::Listing;

/// Returns the report over every session of `listing`, reading the files in parallel on the
/// current rayon pool (run it inside `ThreadPool::install` to choose the pool).
pub fn stats(listing: &Listing, options: StatsOptions) -> StatsReport {
    stats_with_prescans(listing, options, Vec::new())
}

/// Returns the report over every session of `listing` like [`stats`], using the scans of
/// [`prescan`] made while the listing was walked (by path) instead of opening those files a
/// second time. A prescan that the plan cannot use as it is (a fork or a fork's parent, a
/// file whose tool results name subagent runs, a session `only` leaves out) is set aside
/// and the file read again, so the report is the same with or without prescans.
pub fn stats_with_prescans(
    listing: &Listing,
    options: StatsOptions,
    prescans_in: Vec<(String, Box<FileScan>)>,
) -> StatsReport {
    use rayon::prelude::*;
    let plan = StatsPlan::new(listing, options);
    // Each planned file finds its prescan by path on the pool's threads; the scans are then
    // moved (as boxes) into plan order, one pointer each.
    let by_path: HashMap<&str, usize, foldhash::fast::RandomState> = prescans_in
        .iter()
        .enumerate()
        .map(|(position, (path, _))| (path.as_str(), position))
        .collect();
    let positions: Vec<Option<usize>> = (0..plan.n_files())
        .into_par_iter()
        .map(|idx| by_path.get(plan.path(idx)).copied())
        .collect();
    drop(by_path);
    let (paths, mut prescans): (Vec<String>, Vec<Option<Box<FileScan>>>) = prescans_in
        .into_iter()
        .map(|(path, scan)| (path, Some(scan)))
        .unzip();
    let work: Vec<Option<Box<FileScan>>> = positions
        .iter()
        .map(|position| position.and_then(|position| prescans[position].take()))
        .collect();
    // The pool's tasks stop reading with the caller (an MCP call answered early).
    let stop = pi_retrospect_read::watched_stop();
    let scans: Vec<Box<FileScan>> = work
        .into_par_iter()
        .enumerate()
        .map(|(idx, prescan)| {
            pi_retrospect_read::reading_while(stop.clone(), || {
                prescan
                    .and_then(|prescan| plan.use_prescan(idx, prescan))
                    .unwrap_or_else(|| Box::new(plan.scan(idx)))
            })
        })
        .collect();
    let report = plan.finish(&scans);
    // Freeing one record per file is the caller's wait for nothing: a pool thread does it
    // while the report is shown.
    rayon::spawn(move || drop((scans, paths, prescans)));
    report
}

/// How many bytes from a file's start a caller that opens the files should read and hand to
/// [`prescan`]: most session files are smaller, and are then read in one go.
pub const PRESCAN_HEAD_BYTES: usize = 256 * 1024;

/// Scans the session file at `path`, open as `file` (regular, opened without following a
/// symbolic link; read with positional reads, so its offset does not matter), for a report
/// with `options`, before the listing is complete: as a listed file with a valid header,
/// counted, and with no run file known. `head` holds the file's first bytes, already read
/// through `file` (all of it when `is_whole`); they are not read again. [`stats_with_prescans`]
/// uses the scan when that is what its plan asks of the file.
pub fn prescan(
    path: &str,
    file: &std::fs::File,
    head: &[u8],
    is_whole: bool,
    options: &StatsOptions,
) -> Box<FileScan> {
    let no_runs = scan::PathSet::default();
    let request = scan::ScanRequest {
        options,
        is_counted: true,
        keeps_records: false,
        keeps_keys: false,
        // The walk validated the header through this descriptor; the plan puts the listed
        // instant in its place.
        listed_instant: Some(pi_retrospect_core::Timestamp::default()),
        listed: &no_runs,
        wants_facts: options.group_by.contains(&GroupKey::Session),
    };
    let head = scan::Head {
        bytes: head,
        is_whole,
    };
    // Boxed: a walk moves its bodies several times before the plan takes them.
    Box::new(scan::scan_open_file_from(path, file, head, &request))
}
