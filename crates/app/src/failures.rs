//! `failures`: what failed in the sessions a listing selects (or one session), subagent runs
//! included, newest first, as plain rows a front end renders or pages by their sort key.

use std::ops::ControlFlow;
use std::sync::Arc;

use pi_retrospect_failures::{
    FailureGroup, FailureKind, FailuresReport, GroupBy, Grouper, ScanFile, ScanOptions, files_of,
};
use pi_retrospect_search::Progress;

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
    /// Only failures written by this instant, or without a valid timestamp (a paged walk's
    /// snapshot: the failures written after its first page stay out of every page).
    pub as_of: Option<pi_retrospect_core::Timestamp>,
    /// Only session files created by this instant (a paged walk's snapshot: a fork, a copy
    /// or a restored session made after its first page carries older failures that `as_of`
    /// cannot tell apart). A file system that does not record creation keeps every file.
    pub created_by: Option<std::time::SystemTime>,
    /// Group the failures.
    pub group_by: Option<GroupBy>,
    /// The IANA time zone of `--by day` and of dates and times without an offset in `since`
    /// and `until`; `None` for the environment's (as `stats` reads them).
    pub time_zone: Option<String>,
    /// Find runs of repeated calls (always found for `--by session`).
    pub repeats: bool,
    /// Only the count is wanted: no rows are kept and no tree facts or titles are read.
    pub is_count_only: bool,
    /// Set by another thread to stop the scan (a time budget, a cancelled call): no file is
    /// started after it is set, and the call fails saying so.
    pub interrupt: Option<Arc<Progress>>,
}

/// The result of [`failures`].
#[derive(Debug, Clone, Default)]
pub struct FailuresResult {
    /// The rows, newest first, with the warnings; without rows (only `n_failures`) when
    /// grouped or counted, which keep aggregates instead of every row.
    pub report: FailuresReport,
    /// With `group_by`: the groups, largest first.
    pub groups: Option<Vec<FailureGroup>>,
}

/// The files a request reads, with the listing's warnings and the time bounds.
struct Plan {
    files: Vec<ScanFile>,
    zone: jiff::tz::TimeZone,
    listing_warnings: Vec<pi_retrospect_core::Warning>,
    since: Option<pi_retrospect_core::Timestamp>,
    until: Option<pi_retrospect_core::Timestamp>,
}

/// Files scanned at once by [`failures_streamed`]: enough to keep every core busy, few
/// enough that their rows are a small part of what a store holds.
const FILES_PER_BATCH: usize = 256;

/// Finds the failures `request` selects and hands them to `each` as they are found, one
/// report per session file (its warnings, its failures newest first, its repeated calls),
/// the files in the listing's order: top-level sessions oldest first, each followed by its
/// subagent runs in launch order. `each` returns `Break` to stop. Returns the totals
/// (counts and the listing's warnings; no rows). Holds the rows of a few hundred files at
/// a time, never the store's; `group_by` and `is_count_only` are not used.
pub fn failures_streamed(
    request: &FailuresRequest,
    env: &Environment,
    each: &mut dyn FnMut(FailuresReport) -> ControlFlow<()>,
) -> Result<FailuresReport, AppError> {
    let plan = plan(request, env)?;
    let options = ScanOptions {
        kinds: request.kinds.clone(),
        since: plan.since,
        until: plan.until,
        as_of: request.as_of,
        is_detailed: true,
        find_repeats: request.repeats,
    };
    let mut totals = FailuresReport::default();
    for batch in plan.files.chunks(FILES_PER_BATCH) {
        if request
            .interrupt
            .as_ref()
            .is_some_and(|progress| progress.is_interrupted())
        {
            return Err(AppError::io(format!(
                "stopped before every session was read ({} of {} files): the call was interrupted",
                totals.n_files,
                plan.files.len()
            )));
        }
        // A file with more failures than a batch holds is read again on its own, its rows
        // built from their lines a part at a time.
        let reports: Vec<Option<FailuresReport>> =
            pi_retrospect_walk::with_threads(request.sessions.threads, || {
                use rayon::prelude::*;
                batch
                    .par_iter()
                    .map(|file| {
                        watching(request, || {
                            pi_retrospect_failures::scan_one_held(
                                file,
                                &options,
                                pi_retrospect_failures::MAX_HELD_ROWS,
                            )
                        })
                    })
                    .collect()
            });
        for (file, report) in batch.iter().zip(reports) {
            let mut deliver = |mut report: FailuresReport| {
                totals.n_failures += report.n_failures;
                totals.n_files += report.n_files;
                totals.n_files_decoded += report.n_files_decoded;
                report.sort();
                each(report)
            };
            let flow = match report {
                Some(report) => deliver(report),
                None => watching(request, || {
                    pi_retrospect_failures::scan_one_streamed(file, &options, &mut deliver)
                }),
            };
            if flow.is_break() {
                return Ok(totals);
            }
        }
    }
    totals.warnings = plan.listing_warnings;
    totals.warnings.sort();
    totals.warnings.dedup();
    Ok(totals)
}

/// Finds the failures `request` selects.
pub fn failures(request: &FailuresRequest, env: &Environment) -> Result<FailuresResult, AppError> {
    scan(request, plan(request, env)?)
}

/// Returns the files `request` selects, in the listing's order.
fn plan(request: &FailuresRequest, env: &Environment) -> Result<Plan, AppError> {
    let (zone, zoned) = crate::read::zoned(request.time_zone.as_deref(), env)?;
    let (since, until) = time_range(request.since.as_deref(), request.until.as_deref(), &zoned)?;
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
            let listed = list(&sessions, env)?;
            let mut listing = listed.listing;
            crate::list::fail_if_no_store_was_read(&listing)?;
            // A store named in the wrong layout reads as empty: say which flag reads it.
            if listing.sessions.is_empty() {
                listing
                    .warnings
                    .extend(listed.notes.into_iter().map(|note| {
                        // A hint starts with the directory it is about: that is the warning's path.
                        match note.split_once(' ') {
                            Some((path, reason)) if path.starts_with('/') => {
                                pi_retrospect_core::Warning::new(path, reason)
                            }
                            _ => pi_retrospect_core::Warning::new("", note),
                        }
                    }));
            }
            listing
        }
    };
    let mut files = files_of(&listing.sessions);
    if let Some(created_by) = request.created_by {
        files.retain(|file| {
            match std::fs::symlink_metadata(&*file.path).and_then(|metadata| metadata.created()) {
                Ok(created) => created <= created_by,
                Err(_) => true,
            }
        });
    }
    if only.is_none() && !sessions.id_prefixes.is_empty() {
        // A run picked by its id is read alone: the filter keeps its launchers only as the
        // way to it.
        let picked = crate::stats::picked_by_id(&listing.sessions, &sessions.id_prefixes);
        files.retain(|file| picked.contains(&*file.path));
    }
    if let Some(path) = &only {
        // The session and its runs: the sessions that launched it only give its depth.
        let path = path.display().to_string();
        let depth = files
            .iter()
            .find(|file| *file.path == *path)
            .map(|file| file.depth);
        let prefix = format!("{}/", path.strip_suffix(".jsonl").unwrap_or(&path));
        files.retain(|file| *file.path == *path || file.path.starts_with(&prefix));
        if depth.is_none() {
            files.push(pi_retrospect_failures::ScanFile {
                cwd: pi_retrospect_transcript::Transcript::open(std::path::Path::new(&path))
                    .ok()
                    .and_then(|transcript| transcript.header().and_then(|h| h.cwd.clone()))
                    .unwrap_or_default()
                    .into(),
                path: path.into(),
                depth: 0,
                copied_before: None,
            });
        }
    }
    Ok(Plan {
        files,
        zone,
        listing_warnings: listing.warnings,
        since,
        until,
    })
}

fn scan(
    request: &FailuresRequest,
    Plan {
        files,
        zone,
        listing_warnings,
        since,
        until,
    }: Plan,
) -> Result<FailuresResult, AppError> {
    // Grouped and counted scans keep per-group aggregates, never every row: a store with
    // tens of thousands of failures would otherwise hold them all to print a few lines.
    let is_keeping_rows = request.group_by.is_none() && !request.is_count_only;
    let options = ScanOptions {
        kinds: request.kinds.clone(),
        since,
        until,
        as_of: request.as_of,
        // Rows kept get their tree facts and titles; repeats their titles (a folded scan
        // reads no tree for them).
        is_detailed: is_keeping_rows || request.repeats,
        find_repeats: request.repeats || request.group_by == Some(GroupBy::Session),
    };
    let is_interrupted = || {
        request
            .interrupt
            .as_ref()
            .is_some_and(|progress| progress.is_interrupted())
    };
    let (mut report, grouper) = pi_retrospect_walk::with_threads(request.sessions.threads, || {
        use rayon::prelude::*;
        let empty = || {
            (
                FailuresReport::default(),
                request
                    .group_by
                    .map(|by| Grouper::in_zone(by, zone.clone())),
            )
        };
        files
            .par_iter()
            .fold(empty, |(mut report, mut grouper), file| {
                if is_interrupted() {
                    return (report, grouper);
                }
                // Grouped and counted, each failure is folded in as its line is read.
                let one = watching(request, || {
                    if is_keeping_rows {
                        pi_retrospect_failures::scan_one(file, &options)
                    } else {
                        pi_retrospect_failures::scan_one_folded(file, &options, grouper.as_mut())
                    }
                });
                report.absorb(one);
                (report, grouper)
            })
            .reduce(
                empty,
                |(mut report, mut grouper), (other, other_grouper)| {
                    report.absorb(other);
                    if let (Some(grouper), Some(other)) = (grouper.as_mut(), other_grouper) {
                        grouper.merge(other);
                    }
                    (report, grouper)
                },
            )
    });
    if is_interrupted() {
        return Err(AppError::io(format!(
            "stopped before every session was read ({} of {} files): the call was interrupted",
            report.n_files,
            files.len()
        )));
    }
    report.sort();
    report.warnings.extend(listing_warnings);
    report.warnings.sort();
    report.warnings.dedup();
    let groups = grouper.map(|grouper| grouper.finish(&report.repeats));
    Ok(FailuresResult { report, groups })
}

/// Runs `scan` so that the request's interrupt stops its reads (a scan of one big file ends
/// at its next read, not at the file's end); without one, as it is.
fn watching<R>(request: &FailuresRequest, scan: impl FnOnce() -> R) -> R {
    match &request.interrupt {
        Some(interrupt) => crate::until_interrupted(interrupt, scan),
        None => scan(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreFlags;

    fn request() -> FailuresRequest {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/pi-real/sessions");
        FailuresRequest {
            sessions: ListRequest {
                stores: StoreFlags {
                    sessions_root: Some(root),
                    ..StoreFlags::default()
                },
                ..ListRequest::default()
            },
            ..FailuresRequest::default()
        }
    }

    #[test]
    fn an_interrupted_scan_fails_saying_so_and_streaming_finds_what_the_scan_finds() {
        let env = Environment::default();
        let whole = failures(&request(), &env).expect("failures");
        assert!(whole.report.n_failures > 0);
        assert_eq!(whole.report.n_failures, whole.report.failures.len() as u64);
        let progress = Arc::new(Progress::default());
        progress.interrupt();
        let interrupted = FailuresRequest {
            interrupt: Some(Arc::clone(&progress)),
            ..request()
        };
        let error = failures(&interrupted, &env).map(|_| ());
        assert!(
            matches!(&error, Err(error) if error.message.contains("interrupted")),
            "{error:?}"
        );
        let error = failures_streamed(&interrupted, &env, &mut |_| ControlFlow::Continue(()));
        assert!(matches!(&error, Err(error) if error.message.contains("interrupted")));
        let mut streamed = Vec::new();
        let totals = failures_streamed(&request(), &env, &mut |report| {
            streamed.extend(report.failures);
            ControlFlow::Continue(())
        })
        .expect("streamed");
        assert_eq!(totals.n_failures, whole.report.n_failures);
        streamed.sort_by(|left, right| left.sort_key().cmp(&right.sort_key()));
        assert_eq!(streamed, whole.report.failures);
        // Grouped and counted, no rows are kept and the count is the same.
        for grouped in [
            FailuresRequest {
                group_by: Some(GroupBy::Signature),
                ..request()
            },
            FailuresRequest {
                is_count_only: true,
                ..request()
            },
        ] {
            let result = failures(&grouped, &env).expect("failures");
            assert!(result.report.failures.is_empty());
            assert_eq!(result.report.n_failures, whole.report.n_failures);
        }
    }
}
