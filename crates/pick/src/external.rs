//! The programs the picker hands the terminal to: a pager showing a session's transcript (as
//! `pi-retrospect show` prints it), and Pi itself to resume a session.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

use pi_retrospect_app::{
    Environment, SessionRef, SessionTarget, ShowRequest, ShowResult, ShowView, StoreFlags,
};
use pi_retrospect_render::Paint;
use pi_retrospect_render::show::{ShowParts, ShowStyle, TranscriptBody, TranscriptWriteError};

use crate::error::PickError;

/// The pager used when none is named.
pub(crate) const DEFAULT_PAGER: &str = "less -R";

/// Characters kept of each tool output in the transcript, as `show` keeps by default.
const OUTPUT_CHARS: usize = 2000;

/// Reads the session at `path` as `show` reads it, for [`write_transcript`]; its items are
/// made only as they are written.
pub(crate) fn read_transcript(path: &str, env: &Environment) -> Result<ShowResult, PickError> {
    let request = ShowRequest {
        target: SessionTarget {
            session: SessionRef::Path(path.to_owned()),
            stores: StoreFlags::default(),
        },
        tree: false,
        thinking: false,
        tool_output_chars: Some(OUTPUT_CHARS),
    };
    Ok(pi_retrospect_app::show(&request, env)?)
}

/// Writes the transcript of `result` to `out` as `show` writes it, `width` columns wide, each
/// item as it is made: no more than one item is ever held, whatever the session's size.
/// Stops at the first write that fails and returns its error (a pager
/// that quit gives `BrokenPipe`); a session that cannot be read further is an error of kind
/// `Other`.
pub(crate) fn write_transcript(
    out: &mut dyn Write,
    result: &ShowResult,
    env: &Environment,
    paint: Paint,
    width: usize,
) -> io::Result<()> {
    let session = &result.session;
    let parts = ShowParts {
        path: &session.path,
        transcript: &session.transcript,
        facts: &result.facts,
        lineage: &result.lineage,
    };
    let style = ShowStyle {
        paint,
        width,
        time_zone: &env.time_zone,
        system: false,
        tool_args: false,
        fold: false,
    };
    let body = match result.view {
        ShowView::Tree => TranscriptBody::Tree {
            counts: result.tree_counts(),
            for_each: &mut |visit| result.for_each_tree_row(visit),
        },
        ShowView::Items => TranscriptBody::Items {
            n_active_entries: result.n_active_entries(),
            for_each: &mut |visit| result.for_each_item(visit),
        },
    };
    // A failed write keeps its kind (`BrokenPipe` when the pager quit).
    pi_retrospect_render::show::write_transcript(out, &parts, &style, body).map_err(|error| {
        match error {
            TranscriptWriteError::Write(error) => error,
            TranscriptWriteError::Read(error) => io::Error::other(error.to_string()),
        }
    })
}

/// Starts `pager` (a shell command, as `$PAGER` is) with `pager_env` set, on `tty`, hands
/// `feed` its standard input (buffered) to write the text into while it shows it, and waits
/// for it. A pager that quits before reading everything ends the feed quietly (that is how
/// pagers end). Fails, with the message for the status line, when the shell could not find or
/// run the pager (exit status 127 or 126), which would otherwise only say so on the screen the
/// picker is about to cover, or when `feed` failed otherwise.
pub(crate) fn page(
    pager: &str,
    pager_env: &[(String, String)],
    tty: &File,
    feed: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> Result<ExitStatus, String> {
    let not_run = |error: io::Error| format!("cannot run {pager}: {error}");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(pager)
        .envs(pager_env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::piped())
        .stdout(tty.try_clone().map_err(not_run)?)
        .spawn()
        .map_err(not_run)?;
    let fed = match child.stdin.take() {
        // Dropped at the end of `fill`, so the pager sees the end of the text.
        Some(stdin) => fill(stdin, feed),
        None => Ok(()),
    };
    let status = child.wait().map_err(not_run)?;
    match status.code() {
        Some(127) => Err(not_run(io::Error::new(
            io::ErrorKind::NotFound,
            "command not found",
        ))),
        Some(126) => Err(not_run(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "command cannot be run",
        ))),
        _ => fed
            .map(|()| status)
            .map_err(|error| format!("cannot show the transcript: {error}")),
    }
}

/// Runs `feed` on `pipe` through a buffer and flushes it; a pipe whose reader has gone
/// (`BrokenPipe`) ends it without an error.
fn fill(
    pipe: impl Write,
    feed: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut out = BufWriter::new(pipe);
    match feed(&mut out).and_then(|()| out.flush()) {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => {
            // Nothing more can reach the pager: what is left in the buffer is dropped
            // rather than written again when `out` is.
            let _ = out.into_parts();
            Ok(())
        }
        other => other,
    }
}

/// Replaces this process with `program --session PATH` (or `program --fork PATH` when
/// `is_fork`) run in `cwd`, on the terminal: standard input and output are the terminal even
/// when the picker's own were redirected, and `PWD` names `cwd`. Pi then owns the terminal,
/// its signals and the exit status, and no thread of the picker outlives the hand-over.
/// Returns only when Pi cannot be started.
pub fn resume(program: &str, path: &str, cwd: &Path, is_fork: bool) -> PickError {
    let is_found = is_on_path(program, std::env::var_os("PATH").as_deref());
    if let Some(problem) = start_problem(program, cwd, is_fork, is_found, cwd.is_dir()) {
        return problem;
    }
    let mut command = Command::new(program);
    let flag = if is_fork { "--fork" } else { "--session" };
    command.arg(flag).arg(path).current_dir(cwd).env("PWD", cwd);
    if !io::stdin().is_terminal() {
        match crate::terminal::open_tty() {
            Ok(tty) => command.stdin(tty),
            Err(error) => return error,
        };
    }
    if !io::stdout().is_terminal() {
        match crate::terminal::open_tty() {
            Ok(tty) => command.stdout(tty),
            Err(error) => return error,
        };
    }
    PickError::Resume {
        program: program.to_owned(),
        cwd: cwd.to_owned(),
        error: command.exec(),
    }
}

/// Returns why `program` cannot be started in `cwd`, from whether it was found (`is_found`)
/// and whether `cwd` is a directory (`is_dir`); `None` when both are there. Starting it would
/// fail with the same "No such file or directory" for either.
fn start_problem(
    program: &str,
    cwd: &Path,
    is_fork: bool,
    is_found: bool,
    is_dir: bool,
) -> Option<PickError> {
    if !is_found {
        return Some(PickError::NotOnPath {
            program: program.to_owned(),
        });
    }
    (!is_dir).then(|| PickError::DirectoryGone {
        // A fork runs in the current directory, a resumed session in its own.
        whose: if is_fork {
            "the directory"
        } else {
            "the session's directory"
        },
        cwd: cwd.to_owned(),
    })
}

/// Returns whether `program` names an executable file: itself when it holds a `/`, else in
/// one of the directories of `path_var` (`PATH`), as `exec` looks it up.
fn is_on_path(program: &str, path_var: Option<&OsStr>) -> bool {
    let is_executable = |path: &Path| {
        std::fs::metadata(path)
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        return is_executable(Path::new(program));
    }
    path_var.is_some_and(|dirs| {
        std::env::split_paths(dirs).any(|dir| is_executable(&dir.join(program)))
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn dev_null() -> File {
        File::options()
            .write(true)
            .open("/dev/null")
            .expect("/dev/null")
    }

    /// The largest session of the committed fixtures.
    fn fixture_session() -> String {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/pi-real/sessions/--tmp-pi-real-fixture-home-user-project--");
        let path = std::fs::read_dir(&dir)
            .expect("the fixture sessions")
            .map(|entry| entry.expect("an entry").path())
            .max_by_key(|path| std::fs::metadata(path).map_or(0, |meta| meta.len()))
            .expect("a fixture session");
        path.to_str().expect("a UTF-8 path").to_owned()
    }

    /// The pager gets the variables it is given (`LESS=R`), and a
    /// pager the shell cannot find is an error for the status line, not a silent flicker.
    #[test]
    fn the_pager_is_run_with_its_variables_and_its_failure_said() {
        let tty = dev_null();
        let less = [("LESS".to_owned(), "R".to_owned())];
        // (pager, variables, whether it runs)
        type Variables<'a> = &'a [(String, String)];
        let cases: [(&str, Variables<'_>, bool); 4] = [
            ("cat > /dev/null", &[], true),
            ("test \"$LESS\" = R", &less, true),
            ("no-such-pager-of-a-test", &[], false),
            ("exit 126", &[], false),
        ];
        for (pager, pager_env, is_run) in cases {
            let paged = page(pager, pager_env, &tty, &mut |out| {
                out.write_all(b"transcript\n")
            });
            assert_eq!(
                paged.as_ref().is_ok_and(ExitStatus::success),
                is_run,
                "{pager}: {paged:?}"
            );
        }
    }

    /// The text is written into the pager while it runs, so a pager that
    /// quits early (here after 10 bytes, or at once) ends a feed that would never end by
    /// itself, quietly; a feed that fails otherwise is said.
    #[test]
    fn a_pager_that_quits_early_ends_the_feed_quietly() {
        let tty = dev_null();
        for pager in ["head -c 10 > /dev/null", "exit 0"] {
            let mut n_written = 0_usize;
            let paged = page(pager, &[], &tty, &mut |out| {
                loop {
                    out.write_all(&[b'x'; 4096])?;
                    n_written += 4096;
                }
            });
            assert!(paged.is_ok_and(|status| status.success()), "{pager}");
            assert!(n_written > 0 || pager == "exit 0", "{pager}");
        }
        let paged = page("cat > /dev/null", &[], &tty, &mut |_| {
            Err(io::Error::other("the session cannot be read"))
        });
        assert_eq!(
            paged,
            Err("cannot show the transcript: the session cannot be read".to_owned())
        );
    }

    /// A writer that takes `room` bytes, then fails as a closed pipe does, and counts the
    /// writes tried after that.
    struct ClosingPipe {
        room: usize,
        n_written: usize,
        n_refused: usize,
    }

    impl Write for ClosingPipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.n_written >= self.room {
                self.n_refused += 1;
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            let n = buf.len().min(self.room - self.n_written);
            self.n_written += n;
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The transcript is written item by item as it is made, not built
    /// whole first: a reader that closes after 200 bytes stops the writing at the first
    /// write refused, with `BrokenPipe`, and the whole transcript reaches a pager that reads
    /// it all, or one that quits early, without an error.
    #[test]
    fn the_transcript_is_streamed_and_stops_when_its_reader_closes() {
        let env = Environment::default();
        let result = read_transcript(&fixture_session(), &env).expect("the fixture is read");
        let mut whole = ClosingPipe {
            room: usize::MAX,
            n_written: 0,
            n_refused: 0,
        };
        write_transcript(&mut whole, &result, &env, Paint::ON, 80).expect("written whole");
        assert!(whole.n_written > 1000, "{} bytes", whole.n_written);
        let mut pipe = ClosingPipe {
            room: 200,
            n_written: 0,
            n_refused: 0,
        };
        let written = write_transcript(&mut pipe, &result, &env, Paint::ON, 80);
        assert_eq!(
            written.map_err(|error| error.kind()),
            Err(io::ErrorKind::BrokenPipe)
        );
        assert_eq!((pipe.n_written, pipe.n_refused), (200, 1));
        let tty = dev_null();
        for pager in ["cat > /dev/null", "head -c 100 > /dev/null"] {
            let paged = page(pager, &[], &tty, &mut |out| {
                write_transcript(out, &result, &env, Paint::ON, 80)
            });
            assert!(paged.is_ok_and(|status| status.success()), "{pager}");
        }
    }

    /// `pi` missing and the directory gone are told apart before Pi is
    /// started, instead of both reading "No such file or directory".
    #[test]
    fn a_missing_pi_and_a_directory_gone_are_told_apart() {
        let cwd = Path::new("/gone/project");
        // (is_fork, is_found, is_dir, message)
        let cases = [
            (false, true, true, None),
            (true, true, true, None),
            (false, false, true, Some("cannot resume: pi is not on PATH")),
            (
                false,
                false,
                false,
                Some("cannot resume: pi is not on PATH"),
            ),
            (
                false,
                true,
                false,
                Some("cannot resume: the session's directory /gone/project no longer exists"),
            ),
            (
                true,
                true,
                false,
                Some("cannot resume: the directory /gone/project no longer exists"),
            ),
        ];
        for (is_fork, is_found, is_dir, message) in cases {
            let problem = start_problem("pi", cwd, is_fork, is_found, is_dir);
            assert_eq!(
                problem.map(|problem| problem.to_string()).as_deref(),
                message,
                "fork {is_fork}, found {is_found}, directory {is_dir}"
            );
        }
        let path = OsStr::new("/no/such/dir:/bin:/usr/bin");
        assert!(is_on_path("sh", Some(path)));
        assert!(!is_on_path("sh", Some(OsStr::new("/no/such/dir"))));
        assert!(!is_on_path("sh", None));
        assert!(!is_on_path("no-such-program-of-a-test", Some(path)));
        assert!(is_on_path("/bin/sh", None));
        // A directory, or a file that is not executable, is not a program.
        assert!(!is_on_path("/bin/", None));
        assert!(!is_on_path(
            concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
            None
        ));
    }
}
