//! What the CLI writes to stderr besides errors: warnings about a session file.

use std::collections::BTreeMap;
use std::io::Write;

use pi_retrospect_transcript::{TranscriptWarning, WarningKind};

/// The most warnings about one file written to stderr; the rest are summed up in one line.
const MAX_PRINTED: usize = 20;

/// Writes the first [`MAX_PRINTED`] warnings about `path` to stderr, one escaped line each,
/// then one line that counts the rest by kind (issue 9: a file of junk lines once wrote 555 MB
/// of warnings). `warnings` are a transcript's kept warnings, whose omitted groups carry their
/// counts.
pub fn print_warnings(path: &str, warnings: &[TranscriptWarning]) {
    let stderr = std::io::stderr();
    let mut stderr = stderr.lock();
    let mut left_out: BTreeMap<WarningKind, u64> = BTreeMap::new();
    let mut n_printed = 0;
    for warning in warnings {
        if let Some(omitted) = warning.omitted {
            *left_out.entry(omitted.kind).or_default() += omitted.count;
            continue;
        }
        if n_printed == MAX_PRINTED {
            *left_out.entry(warning.kind).or_default() += 1;
            continue;
        }
        n_printed += 1;
        // Nothing sensible can be done when stderr itself is closed.
        let _ = writeln!(
            stderr,
            "pi-retrospect: warning: {}",
            pi_retrospect_render::text::warning_line(path, &warning.message)
        );
    }
    if !left_out.is_empty() {
        let total: u64 = left_out.values().sum();
        let by_kind: Vec<String> = left_out
            .iter()
            .map(|(kind, count)| format!("{count} {}", kind.as_str()))
            .collect();
        let message = format!(
            "{total} more warnings not shown ({}); --json lists the first 20 of each kind and counts the rest",
            by_kind.join(", ")
        );
        let _ = writeln!(
            stderr,
            "pi-retrospect: warning: {}",
            pi_retrospect_render::text::warning_line(path, &message)
        );
    }
}
