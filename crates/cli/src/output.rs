//! What the CLI writes to stderr besides errors: warnings about a session file, capped.

use pi_retrospect_transcript::TranscriptWarning;

/// Writes the warnings about `path` to stderr, each as one escaped line: the first twenty,
/// then a line counting the rest (`--json` carries all of them).
pub fn print_warnings(path: &str, warnings: &[TranscriptWarning]) {
    let stderr = std::io::stderr();
    let mut stderr = stderr.lock();
    // Nothing sensible can be done when stderr itself is closed.
    let _ = pi_retrospect_render::text::write_warnings(&mut stderr, path, warnings);
}
