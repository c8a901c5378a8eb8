//! Discovery of Pi session files and their subagent runs, in parallel and read-only.
//!
//! [`list`] walks one store and returns a [`Listing`] in the contract's order, whatever the
//! thread count. The discovery rules:
//!
//! 1. In the default layout ([`Layout::Projects`]) only immediate subdirectories of the root
//!    named `--<slug>--` are project directories; in a custom session directory
//!    ([`Layout::Flat`]) the root itself is the one project directory.
//! 2. Top-level sessions are the `*.jsonl` regular files directly inside a project directory.
//! 3. A session's container is the directory beside it named after its stem (`x.jsonl` ->
//!    `x/`); a stem that is empty, `.` or `..` has none. The container is entered only when it
//!    is a real directory, never through a symlink and never when it is a file.
//! 4. Inside a container, at any depth, every regular file named `session.jsonl` (a
//!    pi-subagents run) and every `*.jsonl` directly inside a directory named `forks` (a run
//!    started from a fork of the parent's context) is a subagent transcript. Directories named
//!    `subagent-artifacts` are never entered: they hold copies, not sessions.
//! 5. Transcripts nest under the transcript whose container is their deepest ancestor (see
//!    [`mod@pi_retrospect_core::nest`]).
//! 6. Only line 1 of each file is read, bounded, and only from regular files (see
//!    [`pi_retrospect_header`]); symbolic links are never followed anywhere. A caller that
//!    wants more of a body (`list --long`) passes a [`BodyReader`], which the walk calls on
//!    the descriptor it read the header through ([`list_stores_with`]).
//! 7. A name that is not valid UTF-8 on a path the walk would take is skipped with a warning,
//!    because every path in the output must be a usable handle.
//!
//! Everything the walk reaches ends as a session row or as exactly one warning. A symlink, FIFO
//! or device where a session file, a run or a project directory could be, a symlink where a
//! container or a directory inside one could be (and a root directory `--` or `---`) is
//! never opened, but is one warning marked
//! [`Warning::is_out_of_scope`], which the contract's documents leave out.

#![deny(missing_docs)]

mod scan;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use pi_retrospect_core::Listing;
use pi_retrospect_core::{SessionRow, SessionSummary, Warning};

pub use scan::{
    ListedTree, SessionFile, discover_session_files, list_session_file, list_session_file_with,
};

/// How far the body reads a [`BodyReader`] plans for one tree reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyReach {
    /// Only the top-level session's body.
    Session,
    /// The top-level session's body and the body of every run under it.
    Tree,
}

/// What the walk reads of listed transcripts' bodies besides line 1, and how.
///
/// The walk already holds each transcript open (relative to its directory's descriptor, for
/// runs) when it has read its header; a body read there costs no second open and no second
/// path resolution, and runs on the walk's workers. `walk` knows nothing of what a body
/// holds (it must not depend on `transcript`): the caller says which trees to read and
/// reads them.
pub trait BodyReader: Sync {
    /// What to read of one tree, decided by [`BodyReader::plan`] (a caller that reads
    /// different facts for different trees says which here).
    type Kind: Copy + Send + Sync;
    /// What one body read gives, error included.
    type Body: Send;
    /// Returns how far to read the bodies of the tree whose top-level session has the valid
    /// header `row`, and what to read, or `None` to read none of them. Called once per tree,
    /// before its runs are found.
    fn plan(&self, row: &SessionRow) -> Option<(BodyReach, Self::Kind)>;
    /// How many bytes from a file's start the walk reads with its header when this reader
    /// may read bodies, and hands to [`BodyReader::read`] as its [`Head`]: one read instead
    /// of the header's and the body's own. 0 (the default): only the header's usual read.
    fn head_bytes(&self) -> usize {
        0
    }
    /// Reads the body of the transcript at `path`, open as `file` (read-only, non-blocking,
    /// not through a symlink; its header has been read through it, so its offset is past
    /// line 1 or further: read with positional reads). `head` is what the walk read from the
    /// file's start with the header.
    fn read(
        &self,
        kind: Self::Kind,
        path: &str,
        file: &std::fs::File,
        head: Head<'_>,
    ) -> Self::Body;
    /// Returns the facts of `body` to keep on its session ([`Session::summary`]), or hands
    /// `body` back to go into the walk's [`Bodies`] by path (the default: every body). What
    /// is kept on the session is found by whoever holds the session, with no lookup by
    /// path; the walk attaches it on the worker that read it.
    ///
    /// [`Session::summary`]: pi_retrospect_core::Session::summary
    fn keep_on_session(&self, body: Self::Body) -> Result<SessionSummary, Self::Body> {
        Err(body)
    }
}

/// The first bytes of a file, as the walk read them with its header.
#[derive(Debug, Clone, Copy)]
pub struct Head<'a> {
    /// The bytes read from the file's first byte on: the header line and what followed it.
    pub bytes: &'a [u8],
    /// Whether the file ended within `bytes` when they were read (they are the whole file).
    pub is_whole: bool,
}

/// The [`BodyReader`] that reads no body: what [`list_stores`] and [`for_each_session`] use,
/// at no cost.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoBodies;

impl BodyReader for NoBodies {
    type Kind = ();
    type Body = ();

    fn plan(&self, _row: &SessionRow) -> Option<(BodyReach, ())> {
        None
    }

    fn read(&self, _kind: (), _path: &str, _file: &std::fs::File, _head: Head<'_>) {}
}

/// What a [`BodyReader`] read: each read transcript's path with its body, in no particular
/// order.
pub type Bodies<T> = Vec<(String, T)>;

/// How session files are laid out under a store's root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Pi's default: `<root>/--<slug>--/<stem>.jsonl`.
    Projects,
    /// A custom session directory: `<root>/<stem>.jsonl`.
    Flat,
}

/// One store to list: an absolute root and its layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    /// Absolute, normalised root directory (valid UTF-8).
    pub root: String,
    /// How sessions sit under `root`.
    pub layout: Layout,
    /// Whether a root that does not exist is normal (an optional store such as an archive, or
    /// the default root beside a custom directory) rather than worth a warning.
    pub missing_ok: bool,
}

impl Store {
    /// Returns a store at `root` (made absolute against `cwd` and normalised) with `layout`.
    ///
    /// Fails with a warning when the root's path is not valid UTF-8.
    pub fn resolve(root: &Path, cwd: &Path, layout: Layout) -> Result<Store, Warning> {
        let joined = cwd.join(root);
        match joined.to_str() {
            Some(text) => Ok(Store {
                root: pi_retrospect_core::path::normalize_absolute(text),
                layout,
                missing_ok: false,
            }),
            None => Err(Warning::new(
                joined.to_string_lossy(),
                "sessions root not readable: path is not valid UTF-8",
            )),
        }
    }
}

/// Options for a walk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WalkOptions {
    /// Worker threads; `0` means one per available core.
    pub threads: usize,
}

/// Why a walk gave no listing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WalkError {
    /// The process (or the system) ran out of file descriptors and kept running out after
    /// waiting: a listing without the files that could not be opened would be silently
    /// incomplete, so none is given.
    #[error(
        "too many open files while reading {path} ({reason}); no listing is given rather than an incomplete one: raise the limit (ulimit -n) and run again"
    )]
    OutOfDescriptors {
        /// The file or directory that could not be opened.
        path: String,
        /// The system's reason.
        reason: String,
    },
}

/// Lists every session of `store`, nested and sorted, plus a warning per skipped path.
///
/// Fails only when the process runs out of file descriptors (see [`WalkError`]).
pub fn list(store: &Store, options: &WalkOptions) -> Result<Listing, WalkError> {
    list_stores(std::slice::from_ref(store), options)
}

/// Lists several stores together as one listing (a path reached twice is read once).
///
/// Fails only when the process runs out of file descriptors (see [`WalkError`]).
pub fn list_stores(stores: &[Store], options: &WalkOptions) -> Result<Listing, WalkError> {
    list_stores_with(stores, options, &NoBodies).map(|(listing, _)| listing)
}

/// At most this many top-level session files make one task of the walk's parallel loop.
/// rayon otherwise splits a loop into as few pieces as there are threads unless work is
/// stolen, and on two threads one worker was left to finish a last big piece alone (a
/// timeline of `list --json` on the 10k store: 55 of 190 ms on one thread).
const FILES_PER_TASK: usize = 16;

/// Lists several stores like [`list_stores`], and reads the bodies `reader` plans, each right
/// after its header, on the same descriptor and worker.
///
/// Fails only when the process runs out of file descriptors (see [`WalkError`]).
pub fn list_stores_with<R: BodyReader>(
    stores: &[Store],
    options: &WalkOptions,
    reader: &R,
) -> Result<(Listing, Bodies<R::Body>), WalkError> {
    use rayon::prelude::*;
    with_threads(options.threads, || {
        let (files, warnings) = discover_stores(stores)?;
        let stop = pi_retrospect_read::watched_stop();
        let results: Vec<_> = files
            .par_iter()
            .with_max_len(FILES_PER_TASK)
            .map(|file| {
                pi_retrospect_read::reading_while(stop.clone(), || {
                    list_session_file_with(file, reader)
                })
            })
            .collect();
        let mut listing = Listing {
            sessions: Vec::with_capacity(results.len()),
            warnings,
        };
        let mut bodies = Vec::new();
        for result in results {
            let (session, mut warnings, mut tree_bodies) = result?;
            listing.warnings.append(&mut warnings);
            listing.sessions.extend(session);
            bodies.append(&mut tree_bodies);
        }
        listing.sort();
        Ok((listing, bodies))
    })
}

/// What the callback of [`for_each_session`] asks of the walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkState {
    /// Go on reading.
    Continue,
    /// Stop: no further session is read (a satisfied limit, a closed pipe).
    Quit,
}

/// Walks several stores and hands each top-level session tree (or its failure) to `emit` as
/// soon as it is read, from the worker threads, in no particular order; returns the warnings
/// that belong to no session (unreadable directories). A path reached through two stores is
/// emitted once. When `emit` returns [`WalkState::Quit`] no further file is read (trees
/// already being read on other workers may still be emitted).
///
/// Fails when the process runs out of file descriptors (see [`WalkError`]); the trees emitted
/// before that stay emitted, so a caller that prints as it goes must report the failure.
pub fn for_each_session(
    stores: &[Store],
    options: &WalkOptions,
    emit: &(dyn Fn(Option<pi_retrospect_core::Session>, Vec<Warning>) -> WalkState + Sync),
) -> Result<Vec<Warning>, WalkError> {
    for_each_session_with(stores, options, &NoBodies, &|session, warnings, _| {
        emit(session, warnings)
    })
}

/// The emitting callback of [`for_each_session_with`]: one top-level tree (or its failure),
/// its warnings and the bodies read in it.
pub type EmitTree<'a, T> =
    dyn Fn(Option<pi_retrospect_core::Session>, Vec<Warning>, Bodies<T>) -> WalkState + Sync + 'a;

/// Walks like [`for_each_session`], and reads the bodies `reader` plans for each tree, each
/// right after its header, on the same descriptor; they are emitted with their tree.
///
/// Fails when the process runs out of file descriptors (see [`WalkError`]).
pub fn for_each_session_with<R: BodyReader>(
    stores: &[Store],
    options: &WalkOptions,
    reader: &R,
    emit: &EmitTree<'_, R::Body>,
) -> Result<Vec<Warning>, WalkError> {
    use rayon::prelude::*;
    with_threads(options.threads, || {
        let (files, mut loose_warnings) = discover_stores(stores)?;
        let quit = AtomicBool::new(false);
        let failure: Mutex<Option<WalkError>> = Mutex::new(None);
        let stop = pi_retrospect_read::watched_stop();
        files.par_iter().for_each(|file| {
            if quit.load(Ordering::Relaxed) {
                return;
            }
            let listed = pi_retrospect_read::reading_while(stop.clone(), || {
                list_session_file_with(file, reader)
            });
            match listed {
                Ok((session, warnings, bodies)) => {
                    if emit(session, warnings, bodies) == WalkState::Quit {
                        quit.store(true, Ordering::Relaxed);
                    }
                }
                Err(error) => {
                    quit.store(true, Ordering::Relaxed);
                    // A poisoned lock only means another worker panicked while storing.
                    let mut failure = failure
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    failure.get_or_insert(error);
                }
            }
        });
        let failure = failure
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(error) = failure {
            return Err(error);
        }
        loose_warnings.sort();
        Ok(loose_warnings)
    })
}

/// Discovers the top-level session files of every store, each path once (a custom directory
/// and the default root may overlap), with the warnings that belong to no session file.
fn discover_stores(stores: &[Store]) -> Result<(Vec<SessionFile>, Vec<Warning>), WalkError> {
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for store in stores {
        let (mut store_files, mut store_warnings) = discover_session_files(store)?;
        if stores.len() > 1 {
            store_files.retain(|file| seen.insert(file.path.clone()));
        }
        files.append(&mut store_files);
        warnings.append(&mut store_warnings);
    }
    Ok((files, warnings))
}

/// The stack of each walk worker. The walk itself never recurses, but nesting the sessions it
/// finds (`core::nest`) and sorting them recurse once per level of sessions inside sessions,
/// about 1 KiB each: rayon's default 2 MiB overflowed at 3,000 levels. Only the
/// pages used are ever committed.
const WORKER_STACK_BYTES: usize = 64 << 20;

/// The most workers a pool gets, whatever is asked: `--threads 100000` spawned fourteen
/// thousand threads and hundreds of megabytes of stacks before it was stopped.
pub const MAX_THREADS: usize = 256;

/// Runs `work` on a pool of `threads` workers (`0`: one per core; at most [`MAX_THREADS`]).
///
/// Each pool is built once per process and reused: building one per call cost a thread
/// creation per worker every time (about 60,000 `clone3` calls for a 30k-session
/// `list --jsonl --unordered --name --threads 2`). Workers have 64 MiB of
/// stack.
pub fn with_threads<T: Send>(threads: usize, work: impl FnOnce() -> T + Send) -> T {
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        threads => threads,
    }
    .min(MAX_THREADS);
    // The caller's stop (an MCP call answered early) is watched on the pool's thread too;
    // the parallel loops hand it on to their tasks.
    let stop = pi_retrospect_read::watched_stop();
    match pool(threads) {
        Some(pool) => pool.install(|| pi_retrospect_read::reading_while(stop, work)),
        // A pool that cannot be built (no threads left) still gets the work done serially.
        None => work(),
    }
}

/// Returns the process-wide pool of `threads` workers, building it on first use.
fn pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
    // A poisoned lock only means another thread panicked while inserting; the map is intact.
    let mut pools = pools
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(pool) = pools.get(&threads) {
        return Some(Arc::clone(pool));
    }
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|index| format!("pi-retrospect-walk-{index}"))
            .stack_size(WORKER_STACK_BYTES)
            .build()
            .ok()?,
    );
    pools.insert(threads, Arc::clone(&pool));
    Some(pool)
}

#[cfg(test)]
mod tests {

    /// An absurd thread count gets the cap, not that many threads.
    #[test]
    fn a_pool_has_at_most_the_cap() {
        assert_eq!(
            with_threads(100_000, rayon::current_num_threads),
            MAX_THREADS
        );
        assert_eq!(with_threads(3, rayon::current_num_threads), 3);
    }

    use super::*;

    /// A pool of a given size is built once per process and reused.
    #[test]
    fn pools_are_built_once() {
        let first = with_threads(3, || {
            rayon::current_thread_index().map(|_| rayon::current_num_threads())
        });
        assert_eq!(first, Some(3));
        let a = pool(3).expect("pool");
        let b = pool(3).expect("pool");
        assert!(Arc::ptr_eq(&a, &b));
    }
}
