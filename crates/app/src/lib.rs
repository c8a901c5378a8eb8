//! The application layer of pi-retrospect: everything a front end (the CLI, the MCP server,
//! the terminal picker) needs between parsing its input and rendering its output.
//!
//! - [`Environment`]: the process facts the tool depends on (current directory, `$HOME`,
//!   Pi's variables, the clock and time zone), read in one place and passed in as a value so
//!   tests and servers can supply their own.
//! - [`resolve_stores`]: which stores to read, from flags, environment and Pi's settings.
//! - [`resolve_session`]: the SESSION argument (a path, an id or unique id prefix, `latest`).
//! - [`parse_when`]: time bounds (`--since`, `--until`).
//! - One call per capability ([`list()`], [`show()`], [`inspect()`], [`entries()`]) taking
//!   plain typed requests and returning typed results.
//! - The summary cache (`cache.rs`): each session file's name, first user message and last
//!   activity, kept outside the stores so `list --long` shows a name set anywhere.
//! - [`AppError`]: one error type whose [`ErrorKind`] a front end maps to its own exit codes.
//!
//! The layer never prints, never exits and never reads a flag parser's types.

#![deny(missing_docs)]

mod cache;
mod confine;
mod current;
mod env;
mod error;
mod failures;
mod handoff;
mod list;
mod parallel;
pub mod picker;
mod read;
mod search;
mod session_ref;
mod stats;
mod store;
mod when;

pub use cache::{CacheCounts, FILE_NAME as CACHE_FILE_NAME};
pub use confine::confine_to_stores;
pub use env::{Environment, NO_CACHE_VARIABLE};
pub use error::{AppError, ErrorKind, Input};
pub use failures::{FailuresRequest, FailuresResult, failures, failures_streamed};
pub use handoff::{HandoffRequest, handoff, write_handoff};
pub use list::{
    ListRequest, ListResult, PathMap, SummaryReader, list, list_unordered, read_summaries,
};
pub use parallel::map_chunks;
pub use pi_retrospect_transcript::{Lineage, RunInfo};
pub use pi_retrospect_walk::WalkState;
// The libraries' types a front end puts in a request or reads from a result, re-exported so
// that the front ends depend on `app`, `render` and `core` alone.
pub use pi_retrospect_failures::{FailureGroup, FailureKind, FailureRow, GroupBy, RepeatRow};
pub use pi_retrospect_handoff::HandoffOptions;
pub use pi_retrospect_search::{
    CaseMode, DEFAULT_CONTEXT_CHARS, Event as SearchEvent, Mode as SearchMode, Progress,
    ProgressCounts,
};
pub use pi_retrospect_stats::parse_group_keys;
pub use pi_retrospect_transcript::{
    Cursor as InspectCursor, EntryRow, InspectView, MessageFacts, SearchScope, Transcript,
    TranscriptWarning,
};
pub use read::{
    EntriesRequest, EntriesResult, InspectRequest, InspectResult, SessionTarget, ShowRequest,
    ShowResult, ShowView, check_session_file, entries, inspect, lineage, show, time_range,
};
pub use search::{SearchRequest, SearchTerms, search, search_with_progress, session_heading};
pub use session_ref::{
    LocatedSession, OpenedSession, SessionRef, locate_session, open_session, resolve_session,
};
pub use stats::{StatsRequest, StatsResult, stats};
pub use store::{StoreFlags, resolve_stores};
pub use when::{ACCEPTED as ACCEPTED_TIMES, Bound, parse_when};

/// Runs `run` on this thread so that `interrupt` stops it: once interrupted, every read of a
/// session file this thread makes fails, so a long parse or scan (a call whose client gave
/// up or whose time ran out) ends at its next read with an error instead of running on.
pub fn until_interrupted<R>(
    interrupt: &std::sync::Arc<pi_retrospect_search::Progress>,
    run: impl FnOnce() -> R,
) -> R {
    let flag: std::sync::Arc<dyn pi_retrospect_read::StopFlag> = interrupt.clone();
    pi_retrospect_read::reading_until_stopped(flag, run)
}
