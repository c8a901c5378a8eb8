//! `handoff`: a bounded, redacted excerpt of where one session stood.

use std::path::{Path, PathBuf};

use pi_retrospect_handoff::{ExistingFile, Handoff, HandoffError, HandoffOptions};

use crate::env::Environment;
use crate::error::{AppError, error_chain};
use crate::read::SessionTarget;
use crate::session_ref::resolve_session;
use crate::store::{StoreFlags, resolve_stores};

/// A `handoff` request: the session and the excerpt's goal and limits.
#[derive(Debug, Clone)]
pub struct HandoffRequest {
    /// The session.
    pub target: SessionTarget,
    /// The goal and the message and byte limits.
    pub options: HandoffOptions,
}

/// Builds the handoff of the session `request` names. Redaction is always on.
pub fn handoff(request: &HandoffRequest, env: &Environment) -> Result<Handoff, AppError> {
    if request.target.session == crate::SessionRef::Stdin {
        // A handoff names the file that resumes the session; standard input has none.
        return Err(AppError::usage(
            "handoff needs a session file to resume (a path, an id or latest), not `-`",
        ));
    }
    let path = resolve_session(&request.target.session, &request.target.stores, env)?;
    // A file that is not a session is refused as `show` refuses it (review M2): a handoff
    // telling the next session to resume `/etc/passwd` is wrong output, not a summary.
    crate::read::check_session_file(&path)?;
    pi_retrospect_handoff::handoff_file(&path, &request.options).map_err(handoff_error)
}

fn handoff_error(error: HandoffError) -> AppError {
    match error {
        HandoffError::Transcript(error) => error.into(),
        HandoffError::Exists { .. } | HandoffError::Refused { .. } => {
            AppError::usage(error_chain(&error))
        }
        other => AppError::io(error_chain(&other)),
    }
}

/// Writes a rendered handoff to `out` (taken from the current directory when relative),
/// replacing an existing regular file only when `force` says so.
///
/// Whatever `force` says, nothing is written inside a session store (the stores `flags`
/// resolve to, as for the SESSION argument, plus Pi's default sessions root when it exists;
/// compared by device and inode from the opened target directory up), over a session file,
/// through or over a symbolic link, or to a FIFO, socket, device or directory, which are
/// refused at once without being opened (see [`pi_retrospect_handoff::write_file`]). The
/// error names the path and the reason.
pub fn write_handoff(
    out: &Path,
    document: &[u8],
    force: bool,
    flags: &StoreFlags,
    env: &Environment,
) -> Result<(), AppError> {
    let absolute = env.cwd.join(out);
    let (stores, _) = resolve_stores(flags, env)?;
    let mut protected: Vec<PathBuf> = stores
        .iter()
        .map(|store| PathBuf::from(&store.root))
        .collect();
    if let Ok(default_root) = env.agent_dir().map(|dir| dir.join("sessions")) {
        protected.push(default_root);
    }
    let existing = if force {
        ExistingFile::Replace
    } else {
        ExistingFile::Refuse
    };
    pi_retrospect_handoff::write_file(&absolute, document, existing, &protected)
        .map_err(handoff_error)
}
