//! `stats`: tokens and cost of the sessions a listing selects (or of one session), counted the
//! way Pi counts them, grouped as asked.

use pi_retrospect_core::stats::{GroupKey, StatsReport};
use pi_retrospect_core::{IdPrefixes, Listing, Session, SessionRow};
use pi_retrospect_stats::FileScan;
use pi_retrospect_stats::StatsOptions;
use pi_retrospect_walk::{BodyReach, BodyReader, Head, SessionFile};

use crate::env::Environment;
use crate::error::{AppError, Input};
use crate::list::{ListRequest, list_reading};
use crate::read::{SessionTarget, time_range};
use crate::session_ref::resolve_session;

/// A `stats` request.
#[derive(Debug, Clone, Default)]
pub struct StatsRequest {
    /// Which sessions: the stores and the `list` filters. Its `since`/`until` must be unset:
    /// the time range of `stats` applies to each record's own timestamp (see `since`).
    pub sessions: ListRequest,
    /// Only this session (with its runs), looked up in the same stores.
    pub session: Option<SessionTarget>,
    /// The groupings, in order (`--by day,model`); empty for the total alone.
    pub group_by: Vec<GroupKey>,
    /// The IANA time zone of days, weeks and months, and of dates and times without an offset
    /// in `since` and `until`; `None` for the environment's.
    pub time_zone: Option<String>,
    /// Count only records at or after this bound (`parse_when` syntax, read in `time_zone`).
    pub since: Option<String>,
    /// Count only records at or before this bound.
    pub until: Option<String>,
    /// Add each run into the session row that launched it: the runs' own rows are then left
    /// out (their calls are in their launcher's `withRuns`), so that the rows add up to the
    /// total. Needs the session key.
    pub rollup: bool,
}

/// The result of [`stats`]: the report, and the ids of every session the stores hold.
#[derive(Debug, Clone)]
pub struct StatsResult {
    /// The counts.
    pub report: StatsReport,
    /// Every session id a lookup by id would search (the stores walked, runs included): a
    /// session row's id is shown by a prefix unique among these, so it stays a handle
    /// whatever the filters kept.
    pub id_prefixes: IdPrefixes,
    /// Advice for the person who asked (a store named in the wrong layout reads as empty).
    pub notes: Vec<String>,
}

/// Counts the usage of the sessions `request` selects; subagent runs are counted once, on
/// their own rows, and forks' copied entries once in every aggregate.
pub fn stats(request: &StatsRequest, env: &Environment) -> Result<StatsResult, AppError> {
    if request.rollup && !request.group_by.contains(&GroupKey::Session) {
        return Err(AppError::bad_input(
            Input::Rollup,
            "adds each run into the session row that launched it, so it needs the session key among the groupings",
        ));
    }
    // One zone for the whole report: a date in `--since`/`--until` is the same day as the
    // period row that bears it.
    let (time_zone, zoned) = crate::read::zoned(request.time_zone.as_deref(), env)?;
    let (since, until) = time_range(request.since.as_deref(), request.until.as_deref(), &zoned)?;
    let only = request
        .session
        .as_ref()
        .map(|target| resolve_session(&target.session, &target.stores, env))
        .transpose()?;
    if let Some(path) = &only {
        // The same check and message as every reading command's (`not a session file: …`).
        crate::read::check_session_file(path)?;
    }
    let mut sessions = request.sessions.clone();
    sessions.since = None;
    sessions.until = None;
    if only.is_some() {
        // One session is looked up among all of them, whatever the filters say.
        sessions = ListRequest {
            stores: sessions.stores,
            threads: sessions.threads,
            ..ListRequest::default()
        };
    }
    sessions.unique_id_prefixes = true;
    let mut options = StatsOptions::new(time_zone);
    // A fork parent outside these directories is never opened.
    options.store_roots = crate::store::resolve_stores(&request.sessions.stores, env)
        .map(|(stores, _)| stores)
        .unwrap_or_default()
        .iter()
        .filter_map(|store| std::fs::canonicalize(&store.root).ok())
        .filter_map(|root| root.to_str().map(str::to_owned))
        .collect();
    options.group_by = request.group_by.clone();
    options.max_line_bytes = env.max_line_bytes;
    options.since = since.map(to_jiff).transpose()?;
    options.until = until.map(to_jiff).transpose()?;
    // Over the whole store each file is scanned on the walk's descriptor, right after its
    // header: opening every file a second time, by its full path, was a tenth of the time.
    // One session is read after the lookup (its tree is pruned first).
    let reads = only.is_none().then_some(StatsReads { options: &options });
    let (listed, prescans) = list_reading(&sessions, env, reads.as_ref())?;
    let mut listing = listed.listing;
    let id_prefixes = listed.id_prefixes.unwrap_or_default();
    let notes = listed.notes;
    if only.is_none() {
        // A session named by its path needs no store: when none can be read, the file is
        // counted on its own below.
        crate::list::fail_if_no_store_was_read(&listing)?;
    }
    let mut only_path = None;
    if let Some(path) = only {
        let path = path.display().to_string();
        let found = tree_holding(std::mem::take(&mut listing.sessions), &path);
        match found {
            // The session keeps its context: the sessions that launched it (not counted)
            // give its depth, its launcher and, for a run in `forks/`, its fork parent.
            Some((tree, _depth)) => listing.sessions = vec![tree],
            None => {
                // A file outside the stores (or with no store to read): counted with the runs
                // beside it, read like the walk reads a top-level session.
                listing = read_alone(&path)?;
            }
        }
        only_path = Some(path);
    }
    options.only = only_path;
    // A run picked by its id is counted alone: the filter keeps its launchers only as the
    // way to it.
    if options.only.is_none() {
        options.only_ids = request.sessions.id_prefixes.clone();
    }
    // The pool's thread watches the caller's stop (an MCP call answered early) as the
    // caller does, and hands it on to the scans.
    let stop = pi_retrospect_read::watched_stop();
    let mut report = pi_retrospect_walk::with_threads(request.sessions.threads, || {
        pi_retrospect_read::reading_while(stop, || {
            pi_retrospect_stats::stats_with_prescans(&listing, options, prescans)
        })
    });
    report.n_warnings = report
        .n_warnings
        .saturating_add(listing.warnings.len() as u64);
    report
        .warnings
        .extend(std::mem::take(&mut listing.warnings));
    // The listing's sessions are freed by a pool thread while the report is shown.
    let sessions = std::mem::take(&mut listing.sessions);
    rayon::spawn(move || drop(sessions));
    report.warnings.sort();
    report.warnings.dedup();
    if request.rollup {
        roll_up(&mut report.rows);
    }
    Ok(StatsResult {
        report,
        id_prefixes,
        notes,
    })
}

/// Leaves out the rows of runs whose launcher has rows: their figures are in the launcher's
/// `withRuns`, and listing them too would count their calls twice down the table.
fn roll_up(rows: &mut Vec<pi_retrospect_core::stats::StatsRow>) {
    let with_rows: std::collections::HashSet<String> = rows
        .iter()
        .filter_map(|row| row.session.as_ref().map(|session| session.path.clone()))
        .collect();
    rows.retain(|row| {
        row.session
            .as_ref()
            .and_then(|session| session.launched_by.as_ref())
            .is_none_or(|launcher| !with_rows.contains(launcher))
    });
}

/// The walk's body reader for a report over whole stores: every file of every tree is
/// scanned for `options` on the descriptor its header was read through.
struct StatsReads<'a> {
    options: &'a StatsOptions,
}

impl BodyReader for StatsReads<'_> {
    type Kind = ();
    type Body = Box<FileScan>;

    fn plan(&self, _row: &SessionRow) -> Option<(BodyReach, ())> {
        Some((BodyReach::Tree, ()))
    }

    fn head_bytes(&self) -> usize {
        pi_retrospect_stats::PRESCAN_HEAD_BYTES
    }

    fn read(&self, _kind: (), path: &str, file: &std::fs::File, head: Head<'_>) -> Box<FileScan> {
        pi_retrospect_stats::prescan(path, file, head.bytes, head.is_whole, self.options)
    }
}

fn to_jiff(instant: pi_retrospect_core::Timestamp) -> Result<jiff::Timestamp, AppError> {
    let nanos = i32::try_from(instant.nanos).unwrap_or(0);
    jiff::Timestamp::new(instant.seconds, nanos)
        .map_err(|error| AppError::usage(format!("{instant}: {error}")))
}

/// Returns the paths of the sessions whose id starts with one of `prefixes`, with every
/// session below them: what a `--id` filter picks, without the launchers it keeps as the way
/// to a matching run.
pub(crate) fn picked_by_id<'s>(
    sessions: &'s [Session],
    prefixes: &[String],
) -> std::collections::HashSet<&'s str> {
    let mut picked = std::collections::HashSet::new();
    let mut pending: Vec<(&Session, bool)> =
        sessions.iter().map(|session| (session, false)).collect();
    while let Some((session, is_below_match)) = pending.pop() {
        let is_picked = is_below_match
            || prefixes
                .iter()
                .any(|prefix| session.id.starts_with(prefix.as_str()));
        if is_picked {
            picked.insert(session.path.as_str());
        }
        pending.extend(session.subagent_sessions.iter().map(|run| (run, is_picked)));
    }
    picked
}

/// Returns the top-level session tree that holds the session at `path` (at any depth),
/// pruned to the chain of sessions that launched it, the session itself and its runs; and
/// the session's run depth (0 for a top-level session).
pub(crate) fn tree_holding(sessions: Vec<Session>, path: &str) -> Option<(Session, usize)> {
    for mut session in sessions {
        if session.path == path {
            return Some((session, 0));
        }
        let runs = std::mem::take(&mut session.subagent_sessions);
        if let Some((run, depth)) = tree_holding(runs, path) {
            session.subagent_sessions = vec![run];
            return Some((session, depth + 1));
        }
    }
    None
}

/// Reads the session file at `path` and the runs in its container, as the walk reads a
/// top-level session; a file whose header is invalid is an error, not a warning.
fn read_alone(path: &str) -> Result<Listing, AppError> {
    let (session, warnings) = pi_retrospect_walk::list_session_file(&SessionFile {
        path: path.to_owned(),
        has_container: true,
    })?;
    match session {
        Some(session) => Ok(Listing {
            sessions: vec![session],
            warnings,
        }),
        None => Err(AppError::io(warnings.first().map_or_else(
            || format!("{path}: not a session file"),
            |warning| format!("{}: not a session file: {}", warning.path, warning.reason),
        ))),
    }
}
