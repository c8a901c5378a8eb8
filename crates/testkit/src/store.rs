//! Session files on disk: JSONL text, Pi's file and directory names, runs and forks below a
//! session, and a temporary store.

use std::fmt::Display;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::header::Header;

/// Returns JSONL text: each of `lines` followed by a newline.
pub fn jsonl<L: Display>(lines: impl IntoIterator<Item = L>) -> String {
    let mut text = String::new();
    for line in lines {
        text.push_str(&line.to_string());
        text.push('\n');
    }
    text
}

/// Writes `lines` (each followed by a newline) to `path`, creating its directories, and
/// returns the path.
pub fn write_jsonl<L: Display>(path: &Path, lines: impl IntoIterator<Item = L>) -> PathBuf {
    write_bytes(path, jsonl(lines).as_bytes())
}

/// Appends `lines` (each followed by a newline) to the file at `path`, as Pi appends entries
/// to a session it is writing.
pub fn append_jsonl<L: Display>(path: &Path, lines: impl IntoIterator<Item = L>) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    file.write_all(jsonl(lines).as_bytes())
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
}

/// Writes `contents` to `path`, creating its directories, and returns the path.
fn write_bytes(path: &Path, contents: &[u8]) -> PathBuf {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|error| panic!("{}: {error}", parent.display()));
    }
    std::fs::write(path, contents).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    path.to_owned()
}

/// Returns a new temporary directory holding the file `name` with exactly `contents`, and
/// the file's path (the file goes when the directory is dropped).
pub fn temp_file(name: &str, contents: &[u8]) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_bytes(&dir.path().join(name), contents);
    (dir, path)
}

/// Returns the directory name Pi gives the sessions of `cwd` in its store: the path without
/// its leading separator, every `/`, `\` and `:` a `-`, between `--` and `--`
/// (`/home/u/app` is `--home-u-app--`).
pub fn project_dir_name(cwd: &str) -> String {
    let relative = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(cwd);
    format!("--{}--", relative.replace(['/', '\\', ':'], "-"))
}

/// Returns the file name Pi gives a session that started at `timestamp` with `id`: the
/// timestamp with `:` and `.` made `-`, then `_`, the id and `.jsonl`
/// (`2026-11-30T10-00-05-000Z_<id>.jsonl`).
pub fn session_file_name(timestamp: &str, id: &str) -> String {
    format!("{}_{id}.jsonl", timestamp.replace([':', '.'], "-"))
}

/// Returns where a subagent extension writes run `n` of launch `launch` of the session at
/// `session`: `<stem>/<launch>/run-<n>/session.jsonl` beside it.
pub fn run_path(session: &Path, launch: &str, n: u32) -> PathBuf {
    container(session)
        .join(launch)
        .join(format!("run-{n}"))
        .join("session.jsonl")
}

/// Returns where a fork-context run of the session at `session` is written:
/// `<stem>/forks/<file_name>`.
pub fn fork_path(session: &Path, file_name: &str) -> PathBuf {
    container(session).join("forks").join(file_name)
}

/// Returns the directory a session's runs live in: its path without `.jsonl`.
fn container(session: &Path) -> PathBuf {
    session.with_extension("")
}

/// Returns the instant `seconds` after the first of `month` (`2026-11`), as Pi writes
/// timestamps (`2026-11-01T00:00:05.000Z`); within the month's first 28 days.
pub fn timestamp_in_month(month: &str, seconds: u64) -> String {
    let day = 1 + seconds / 86_400;
    assert!(day <= 28, "{seconds} seconds is past the 28th of {month}");
    format!(
        "{month}-{day:02}T{:02}:{:02}:{:02}.000Z",
        seconds / 3600 % 24,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// A sessions root in Pi's layout (`<root>/--<project>--/<session>.jsonl`).
#[derive(Debug)]
pub struct Store {
    root: PathBuf,
    _dir: Option<TempDir>,
}

impl Default for Store {
    fn default() -> Store {
        Store::new()
    }
}

impl Store {
    /// Returns a store in a new temporary directory, removed when the store is dropped.
    pub fn new() -> Store {
        let dir = tempfile::tempdir().unwrap();
        Store {
            root: dir.path().to_owned(),
            _dir: Some(dir),
        }
    }

    /// Returns the store rooted at `root` (made if missing; never removed by the store).
    pub fn at(root: &Path) -> Store {
        std::fs::create_dir_all(root).unwrap_or_else(|error| panic!("{}: {error}", root.display()));
        Store {
            root: root.to_owned(),
            _dir: None,
        }
    }

    /// Returns the sessions root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Returns the project directory of `cwd` in the store, made if missing.
    pub fn project_dir(&self, cwd: &str) -> PathBuf {
        let dir = self.root.join(project_dir_name(cwd));
        std::fs::create_dir_all(&dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display()));
        dir
    }

    /// Writes `lines` to `relative` under the root and returns the file's path.
    pub fn write<L: Display>(
        &self,
        relative: impl AsRef<Path>,
        lines: impl IntoIterator<Item = L>,
    ) -> PathBuf {
        write_jsonl(&self.root.join(relative), lines)
    }

    /// Writes a session where Pi would: `header`, then `entries`, in the project directory
    /// of the header's cwd, named for its start time and id. Returns the file's path.
    pub fn write_session<L: Display>(
        &self,
        header: &Header,
        entries: impl IntoIterator<Item = L>,
    ) -> PathBuf {
        let path = self
            .project_dir(&header.cwd)
            .join(session_file_name(&header.timestamp, &header.id));
        write_session_file(&path, header, entries)
    }
}

/// Writes `header` then `entries` to `path`, creating its directories, and returns the path.
pub fn write_session_file<L: Display>(
    path: &Path,
    header: &Header,
    entries: impl IntoIterator<Item = L>,
) -> PathBuf {
    let mut text = format!("{header}\n");
    text.push_str(&jsonl(entries));
    write_bytes(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_pis() {
        for (cwd, expected) in [
            ("/home/u/app", "--home-u-app--"),
            ("/", "----"),
            ("C:\\work\\x", "--C--work-x--"),
            ("/tmp/a:b", "--tmp-a-b--"),
        ] {
            assert_eq!(project_dir_name(cwd), expected, "{cwd}");
        }
        assert_eq!(
            session_file_name("2026-11-30T10:00:05.123Z", "abc"),
            "2026-11-30T10-00-05-123Z_abc.jsonl"
        );
        let session = Path::new("/s/--p--/2026-01-01T00-00-00-000Z_p.jsonl");
        assert_eq!(
            run_path(session, "7a1e", 1),
            Path::new("/s/--p--/2026-01-01T00-00-00-000Z_p/7a1e/run-1/session.jsonl")
        );
        assert_eq!(
            fork_path(session, "k.jsonl"),
            Path::new("/s/--p--/2026-01-01T00-00-00-000Z_p/forks/k.jsonl")
        );
        assert_eq!(
            timestamp_in_month("2026-11", 86_400 + 3_661),
            "2026-11-02T01:01:01.000Z"
        );
    }

    #[test]
    fn a_store_writes_sessions_where_pi_does() {
        let store = Store::new();
        let header = Header::new("s1").cwd("/w/app");
        let path = store.write_session(&header, ["{}"]);
        assert_eq!(
            path,
            store
                .root()
                .join("--w-app--/2026-01-01T00-00-00-000Z_s1.jsonl")
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{header}\n{{}}\n")
        );
        let run = store.write(run_path(&path, "l", 0), [Header::new("r")]);
        assert!(run.is_file());
    }
}
