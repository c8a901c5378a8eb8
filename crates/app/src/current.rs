//! The session running the command (`$PI_SESSION_FILE`), recognised among listed sessions by
//! the file it names rather than by its path text, so that a symlinked directory, a relative
//! path or `..` in the variable still names the same session.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use pi_retrospect_core::Session;

use crate::env::Environment;
use crate::error::AppError;

/// The session file `$PI_SESSION_FILE` names, as listed paths are compared with it.
#[derive(Debug, Clone)]
pub(crate) struct CurrentSession {
    /// The variable made absolute and normalised lexically: what a listed path is compared
    /// with when the file cannot be read.
    pub(crate) path: String,
    /// The file names the session may be listed under: the variable's last component and,
    /// when that is a symlink, the name of the file it leads to.
    names: Vec<OsString>,
    /// The device and inode of the file the variable names; `None` when it cannot be read,
    /// and then only the path text can match.
    identity: Option<(u64, u64)>,
}

impl CurrentSession {
    /// Returns the session `env.session_file` names, or `None` when the variable is unset.
    /// The file is looked at once here (one `stat`, one `realpath`).
    pub(crate) fn from_env(env: &Environment) -> Result<Option<CurrentSession>, AppError> {
        let Some(file) = env.session_file.as_deref() else {
            return Ok(None);
        };
        let path = env.absolute(file)?;
        // The file system sees the variable as written: a lexical `..` after a symlink may
        // lead elsewhere than the normalised text does.
        let as_written = env.cwd.join(env.expand_tilde(file)?);
        let mut names: Vec<OsString> = Path::new(&path)
            .file_name()
            .map(ToOwned::to_owned)
            .into_iter()
            .collect();
        if let Some(real_name) = std::fs::canonicalize(&as_written)
            .ok()
            .and_then(|real| real.file_name().map(ToOwned::to_owned))
            && !names.contains(&real_name)
        {
            names.push(real_name);
        }
        Ok(Some(CurrentSession {
            identity: identity(&as_written),
            path,
            names,
        }))
    }

    /// Returns whether the listed session file at `path` is this session: the same file
    /// (device and inode), or, when the variable's file cannot be read, the same path text.
    /// Only a path whose file name is one of the session's is looked at on disk, so matching
    /// a whole listing costs one `stat` per namesake, not one per session.
    pub(crate) fn is(&self, path: &str) -> bool {
        let Some(wanted) = self.identity else {
            return path == self.path;
        };
        let is_namesake = Path::new(path)
            .file_name()
            .is_some_and(|name| self.names.iter().any(|known| known == name));
        is_namesake && identity(Path::new(path)) == Some(wanted)
    }

    /// Removes this session, at any level, with its runs, from `sessions`.
    pub(crate) fn remove_from(&self, sessions: &mut Vec<Session>) {
        // An explicit work list: a nesting depth costs memory, never stack.
        let mut pending: Vec<&mut Vec<Session>> = vec![sessions];
        while let Some(level) = pending.pop() {
            level.retain(|session| !self.is(&session.path));
            pending.extend(
                level
                    .iter_mut()
                    .map(|session| &mut session.subagent_sessions),
            );
        }
    }
}

/// Returns the device and inode of the file at `path` (through symlinks), when it can be
/// read.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path)
        .ok()
        .map(|metadata| (metadata.dev(), metadata.ino()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The running session is recognised through a symlinked
    /// directory, a relative path and `..`, and a namesake in another directory is not it.
    #[test]
    fn matches_the_file_not_the_text() {
        let dir = tempfile::tempdir().expect("temp dir");
        let real = dir.path().join("real/--w--");
        std::fs::create_dir_all(&real).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("other")).expect("mkdir");
        std::fs::write(real.join("s.jsonl"), "{}\n").expect("write");
        std::fs::write(dir.path().join("other/s.jsonl"), "{}\n").expect("write");
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link"))
            .expect("symlink");
        let listed = real.join("s.jsonl").display().to_string();
        let namesake = dir.path().join("other/s.jsonl").display().to_string();
        for (variable, cwd) in [
            (listed.clone(), dir.path().to_owned()),
            (
                dir.path().join("link/--w--/s.jsonl").display().to_string(),
                dir.path().to_owned(),
            ),
            ("s.jsonl".to_owned(), real.clone()),
            (
                "./link/--w--/../--w--/s.jsonl".to_owned(),
                dir.path().to_owned(),
            ),
        ] {
            let env = Environment {
                cwd,
                session_file: Some(variable.clone()),
                ..Environment::default()
            };
            let current = CurrentSession::from_env(&env)
                .expect("resolved")
                .expect("set");
            assert!(current.is(&listed), "{variable}");
            assert!(!current.is(&namesake), "{variable}");
        }
    }
}
