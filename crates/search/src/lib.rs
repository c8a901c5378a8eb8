//! Exact search of Pi session files without an index, at the speed of reading their bytes.
//!
//! A [`Query`] (a [`Pattern`] plus a [`Scope`]) compiles into a [`Searcher`]. The searcher
//! reads a file in large chunks and runs a *prefilter* over the raw bytes: the pattern
//! translated into the escaped form JSON stores text in (see the `prefilter` module), so
//! that only lines that can hold a match are read. A candidate line's searchable texts are
//! read straight from its bytes by `read`'s tokenizer (the line is decoded whole only when
//! that reading leaves it in doubt) and then checked with the exact [`Matcher`]. A match that crosses a JSON escape (a quote, a
//! backslash, a newline, a `\uXXXX`) is found; a match only in a field name, an id, image
//! data or a signature is not. Files with hits are parsed once more, by the transcript
//! reader, to tell which hits are on the session's active branch.
//!
//! [`search_files`] searches many files on a pool of workers and hands every result to one
//! consumer in the caller's order ([`files_in_order`] gives the usual ones), with a limit,
//! counts per file and files-with-matches ([`Mode`]), and keeps a [`Progress`] that a front end
//! may show; memory stays bounded by a small window
//! of files whatever the store's size. Unreadable files and damaged lines are
//! [`SearchWarning`]s, never errors.
//!
//! Which texts of an entry are searched, and which by default, is the one rule of
//! `pi-retrospect-read` (`read::searchable`), shared with `inspect search` and
//! `entries --grep`; this crate reads the raw bytes fast and asks that rule about each
//! candidate line.

#![deny(missing_docs)]

mod decode;
mod error;
mod order;
mod pattern;
mod prefilter;
mod progress;
mod run;
mod scope;
mod searcher;
mod snippet;

pub use error::SearchError;
pub use order::files_in_order;
pub use pattern::{CaseMode, Matcher, Pattern, Syntax};
/// The result types, shared with the renderers through `pi-retrospect-core`.
pub use pi_retrospect_core::search::{
    FieldKind, FileCount, MatchRange, SearchDocument, SearchHit, SearchTotals, SearchWarning,
};
pub use progress::{Progress, ProgressCounts};
pub use run::{Event, RunOptions, search_files, search_files_with_progress};
pub use scope::{FieldKinds, Scope};
pub use searcher::{DEFAULT_CONTEXT_CHARS, FileResult, Mode, Query, SearchFile, Searcher};
