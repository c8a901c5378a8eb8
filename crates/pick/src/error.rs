//! The one error type of the picker.

use std::path::PathBuf;

/// Why the picker could not run, or could not hand over to Pi.
#[derive(Debug, thiserror::Error)]
pub enum PickError {
    /// There is no terminal to draw on (no controlling terminal: a cron job, a service, a
    /// pipeline run without one).
    #[error("pick needs a terminal to draw on, and /dev/tty cannot be opened: {error}")]
    NoTerminal {
        /// Why `/dev/tty` could not be opened (already in the message, so not a `source`).
        error: std::io::Error,
    },
    /// The terminal could not be set up, drawn on or restored.
    #[error("terminal: {error}")]
    Terminal {
        /// The underlying failure (already in the message).
        error: std::io::Error,
    },
    /// The sessions could not be listed (a bad store flag, an unreadable settings file).
    #[error(transparent)]
    App(#[from] pi_retrospect_app::AppError),
    /// The program to resume with is not on `PATH` (found before trying to start it, as
    /// the failure of the start would not tell it from a directory gone).
    #[error("cannot resume: {program} is not on PATH")]
    NotOnPath {
        /// The program looked for (`pi`).
        program: String,
    },
    /// The directory Pi was to run in no longer exists (removed since the picker looked).
    #[error("cannot resume: {whose} {} no longer exists", cwd.display())]
    DirectoryGone {
        /// "the session's directory" (resuming there) or "the directory" (forking here).
        whose: &'static str,
        /// The directory.
        cwd: PathBuf,
    },
    /// Pi could not be started.
    #[error("cannot run {program} in {}: {error}", cwd.display())]
    Resume {
        /// The program run (`pi`).
        program: String,
        /// The directory it was run in.
        cwd: PathBuf,
        /// Why it failed (already in the message).
        error: std::io::Error,
    },
}

impl From<std::io::Error> for PickError {
    fn from(error: std::io::Error) -> PickError {
        PickError::Terminal { error }
    }
}
