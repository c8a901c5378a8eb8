//! The crate's error type: failures to read a file or to honour a request, never file damage.

use std::io;
use std::path::PathBuf;

/// Returns why a session could not be read or a view could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// The file could not be opened, is a symbolic link, or is not a regular file.
    #[error("cannot open session file {0}")]
    Open(#[from] pi_retrospect_read::OpenError),
    /// Reading the file failed part way.
    #[error("cannot read session file {path}")]
    Read {
        /// The file that was being read.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A cursor string did not decode or does not belong to this request.
    #[error("invalid cursor {cursor:?}: {reason}")]
    InvalidCursor {
        /// The cursor as given.
        cursor: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The file is now shorter than the snapshot a cursor refers to.
    #[error(
        "cursor snapshot of {snapshot_bytes} bytes is past the end of {path} ({file_bytes} bytes): the file shrank or was replaced"
    )]
    SnapshotGone {
        /// The file.
        path: PathBuf,
        /// The snapshot length recorded in the cursor.
        snapshot_bytes: u64,
        /// The file's current length.
        file_bytes: u64,
    },
    /// An entry handle names no entry of the session.
    #[error("no entry {handle:?} in this session")]
    UnknownEntry {
        /// The id or `line:N` handle as given.
        handle: String,
    },
    /// A request argument is outside its allowed range.
    #[error("invalid argument {name} = {value}: {reason}")]
    InvalidArgument {
        /// The argument's name.
        name: &'static str,
        /// The value given.
        value: String,
        /// The allowed range or shape.
        reason: &'static str,
    },
}
