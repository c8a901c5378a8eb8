//! `failures`: what failed in the sessions a listing selects (or one session), subagent runs
//! included, newest first, as plain rows a front end renders or pages by their sort key.

use pi_retrospect_failures::{
    FailureGroup, FailureKind, FailuresReport, GroupBy, ScanOptions, files_of, group,
};

use crate::env::Environment;
use crate::error::AppError;
use crate::list::{ListRequest, list};
use crate::read::{SessionTarget, time_range};
use crate::session_ref::resolve_session;
use crate::stats::tree_holding;

/// A `failures` request.
#[derive(Debug, Clone, Default)]
pub struct FailuresRequest {
    /// Which sessions: the stores and the `list` filters (a kept session keeps its runs).
    /// Its `since`/`until` must be unset: the time range applies to each failure's own
    /// timestamp (see `since`).
    pub sessions: ListRequest,
    /// Only this session (with its runs).
    pub session: Option<SessionTarget>,
    /// The kinds kept; empty keeps every kind.
    pub kinds: Vec<FailureKind>,
    /// Only failures at or after this bound (`parse_when` syntax).
    pub since: Option<String>,
    /// Only failures at or before this bound.
    pub until: Option<String>,
    /// Group the failures.
    pub group_by: Option<GroupBy>,
    /// Find runs of repeated calls (always found for `--by session`).
    pub repeats: bool,
    /// Only the count is wanted: no tree facts or titles are read.
    pub is_count_only: bool,
}

/// The result of [`failures`].
#[derive(Debug, Clone, Default)]
pub struct FailuresResult {
    /// The rows, newest first, with the warnings.
    pub report: FailuresReport,
    /// With `group_by`: the groups, largest first.
    pub groups: Option<Vec<FailureGroup>>,
}

/// Finds the failures `request` selects.
pub fn failures(request: &FailuresRequest, env: &Environment) -> Result<FailuresResult, AppError> {
    let (since, until) = time_range(request.since.as_deref(), request.until.as_deref(), env)?;
    let mut sessions = request.sessions.clone();
    sessions.since = None;
    sessions.until = None;
    let only = request
        .session
        .as_ref()
        .map(|target| resolve_session(&target.session, &target.stores, env))
        .transpose()?;
    let listing = match &only {
        Some(path) => {
            crate::read::check_session_file(path)?;
            let all = ListRequest {
                stores: sessions.stores.clone(),
                threads: sessions.threads,
                ..ListRequest::default()
            };
            let listing = list(&all, env)?.listing;
            let path = path.display().to_string();
            match tree_holding(listing.sessions, &path) {
                Some((tree, _)) => pi_retrospect_core::Listing {
                    sessions: vec![tree],
                    warnings: Vec::new(),
                },
                None => pi_retrospect_core::Listing::default(),
            }
        }
        None => {
            let listing = list(&sessions, env)?.listing;
            crate::list::fail_if_no_store_was_read(&listing)?;
            listing
        }
    };
    let mut files = files_of(&listing.sessions);
    if let Some(path) = &only {
        // The session and its runs: the sessions that launched it only give its depth.
        let path = path.display().to_string();
        let depth = files
            .iter()
            .find(|file| file.path == path)
            .map(|file| file.depth);
        let prefix = format!("{}/", path.strip_suffix(".jsonl").unwrap_or(&path));
        files.retain(|file| file.path == path || file.path.starts_with(&prefix));
        if depth.is_none() {
            files.push(pi_retrospect_failures::ScanFile {
                cwd: pi_retrospect_transcript::Transcript::open(std::path::Path::new(&path))
                    .ok()
                    .and_then(|transcript| transcript.header().and_then(|h| h.cwd.clone()))
                    .unwrap_or_default(),
                path,
                depth: 0,
                copied_before: None,
            });
        }
    }
    let options = ScanOptions {
        kinds: request.kinds.clone(),
        since,
        until,
        is_detailed: !request.is_count_only,
        find_repeats: request.repeats || request.group_by == Some(GroupBy::Session),
    };
    let mut report = pi_retrospect_walk::with_threads(request.sessions.threads, || {
        use rayon::prelude::*;
        let reports = files
            .par_iter()
            .map(|file| pi_retrospect_failures::scan_one(file, &options))
            .collect();
        pi_retrospect_failures::merge(reports)
    });
    report.warnings.extend(listing.warnings.iter().cloned());
    report.warnings.sort();
    report.warnings.dedup();
    let groups = request
        .group_by
        .map(|by| group(&report.failures, by, &report.repeats));
    Ok(FailuresResult { report, groups })
}
