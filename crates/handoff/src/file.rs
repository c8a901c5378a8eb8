//! Writing a document to a file that is never replaced by accident.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;

use crate::error::HandoffError;

/// What to do when the output file already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExistingFile {
    /// Fail with [`HandoffError::Exists`] and leave it untouched (also when it is a symbolic
    /// link, dangling or not).
    Refuse,
    /// Truncate it and write over it (`--force`).
    Replace,
}

/// Writes `contents` to `path`, creating the file; an existing file is handled as `existing`
/// says.
///
/// With [`ExistingFile::Refuse`] the file is opened with `create_new` (`O_CREAT | O_EXCL`), so
/// the check and the creation are one step and a file that appears in between is not
/// overwritten either.
pub fn write_file(
    path: &Path,
    contents: &[u8],
    existing: ExistingFile,
) -> Result<(), HandoffError> {
    let mut options = OpenOptions::new();
    options.write(true);
    match existing {
        ExistingFile::Refuse => options.create_new(true),
        ExistingFile::Replace => options.create(true).truncate(true),
    };
    let write_error = |source: io::Error| HandoffError::Write {
        path: path.to_owned(),
        source,
    };
    let mut file = options.open(path).map_err(|source| {
        if source.kind() == io::ErrorKind::AlreadyExists {
            HandoffError::Exists {
                path: path.to_owned(),
            }
        } else {
            write_error(source)
        }
    })?;
    file.write_all(contents).map_err(write_error)?;
    file.flush().map_err(write_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_to_replace_unless_forced() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("handoff.md");
        write_file(&path, b"first", ExistingFile::Refuse).expect("new file");
        let refused = write_file(&path, b"second", ExistingFile::Refuse);
        assert!(
            matches!(&refused, Err(HandoffError::Exists { path: named }) if *named == path),
            "{refused:?}"
        );
        assert_eq!(std::fs::read(&path).expect("read"), b"first");
        write_file(&path, b"2nd", ExistingFile::Replace).expect("forced");
        assert_eq!(std::fs::read(&path).expect("read"), b"2nd");
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_symlink_is_an_existing_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("link.md");
        let target = dir.path().join("elsewhere.md");
        std::os::unix::fs::symlink(&target, &path).expect("symlink");
        let refused = write_file(&path, b"x", ExistingFile::Refuse);
        assert!(
            matches!(refused, Err(HandoffError::Exists { .. })),
            "{refused:?}"
        );
        assert!(!target.exists());
    }

    #[test]
    fn a_missing_directory_is_a_write_error_naming_the_path() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("missing/handoff.md");
        let error = write_file(&path, b"x", ExistingFile::Refuse).expect_err("no directory");
        assert!(error.to_string().contains("missing/handoff.md"), "{error}");
    }
}
