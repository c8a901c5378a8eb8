//! The programs the picker hands the terminal to: a pager showing a session's transcript (as
//! `pi-retrospect show` prints it), and Pi itself to resume a session.

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

use pi_retrospect_app::{
    AppError, Environment, SessionRef, SessionTarget, ShowRequest, ShowView, StoreFlags,
};
use pi_retrospect_render::show::{
    Paint, ShowParts, ShowStyle, TreeWriter, write_heading, write_item, write_items_head,
};

use crate::error::PickError;

/// The pager used when none is named.
pub(crate) const DEFAULT_PAGER: &str = "less -R";

/// Characters kept of each tool output in the transcript, as `show` keeps by default.
const OUTPUT_CHARS: usize = 2000;

/// Returns the transcript of the session at `path` as `show` writes it, `width` columns wide.
pub(crate) fn transcript(
    path: &str,
    env: &Environment,
    is_color: bool,
    width: usize,
) -> Result<Vec<u8>, PickError> {
    let request = ShowRequest {
        target: SessionTarget {
            session: SessionRef::Path(path.to_owned()),
            stores: StoreFlags::default(),
        },
        tree: false,
        thinking: false,
        tool_output_chars: Some(OUTPUT_CHARS),
    };
    let result = pi_retrospect_app::show(&request, env)?;
    let session = &result.session;
    let parts = ShowParts {
        path: &session.path,
        transcript: &session.transcript,
        facts: &result.facts,
        lineage: &result.lineage,
    };
    let style = ShowStyle {
        paint: Paint { is_on: is_color },
        width,
        time_zone: &env.time_zone,
        system: false,
        tool_args: false,
        fold: false,
    };
    let mut text = Vec::new();
    write_heading(&mut text, &parts, &style)?;
    // Writing to memory cannot fail; an error is still carried rather than dropped.
    let written = |result: io::Result<()>| result.map_err(|error| AppError::io(error.to_string()));
    match result.view {
        ShowView::Tree => {
            let mut writer = TreeWriter::new(&style);
            writer.write_head(&mut text, result.tree_counts())?;
            result.for_each_tree_row(|row| written(writer.write_row(&mut text, &row)))?;
        }
        ShowView::Items => {
            write_items_head(&mut text, result.n_active_entries())?;
            result.for_each_item(|item| written(write_item(&mut text, &item, &style)))?;
        }
    }
    Ok(text)
}

/// Shows `text` in `pager` (a shell command, as `$PAGER` is) with `pager_env` set, on `tty`,
/// and waits for it; fails when the shell could not find or run the pager (exit status 127
/// or 126), which would otherwise only say so on the screen the picker is about to cover.
pub(crate) fn page(
    text: &[u8],
    pager: &str,
    pager_env: &[(String, String)],
    tty: &File,
) -> io::Result<ExitStatus> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(pager)
        .envs(pager_env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::piped())
        .stdout(tty.try_clone()?)
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        match stdin.write_all(text) {
            // The pager quit before reading everything: that is how pagers end.
            Err(error) if error.kind() == io::ErrorKind::BrokenPipe => {}
            other => other?,
        }
    }
    let status = child.wait()?;
    match status.code() {
        Some(127) => Err(io::Error::new(io::ErrorKind::NotFound, "command not found")),
        Some(126) => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "command cannot be run",
        )),
        _ => Ok(status),
    }
}

/// Replaces this process with `program --session PATH` (or `program --fork PATH` when
/// `is_fork`) run in `cwd`, on the terminal: standard input and output are the terminal even
/// when the picker's own were redirected, and `PWD` names `cwd`. Pi then owns the terminal,
/// its signals and the exit status, and no thread of the picker outlives the hand-over.
/// Returns only when Pi cannot be started.
pub fn resume(program: &str, path: &str, cwd: &Path, is_fork: bool) -> PickError {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16 review L1 and L3: the pager gets the variables it is given (`LESS=R`), and a
    /// pager the shell cannot find is an error for the status line, not a silent flicker.
    #[test]
    fn the_pager_is_run_with_its_variables_and_its_failure_said() {
        let tty = File::options()
            .write(true)
            .open("/dev/null")
            .expect("/dev/null");
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
            let paged = page(b"transcript\n", pager, pager_env, &tty);
            assert_eq!(
                paged.as_ref().is_ok_and(ExitStatus::success),
                is_run,
                "{pager}: {paged:?}"
            );
        }
    }
}
