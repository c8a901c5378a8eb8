//! The reading capabilities over one session: `show`, `inspect` and `entries`, each a typed
//! request in and a typed result out.

use pi_retrospect_core::Timestamp;
use pi_retrospect_transcript::{
    Cursor, DisplayItem, EntriesFilter, EntryRow, InspectPage, ReadLimits, SessionFacts,
    ShowOptions, TranscriptError, TreeRow,
};

use crate::env::Environment;
use crate::error::AppError;
use crate::session_ref::{OpenedSession, SessionRef, open_session};
use crate::store::StoreFlags;
use crate::when::{Bound, parse_when};

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
    /// Characters kept of each tool result, bash output and long note.
    pub tool_output_chars: usize,
}

/// What `show` shows: the active branch as items, or the whole tree.
#[derive(Debug)]
pub enum ShowView {
    /// The active branch, root first.
    Items(Vec<DisplayItem>),
    /// Every entry, in tree order.
    Tree(Vec<TreeRow>),
}

/// The result of `show`.
#[derive(Debug)]
pub struct ShowResult {
    /// The file read.
    pub session: OpenedSession,
    /// Facts about the whole file.
    pub facts: SessionFacts,
    /// What to show.
    pub view: ShowView,
}

/// Reads the session of `request` and builds its active branch or tree.
pub fn show(request: &ShowRequest, env: &Environment) -> Result<ShowResult, AppError> {
    let session = open(&request.target, env, &ReadLimits::default())?;
    let facts = pi_retrospect_transcript::facts(&session.transcript)?;
    let view = if request.tree {
        ShowView::Tree(pi_retrospect_transcript::entry_tree(
            &session.transcript,
            true,
        )?)
    } else {
        let options = ShowOptions {
            tool_output_chars: request.tool_output_chars,
        };
        let mut items =
            pi_retrospect_transcript::active_branch_items(&session.transcript, options)?;
        if !request.thinking {
            items.retain(|item| !matches!(item, DisplayItem::Thinking { .. }));
        }
        ShowView::Items(items)
    };
    Ok(ShowResult {
        session,
        facts,
        view,
    })
}

/// An `inspect` request: the transcript crate's view request plus the session.
#[derive(Debug, Clone)]
pub struct InspectRequest {
    /// The session.
    pub target: SessionTarget,
    /// The view, page size, cursor and options.
    pub view: pi_retrospect_transcript::InspectRequest,
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
    if let pi_retrospect_transcript::InspectView::Search { query } = &request.view.view
        && query.is_empty()
    {
        return Err(AppError::usage("search: the query must not be empty"));
    }
    let cursor = request
        .view
        .cursor
        .as_deref()
        .map(Cursor::decode)
        .transpose()?;
    let limits = ReadLimits {
        snapshot_bytes: cursor.map(|cursor| cursor.snapshot_bytes),
        ..ReadLimits::default()
    };
    let session = open(&request.target, env, &limits)?;
    let page = pi_retrospect_transcript::inspect(&session.transcript, &request.view)?;
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
    /// Terms that must all occur in the entry's text.
    pub grep: Vec<String>,
    /// Match `grep` terms case-sensitively.
    pub case_sensitive: bool,
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
    let session = open(target, env, &ReadLimits::default())?;
    Ok(EntriesResult { session, filter })
}

fn open(
    target: &SessionTarget,
    env: &Environment,
    limits: &ReadLimits,
) -> Result<OpenedSession, AppError> {
    open_session(&target.session, &target.stores, env, limits)
}

/// Returns the filter `request` describes, or a usage error.
fn entries_filter(request: &EntriesRequest, env: &Environment) -> Result<EntriesFilter, AppError> {
    let (first_line, last_line) = match &request.lines {
        Some(text) => {
            parse_lines(text).map_err(|message| AppError::usage(format!("--lines: {message}")))?
        }
        None => (None, None),
    };
    let (since, until) = time_range(request.since.as_deref(), request.until.as_deref(), env)?;
    if request.grep.iter().any(String::is_empty) {
        return Err(AppError::usage("--grep needs a non-empty term"));
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
        is_case_sensitive: request.case_sensitive,
        limit: request
            .limit
            .map(|limit| usize::try_from(limit).unwrap_or(usize::MAX)),
        include_raw: request.raw,
    })
}

/// Returns the inclusive instants `--since` and `--until` denote, refusing an empty range.
pub fn time_range(
    since: Option<&str>,
    until: Option<&str>,
    env: &Environment,
) -> Result<(Option<Timestamp>, Option<Timestamp>), AppError> {
    let bound = |flag: &str, value: Option<&str>, which: Bound| {
        value
            .map(|text| {
                parse_when(text, which, env.now, &env.time_zone)
                    .map_err(|message| AppError::usage(format!("{flag}: {message}")))
            })
            .transpose()
    };
    let since = bound("--since", since, Bound::Start)?;
    let until = bound("--until", until, Bound::End)?;
    if let (Some(since), Some(until)) = (since, until)
        && until < since
    {
        return Err(AppError::usage(format!(
            "--until ({until}) is before --since ({since}): the range is empty"
        )));
    }
    Ok((since, until))
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
