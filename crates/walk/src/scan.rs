//! The filesystem side of the walk: directory listings, candidate files and header reads.

use std::fs;
use std::io;
use std::path::Path;

use pi_retrospect_core::path::container_of;
use pi_retrospect_core::{Session, SessionRow, Warning, nest};
use pi_retrospect_header::{HeaderError, describe_io, read_listed_header, read_listed_header_from};
use rayon::prelude::*;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::CStr;
use std::os::fd::{BorrowedFd, OwnedFd};

use crate::{Layout, Store};

/// Name pi-subagents gives every run transcript.
const RUN_FILE_NAME: &str = "session.jsonl";
/// Directory under a session's container that holds runs started from a fork of its context.
const FORKS_DIR_NAME: &str = "forks";
/// Entries from which a directory inside a container is visited in parallel (see
/// `collect_runs`).
const PARALLEL_DIR_ENTRIES: usize = 64;
/// Directory of transcript copies pi-subagents keeps; never sessions.
const ARTIFACTS_DIR_NAME: &str = "subagent-artifacts";

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
/// Project directories are listed in parallel; the result is in no particular order.
pub fn discover_session_files(store: &Store) -> (Vec<SessionFile>, Vec<Warning>) {
    let mut warnings = Vec::new();
    let project_dirs: Vec<String> = match store.layout {
        Layout::Flat => vec![store.root.clone()],
        Layout::Projects => {
            let entries = match fs::read_dir(&store.root) {
                Ok(entries) => entries,
                Err(error) if store.missing_ok && error.kind() == io::ErrorKind::NotFound => {
                    return (Vec::new(), warnings);
                }
                Err(error) => {
                    warnings.push(root_warning(&store.root, &error));
                    return (Vec::new(), warnings);
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
                let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
                if !is_dir {
                    continue;
                }
                let name = entry.file_name();
                let bytes = name.as_encoded_bytes();
                if !is_project_dir_name(bytes) {
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

    let per_dir: Vec<(Vec<SessionFile>, Vec<Warning>)> = project_dirs
        .par_iter()
        .map(|dir| list_project_dir(dir, store))
        .collect();
    let mut files = Vec::new();
    for (mut dir_files, mut dir_warnings) in per_dir {
        files.append(&mut dir_files);
        warnings.append(&mut dir_warnings);
    }
    (files, warnings)
}

/// Reads one top-level session: its header, then every transcript under its container.
///
/// Returns the nested session (or `None` when its header is invalid) and its warnings.
pub fn list_session_file(file: &SessionFile) -> (Option<Session>, Vec<Warning>) {
    let mut warnings = Vec::new();
    let header = match read_listed_header(Path::new(&file.path)) {
        Ok(header) => header,
        Err(error) => {
            warnings.push(Warning::new(&file.path, error.to_string()));
            return (None, warnings);
        }
    };
    let mut session = Session::from_row(SessionRow {
        path: file.path.clone(),
        header,
    });
    if file.has_container
        && let Some(container) = container_of(&file.path)
    {
        let mut rows = Vec::new();
        match rustix::fs::open(container, DIR_FLAGS, Mode::empty()) {
            Ok(fd) => collect_runs(fd, container, false, &mut rows, &mut warnings),
            // Gone since the project directory was listed: nothing to list.
            Err(Errno::NOENT) => {}
            Err(error) => warnings.push(subagent_dir_warning(container, &error.into())),
        }
        session.subagent_sessions = nest(container, rows);
    }
    (Some(session), warnings)
}

/// Lists one project directory: its `*.jsonl` regular files and which of them have a container.
fn list_project_dir(dir: &str, store: &Store) -> (Vec<SessionFile>, Vec<Warning>) {
    let mut warnings = Vec::new();
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error)
            if store.layout == Layout::Flat
                && store.missing_ok
                && error.kind() == io::ErrorKind::NotFound =>
        {
            return (Vec::new(), warnings);
        }
        Err(error) => {
            let reason = match store.layout {
                Layout::Projects => {
                    format!("project directory not readable: {}", describe_io(&error))
                }
                Layout::Flat => format!("sessions root not readable: {}", describe_io(&error)),
            };
            warnings.push(Warning::new(dir, reason));
            return (Vec::new(), warnings);
        }
    };
    let mut session_names = Vec::new();
    let mut directory_names = std::collections::HashSet::new();
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
        } else if kind.is_file() && name.as_encoded_bytes().ends_with(b".jsonl") {
            match name.to_str() {
                Some(name) => session_names.push(name.to_owned()),
                None => warnings.push(non_utf8_warning(dir, name.as_encoded_bytes(), "file")),
            }
        }
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
    (files, warnings)
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

/// Reads every run under the directory `dir` (open as `dir_fd`): depth first, no symlinks, no
/// artifact copies, each header read as soon as its file is found.
///
/// Directories and files are opened relative to their parent's descriptor, so the kernel
/// resolves one name per open instead of the whole path again (a session's runs sit five or
/// six levels below the root, each in a directory of its own).
fn collect_runs(
    dir_fd: OwnedFd,
    dir: &str,
    is_forks_dir: bool,
    rows: &mut Vec<SessionRow>,
    warnings: &mut Vec<Warning>,
) {
    let mut reader = match Dir::new(dir_fd) {
        Ok(reader) => reader,
        Err(error) => {
            warnings.push(subagent_dir_warning(dir, &error.into()));
            return;
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
                warnings.push(subagent_dir_warning(dir, &error.into()));
                break;
            }
        }
    }
    let Ok(dir_fd) = reader.fd() else {
        return;
    };
    // A launch directory can hold thousands of run directories (issue 4's one session with
    // 5,000 runs). Visiting them one after another on one worker made that session take twice
    // as long as 5,000 separate sessions, so a large directory's entries are visited in
    // parallel. `collect` keeps their order, so `rows` and `warnings` come out exactly as the
    // serial loop leaves them.
    if entries.len() >= PARALLEL_DIR_ENTRIES {
        let visited: Vec<(Vec<SessionRow>, Vec<Warning>)> = entries
            .into_par_iter()
            .map(|(name, kind)| {
                let mut entry_rows = Vec::new();
                let mut entry_warnings = Vec::new();
                visit_run_entry(
                    dir_fd,
                    dir,
                    is_forks_dir,
                    &name,
                    kind,
                    &mut entry_rows,
                    &mut entry_warnings,
                );
                (entry_rows, entry_warnings)
            })
            .collect();
        for (mut entry_rows, mut entry_warnings) in visited {
            rows.append(&mut entry_rows);
            warnings.append(&mut entry_warnings);
        }
    } else {
        for (name, kind) in entries {
            visit_run_entry(dir_fd, dir, is_forks_dir, &name, kind, rows, warnings);
        }
    }
}

/// Visits one entry of a directory inside a container (see [`collect_runs`]).
fn visit_run_entry(
    dir_fd: BorrowedFd<'_>,
    dir: &str,
    is_forks_dir: bool,
    name: &CStr,
    kind: FileType,
    rows: &mut Vec<SessionRow>,
    warnings: &mut Vec<Warning>,
) {
    // Some filesystems do not report types in directory listings: ask, without following.
    let kind = match kind {
        FileType::Unknown => match rustix::fs::statat(dir_fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => FileType::from_raw_mode(stat.st_mode),
            Err(_) => return,
        },
        kind => kind,
    };
    let bytes = name.to_bytes();
    if kind == FileType::Directory {
        if bytes == ARTIFACTS_DIR_NAME.as_bytes() {
            return;
        }
        let Ok(text) = name.to_str() else {
            warnings.push(non_utf8_warning(dir, bytes, "directory"));
            return;
        };
        let path = join(dir, text);
        match rustix::fs::openat(dir_fd, name, DIR_FLAGS, Mode::empty()) {
            Ok(fd) => collect_runs(fd, &path, text == FORKS_DIR_NAME, rows, warnings),
            Err(Errno::NOENT) => {}
            Err(error) => warnings.push(subagent_dir_warning(&path, &error.into())),
        }
    } else if kind == FileType::RegularFile
        && (bytes == RUN_FILE_NAME.as_bytes() || (is_forks_dir && bytes.ends_with(b".jsonl")))
    {
        let Ok(text) = name.to_str() else {
            warnings.push(non_utf8_warning(dir, bytes, "file"));
            return;
        };
        let path = join(dir, text);
        let header = rustix::fs::openat(dir_fd, name, FILE_FLAGS, Mode::empty())
            .map_err(|error| HeaderError::Open(describe_io(&error.into())))
            .and_then(|fd| read_listed_header_from(&mut std::fs::File::from(fd)));
        match header {
            Ok(header) => rows.push(SessionRow { path, header }),
            Err(error) => warnings.push(Warning::new(path, error.to_string())),
        }
    }
}

/// Returns whether a root entry's name has the `--<slug>--` shape.
///
/// This mirrors the reference's `/^--.*--$/`, whose `.` matches no line terminator.
/// Returns whether a root entry's name has the contract's project shape: it starts and ends
/// with `--` (at least four bytes). A line break inside counts like any other byte (issue 11:
/// the reference's `/^--.*--$/` skipped `--a<LF>b--/`, so nobody listed its sessions).
fn is_project_dir_name(name: &[u8]) -> bool {
    name.len() >= 4 && name.starts_with(b"--") && name.ends_with(b"--")
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

fn non_utf8_warning(dir: &str, name: &[u8], what: &str) -> Warning {
    let lossy = String::from_utf8_lossy(name);
    Warning::new(
        join(dir, &lossy),
        format!("{what} name is not valid UTF-8 (shown with U+FFFD replacements); skipped"),
    )
}
