//! What the CLI writes to stderr besides errors: warnings about a session file.

use std::io::Write;

use pi_retrospect_transcript::TranscriptWarning;

/// Writes each warning about `path` to stderr as one escaped line.
pub fn print_warnings(path: &str, warnings: &[TranscriptWarning]) {
    let stderr = std::io::stderr();
    let mut stderr = stderr.lock();
    for warning in warnings {
        // Nothing sensible can be done when stderr itself is closed.
        let _ = writeln!(
            stderr,
            "pi-retrospect: warning: {}",
            pi_retrospect_render::text::warning_line(path, &warning.message)
        );
    }
}
