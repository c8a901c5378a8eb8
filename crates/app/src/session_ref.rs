//! The SESSION argument of the reading commands: a path, a session id or unique id prefix
//! (found with the same store walk as `list`), or `latest` / `latest~N`; and opening the
//! session it names.

use std::path::{Path, PathBuf};

use pi_retrospect_core::sanitize::escape_for_terminal;
use pi_retrospect_core::{Session, Timestamp, Warning};
use pi_retrospect_transcript::{ReadLimits, Transcript};
use pi_retrospect_walk::WalkOptions;

use crate::current::CurrentSession;
use crate::env::Environment;
use crate::error::{AppError, Input};
use crate::store::{StoreFlags, resolve_stores};

/// How a request names one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionRef {
    /// A file path (absolute, relative to the current directory, or `~`-prefixed).
    Path(String),
    /// A session id or a unique prefix of one, looked up in the stores (runs included).
    Id(String),
    /// The most recently active top-level session (newest last entry, as `list --sort
    /// activity` orders them) whose cwd is the current directory (else the nearest directory
    /// above it with sessions, else the whole store, with a note), leaving out the session running the command
    /// (`$PI_SESSION_FILE`, matched by file identity); `back` more steps into the past
    /// (`latest~N`).
    Latest {
        /// How many sessions to go back from the newest (0 for `latest`).
        back: usize,
    },
    /// The session file's contents on standard input (`-`), for the reading commands.
    Stdin,
}

impl SessionRef {
    /// Returns how the command-line text `argument` names a session: `latest` or `latest~N`,
    /// a path when it has a path separator, ends in `.jsonl`, starts with `~` or names an
    /// existing file in the current directory, else an id or id prefix.
    ///
    /// An existing file wins over an id, as a path does for `rg` and `fd`; when the word is
    /// also a stored id or id prefix, [`locate_session`] says which reading won in a note.
    pub fn parse(argument: &str, env: &Environment) -> Result<SessionRef, AppError> {
        if argument.is_empty() {
            return Err(AppError::bad_input(Input::Session, "must not be empty"));
        }
        if argument == "latest" {
            return Ok(SessionRef::Latest { back: 0 });
        }
        if argument == "-" {
            return Ok(SessionRef::Stdin);
        }
        if let Some(digits) = argument.strip_prefix("latest~") {
            // Plain decimal digits only: `latest~+1` and `latest~01` are refused, not guessed.
            let is_plain = !digits.is_empty()
                && digits.bytes().all(|byte| byte.is_ascii_digit())
                && (digits == "0" || !digits.starts_with('0'));
            return match digits.parse::<usize>() {
                Ok(back) if is_plain => Ok(SessionRef::Latest { back }),
                // A whole number, only too large to count.
                Err(_) if is_plain => Err(AppError::usage(format!(
                    "{argument:?}: {digits} is too large: latest~N goes back N sessions, and no \
                     store holds that many (latest~1 is the one before the newest)"
                ))),
                _ => Err(AppError::usage(format!(
                    "{argument:?}: latest~N needs a whole number N of sessions to go back \
                     (latest~1 is the one before the newest); use ./{argument} for a file"
                ))),
            };
        }
        if is_path_like(argument, env) {
            return Ok(SessionRef::Path(argument.to_owned()));
        }
        Ok(SessionRef::Id(argument.to_owned()))
    }
}

/// Returns whether SESSION is meant as a path rather than an id.
fn is_path_like(argument: &str, env: &Environment) -> bool {
    is_path_by_shape(argument) || env.cwd.join(argument).is_file()
}

/// Returns whether SESSION is a path by its text alone: it has a path separator, ends in
/// `.jsonl` or starts with `~`. Any other word is a path only when it names a file in the
/// current directory.
fn is_path_by_shape(argument: &str) -> bool {
    argument.contains('/')
        || argument.contains(std::path::MAIN_SEPARATOR)
        || argument.ends_with(".jsonl")
        || argument.starts_with('~')
}

/// The rule a bare word follows, as the notes about it state it.
const BARE_WORD_RULE: &str = "a SESSION without a /, not ending in .jsonl and not starting \
     with ~ is read as a file when one of that name is in the current directory, else as an id";

/// Returns a note when `word`, read as a path only because a file of that name is in the
/// current directory, is also a stored session's id or id prefix: the file won, and the
/// note names what the id would have read. Only a bare word that names a
/// file costs the walk; a store that cannot be read gives no note.
fn file_over_id_note(word: &str, stores: &StoreFlags, env: &Environment) -> Option<String> {
    if is_path_by_shape(word) {
        return None;
    }
    let Walked { sessions, .. } = walk(stores, env).ok()?;
    let mut all = Vec::new();
    flatten(sessions, &mut all);
    let exact: Vec<&Session> = all.iter().filter(|session| session.id == word).collect();
    let matches = if exact.is_empty() {
        all.iter()
            .filter(|session| session.id.starts_with(word))
            .collect()
    } else {
        exact
    };
    let stored = match matches.as_slice() {
        [] => return None,
        [one] => format!(
            "the stored session {} ({})",
            escape_for_terminal(&one.path),
            escape_for_terminal(&one.id)
        ),
        several => format!("{} stored sessions", several.len()),
    };
    Some(format!(
        "{word:?} is a file in the current directory, read as that file; it is also the id \
         or id prefix of {stored}: give a path (or more of the id) to read a stored one; \
         {BARE_WORD_RULE}"
    ))
}

/// Returns the absolute path of the session file `reference` names.
pub fn resolve_session(
    reference: &SessionRef,
    stores: &StoreFlags,
    env: &Environment,
) -> Result<PathBuf, AppError> {
    match reference {
        // Without a note to show, a file here costs no walk of the stores.
        SessionRef::Path(path) => Ok(PathBuf::from(env.absolute(path)?)),
        _ => locate_session(reference, stores, env).map(|located| located.path),
    }
}

/// The session file a SESSION argument names, and what a person should be told about how it
/// was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocatedSession {
    /// The absolute path of the session file.
    pub path: PathBuf,
    /// Notes for the person who asked (`latest` used a directory above the current one, or
    /// could not read a session's last activity within the line cap), shown apart from the
    /// output.
    pub notes: Vec<String>,
}

/// Returns the session file `reference` names, with a note when the choice needs one.
pub fn locate_session(
    reference: &SessionRef,
    stores: &StoreFlags,
    env: &Environment,
) -> Result<LocatedSession, AppError> {
    match reference {
        SessionRef::Path(path) => Ok(LocatedSession {
            path: PathBuf::from(env.absolute(path)?),
            notes: file_over_id_note(path, stores, env).into_iter().collect(),
        }),
        SessionRef::Id(id) => Ok(LocatedSession {
            path: find_by_id(id, stores, env)?,
            notes: Vec::new(),
        }),
        SessionRef::Latest { back } => latest(*back, stores, env),
        SessionRef::Stdin => Err(AppError::bad_input(
            Input::Session,
            "`-` (standard input) is read only by show, inspect and entries",
        )),
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
    if *reference == SessionRef::Stdin {
        return Ok(OpenedSession {
            path: "-".to_owned(),
            transcript: read_stdin(limits)?,
        });
    }
    let path = resolve_session(reference, stores, env)?;
    let transcript = Transcript::open_with(&path, limits)?;
    Ok(OpenedSession {
        path: path.display().to_string(),
        transcript,
    })
}

/// Reads a whole session file from standard input (up to a cursor's snapshot when given).
pub fn read_stdin(limits: &ReadLimits) -> Result<Transcript, AppError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let read = match limits.snapshot_bytes {
        Some(snapshot) => input.take(snapshot).read_to_end(&mut bytes),
        None => input.read_to_end(&mut bytes),
    };
    read.map_err(|error| {
        AppError::io(format!(
            "cannot read the session from standard input: {error}"
        ))
    })?;
    Ok(Transcript::from_bytes(bytes))
}

/// What a lookup walked: every session (runs nested, oldest first), the roots searched, and
/// layout hints when nothing was found.
struct Walked {
    sessions: Vec<Session>,
    roots: Vec<String>,
    hints: Vec<String>,
}

/// Walks the stores `flags` name, as `list` does, for a lookup.
fn walk(flags: &StoreFlags, env: &Environment) -> Result<Walked, AppError> {
    let (stores, _) = resolve_stores(flags, env)?;
    let roots = stores.iter().map(|store| store.root.clone()).collect();
    // Warnings about other files do not concern the session being looked up.
    let listing = pi_retrospect_walk::list_stores(&stores, &WalkOptions::default())?;
    let hints = if listing.sessions.is_empty() {
        crate::store::layout_hints(flags, &stores)
    } else {
        Vec::new()
    };
    Ok(Walked {
        sessions: listing.sessions,
        roots,
        hints,
    })
}

/// Returns `message` followed by each hint on its own line, as a note (`note: …`; the CLI
/// prints it `pi-retrospect: note: …`, the form of every note).
fn with_hints(message: String, hints: &[String]) -> String {
    let mut message = message;
    for hint in hints {
        message.push_str("\nnote: ");
        message.push_str(&escape_for_terminal(hint));
    }
    message
}

fn flatten(sessions: Vec<Session>, out: &mut Vec<Session>) {
    for mut session in sessions {
        let children = std::mem::take(&mut session.subagent_sessions);
        out.push(session);
        flatten(children, out);
    }
}

/// Returns the session whose name (as Pi shows it, set anywhere in the file) is `word`, or
/// else starts with it, ignoring case, and whether the name is `word` itself; `None` when no
/// name matches, and an error listing the candidates when several do. Only a word that is no
/// id or id prefix, or one that looks like a word, costs this, since the names are read from
/// the files.
fn find_by_name(word: &str, all: &[Session]) -> Result<Option<(PathBuf, bool)>, AppError> {
    let paths: Vec<&str> = all.iter().map(|session| session.path.as_str()).collect();
    let summaries = crate::list::read_summaries(&paths);
    let wanted = word.to_lowercase();
    let named: Vec<(&Session, String)> = all
        .iter()
        .zip(summaries)
        .filter_map(|(session, summary)| Some((session, summary.ok()?.name?)))
        .collect();
    let exact: Vec<&(&Session, String)> = named
        .iter()
        .filter(|(_, name)| name.to_lowercase() == wanted)
        .collect();
    let is_exact = !exact.is_empty();
    let candidates = if is_exact {
        exact
    } else {
        named
            .iter()
            .filter(|(_, name)| name.to_lowercase().starts_with(&wanted))
            .collect()
    };
    match candidates.as_slice() {
        [] => Ok(None),
        [(one, _)] => Ok(Some((PathBuf::from(&one.path), is_exact))),
        several => {
            let list: Vec<String> = several
                .iter()
                .map(|(session, name)| {
                    format!(
                        "  {:?} {} ({})",
                        escape_for_terminal(name),
                        escape_for_terminal(&session.path),
                        escape_for_terminal(&session.id)
                    )
                })
                .collect();
            Err(AppError::usage(format!(
                "the name {word:?} matches {} sessions; give more of the name, an id or a path:\n{}",
                several.len(),
                list.join("\n")
            )))
        }
    }
}

fn find_by_id(id: &str, stores: &StoreFlags, env: &Environment) -> Result<PathBuf, AppError> {
    let Walked {
        sessions,
        roots,
        hints,
    } = walk(stores, env)?;
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
    if candidates.is_empty()
        && let Some((path, _)) = find_by_name(id, &all)?
    {
        return Ok(path);
    }
    // A word such as `face` or `added` can be both the start of some id and a name. A whole
    // name is what a person types, so it wins over an id prefix; a name prefix against an id
    // prefix is asked back. Ids have digits near their start, so only a word without one
    // costs the names' read.
    if !candidates.is_empty()
        && candidates.iter().all(|session| session.id != id)
        && !id.bytes().any(|byte| byte.is_ascii_digit())
        && let Ok(Some((named, is_exact))) = find_by_name(id, &all)
    {
        if is_exact {
            return Ok(named);
        }
        let is_same = matches!(candidates.as_slice(), [one] if Path::new(&one.path) == named);
        if !is_same {
            return Err(AppError::usage(format!(
                "{id:?} starts the id of {} and the name of {}; give more of the id, more of \
                 the name, or a path",
                candidates
                    .iter()
                    .map(|session| escape_for_terminal(&session.id))
                    .collect::<Vec<_>>()
                    .join(", "),
                escape_for_terminal(&named.display().to_string())
            )));
        }
    }
    match candidates.as_slice() {
        [] => {
            let mut hints = hints;
            hints.extend(archive_hint(id, stores, env));
            // A bare word naming something in the current directory that is not a regular
            // file (a directory) was read as an id; say how to give it as a path,
            // and the rule as it is.
            if std::fs::symlink_metadata(env.cwd.join(id)).is_ok() {
                hints.push(format!(
                    "did you mean ./{id}? {id:?} is in the current directory but is not a \
                     file, so it was read as an id; {BARE_WORD_RULE}"
                ));
            }
            Err(AppError::not_found(with_hints(
                format!(
                    "no session has the id or id prefix, or the name or name prefix, {id:?} \
                     (searched {})",
                    escape_for_terminal(&roots.join(", "))
                ),
                &hints,
            )))
        }
        [one] => Ok(PathBuf::from(&one.path)),
        several => {
            let list: Vec<String> = several
                .iter()
                .map(|session| {
                    format!(
                        "  {} ({})",
                        escape_for_terminal(&session.path),
                        escape_for_terminal(&session.id)
                    )
                })
                .collect();
            Err(AppError::usage(format!(
                "the id prefix {id:?} matches {} sessions; give more of the id or a path:\n{}",
                several.len(),
                list.join("\n")
            )))
        }
    }
}

/// Returns a hint naming `--include-archive` when the archive beside the sessions root, which
/// a lookup without that flag does not search, holds sessions (runs included) whose id is or
/// starts with `id`. Only called once the lookup found nothing, so a found id costs nothing.
fn archive_hint(id: &str, stores: &StoreFlags, env: &Environment) -> Option<String> {
    if stores.include_archive {
        return None;
    }
    let with_archive = StoreFlags {
        include_archive: true,
        ..stores.clone()
    };
    let (resolved, _) = resolve_stores(&with_archive, env).ok()?;
    // `resolve_stores` puts the archive last.
    let archive = resolved.last()?;
    let listing =
        pi_retrospect_walk::list_stores(std::slice::from_ref(archive), &WalkOptions::default())
            .ok()?;
    let mut all = Vec::new();
    flatten(listing.sessions, &mut all);
    let n_matches = all
        .iter()
        .filter(|session| session.id.starts_with(id))
        .count();
    (n_matches > 0).then(|| {
        format!(
            "the archive {} holds {n_matches} session{} with that id or prefix; add \
             --include-archive to search it too",
            archive.root,
            if n_matches == 1 { "" } else { "s" }
        )
    })
}

/// Returns the `back`-th most recently active top-level session (0: the latest) that ran in
/// the current directory, or else in the nearest directory above it where any other session
/// ran, leaving out the session running the command. Choosing a directory above is said in
/// the note.
fn latest(back: usize, stores: &StoreFlags, env: &Environment) -> Result<LocatedSession, AppError> {
    let cwd = env
        .cwd
        .to_str()
        .ok_or_else(|| AppError::io("the current directory is not valid UTF-8"))?;
    let cwd = pi_retrospect_core::path::normalize_absolute(cwd);
    let Walked {
        sessions,
        roots,
        hints,
    } = walk(stores, env)?;
    // Pi sets $PI_SESSION_FILE for the commands it runs: an agent asking for the latest
    // session wants the one before its own. It is recognised by file identity (a symlinked
    // store or a relative variable names the same file by other text).
    let current = CurrentSession::from_env(env)?;
    let running = current
        .as_ref()
        .and_then(|current| sessions.iter().find(|session| current.is(&session.path)));
    let is_running =
        |session: &Session| running.is_some_and(|running| std::ptr::eq(running, session));
    let latest_name = if back == 0 {
        "latest".to_owned()
    } else {
        format!("latest~{back}")
    };
    // The first directory passed over because the only session there is the running one.
    let mut only_running_in: Option<String> = None;
    for dir in std::iter::successors(Some(Path::new(&cwd)), |dir| dir.parent()) {
        let Some(dir_text) = dir.to_str() else {
            continue;
        };
        // The same rule as `list --here`, so a recorded cwd with a trailing slash still
        // matches.
        let here = pi_retrospect_core::filter::CwdMatcher {
            dir: dir_text.to_owned(),
            include_subdirectories: false,
            include_worktrees: false,
        };
        let has_running = running.is_some_and(|session| here.is_match(&session.cwd));
        let in_dir: Vec<&Session> = sessions
            .iter()
            .filter(|session| !is_running(session) && here.is_match(&session.cwd))
            .collect();
        if in_dir.is_empty() {
            if has_running && only_running_in.is_none() {
                only_running_in = Some(dir_text.to_owned());
            }
            continue;
        }
        let (in_dir, unknown_activity) = latest_active_first(in_dir);
        let Some(session) = in_dir.get(back) else {
            return Err(AppError::not_found(format!(
                "{latest_name}: only {} session{} ran in {}{} (searched {})",
                in_dir.len(),
                if in_dir.len() == 1 { "" } else { "s" },
                escape_for_terminal(dir_text),
                if has_running {
                    " besides the current one ($PI_SESSION_FILE)"
                } else {
                    ""
                },
                escape_for_terminal(&roots.join(", "))
            )));
        };
        let note = (dir_text != cwd).then(|| {
            let why = match &only_running_in {
                Some(dir) if *dir == cwd => format!(
                    "the only session that ran in {} is the current one ($PI_SESSION_FILE), \
                     which is left out",
                    escape_for_terminal(&cwd)
                ),
                Some(dir) => format!(
                    "no session ran in {}, and the only one in {} is the current one \
                     ($PI_SESSION_FILE), which is left out",
                    escape_for_terminal(&cwd),
                    escape_for_terminal(dir)
                ),
                None => format!("no session ran in {}", escape_for_terminal(&cwd)),
            };
            format!(
                "{latest_name}: {why}; using {}, the nearest directory above it with {}sessions",
                escape_for_terminal(dir_text),
                if only_running_in.is_some() {
                    "other "
                } else {
                    ""
                }
            )
        });
        // A session whose last activity could not be read counts from its start; the
        // order may then be wrong, so it is said.
        let notes = note
            .into_iter()
            .chain(unknown_activity.into_iter().map(|warning| {
                format!(
                    "{latest_name}: {}: {}",
                    escape_for_terminal(&warning.path),
                    warning.reason
                )
            }))
            .collect();
        return Ok(LocatedSession {
            path: PathBuf::from(&session.path),
            notes,
        });
    }
    // Only the running session was left out: say so rather than "no session ran".
    if let (Some(_), Some(session)) = (&only_running_in, running) {
        return Err(AppError::not_found(format!(
            "{latest_name}: the only session that ran in {} or above it is the current one \
             ($PI_SESSION_FILE, {}), which is left out",
            escape_for_terminal(&cwd),
            escape_for_terminal(&session.path)
        )));
    }
    // No session ran here or above: the newest of the whole store, said in a note, so that
    // `latest` works from any directory.
    let everywhere: Vec<&Session> = sessions
        .iter()
        .filter(|session| !is_running(session))
        .collect();
    if !everywhere.is_empty() {
        let n_sessions = everywhere.len();
        let (everywhere, _) = latest_active_first(everywhere);
        let Some(session) = everywhere.get(back) else {
            return Err(AppError::not_found(format!(
                "{latest_name}: no session ran in {} or above it, and the stores hold only {} \
                 other session{} (searched {})",
                escape_for_terminal(&cwd),
                n_sessions,
                if n_sessions == 1 { "" } else { "s" },
                escape_for_terminal(&roots.join(", "))
            )));
        };
        return Ok(LocatedSession {
            path: PathBuf::from(&session.path),
            notes: vec![format!(
                "{latest_name}: no session ran in {} or any directory above it; using the \
                 most recently active session of the stores, {} (cwd {})",
                escape_for_terminal(&cwd),
                escape_for_terminal(&session.path),
                escape_for_terminal(&session.cwd)
            )],
        });
    }
    Err(AppError::not_found(with_hints(
        format!(
            "{latest_name}: no session ran in {} or any directory above it (searched {})",
            escape_for_terminal(&cwd),
            escape_for_terminal(&roots.join(", "))
        ),
        &hints,
    )))
}

/// Returns `sessions` ordered by last activity, the most recent first: the newest entry's
/// timestamp, read from the end of each file as `list --sort activity` reads it (never the
/// file's modification time; the start when none is found or the file cannot be read), ties
/// going to the later start, then to the greater path: the reverse of `list`'s order. Also
/// returns, as warnings, the sessions whose last activity could not be read within the line
/// cap (their start counts).
fn latest_active_first(sessions: Vec<&Session>) -> (Vec<&Session>, Vec<Warning>) {
    let paths: Vec<&str> = sessions
        .iter()
        .map(|session| session.path.as_str())
        .collect();
    let read = pi_retrospect_walk::with_threads(0, || crate::list::read_last_activities(&paths));
    let mut unknown = Vec::new();
    let mut keyed: Vec<(Timestamp, &Session)> = sessions
        .into_iter()
        .zip(read)
        .map(|(session, summary)| {
            let summary = summary.ok();
            if let Some(reason) = summary
                .as_ref()
                .and_then(|summary| summary.last_activity_unknown.as_ref())
            {
                unknown.push(Warning::new(&session.path, reason.clone()));
            }
            (session.last_activity(summary.as_ref()), session)
        })
        .collect();
    keyed.sort_by(|(left_activity, left), (right_activity, right)| {
        right_activity
            .cmp(left_activity)
            .then_with(|| right.chronological_cmp(left))
    });
    let ordered = keyed.into_iter().map(|(_, session)| session).collect();
    (ordered, unknown)
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
        assert_eq!(
            SessionRef::parse("latest", &env),
            Ok(SessionRef::Latest { back: 0 })
        );
        assert_eq!(
            SessionRef::parse("latest~2", &env),
            Ok(SessionRef::Latest { back: 2 })
        );
        for argument in ["latest~", "latest~x", "latest~-1", "latest~+1", "latest~01"] {
            assert_eq!(
                SessionRef::parse(argument, &env).map_err(|error| error.kind),
                Err(crate::ErrorKind::Usage),
                "{argument}"
            );
        }
        assert_eq!(
            SessionRef::parse("", &env).map_err(|error| error.kind),
            Err(crate::ErrorKind::Usage)
        );
    }
}
