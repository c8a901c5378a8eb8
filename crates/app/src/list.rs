//! `list`: the sessions index of the resolved stores, filtered and sorted, with the body facts
//! (name, first user message, last activity) a front end asked for.

use std::collections::HashMap;

use pi_retrospect_core::filter::{CwdMatcher, ListFilter};
use pi_retrospect_core::order::SortOrder;
use pi_retrospect_core::{
    IdBuffer, IdPrefixes, Listing, Session, SessionRow, SessionSummary, Warning,
};
use pi_retrospect_transcript::SummaryScope;
use pi_retrospect_walk::{BodyReach, BodyReader, Store, WalkOptions, WalkState};
use rayon::prelude::*;

use crate::cache::{CacheCounts, SummaryCache};
use crate::current::CurrentSession;
use crate::env::Environment;
use crate::error::{AppError, Input};
use crate::store::{StoreFlags, resolve_stores};

/// A `list` request: which stores, which sessions, in what order, and which body facts.
#[derive(Debug, Clone, Default)]
pub struct ListRequest {
    /// Where the sessions are.
    pub stores: StoreFlags,
    /// Keep sessions whose cwd equals one of these (relative ones resolved, `~` expanded).
    pub cwd: Vec<String>,
    /// Keep sessions whose cwd is one of these or below it.
    pub cwd_prefix: Vec<String>,
    /// Add the current directory to `cwd`.
    pub here: bool,
    /// Let each cwd filter also match sibling worktrees `DIR-<suffix>`.
    pub worktrees: bool,
    /// Keep sessions that started at or after this bound (`parse_when` syntax).
    pub since: Option<String>,
    /// Keep sessions that started at or before this bound.
    pub until: Option<String>,
    /// Keep sessions whose last activity is at or after this bound (`parse_when` syntax).
    pub active_since: Option<String>,
    /// Keep sessions active at or before this bound (that started by then); with
    /// `active_since`, the sessions active at some point in the range.
    pub active_until: Option<String>,
    /// Keep only sessions that launched subagent runs.
    pub with_subagents: bool,
    /// Show at most this many levels of runs.
    pub max_depth: Option<usize>,
    /// Leave out `$PI_SESSION_FILE` (the session running the request) with its tree: the file
    /// it names, whatever path text reaches it (see `CurrentSession`).
    pub exclude_current: bool,
    /// Keep sessions, or subagent runs (with their ancestors), whose id starts with one of
    /// these.
    pub id_prefixes: Vec<String>,
    /// Keep sessions whose name contains this, case-insensitively.
    pub name_contains: Option<String>,
    /// The order of the top level (runs keep their launch order).
    pub order: SortOrder,
    /// Keep at most this many top-level sessions after sorting (at least 1).
    pub limit: Option<i64>,
    /// Read the name, first user message and last activity of every shown session. With the
    /// summary cache (`Environment::cache_dir`, unless `no_cache`) these are the whole body's
    /// facts, read once per file and then only what was appended; without it, they are read
    /// from the ends of the file ([`SummaryScope::Ends`]: time bounded per file; a name set
    /// mid-session in a long file and never again is not seen, while a name filter reads
    /// whole bodies and those serve instead). Unless few of the sessions the headers allow are
    /// shown (`limit`, `id_prefixes`, `with_subagents`), the walk reads them on the
    /// descriptors it holds, starting from the bytes it read with the header (see
    /// `WalkReads`).
    pub read_summaries: bool,
    /// Neither read nor write the summary cache: body facts come from file ends (and whole
    /// bodies for a name filter), as without a cache directory.
    pub no_cache: bool,
    /// Keep every walked session's id, so a front end can show each id's shortest unique
    /// prefix.
    pub unique_id_prefixes: bool,
    /// Worker threads; 0 means one per core.
    pub threads: usize,
}

/// The map a listing keys by session path. Its hash is a fast one: a listing looks each
/// session's path up a few times, and SipHash cost more than the rest of those lookups.
pub type PathMap<V> = HashMap<String, V, foldhash::fast::RandomState>;

/// What `list` found.
#[derive(Debug, Clone, Default)]
pub struct ListResult {
    /// The filtered, sorted listing with every warning (store warnings included), sorted.
    pub listing: Listing,
    /// Body facts by session path: of every shown session with `read_summaries`, else of the
    /// sessions a `name_contains` or activity filter read; except those the walk kept on the
    /// sessions themselves ([`Session::summary`], its ends reads: most of `--long`'s and
    /// `--jsonl`'s). [`Session::facts`] picks the one to use.
    pub summaries: PathMap<SessionSummary>,
    /// With `unique_id_prefixes`: the ids of all the sessions walked (runs included, not only
    /// the shown ones), so a shown prefix is unique where a lookup by id searches.
    pub id_prefixes: Option<IdPrefixes>,
    /// Advice for the person who made the request (a sessions root that looks like a project
    /// directory, a summary cache that was corrupt or could not be written), not about any
    /// session file; a front end shows it apart from the output.
    pub notes: Vec<String>,
    /// What the summary cache did, when the request used it.
    pub cache_counts: Option<CacheCounts>,
}

impl ListRequest {
    /// Returns the filter, sort and limit this request asks for, resolved against `env`;
    /// fails on a bad value before any file is read.
    pub fn filter(&self, env: &Environment) -> Result<ListFilter, AppError> {
        let mut cwds = Vec::new();
        let mut exact: Vec<&str> = self.cwd.iter().map(String::as_str).collect();
        let cwd_text = env
            .cwd
            .to_str()
            .ok_or_else(|| AppError::io("the current directory is not valid UTF-8"))?;
        if self.here || (self.worktrees && self.cwd.is_empty() && self.cwd_prefix.is_empty()) {
            exact.push(cwd_text);
        }
        for (values, include_subdirectories) in [
            (exact, false),
            (self.cwd_prefix.iter().map(String::as_str).collect(), true),
        ] {
            for value in values {
                if value.is_empty() {
                    let input = if include_subdirectories {
                        Input::CwdPrefix
                    } else {
                        Input::Cwd
                    };
                    return Err(AppError::bad_input(input, "needs a directory"));
                }
                cwds.push(CwdMatcher {
                    dir: env.absolute(value)?,
                    include_subdirectories,
                    include_worktrees: self.worktrees,
                });
            }
        }
        let (since, until) = crate::when::time_bounds(
            (Input::Since, self.since.as_deref()),
            (Input::Until, self.until.as_deref()),
            env,
        )?;
        let (active_since, active_until) = crate::when::time_bounds(
            (Input::ActiveSince, self.active_since.as_deref()),
            (Input::ActiveUntil, self.active_until.as_deref()),
            env,
        )?;
        let limit = match self.limit {
            None => None,
            Some(limit) if limit >= 1 => Some(usize::try_from(limit).unwrap_or(usize::MAX)),
            Some(limit) => {
                return Err(AppError::bad_input(
                    Input::Limit,
                    format!("must be at least 1, not {limit} (leave it out to list every session)"),
                ));
            }
        };
        // One rule for every filter: an empty value is refused, never read as "any".
        if self.id_prefixes.iter().any(String::is_empty) {
            return Err(AppError::bad_input(Input::Id, "needs a non-empty prefix"));
        }
        if self.name_contains.as_deref() == Some("") {
            return Err(AppError::bad_input(Input::Name, "needs non-empty text"));
        }
        // `$PI_SESSION_FILE` is left out by file identity, not by path text
        // (`CurrentSession`, applied by `list` before the query), but a value that cannot be
        // a path is refused here with the other bad values.
        if self.exclude_current
            && let Some(file) = env.session_file.as_deref()
        {
            env.absolute(file)?;
        }
        Ok(ListFilter {
            cwds,
            since,
            until,
            active_since,
            active_until,
            with_subagents: self.with_subagents,
            max_depth: self.max_depth,
            exclude_path: None,
            id_prefixes: self.id_prefixes.clone(),
            name_contains: self.name_contains.clone(),
            order: self.order,
            limit,
        })
    }
}

/// A request resolved before any session file is read.
struct Resolved {
    stores: Vec<Store>,
    store_warnings: Vec<Warning>,
    query: ListFilter,
    /// The session to leave out (`exclude_current`), recognised by file identity.
    current: Option<CurrentSession>,
    walk: WalkOptions,
    /// The summary cache, when the request reads body facts and may use it.
    cache: Option<SummaryCache>,
    /// Why the cache could not be used, or was rebuilt.
    cache_notes: Vec<String>,
}

fn resolve(request: &ListRequest, env: &Environment) -> Result<Resolved, AppError> {
    // Everything the request alone can refuse is refused before a settings file is read.
    let query = request.filter(env)?;
    let (stores, store_warnings) = resolve_stores(&request.stores, env)?;
    let current = current_to_leave_out(request, env)?;
    let wants_cache = !request.no_cache && (request.read_summaries || query.needs_names());
    let (cache, cache_notes) = if wants_cache {
        SummaryCache::open(env, &stores)
    } else {
        (None, Vec::new())
    };
    Ok(Resolved {
        stores,
        store_warnings,
        query,
        current,
        walk: WalkOptions {
            threads: request.threads,
        },
        cache,
        cache_notes,
    })
}

/// Returns the session running the request when `request` leaves it out.
pub(crate) fn current_to_leave_out(
    request: &ListRequest,
    env: &Environment,
) -> Result<Option<CurrentSession>, AppError> {
    if request.exclude_current {
        CurrentSession::from_env(env)
    } else {
        Ok(None)
    }
}

/// Lists the sessions `request` asks for: walks the stores, reads the body facts a filter or
/// the request needs, filters, sorts and limits.
pub fn list(request: &ListRequest, env: &Environment) -> Result<ListResult, AppError> {
    list_reading(request, env, None::<&pi_retrospect_walk::NoBodies>).map(|(listed, _)| listed)
}

/// Lists like [`list`], and when no filter or view of the request reads bodies itself, has
/// `extra` read the bodies it plans during the walk (on the descriptor the header was read
/// through) and returns them; otherwise (or with no `extra`) returns no extra bodies.
pub(crate) fn list_reading<R: BodyReader>(
    request: &ListRequest,
    env: &Environment,
    extra: Option<&R>,
) -> Result<(ListResult, pi_retrospect_walk::Bodies<R::Body>), AppError> {
    let mut resolved = resolve(request, env)?;
    let mut extra_bodies = Vec::new();
    let reads = WalkReads::new(request, &resolved.query, resolved.cache.as_ref());
    let (mut listing, mut prefetched) = match (reads, extra) {
        (Some(reads), _) => {
            let (listing, bodies) =
                pi_retrospect_walk::list_stores_with(&resolved.stores, &resolved.walk, &reads)?;
            (listing, Prefetched::from_bodies(bodies))
        }
        (None, Some(extra)) => {
            let (listing, bodies) =
                pi_retrospect_walk::list_stores_with(&resolved.stores, &resolved.walk, extra)?;
            extra_bodies = bodies;
            (listing, Prefetched::default())
        }
        (None, None) => (
            pi_retrospect_walk::list_stores(&resolved.stores, &resolved.walk)?,
            Prefetched::default(),
        ),
    };
    // The ids of every session walked, before the query drops any; their prefixes are
    // worked out on a thread of their own while the query runs.
    // They are copied into one buffer (the query takes the listing): one allocation, not
    // one per id.
    let ids = request.unique_id_prefixes.then(|| {
        let mut ids = Vec::new();
        collect(&listing.sessions, |session| &session.id, &mut ids);
        let mut buffer = IdBuffer::with_capacity(ids.len(), ids.iter().map(|id| id.len()).sum());
        for id in ids {
            buffer.push(id);
        }
        buffer
    });
    let mut notes = if listing.sessions.is_empty() {
        crate::store::layout_hints(&request.stores, &resolved.stores)
    } else {
        Vec::new()
    };
    listing
        .warnings
        .extend(resolved.store_warnings.iter().cloned());
    let mut summaries =
        PathMap::with_capacity_and_hasher(prefetched.by_path.len(), Default::default());
    let id_prefixes = std::thread::scope(|scope| {
        let prefixes = ids.map(|ids| scope.spawn(move || IdPrefixes::from_ids(ids)));
        filter(
            &resolved,
            request,
            &mut prefetched,
            &mut listing,
            &mut summaries,
        );
        prefixes.map(|prefixes| prefixes.join().unwrap_or_default())
    });
    listing.warnings.sort();
    listing.warnings.dedup();
    notes.append(&mut resolved.cache_notes);
    let cache_counts = resolved.cache.take().map(|cache| {
        let counts = cache.counts();
        notes.extend(cache.save(Some(&resolved.stores)));
        counts
    });
    Ok((
        ListResult {
            listing,
            summaries,
            id_prefixes,
            notes,
            cache_counts,
        },
        extra_bodies,
    ))
}

/// Fails when a sessions root could not be read and no session was found: a search or a
/// count over nothing would report "no match" or a confident zero. `list` itself shows the same fact as a warning.
pub(crate) fn fail_if_no_store_was_read(listing: &Listing) -> Result<(), AppError> {
    if !listing.sessions.is_empty() {
        return Ok(());
    }
    match listing
        .warnings
        .iter()
        .find(|warning| warning.reason.starts_with("sessions root not readable"))
    {
        Some(warning) => Err(AppError::io(format!(
            "{}: {}",
            warning.path, warning.reason
        ))),
        None => Ok(()),
    }
}

/// Lists like [`list`] but hands each top-level session tree to `emit` as soon as the walk
/// has read and filtered it, in no particular order, for front ends that stream
/// (`list --jsonl --unordered`). Sorting and limits do not apply. The warnings that belong to
/// no session come last, in one final call with an empty listing. Returns early, reading no
/// further file, when `emit` returns [`WalkState::Quit`].
pub fn list_unordered(
    request: &ListRequest,
    env: &Environment,
    emit: &mut dyn FnMut(ListResult) -> WalkState,
) -> Result<(), AppError> {
    let mut resolved = resolve(request, env)?;
    // Each tree is filtered (and its names read) on the worker that read it, so the writer
    // never waits on the pool while the pool waits on the writer; the bounded channel keeps
    // memory bounded when the writer is slower than the walk.
    let (sender, receiver) = std::sync::mpsc::sync_channel::<ListResult>(64);
    let mut state = WalkState::Continue;
    let reads = WalkReads::new(request, &resolved.query, resolved.cache.as_ref());
    let mut loose = std::thread::scope(|scope| {
        let resolved = &resolved;
        // The sender moves into the walker, so the receiver's loop ends when the walk does.
        let walker = scope.spawn(move || {
            let emit_tree = |session: Option<Session>, warnings: Vec<Warning>, bodies: Bodies| {
                let mut listing = Listing {
                    sessions: Option::into_iter(session).collect(),
                    warnings,
                };
                let mut prefetched = Prefetched::from_bodies(bodies);
                let mut summaries = PathMap::default();
                filter(
                    resolved,
                    request,
                    &mut prefetched,
                    &mut listing,
                    &mut summaries,
                );
                listing.warnings.sort();
                listing.warnings.dedup();
                let part = ListResult {
                    listing,
                    summaries,
                    ..ListResult::default()
                };
                match sender.send(part) {
                    Ok(()) => WalkState::Continue,
                    // The receiver is gone: the front end stopped (a closed pipe).
                    Err(_) => WalkState::Quit,
                }
            };
            match &reads {
                Some(reads) => pi_retrospect_walk::for_each_session_with(
                    &resolved.stores,
                    &resolved.walk,
                    reads,
                    &emit_tree,
                ),
                None => pi_retrospect_walk::for_each_session(
                    &resolved.stores,
                    &resolved.walk,
                    &|session, warnings| emit_tree(session, warnings, Vec::new()),
                ),
            }
        });
        for part in receiver.iter() {
            if part.listing.sessions.is_empty() && part.listing.warnings.is_empty() {
                continue;
            }
            state = emit(part);
            if state == WalkState::Quit {
                break;
            }
        }
        drop(receiver);
        // A walker that panicked has nothing more to report than the trees it sent.
        walker.join().unwrap_or_else(|_| Ok(Vec::new()))
    })?;
    if state == WalkState::Quit {
        return Ok(());
    }
    loose.extend(resolved.store_warnings.iter().cloned());
    loose.sort();
    let mut notes = std::mem::take(&mut resolved.cache_notes);
    let cache_counts = resolved.cache.take().map(|cache| {
        let counts = cache.counts();
        notes.extend(cache.save(Some(&resolved.stores)));
        counts
    });
    emit(ListResult {
        listing: Listing {
            sessions: Vec::new(),
            warnings: loose,
        },
        notes,
        cache_counts,
        ..ListResult::default()
    });
    Ok(())
}

/// Applies the query to `listing`, reading the body facts it needs into `summaries`: before
/// filtering, of the top-level sessions a name or activity filter (or sort) must see; after,
/// of every shown session when the request wants them.
fn filter(
    resolved: &Resolved,
    request: &ListRequest,
    prefetched: &mut Prefetched,
    listing: &mut Listing,
    summaries: &mut PathMap<SessionSummary>,
) {
    let query = &resolved.query;
    // What the pre-filter read got: every fact (a name filter streams the body), or only
    // the last activity (read from the end of each file).
    let mut is_complete = true;
    if query.needs_names() || query.needs_activity() {
        let facts = if query.needs_names() {
            Facts::Summary
        } else {
            is_complete = false;
            Facts::LastActivity
        };
        let mut paths = Vec::with_capacity(listing.sessions.len());
        for session in &listing.sessions {
            match &session.summary {
                // The facts the walk kept on the session hold its last activity.
                Some(summary) if facts == Facts::LastActivity => {
                    warn_if_activity_unknown(&session.path, summary, &mut listing.warnings);
                }
                _ => paths.push(session.path.as_str()),
            }
        }
        read_into(
            &paths,
            facts,
            resolved.walk.threads,
            resolved.cache.as_ref(),
            prefetched,
            summaries,
            &mut listing.warnings,
        );
    }
    if let Some(current) = &resolved.current {
        current.remove_from(&mut listing.sessions);
    }
    query.apply(listing, &|path| summaries.get(path));
    if request.read_summaries {
        // The facts the walk kept on a session are its ends read: all it needs (the common
        // case, with no lookup by path); the others are read, or taken from `prefetched`.
        let mut missing = Vec::new();
        let mut pending: Vec<&Session> = listing.sessions.iter().rev().collect();
        while let Some(session) = pending.pop() {
            match &session.summary {
                Some(summary) => {
                    warn_if_activity_unknown(&session.path, summary, &mut listing.warnings);
                }
                None if !is_complete || !summaries.contains_key(&session.path) => {
                    missing.push(session.path.as_str());
                }
                None => {}
            }
            pending.extend(session.subagent_sessions.iter().rev());
        }
        read_into(
            &missing,
            Facts::Ends,
            resolved.walk.threads,
            resolved.cache.as_ref(),
            prefetched,
            summaries,
            &mut listing.warnings,
        );
    }
}

/// Which body facts to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Facts {
    /// Name, first user message and last activity, the whole body streamed: what a name
    /// filter searches.
    Summary,
    /// The same facts read from the file's ends only ([`SummaryScope::Ends`]), bounded per
    /// file: what `--long` and `--jsonl` show.
    Ends,
    /// Only the last activity, read from the end of the file.
    LastActivity,
}

/// Collects `field` of every session at every level, depth first.
fn collect<'a>(sessions: &'a [Session], field: fn(&Session) -> &str, out: &mut Vec<&'a str>) {
    // An explicit work list, in the same order as recursion: runs nest thousands of levels
    // deep in a hostile store.
    let mut pending: Vec<&Session> = sessions.iter().rev().collect();
    while let Some(session) = pending.pop() {
        out.push(field(session));
        pending.extend(session.subagent_sessions.iter().rev());
    }
}

/// Reads `facts` of the sessions at `paths` into `summaries` (a file that cannot be read is a
/// warning), taking each from `prefetched` when the walk read it, else reading it now
/// (through `cache`, when there is one, for a name or what is shown).
fn read_into(
    paths: &[&str],
    facts: Facts,
    threads: usize,
    cache: Option<&SummaryCache>,
    prefetched: &mut Prefetched,
    summaries: &mut PathMap<SessionSummary>,
    warnings: &mut Vec<Warning>,
) {
    let mut unread = Vec::new();
    for path in paths {
        match prefetched.take(path, facts) {
            Some((path, Ok(summary))) => {
                warn_if_activity_unknown(&path, &summary, warnings);
                summaries.insert(path, summary);
            }
            Some((_, Err(warning))) => warnings.push(warning),
            None => unread.push(*path),
        }
    }
    if unread.is_empty() {
        return;
    }
    let read = pi_retrospect_walk::with_threads(threads, || match (facts, cache) {
        (Facts::Summary | Facts::Ends, Some(cache)) => read_cached(cache, &unread),
        (Facts::Summary, None) => read_summaries_in(&unread, SummaryScope::Whole),
        (Facts::Ends, None) => read_summaries_in(&unread, SummaryScope::Ends),
        (Facts::LastActivity, _) => read_last_activities(&unread),
    });
    for (path, result) in unread.into_iter().zip(read) {
        match result {
            Ok(summary) => {
                warn_if_activity_unknown(path, &summary, warnings);
                summaries.insert(path.to_owned(), summary);
            }
            Err(warning) => warnings.push(warning),
        }
    }
}

/// Adds a warning naming the file when its last activity could not be read within the line
/// cap (so the start counts): a listing never reports the start as the last activity
/// silently. A file read twice (an activity filter, then `--long`)
/// warns twice; the listing drops the copy.
fn warn_if_activity_unknown(path: &str, summary: &SessionSummary, warnings: &mut Vec<Warning>) {
    if let Some(reason) = &summary.last_activity_unknown {
        warnings.push(Warning::new(path, reason.clone()));
    }
}

/// What the walk reads of each body: a cache of the facts [`filter`] will ask for, read on
/// the descriptor the walk holds, so a listing with body facts opens each file once.
///
/// [`filter`] keeps its own rules (which sessions' facts it reads, and which warnings it
/// reports); it only takes a fact from [`Prefetched`] instead of opening the file again. So
/// the walk may read more than is asked for (a session a tree filter drops later), never
/// less than would be correct, and the plan only decides how much reading is wasted:
///
/// - a name or activity filter (or sort) reads every top-level session, so the walk reads
///   them all, whole when a name is needed, else only the end;
/// - `read_summaries` reads every shown session and run: the walk reads the trees whose
///   header the query may keep, unless the shown sessions are likely a small part of those
///   (a `--limit`, `--id`, `--with-subagents`), where reading after filtering costs less.
struct WalkReads<'a> {
    query: &'a ListFilter,
    /// The summary cache whole-body facts are read through, when there is one.
    cache: Option<&'a SummaryCache>,
    /// How far the reads for shown sessions reach, when the walk makes them.
    shown: Option<BodyReach>,
    /// What a filter reads of every top-level session.
    filtered: Option<Facts>,
}

impl<'a> WalkReads<'a> {
    /// Returns the reads for `request`, or `None` when it needs no body.
    fn new(
        request: &ListRequest,
        query: &'a ListFilter,
        cache: Option<&'a SummaryCache>,
    ) -> Option<WalkReads<'a>> {
        let filtered = if query.needs_names() {
            Some(Facts::Summary)
        } else if query.needs_activity() {
            Some(Facts::LastActivity)
        } else {
            None
        };
        let few_shown =
            query.limit.is_some() || !query.id_prefixes.is_empty() || query.with_subagents;
        let shown = (request.read_summaries && !few_shown).then_some(match query.max_depth {
            Some(0) => BodyReach::Session,
            _ => BodyReach::Tree,
        });
        (shown.is_some() || filtered.is_some()).then_some(WalkReads {
            query,
            cache,
            shown,
            filtered,
        })
    }
}

/// One body read by the walk: the facts, or the warning naming the file.
type BodyFacts = Result<SessionSummary, Warning>;
/// The body reads of one walk.
type Bodies = pi_retrospect_walk::Bodies<(Facts, BodyFacts)>;

impl BodyReader for WalkReads<'_> {
    type Kind = Facts;
    type Body = (Facts, BodyFacts);

    fn plan(&self, row: &SessionRow) -> Option<(BodyReach, Facts)> {
        if let Some(reach) = self.shown
            && self
                .query
                .may_keep_header(&row.header.cwd, row.header.instant)
        {
            // A name filter reads the whole body of the top-level session; the same read
            // then serves what is shown (one kind of read per tree).
            let facts = match self.filtered {
                Some(Facts::Summary) => Facts::Summary,
                _ => Facts::Ends,
            };
            return Some((reach, facts));
        }
        self.filtered.map(|facts| (BodyReach::Session, facts))
    }

    fn head_bytes(&self) -> usize {
        // The ends read starts from the file's first bytes, which the walk reads with the
        // header in one read: a small file then costs nothing more.
        if self.shown.is_some() && self.filtered != Some(Facts::Summary) {
            pi_retrospect_transcript::ENDS_WHOLE_BYTES
        } else {
            0
        }
    }

    fn read(
        &self,
        facts: Facts,
        path: &str,
        file: &std::fs::File,
        head: pi_retrospect_walk::Head<'_>,
    ) -> (Facts, BodyFacts) {
        let path_ref = std::path::Path::new(path);
        let result = match (facts, self.cache) {
            // A file the walk read whole with its header needs nothing more.
            (Facts::Ends, _) if head.is_whole => {
                pi_retrospect_transcript::read_ends_with_head(path_ref, file, head.bytes, true)
            }
            (Facts::Summary | Facts::Ends, Some(cache)) => cache.summary_of(path, file, head.bytes),
            (Facts::Summary, None) => pi_retrospect_transcript::read_summary_from(path_ref, file),
            (Facts::Ends, None) => pi_retrospect_transcript::read_ends_with_head(
                path_ref,
                file,
                head.bytes,
                head.is_whole,
            ),
            (Facts::LastActivity, _) => {
                pi_retrospect_transcript::read_last_activity_from(path_ref, file)
                    .map(pi_retrospect_transcript::LastActivity::into_summary)
            }
        };
        (
            facts,
            result.map_err(|error| Warning::new(path, error.to_string())),
        )
    }

    /// An ends read that succeeded is what `--long` and `--jsonl` show: it stays on its
    /// session. Every other read (a whole body for a name filter, a last activity alone, a
    /// failure and its warning) goes to [`Prefetched`] for [`filter`] to take by its rules.
    fn keep_on_session(&self, body: Self::Body) -> Result<SessionSummary, Self::Body> {
        match body {
            (Facts::Ends, Ok(summary)) => Ok(summary),
            body => Err(body),
        }
    }
}

/// The facts the walk read, by path.
#[derive(Default)]
struct Prefetched {
    by_path: PathMap<(Facts, BodyFacts)>,
}

impl Prefetched {
    fn from_bodies(bodies: Bodies) -> Prefetched {
        let mut by_path = PathMap::with_capacity_and_hasher(bodies.len(), Default::default());
        by_path.extend(bodies);
        Prefetched { by_path }
    }

    /// Returns the path and what reading `facts` of the session at `path` gives, when the
    /// walk read it: the same read (taken out: [`filter`] reads a fact of a path once, and
    /// a whole summary after only the last activity), or a whole summary's last activity
    /// (the same value, read the same way from the end of the file; the summary stays).
    ///
    /// The entry is taken out first, which is the common case's only lookup (each one
    /// reads a path from memory, and a listing makes tens of thousands).
    fn take(&mut self, path: &str, facts: Facts) -> Option<(String, BodyFacts)> {
        let (path, (read, result)) = self.by_path.remove_entry(path)?;
        match (read, facts, &result) {
            // What a whole read found serves for the ends too.
            (Facts::Summary, Facts::Ends, _) => Some((path, result)),
            (read, facts, _) if read == facts => Some((path, result)),
            (Facts::Summary | Facts::Ends, Facts::LastActivity, Ok(summary)) => {
                let last_activity = SessionSummary {
                    last_activity: summary.last_activity,
                    last_activity_unknown: summary.last_activity_unknown.clone(),
                    ..SessionSummary::default()
                };
                self.by_path.insert(path.clone(), (read, result));
                Some((path, Ok(last_activity)))
            }
            _ => {
                self.by_path.insert(path, (read, result));
                None
            }
        }
    }
}

/// Reads the summaries (name, first user message, last activity) of many session files in
/// parallel on the current pool, in the order given; a file that cannot be read is a warning
/// naming it.
pub fn read_summaries(paths: &[&str]) -> Vec<Result<SessionSummary, Warning>> {
    read_summaries_in(paths, SummaryScope::Whole)
}

/// Reads the whole-body facts (name, first user message, last activity) of many session
/// files, as [`read_summaries`] does, through the summary cache when the request may use it
/// (the picker's names and first messages): opened once, read in batches, then
/// [`SummaryReader::finish`] writes what was read back to the cache.
pub struct SummaryReader {
    cache: Option<SummaryCache>,
    notes: Vec<String>,
}

impl SummaryReader {
    /// Opens the summary cache for the stores `request` names (none when it says `no_cache`,
    /// `env` names no cache directory, or the stores cannot be resolved).
    pub fn open(request: &ListRequest, env: &Environment) -> SummaryReader {
        let opened = match resolve_stores(&request.stores, env) {
            Ok((stores, _)) if !request.no_cache => SummaryCache::open(env, &stores),
            _ => (None, Vec::new()),
        };
        SummaryReader {
            cache: opened.0,
            notes: opened.1,
        }
    }

    /// Reads the facts of the files at `paths` in parallel on the current pool, in the
    /// order given; a file that cannot be read is a warning naming it.
    pub fn read(&self, paths: &[&str]) -> Vec<Result<SessionSummary, Warning>> {
        match &self.cache {
            Some(cache) => read_cached(cache, paths),
            None => read_summaries(paths),
        }
    }

    /// Returns what the cache did so far, when there is one.
    pub fn cache_counts(&self) -> Option<CacheCounts> {
        self.cache.as_ref().map(SummaryCache::counts)
    }

    /// Writes what was read back to the cache; returns the notes for the person (a corrupt
    /// cache rebuilt, one that could not be written).
    pub fn finish(mut self) -> Vec<String> {
        if let Some(cache) = self.cache.take() {
            self.notes.extend(cache.save(None));
        }
        self.notes
    }
}

/// Reads the facts of the files at `paths` through `cache` in parallel on the current pool,
/// in the order given; the tasks stop reading with the caller (`with_threads` hands its stop
/// on).
fn read_cached(cache: &SummaryCache, paths: &[&str]) -> Vec<Result<SessionSummary, Warning>> {
    let stop = pi_retrospect_read::watched_stop();
    paths
        .par_iter()
        .map(|path| {
            pi_retrospect_read::reading_while(stop.clone(), || {
                cache
                    .summary_at(path)
                    .map_err(|error| Warning::new(*path, error.to_string()))
            })
        })
        .collect()
}

fn read_summaries_in(paths: &[&str], scope: SummaryScope) -> Vec<Result<SessionSummary, Warning>> {
    let stop = pi_retrospect_read::watched_stop();
    paths
        .par_iter()
        .map(|path| {
            pi_retrospect_read::reading_while(stop.clone(), || {
                pi_retrospect_transcript::read_summary_in(std::path::Path::new(path), scope)
                    .map_err(|error| Warning::new(*path, error.to_string()))
            })
        })
        .collect()
}

/// Reads only the last activity of many session files in parallel, as summaries that hold
/// nothing else.
pub(crate) fn read_last_activities(paths: &[&str]) -> Vec<Result<SessionSummary, Warning>> {
    let stop = pi_retrospect_read::watched_stop();
    paths
        .par_iter()
        .map(|path| {
            pi_retrospect_read::reading_while(stop.clone(), || {
                pi_retrospect_transcript::read_last_activity(std::path::Path::new(path))
                    .map(pi_retrospect_transcript::LastActivity::into_summary)
                    .map_err(|error| Warning::new(*path, error.to_string()))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_retrospect_core::order::SortKey;
    use pi_retrospect_testkit::{Entry, Header, write_session_file};

    /// Writes `n` sessions with names into a temp store and returns it.
    fn store(n: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        let project = dir.path().join("--w--");
        for index in 0..n {
            let header = Header::new(&format!("s{index:04}"))
                .timestamp(&format!("2026-01-01T00:00:{:02}Z", index % 60))
                .cwd("/w");
            let name = if index % 2 == 0 {
                "even one"
            } else {
                "odd one"
            };
            let info = Entry::session_info(name)
                .id("i")
                .parent(None)
                .at("2026-01-01T00:00:00Z");
            write_session_file(&project.join(format!("s{index:04}.jsonl")), &header, [info]);
        }
        dir
    }

    /// Streaming with a name filter on a small pool reads names on the workers and
    /// finishes (it once deadlocked: the writer waited on the pool while the pool waited on a
    /// full channel), with the same sessions as the ordered listing.
    #[test]
    fn unordered_with_names_finishes_and_agrees() {
        let dir = store(300);
        let request = ListRequest {
            stores: StoreFlags {
                sessions_root: Some(dir.path().to_owned()),
                ..StoreFlags::default()
            },
            name_contains: Some("even".to_owned()),
            threads: 2,
            ..ListRequest::default()
        };
        let env = Environment::default();
        let (done, finished) = std::sync::mpsc::channel();
        let streamed_request = request.clone();
        let streamed_env = env.clone();
        std::thread::spawn(move || {
            let mut paths = Vec::new();
            let result = list_unordered(&streamed_request, &streamed_env, &mut |part| {
                paths.extend(
                    part.listing
                        .sessions
                        .into_iter()
                        .map(|mut session| std::mem::take(&mut session.path)),
                );
                WalkState::Continue
            });
            let _ = done.send((result, paths));
        });
        let (result, mut streamed) = finished
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("list_unordered finished");
        result.expect("listed");
        streamed.sort();
        let ordered = list(&request, &env).expect("listed");
        let mut expected: Vec<String> = ordered
            .listing
            .sessions
            .into_iter()
            .map(|mut session| std::mem::take(&mut session.path))
            .collect();
        expected.sort();
        assert_eq!(streamed.len(), 150);
        assert_eq!(streamed, expected);
    }

    /// Returns the listing, facts and warnings of `request`, in a comparable form.
    fn outcome(
        request: &ListRequest,
    ) -> (Vec<String>, Vec<(String, SessionSummary)>, Vec<Warning>) {
        let result = list(request, &Environment::default()).expect("listed");
        let mut paths = Vec::new();
        collect(
            &result.listing.sessions,
            |session| &session.path,
            &mut paths,
        );
        let mut summaries: Vec<(String, SessionSummary)> = result.summaries.into_iter().collect();
        // The facts kept on the sessions themselves count as read too.
        let mut pending: Vec<&Session> = result.listing.sessions.iter().collect();
        while let Some(session) = pending.pop() {
            if let Some(summary) = &session.summary {
                summaries.push((session.path.clone(), SessionSummary::clone(summary)));
            }
            pending.extend(session.subagent_sessions.iter());
        }
        summaries.sort_by(|left, right| left.0.cmp(&right.0));
        (
            paths.into_iter().map(str::to_owned).collect(),
            summaries,
            result.listing.warnings,
        )
    }

    /// The facts the walk reads on its own descriptors are the facts read after
    /// it: for every request shape, reading in the walk (no limit) and after it (a limit
    /// that keeps everything) give the same rows, facts and warnings.
    #[test]
    fn facts_read_in_the_walk_equal_facts_read_after_it() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let dir = store(40);
        // A session whose first user message, names and last activity are all in its body.
        std::fs::write(
            dir.path().join("--w--/t.jsonl"),
            concat!(
                "{\"type\":\"session\",\"id\":\"t\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"cwd\":\"/w\"}\n",
                "{\"type\":\"session_info\",\"name\":\"early odd\"}\n",
                "{\"type\":\"message\",\"timestamp\":\"2026-01-03T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"hello\"}}\n",
                "{\"type\":\"session_info\",\"name\":\"even later\"}\n",
                "{\"type\":\"message\",\"timestamp\":\"2026-01-05T00:00:00Z\",\"message\":{\"role\":\"assistant\",\"content\":\"ok\"}}\n",
            ),
        )
        .expect("write");
        let roots = [
            fixtures.join("sessions"),
            fixtures.join("beyond/sessions"),
            dir.path().to_owned(),
        ];
        for root in roots {
            for (name, sort, max_depth, cwd) in [
                (None, SortKey::Timestamp, None, vec![]),
                (Some("even"), SortKey::Timestamp, None, vec![]),
                (None, SortKey::Activity, Some(0), vec![]),
                (
                    None,
                    SortKey::Activity,
                    None,
                    vec!["/home/user/app".to_owned()],
                ),
                (Some("o"), SortKey::Path, Some(1), vec!["/w".to_owned()]),
            ] {
                let request = ListRequest {
                    stores: StoreFlags {
                        sessions_root: Some(root.clone()),
                        ..StoreFlags::default()
                    },
                    name_contains: name.map(str::to_owned),
                    order: SortOrder::by(sort),
                    max_depth,
                    cwd,
                    read_summaries: true,
                    threads: 2,
                    ..ListRequest::default()
                };
                let after = ListRequest {
                    limit: Some(1_000_000),
                    ..request.clone()
                };
                assert_eq!(outcome(&request), outcome(&after), "{request:?}");
                // Without body facts asked for, only what a filter needs is read.
                let without_bodies = ListRequest {
                    read_summaries: false,
                    ..request
                };
                let (_, summaries, _) = outcome(&without_bodies);
                assert_eq!(
                    summaries.is_empty(),
                    name.is_none() && sort != SortKey::Activity
                );
            }
        }
        let named = ListRequest {
            stores: StoreFlags {
                sessions_root: Some(dir.path().to_owned()),
                ..StoreFlags::default()
            },
            name_contains: Some("later".to_owned()),
            read_summaries: true,
            ..ListRequest::default()
        };
        let (paths, summaries, _) = outcome(&named);
        assert_eq!(paths.len(), 1);
        assert_eq!(
            summaries.len(),
            41,
            "every top-level name was read for the filter"
        );
        let found = summaries
            .iter()
            .find(|(path, _)| path.ends_with("/t.jsonl"))
            .map(|(_, summary)| summary.clone());
        assert_eq!(
            found,
            Some(SessionSummary {
                name: Some("even later".to_owned()),
                first_user_message: Some("hello".to_owned()),
                last_activity: pi_retrospect_core::timestamp::parse("2026-01-05T00:00:00Z"),
                last_activity_unknown: None,
            })
        );
    }

    /// A front end that stops (a closed pipe) stops the walk.
    #[test]
    fn unordered_stops_when_asked() {
        let dir = store(200);
        let request = ListRequest {
            stores: StoreFlags {
                sessions_root: Some(dir.path().to_owned()),
                ..StoreFlags::default()
            },
            threads: 2,
            ..ListRequest::default()
        };
        let mut n_calls = 0;
        list_unordered(&request, &Environment::default(), &mut |_| {
            n_calls += 1;
            WalkState::Quit
        })
        .expect("listed");
        assert_eq!(n_calls, 1);
    }
}
