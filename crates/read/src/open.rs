//! The one way every reader here opens a file: read-only, never blocking, no lock, and then
//! checked on the descriptor itself (never stat-then-open, which races with a swap).

use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Whether the last component of a path may be a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symlinks {
    /// A symlink is refused (`O_NOFOLLOW`): session files inside a store.
    Refuse,
    /// A symlink is followed, as Pi follows one for its settings files.
    Follow,
}

/// Returns `path` for a message: a file name can hold a line feed or an escape sequence, and
/// the message may reach a terminal's stderr whole, so every control character is escaped
/// (a name must not forge a line of its own).
fn shown(path: &Path) -> String {
    pi_retrospect_core::sanitize::escape_for_terminal(&path.to_string_lossy()).into_owned()
}

/// Why a file could not be opened as a regular file.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// `open(2)` or `fstat(2)` failed.
    #[error("{path}: {reason}", path = shown(path), reason = describe_io(error))]
    Io {
        /// The path that was being opened.
        path: PathBuf,
        /// The underlying error, already described in the message (so not a `source`).
        error: io::Error,
    },
    /// The path is a symbolic link and [`Symlinks::Refuse`] was asked for.
    #[error("{path}: is a symbolic link (not followed)", path = shown(path))]
    Symlink {
        /// The path that was being opened.
        path: PathBuf,
    },
    /// The descriptor is not a regular file.
    #[error("{path}: is a {kind}, not a regular file", path = shown(path))]
    NotRegular {
        /// The path that was being opened.
        path: PathBuf,
        /// What it is instead (`directory`, `FIFO`, ...).
        kind: &'static str,
    },
}

impl OpenError {
    /// Returns the path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            OpenError::Io { path, .. }
            | OpenError::Symlink { path }
            | OpenError::NotRegular { path, .. } => path,
        }
    }

    /// Returns the error without its path, as a warning reason.
    pub fn reason(&self) -> String {
        match self {
            OpenError::Io { error, .. } => describe_io(error),
            OpenError::Symlink { .. } => "is a symbolic link (not followed)".to_owned(),
            OpenError::NotRegular { kind, .. } => format!("is a {kind}, not a regular file"),
        }
    }
}

/// Opens `path` read-only with `O_NONBLOCK` (a FIFO or device opens at once instead of
/// blocking), `O_CLOEXEC`, and `O_NOFOLLOW` unless `symlinks` is [`Symlinks::Follow`]; no lock
/// is taken. The type is not checked: see [`open_regular`] for that.
pub fn open_nonblocking(path: &Path, symlinks: Symlinks) -> io::Result<File> {
    // A stop asked for by another thread fails the open too (see `stop`): a walk over many
    // small files ends at its next file, not only at its next read.
    crate::stop::check()?;
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if symlinks == Symlinks::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    File::options().read(true).custom_flags(flags).open(path)
}

/// Opens a session file the way every reader here does: read-only, never through a symlink,
/// never blocking (a FIFO or device opens at once), with no lock. Callers that did not see the
/// file listed as a regular one use [`open_regular`], which checks the descriptor's type.
pub fn open_session_file(path: &Path) -> io::Result<File> {
    open_nonblocking(path, Symlinks::Refuse)
}

/// Opens `path` with [`open_nonblocking`] and then checks the open descriptor with `fstat`:
/// a regular file is returned with its metadata, anything else is a clear error. Because the
/// check is on the descriptor, a FIFO swapped in for the file at any moment can neither block
/// the open nor be read.
pub fn open_regular(path: &Path, symlinks: Symlinks) -> Result<(File, Metadata), OpenError> {
    let file = open_nonblocking(path, symlinks).map_err(|source| {
        if symlinks == Symlinks::Refuse && source.raw_os_error() == Some(libc::ELOOP) {
            // With O_NOFOLLOW, ELOOP means the last component is a symlink.
            if std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) {
                return OpenError::Symlink {
                    path: path.to_owned(),
                };
            }
        }
        OpenError::Io {
            path: path.to_owned(),
            error: source,
        }
    })?;
    let metadata = file.metadata().map_err(|error| OpenError::Io {
        path: path.to_owned(),
        error,
    })?;
    if !metadata.is_file() {
        return Err(OpenError::NotRegular {
            path: path.to_owned(),
            kind: describe_file_type(&metadata.file_type()),
        });
    }
    Ok((file, metadata))
}

/// Returns an I/O error's description without Rust's " (os error N)" suffix noise.
pub fn describe_io(error: &io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error ") {
        Some(cut) => text[..cut].to_owned(),
        None => text,
    }
}

/// Returns what a file of `file_type` is, in a few words for a warning ("FIFO", "device", ...),
/// when it is not a regular file.
pub fn describe_file_type(file_type: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_socket() {
        "socket"
    } else if file_type.is_char_device() || file_type.is_block_device() {
        "device"
    } else if file_type.is_dir() {
        "directory"
    } else if file_type.is_symlink() {
        "symlink"
    } else {
        "special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_fifo_without_blocking_and_names_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("s.jsonl");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(status.success());
        let error = open_regular(&fifo, Symlinks::Follow).expect_err("a FIFO is refused");
        assert!(
            matches!(error, OpenError::NotRegular { kind: "FIFO", .. }),
            "{error}"
        );
        assert!(error.to_string().contains("s.jsonl"), "{error}");
    }

    #[test]
    fn refuses_a_symlink_only_when_asked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("t.jsonl");
        std::fs::write(&target, "x\n").expect("write");
        let link = dir.path().join("l.jsonl");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let error = open_regular(&link, Symlinks::Refuse).expect_err("refused");
        assert!(matches!(error, OpenError::Symlink { .. }), "{error}");
        let (_, metadata) = open_regular(&link, Symlinks::Follow).expect("followed");
        assert_eq!(metadata.len(), 2);
    }

    #[test]
    fn a_directory_and_a_missing_file_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let error = open_regular(dir.path(), Symlinks::Refuse).expect_err("a directory");
        assert_eq!(error.reason(), "is a directory, not a regular file");
        let missing = dir.path().join("missing.jsonl");
        let error = open_regular(&missing, Symlinks::Refuse).expect_err("missing");
        assert_eq!(error.reason(), "No such file or directory");
        assert_eq!(error.path(), missing);
    }
}
