//! Writing a document to the one file asked for: never through a symbolic link, never into a
//! session store, never over a session, a FIFO or a device, and never half-written.
//!
//! The target's directory is opened once and everything after is relative to that
//! descriptor, so a path flipped between a check and a write cannot redirect it: the
//! directory's real ancestry is read by device and inode from the opened descriptor (`..` by
//! `..`), the final component is examined with `lstat` and never followed, and the document is
//! written to a new temporary file in that directory (`O_CREAT | O_EXCL | O_NOFOLLOW`, same
//! file system), then linked (a new file) or renamed (a replaced one) onto the name. A rename
//! replaces the directory entry, so even a symbolic link swapped in at the last moment is
//! replaced, not followed; the file it pointed to is never opened.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::error::HandoffError;

/// What to do when the output file already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExistingFile {
    /// Fail with [`HandoffError::Exists`] and leave it untouched.
    Refuse,
    /// Replace it (`--force`), when it is a regular file that is not a session.
    Replace,
}

/// A directory that `--out` never writes into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Protected {
    /// A session store's root: nothing is written in it or anywhere below it.
    Store(PathBuf),
    /// The directory of a session file outside every store: nothing is written beside the
    /// session (its subdirectories, which may be anything, are not refused).
    SessionDirectory(PathBuf),
}

impl Protected {
    fn path(&self) -> &Path {
        match self {
            Protected::Store(path) | Protected::SessionDirectory(path) => path,
        }
    }
}

/// How many `..` steps the ancestry walk takes at most: far more than any real path is deep,
/// so that a loop in a broken file system ends.
const MAX_ANCESTORS: usize = 4096;

/// How many temporary names are tried before giving up (each is new to this process, so a
/// clash means another writer in the same directory).
const MAX_TEMPORARY_NAMES: u32 = 64;

/// Writes `contents` to `path`, creating the file; an existing file is handled as `existing`
/// says. A `path` whose directory is one of `protected` or lies below a [`Protected::Store`]
/// (by device and inode, whatever the path says) is refused.
///
/// Refused before anything is written, even with [`ExistingFile::Replace`]: a symbolic link
/// (dangling or not), a directory, a FIFO, a socket or a device (examined without being
/// opened, so a FIFO cannot block), a Pi session file (its first line is a session header),
/// a path naming no file (`dir/..`) and a path ending in `/` (which names a directory, so
/// `e2.md/` never writes `e2.md`). The document is written whole to a temporary file
/// beside the target and then put in place in one step, so a reader never sees half of it
/// and a failed write leaves the target as it was.
pub fn write_file(
    path: &Path,
    contents: &[u8],
    existing: ExistingFile,
    protected: &[Protected],
) -> Result<(), HandoffError> {
    let refuse = |reason: String| HandoffError::Refused {
        path: path.to_owned(),
        reason,
    };
    let write_error = |source: io::Error| HandoffError::Write {
        path: path.to_owned(),
        source,
    };
    let Some(Component::Normal(name)) = path.components().next_back() else {
        return Err(refuse("it names no file".to_owned()));
    };
    // `components` forgets a trailing slash, which asks for a directory: `e2.md/` must not
    // write the file `e2.md`.
    if names_a_directory(path) {
        let without_slash: PathBuf = path.components().collect();
        let reason = match rustix::fs::stat(&without_slash) {
            Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Directory => {
                "it is a directory, not a regular file".to_owned()
            }
            Ok(stat) => format!(
                "it ends in `/`, which asks for a directory, and it is {}",
                match FileType::from_raw_mode(stat.st_mode) {
                    FileType::RegularFile => "a regular file",
                    other => describe_file_type(other),
                }
            ),
            Err(_) => "it ends in `/`, which names a directory, not a file to write".to_owned(),
        };
        return Err(refuse(reason));
    }
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let directory = rustix::fs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| write_error(errno.into()))?;
    match store_holding(directory.as_fd(), protected).map_err(write_error)? {
        Some(Protected::Store(root)) => {
            return Err(refuse(format!(
                "it is inside the session store {}",
                root.display()
            )));
        }
        Some(Protected::SessionDirectory(directory)) => {
            return Err(refuse(format!(
                "it is beside the session file read, in {}",
                directory.display()
            )));
        }
        None => {}
    }
    // A replaced file's permissions carry over to the new one, so a private handoff stays
    // private when it is written again.
    let mut replaced_mode = None;
    match rustix::fs::statat(&directory, name, AtFlags::SYMLINK_NOFOLLOW) {
        Err(Errno::NOENT) => {}
        Err(errno) => return Err(write_error(errno.into())),
        Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => {
                if existing == ExistingFile::Refuse {
                    return Err(HandoffError::Exists {
                        path: path.to_owned(),
                    });
                }
                if is_session_file(directory.as_fd(), name) {
                    return Err(refuse(
                        "it is a Pi session file (its first line is a session header)".to_owned(),
                    ));
                }
                replaced_mode = Some(Mode::from_raw_mode(stat.st_mode & 0o7777));
            }
            FileType::Symlink => {
                let target = rustix::fs::readlinkat(&directory, name, Vec::new())
                    .map(|target| target.to_string_lossy().into_owned())
                    .unwrap_or_default();
                return Err(refuse(format!(
                    "it is a symbolic link (to {target}), which is never followed or replaced"
                )));
            }
            other => {
                return Err(refuse(format!(
                    "it is {}, not a regular file",
                    describe_file_type(other)
                )));
            }
        },
    }
    let (temporary, file) = create_temporary(directory.as_fd()).map_err(write_error)?;
    let written = replaced_mode
        .map_or(Ok(()), |mode| rustix::fs::fchmod(&file, mode))
        .map_err(|errno| write_error(errno.into()))
        .and_then(|()| write_all(file, contents).map_err(write_error))
        .and_then(|()| {
            match existing {
                // `link` fails when the name exists, so a file that appeared since the check is
                // not replaced either.
                ExistingFile::Refuse => {
                    rustix::fs::linkat(&directory, &temporary, &directory, name, AtFlags::empty())
                        .map_err(|errno| match errno {
                            Errno::EXIST => HandoffError::Exists {
                                path: path.to_owned(),
                            },
                            other => write_error(other.into()),
                        })
                }
                ExistingFile::Replace => {
                    rustix::fs::renameat(&directory, &temporary, &directory, name)
                        .map_err(|errno| write_error(errno.into()))
                }
            }
        });
    // After a rename the temporary name is gone already; after a link or a failure it is
    // removed (a failure to remove it changes nothing about the document written or not).
    let _ = rustix::fs::unlinkat(&directory, &temporary, AtFlags::empty());
    written
}

/// Returns whether a path ends in `/` or `/.`, asking for a directory.
fn names_a_directory(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    bytes.ends_with(b"/") || bytes.ends_with(b"/.")
}

/// Returns the protected directory that is `directory`, or the store that is one of its
/// ancestors, by device and inode, walking up from the opened descriptor (so no path is
/// resolved twice).
fn store_holding(
    directory: BorrowedFd<'_>,
    protected: &[Protected],
) -> io::Result<Option<Protected>> {
    let roots: Vec<((u64, u64), &Protected)> = protected
        .iter()
        .filter_map(|root| {
            let stat = rustix::fs::stat(root.path()).ok()?;
            (FileType::from_raw_mode(stat.st_mode) == FileType::Directory)
                .then(|| (identity(&stat), root))
        })
        .collect();
    if roots.is_empty() {
        return Ok(None);
    }
    let mut current: Option<OwnedFd> = None;
    let mut previous = None;
    for step in 0..MAX_ANCESTORS {
        let fd = current.as_ref().map_or(directory, AsFd::as_fd);
        let here = identity(&rustix::fs::fstat(fd)?);
        if let Some((_, root)) = roots
            .iter()
            .find(|(id, root)| *id == here && (step == 0 || matches!(root, Protected::Store(_))))
        {
            return Ok(Some((*root).clone()));
        }
        if previous == Some(here) {
            // `..` of `/` is `/`: the top is reached.
            return Ok(None);
        }
        previous = Some(here);
        current = Some(rustix::fs::openat(
            fd,
            "..",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?);
    }
    Ok(None)
}

/// Returns the device and inode of a file.
fn identity(stat: &rustix::fs::Stat) -> (u64, u64) {
    #[expect(
        clippy::useless_conversion,
        reason = "st_dev and st_ino are narrower than u64 on some targets"
    )]
    (u64::from(stat.st_dev), u64::from(stat.st_ino))
}

/// Returns whether `name` in `directory` is a regular file whose first line is a valid Pi
/// session header; opened without following a link and without blocking, and read only when
/// it is a regular file.
fn is_session_file(directory: BorrowedFd<'_>, name: &OsStr) -> bool {
    let Ok(fd) = rustix::fs::openat(
        directory,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return false;
    };
    let is_regular = rustix::fs::fstat(&fd)
        .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile);
    is_regular && pi_retrospect_header::read_listed_header_from(&mut File::from(fd)).is_ok()
}

/// Creates a new, empty temporary file in `directory` and returns its name and the file.
fn create_temporary(directory: BorrowedFd<'_>) -> io::Result<(PathBuf, File)> {
    let pid = std::process::id();
    let mut last_error = io::Error::from(io::ErrorKind::AlreadyExists);
    for attempt in 0..MAX_TEMPORARY_NAMES {
        let name = PathBuf::from(format!(".pi-retrospect-handoff-{pid}-{attempt}.tmp"));
        match rustix::fs::openat(
            directory,
            &name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        ) {
            Ok(fd) => return Ok((name, File::from(fd))),
            Err(Errno::EXIST) => last_error = Errno::EXIST.into(),
            Err(errno) => return Err(errno.into()),
        }
    }
    Err(last_error)
}

/// Writes `contents` to `file` and flushes it to storage, so that the rename that follows
/// never puts an empty file in place of a full one after a crash.
fn write_all(mut file: File, contents: &[u8]) -> io::Result<()> {
    file.write_all(contents)?;
    file.sync_all()
}

/// Returns a file type in words, for a refusal.
fn describe_file_type(file_type: FileType) -> &'static str {
    match file_type {
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        _ => "not a regular file",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"0199aaaa-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

    fn write(path: &Path, existing: ExistingFile) -> Result<(), HandoffError> {
        write_file(path, b"doc", existing, &[])
    }

    #[test]
    fn refuses_to_replace_unless_forced() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("handoff.md");
        write_file(&path, b"first", ExistingFile::Refuse, &[]).expect("new file");
        let refused = write_file(&path, b"second", ExistingFile::Refuse, &[]);
        assert!(
            matches!(&refused, Err(HandoffError::Exists { path: named }) if *named == path),
            "{refused:?}"
        );
        assert_eq!(std::fs::read(&path).expect("read"), b"first");
        write_file(&path, b"2nd", ExistingFile::Replace, &[]).expect("forced");
        assert_eq!(std::fs::read(&path).expect("read"), b"2nd");
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|entry| entry.expect("entry").file_name())
            .collect();
        assert_eq!(names, [OsStr::new("handoff.md")]);
    }

    #[test]
    fn a_replaced_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("private.md");
        std::fs::write(&path, b"old").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        write_file(&path, b"new", ExistingFile::Replace, &[]).expect("forced");
        assert_eq!(std::fs::read(&path).expect("read"), b"new");
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
        assert_eq!(mode & 0o7777, 0o600);
    }

    #[test]
    fn a_symlink_is_never_followed_or_replaced() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("link.md");
        let target = dir.path().join("elsewhere.md");
        std::os::unix::fs::symlink(&target, &path).expect("symlink");
        for existing in [ExistingFile::Refuse, ExistingFile::Replace] {
            let refused = write(&path, existing);
            assert!(
                matches!(&refused, Err(HandoffError::Refused { reason, .. }) if reason.contains("symbolic link")),
                "{refused:?}"
            );
        }
        assert!(!target.exists());
        std::fs::write(&target, "keep").expect("write");
        let refused = write(&path, ExistingFile::Replace);
        assert!(
            matches!(refused, Err(HandoffError::Refused { .. })),
            "{refused:?}"
        );
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "keep");
    }

    #[test]
    fn a_fifo_socket_or_directory_is_refused_without_opening_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo");
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
        let subdir = dir.path().join("sub");
        std::fs::create_dir(&subdir).expect("mkdir");
        for (path, words) in [
            (&fifo, "a FIFO"),
            (&socket, "a socket"),
            (&subdir, "a directory"),
            (&PathBuf::from("/dev/null"), "a character device"),
        ] {
            // A FIFO opened for writing would block here until a reader came.
            let refused = write(path, ExistingFile::Replace);
            assert!(
                matches!(&refused, Err(HandoffError::Refused { reason, .. }) if reason.contains(words)),
                "{path:?}: {refused:?}"
            );
        }
    }

    #[test]
    fn a_session_file_is_never_replaced() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("copy.jsonl");
        std::fs::write(&path, format!("{HEADER}\n")).expect("write");
        let refused = write(&path, ExistingFile::Replace);
        assert!(
            matches!(&refused, Err(HandoffError::Refused { reason, .. }) if reason.contains("session file")),
            "{refused:?}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            format!("{HEADER}\n")
        );
    }

    #[test]
    fn nothing_is_written_inside_a_store_even_through_a_linked_directory() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = dir.path().join("store");
        let project = store.join("--w--");
        std::fs::create_dir_all(&project).expect("mkdir");
        let alias = dir.path().join("alias");
        std::os::unix::fs::symlink(&project, &alias).expect("symlink");
        let protected = [Protected::Store(store.clone())];
        for path in [
            store.join("handoff.md"),
            project.join("handoff.md"),
            alias.join("handoff.md"),
            project.join("../--w--/handoff.md"),
        ] {
            let refused = write_file(&path, b"x", ExistingFile::Replace, &protected);
            assert!(
                matches!(&refused, Err(HandoffError::Refused { reason, .. }) if reason.contains("inside the session store")),
                "{path:?}: {refused:?}"
            );
        }
        assert_eq!(std::fs::read_dir(&project).expect("list").count(), 0);
        // Beside the store is fine.
        write_file(
            &dir.path().join("ok.md"),
            b"x",
            ExistingFile::Refuse,
            &protected,
        )
        .expect("outside the store");
    }

    /// A path ending in `/` asks for a directory: over a regular file it writes nothing.
    #[test]
    fn a_trailing_slash_never_writes_the_file_before_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("e2.md");
        std::fs::write(&file, "keep").expect("write");
        for path in [
            format!("{}/", file.display()),
            format!("{}/.", file.display()),
        ] {
            let refused = write(Path::new(&path), ExistingFile::Replace);
            assert!(
                matches!(&refused, Err(HandoffError::Refused { reason, .. }) if reason.contains("a regular file")),
                "{path}: {refused:?}"
            );
        }
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "keep");
        let missing = format!("{}/", dir.path().join("new.md").display());
        assert!(write(Path::new(&missing), ExistingFile::Refuse).is_err());
        assert!(!dir.path().join("new.md").exists());
    }

    /// The directory of a loose session file is refused, and its subdirectories are not.
    #[test]
    fn nothing_is_written_beside_a_loose_session() {
        let dir = tempfile::tempdir().expect("temp dir");
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).expect("mkdir");
        let protected = [Protected::SessionDirectory(dir.path().to_path_buf())];
        let refused = write_file(
            &dir.path().join("h.md"),
            b"x",
            ExistingFile::Refuse,
            &protected,
        );
        assert!(
            matches!(&refused, Err(HandoffError::Refused { reason, .. }) if reason.contains("beside the session file")),
            "{refused:?}"
        );
        assert!(!dir.path().join("h.md").exists());
        write_file(&sub.join("h.md"), b"x", ExistingFile::Refuse, &protected).expect("below");
    }

    #[test]
    fn a_path_naming_no_file_or_a_missing_directory_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let refused = write(&dir.path().join("x/.."), ExistingFile::Replace);
        assert!(
            matches!(refused, Err(HandoffError::Refused { .. })),
            "{refused:?}"
        );
        let path = dir.path().join("missing/handoff.md");
        let error = write(&path, ExistingFile::Refuse).expect_err("no directory");
        assert!(error.to_string().contains("missing/handoff.md"), "{error}");
    }

    /// A target flipped between a regular file and a symbolic link to a session file while
    /// handoffs are written over it, again and again: the session file is never changed,
    /// whichever state each write meets.
    #[test]
    fn a_target_flipped_to_a_symlink_never_reaches_the_session() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};

        let dir = tempfile::tempdir().expect("temp dir");
        let store = dir.path().join("store/--w--");
        std::fs::create_dir_all(&store).expect("mkdir");
        let session = store.join("s.jsonl");
        let original = format!("{HEADER}\n{{\"type\":\"message\"}}\n");
        std::fs::write(&session, &original).expect("write");
        let out_dir = dir.path().join("out");
        std::fs::create_dir(&out_dir).expect("mkdir");
        let target = out_dir.join("handoff.md");
        let protected = [Protected::Store(dir.path().join("store"))];

        let is_done = Arc::new(AtomicBool::new(false));
        let flipper = {
            let is_done = Arc::clone(&is_done);
            let target = target.clone();
            let session = session.clone();
            std::thread::spawn(move || {
                let mut n_flips = 0u64;
                while !is_done.load(Ordering::Relaxed) {
                    let _ = std::fs::remove_file(&target);
                    let _ = std::os::unix::fs::symlink(&session, &target);
                    let _ = std::fs::remove_file(&target);
                    let _ = std::fs::write(&target, "plain");
                    n_flips += 1;
                }
                n_flips
            })
        };
        for _ in 0..1500 {
            // Refused (a link met) or written (a file met): either way not through the link.
            let _ = write_file(&target, b"handoff", ExistingFile::Replace, &protected);
            assert_eq!(
                std::fs::read_to_string(&session).expect("read session"),
                original
            );
        }
        is_done.store(true, Ordering::Relaxed);
        let n_flips = flipper.join().expect("flipper");
        assert!(n_flips > 0);
        assert_eq!(
            std::fs::read_to_string(&session).expect("read session"),
            original
        );
        // Whatever won the last race, the store holds only the session.
        assert_eq!(std::fs::read_dir(&store).expect("list").count(), 1);
    }
}
