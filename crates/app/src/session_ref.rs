//! The SESSION argument of the reading commands: a path, a session id or unique id prefix
//! (found with the same store walk as `list`), or `latest`; and opening the session it names.

use std::path::PathBuf;

use pi_retrospect_core::Session;
use pi_retrospect_transcript::{ReadLimits, Transcript};
use pi_retrospect_walk::WalkOptions;

use crate::env::Environment;
use crate::error::AppError;
use crate::store::{StoreFlags, resolve_stores};

/// How a request names one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionRef {
    /// A file path (absolute, relative to the current directory, or `~`-prefixed).
    Path(String),
    /// A session id or a unique prefix of one, looked up in the stores (runs included).
    Id(String),
    /// The newest session whose cwd is the current directory.
    Latest,
}

impl SessionRef {
    /// Returns how the command-line text `argument` names a session: `latest`, a path when it
    /// has a path separator, ends in `.jsonl`, starts with `~` or names an existing file in the
    /// current directory, else an id or id prefix.
    pub fn parse(argument: &str, env: &Environment) -> Result<SessionRef, AppError> {
        if argument.is_empty() {
            return Err(AppError::usage("SESSION must not be empty"));
        }
        if argument == "latest" {
            return Ok(SessionRef::Latest);
        }
        if is_path_like(argument, env) {
            return Ok(SessionRef::Path(argument.to_owned()));
        }
        Ok(SessionRef::Id(argument.to_owned()))
    }
}

/// Returns whether SESSION is meant as a path rather than an id.
fn is_path_like(argument: &str, env: &Environment) -> bool {
    argument.contains('/')
        || argument.contains(std::path::MAIN_SEPARATOR)
        || argument.ends_with(".jsonl")
        || argument.starts_with('~')
        || env.cwd.join(argument).is_file()
}

/// Returns the absolute path of the session file `reference` names.
pub fn resolve_session(
    reference: &SessionRef,
    stores: &StoreFlags,
    env: &Environment,
) -> Result<PathBuf, AppError> {
    match reference {
        SessionRef::Path(path) => Ok(PathBuf::from(env.absolute(path)?)),
        SessionRef::Id(id) => find_by_id(id, stores, env),
        SessionRef::Latest => latest(stores, env),
    }
}

/// A session file opened for reading.
#[derive(Debug)]
pub struct OpenedSession {
    /// Its absolute path, as text.
    pub path: String,
    /// The parsed file.
    pub transcript: Transcript,
}

/// Resolves `reference` and opens it within `limits` (a cursor's snapshot, the line cap).
pub fn open_session(
    reference: &SessionRef,
    stores: &StoreFlags,
    env: &Environment,
    limits: &ReadLimits,
) -> Result<OpenedSession, AppError> {
    let path = resolve_session(reference, stores, env)?;
    let transcript = Transcript::open_with(&path, limits)?;
    Ok(OpenedSession {
        path: path.display().to_string(),
        transcript,
    })
}

/// Returns every session the stores hold, runs nested, sorted as `list` sorts them, and the
/// roots searched.
fn walk(stores: &StoreFlags, env: &Environment) -> Result<(Vec<Session>, Vec<String>), AppError> {
    let (stores, _) = resolve_stores(stores, env)?;
    let roots = stores.iter().map(|store| store.root.clone()).collect();
    // Warnings about other files do not concern the session being looked up.
    let listing = pi_retrospect_walk::list_stores(&stores, &WalkOptions::default())?;
    Ok((listing.sessions, roots))
}

fn flatten(sessions: Vec<Session>, out: &mut Vec<Session>) {
    for mut session in sessions {
        let children = std::mem::take(&mut session.subagent_sessions);
        out.push(session);
        flatten(children, out);
    }
}

fn find_by_id(id: &str, stores: &StoreFlags, env: &Environment) -> Result<PathBuf, AppError> {
    let (sessions, roots) = walk(stores, env)?;
    let mut all = Vec::new();
    flatten(sessions, &mut all);
    let exact: Vec<&Session> = all.iter().filter(|session| session.id == id).collect();
    let candidates = if exact.is_empty() {
        all.iter()
            .filter(|session| session.id.starts_with(id))
            .collect()
    } else {
        exact
    };
    match candidates.as_slice() {
        [] => Err(AppError::not_found(format!(
            "no session has the id or id prefix {id:?} (searched {})",
            roots.join(", ")
        ))),
        [one] => Ok(PathBuf::from(&one.path)),
        several => {
            let list: Vec<String> = several
                .iter()
                .map(|session| format!("  {} ({})", session.path, session.id))
                .collect();
            Err(AppError::usage(format!(
                "the id prefix {id:?} matches {} sessions; give more of the id or a path:\n{}",
                several.len(),
                list.join("\n")
            )))
        }
    }
}

fn latest(stores: &StoreFlags, env: &Environment) -> Result<PathBuf, AppError> {
    let cwd = env
        .cwd
        .to_str()
        .ok_or_else(|| AppError::io("the current directory is not valid UTF-8"))?;
    let cwd = pi_retrospect_core::path::normalize_absolute(cwd);
    let (sessions, roots) = walk(stores, env)?;
    // The same rule as `list --here`, so a recorded cwd with a trailing slash still matches.
    let here = pi_retrospect_core::filter::CwdMatcher {
        dir: cwd.clone(),
        include_subdirectories: false,
        include_worktrees: false,
    };
    // The listing is sorted oldest first, so the last match is the newest.
    match sessions
        .iter()
        .rev()
        .find(|session| here.is_match(&session.cwd))
    {
        Some(session) => Ok(PathBuf::from(&session.path)),
        None => Err(AppError::not_found(format!(
            "latest: no session ran in {cwd} (searched {})",
            roots.join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_like_arguments() {
        let env = Environment {
            cwd: PathBuf::from("/nonexistent-dir"),
            ..Environment::default()
        };
        for argument in ["a/b", "x.jsonl", "~/s.jsonl", "./latest"] {
            assert_eq!(
                SessionRef::parse(argument, &env),
                Ok(SessionRef::Path(argument.to_owned())),
                "{argument}"
            );
        }
        for argument in ["01a22b41", "01a22b41-c1e1-73ac-b3e0-09602166f4c8"] {
            assert_eq!(
                SessionRef::parse(argument, &env),
                Ok(SessionRef::Id(argument.to_owned())),
                "{argument}"
            );
        }
        assert_eq!(SessionRef::parse("latest", &env), Ok(SessionRef::Latest));
        assert_eq!(
            SessionRef::parse("", &env).map_err(|error| error.kind),
            Err(crate::ErrorKind::Usage)
        );
    }
}
