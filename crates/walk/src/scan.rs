//! The filesystem side of the walk: directory listings, candidate files and header reads.
//!
//! Runs inside a session's container are found with an explicit work list, never recursion,
//! so directories nested thousands deep cannot overflow a stack. Each directory is
//! opened relative to an *anchor* descriptor (the container, or an ancestor re-opened once
//! every kilobyte of path) and closed as soon as its entries are read, so the descriptors held
//! grow with the length of the path in kilobytes, never with its number of levels. A process
//! out of descriptors (EMFILE, ENFILE) waits and retries, then fails the whole walk with
//! [`WalkError`]: a listing with some directories silently missing is never returned.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::fs;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pi_retrospect_core::path::container_of;
use pi_retrospect_core::{Session, SessionRow, SessionSummary, Warning, nest};
use pi_retrospect_header::{HeaderError, read_listed_header_from, read_listed_header_into};
use pi_retrospect_read::{describe_file_type, describe_io, open_session_file};
use rayon::prelude::*;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use crate::{Bodies, BodyReach, BodyReader, Head, Layout, NoBodies, Store, WalkError};

/// Name pi-subagents gives every run transcript.
const RUN_FILE_NAME: &str = "session.jsonl";
/// Directory under a session's container that holds runs started from a fork of its context.
const FORKS_DIR_NAME: &str = "forks";
/// Entries from which a directory inside a container is visited in parallel (see
/// `collect_runs`).
const PARALLEL_DIR_ENTRIES: usize = 64;
/// Directory of transcript copies pi-subagents keeps; never sessions.
const ARTIFACTS_DIR_NAME: &str = "subagent-artifacts";

/// Session files found and the warnings about what could not be read.
type Discovered = (Vec<SessionFile>, Vec<Warning>);

/// One top-level session read with its tree: the nested session (`None` when its header is
/// invalid), its warnings and the bodies read in it.
pub type ListedTree<T> = (Option<Session>, Vec<Warning>, Bodies<T>);

/// A top-level session file found in a project directory, not yet read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// Absolute path of the `.jsonl` file.
    pub path: String,
    /// Whether the project directory holds a real directory named after the file's stem.
    pub has_container: bool,
}

/// Returns the top-level session files of `store` plus warnings for what could not be read.
///
/// Project directories are listed in parallel; the result is in no particular order. Fails
/// only when the process runs out of file descriptors.
pub fn discover_session_files(store: &Store) -> Result<Discovered, WalkError> {
    let mut warnings = Vec::new();
    let project_dirs: Vec<String> = match store.layout {
        Layout::Flat => vec![store.root.clone()],
        Layout::Projects => {
            let entries = match retry_out_of_descriptors(|| fs::read_dir(&store.root)) {
                Ok(entries) => entries,
                Err(error) if store.missing_ok && error.kind() == io::ErrorKind::NotFound => {
                    return Ok((Vec::new(), warnings));
                }
                Err(error) => {
                    fail_if_out_of_descriptors(&store.root, &error)?;
                    warnings.push(root_warning(&store.root, &error));
                    return Ok((Vec::new(), warnings));
                }
            };
            let mut dirs = Vec::new();
            for entry in entries {
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(error) => {
                        warnings.push(root_warning(&store.root, &error));
                        continue;
                    }
                };
                // The entry's own type, never its target's: `DirEntry::file_type` does not
                // follow a symlink.
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let name = entry.file_name();
                let bytes = name.as_encoded_bytes();
                if !is_project_dir_name(bytes) {
                    if kind.is_dir() && is_short_dash_name(bytes) {
                        warnings.push(Warning::out_of_scope(
                            lossy_join(&store.root, bytes),
                            "not a project directory: its leading and trailing `--` overlap, \
                             so the name is not `--<slug>--`; not entered",
                        ));
                    }
                    continue;
                }
                if !kind.is_dir() {
                    warnings.push(Warning::out_of_scope(
                        lossy_join(&store.root, bytes),
                        not_entered_reason(&kind, "directory"),
                    ));
                    continue;
                }
                match name.to_str() {
                    Some(name) => dirs.push(join(&store.root, name)),
                    None => warnings.push(non_utf8_warning(&store.root, bytes, "directory")),
                }
            }
            dirs
        }
    };

    let per_dir: Vec<Result<Discovered, WalkError>> = project_dirs
        .par_iter()
        .map(|dir| list_project_dir(dir, store))
        .collect();
    let mut files = Vec::new();
    for result in per_dir {
        let (mut dir_files, mut dir_warnings) = result?;
        files.append(&mut dir_files);
        warnings.append(&mut dir_warnings);
    }
    Ok((files, warnings))
}

/// Reads one top-level session: its header, then every transcript under its container.
///
/// Returns the nested session (or `None` when its header is invalid) and its warnings; fails
/// only when the process runs out of file descriptors.
pub fn list_session_file(file: &SessionFile) -> Result<(Option<Session>, Vec<Warning>), WalkError> {
    let (session, warnings, _) = list_session_file_with(file, &NoBodies)?;
    Ok((session, warnings))
}

thread_local! {
    /// The first bytes of the file whose header this thread read last, when a body reader
    /// asked for them ([`BodyReader::head_bytes`]): `HEAD.0[..HEAD.1]`. The buffer is reused
    /// from file to file.
    static HEAD: std::cell::RefCell<(Vec<u8>, usize)> =
        const { std::cell::RefCell::new((Vec::new(), 0)) };
}

/// Reads the header of an opened file, with a first read of `head_bytes` kept in [`HEAD`]
/// when that is more than nothing; returns the fields and whether those bytes are the whole
/// file (always false without them, and [`HEAD`] then holds none).
fn read_header(
    file: &mut std::fs::File,
    head_bytes: usize,
) -> Result<(pi_retrospect_core::HeaderFields, bool), HeaderError> {
    if head_bytes == 0 {
        HEAD.with_borrow_mut(|(_, n_read)| *n_read = 0);
        return read_listed_header_from(file).map(|header| (header, false));
    }
    HEAD.with_borrow_mut(|(head, n_read)| {
        *n_read = 0;
        let (header, filled, is_whole) = read_listed_header_into(file, head, head_bytes)?;
        *n_read = filled;
        Ok((header, is_whole))
    })
}

/// Reads one top-level session like [`list_session_file`], and the bodies `reader` plans for
/// its tree, each on the descriptor its header was read through, right after the header.
pub fn list_session_file_with<R: BodyReader>(
    file: &SessionFile,
    reader: &R,
) -> Result<ListedTree<R::Body>, WalkError> {
    let mut warnings = Vec::new();
    let mut bodies = Vec::new();
    let head_bytes = reader.head_bytes();
    let header = match retry_out_of_descriptors(|| open_session_file(Path::new(&file.path))) {
        Ok(mut opened) => read_header(&mut opened, head_bytes).map(|header| (header, opened)),
        Err(error) => {
            fail_if_out_of_descriptors(&file.path, &error)?;
            Err(HeaderError::Open(describe_io(&error)))
        }
    };
    let ((header, is_whole_head), opened) = match header {
        Ok(read) => read,
        Err(error) => {
            warnings.push(Warning::new(&file.path, error.to_string()));
            return Ok((None, warnings, bodies));
        }
    };
    let row = SessionRow {
        path: file.path.clone(),
        header,
    };
    let plan = reader.plan(&row);
    let mut own_summary = None;
    if let Some((_, kind)) = plan {
        let body = HEAD.with_borrow(|(head, n_read)| {
            reader.read(
                kind,
                &row.path,
                &opened,
                Head {
                    bytes: &head[..*n_read],
                    is_whole: is_whole_head,
                },
            )
        });
        match reader.keep_on_session(body) {
            Ok(summary) => own_summary = Some(summary),
            Err(body) => bodies.push((row.path.clone(), body)),
        }
    }
    drop(opened);
    let runs_plan = match plan {
        Some((BodyReach::Tree, kind)) => Some((reader, kind)),
        _ => None,
    };
    let mut session = Session::from_row(row);
    session.summary = own_summary.map(Box::new);
    if file.has_container
        && let Some(container) = container_of(&file.path)
    {
        let mut found = Found::new();
        let opened = retry_out_of_descriptors(|| {
            rustix::fs::open(container, DIR_FLAGS, Mode::empty()).map_err(io::Error::from)
        });
        match opened {
            Ok(fd) => {
                // The container is the anchor of everything below it, and the first directory
                // read (as `.` below itself).
                let pending = PendingDir {
                    anchor: Arc::new(fd),
                    relative: ".".to_owned(),
                    path: container.to_owned(),
                    is_forks_dir: false,
                };
                walk_runs(pending, None, true, runs_plan, &mut found)?;
            }
            // Gone since the project directory was listed: nothing to list.
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => {
                fail_if_out_of_descriptors(container, &error)?;
                found.warnings.push(subagent_dir_warning(container, &error));
            }
        }
        warnings.append(&mut found.warnings);
        bodies.append(&mut found.bodies);
        session.subagent_sessions = nest(container, found.rows);
        attach_summaries(&mut session.subagent_sessions, found.summaries);
    }
    Ok((Some(session), warnings, bodies))
}

/// Puts each of `summaries` (by path) on the run of `runs` (a nested tree, at any depth) with
/// that path. It runs on the worker that read the tree, while its paths are in cache, so the
/// listing's owner finds each run's facts on the run itself.
fn attach_summaries(runs: &mut [Session], summaries: Vec<(String, SessionSummary)>) {
    if summaries.is_empty() {
        return;
    }
    let mut by_path: HashMap<String, SessionSummary, foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(summaries.len(), Default::default());
    by_path.extend(summaries);
    // An explicit work list: runs nest thousands of levels deep in a hostile store.
    let mut pending: Vec<&mut Session> = runs.iter_mut().collect();
    while let Some(run) = pending.pop() {
        if let Some(summary) = by_path.remove(run.path.as_str()) {
            run.summary = Some(Box::new(summary));
        }
        if by_path.is_empty() {
            return;
        }
        pending.extend(run.subagent_sessions.iter_mut());
    }
}

/// Lists one project directory: its `*.jsonl` regular files and which of them have a container.
fn list_project_dir(dir: &str, store: &Store) -> Result<Discovered, WalkError> {
    let mut warnings = Vec::new();
    let entries = match retry_out_of_descriptors(|| fs::read_dir(dir)) {
        Ok(entries) => entries,
        Err(error)
            if store.layout == Layout::Flat
                && store.missing_ok
                && error.kind() == io::ErrorKind::NotFound =>
        {
            return Ok((Vec::new(), warnings));
        }
        Err(error) => {
            fail_if_out_of_descriptors(dir, &error)?;
            let reason = match store.layout {
                Layout::Projects => {
                    format!("project directory not readable: {}", describe_io(&error))
                }
                Layout::Flat => format!("sessions root not readable: {}", describe_io(&error)),
            };
            warnings.push(Warning::new(dir, reason));
            return Ok((Vec::new(), warnings));
        }
    };
    let mut session_names = Vec::new();
    let mut directory_names = std::collections::HashSet::new();
    // Symlinks not named like a session file: one named like a session's container hides
    // that session's runs, and is said once the session files are known.
    let mut symlink_names = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                warnings.push(Warning::new(
                    dir,
                    format!("project directory not readable: {}", describe_io(&error)),
                ));
                continue;
            }
        };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        if kind.is_dir() {
            if let Some(name) = name.to_str() {
                directory_names.insert(name.to_owned());
            }
        } else if name.as_encoded_bytes().ends_with(b".jsonl") {
            if kind.is_file() {
                match name.to_str() {
                    Some(name) => session_names.push(name.to_owned()),
                    None => warnings.push(non_utf8_warning(dir, name.as_encoded_bytes(), "file")),
                }
            } else {
                // A symlink or a FIFO is never opened (it could lead out of the store or
                // block), but it is not dropped without a word either.
                warnings.push(Warning::out_of_scope(
                    lossy_join(dir, name.as_encoded_bytes()),
                    not_entered_reason(&kind, "regular file"),
                ));
            }
        } else if kind.is_symlink()
            && let Some(name) = name.to_str()
        {
            symlink_names.push(name.to_owned());
        }
    }
    // A container that is a symlink is never entered, so its runs are not listed: said once,
    // like a symlinked session file. A symlink no session file claims
    // (`not-a-session -> elsewhere`) is out of scope by rule and not said.
    if !symlink_names.is_empty() {
        let stems: std::collections::HashSet<&str> = session_names
            .iter()
            .filter_map(|name| container_of(name))
            .collect();
        for name in symlink_names {
            if stems.contains(name.as_str()) {
                warnings.push(Warning::out_of_scope(join(dir, &name), SYMLINK_REASON));
            }
        }
    }
    // A session's container whose session file is gone (Pi deletes the file, not the runs
    // pi-subagents wrote beside it): its runs belong to no session, so they are not listed,
    // but said, as their calls are counted nowhere.
    let stems: std::collections::HashSet<&str> = session_names
        .iter()
        .filter_map(|name| container_of(name))
        .collect();
    let mut orphans: Vec<&String> = directory_names
        .iter()
        .filter(|name| is_session_stem(name) && !stems.contains(name.as_str()))
        .collect();
    orphans.sort();
    for name in orphans {
        warnings.push(Warning::out_of_scope(join(dir, name), ORPHAN_REASON));
    }
    let files = session_names
        .into_iter()
        .map(|name| {
            let has_container =
                container_of(&name).is_some_and(|stem| directory_names.contains(stem));
            SessionFile {
                path: join(dir, &name),
                has_container,
            }
        })
        .collect();
    Ok((files, warnings))
}

/// Flags for opening a directory inside a container: never through a symlink.
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
/// Flags for opening a run's transcript: never through a symlink, never blocking on a FIFO.
const FILE_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::CLOEXEC);

/// Path bytes below an anchor after which a directory becomes an anchor itself: far below
/// `PATH_MAX`, so every open stays one short relative path.
const ANCHOR_EVERY_BYTES: usize = 1024;
/// The longest path, in bytes, that a program can open by name: Linux's `PATH_MAX` (4096)
/// less its terminating NUL. A run deeper than that can be read by no command given its path
/// (`show PATH`, Pi itself), and holding every such path made memory grow with the square of
/// the depth, so the walk stops there and says so.
const PATH_MAX_BYTES: usize = 4095;
/// Waits, doubling from 1 ms, before an open that failed for lack of descriptors is retried.
const DESCRIPTOR_RETRIES: u32 = 7;

/// What the walk of one container found.
#[derive(Debug)]
struct Found<T> {
    rows: Vec<SessionRow>,
    warnings: Vec<Warning>,
    /// What was read of the runs' bodies, when their tree's plan asked.
    bodies: Bodies<T>,
    /// The facts of runs' bodies the reader keeps on the sessions, by path, until the runs
    /// are nested and they can be attached.
    summaries: Vec<(String, SessionSummary)>,
}

impl<T> Found<T> {
    fn new() -> Found<T> {
        Found {
            rows: Vec::new(),
            warnings: Vec::new(),
            bodies: Vec::new(),
            summaries: Vec::new(),
        }
    }
}

/// The reader and what it reads, when the bodies of a tree's runs are read.
type RunsPlan<'a, R> = Option<(&'a R, <R as BodyReader>::Kind)>;

/// A directory inside a container still to be read.
#[derive(Debug)]
struct PendingDir {
    /// The descriptor it is opened relative to: the container, or an ancestor.
    anchor: Arc<OwnedFd>,
    /// Its path relative to `anchor`: `.`, or one or more valid UTF-8 components.
    relative: String,
    /// Its path, for rows and warnings.
    path: String,
    /// It is a `forks` directory, whose `*.jsonl` files are runs.
    is_forks_dir: bool,
}

/// Reads every run under `first`: no symlinks, no artifact copies, each header read as soon as
/// its file is found. Directories wait on an explicit stack, so depth costs heap, not stack.
///
/// A launch directory can hold thousands of run directories (one session with 5,000
/// runs), and visiting them one after another on one worker made that session take twice as
/// long as 5,000 separate sessions. So when `may_split` holds, a directory with
/// [`PARALLEL_DIR_ENTRIES`] entries or more is visited in parallel, each of its subdirectories
/// walked serially on its own stack (`may_split` false): rayon work is never nested more than
/// once, however deep the tree. The rows and warnings are sorted by the caller, so their order here does not
/// matter.
fn walk_runs<R: BodyReader>(
    first: PendingDir,
    first_fd: Option<OwnedFd>,
    may_split: bool,
    runs_plan: RunsPlan<'_, R>,
    found: &mut Found<R::Body>,
) -> Result<(), WalkError> {
    let mut first_fd = first_fd;
    let mut stack = vec![first];
    while let Some(pending) = stack.pop() {
        let opened = match first_fd.take() {
            Some(fd) => Ok(fd),
            None => {
                retry_out_of_descriptors(|| open_below(pending.anchor.as_fd(), &pending.relative))
            }
        };
        let fd = match opened {
            Ok(fd) => fd,
            // Gone since its parent was listed: nothing to list.
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => {
                fail_if_out_of_descriptors(&pending.path, &error)?;
                found
                    .warnings
                    .push(subagent_dir_warning(&pending.path, &error));
                continue;
            }
        };
        let Some((reader, entries)) = read_entries(fd, &pending.path, found) else {
            continue;
        };
        let Ok(dir_fd) = reader.fd() else {
            continue;
        };
        let has_subdirs = entries
            .iter()
            .any(|(_, kind)| matches!(*kind, FileType::Directory | FileType::Unknown));
        let base = if has_subdirs {
            child_base(dir_fd, &pending, found)?
        } else {
            None
        };
        let base = base.as_ref();
        if may_split && entries.len() >= PARALLEL_DIR_ENTRIES {
            let visited: Vec<Result<Found<R::Body>, WalkError>> = entries
                .into_par_iter()
                .map(|(name, kind)| {
                    let mut entry_found = Found::new();
                    let mut subdirs = Vec::new();
                    visit_run_entry(
                        dir_fd,
                        &pending,
                        base,
                        (&name, kind),
                        runs_plan,
                        &mut subdirs,
                        &mut entry_found,
                    )?;
                    for subdir in subdirs {
                        // Its parent is still open: one short `openat` instead of a path
                        // resolved from the anchor (thousands of runs in one launch).
                        let fd = retry_out_of_descriptors(|| {
                            rustix::fs::openat(dir_fd, &*name, DIR_FLAGS, Mode::empty())
                                .map_err(io::Error::from)
                        });
                        walk_runs(subdir, fd.ok(), false, runs_plan, &mut entry_found)?;
                    }
                    Ok(entry_found)
                })
                .collect();
            for entry_found in visited {
                let mut entry_found = entry_found?;
                found.rows.append(&mut entry_found.rows);
                found.warnings.append(&mut entry_found.warnings);
                found.bodies.append(&mut entry_found.bodies);
                found.summaries.append(&mut entry_found.summaries);
            }
            continue;
        }
        let mut subdirs = Vec::new();
        for (name, kind) in entries {
            visit_run_entry(
                dir_fd,
                &pending,
                base,
                (&name, kind),
                runs_plan,
                &mut subdirs,
                found,
            )?;
        }
        // Reversed, so the stack pops them in listing order.
        stack.extend(subdirs.into_iter().rev());
    }
    Ok(())
}

/// Reads the entries of the directory open as `fd`, `.` and `..` left out.
fn read_entries<T>(
    fd: OwnedFd,
    path: &str,
    found: &mut Found<T>,
) -> Option<(Dir, Vec<(CString, FileType)>)> {
    let mut reader = match Dir::new(fd) {
        Ok(reader) => reader,
        Err(error) => {
            found
                .warnings
                .push(subagent_dir_warning(path, &error.into()));
            return None;
        }
    };
    let mut entries = Vec::new();
    while let Some(entry) = reader.read() {
        match entry {
            Ok(entry) => {
                let name = entry.file_name();
                if name.to_bytes() != b"." && name.to_bytes() != b".." {
                    entries.push((name.to_owned(), entry.file_type()));
                }
            }
            Err(error) => {
                found
                    .warnings
                    .push(subagent_dir_warning(path, &error.into()));
                break;
            }
        }
    }
    Some((reader, entries))
}

/// Opens the directory at `relative` (components separated by `/`) below `anchor`, following
/// no symlink on the way: one `openat2` with `RESOLVE_NO_SYMLINKS` where the kernel has it,
/// else one `openat` with `O_NOFOLLOW` per component, holding at most two descriptors.
fn open_below(anchor: BorrowedFd<'_>, relative: &str) -> io::Result<OwnedFd> {
    if !relative.contains('/') {
        // One component (or `.`): `O_NOFOLLOW` alone refuses a symlink.
        return rustix::fs::openat(anchor, relative, DIR_FLAGS, Mode::empty()).map_err(Into::into);
    }
    let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS | ResolveFlags::BENEATH;
    for _ in 0..3 {
        match rustix::fs::openat2(anchor, relative, DIR_FLAGS, Mode::empty(), resolve) {
            // A concurrent rename can make the kernel refuse to vouch for the path: try again.
            Err(Errno::AGAIN) => continue,
            // No `openat2` (Linux before 5.6, or a sandbox): walk the components.
            Err(Errno::NOSYS | Errno::PERM) => break,
            result => return result.map_err(Into::into),
        }
    }
    let mut current: Option<OwnedFd> = None;
    for component in relative.split('/') {
        let base = current.as_ref().map_or(anchor, AsFd::as_fd);
        let next = rustix::fs::openat(base, component, DIR_FLAGS, Mode::empty())?;
        current = Some(next);
    }
    current.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
}

/// Visits one entry (`name` and type) of the directory `dir` (open as `dir_fd`): reads a
/// run's header into `found`, and its body when `runs_plan` asks, on the same descriptor; or
/// adds a subdirectory to `subdirs`, to be opened from `base`.
fn visit_run_entry<R: BodyReader>(
    dir_fd: BorrowedFd<'_>,
    dir: &PendingDir,
    base: Option<&ChildBase>,
    (name, kind): (&CStr, FileType),
    runs_plan: RunsPlan<'_, R>,
    subdirs: &mut Vec<PendingDir>,
    found: &mut Found<R::Body>,
) -> Result<(), WalkError> {
    // Some filesystems do not report types in directory listings: ask, without following.
    let kind = match kind {
        FileType::Unknown => match rustix::fs::statat(dir_fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => FileType::from_raw_mode(stat.st_mode),
            Err(_) => return Ok(()),
        },
        kind => kind,
    };
    let bytes = name.to_bytes();
    if kind == FileType::Directory {
        if bytes == ARTIFACTS_DIR_NAME.as_bytes() {
            return Ok(());
        }
        let Ok(text) = name.to_str() else {
            found
                .warnings
                .push(non_utf8_warning(&dir.path, bytes, "directory"));
            return Ok(());
        };
        let path = join(&dir.path, text);
        if path.len() + 1 + RUN_FILE_NAME.len() > PATH_MAX_BYTES {
            found.warnings.push(too_long_warning(
                path,
                "a run inside it would be longer than",
                "not entered",
            ));
            return Ok(());
        }
        // Without a base the directory could not be anchored; that was reported.
        if let Some(base) = base {
            subdirs.push(PendingDir {
                anchor: Arc::clone(&base.anchor),
                relative: format!("{}{text}", base.prefix),
                path,
                is_forks_dir: text == FORKS_DIR_NAME,
            });
        }
    } else if !(bytes == RUN_FILE_NAME.as_bytes()
        || (dir.is_forks_dir && bytes.ends_with(b".jsonl")))
    {
        // Not a run's name: out of scope, whatever it is, unless it is a symlink to a
        // directory, where runs the walk would have entered could sit (`<launch-uuid>/`,
        // `run-<n>/`): not followed, but said. Its target's type is read
        // without opening anything; a symlink to a file, a dangling one or a loop is not said.
        if kind == FileType::Symlink
            && bytes != ARTIFACTS_DIR_NAME.as_bytes()
            && rustix::fs::statat(dir_fd, name, AtFlags::empty())
                .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Directory)
        {
            found.warnings.push(Warning::out_of_scope(
                lossy_join(&dir.path, bytes),
                SYMLINK_REASON,
            ));
        }
    } else if kind != FileType::RegularFile {
        // A symlink or a FIFO named like a run is never opened, but said.
        let reason = if kind == FileType::Symlink {
            SYMLINK_REASON.to_owned()
        } else {
            HeaderError::NotRegular(describe_rustix_type(kind)).to_string()
        };
        found
            .warnings
            .push(Warning::out_of_scope(lossy_join(&dir.path, bytes), reason));
    } else {
        let Ok(text) = name.to_str() else {
            found
                .warnings
                .push(non_utf8_warning(&dir.path, bytes, "file"));
            return Ok(());
        };
        let path = join(&dir.path, text);
        if path.len() > PATH_MAX_BYTES {
            found
                .warnings
                .push(too_long_warning(path, "longer than", "skipped"));
            return Ok(());
        }
        let opened = retry_out_of_descriptors(|| {
            rustix::fs::openat(dir_fd, name, FILE_FLAGS, Mode::empty()).map_err(io::Error::from)
        });
        let header = match opened {
            Ok(fd) => {
                let mut file = std::fs::File::from(fd);
                let head_bytes = runs_plan.map_or(0, |(reader, _)| reader.head_bytes());
                read_header(&mut file, head_bytes).map(|header| (header, file))
            }
            Err(error) => {
                fail_if_out_of_descriptors(&path, &error)?;
                Err(HeaderError::Open(describe_io(&error)))
            }
        };
        match header {
            Ok(((header, is_whole_head), file)) => {
                if let Some((reader, kind)) = runs_plan {
                    let body = HEAD.with_borrow(|(head, n_read)| {
                        reader.read(
                            kind,
                            &path,
                            &file,
                            Head {
                                bytes: &head[..*n_read],
                                is_whole: is_whole_head,
                            },
                        )
                    });
                    match reader.keep_on_session(body) {
                        Ok(summary) => found.summaries.push((path.clone(), summary)),
                        Err(body) => found.bodies.push((path.clone(), body)),
                    }
                }
                drop(file);
                found.rows.push(SessionRow { path, header });
            }
            Err(error) => found.warnings.push(Warning::new(path, error.to_string())),
        }
    }
    Ok(())
}

/// Where the subdirectories of one directory are opened from: an anchor and the path from it
/// to the directory (empty, or ending in `/`).
#[derive(Debug)]
struct ChildBase {
    anchor: Arc<OwnedFd>,
    prefix: String,
}

/// Returns where the subdirectories of `dir` (open as `dir_fd`) are opened from: `dir`'s own
/// anchor while the relative path stays short, else `dir` itself, re-opened as a new anchor.
/// `None` (reported) when the re-open fails.
fn child_base<T>(
    dir_fd: BorrowedFd<'_>,
    dir: &PendingDir,
    found: &mut Found<T>,
) -> Result<Option<ChildBase>, WalkError> {
    if dir.relative == "." {
        return Ok(Some(ChildBase {
            anchor: Arc::clone(&dir.anchor),
            prefix: String::new(),
        }));
    }
    // A name is at most 255 bytes, so every child's relative path stays within the bound.
    if dir.relative.len() + 1 + 255 <= ANCHOR_EVERY_BYTES {
        return Ok(Some(ChildBase {
            anchor: Arc::clone(&dir.anchor),
            prefix: format!("{}/", dir.relative),
        }));
    }
    let reopened = retry_out_of_descriptors(|| {
        rustix::fs::openat(dir_fd, ".", DIR_FLAGS, Mode::empty()).map_err(io::Error::from)
    });
    match reopened {
        Ok(anchor) => Ok(Some(ChildBase {
            anchor: Arc::new(anchor),
            prefix: String::new(),
        })),
        Err(error) => {
            fail_if_out_of_descriptors(&dir.path, &error)?;
            found.warnings.push(subagent_dir_warning(&dir.path, &error));
            Ok(None)
        }
    }
}

/// Returns whether `error` means the process (EMFILE) or the system (ENFILE) has no file
/// descriptor left.
fn is_out_of_descriptors(error: &io::Error) -> bool {
    matches!(
        Errno::from_io_error(error),
        Some(Errno::MFILE | Errno::NFILE)
    )
}

/// Runs `open`, and while it fails for lack of descriptors (another worker may be about to
/// close some) waits 1, 2, 4, ... 64 ms and tries again.
fn retry_out_of_descriptors<T>(mut open: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    let mut wait = Duration::from_millis(1);
    for _ in 0..DESCRIPTOR_RETRIES {
        match open() {
            Err(error) if is_out_of_descriptors(&error) => {
                std::thread::sleep(wait);
                wait *= 2;
            }
            result => return result,
        }
    }
    open()
}

/// Fails the walk when `error` is a lack of descriptors: skipping the directory or file would
/// silently change the listing.
fn fail_if_out_of_descriptors(path: &str, error: &io::Error) -> Result<(), WalkError> {
    if is_out_of_descriptors(error) {
        return Err(WalkError::OutOfDescriptors {
            path: path.to_owned(),
            reason: describe_io(error),
        });
    }
    Ok(())
}

/// Returns whether a root entry's name has the `--<slug>--` shape.
///
/// This mirrors the reference's `/^--.*--$/`, whose `.` matches no line terminator.
/// Returns whether a root entry's name has the contract's project shape: it starts and ends
/// with `--` (at least four bytes). A line break inside counts like any other byte (the
/// reference's `/^--.*--$/` skipped `--a<LF>b--/`, so nobody listed its sessions).
fn is_project_dir_name(name: &[u8]) -> bool {
    name.len() >= 4 && name.starts_with(b"--") && name.ends_with(b"--")
}

/// Returns whether a root entry's name starts and ends with `--` yet is too short to be
/// `--<slug>--` (`--`, `---`): a near miss worth a word, unlike `permission-forwarding/`.
fn is_short_dash_name(name: &[u8]) -> bool {
    name.len() < 4 && name.starts_with(b"--") && name.ends_with(b"--")
}

/// Why an entry named like a session file or project directory is not read: the walk follows
/// no symlink and opens only what it wants (`wanted`: "regular file", "directory").
fn not_entered_reason(kind: &fs::FileType, wanted: &str) -> String {
    if kind.is_symlink() {
        SYMLINK_REASON.to_owned()
    } else if wanted == "regular file" {
        HeaderError::NotRegular(describe_file_type(kind)).to_string()
    } else {
        let what = if kind.is_file() {
            "regular file"
        } else {
            describe_file_type(kind)
        };
        format!("not a {wanted}: {what}")
    }
}

/// The reason given for a symlink the walk does not follow.
const SYMLINK_REASON: &str = "is a symbolic link (not followed)";
const ORPHAN_REASON: &str = "holds the subagent runs of a session file that is not there: they are not listed, and not counted";

/// Returns whether a directory name is a session file's stem as Pi names them
/// (`2026-03-01T10-00-00-000Z_<id>`).
fn is_session_stem(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.len() > 25
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4] == b'-'
        && bytes[10] == b'T'
        && bytes[23] == b'Z'
        && bytes[24] == b'_'
}

/// Returns what a directory entry of type `kind` is, in the words of
/// [`pi_retrospect_read::describe_file_type`].
fn describe_rustix_type(kind: FileType) -> &'static str {
    match kind {
        FileType::Fifo => "FIFO",
        FileType::Socket => "socket",
        FileType::CharacterDevice | FileType::BlockDevice => "device",
        FileType::Directory => "directory",
        FileType::Symlink => "symlink",
        _ => "special file",
    }
}

/// Joins `dir` and a name that may not be valid UTF-8 (shown with U+FFFD replacements).
fn lossy_join(dir: &str, name: &[u8]) -> String {
    join(dir, &String::from_utf8_lossy(name))
}

fn join(dir: &str, name: &str) -> String {
    let mut path = String::with_capacity(dir.len() + 1 + name.len());
    path.push_str(dir);
    if !dir.ends_with('/') {
        path.push('/');
    }
    path.push_str(name);
    path
}

fn root_warning(root: &str, error: &io::Error) -> Warning {
    Warning::new(
        root,
        format!("sessions root not readable: {}", describe_io(error)),
    )
}

fn subagent_dir_warning(dir: &str, error: &io::Error) -> Warning {
    Warning::new(
        dir,
        format!("subagent directory not readable: {}", describe_io(error)),
    )
}

fn too_long_warning(path: String, what: &str, outcome: &str) -> Warning {
    Warning::new(
        path,
        format!(
            "path too long: {what} PATH_MAX ({} bytes), which no program can open by name; \
             {outcome}",
            PATH_MAX_BYTES + 1
        ),
    )
}

fn non_utf8_warning(dir: &str, name: &[u8], what: &str) -> Warning {
    let lossy = String::from_utf8_lossy(name);
    Warning::new(
        join(dir, &lossy),
        format!("{what} name is not valid UTF-8 (shown with U+FFFD replacements); skipped"),
    )
}
