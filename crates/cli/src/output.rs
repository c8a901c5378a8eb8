//! Where the CLI's bytes go: standard output, whose failures say so, and what it writes to
//! stderr besides errors (warnings about a session file, warnings of a listing, notes for the
//! person at the terminal).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use pi_retrospect_app::{Transcript, TranscriptWarning};
use pi_retrospect_core::Warning;

/// Whether `-q/--quiet` was given: set once by `main` before a command runs.
static IS_QUIET: AtomicBool = AtomicBool::new(false);

/// Records whether warnings and notes are silenced (`-q/--quiet`).
pub fn set_quiet(is_quiet: bool) {
    IS_QUIET.store(is_quiet, Ordering::Relaxed);
}

/// Returns whether `-q/--quiet` was given.
pub fn is_quiet() -> bool {
    IS_QUIET.load(Ordering::Relaxed)
}

/// Writes a note (advice, or how an argument was understood) to stderr as one escaped
/// message.
pub fn print_note(note: &str) {
    if is_quiet() {
        return;
    }
    // Nothing sensible can be done when stderr itself is closed.
    let _ = writeln!(
        std::io::stderr(),
        "pi-retrospect: note: {}",
        pi_retrospect_render::text::terminal_message(note)
    );
}

/// Writes each warning of a listing to stderr as one escaped line, `path: reason`.
pub fn print_listing_warnings(warnings: &[Warning]) {
    if is_quiet() {
        return;
    }
    let stderr = std::io::stderr();
    let mut stderr = stderr.lock();
    for warning in warnings {
        write_warning_line(&mut stderr, &warning.path, &warning.reason);
    }
}

/// Writes one warning about `path` to `stderr` as one escaped line,
/// `pi-retrospect: warning: path: reason`: the form every command uses.
pub fn write_warning_line(stderr: &mut dyn Write, path: &str, reason: &str) {
    // Nothing sensible can be done when stderr itself is closed.
    let _ = writeln!(
        stderr,
        "pi-retrospect: warning: {}",
        pi_retrospect_render::text::warning_line(path, reason)
    );
}

/// Writes the warnings about `path` to stderr, each as one escaped line: the first twenty,
/// then a line counting the rest (`--json` lists all of them).
pub fn print_warnings(path: &str, warnings: &[TranscriptWarning]) {
    if is_quiet() {
        return;
    }
    let stderr = std::io::stderr();
    let mut stderr = stderr.lock();
    // Nothing sensible can be done when stderr itself is closed.
    let _ = pi_retrospect_render::text::write_warnings(&mut stderr, path, warnings);
}

/// Writes a warning about `path` to stderr when its file was rewritten in place since it was
/// read: a front end's last step, after every read of content it showed.
pub fn print_change_since_read(path: &str, transcript: &Transcript) -> anyhow::Result<()> {
    if let Some(change) = transcript.check_unchanged()? {
        print_warnings(path, &[change]);
    }
    Ok(())
}

/// Standard output, whose write errors say they were writing to it (`writing to stdout: No
/// space left on device`), keeping their kind so a closed pipe is still recognised.
pub struct Stdout<W>(pub W);

impl<W: Write> Write for Stdout<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.write(bytes).map_err(label)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().map_err(label)
    }
}

fn label(error: std::io::Error) -> std::io::Error {
    std::io::Error::new(error.kind(), format!("writing to stdout: {error}"))
}
