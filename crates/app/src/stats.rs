//! `stats`: tokens and cost of the sessions a listing selects (or of one session), counted the
//! way Pi counts them, grouped as asked.

use pi_retrospect_core::stats::{GroupKey, StatsReport};
use pi_retrospect_core::{Listing, Session, SessionRow};
use pi_retrospect_stats::StatsOptions;

use crate::env::Environment;
use crate::error::AppError;
use crate::list::{ListRequest, list};
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
    /// The IANA time zone of days, weeks and months; `None` for the environment's.
    pub time_zone: Option<String>,
    /// Count only records at or after this bound (`parse_when` syntax).
    pub since: Option<String>,
    /// Count only records at or before this bound.
    pub until: Option<String>,
}

/// Counts the usage of the sessions `request` selects; subagent runs are counted once, on
/// their own rows, and forks' copied entries once in every aggregate.
pub fn stats(request: &StatsRequest, env: &Environment) -> Result<StatsReport, AppError> {
    let (since, until) = time_range(request.since.as_deref(), request.until.as_deref(), env)?;
    let time_zone = match &request.time_zone {
        None => env.time_zone.clone(),
        Some(name) => jiff::tz::TimeZone::get(name)
            .map_err(|error| AppError::usage(format!("--timezone {name:?}: {error}")))?,
    };
    let only = request
        .session
        .as_ref()
        .map(|target| resolve_session(&target.session, &target.stores, env))
        .transpose()?;
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
    let mut listing = list(&sessions, env)?.listing;
    if let Some(path) = only {
        let path = path.display().to_string();
        let found = take_tree(std::mem::take(&mut listing.sessions), &path);
        match found {
            Some(session) => listing.sessions = vec![session],
            None => {
                // A file outside the stores: counted alone, its header read like the walk's.
                listing = Listing {
                    sessions: vec![read_alone(&path)?],
                    warnings: Vec::new(),
                };
            }
        }
    }
    let mut options = StatsOptions::new(time_zone);
    options.group_by = request.group_by.clone();
    options.since = since.map(to_jiff).transpose()?;
    options.until = until.map(to_jiff).transpose()?;
    let mut report = pi_retrospect_walk::with_threads(request.sessions.threads, || {
        pi_retrospect_stats::stats(&listing, options)
    });
    report.warnings.extend(listing.warnings);
    report.warnings.sort();
    report.warnings.dedup();
    Ok(report)
}

fn to_jiff(instant: pi_retrospect_core::Timestamp) -> Result<jiff::Timestamp, AppError> {
    let nanos = i32::try_from(instant.nanos).unwrap_or(0);
    jiff::Timestamp::new(instant.seconds, nanos)
        .map_err(|error| AppError::usage(format!("{instant}: {error}")))
}

/// Returns the session (with its runs) whose path is `path`, at any depth.
fn take_tree(sessions: Vec<Session>, path: &str) -> Option<Session> {
    for mut session in sessions {
        if session.path == path {
            return Some(session);
        }
        if let Some(found) = take_tree(std::mem::take(&mut session.subagent_sessions), path) {
            return Some(found);
        }
    }
    None
}

fn read_alone(path: &str) -> Result<Session, AppError> {
    let fields = pi_retrospect_header::read_header(std::path::Path::new(path))
        .map_err(|error| AppError::io(format!("{path}: {error}")))?;
    Ok(Session::from_row(SessionRow {
        path: path.to_owned(),
        header: fields,
    }))
}
