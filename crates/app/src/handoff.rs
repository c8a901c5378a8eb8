//! `handoff`: a bounded, redacted excerpt of where one session stood.

use std::path::{Path, PathBuf};

use pi_retrospect_handoff::{ExistingFile, Handoff, HandoffError, HandoffOptions, Protected};

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
    // A file that is not a session is refused as `show` refuses it: a handoff
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
/// archive beside each of those roots is a store too, whether or not it was asked for, and
/// so is the store holding `session`, the file the handoff was read from, which a path
/// outside every resolved store may name; a session file outside Pi's layout protects its own
/// directory (not the directories below it). The error names the path and the reason.
pub fn write_handoff(
    out: &Path,
    document: &[u8],
    force: bool,
    session: &Path,
    flags: &StoreFlags,
    env: &Environment,
) -> Result<(), AppError> {
    let absolute = env.cwd.join(out);
    let (stores, _) = resolve_stores(flags, env)?;
    let mut roots: Vec<PathBuf> = stores
        .iter()
        .map(|store| PathBuf::from(&store.root))
        .collect();
    if let Ok(default_root) = env.agent_dir().map(|dir| dir.join("sessions")) {
        roots.push(default_root);
    }
    let mut protected: Vec<Protected> = roots
        .iter()
        .flat_map(|root| [root.clone(), root.with_file_name("sessions-archive")])
        .map(Protected::Store)
        .collect();
    let session = env.cwd.join(session);
    match store_of_session(&session) {
        Some(store) => protected.push(Protected::Store(store)),
        // A loose session's directory may hold other sessions that no store names.
        None => protected.extend(
            session
                .parent()
                .map(|directory| Protected::SessionDirectory(directory.to_path_buf())),
        ),
    }
    let existing = if force {
        ExistingFile::Replace
    } else {
        ExistingFile::Refuse
    };
    pi_retrospect_handoff::write_file(&absolute, document, existing, &protected)
        .map_err(handoff_error)
}

/// Returns the store directory that holds the session file `session` when it sits in Pi's
/// layout: the parent of the nearest `--<cwd-slug>--` project directory above it (a run file
/// sits a few levels below its project directory). A loose session file names no store.
fn store_of_session(session: &Path) -> Option<PathBuf> {
    let project = session.ancestors().skip(1).take(4).find(|ancestor| {
        ancestor
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.len() > 4 && name.starts_with("--") && name.ends_with("--"))
    })?;
    project.parent().map(Path::to_path_buf)
}
