//! `handoff`: a bounded, redacted excerpt of where one session stood.

use std::path::{Path, PathBuf};

use pi_retrospect_handoff::{Handoff, HandoffError, HandoffOptions};

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
        HandoffError::Exists { .. } => AppError::usage(error_chain(&error)),
        other => AppError::io(error_chain(&other)),
    }
}

/// Checks that `out`, where a rendered handoff is about to be written, is neither inside a
/// session store nor a session file, whatever `--force` says: the tool never writes to the
/// store, and a handoff written over a session would destroy its history.
///
/// The stores are the ones `flags` resolve to (as for the SESSION argument), plus Pi's default
/// sessions root when it can be found. `out` is taken from the current directory when
/// relative; its parent directory is resolved with symlinks followed and must not be a store
/// root or lie below one. An existing `out` is resolved too (a symlink is judged by its
/// target), and refused when its target lies in a store or its first line is a valid session
/// header, wherever it is. The error names the path and the reason.
pub fn check_handoff_output(
    out: &Path,
    flags: &StoreFlags,
    env: &Environment,
) -> Result<(), AppError> {
    let absolute = env.cwd.join(out);
    let (stores, _) = resolve_stores(flags, env)?;
    let mut roots: Vec<(String, PathBuf)> = stores
        .iter()
        .filter_map(|store| {
            std::fs::canonicalize(&store.root)
                .ok()
                .map(|real| (store.root.clone(), real))
        })
        .collect();
    if let Ok(default_root) = env.agent_dir().map(|dir| dir.join("sessions"))
        && let Ok(real) = std::fs::canonicalize(&default_root)
    {
        roots.push((default_root.display().to_string(), real));
    }
    let in_store = |dir: &Path| -> Option<String> {
        roots
            .iter()
            .find(|(_, real)| dir.starts_with(real))
            .map(|(root, _)| root.clone())
    };
    let refuse = |reason: String| {
        Err(AppError::usage(format!(
            "--out {}: {reason}; a handoff is never written into the session store or over a \
             session, even with --force",
            absolute.display()
        )))
    };
    let parent = absolute.parent().unwrap_or(&absolute);
    if let Ok(real_parent) = std::fs::canonicalize(parent)
        && let Some(root) = in_store(&real_parent)
    {
        return refuse(format!("it is inside the session store {root}"));
    }
    if std::fs::symlink_metadata(&absolute).is_ok()
        && let Ok(real) = std::fs::canonicalize(&absolute)
    {
        if let Some(root) = real.parent().and_then(in_store) {
            return refuse(format!(
                "it resolves to {}, inside the session store {root}",
                real.display()
            ));
        }
        if pi_retrospect_header::read_header(&real).is_ok() {
            return refuse("it is a Pi session file (its first line is a session header)".into());
        }
    }
    Ok(())
}
