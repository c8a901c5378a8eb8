//! The reading capabilities over one session: `show`, `inspect` and `entries`, each a typed
//! request in and a typed result out. A file whose first line is not a session header is
//! refused the way `list` skips it, with the same reason.

use std::path::Path;

use pi_retrospect_core::Timestamp;
use pi_retrospect_transcript::{
    CaseMode, Cursor, DisplayItem, EntriesFilter, EntryRow, InspectPage, InspectView, Lineage,
    OutputLimit, ReadLimits, RunInfo, SearchScope, SessionFacts, ShowOptions, TranscriptError,
    TreeCounts, TreeRow, utc_timestamp,
};
use pi_retrospect_walk::SessionFile;

use crate::env::Environment;
use crate::error::{AppError, Input};
use crate::session_ref::{OpenedSession, SessionRef, open_session};
use crate::store::StoreFlags;

/// Which session to read and where to look for it.
#[derive(Debug, Clone)]
pub struct SessionTarget {
    /// The session.
    pub session: SessionRef,
    /// The stores an id or `latest` is looked up in.
    pub stores: StoreFlags,
}

/// A `show` request.
#[derive(Debug, Clone)]
pub struct ShowRequest {
    /// The session.
    pub target: SessionTarget,
    /// The whole entry tree instead of the active branch.
    pub tree: bool,
    /// Keep thinking blocks in the active-branch items.
    pub thinking: bool,
    /// Characters kept of each tool result, `!` command output and long note, head and
    /// tail; `None` keeps everything (what `--json` shows).
    pub tool_output_chars: Option<usize>,
}

/// What `show` shows: the active branch as items, or the whole tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShowView {
    /// The active branch, root first ([`ShowResult::for_each_item`]).
    Items,
    /// Every entry, in tree order ([`ShowResult::for_each_tree_row`]).
    Tree,
}

/// The result of `show`: the file read, its facts and lineage. Items and tree rows are made
/// one at a time by [`ShowResult::for_each_item`] and [`ShowResult::for_each_tree_row`], so a
/// writer that streams them holds one at a time, whatever the file's size.
#[derive(Debug)]
pub struct ShowResult {
    /// The file read.
    pub session: OpenedSession,
    /// Facts about the whole file.
    pub facts: SessionFacts,
    /// Which sessions it came from and launched.
    pub lineage: Lineage,
    /// What to show.
    pub view: ShowView,
    /// What each item keeps.
    pub options: ShowOptions,
}

impl ShowResult {
    /// Returns the number of entries on the active branch.
    pub fn n_active_entries(&self) -> usize {
        self.session.transcript.active_branch_len()
    }

    /// Hands each item of the active branch to `visit`, root first, made as it is reached;
    /// stops at the first error `visit` returns.
    pub fn for_each_item<E: From<TranscriptError>>(
        &self,
        visit: impl FnMut(DisplayItem) -> Result<(), E>,
    ) -> Result<(), E> {
        pi_retrospect_transcript::for_each_item(&self.session.transcript, self.options, visit)
    }

    /// Returns how many rows and branch points the entry tree has, before any row is made.
    pub fn tree_counts(&self) -> TreeCounts {
        pi_retrospect_transcript::tree_counts(&self.session.transcript)
    }

    /// Hands each row of the entry tree (with previews) to `visit`, in drawing order, made as
    /// it is reached; stops at the first error `visit` returns.
    pub fn for_each_tree_row<E: From<TranscriptError>>(
        &self,
        visit: impl FnMut(TreeRow) -> Result<(), E>,
    ) -> Result<(), E> {
        pi_retrospect_transcript::for_each_tree_row(&self.session.transcript, true, visit)
    }
}

/// Runs whose first task is read for `show`'s heading.
const MAX_RUN_TASKS: usize = 50;

/// Reads the session of `request`, its facts and lineage; its active branch or tree is made
/// as it is written ([`ShowResult::for_each_item`], [`ShowResult::for_each_tree_row`]).
pub fn show(request: &ShowRequest, env: &Environment) -> Result<ShowResult, AppError> {
    let session = open(&request.target, env, &env.read_limits())?;
    let facts = pi_retrospect_transcript::facts(&session.transcript)?;
    let lineage = lineage(&session.path, &facts)?;
    Ok(ShowResult {
        session,
        facts,
        lineage,
        view: if request.tree {
            ShowView::Tree
        } else {
            ShowView::Items
        },
        options: ShowOptions {
            output_limit: request.tool_output_chars.map(OutputLimit::chars),
            include_thinking: request.thinking,
        },
    })
}

/// Returns where the session at `path` sits: its fork parent's existence, the session that
/// launched it and the runs it launched. Nothing here is written or followed through a link.
///
/// Fails only when the process runs out of file descriptors while listing the runs.
pub fn lineage(path: &str, facts: &SessionFacts) -> Result<Lineage, AppError> {
    let parent_session_exists = facts
        .parent_session
        .as_deref()
        .map(|parent| Path::new(parent).is_file());
    let (session, _) = pi_retrospect_walk::list_session_file(&SessionFile {
        path: path.to_owned(),
        has_container: true,
    })?;
    let runs = session
        .map(|mut session| std::mem::take(&mut session.subagent_sessions))
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(idx, mut run)| {
            let summary = (idx < MAX_RUN_TASKS)
                .then(|| pi_retrospect_transcript::read_summary(Path::new(&run.path)).ok())
                .flatten()
                .unwrap_or_default();
            RunInfo {
                name: summary.name,
                first_task: summary.first_user_message,
                n_runs: run.n_runs(),
                path: std::mem::take(&mut run.path),
                id: std::mem::take(&mut run.id),
                timestamp: utc_timestamp(&run.timestamp),
            }
        })
        .collect();
    Ok(Lineage {
        parent_session_exists,
        launched_by: launcher_of(path),
        runs,
    })
}

/// Returns the session that launched the run at `path`: the nearest ancestor directory `D`
/// with a session file `D.jsonl` beside it (a session's container holds its runs). Only a
/// pi-subagents transcript (`session.jsonl`, or a `.jsonl` in a `forks` directory) is a run.
fn launcher_of(path: &str) -> Option<String> {
    let path = Path::new(path);
    let parent = path.parent()?;
    let is_run = path.file_name().is_some_and(|name| name == "session.jsonl")
        || parent.file_name().is_some_and(|name| name == "forks");
    if !is_run {
        return None;
    }
    parent.ancestors().take(64).find_map(|dir| {
        let candidate = format!("{}.jsonl", dir.to_str()?);
        let metadata = std::fs::symlink_metadata(&candidate).ok()?;
        metadata.file_type().is_file().then_some(candidate)
    })
}

/// An `inspect` request: the transcript crate's view request plus the session.
#[derive(Debug, Clone)]
pub struct InspectRequest {
    /// The session.
    pub target: SessionTarget,
    /// The view.
    pub view: InspectView,
    /// Page size: default 20, at most 50.
    pub limit: Option<usize>,
    /// A `nextCursor` from an earlier page of the same request.
    pub cursor: Option<String>,
    /// What is shown and searched besides the conversation (tool output, tool-call
    /// arguments, thinking, system prompts).
    pub scope: SearchScope,
    /// How `search` treats case (smart case by default).
    pub case: CaseMode,
}

/// The result of `inspect`.
#[derive(Debug)]
pub struct InspectResult {
    /// The file read (up to the cursor's snapshot when continuing).
    pub session: OpenedSession,
    /// The page.
    pub page: InspectPage,
    /// Where the page starts in its view (0 without a cursor).
    pub offset: usize,
}

/// Reads one page of an inspect view. A cursor fixes how much of the file is read, so later
/// pages see the first page's snapshot; requests that can be refused without the file are
/// refused before anything is read.
pub fn inspect(request: &InspectRequest, env: &Environment) -> Result<InspectResult, AppError> {
    if let InspectView::Search { query } = &request.view
        && query.is_empty()
    {
        return Err(AppError::bad_input(Input::Query, "must not be empty"));
    }
    let cursor = request.cursor.as_deref().map(Cursor::decode).transpose()?;
    let limits = ReadLimits {
        snapshot_bytes: cursor.map(|cursor| cursor.snapshot_bytes),
        ..env.read_limits()
    };
    let session = open(&request.target, env, &limits)?;
    let view = pi_retrospect_transcript::InspectPageRequest {
        view: request.view.clone(),
        limit: request.limit,
        cursor: request.cursor.clone(),
        scope: request.scope,
        case: request.case,
    };
    let page = pi_retrospect_transcript::inspect(&session.transcript, &view)?;
    Ok(InspectResult {
        session,
        page,
        offset: cursor.map_or(0, |cursor| cursor.offset),
    })
}

/// An `entries` request: the session and the filters, as a front end received them.
#[derive(Debug, Clone, Default)]
pub struct EntriesRequest {
    /// Physical line range `A..B`, `A..`, `..B` or `N`.
    pub lines: Option<String>,
    /// The entry with this id (or `line:N` handle).
    pub id: Option<String>,
    /// Children of the entry with this id (or `line:N` handle).
    pub parent_id: Option<String>,
    /// Entry types.
    pub types: Vec<String>,
    /// Message roles.
    pub roles: Vec<String>,
    /// Entries at or after this bound (`parse_when` syntax).
    pub since: Option<String>,
    /// Entries at or before this bound.
    pub until: Option<String>,
    /// Terms of which any must occur in one of the entry's searchable texts.
    pub grep: Vec<String>,
    /// How `grep` terms treat case (smart case by default).
    pub case: CaseMode,
    /// The opt-in kinds of text `grep` also looks in (`--thinking`, `--tool-args`,
    /// `--tool-results`, `--system`).
    pub grep_scope: SearchScope,
    /// At most this many rows.
    pub limit: Option<u64>,
    /// Carry each entry's raw JSON.
    pub raw: bool,
}

/// The result of `entries`: the file read and the resolved filter. Rows are produced one at a
/// time by [`EntriesResult::for_each_row`], so a writer that streams them holds one row at a
/// time, whatever the file's size.
#[derive(Debug)]
pub struct EntriesResult {
    /// The file read.
    pub session: OpenedSession,
    /// The filters the rows pass.
    pub filter: EntriesFilter,
}

impl EntriesResult {
    /// Hands each row that passes the filter to `visit`, in file order; stops at the first
    /// error `visit` returns.
    pub fn for_each_row<E: From<TranscriptError>>(
        &self,
        visit: impl FnMut(EntryRow) -> Result<(), E>,
    ) -> Result<(), E> {
        pi_retrospect_transcript::for_each_entry_row(&self.session.transcript, &self.filter, visit)
    }

    /// Returns every row that passes the filter, in file order.
    pub fn rows(&self) -> Result<Vec<EntryRow>, AppError> {
        Ok(pi_retrospect_transcript::entries(
            &self.session.transcript,
            &self.filter,
        )?)
    }
}

/// Opens the session of `target` for the rows that `request` selects; bad filter values are
/// refused before the file is read.
pub fn entries(
    target: &SessionTarget,
    request: &EntriesRequest,
    env: &Environment,
) -> Result<EntriesResult, AppError> {
    let filter = entries_filter(request, env)?;
    let session = open(target, env, &env.read_limits())?;
    // An entry named by id or as the parent is a handle, as in `inspect read`: one that names
    // nothing is a usage error, not an empty table.
    for (handle, input) in [
        (&request.id, Input::Entry),
        (&request.parent_id, Input::Parent),
    ] {
        if let Some(handle) = handle
            && session.transcript.find(handle).is_none()
        {
            return Err(AppError::bad_input(
                input,
                format!("no entry {handle:?} in this session"),
            ));
        }
    }
    Ok(EntriesResult { session, filter })
}

/// Opens the session `target` names, after checking its first line the way `list` does: a
/// file that is not a session (empty, text, other JSON, binary) is an error naming the path
/// and the reason, never an empty session.
fn open(
    target: &SessionTarget,
    env: &Environment,
    limits: &ReadLimits,
) -> Result<OpenedSession, AppError> {
    let session = open_session(&target.session, &target.stores, env, limits)?;
    if target.session == crate::SessionRef::Stdin {
        if session.transcript.header().is_none() {
            return Err(AppError::io(
                "standard input: not a session file: line 1 is not a session header",
            ));
        }
        return Ok(session);
    }
    check_session_file(Path::new(&session.path))?;
    Ok(session)
}

/// Checks that the file at `path` starts with a valid session header, the way `list` does;
/// otherwise returns the error every reading command gives: "cannot open session file", the
/// path and the reason when it cannot be opened as a regular file (as `show` says it), else
/// the path, "not a session file" and the reason.
pub fn check_session_file(path: &Path) -> Result<(), AppError> {
    use pi_retrospect_header::HeaderError;
    pi_retrospect_header::read_header(path)
        .map(|_| ())
        .map_err(|error| match error {
            // The same words as `show`, `entries` and `inspect`.
            // A path that names no file is a SESSION that names nothing (exit 2 in the CLI);
            // one that exists but cannot be opened is I/O.
            HeaderError::Missing(reason) => AppError::not_found(format!(
                "cannot open session file {}: {reason}",
                path.display()
            )),
            HeaderError::Open(reason) => AppError::io(format!(
                "cannot open session file {}: {reason}",
                path.display()
            )),
            HeaderError::NotRegular(kind) => AppError::io(format!(
                "cannot open session file {}: is a {kind}, not a regular file",
                path.display()
            )),
            error => AppError::io(format!("{}: not a session file: {error}", path.display())),
        })
}

/// Returns the filter `request` describes, or a usage error.
fn entries_filter(request: &EntriesRequest, env: &Environment) -> Result<EntriesFilter, AppError> {
    let (first_line, last_line) = match &request.lines {
        Some(text) => {
            parse_lines(text).map_err(|message| AppError::bad_input(Input::Lines, message))?
        }
        None => (None, None),
    };
    let (since, until) = time_range(request.since.as_deref(), request.until.as_deref(), env)?;
    if request.grep.iter().any(String::is_empty) {
        return Err(AppError::bad_input(Input::Grep, "needs a non-empty term"));
    }
    if request.id.as_deref() == Some("") {
        return Err(AppError::bad_input(
            Input::Entry,
            "needs an entry id or a line:N handle",
        ));
    }
    if request.parent_id.as_deref() == Some("") {
        return Err(AppError::bad_input(
            Input::Parent,
            "needs an entry id or a line:N handle",
        ));
    }
    Ok(EntriesFilter {
        first_line,
        last_line,
        id: request.id.clone(),
        parent_id: request.parent_id.clone(),
        types: request.types.clone(),
        roles: request.roles.clone(),
        since,
        until,
        grep: request.grep.clone(),
        case: request.case,
        grep_scope: request.grep_scope,
        limit: request
            .limit
            .map(|limit| usize::try_from(limit).unwrap_or(usize::MAX)),
        include_raw: request.raw,
    })
}

/// Returns the time zone a report's periods and offset-less times are read in (`name`, an IANA
/// zone, or the environment's) and the environment in that zone, refusing an unknown zone
/// ([`Input::TimeZone`]).
pub(crate) fn zoned(
    name: Option<&str>,
    env: &Environment,
) -> Result<(jiff::tz::TimeZone, Environment), AppError> {
    let zone = match name {
        None => env.time_zone.clone(),
        Some(name) => jiff::tz::TimeZone::get(name)
            .map_err(|error| AppError::bad_input(Input::TimeZone, format!("{name:?}: {error}")))?,
    };
    let zoned = Environment {
        time_zone: zone.clone(),
        ..env.clone()
    };
    Ok((zone, zoned))
}

/// Returns the inclusive instants a creation-time range's two ends denote, refusing a value
/// that is not a time ([`Input::Since`], [`Input::Until`]) and an empty range.
pub fn time_range(
    since: Option<&str>,
    until: Option<&str>,
    env: &Environment,
) -> Result<(Option<Timestamp>, Option<Timestamp>), AppError> {
    crate::when::time_bounds((Input::Since, since), (Input::Until, until), env)
}

/// Returns the inclusive line range of `A..B`, `A..`, `..B` or `N`.
fn parse_lines(text: &str) -> Result<(Option<u64>, Option<u64>), String> {
    let number = |part: &str| -> Result<Option<u64>, String> {
        if part.is_empty() {
            return Ok(None);
        }
        match part.parse::<u64>() {
            Ok(0) => Err("line numbers start at 1".to_owned()),
            Ok(line) => Ok(Some(line)),
            Err(_) => Err(format!("{part:?} is not a line number")),
        }
    };
    let (first, last) = match text.split_once("..") {
        Some((first, last)) => (number(first)?, number(last)?),
        None if text.is_empty() => return Err("expected A..B, A.., ..B or N".to_owned()),
        None => {
            let line = number(text)?;
            (line, line)
        }
    };
    if let (Some(first), Some(last)) = (first, last)
        && last < first
    {
        return Err(format!("{text:?} is an empty range"));
    }
    Ok((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read under an interrupt that has fired fails naming the interruption, and the same
    /// read outside it works: a call answered early (timed out, cancelled) stops its parse.
    #[test]
    fn an_interrupted_thread_stops_at_its_next_read() {
        use pi_retrospect_testkit::{Entry, Header, Message, write_session_file};
        let dir = tempfile::tempdir().expect("temp dir");
        let header = Header::new("s")
            .timestamp("2026-01-01T00:00:00.000Z")
            .cwd("/p");
        let line = Entry::message(Message::user("needle"))
            .id("a")
            .parent(None)
            .at("2026-01-01T00:00:01.000Z");
        let path = write_session_file(&dir.path().join("s.jsonl"), &header, [line]);
        let target = SessionTarget {
            session: SessionRef::Path(path.display().to_string()),
            stores: StoreFlags::default(),
        };
        let request = EntriesRequest {
            grep: vec!["needle".to_owned()],
            ..EntriesRequest::default()
        };
        let env = Environment::default();
        let interrupt = std::sync::Arc::new(pi_retrospect_search::Progress::default());
        let found = crate::until_interrupted(&interrupt, || {
            entries(&target, &request, &env).and_then(|result| result.rows())
        });
        assert_eq!(found.expect("rows").len(), 1);
        interrupt.interrupt();
        let error = crate::until_interrupted(&interrupt, || {
            entries(&target, &request, &env).and_then(|result| result.rows())
        })
        .expect_err("stopped");
        assert!(error.to_string().contains("interrupted"), "{error}");
        assert_eq!(
            entries(&target, &request, &env)
                .and_then(|result| result.rows())
                .expect("rows")
                .len(),
            1
        );
    }

    /// A run names the session that launched it, found from the on-disk nesting.
    #[test]
    fn a_run_names_its_launcher() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().to_str().expect("utf-8").to_owned();
        for relative in [
            "p/x.jsonl",
            "p/x/launch/run-0/session.jsonl",
            "p/x/launch/run-0/session/inner/run-0/session.jsonl",
            "p/x/forks/f.jsonl",
            "p/y.jsonl",
            "p/z/session.jsonl",
        ] {
            let path = dir.path().join(relative);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, "").expect("write");
        }
        let check = |relative: &str, expected: Option<&str>| {
            assert_eq!(
                launcher_of(&format!("{root}/{relative}")),
                expected.map(|launcher| format!("{root}/{launcher}")),
                "{relative}"
            );
        };
        check("p/x/launch/run-0/session.jsonl", Some("p/x.jsonl"));
        check(
            "p/x/launch/run-0/session/inner/run-0/session.jsonl",
            Some("p/x/launch/run-0/session.jsonl"),
        );
        check("p/x/forks/f.jsonl", Some("p/x.jsonl"));
        check("p/y.jsonl", None);
        check("p/z/session.jsonl", None);
    }

    /// `show` hands the front end a session, its facts and lineage, and makes the
    /// items and tree rows only as they are written. The file is cut after `show` returned:
    /// items made one at a time reach the writer up to the cut, then the read fails; a result
    /// that held the items (or a walk that built them all before the first) would not.
    #[test]
    fn show_makes_items_and_rows_as_they_are_written() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        let mut text = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#.to_owned();
        text.push('\n');
        let mut offsets = Vec::new();
        for idx in 0..100 {
            offsets.push(text.len());
            let parent = match idx {
                0 => "null".to_owned(),
                _ => format!("\"u{}\"", idx - 1),
            };
            text.push_str(&format!(
                r#"{{"type":"message","id":"u{idx}","parentId":{parent},"message":{{"role":"user","content":"message {idx}"}}}}"#
            ));
            text.push('\n');
        }
        std::fs::write(&path, &text).expect("write");
        let env = Environment::default();
        for tree in [false, true] {
            let request = ShowRequest {
                target: SessionTarget {
                    session: SessionRef::Path(path.to_str().expect("utf-8").to_owned()),
                    stores: StoreFlags::default(),
                },
                tree,
                thinking: false,
                tool_output_chars: None,
            };
            let result = show(&request, &env).expect("show");
            assert_eq!(result.n_active_entries(), 100);
            assert_eq!(result.tree_counts().n_rows, 100);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .expect("open for writing")
                .set_len(offsets[7] as u64)
                .expect("cut");
            let mut n_written = 0;
            let outcome = match result.view {
                ShowView::Items => result.for_each_item(|_| {
                    n_written += 1;
                    Ok::<(), AppError>(())
                }),
                ShowView::Tree => result.for_each_tree_row(|_| {
                    n_written += 1;
                    Ok::<(), AppError>(())
                }),
            };
            assert!(outcome.is_err(), "tree={tree}");
            assert_eq!(n_written, 7, "tree={tree}");
            std::fs::write(&path, &text).expect("restore");
        }
    }

    #[test]
    fn line_ranges() {
        assert_eq!(parse_lines("3..7"), Ok((Some(3), Some(7))));
        assert_eq!(parse_lines("3.."), Ok((Some(3), None)));
        assert_eq!(parse_lines("..7"), Ok((None, Some(7))));
        assert_eq!(parse_lines("5"), Ok((Some(5), Some(5))));
        assert_eq!(parse_lines(".."), Ok((None, None)));
        for bad in ["", "0..3", "7..3", "a..b", "1...3"] {
            assert!(parse_lines(bad).is_err(), "{bad}");
        }
    }
}
