//! `list`: the sessions index of the resolved stores, filtered and sorted, with the body facts
//! (name, first user message) a front end asked for.

use std::collections::HashMap;

use pi_retrospect_core::filter::{CwdMatcher, Query, SortKey};
use pi_retrospect_core::{Listing, Session, SessionSummary, Warning};
use pi_retrospect_walk::{Store, WalkOptions, WalkState};
use rayon::prelude::*;

use crate::env::Environment;
use crate::error::AppError;
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
    /// Keep only sessions that launched subagent runs.
    pub with_subagents: bool,
    /// Show at most this many levels of runs.
    pub max_depth: Option<usize>,
    /// Leave out `$PI_SESSION_FILE` (the session running the request) with its tree.
    pub exclude_current: bool,
    /// Keep sessions whose id starts with one of these.
    pub id_prefixes: Vec<String>,
    /// Keep sessions whose name contains this, case-insensitively.
    pub name_contains: Option<String>,
    /// The top-level sort key.
    pub sort: SortKey,
    /// Reverse the top level.
    pub newest_first: bool,
    /// Keep at most this many top-level sessions after sorting (at least 1).
    pub limit: Option<i64>,
    /// Read the name and first user message of every shown session.
    pub read_summaries: bool,
    /// Compute the shortest id prefix width unique among every walked session.
    pub unique_id_width: bool,
    /// Worker threads; 0 means one per core.
    pub threads: usize,
}

/// What `list` found.
#[derive(Debug, Clone, Default)]
pub struct ListResult {
    /// The filtered, sorted listing with every warning (store warnings included), sorted.
    pub listing: Listing,
    /// Body facts by session path: of every shown session with `read_summaries`, else of the
    /// sessions a `name_contains` filter read.
    pub summaries: HashMap<String, SessionSummary>,
    /// With `unique_id_width`: the id width that keeps every prefix unique among all the
    /// sessions walked, not only the shown ones.
    pub id_width: Option<usize>,
}

impl ListRequest {
    /// Returns the filter, sort and limit this request asks for, resolved against `env`;
    /// fails on a bad value before any file is read.
    pub fn query(&self, env: &Environment) -> Result<Query, AppError> {
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
                    return Err(AppError::usage("--cwd and --cwd-prefix need a directory"));
                }
                cwds.push(CwdMatcher {
                    dir: env.absolute(value)?,
                    include_subdirectories,
                    include_worktrees: self.worktrees,
                });
            }
        }
        let (since, until) =
            crate::read::time_range(self.since.as_deref(), self.until.as_deref(), env)?;
        let limit = match self.limit {
            None => None,
            Some(limit) if limit >= 1 => Some(usize::try_from(limit).unwrap_or(usize::MAX)),
            Some(limit) => {
                return Err(AppError::usage(format!(
                    "--limit must be at least 1, not {limit}"
                )));
            }
        };
        let exclude_path = if self.exclude_current {
            env.session_file
                .as_deref()
                .map(|file| env.absolute(file))
                .transpose()?
        } else {
            None
        };
        Ok(Query {
            cwds,
            since,
            until,
            with_subagents: self.with_subagents,
            max_depth: self.max_depth,
            exclude_path,
            id_prefixes: self.id_prefixes.clone(),
            name_contains: self.name_contains.clone(),
            sort: self.sort,
            newest_first: self.newest_first,
            limit,
        })
    }
}

/// A request resolved before any session file is read.
struct Resolved {
    stores: Vec<Store>,
    store_warnings: Vec<Warning>,
    query: Query,
    walk: WalkOptions,
}

fn resolve(request: &ListRequest, env: &Environment) -> Result<Resolved, AppError> {
    // Everything the request alone can refuse is refused before a settings file is read.
    let query = request.query(env)?;
    let (stores, store_warnings) = resolve_stores(&request.stores, env)?;
    Ok(Resolved {
        stores,
        store_warnings,
        query,
        walk: WalkOptions {
            threads: request.threads,
        },
    })
}

/// Lists the sessions `request` asks for: walks the stores, reads the body facts a filter or
/// the request needs, filters, sorts and limits.
pub fn list(request: &ListRequest, env: &Environment) -> Result<ListResult, AppError> {
    let resolved = resolve(request, env)?;
    let mut listing = pi_retrospect_walk::list_stores(&resolved.stores, &resolved.walk)?;
    let id_width = request.unique_id_width.then(|| {
        let mut ids = Vec::new();
        collect(&listing.sessions, |session| &session.id, &mut ids);
        pi_retrospect_core::unique_prefix_len(ids.into_iter())
    });
    listing
        .warnings
        .extend(resolved.store_warnings.iter().cloned());
    let mut summaries = HashMap::new();
    filter(&resolved, request, &mut listing, &mut summaries);
    listing.warnings.sort();
    listing.warnings.dedup();
    Ok(ListResult {
        listing,
        summaries,
        id_width,
    })
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
    let resolved = resolve(request, env)?;
    // Each tree is filtered (and its names read) on the worker that read it, so the writer
    // never waits on the pool while the pool waits on the writer; the bounded channel keeps
    // memory bounded when the writer is slower than the walk.
    let (sender, receiver) = std::sync::mpsc::sync_channel::<ListResult>(64);
    let mut state = WalkState::Continue;
    let mut loose = std::thread::scope(|scope| {
        let resolved = &resolved;
        // The sender moves into the walker, so the receiver's loop ends when the walk does.
        let walker = scope.spawn(move || {
            pi_retrospect_walk::for_each_session(
                &resolved.stores,
                &resolved.walk,
                &|session, warnings| {
                    let mut listing = Listing {
                        sessions: session.into_iter().collect(),
                        warnings,
                    };
                    let mut summaries = HashMap::new();
                    filter(resolved, request, &mut listing, &mut summaries);
                    listing.warnings.sort();
                    let part = ListResult {
                        listing,
                        summaries,
                        id_width: None,
                    };
                    match sender.send(part) {
                        Ok(()) => WalkState::Continue,
                        // The receiver is gone: the front end stopped (a closed pipe).
                        Err(_) => WalkState::Quit,
                    }
                },
            )
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
    emit(ListResult {
        listing: Listing {
            sessions: Vec::new(),
            warnings: loose,
        },
        ..ListResult::default()
    });
    Ok(())
}

/// Applies the query to `listing`, reading the body facts it needs into `summaries`.
fn filter(
    resolved: &Resolved,
    request: &ListRequest,
    listing: &mut Listing,
    summaries: &mut HashMap<String, SessionSummary>,
) {
    if resolved.query.needs_names() {
        let paths: Vec<&str> = listing
            .sessions
            .iter()
            .map(|session| session.path.as_str())
            .collect();
        read_into(
            &paths,
            resolved.walk.threads,
            summaries,
            &mut listing.warnings,
        );
    }
    resolved.query.apply(listing, &|path| {
        summaries
            .get(path)
            .and_then(|summary| summary.name.as_deref())
    });
    if request.read_summaries {
        let mut all = Vec::new();
        collect(&listing.sessions, |session| &session.path, &mut all);
        let missing: Vec<&str> = all
            .into_iter()
            .filter(|path| !summaries.contains_key(*path))
            .collect();
        read_into(
            &missing,
            resolved.walk.threads,
            summaries,
            &mut listing.warnings,
        );
    }
}

/// Collects `field` of every session at every level, depth first.
fn collect<'a>(sessions: &'a [Session], field: fn(&Session) -> &str, out: &mut Vec<&'a str>) {
    for session in sessions {
        out.push(field(session));
        collect(&session.subagent_sessions, field, out);
    }
}

fn read_into(
    paths: &[&str],
    threads: usize,
    summaries: &mut HashMap<String, SessionSummary>,
    warnings: &mut Vec<Warning>,
) {
    let results = pi_retrospect_walk::with_threads(threads, || read_summaries(paths));
    for (path, result) in paths.iter().zip(results) {
        match result {
            Ok(summary) => {
                summaries.insert((*path).to_owned(), summary);
            }
            Err(warning) => warnings.push(warning),
        }
    }
}

/// Reads the summaries (name, first user message) of many session files in parallel on the
/// current pool, in the order given; a file that cannot be read is a warning naming it.
pub fn read_summaries(paths: &[&str]) -> Vec<Result<SessionSummary, Warning>> {
    paths
        .par_iter()
        .map(|path| {
            pi_retrospect_transcript::read_summary(std::path::Path::new(path))
                .map_err(|error| Warning::new(*path, error.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `n` sessions with names into a temp store and returns it.
    fn store(n: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        let project = dir.path().join("--w--");
        std::fs::create_dir(&project).expect("mkdir");
        for index in 0..n {
            let body = format!(
                "{{\"type\":\"session\",\"version\":3,\"id\":\"s{index:04}\",\"timestamp\":\"2026-01-01T00:00:{:02}Z\",\"cwd\":\"/w\"}}\n{{\"type\":\"session_info\",\"id\":\"i\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00Z\",\"name\":\"{}\"}}\n",
                index % 60,
                if index % 2 == 0 {
                    "even one"
                } else {
                    "odd one"
                }
            );
            std::fs::write(project.join(format!("s{index:04}.jsonl")), body).expect("write");
        }
        dir
    }

    /// Issue 8: streaming with a name filter on a small pool reads names on the workers and
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
                        .map(|session| session.path),
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
            .map(|session| session.path)
            .collect();
        expected.sort();
        assert_eq!(streamed.len(), 150);
        assert_eq!(streamed, expected);
    }

    /// Issue 8: a front end that stops (a closed pipe) stops the walk.
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
