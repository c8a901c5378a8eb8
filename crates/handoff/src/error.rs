//! The crate's error type: failures to read a session or to write a document, never damage
//! in the session file (that is a warning in the handoff).

use std::io;
use std::path::PathBuf;

use pi_retrospect_transcript::TranscriptError;

/// Returns why a handoff could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum HandoffError {
    /// The session file could not be opened or read.
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
    /// The session path cannot be made absolute.
    #[error("cannot make session path {path} absolute")]
    Absolute {
        /// The path as given.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The session path is not valid UTF-8, so it cannot be written as a handle.
    #[error("session path {path} is not valid UTF-8")]
    NonUtf8Path {
        /// The path as given.
        path: PathBuf,
    },
    /// The output file exists and replacing it was not allowed.
    #[error("{path} already exists; it is replaced only when forced")]
    Exists {
        /// The output file.
        path: PathBuf,
    },
    /// The output path is one a handoff is never written to: inside a session store, a
    /// session file, a symbolic link, a FIFO, a socket, a device or a directory.
    #[error(
        "refusing to write {path}: {reason}; a handoff is written only to a regular file outside the session stores, even with --force"
    )]
    Refused {
        /// The output path.
        path: PathBuf,
        /// Why it is refused.
        reason: String,
    },
    /// Writing the output file failed.
    #[error("cannot write {path}")]
    Write {
        /// The output file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}
