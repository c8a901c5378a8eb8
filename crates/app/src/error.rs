//! The one error type every capability returns to a front end.

use std::fmt;

/// What kind of failure an [`AppError`] is; a front end maps it to its exit code or protocol
/// error (the CLI: [`ErrorKind::Usage`] exits 2, everything else 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request itself is wrong: a bad flag value, an empty range, an ambiguous id prefix,
    /// a malformed cursor.
    Usage,
    /// The request names something that does not exist: no session has the id, no entry has
    /// the handle, `latest` finds no session.
    NotFound,
    /// Reading failed: a file could not be opened or read, a session file is not a session.
    Io,
}

/// A failure of a capability: its kind and a message that names the path or input and the
/// reason. The message is raw text; front ends sanitise it before it reaches a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppError {
    /// What kind of failure this is.
    pub kind: ErrorKind,
    /// The whole message, without a trailing period.
    pub message: String,
}

impl AppError {
    /// Returns a usage error with `message`.
    pub fn usage(message: impl Into<String>) -> AppError {
        AppError {
            kind: ErrorKind::Usage,
            message: message.into(),
        }
    }

    /// Returns a not-found error with `message`.
    pub fn not_found(message: impl Into<String>) -> AppError {
        AppError {
            kind: ErrorKind::NotFound,
            message: message.into(),
        }
    }

    /// Returns a read failure with `message`.
    pub fn io(message: impl Into<String>) -> AppError {
        AppError {
            kind: ErrorKind::Io,
            message: message.into(),
        }
    }
}

impl fmt::Display for AppError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.message)
    }
}

impl std::error::Error for AppError {}

impl From<pi_retrospect_transcript::TranscriptError> for AppError {
    fn from(error: pi_retrospect_transcript::TranscriptError) -> AppError {
        use pi_retrospect_transcript::TranscriptError;
        let kind = match &error {
            TranscriptError::InvalidCursor { .. } | TranscriptError::InvalidArgument { .. } => {
                ErrorKind::Usage
            }
            TranscriptError::UnknownEntry { .. } => ErrorKind::NotFound,
            _ => ErrorKind::Io,
        };
        AppError {
            kind,
            message: error_chain(&error),
        }
    }
}

impl From<pi_retrospect_walk::WalkError> for AppError {
    fn from(error: pi_retrospect_walk::WalkError) -> AppError {
        AppError::io(error_chain(&error))
    }
}

/// Returns `error` and its sources joined by `: `, as one line.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}
