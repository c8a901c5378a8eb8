//! A session's last activity: the timestamp of its newest entry, read from the end of the
//! file with a bounded read (never the file's modification time, which a copy, a backup or a
//! `touch` changes).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use pi_retrospect_core::Timestamp;
use pi_retrospect_header::{Symlinks, open_regular};
use serde::Deserialize;

use crate::summary::SummaryError;

/// The first window read from the end of a file. Pi's last entry is usually an assistant
/// message or a tool result of a few kilobytes.
pub(crate) const FIRST_TAIL_BYTES: u64 = 8 * 1024;

/// The most read from the end of a file. When the last lines that fit in it hold no
/// timestamp (one tool result larger than this), the last activity is unknown and the
/// caller falls back to the header's timestamp.
pub const MAX_ACTIVITY_TAIL_BYTES: u64 = 8 * 1024 * 1024;

/// Returns the timestamp of the newest entry of the session file at `path`, read from its
/// end: the last complete line (a final line still being written is skipped) whose
/// top-level `timestamp` is a valid instant. `None` when no such line lies within
/// [`MAX_ACTIVITY_TAIL_BYTES`] of the end.
pub fn read_last_activity(path: &Path) -> Result<Option<Timestamp>, SummaryError> {
    let (file, metadata) = open_regular(path, Symlinks::Refuse)?;
    Ok(last_activity_of(&file, metadata.len())?)
}

/// Returns the timestamp of the newest entry of a session file that is already open (the
/// walk's descriptor), as [`read_last_activity`] reads the file at `path`: positional reads,
/// so the descriptor's offset does not matter; `path` only names the file in an error.
pub fn read_last_activity_from(
    path: &Path,
    file: &File,
) -> Result<Option<Timestamp>, SummaryError> {
    let size = crate::summary::regular_size(path, file)?;
    Ok(last_activity_of(file, size)?)
}

/// Returns the newest entry timestamp among the first `size` bytes of `file`, reading
/// backwards from `size` in windows that double from [`FIRST_TAIL_BYTES`] up to
/// [`MAX_ACTIVITY_TAIL_BYTES`].
pub(crate) fn last_activity_of(file: &File, size: u64) -> std::io::Result<Option<Timestamp>> {
    let mut buffer = Vec::new();
    Ok(read_tail_into(file, size, FIRST_TAIL_BYTES, &mut buffer)?.1)
}

/// Reads the end of the first `size` bytes of `file` into `buffer` (which ends up holding
/// exactly the final window, its earlier memory reused): a window of `first_window` bytes,
/// doubled until it holds a line with a timestamp, covers the file or reaches
/// [`MAX_ACTIVITY_TAIL_BYTES`]. Returns whether the window starts at the file's first byte,
/// and the newest entry timestamp in it.
pub(crate) fn read_tail_into(
    file: &File,
    size: u64,
    first_window: u64,
    buffer: &mut Vec<u8>,
) -> std::io::Result<(bool, Option<Timestamp>)> {
    let mut window = first_window.min(size).min(MAX_ACTIVITY_TAIL_BYTES);
    loop {
        let start = size - window;
        // The window is at most MAX_ACTIVITY_TAIL_BYTES, which fits in memory and in usize.
        buffer.resize(usize::try_from(window).unwrap_or(usize::MAX), 0);
        let n_read = read_full_at(file, buffer, start)?;
        buffer.truncate(n_read);
        let last_activity = newest_in(buffer, start == 0);
        if last_activity.is_some() || start == 0 || window >= MAX_ACTIVITY_TAIL_BYTES {
            return Ok((start == 0, last_activity));
        }
        window = (window * 2).min(MAX_ACTIVITY_TAIL_BYTES).min(size);
    }
}

/// Reads into `buffer` from `offset` until it is full or the file ends; returns the count.
pub(crate) fn read_full_at(file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read_at(&mut buffer[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(n_read) => filled += n_read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(filled)
}

/// Returns the timestamp of the last line in `bytes` that has one. The first line counts
/// only when `starts_at_file_start` (otherwise it may be the cut tail of a longer line); a
/// last line without a newline is tried too, and skipped unless it is complete JSON.
pub(crate) fn newest_in(bytes: &[u8], starts_at_file_start: bool) -> Option<Timestamp> {
    let mut end = bytes.len();
    for newline in memchr::memrchr_iter(b'\n', bytes) {
        if let Some(instant) = line_timestamp(&bytes[newline + 1..end]) {
            return Some(instant);
        }
        end = newline;
    }
    if starts_at_file_start {
        return line_timestamp(&bytes[..end]);
    }
    None
}

/// Returns the instant of a line's top-level `timestamp` member.
fn line_timestamp(line: &[u8]) -> Option<Timestamp> {
    #[derive(Deserialize)]
    struct Stamped<'a> {
        #[serde(borrow)]
        timestamp: Option<std::borrow::Cow<'a, str>>,
    }
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let stamped: Stamped<'_> = serde_json::from_slice(line).ok()?;
    pi_retrospect_core::timestamp::parse(&stamped.timestamp?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(body: &[u8], expected: Option<&str>) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, body).expect("write");
        let actual = read_last_activity(&path)
            .expect("readable")
            .map(|instant| instant.to_string());
        assert_eq!(
            actual.as_deref(),
            expected,
            "{}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        );
    }

    const HEADER: &str =
        r#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}"#;

    fn entry(timestamp: &str, text: &str) -> String {
        serde_json::json!({
            "type": "message",
            "id": "e",
            "timestamp": timestamp,
            "message": {"role": "user", "content": text, "timestamp": 1},
        })
        .to_string()
    }

    #[test]
    fn newest_entry_from_the_end() {
        check(HEADER.as_bytes(), Some("2026-01-01T00:00:00.000Z"));
        check(
            format!("{HEADER}\n").as_bytes(),
            Some("2026-01-01T00:00:00.000Z"),
        );
        check(
            format!(
                "{HEADER}\n{}\n{}\n",
                entry("2026-01-02T10:00:00.000Z", "a"),
                entry("2026-01-03T11:30:00.250Z", "b")
            )
            .as_bytes(),
            Some("2026-01-03T11:30:00.250Z"),
        );
        // A final line still being written, a damaged line and a line without a timestamp
        // are passed over for the newest complete one.
        check(
            format!(
                "{HEADER}\n{}\n{{broken\n{{\"type\":\"custom\"}}\n{{\"type\":\"message\",\"timestamp\":\"2026-01-09",
                entry("2026-01-02T10:00:00+02:00", "a"),
            )
            .as_bytes(),
            Some("2026-01-02T08:00:00.000Z"),
        );
        // CRLF line ends.
        check(
            format!("{HEADER}\r\n{}\r\n", entry("2026-01-05T00:00:00Z", "c")).as_bytes(),
            Some("2026-01-05T00:00:00.000Z"),
        );
        check(b"", None);
        check(b"\n\n", None);
    }

    #[test]
    fn a_long_last_entry_widens_the_window() {
        let long = "x".repeat(3 * FIRST_TAIL_BYTES as usize);
        check(
            format!(
                "{HEADER}\n{}\n{}\n",
                entry("2026-01-02T00:00:00Z", "a"),
                entry("2026-01-04T00:00:00Z", &long)
            )
            .as_bytes(),
            Some("2026-01-04T00:00:00.000Z"),
        );
    }

    #[test]
    fn the_read_is_bounded() {
        // The last line is longer than the bound: the activity is unknown rather than read
        // without limit (the caller uses the header's timestamp).
        let huge = "x".repeat(MAX_ACTIVITY_TAIL_BYTES as usize + 10);
        check(
            format!(
                "{HEADER}\n{}\n{}\n",
                entry("2026-01-02T00:00:00Z", "a"),
                entry("2026-01-04T00:00:00Z", &huge)
            )
            .as_bytes(),
            None,
        );
    }

    #[test]
    fn not_a_regular_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fifo = dir.path().join("f.jsonl");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(status.success());
        let error = read_last_activity(&fifo).expect_err("a FIFO is refused");
        assert!(error.to_string().contains("FIFO"), "{error}");
    }
}
