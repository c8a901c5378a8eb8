//! The SESSION argument of `show`, `inspect` and `entries`: a path, a session id or unique id
//! prefix (found with the same store walk as `list`), or `latest`; plus the helpers those
//! commands share (opening, warnings on stderr, sanitised text).

use std::borrow::Cow;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use pi_retrospect_core::Session;
use pi_retrospect_transcript::{
    Transcript, TranscriptError, TranscriptWarning, sanitize_for_terminal,
};
use pi_retrospect_walk::WalkOptions;

use crate::UsageError;
use crate::opts::StoreArgs;
use crate::store::{Env, StoreFlags, resolve_stores};

/// Returns the absolute path of the session file SESSION names.
fn resolve_path(argument: &str, store: &StoreArgs, env: &Env) -> anyhow::Result<PathBuf> {
    if argument.is_empty() {
        return Err(UsageError("SESSION must not be empty".to_owned()).into());
    }
    if argument == "latest" {
        return latest(store, env);
    }
    if is_path_like(argument, env) {
        return Ok(PathBuf::from(env.absolute(argument)?));
    }
    find_by_id(argument, store, env)
}

/// Returns whether SESSION is meant as a path rather than an id: it has a path separator, ends
/// in `.jsonl`, starts with `~`, or names an existing file. Ids have none of these.
fn is_path_like(argument: &str, env: &Env) -> bool {
    argument.contains('/')
        || argument.contains(std::path::MAIN_SEPARATOR)
        || argument.ends_with(".jsonl")
        || argument.starts_with('~')
        || env.cwd.join(argument).is_file()
}

/// Returns every session the stores hold, subagent runs included, sorted as `list` sorts them.
fn walk(store: &StoreArgs, env: &Env) -> anyhow::Result<(Vec<Session>, Vec<String>)> {
    let (stores, _) = resolve_stores(
        &StoreFlags {
            sessions_root: store.sessions_root.clone(),
            session_dir: store.session_dir.clone(),
            include_archive: false,
        },
        env,
    )?;
    let roots = stores.iter().map(|store| store.root.clone()).collect();
    // Warnings about other files do not concern the session being looked up.
    let listing = pi_retrospect_walk::list_stores(&stores, &WalkOptions::default());
    Ok((listing.sessions, roots))
}

fn flatten(sessions: Vec<Session>, out: &mut Vec<Session>) {
    for mut session in sessions {
        let children = std::mem::take(&mut session.subagent_sessions);
        out.push(session);
        flatten(children, out);
    }
}

fn find_by_id(id: &str, store: &StoreArgs, env: &Env) -> anyhow::Result<PathBuf> {
    let (sessions, roots) = walk(store, env)?;
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
        [] => anyhow::bail!(
            "no session has the id or id prefix {id:?} (searched {})",
            roots.join(", ")
        ),
        [one] => Ok(PathBuf::from(&one.path)),
        several => {
            let list: Vec<String> = several
                .iter()
                .map(|session| format!("  {} ({})", session.path, session.id))
                .collect();
            Err(UsageError(format!(
                "the id prefix {id:?} matches {} sessions; give more of the id or a path:\n{}",
                several.len(),
                list.join("\n")
            ))
            .into())
        }
    }
}

fn latest(store: &StoreArgs, env: &Env) -> anyhow::Result<PathBuf> {
    let cwd = env
        .cwd
        .to_str()
        .context("the current directory is not valid UTF-8")?;
    let cwd = pi_retrospect_core::path::normalize_absolute(cwd);
    let (sessions, roots) = walk(store, env)?;
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
        None => anyhow::bail!(
            "latest: no session ran in {cwd} (searched {})",
            roots.join(", ")
        ),
    }
}

/// Resolves SESSION and opens it (up to `max_bytes` when continuing a snapshot); returns the
/// path as text and the parsed session.
pub fn resolve_and_open(
    argument: &str,
    store: &StoreArgs,
    max_bytes: Option<u64>,
) -> anyhow::Result<(String, Transcript)> {
    let env = Env::from_process()?;
    let path = resolve_path(argument, store, &env)?;
    let session = Transcript::open_snapshot(&path, max_bytes)?;
    Ok((path.display().to_string(), session))
}

/// Returns the error for a failed view: a bad request (cursor, empty query, out-of-range
/// argument) is a usage error; anything else (an unknown entry, a read failure) exits 1.
pub fn view_error(error: TranscriptError) -> anyhow::Error {
    match error {
        TranscriptError::InvalidCursor { .. } | TranscriptError::InvalidArgument { .. } => {
            UsageError(error.to_string()).into()
        }
        other => other.into(),
    }
}

/// Writes each warning about `path` to stderr as one line.
pub fn print_warnings(path: &str, warnings: &[TranscriptWarning]) {
    let stderr = std::io::stderr();
    let mut stderr = stderr.lock();
    for warning in warnings {
        // Nothing sensible can be done when stderr itself is closed.
        let _ = writeln!(
            stderr,
            "pi-retrospect: warning: {}: {}",
            clean(path),
            clean(&warning.message)
        );
    }
}

/// Returns session content made safe for a terminal.
pub fn clean(text: &str) -> Cow<'_, str> {
    sanitize_for_terminal(text)
}

/// Writes `text` sanitised, keeping its lines, each non-empty one after `indent`.
pub fn write_indented(out: &mut dyn Write, text: &str, indent: &str) -> std::io::Result<()> {
    for line in clean(text).lines() {
        if line.is_empty() {
            writeln!(out)?;
        } else {
            writeln!(out, "{indent}{line}")?;
        }
    }
    Ok(())
}

/// Returns `text` on one line (whitespace runs folded to one space), cut to `max_chars`
/// characters with an ellipsis, and sanitised.
pub fn one_line(text: &str, max_chars: usize) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let folded = clean(&folded).into_owned();
    match folded.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &folded[..cut]),
        None => folded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_like_arguments() {
        let env = Env {
            cwd: PathBuf::from("/nonexistent-dir"),
            ..Env::default()
        };
        for argument in ["a/b", "x.jsonl", "~/s.jsonl", "./latest"] {
            assert!(is_path_like(argument, &env), "{argument}");
        }
        for argument in ["01a22b41", "01a22b41-c1e1-73ac-b3e0-09602166f4c8"] {
            assert!(!is_path_like(argument, &env), "{argument}");
        }
    }

    #[test]
    fn one_line_folds_cuts_and_cleans() {
        assert_eq!(one_line("a\n  b\tc", 10), "a b c");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("x\u{1b}[31my\u{202e}z", 10), "xyz");
    }
}
