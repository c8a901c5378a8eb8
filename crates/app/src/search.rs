//! `search`: exact search over the sessions a listing selects (or one session), subagent runs
//! included, streamed in a deterministic order.

use std::ops::ControlFlow;

use pi_retrospect_core::order::SortOrder;
use pi_retrospect_core::search::{SearchTotals, SearchWarning, SessionHeading};
use pi_retrospect_search::{
    CaseMode, Event, Mode, Pattern, Progress, Query, RunOptions, Scope, SearchFile, Searcher,
};

use crate::env::Environment;
use crate::error::{AppError, Input};
use crate::list::{ListRequest, list};
use crate::read::SessionTarget;
use crate::session_ref::resolve_session;
use crate::stats::tree_holding;

/// A `search` request.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// Which sessions: the stores and the `list` filters (a kept session keeps its runs).
    pub sessions: ListRequest,
    /// Only this session file.
    pub session: Option<SessionTarget>,
    /// The pattern, how it matches, the texts searched and the snippet context.
    pub terms: SearchTerms,
    /// The order the sessions are searched in, each followed by its runs (by path, every
    /// file in path order; see [`pi_retrospect_search::files_in_order`]); hits stay in file
    /// order inside a session.
    pub order: SortOrder,
    /// Hits, counts per file, or files with matches.
    pub mode: Mode,
    /// Stop after this many hits in all.
    pub limit: Option<u64>,
    /// Read at most this many hits of each file, its first.
    pub max_per_file: Option<u64>,
    /// Start at this file, leaving out the files before it in `order`: a paged search
    /// resumes in the file its previous page ended in. Files are found by path in a fresh
    /// listing, so sessions written since sort by their own key instead of shifting the
    /// position. An error when the file is no longer among those searched.
    pub resume_at: Option<String>,
}

/// What a search looks for, how, and in which texts, as a front end states it; the
/// application turns it into the search library's [`Query`] (one construction for every
/// front end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchTerms {
    /// The pattern as given.
    pub pattern: String,
    /// A regular expression (`regex` crate syntax) rather than literal text.
    pub is_regex: bool,
    /// How letter case is matched.
    pub case: CaseMode,
    /// Only matches that are whole words.
    pub is_whole_word: bool,
    /// Also search thinking blocks.
    pub thinking: bool,
    /// Also search tool-call arguments.
    pub tool_args: bool,
    /// Also search tool results.
    pub tool_results: bool,
    /// Also search the system prompt.
    pub system: bool,
    /// Only entries of these message roles (empty: any).
    pub roles: Vec<String>,
    /// Only tool calls and results of these tools (empty: any).
    pub tools: Vec<String>,
    /// Only assistant messages of these models (empty: any).
    pub models: Vec<String>,
    /// Only entries written at or after this time ([`crate::parse_when`] syntax).
    pub since: Option<String>,
    /// Only entries written at or before this time.
    pub until: Option<String>,
    /// Characters of context on each side of a match in a snippet.
    pub context_chars: usize,
}

impl SearchTerms {
    /// Returns the terms of a literal, smart-case search for `pattern` over the texts
    /// searched by default, with the default context.
    pub fn new(pattern: impl Into<String>) -> SearchTerms {
        SearchTerms {
            pattern: pattern.into(),
            is_regex: false,
            case: CaseMode::Smart,
            is_whole_word: false,
            thinking: false,
            tool_args: false,
            tool_results: false,
            system: false,
            roles: Vec::new(),
            tools: Vec::new(),
            models: Vec::new(),
            since: None,
            until: None,
            context_chars: pi_retrospect_search::DEFAULT_CONTEXT_CHARS,
        }
    }

    /// Returns the optional texts these terms leave out (`toolResults`, `toolArgs`,
    /// `thinking`, `system`), for a search that found nothing to say what was not looked in.
    pub fn not_searched(&self) -> Vec<&'static str> {
        pi_retrospect_read::searchable::not_searched(self.scope().kinds())
    }

    /// Returns the one rule's scope for these terms' flags.
    fn scope(&self) -> pi_retrospect_read::searchable::SearchScope {
        pi_retrospect_read::searchable::SearchScope {
            thinking: self.thinking,
            tool_args: self.tool_args,
            tool_results: self.tool_results,
            system: self.system,
        }
    }

    /// Returns the search library's query for these terms, refusing an empty pattern
    /// ([`Input::Pattern`]: it would match every text, as `inspect search` and
    /// `entries --grep` refuse it too), times that are not times and an empty range
    /// ([`Input::Since`], [`Input::Until`]).
    pub(crate) fn query(&self, env: &Environment) -> Result<Query, AppError> {
        if self.pattern.is_empty() {
            return Err(AppError::bad_input(Input::Pattern, "must not be empty"));
        }
        let pattern = if self.is_regex {
            Pattern::regex(self.pattern.clone())
        } else {
            Pattern::literal(self.pattern.clone())
        };
        let mut pattern = pattern.with_case(self.case);
        if self.is_whole_word {
            pattern = pattern.whole_word();
        }
        // The one rule for which texts each flag adds.
        let kinds = self.scope().kinds();
        let (since, until) = crate::time_range(self.since.as_deref(), self.until.as_deref(), env)?;
        let mut query = Query::new(pattern);
        query.scope = Scope {
            kinds,
            roles: self.roles.clone(),
            tools: self.tools.clone(),
            models: self.models.clone(),
            since,
            until,
        };
        query.context_chars = self.context_chars;
        Ok(query)
    }
}

/// Searches the sessions `request` selects, handing every event to `on_event` in order; the
/// listing's own warnings (unreadable files the walk met) come first, as warning events.
/// Fails before reading any session when the pattern is not valid.
pub fn search(
    request: &SearchRequest,
    env: &Environment,
    on_event: &mut dyn FnMut(Event<'_>) -> ControlFlow<()>,
) -> Result<SearchTotals, AppError> {
    search_with_progress(request, env, &Progress::default(), on_event)
}

/// Searches like [`search`] and keeps `progress` up to date, so that another thread can show
/// how far the search has got (its total stays unknown while the sessions are listed).
pub fn search_with_progress(
    request: &SearchRequest,
    env: &Environment,
    progress: &Progress,
    on_event: &mut dyn FnMut(Event<'_>) -> ControlFlow<()>,
) -> Result<SearchTotals, AppError> {
    // The line cap every reader keeps (`$PI_RETROSPECT_MAX_LINE`), so that a search finds
    // what `inspect … search` and `entries --grep` find.
    let searcher = Searcher::new(&request.terms.query(env)?)
        .map_err(|error| AppError::bad_input(Input::Pattern, error.to_string()))?
        .with_max_line_bytes(env.max_line_bytes);
    if let Some(0) = request.limit {
        return Err(AppError::bad_input(Input::Limit, "must be at least 1"));
    }
    let files = match &request.session {
        Some(target) => {
            let path = resolve_session(&target.session, &target.stores, env)?
                .display()
                .to_string();
            // A file that is not a session (missing, a FIFO, a directory, not JSONL) is an
            // error, never a search that found nothing.
            crate::check_session_file(std::path::Path::new(&path))?;
            // The run depth, as when the walk finds the file; a
            // file outside the stores is a session of its own.
            let stores = ListRequest {
                stores: target.stores.clone(),
                threads: request.sessions.threads,
                ..ListRequest::default()
            };
            let listing = list(&stores, env)?.listing;
            let depth = tree_holding(listing.sessions, &path).map_or(0, |(_, depth)| depth);
            vec![SearchFile {
                path,
                depth: u32::try_from(depth).unwrap_or(u32::MAX),
            }]
        }
        None => {
            let listing = list(&request.sessions, env)?.listing;
            crate::list::fail_if_no_store_was_read(&listing)?;
            for warning in &listing.warnings {
                let warning = SearchWarning {
                    path: warning.path.clone(),
                    line_no: None,
                    message: warning.reason.clone(),
                };
                if on_event(Event::Warning(&warning)).is_break() {
                    return Ok(SearchTotals::default());
                }
            }
            pi_retrospect_search::files_in_order(&listing.sessions, request.order)
        }
    };
    let files = match &request.resume_at {
        None => files,
        Some(path) => {
            let start = files
                .iter()
                .position(|file| &file.path == path)
                .ok_or_else(|| {
                    AppError::bad_input(
                        Input::Cursor,
                        format!(
                            "{path}: the session a paged search continues in is no longer \
                             among the sessions searched"
                        ),
                    )
                })?;
            files.into_iter().skip(start).collect()
        }
    };
    let options = RunOptions {
        mode: request.mode,
        limit: request.limit,
        max_per_file: request.max_per_file,
        threads: request.sessions.threads,
    };
    Ok(pi_retrospect_search::search_files_with_progress(
        &searcher, &files, &options, progress, on_event,
    ))
}

/// Returns the title and cwd a text heading shows for the session file at `path`: the header's
/// cwd, and the name, else the first user message, from the file's two ends (a bounded read
/// whatever the file's size, so a name set only in the middle of a long file is not seen).
/// What cannot be read is left out; the search itself reports a file it cannot read.
pub fn session_heading(path: &str) -> SessionHeading {
    let path = std::path::Path::new(path);
    let cwd = pi_retrospect_header::read_header(path)
        .ok()
        .map(|header| header.cwd);
    let title = pi_retrospect_transcript::read_summary_in(
        path,
        pi_retrospect_transcript::SummaryScope::Ends,
    )
    .ok()
    .and_then(|summary| summary.name.or(summary.first_user_message));
    SessionHeading { title, cwd }
}
