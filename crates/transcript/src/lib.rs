//! Full parsing of one Pi session file: its header, every entry, the entry tree, the
//! model-visible context, turns and checkpoints, plus the pure views a CLI renders
//! (`entries`, `inspect`, `show`).
//!
//! The parser streams the file line by line and keeps only each entry's envelope (ids, type,
//! role and the handful of fields the tree and context need) together with its byte range.
//! Message content is decoded on demand by re-reading that range, so memory stays far below
//! the file's size. The file is opened read-only, never locked, and read only up to the length
//! seen when it was opened: a file that Pi is appending to gives a consistent snapshot.
//!
//! Damage is data, not failure: every problem in the file becomes a [`TranscriptWarning`] with its line
//! number, and parsing never aborts on file content.

#![deny(missing_docs)]

mod activity;
mod change;
mod content;
mod context;
mod entries;
mod entry;
mod envelope;
mod error;
mod facts;
mod inspect;
mod session;
mod show;
mod skim;
mod store;
mod summary;
mod text;
mod tree;
mod turns;
mod warning;

pub use activity::{
    LastActivity, MAX_ACTIVITY_TAIL_BYTES, read_last_activity, read_last_activity_from,
};
pub use content::{
    EntryContent, Failure, MessageFacts, MessageStatus, ToolCall, content_text_blocks,
    entry_content, entry_text, message_facts, message_status, searchable_texts,
    summarize_arguments,
};
pub use context::{Context, ContextEdit, ContextMessage, ContextMessageKind, ModelRef};
pub use entries::{EntriesFilter, EntryRow, entries, for_each_entry_row};
pub use entry::{ContentShape, Entry, EntryKind, MessageMeta, Role};
pub use error::TranscriptError;
pub use facts::{ForkCopy, LabelFact, Lineage, RunInfo, SessionFacts, facts, fork_copy, labels};
pub use inspect::{
    BranchPoint, CheckpointItem, Cursor, InspectHit, InspectPage, InspectPageRequest, InspectView,
    NEIGHBOUR_TEXT_CHARS, READ_PAGE_CHARS, ReadItem, ReadResult, ToolResultRef, inspect,
    inspect_path,
};
/// Re-exported from core, where the list renderer shares it.
pub use pi_retrospect_core::sanitize::sanitize_for_terminal;
/// The one rule for searchable text and case, from `pi-retrospect-read`: what `inspect search`
/// and `entries --grep` look in, as `search` does.
pub use pi_retrospect_read::searchable::{CaseMode, FieldKinds, SearchScope};
pub use session::{Entries, EntriesIter, Header, ReadLimits, Snapshot, Transcript};
pub use show::{
    DisplayItem, ShowOptions, TreeCounts, TreeRow, active_branch_items, entry_tree, for_each_item,
    for_each_tree_row, tree_counts,
};
pub use summary::{
    ENDS_WHOLE_BYTES, HEAD_BYTES, MAX_FACT_LINE_BYTES, SummaryError, SummaryScan, SummaryScope,
    read_ends_with_head, read_summary, read_summary_from, read_summary_from_in, read_summary_in,
    scan_summary_from,
};
pub use text::{HeadAndTail, Omission, OutputLimit, head_and_tail, utc_timestamp};
pub use turns::{Turn, Turns};
pub use warning::{KEPT_PER_KIND, OmittedWarnings, TranscriptWarning, WarningCounts, WarningKind};
