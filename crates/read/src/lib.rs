//! How a Pi session file is read, in one place: the safe open, the capped line reader, the
//! exact JSON tokenizer, the repairs Pi's own decoding makes (lone surrogates, invalid
//! UTF-8), positional reads, and the rule for which text in an entry is searchable.
//!
//! Every crate that reads session bodies (`transcript`, `search`, `stats`, `failures`) asks
//! this crate, so two commands cannot disagree about what a file says.

#![deny(missing_docs)]

mod at;
mod decode;
mod lines;
mod open;
mod stop;

pub mod json;
pub mod searchable;

#[cfg(feature = "count-reads")]
pub use at::reads_on_this_thread;
pub use at::{ReadAt, read_at, read_full_at};
pub use decode::{decode_line, decode_lossy, repair_lone_surrogates};
pub use lines::{
    DEFAULT_MAX_LINE_BYTES, LineCounter, OVER_LONG_HEAD_BYTES, OverLong, Piece, RawLine, ReadError,
    Region, RegionReader, for_each_line,
};
pub use open::{
    OpenError, Symlinks, describe_file_type, describe_io, open_nonblocking, open_regular,
    open_session_file,
};
pub use stop::{StopFlag, reading_until_stopped, reading_while, watched_stop};
