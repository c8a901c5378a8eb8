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
mod json;
mod options;
mod plan;
mod scan;

pub use error::StatsError;
pub use options::{StatsOptions, parse_group_keys};
pub use pi_retrospect_core::stats::{Figures, GroupKey, RowSession, StatsReport, StatsRow, Usage};
pub use plan::StatsPlan;
pub use scan::FileScan;

use pi_retrospect_core::Listing;

/// Returns the report over every session of `listing`, reading the files in parallel on the
/// current rayon pool (run it inside `ThreadPool::install` to choose the pool).
pub fn stats(listing: &Listing, options: StatsOptions) -> StatsReport {
    use rayon::prelude::*;
    let plan = StatsPlan::new(listing, options);
    let scans = (0..plan.n_files())
        .into_par_iter()
        .map(|idx| plan.scan(idx))
        .collect();
    plan.finish(scans)
}
