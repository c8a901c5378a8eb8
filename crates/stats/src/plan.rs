//! A report over a listing in three steps: [`StatsPlan::new`] decides which files to read and
//! what to keep of each (forks and their parents), [`StatsPlan::scan`] reads one file (on any
//! thread, in any order), and [`StatsPlan::finish`] deduplicates forks, rolls runs up into the
//! sessions that launched them and groups the rows.

use std::borrow::{Borrow, Cow};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::OnceLock;

use jiff::civil::Date;
use pi_retrospect_core::path::normalize_absolute;
use pi_retrospect_core::stats::{
    Figures, GroupKey, MAX_REPORT_WARNINGS, RowSession, SessionFacts, StatsReport, StatsRow, Usage,
};
use pi_retrospect_core::{Listing, Session, Warning};

use crate::options::StatsOptions;
use crate::scan::{FileScan, PathSet, ScanRequest, adds_nothing, missing_runs_reason, scan_file};

/// Which files a report reads and how they relate. A report is made in three steps:
/// [`StatsPlan::new`] decides which files to read and what to keep of each (forks and their
/// parents), [`StatsPlan::scan`] reads one file (on any thread, in any order), and
/// [`StatsPlan::finish`] deduplicates forks, rolls runs up into the sessions that launched
/// them and groups the rows. It borrows the listing it was planned over.
#[derive(Debug, Clone)]
pub struct StatsPlan<'l> {
    options: StatsOptions,
    /// Every session of the listing, depth first: each session, then its runs in order.
    sessions: Vec<PlannedSession<'l>>,
    /// Files to read: `files[idx]` is `sessions[idx]` for every session, then the fork parents
    /// that are not in the listing (read only for their entries' identities).
    files: Vec<PlannedFile<'l>>,
    /// The path of every session of the listing.
    listed: OnceLock<PathSet<'l>>,
}

#[derive(Debug, Clone)]
struct PlannedSession<'l> {
    session: &'l Session,
    /// The cwd of the top-level session this file belongs to.
    project: &'l str,
    depth: usize,
    /// The session whose run this is (index into `sessions`).
    launcher: Option<usize>,
    /// The fork parent, when the file is a fork.
    fork_parent: Option<ForkParent>,
}

/// Where a fork's parent is read.
#[derive(Debug, Clone)]
struct ForkParent {
    /// The parent's normalised path.
    path: String,
    /// The parent's index in `files`; `None` when the path is not a session file in the
    /// stores, which is then never opened.
    file: Option<usize>,
    /// A listed session with the same file name, used when `path` cannot be read: a store
    /// that was moved or copied keeps its file names (`<timestamp>_<uuid>.jsonl`) but not the
    /// absolute paths its headers name.
    by_name: Option<usize>,
    /// When the parent is not listed: the listed sessions in the fork's directory that are
    /// older than it (header instant, then path). A record one of them holds is a copy, also
    /// when the parent that passed it on is gone.
    older_beside: Vec<usize>,
}

#[derive(Debug, Clone)]
struct PlannedFile<'l> {
    path: Cow<'l, str>,
    /// The header's instant, for a file the listing holds (its header is validated there).
    listed_instant: Option<pi_retrospect_core::Timestamp>,
    is_counted: bool,
    keeps_records: bool,
    keeps_keys: bool,
}

/// A cell of a report without sessions, before it is labelled: the grouped dimensions'
/// values (`None` for one not grouped by, and for a record without a timestamp).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct CellKey<'a> {
    project: Option<&'a str>,
    model: Option<&'a str>,
    period: Option<Date>,
}

/// One session's figures for one row key.
#[derive(Debug, Clone, Copy, Default)]
struct SessionFigures {
    pi: Usage,
    own: Usage,
    with_runs: Usage,
}

/// One dimension's value in a row key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum KeyPart {
    /// A session, ordered as in the listing.
    Session(usize),
    /// Any other value, ordered as text (periods are ISO dates, so chronologically).
    Text(String),
}

impl<'l> StatsPlan<'l> {
    /// Plans a report over every session of `listing` (runs included; a listing pruned by a
    /// depth limit leaves the pruned runs out).
    ///
    /// A session is a fork when its header names a `parentSession`, or when it is a run in a
    /// `forks/` directory (pi-subagents' fork context), whose parent is then the session that
    /// launched it. A fork's parent is read too, for the identities of its entries, also when
    /// the listing does not hold it.
    pub fn new(listing: &'l Listing, options: StatsOptions) -> StatsPlan<'l> {
        let mut sessions = Vec::new();
        for session in &listing.sessions {
            flatten(session, &session.cwd, 0, None, &mut sessions);
        }
        let selected = selected_sessions(&sessions, options.only.as_deref(), &options.only_ids);
        // The listed paths, for matching the runs a tool result names: built by the first file read here (a prescan needs none): the usual report reads
        // every file during the walk and never pays for it.
        let listed = OnceLock::new();
        let mut files: Vec<PlannedFile<'l>> = sessions
            .iter()
            .zip(&selected)
            .map(|(planned, &is_selected)| PlannedFile {
                path: Cow::Borrowed(planned.session.path.as_str()),
                listed_instant: Some(planned.session.instant),
                is_counted: is_selected,
                keeps_records: false,
                keeps_keys: false,
            })
            .collect();
        let forks: Vec<(usize, String)> = sessions
            .iter()
            .enumerate()
            .filter(|(idx, _)| selected[*idx])
            .filter_map(|(idx, planned)| {
                let parent = match &planned.session.parent_session_path {
                    Some(parent) if parent.starts_with('/') => normalize_absolute(parent),
                    // A relative parent names no file we could find; the file is then counted
                    // whole, with the warning `finish` gives for a missing parent.
                    Some(parent) => parent.clone(),
                    None if is_fork_context_run(planned) => {
                        sessions[planned.launcher?].session.path.clone()
                    }
                    None => return None,
                };
                (parent != planned.session.path).then_some((idx, parent))
            })
            .collect();
        let mut forks = forks;
        let copies = copies_of_sessions(&sessions, &selected);
        if !copies.is_empty() {
            let is_copy: HashSet<usize> = copies.iter().map(|(copy, _)| *copy).collect();
            forks.retain(|(idx, _)| !is_copy.contains(idx));
            forks.extend(
                copies
                    .iter()
                    .map(|&(copy, original)| (copy, sessions[original].session.path.clone())),
            );
        }
        if forks.is_empty() {
            return StatsPlan {
                options,
                sessions,
                files,
                listed,
            };
        }

        let listed_idx: HashMap<&str, usize> = sessions
            .iter()
            .enumerate()
            .map(|(idx, planned)| (planned.session.path.as_str(), idx))
            .collect();
        let mut by_name: HashMap<&str, Option<usize>> = HashMap::new();
        for (idx, planned) in sessions.iter().enumerate() {
            by_name
                .entry(file_name(&planned.session.path))
                .and_modify(|unique| *unique = None)
                .or_insert(Some(idx));
        }
        let mut unlisted: HashMap<String, usize> = HashMap::new();
        let mut by_directory = None;
        let mut fork_parents = Vec::with_capacity(forks.len());
        for (idx, parent) in forks {
            let (file, named) = match listed_idx.get(parent.as_str()) {
                Some(file) => (Some(*file), None),
                None => {
                    let named = by_name
                        .get(file_name(&parent))
                        .copied()
                        .flatten()
                        .filter(|named| *named != idx);
                    let file = is_in_stores(&parent, &options.store_roots).then(|| {
                        *unlisted.entry(parent.clone()).or_insert_with(|| {
                            files.push(PlannedFile {
                                path: Cow::Owned(parent.clone()),
                                listed_instant: None,
                                is_counted: false,
                                keeps_records: false,
                                keeps_keys: false,
                            });
                            files.len() - 1
                        })
                    });
                    (file, named)
                }
            };
            if let Some(named) = named {
                files[named].keeps_keys = true;
            }
            if let Some(file) = file {
                files[file].keeps_keys = true;
            }
            // A parent that is not listed is usually gone (deleted, or a fork in a chain whose
            // middle was deleted): the older sessions beside the fork are where the entries it
            // copied may still be, and their identities are kept.
            let older_beside = if listed_idx.contains_key(parent.as_str()) {
                Vec::new()
            } else {
                let beside = by_directory.get_or_insert_with(|| sessions_by_directory(&sessions));
                let own = (
                    sessions[idx].session.instant,
                    sessions[idx].session.path.as_str(),
                );
                beside
                    .get(directory(&sessions[idx].session.path))
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|&other| {
                        let other = &sessions[other].session;
                        (other.instant, other.path.as_str()) < own
                    })
                    .collect()
            };
            for &other in &older_beside {
                files[other].keeps_keys = true;
            }
            files[idx].keeps_records = true;
            fork_parents.push((
                idx,
                ForkParent {
                    path: parent,
                    file,
                    by_name: named,
                    older_beside,
                },
            ));
        }
        for (idx, fork_parent) in fork_parents {
            sessions[idx].fork_parent = Some(fork_parent);
        }
        StatsPlan {
            options,
            sessions,
            files,
            listed,
        }
    }

    /// Returns how many files [`StatsPlan::scan`] reads (indices `0..n_files()`).
    pub fn n_files(&self) -> usize {
        self.files.len()
    }

    /// Returns the path of file `idx`.
    pub fn path(&self, idx: usize) -> &str {
        &self.files[idx].path
    }

    /// Returns `prescan` (see [`crate::prescan`]) as the scan of file `idx` when it is what
    /// [`StatsPlan::scan`] would read: a listed session, counted whole, that is neither a fork
    /// nor a fork's parent and whose tool results name no subagent run. `None`: scan it.
    pub fn use_prescan(&self, idx: usize, mut prescan: Box<FileScan>) -> Option<Box<FileScan>> {
        let file = &self.files[idx];
        let is_plain = file.is_counted && !file.keeps_records && !file.keeps_keys;
        if !is_plain || file.listed_instant.is_none() || prescan.names_runs {
            return None;
        }
        if prescan.instant.is_some() {
            prescan.instant = file.listed_instant;
        }
        Some(prescan)
    }

    /// Reads file `idx` once and returns what it contributes. Safe to call from any thread,
    /// in any order; each index once.
    pub fn scan(&self, idx: usize) -> FileScan {
        let file = &self.files[idx];
        if !(file.is_counted || file.keeps_keys || file.keeps_records) {
            // Context for `StatsOptions::only` that no fork needs: nothing to read.
            return FileScan::default();
        }
        let request = ScanRequest {
            options: &self.options,
            is_counted: file.is_counted,
            keeps_records: file.keeps_records,
            keeps_keys: file.keeps_keys,
            listed_instant: file.listed_instant,
            listed: self.listed.get_or_init(|| listed_paths(&self.sessions)),
            wants_facts: file.is_counted
                && file.listed_instant.is_some()
                && self.options.group_by.contains(&GroupKey::Session),
        };
        scan_file(&file.path, &request)
    }

    /// Builds the report from `scans[idx]`, the result of `scan(idx)` for every file (owned
    /// or boxed).
    ///
    /// Every record is counted once: a fork's records that its parent holds too (same `id` and
    /// `timestamp`) are left out of its `own` figure and of every aggregate. Only a parent that
    /// is older than the fork (header instant, then path) is used, so a loop of parents cannot
    /// leave a record uncounted. A parent that cannot be read leaves the fork counted whole,
    /// with a warning.
    ///
    /// # Panics
    ///
    /// When `scans` does not hold one scan per file.
    pub fn finish<S: Borrow<FileScan>>(&self, scans: &[S]) -> StatsReport {
        let scans: Vec<&FileScan> = scans.iter().map(Borrow::borrow).collect();
        self.finish_scans(&scans)
    }

    fn finish_scans<'s>(&self, scans: &[&'s FileScan]) -> StatsReport {
        assert_eq!(scans.len(), self.files.len(), "one scan per planned file");
        let group_by = &self.options.group_by;
        let session_position = group_by.iter().position(|key| *key == GroupKey::Session);
        let mut warnings = Vec::new();
        let mut fork_of: Vec<Option<String>> = vec![None; self.sessions.len()];
        let mut per_session: Vec<BTreeMap<Vec<KeyPart>, SessionFigures>> =
            vec![BTreeMap::new(); self.sessions.len()];
        // Without sessions, cells are summed under a key that borrows its parts and labelled
        // once per distinct key at the end: one label per record cost a tenth of the report.
        let mut cells: HashMap<CellKey<'_>, Usage, foldhash::fast::RandomState> =
            HashMap::default();
        let mut is_counted = vec![false; self.sessions.len()];
        let mut total = Usage::default();
        let mut n_warnings: u64 = 0;
        let mut is_saturated = None;
        // The records already counted in a fork whose parent cannot be used. Pi copies an
        // entry into a fork with its `id` and `timestamp`, so forks that hold the same entry
        // hold copies of one call, whichever parent path their headers name: it counts once.
        let mut copied_without_parent: HashSet<&str> = HashSet::new();
        // Each session's runs (indices into `sessions`), worked out when a file needs them.
        let mut children: Option<Vec<Vec<usize>>> = None;
        // A run whose file is missing is counted under the model pi-subagents recorded, which
        // may lack the provider that every call in a file names: `m` is `p/m` when that is
        // the only model of that name.
        let aliases = if group_by.contains(&GroupKey::Model) {
            model_aliases(scans)
        } else {
            HashMap::new()
        };
        let model_of = |model: Option<&'s str>| -> Option<&'s str> {
            model.map(|model| aliases.get(model).copied().unwrap_or(model))
        };

        for (idx, session) in self.sessions.iter().enumerate() {
            if !self.files[idx].is_counted {
                // Context for `StatsOptions::only`: read at most for a fork's keys.
                continue;
            }
            let scan = &scans[idx];
            if let Some(reason) = &scan.failure {
                n_warnings = n_warnings.saturating_add(1);
                warnings.push(Warning::new(&session.session.path, reason.as_str()));
                continue;
            }
            is_counted[idx] = true;
            n_warnings = n_warnings.saturating_add(scan.n_warnings);
            warnings.extend(scan.warnings.iter().cloned());
            let parent = session.fork_parent.as_ref().and_then(|parent| {
                let mut found = match parent.file {
                    Some(file) => usable_parent(
                        session,
                        scan,
                        &parent.path,
                        scans[file],
                        self.names_back(file, idx),
                    ),
                    None => Err(format!(
                        "fork parent {} is not a session file in the stores: it is not read, and entries are deduplicated against the older sessions in this directory and other forks whose parent cannot be used",
                        parent.path
                    )),
                };
                if let (Err(_), Some(named)) = (&found, parent.by_name)
                    && parent.file.is_none_or(|file| scans[file].failure.is_some())
                {
                    let named_path = &self.sessions[named].session.path;
                    if let Ok(usable) = usable_parent(
                        session,
                        scan,
                        named_path,
                        scans[named],
                        self.names_back(named, idx),
                    ) {
                        found = Ok(usable);
                    }
                }
                match found {
                    Ok((path, parent_scan)) => {
                        let is_copy = parent.file.is_some_and(|file| {
                            self.sessions
                                .get(file)
                                .is_some_and(|other| other.session.id == session.session.id)
                        });
                        if is_copy {
                            n_warnings = n_warnings.saturating_add(1);
                            warnings.push(Warning::new(
                                &session.session.path,
                                format!(
                                    "a copy of {path} (the same session id): the calls both hold are counted there, once"
                                ),
                            ));
                        }
                        fork_of[idx] = Some(path);
                        Some(parent_scan)
                    }
                    Err(reason) => {
                        n_warnings = n_warnings.saturating_add(1);
                        warnings.push(Warning::new(&session.session.path, reason));
                        None
                    }
                }
            });
            // A launch the fork copied from its parent is the parent's: the parent says so
            // when it is counted, and the fork never does.
            let (n_missing, first_missing) = scan
                .missing_runs
                .iter()
                .filter(|launch| {
                    parent.is_none_or(|parent| {
                        launch
                            .key
                            .as_ref()
                            .is_none_or(|key| !parent.keys.contains(key))
                    })
                })
                .fold((0u64, None), |(n_runs, first), launch| {
                    (
                        n_runs.saturating_add(launch.n_runs),
                        first.or(launch.first.as_deref()),
                    )
                });
            let mut own = match (parent, &session.fork_parent) {
                (None, Some(fork_parent)) => {
                    let older: Vec<&FileScan> = fork_parent
                        .older_beside
                        .iter()
                        .map(|&other| scans[other])
                        .filter(|other| other.failure.is_none())
                        .collect();
                    own_figures_once(scan, &older, &mut copied_without_parent)
                }
                (parent, _) => own_figures(scan, parent),
            };
            let mut n_missing = n_missing.saturating_add(scan.n_missing_runs);
            let first_missing = first_missing.or(scan.first_missing_run.as_deref());
            if scan.unexplained.iter().any(|usage| !adds_nothing(usage)) {
                let children = children.get_or_insert_with(|| self.children());
                let taken = self.take_unnamed_runs(idx, &children[idx], scans, &mut own);
                if let Some((n_unnamed, is_all_taken)) = taken {
                    // Some usage still counted from a result is some run still missing.
                    let at_least = u64::from(!is_all_taken && n_missing > 0);
                    n_missing = n_missing.saturating_sub(n_unnamed).max(at_least);
                }
            }
            if n_missing > 0 {
                n_warnings = n_warnings.saturating_add(1);
                warnings.push(Warning::new(
                    &session.session.path,
                    missing_runs_reason(n_missing, first_missing),
                ));
            }
            let path = session.session.path.as_str();
            for (bucket, own) in scan.buckets.iter().zip(&own) {
                let mut saturates = total.add_checked(own);
                if session_position.is_some() {
                    let rest =
                        self.rest_key(session, model_of(bucket.model.as_deref()), bucket.day);
                    let figures = per_session[idx].entry(rest).or_default();
                    saturates |= figures.pi.add_checked(&bucket.usage);
                    saturates |= figures.own.add_checked(own);
                    saturates |= figures.with_runs.add_checked(own);
                } else if !adds_nothing(own) {
                    // A cell only of nested usage counted in the runs' own files adds nothing:
                    // it is no row.
                    let key = self.cell_key(session, model_of(bucket.model.as_deref()), bucket.day);
                    saturates |= cells.entry(key).or_default().add_checked(own);
                }
                if saturates && is_saturated.is_none() {
                    is_saturated = Some(path);
                }
            }
        }
        if let Some(path) = is_saturated {
            n_warnings = n_warnings.saturating_add(1);
            warnings.push(Warning::new(
                path,
                format!(
                    "the report's token or cost sums reached the largest value they can hold ({} tokens, ${:e}) with this file and stopped there",
                    u64::MAX,
                    f64::MAX
                ),
            ));
        }

        let mut rows = Vec::new();
        if let Some(position) = session_position {
            let is_time_bounded = self.options.since.is_some() || self.options.until.is_some();
            if group_by.len() == 1 && !is_time_bounded {
                // One row per session file, also for a file that recorded no usage; within a
                // time range, only the sessions with something in it.
                for (idx, figures) in per_session.iter_mut().enumerate() {
                    if is_counted[idx] {
                        figures.entry(Vec::new()).or_default();
                    }
                }
            }
            // Runs come after their launcher, so going backwards rolls each run's figure (with
            // its own runs') into its launcher before the launcher is itself rolled up.
            for idx in (0..self.sessions.len()).rev() {
                let Some(launcher) = self.sessions[idx].launcher else {
                    continue;
                };
                if !self.files[launcher].is_counted {
                    // A launcher given only as context has no row.
                    continue;
                }
                let run = std::mem::take(&mut per_session[idx]);
                for (rest, figures) in &run {
                    // Saturation here is already said: the launcher's total is at its bound.
                    per_session[launcher]
                        .entry(rest.clone())
                        .or_default()
                        .with_runs
                        .add(&figures.with_runs);
                }
                per_session[idx] = run;
            }
            let mut keyed = Vec::new();
            for (idx, figures) in per_session.into_iter().enumerate() {
                for (mut key, figures) in figures {
                    // With a second key, a cell whose only usage is counted elsewhere (nested
                    // usage of runs with their own files, a fork's copies) is no row; a session
                    // alone keeps its one row, which says it was read.
                    if group_by.len() > 1
                        && !key.is_empty()
                        && adds_nothing(&figures.own)
                        && adds_nothing(&figures.with_runs)
                    {
                        continue;
                    }
                    key.insert(position, KeyPart::Session(idx));
                    keyed.push((
                        key,
                        Figures::Session {
                            pi: figures.pi,
                            own: figures.own,
                            with_runs: figures.with_runs,
                        },
                    ));
                }
            }
            keyed.sort_by(|left, right| left.0.cmp(&right.0));
            for (key, figures) in keyed {
                rows.push(self.row(&key, figures, &fork_of, scans));
            }
        } else if !group_by.is_empty() {
            // Distinct keys have distinct labels; the map orders the rows by them.
            let mut groups: BTreeMap<Vec<KeyPart>, Usage> = BTreeMap::new();
            for (key, usage) in cells {
                let rest = self.rest_key_of(key.project, key.model, key.period);
                groups.insert(rest, usage);
            }
            for (key, usage) in groups {
                rows.push(self.row(&key, Figures::Group { usage }, &fork_of, scans));
            }
        }

        warnings.sort();
        warnings.dedup();
        bound_warnings(&mut warnings);
        StatsReport {
            group_by: group_by.clone(),
            time_zone: self.options.time_zone_name.clone(),
            since: self.options.since.map(|since| since.to_string()),
            until: self.options.until.map(|until| until.to_string()),
            rows,
            total,
            warnings,
            n_warnings,
        }
    }

    /// Returns whether session `parent` is a fork whose own parent is the file `idx`.
    fn names_back(&self, parent: usize, idx: usize) -> bool {
        self.sessions
            .get(parent)
            .and_then(|planned| planned.fork_parent.as_ref())
            .is_some_and(|fork_parent| {
                fork_parent.file == Some(idx) || fork_parent.by_name == Some(idx)
            })
    }

    /// Returns each session's runs, one level down (indices into `sessions`).
    fn children(&self) -> Vec<Vec<usize>> {
        let mut children = vec![Vec::new(); self.sessions.len()];
        for (idx, session) in self.sessions.iter().enumerate() {
            if let Some(launcher) = session.launcher {
                children[launcher].push(idx);
            }
        }
        children
    }

    /// Takes out of `own` (the launcher `idx`'s figure per cell) what its tool results added
    /// for runs without a listed file, up to what its listed runs that no result named hold:
    /// pi-subagents wrote those runs, a result that names none of them (no `runId`, no
    /// `sessionFile`, a stale one) stands for them, and they are counted in their own files.
    /// Returns how many such runs there were (`None`: none), the missing runs they stand for,
    /// and whether they covered all of what the results added.
    fn take_unnamed_runs(
        &self,
        idx: usize,
        runs: &[usize],
        scans: &[&FileScan],
        own: &mut [Usage],
    ) -> Option<(u64, bool)> {
        let scan = scans[idx];
        let claimed: HashSet<&str> = scan.claimed_runs.iter().map(String::as_str).collect();
        let unnamed: Vec<usize> = runs
            .iter()
            .copied()
            .filter(|&run| {
                self.files[run].is_counted
                    && scans[run].failure.is_none()
                    && !claimed.contains(self.sessions[run].session.path.as_str())
            })
            .collect();
        if unnamed.is_empty() {
            return None;
        }
        // The runs' calls at any time: the result stands for all of them, whatever part of
        // them a time range keeps.
        let mut budget = Usage::default();
        for &run in &unnamed {
            budget.add(&scans[run].unbounded_own);
        }
        let mut is_all_taken = true;
        for (cell, unexplained) in own.iter_mut().zip(&scan.unexplained) {
            let taken = take_up_to(unexplained, &mut budget);
            is_all_taken &= taken.n_entries == unexplained.n_entries;
            cell.remove(&taken);
        }
        Some((unnamed.len() as u64, is_all_taken))
    }

    /// Returns a row's key without the session: the values of the other dimensions, in order.
    fn rest_key(
        &self,
        session: &PlannedSession,
        model: Option<&str>,
        day: Option<Date>,
    ) -> Vec<KeyPart> {
        self.rest_key_of(Some(session.project), model, day)
    }

    /// Returns the unlabelled key of a cell without sessions: the parts that are grouped by,
    /// and the day as the first day of the finest period grouped by (so that the days of one
    /// week or month are one key).
    fn cell_key<'k>(
        &self,
        session: &PlannedSession<'k>,
        model: Option<&'k str>,
        day: Option<Date>,
    ) -> CellKey<'k> {
        let group_by = &self.options.group_by;
        let period = [GroupKey::Day, GroupKey::Week, GroupKey::Month]
            .into_iter()
            .find(|key| group_by.contains(key));
        CellKey {
            project: group_by
                .contains(&GroupKey::Project)
                .then_some(session.project),
            model: if group_by.contains(&GroupKey::Model) {
                Some(model.unwrap_or("unknown"))
            } else {
                None
            },
            period: match (period, day) {
                (Some(key), Some(day)) => Some(period_start(key, day)),
                _ => None,
            },
        }
    }

    /// Returns the labels of `project`, `model` and the period of `day` for the dimensions
    /// grouped by (sessions aside), in order.
    fn rest_key_of(
        &self,
        project: Option<&str>,
        model: Option<&str>,
        day: Option<Date>,
    ) -> Vec<KeyPart> {
        self.options
            .group_by
            .iter()
            .filter_map(|key| {
                let text = match key {
                    GroupKey::Session => return None,
                    GroupKey::Project => project.unwrap_or_default().to_owned(),
                    GroupKey::Model => model.unwrap_or("unknown").to_owned(),
                    GroupKey::Day | GroupKey::Week | GroupKey::Month => period_label(*key, day),
                };
                Some(KeyPart::Text(text))
            })
            .collect()
    }

    /// Returns the row for a full key (one part per grouped dimension, in order).
    fn row(
        &self,
        key: &[KeyPart],
        figures: Figures,
        fork_of: &[Option<String>],
        scans: &[&FileScan],
    ) -> StatsRow {
        let mut row = StatsRow {
            session: None,
            project: None,
            model: None,
            day: None,
            week: None,
            month: None,
            figures,
        };
        for (dimension, part) in self.options.group_by.iter().zip(key) {
            match part {
                KeyPart::Session(idx) => {
                    let session = &self.sessions[*idx];
                    row.session = Some(RowSession {
                        path: session.session.path.clone(),
                        session_id: session.session.id.clone(),
                        cwd: session.session.cwd.clone(),
                        depth: session.depth,
                        launched_by: session
                            .launcher
                            .map(|launcher| self.sessions[launcher].session.path.clone()),
                        fork_of: fork_of[*idx].clone(),
                        facts: scans
                            .get(*idx)
                            .map_or_else(SessionFacts::default, |scan| scan.facts.clone()),
                    });
                }
                KeyPart::Text(text) => {
                    let slot = match dimension {
                        GroupKey::Project => &mut row.project,
                        GroupKey::Model => &mut row.model,
                        GroupKey::Day => &mut row.day,
                        GroupKey::Week => &mut row.week,
                        GroupKey::Month => &mut row.month,
                        GroupKey::Session => continue,
                    };
                    *slot = Some(text.clone());
                }
            }
        }
        row
    }
}

/// Appends `session` and its runs, depth first, to `out`.
/// Returns every listed path, each also by its place in the store (`store_tail`): a launcher
/// records the absolute path it wrote, which no longer matches once the store is copied,
/// moved or reached through a link.
fn listed_paths<'l>(sessions: &[PlannedSession<'l>]) -> PathSet<'l> {
    let mut listed = PathSet::with_capacity_and_hasher(2 * sessions.len(), Default::default());
    for planned in sessions {
        let path = planned.session.path.as_str();
        listed.insert(path, path);
        if let Some(tail) = pi_retrospect_core::path::store_tail(path) {
            listed.entry(tail).or_insert(path);
        }
    }
    listed
}

fn flatten<'l>(
    session: &'l Session,
    project: &'l str,
    depth: usize,
    launcher: Option<usize>,
    out: &mut Vec<PlannedSession<'l>>,
) {
    let idx = out.len();
    out.push(PlannedSession {
        session,
        project,
        depth,
        launcher,
        fork_parent: None,
    });
    for run in &session.subagent_sessions {
        flatten(run, project, depth + 1, Some(idx), out);
    }
}

/// Returns, per planned session, whether it is counted: every one, or with `only` the
/// session at that path and its runs (which follow it, deeper, in depth-first order).
fn selected_sessions(
    sessions: &[PlannedSession<'_>],
    only: Option<&str>,
    only_ids: &[String],
) -> Vec<bool> {
    let mut selected = vec![only.is_none() && only_ids.is_empty(); sessions.len()];
    // `sessions` is depth first, so a session's runs follow it until the depth is back.
    let select_tree = |start: usize, selected: &mut Vec<bool>| {
        let depth = sessions[start].depth;
        selected[start] = true;
        for (idx, planned) in sessions.iter().enumerate().skip(start + 1) {
            if planned.depth <= depth {
                break;
            }
            selected[idx] = true;
        }
    };
    if let Some(only) = only
        && let Some(start) = sessions
            .iter()
            .position(|planned| planned.session.path == only)
    {
        select_tree(start, &mut selected);
    }
    if !only_ids.is_empty() {
        let mut by_id = vec![false; sessions.len()];
        for (idx, planned) in sessions.iter().enumerate() {
            let id = planned.session.id.as_str();
            if !by_id[idx]
                && only_ids
                    .iter()
                    .any(|prefix| id.starts_with(prefix.as_str()))
            {
                select_tree(idx, &mut by_id);
            }
        }
        for (is_selected, by_id) in selected.iter_mut().zip(by_id) {
            *is_selected = if only.is_some() {
                *is_selected && by_id
            } else {
                by_id
            };
        }
    }
    selected
}

/// Returns the copies among the selected sessions, each with the session it copies: the
/// same session id in two files (a backup, a copy in another project directory) is one
/// session, whose entries count in the oldest file (header instant, then path) and are
/// copies anywhere else, as a fork's are.
fn copies_of_sessions(sessions: &[PlannedSession<'_>], selected: &[bool]) -> Vec<(usize, usize)> {
    use std::collections::hash_map::Entry;
    // Oldest first; at one instant, the file Pi named for the session (`…_<id>.jsonl`) is the
    // original, before a backup or a `(copy)` beside it.
    let order = |idx: usize| {
        let session = sessions[idx].session;
        let is_named_by_pi = file_name(&session.path)
            .strip_suffix(".jsonl")
            .and_then(|stem| stem.strip_suffix(session.id.as_str()))
            .is_some_and(|rest| rest.ends_with('_'));
        (session.instant, !is_named_by_pi, session.path.as_str())
    };
    let mut first: HashMap<&str, usize, foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(sessions.len(), Default::default());
    let mut copies = Vec::new();
    for (idx, planned) in sessions.iter().enumerate() {
        let id = planned.session.id.as_str();
        if id.is_empty() {
            continue;
        }
        match first.entry(id) {
            Entry::Vacant(entry) => {
                entry.insert(idx);
            }
            // Each copy is held to the next older one, which is held to the oldest.
            Entry::Occupied(mut entry) => {
                let other = *entry.get();
                if order(idx) < order(other) {
                    copies.push((other, idx));
                    entry.insert(idx);
                } else {
                    copies.push((idx, other));
                }
            }
        }
    }
    copies.retain(|&(copy, _)| selected[copy]);
    copies
}

/// Returns whether a run sits directly in a `forks/` directory of its launcher's container:
/// pi-subagents' fork context, a branched copy of the launcher.
fn is_fork_context_run(planned: &PlannedSession<'_>) -> bool {
    // The parent directory's name, read from the text: parsing the path into components costs
    // more than the rest of the plan for a store of runs.
    let mut components = planned
        .session
        .path
        .rsplit('/')
        .filter(|part| !part.is_empty());
    planned.launcher.is_some() && components.nth(1) == Some("forks")
}

/// Returns, for each model name of `scans` that is the end of exactly one other name after a
/// `/` (a model without its provider), that name.
fn model_aliases<'s>(scans: &[&'s FileScan]) -> HashMap<&'s str, &'s str> {
    let names: HashSet<&'s str> = scans
        .iter()
        .flat_map(|scan| scan.buckets.iter())
        .filter_map(|bucket| bucket.model.as_deref())
        .collect();
    let mut by_end: HashMap<&str, Option<&str>> = HashMap::new();
    for &name in &names {
        for (slash, _) in name.match_indices('/') {
            by_end
                .entry(&name[slash + 1..])
                .and_modify(|full| {
                    if *full != Some(name) {
                        *full = None;
                    }
                })
                .or_insert(Some(name));
        }
    }
    names
        .into_iter()
        .filter_map(|name| Some((name, by_end.get(name).copied().flatten()?)))
        .collect()
}

/// Returns the part of `usage` that `budget` covers, each token count and the cost up to
/// the budget's (which shrinks by as much); its records (and records of unknown cost) only
/// when all of `usage` is covered.
fn take_up_to(usage: &Usage, budget: &mut Usage) -> Usage {
    let take = |wanted: u64, left: &mut u64| {
        let taken = wanted.min(*left);
        *left -= taken;
        taken
    };
    let input = take(usage.input, &mut budget.input);
    let output = take(usage.output, &mut budget.output);
    let cache_read = take(usage.cache_read, &mut budget.cache_read);
    let cache_write = take(usage.cache_write, &mut budget.cache_write);
    let cost = usage.cost.min(budget.cost).max(0.0);
    budget.cost = (budget.cost - cost).max(0.0);
    // A rounding difference between the runs' costs and the result's sum is not a record.
    let is_whole = (input, output, cache_read, cache_write)
        == (
            usage.input,
            usage.output,
            usage.cache_read,
            usage.cache_write,
        )
        && usage.cost - cost <= 1e-9 * usage.cost.abs().max(1.0);
    Usage {
        cost: if is_whole { usage.cost } else { cost },
        n_entries: if is_whole { usage.n_entries } else { 0 },
        n_cost_unknown: if is_whole { usage.n_cost_unknown } else { 0 },
        ..Usage::of_tokens(input, output, cache_read, cache_write)
    }
}

/// Returns the directory part of a session's path (all of it before the last `/`).
fn directory(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(directory, _)| directory)
}

/// Returns the listed sessions by directory (indices into `sessions`).
fn sessions_by_directory<'l>(sessions: &[PlannedSession<'l>]) -> HashMap<&'l str, Vec<usize>> {
    let mut by_directory: HashMap<&str, Vec<usize>> = HashMap::new();
    for (idx, planned) in sessions.iter().enumerate() {
        by_directory
            .entry(directory(&planned.session.path))
            .or_default()
            .push(idx);
    }
    by_directory
}

/// Returns a path's last component.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Returns the fork's parent (its path and scan) when its entries may be subtracted, or the
/// warning why not.
fn usable_parent<'s>(
    session: &PlannedSession,
    scan: &FileScan,
    parent_path: &str,
    parent: &'s FileScan,
    parent_names_back: bool,
) -> Result<(String, &'s FileScan), String> {
    if let Some(reason) = &parent.failure {
        return Err(format!(
            "fork parent {parent_path} could not be read ({reason}): every entry is counted as this session's own"
        ));
    }
    let (Some(parent_instant), Some(own_instant)) = (parent.instant, scan.instant) else {
        return Err(format!(
            "fork parent {parent_path} could not be read: every entry is counted as this session's own"
        ));
    };
    // An older parent is used; one started at the same instant too (a fork made within the
    // millisecond), unless it is itself a fork of this session, which would leave their
    // shared records counted in neither.
    let is_older = (parent_instant, parent_path) < (own_instant, session.session.path.as_str());
    if !is_older && (parent_instant != own_instant || parent_names_back) {
        return Err(format!(
            "fork parent {parent_path} is not older than this session: entries are not deduplicated against it"
        ));
    }
    Ok((parent_path.to_owned(), parent))
}

/// Returns a file's own figure per cell: all of it, or for a fork, the records its parent
/// does not hold.
fn own_figures(scan: &FileScan, parent: Option<&FileScan>) -> Vec<Usage> {
    let Some(parent) = parent else {
        return scan.buckets.iter().map(|bucket| bucket.own).collect();
    };
    let mut own = vec![Usage::default(); scan.buckets.len()];
    for record in &scan.records {
        let is_copied = record
            .key
            .as_ref()
            .is_some_and(|key| parent.keys.contains(key));
        if !is_copied {
            own[record.bucket].add(&record.usage);
        }
    }
    own
}

/// Returns the own figure per cell of a fork whose parent cannot be used: the records that
/// no older session beside it holds (`older`) and that no earlier such fork counted (`counted`
/// holds their identities, and gets this fork's), so a copied entry counts once however many
/// forks hold it and whichever parent in the chain is gone.
fn own_figures_once<'s>(
    scan: &'s FileScan,
    older: &[&FileScan],
    counted: &mut HashSet<&'s str>,
) -> Vec<Usage> {
    let mut own = vec![Usage::default(); scan.buckets.len()];
    // One entry can be several records (a launch's own part and its runs' shares by model):
    // each is decided once, so its parts stay together.
    let mut decided: HashMap<&str, bool> = HashMap::new();
    for record in &scan.records {
        let is_new = record.key.as_deref().is_none_or(|key| {
            *decided.entry(key).or_insert_with(|| {
                !older.iter().any(|other| other.keys.contains(key)) && counted.insert(key)
            })
        });
        if is_new {
            own[record.bucket].add(&record.usage);
        }
    }
    own
}

/// Returns whether `path` (normalised, absolute) is a `.jsonl` file below one of the store
/// roots, both as written and once every link in it is resolved. Nothing is opened: the path
/// is checked as text first, so a path outside the stores costs no system call at all, and
/// every path that fails gives the same answer whether it exists or not.
fn is_in_stores(path: &str, store_roots: &[String]) -> bool {
    let is_below = |path: &str| {
        store_roots.iter().any(|root| {
            path.strip_prefix(root.as_str())
                .is_some_and(|rest| rest.starts_with('/') && rest.len() > 1)
        })
    };
    if !path.starts_with('/') || !path.ends_with(".jsonl") || !is_below(path) {
        return false;
    }
    std::fs::canonicalize(path).is_ok_and(|resolved| {
        resolved
            .to_str()
            .is_some_and(|resolved| resolved.ends_with(".jsonl") && is_below(resolved))
    })
}

/// Holds `warnings` to [`MAX_REPORT_WARNINGS`]: the first ones, then one that says how many
/// more there were.
fn bound_warnings(warnings: &mut Vec<Warning>) {
    if warnings.len() <= MAX_REPORT_WARNINGS {
        return;
    }
    let n_more = warnings.len() - (MAX_REPORT_WARNINGS - 1);
    warnings.truncate(MAX_REPORT_WARNINGS - 1);
    let path = warnings
        .last()
        .map_or_else(String::new, |last| last.path.clone());
    warnings.push(Warning::new(
        &path,
        format!("… and {n_more} more warnings in this report"),
    ));
}

/// Returns the first day of the period of kind `key` that `day` falls in: the day itself,
/// its week's Monday or the first of its month.
fn period_start(key: GroupKey, day: Date) -> Date {
    match key {
        GroupKey::Week => {
            let back = i64::from(day.weekday().to_monday_zero_offset());
            day.checked_sub(jiff::Span::new().days(back)).unwrap_or(day)
        }
        GroupKey::Month => day.first_of_month(),
        _ => day,
    }
}

/// Returns the label of the period `day` falls in: the day itself, its week's Monday or its
/// month; `unknown` for a record without a timestamp.
fn period_label(key: GroupKey, day: Option<Date>) -> String {
    let Some(day) = day else {
        return "unknown".to_owned();
    };
    match key {
        GroupKey::Month => format!("{:04}-{:02}", day.year(), day.month()),
        _ => period_start(key, day).to_string(),
    }
}
