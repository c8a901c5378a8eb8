//! `handoff`: a bounded, redacted excerpt of where one session stood.

use pi_retrospect_handoff::{Handoff, HandoffError, HandoffOptions};

use crate::env::Environment;
use crate::error::{AppError, error_chain};
use crate::read::SessionTarget;
use crate::session_ref::resolve_session;

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
    pi_retrospect_handoff::handoff_file(&path, &request.options).map_err(handoff_error)
}

fn handoff_error(error: HandoffError) -> AppError {
    match error {
        HandoffError::Transcript(error) => error.into(),
        HandoffError::Exists { .. } => AppError::usage(error_chain(&error)),
        other => AppError::io(error_chain(&other)),
    }
}
