//! Plain types and pure algorithms shared by every pi-retrospect crate.
//!
//! Nothing here touches the filesystem, threads or the terminal: the walk produces
//! [`SessionRow`]s and [`Warning`]s, [`mod@nest`] arranges them into the contract's tree, and
//! [`Listing`] is what the renderers print.

#![deny(missing_docs)]

pub mod entry_kinds;
pub mod filter;
pub mod id_prefixes;
pub mod json_text;
pub mod listing;
pub mod nest;
pub mod order;
pub mod path;
pub mod sanitize;
pub mod search;
pub mod stats;
pub mod timestamp;

pub use id_prefixes::{IdBuffer, IdPrefixes};
pub use listing::{
    HeaderFields, Listing, MIN_ID_WIDTH, Session, SessionRow, SessionSummary, Warning,
    sort_sessions, unique_prefix_len,
};
pub use nest::nest;
pub use timestamp::Timestamp;
