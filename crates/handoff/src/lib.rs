//! Handoff excerpts: a bounded, redacted summary of where a Pi session stood, for a person
//! to paste into a new session or an agent to read through a tool.
//!
//! [`handoff`] reads a parsed session into a [`Handoff`]: the source's header facts, the
//! goal, the command that resumes the source (`pi --session PATH`), the work (the original
//! task, the latest compaction summary, the files `edit` and `write` calls touched, and the
//! failures of the last turns with their error text), and the most recent user and assistant
//! text messages of the active branch, newest last, bounded per message and in total (by
//! default 12 messages, 2 KiB each, 16 KiB together). Every one-line field is cut to
//! [`MAX_FIELD_BYTES`] with a marker, at most [`MAX_MODELS`] models, [`MAX_WARNINGS`]
//! warnings, [`MAX_FILES`] files and [`MAX_FAILURES`] failures are kept, and while the whole
//! JSON document exceeds `max_document_bytes` (192 KiB by default) files, then the oldest
//! messages, then failures are dropped, so the document is bounded whatever the session
//! holds. Images, thinking, system and custom messages, custom entries, branch summaries and
//! tool calls and results other than the paths of file edits and the calls and output of
//! what failed are never included. Text is stripped of terminal controls, then common
//! credentials are replaced by `[redacted: KIND]` ([`redact`], [`clean_blocks`]), then cut:
//! a cut never shows half a secret, and the byte bounds hold for the redacted text.
//!
//! The document types live here; their Markdown and JSON writers and the JSON Schema live in
//! `pi_retrospect_render::handoff`, the one presentation layer; [`write_file`] writes a
//! rendered document to the one regular file asked for: never through a symbolic link, never
//! inside the session stores or over a session, a FIFO or a device, through a temporary file
//! renamed into place, and over an existing file only when told to. Nothing here writes to
//! the session store, prints, or reads the environment.
//!
//! A front end is a few calls:
//!
//! ```no_run
//! use std::path::Path;
//!
//! use pi_retrospect_handoff::{ExistingFile, HandoffOptions, Protected, handoff_file, write_file};
//!
//! let options = HandoffOptions {
//!     goal: Some("finish the parser".into()),
//!     ..HandoffOptions::default()
//! };
//! let session = Path::new("/home/me/.pi/agent/sessions/--home-me-app--/s.jsonl");
//! let handoff = handoff_file(session, &options)?;
//! // A front end renders it with `pi_retrospect_render::handoff::write_markdown`.
//! let document = serde_json::to_vec(&handoff)?;
//! let stores = [Protected::Store("/home/me/.pi/agent/sessions".into())];
//! write_file(Path::new("handoff.json"), &document, ExistingFile::Refuse, &stores)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod document;
mod error;
mod excerpt;
mod file;
mod redact;
mod shell;
mod work;

pub use document::{
    Excerpt, ExcerptLimits, FailureKind, Handoff, HandoffFailure, HandoffFile, HandoffMessage,
    HandoffRole, HandoffSource, HandoffSummary, HandoffText, HandoffWarning, RedactionCounts,
};
pub use error::HandoffError;
pub use excerpt::{
    DEFAULT_MAX_DOCUMENT_BYTES, DEFAULT_MAX_EXCERPT_BYTES, DEFAULT_MAX_GOAL_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_MESSAGES, FIELD_CUT_MARKER, HandoffOptions,
    MAX_FIELD_BYTES, MAX_MODELS, MAX_WARNINGS, cut_field, handoff, handoff_file,
};
pub use file::{ExistingFile, Protected, write_file};
pub use redact::{Redacted, RedactedSpan, SecretKind, clean, clean_blocks, redact};
pub use shell::{resume_command, shell_quote};
pub use work::{
    FAILURE_TURNS, MAX_FAILURE_BYTES, MAX_FAILURES, MAX_FILES, MAX_SUMMARY_BYTES, MAX_TASK_BYTES,
};
