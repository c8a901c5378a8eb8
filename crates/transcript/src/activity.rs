//! A session's last activity: the timestamp of its newest entry, read from the end of the
//! file with a bounded read (never the file's modification time, which a copy, a backup or a
//! `touch` changes).

use std::borrow::Cow;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use pi_retrospect_core::{SessionSummary, Timestamp};
use pi_retrospect_header::{Symlinks, open_regular};
use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};

use crate::summary::SummaryError;

/// The first window read from the end of a file. Pi's last entry is usually an assistant
/// message or a tool result of a few kilobytes.
pub(crate) const FIRST_TAIL_BYTES: u64 = 8 * 1024;

/// The largest window read from the end of a file in one piece. When the lines that fit in
/// it hold no timestamp (one tool result larger than this), the read goes on backwards in
/// chunks of 1 MiB to the start of the line the window cut, whose first bytes
/// give its timestamp (final break review F3: the start time counted before, silently).
pub const MAX_ACTIVITY_TAIL_BYTES: u64 = 8 * 1024 * 1024;

/// How much the scan before the tail window reads at a time: its memory whatever the line.
const SCAN_CHUNK_BYTES: u64 = 1024 * 1024;

/// How much of a long line's start is decoded for its timestamp; Pi writes `timestamp` in
/// the first hundred bytes of an entry. A line whose start does not settle it is decoded
/// whole, streamed.
const LINE_PREFIX_BYTES: u64 = 8 * 1024;

/// What the end of a session file says about its last activity.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LastActivity {
    /// The newest entry's timestamp, when one was found.
    pub instant: Option<Timestamp>,
    /// Why the read stopped before finding one: no entry with a timestamp starts within the
    /// line cap of the end (a last line longer than the cap). The caller counts the start and
    /// warns with this reason.
    pub unknown: Option<String>,
}

impl LastActivity {
    fn found(instant: Option<Timestamp>) -> LastActivity {
        LastActivity {
            instant,
            unknown: None,
        }
    }

    /// Returns a summary that holds only the last activity.
    pub fn into_summary(self) -> SessionSummary {
        SessionSummary {
            last_activity: self.instant,
            last_activity_unknown: self.unknown,
            ..SessionSummary::default()
        }
    }
}

/// Returns the last activity of the session file at `path`, read from its end: the last
/// complete line (a final line still being written is skipped) whose top-level `timestamp`
/// is a valid instant, among the lines that start within the tool's line cap
/// ([`crate::DEFAULT_MAX_LINE_BYTES`]) of the end; when there is none within it, the reason
/// (see [`LastActivity::unknown`]).
pub fn read_last_activity(path: &Path) -> Result<LastActivity, SummaryError> {
    let (file, metadata) = open_regular(path, Symlinks::Refuse)?;
    Ok(last_activity_of(&file, metadata.len())?)
}

/// Returns the last activity of a session file that is already open (the walk's
/// descriptor), as [`read_last_activity`] reads the file at `path`: positional reads, so the
/// descriptor's offset does not matter; `path` only names the file in an error.
pub fn read_last_activity_from(path: &Path, file: &File) -> Result<LastActivity, SummaryError> {
    let size = crate::summary::regular_size(path, file)?;
    Ok(last_activity_of(file, size)?)
}

/// Returns the last activity among the first `size` bytes of `file`, reading backwards from
/// `size` in windows that double from [`FIRST_TAIL_BYTES`] up to
/// [`MAX_ACTIVITY_TAIL_BYTES`], then on before the window ([`scan_before_window`]).
pub(crate) fn last_activity_of(file: &File, size: u64) -> std::io::Result<LastActivity> {
    last_activity_within(file, size, max_line_bytes())
}

/// Returns the last activity as [`last_activity_of`] does, looking at lines that start
/// within `max_line` bytes of the end.
fn last_activity_within(file: &File, size: u64, max_line: u64) -> std::io::Result<LastActivity> {
    let mut buffer = Vec::new();
    let window = read_tail_into(file, size, FIRST_TAIL_BYTES, &mut buffer)?;
    if window.is_settled() {
        return Ok(LastActivity::found(window.last_activity));
    }
    scan_before_window(file, window.start, &mut buffer, max_line)
}

/// The tool's line cap as a file offset.
pub(crate) fn max_line_bytes() -> u64 {
    crate::scan::DEFAULT_MAX_LINE_BYTES as u64
}

/// The window read from the end of a file.
pub(crate) struct TailWindow {
    /// Where the window starts in the file.
    pub start: u64,
    /// The newest entry timestamp in the window.
    pub last_activity: Option<Timestamp>,
}

impl TailWindow {
    /// Returns whether the window starts at the file's first byte.
    pub fn starts_at_file_start(&self) -> bool {
        self.start == 0
    }

    /// Returns whether the window answers the last activity: it holds an entry with a
    /// timestamp, or it covers the whole file. Otherwise it reached
    /// [`MAX_ACTIVITY_TAIL_BYTES`] and the read goes on before it ([`scan_before_window`]).
    pub fn is_settled(&self) -> bool {
        self.last_activity.is_some() || self.start == 0
    }
}

/// Reads the end of the first `size` bytes of `file` into `buffer` (which ends up holding
/// exactly the final window, its earlier memory reused): a window of `first_window` bytes,
/// doubled until it holds a line with a timestamp, covers the file or reaches
/// [`MAX_ACTIVITY_TAIL_BYTES`].
pub(crate) fn read_tail_into(
    file: &File,
    size: u64,
    first_window: u64,
    buffer: &mut Vec<u8>,
) -> std::io::Result<TailWindow> {
    let mut window = first_window.min(size).min(MAX_ACTIVITY_TAIL_BYTES);
    loop {
        let start = size - window;
        // The window is at most MAX_ACTIVITY_TAIL_BYTES, which fits in memory and in usize.
        buffer.resize(usize::try_from(window).unwrap_or(usize::MAX), 0);
        let n_read = read_full_at(file, buffer, start)?;
        buffer.truncate(n_read);
        let last_activity = newest_in(buffer, start == 0);
        if last_activity.is_some() || start == 0 || window >= MAX_ACTIVITY_TAIL_BYTES {
            return Ok(TailWindow {
                start,
                last_activity,
            });
        }
        window = (window * 2).min(MAX_ACTIVITY_TAIL_BYTES).min(size);
    }
}

/// Returns the last activity of a file whose tail window (`buffer`, read from `window_start`)
/// holds no entry with a timestamp: the lines before the window's first newline, newest
/// first, are found by reading backwards in chunks of [`SCAN_CHUNK_BYTES`] into `buffer`
/// (so memory stays bounded whatever the line), and each line's timestamp is read from its
/// first bytes ([`line_timestamp_at`]). Only lines starting within `max_line` bytes of the
/// window's end are looked at, as `show` holds no longer line; past that the last activity
/// is unknown, with the reason.
pub(crate) fn scan_before_window(
    file: &File,
    window_start: u64,
    buffer: &mut Vec<u8>,
    max_line: u64,
) -> std::io::Result<LastActivity> {
    let window_end = window_start + buffer.len() as u64;
    // The line the window cut ends at the window's first newline; with none, it is a final
    // line without a newline (still being written unless it is complete JSON).
    let (mut end, mut is_terminated) = match memchr::memchr(b'\n', buffer) {
        Some(newline) => (window_start + newline as u64, true),
        None => (window_end, false),
    };
    // Bytes from `window_start` to `end` hold no newline: the search goes on before them.
    let mut search_end = window_start;
    let lowest_start = window_end.saturating_sub(max_line);
    let mut chunks = BackwardChunks::new(file, buffer);
    let mut is_first_line = true;
    loop {
        let line_start = match chunks.newline_before(search_end, lowest_start.saturating_sub(1))? {
            Some(newline) => newline + 1,
            None if lowest_start == 0 => 0,
            None => {
                return Ok(LastActivity {
                    instant: None,
                    unknown: Some(unknown_reason(is_first_line, max_line)),
                });
            }
        };
        if let Some(instant) = line_timestamp_at(file, line_start, end, is_terminated)? {
            return Ok(LastActivity::found(Some(instant)));
        }
        if line_start == 0 {
            return Ok(LastActivity::default());
        }
        end = line_start - 1;
        search_end = end;
        is_terminated = true;
        is_first_line = false;
    }
}

/// Returns the warning's reason when no entry with a timestamp starts within `max_line`
/// bytes of the end.
fn unknown_reason(is_first_line: bool, max_line: u64) -> String {
    let cap = if max_line.is_multiple_of(1024 * 1024) {
        format!("{} MiB", max_line / (1024 * 1024))
    } else {
        format!("{max_line} bytes")
    };
    if is_first_line {
        format!(
            "last activity not read: the last entry is on a line longer than {cap} (the line cap), so the start time counts"
        )
    } else {
        format!(
            "last activity not read: no entry in the last {cap} (the line cap) has a timestamp, so the start time counts"
        )
    }
}

/// Reads a file backwards in chunks of at most [`SCAN_CHUNK_BYTES`], into one buffer.
struct BackwardChunks<'a> {
    file: &'a File,
    buffer: &'a mut Vec<u8>,
    /// Where `buffer[0]` is in the file.
    start: u64,
}

impl<'a> BackwardChunks<'a> {
    fn new(file: &'a File, buffer: &'a mut Vec<u8>) -> BackwardChunks<'a> {
        buffer.clear();
        BackwardChunks {
            file,
            buffer,
            start: 0,
        }
    }

    /// Returns the offset of the last newline in the file's bytes from `lowest` to `end`
    /// (excluded), or `None` when there is none.
    fn newline_before(&mut self, end: u64, lowest: u64) -> std::io::Result<Option<u64>> {
        let mut end = end;
        while end > lowest {
            let cached_end = self.start + self.buffer.len() as u64;
            if end > self.start && end <= cached_end {
                let from = lowest.max(self.start);
                // Both bounds lie within the buffer, whose length is a usize.
                let slice = &self.buffer[(from - self.start) as usize..(end - self.start) as usize];
                if let Some(newline) = memchr::memrchr(b'\n', slice) {
                    return Ok(Some(from + newline as u64));
                }
                end = from;
                continue;
            }
            let chunk_start = end.saturating_sub(SCAN_CHUNK_BYTES).max(lowest);
            // At most SCAN_CHUNK_BYTES.
            self.buffer.resize((end - chunk_start) as usize, 0);
            let n_read = read_full_at(self.file, self.buffer, chunk_start)?;
            if n_read < self.buffer.len() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the file shrank while its end was read",
                ));
            }
            self.start = chunk_start;
        }
        Ok(None)
    }
}

/// Returns the timestamp of the line from `start` to `end` (its newline excluded) when it is
/// an entry with a valid top-level `timestamp`, as [`line_timestamp`] reads a whole line:
/// a short line is read whole; a long one's first [`LINE_PREFIX_BYTES`] are decoded member
/// by member (keys unescaped, so `"time\u0073tamp"` counts) until its `timestamp`; when
/// that does not settle it, or the line has no newline after it (a final line counts only
/// when it is complete JSON), the line is decoded whole, streamed, holding none of it.
fn line_timestamp_at(
    file: &File,
    start: u64,
    end: u64,
    is_terminated: bool,
) -> std::io::Result<Option<Timestamp>> {
    let length = end - start;
    let mut prefix = vec![0; length.min(LINE_PREFIX_BYTES) as usize];
    let n_read = read_full_at(file, &mut prefix, start)?;
    prefix.truncate(n_read);
    if length <= LINE_PREFIX_BYTES {
        return Ok(line_timestamp(&prefix));
    }
    let bom = "\u{feff}".as_bytes();
    let skipped = if prefix.starts_with(bom) {
        bom.len() as u64
    } else {
        0
    };
    if is_terminated {
        match leading_timestamp(&prefix[skipped as usize..]) {
            Leading::Stamp(instant) => return Ok(instant),
            Leading::NotAnEntry => return Ok(None),
            Leading::Unsettled => {}
        }
    }
    let line = std::io::Read::take(
        crate::summary::ReadAt {
            file,
            offset: start + skipped,
        },
        length - skipped,
    );
    let reader = std::io::BufReader::with_capacity(64 * 1024, line);
    #[derive(Deserialize)]
    struct Stamped {
        timestamp: Option<String>,
    }
    match serde_json::from_reader::<_, Stamped>(reader) {
        Ok(stamped) => Ok(stamped
            .timestamp
            .as_deref()
            .and_then(pi_retrospect_core::timestamp::parse)),
        Err(error) if error.is_io() => Err(error.into()),
        Err(_) => Ok(None),
    }
}

/// What a long line's first bytes say about its timestamp.
enum Leading {
    /// The top-level `timestamp` member was read: its instant, or `None` when it is not a
    /// valid one (the line has no usable timestamp).
    Stamp(Option<Timestamp>),
    /// The bytes ended before the `timestamp` member was reached.
    Unsettled,
    /// The line is not a JSON object, or is damaged before its `timestamp`.
    NotAnEntry,
}

/// Decodes the top-level members of an object from the first bytes of a line up to its
/// `timestamp` member. A duplicated `timestamp` later in the line is not seen (Pi writes each
/// member once).
fn leading_timestamp(prefix: &[u8]) -> Leading {
    struct Members<'a> {
        timestamp: &'a mut Option<Option<String>>,
    }
    impl<'de> Visitor<'de> for Members<'_> {
        type Value = ();

        fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            formatter.write_str("an entry object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                if key == "timestamp" {
                    *self.timestamp = Some(map.next_value::<Option<String>>()?);
                    // Found: the rest of the line is not read.
                    return Err(de::Error::custom("timestamp found"));
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut timestamp = None;
    let mut deserializer = serde_json::Deserializer::from_slice(prefix);
    let result = de::Deserializer::deserialize_map(
        &mut deserializer,
        Members {
            timestamp: &mut timestamp,
        },
    );
    match (timestamp, result) {
        (Some(text), _) => Leading::Stamp(
            text.as_deref()
                .and_then(pi_retrospect_core::timestamp::parse),
        ),
        (None, Err(error)) if error.is_eof() => Leading::Unsettled,
        // Damaged, not an object, or an object that ends within the first bytes of a longer
        // line (so the line is not JSON).
        (None, _) => Leading::NotAnEntry,
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
        check_reads(body, expected, true);
    }

    /// Checks the last activity of `body`, and with `with_ends` that the bounded read of
    /// `list --long` finds the same.
    fn check_reads(body: &[u8], expected: Option<&str>, with_ends: bool) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, body).expect("write");
        let activity = read_last_activity(&path).expect("readable");
        assert_eq!(activity.unknown, None);
        let actual = activity.instant.map(|instant| instant.to_string());
        if with_ends {
            let ends = crate::summary::read_summary_in(&path, crate::SummaryScope::Ends)
                .expect("readable")
                .last_activity
                .map(|instant| instant.to_string());
            assert_eq!(ends, actual, "ends read");
        }
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

    /// Writes `body` to a temp file and returns its last activity, looking at lines that
    /// start within `max_line` bytes of the end.
    fn activity_within(body: &[u8], max_line: u64) -> LastActivity {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, body).expect("write");
        let file = File::open(&path).expect("open");
        last_activity_within(&file, body.len() as u64, max_line).expect("readable")
    }

    /// Final break review F3: a last line longer than the tail window (a tool result of
    /// tens of megabytes) gives its own timestamp, read from its first bytes after a scan
    /// back to its start, whatever the spelling of its members; the start no longer counts
    /// silently.
    #[test]
    fn a_last_line_longer_than_the_window_gives_its_timestamp() {
        let huge = "x".repeat(MAX_ACTIVITY_TAIL_BYTES as usize + 10);
        let earlier = entry("2026-01-02T00:00:00Z", "a");
        let cases = [
            // As Pi writes it.
            (
                entry("2026-01-04T00:00:00Z", &huge),
                "2026-01-04T00:00:00.000Z",
            ),
            // Spaces around the colons, an escaped key, a BOM.
            (
                format!(
                    r#"{{"type": "message", "time\u0073tamp" : "2026-01-05T00:00:00Z", "t": "{huge}"}}"#
                ),
                "2026-01-05T00:00:00.000Z",
            ),
            (
                format!("\u{feff}{{\"timestamp\":\"2026-01-06T00:00:00Z\",\"t\":\"{huge}\"}}"),
                "2026-01-06T00:00:00.000Z",
            ),
            // The timestamp after the long member: the line is decoded whole.
            (
                format!(r#"{{"t":"{huge}","timestamp":"2026-01-07T00:00:00Z"}}"#),
                "2026-01-07T00:00:00.000Z",
            ),
            // No timestamp, a nested one only, an invalid one, a damaged line: the entry
            // before it counts.
            (format!(r#"{{"t":"{huge}"}}"#), "2026-01-02T00:00:00.000Z"),
            (
                format!(r#"{{"m":{{"timestamp":"2026-01-09T00:00:00Z"}},"t":"{huge}"}}"#),
                "2026-01-02T00:00:00.000Z",
            ),
            (
                format!(r#"{{"timestamp":"yesterday","t":"{huge}"}}"#),
                "2026-01-02T00:00:00.000Z",
            ),
            (
                format!(r#"{{"timestamp":5,"t":"{huge}"}}"#),
                "2026-01-02T00:00:00.000Z",
            ),
            (
                format!(r#"{{"type" "timestamp":"2026-01-09T00:00:00Z","t":"{huge}"}}"#),
                "2026-01-02T00:00:00.000Z",
            ),
        ];
        for (index, (last, expected)) in cases.into_iter().enumerate() {
            // The line endings are tried on the first case only: each case costs a few
            // megabytes written and read.
            let endings: &[&str] = if index == 0 {
                &["\n", "\r\n", "\n{\"type\":\"custom\"}\n"]
            } else {
                &["\n"]
            };
            for ending in endings {
                let body = format!("{HEADER}\n{earlier}\n{last}{ending}");
                // Decoding a long line whole is slow without optimisation: the ends read,
                // which shares the scan, is compared on two cases.
                check_reads(body.as_bytes(), Some(expected), index == 0 || index == 3);
            }
        }
        // A long final line still being written is passed over; a complete one counts.
        let cut = entry("2026-01-08T00:00:00Z", &huge);
        let cut = &cut[..cut.len() - 5];
        check_reads(
            format!("{HEADER}\n{earlier}\n{cut}").as_bytes(),
            Some("2026-01-02T00:00:00.000Z"),
            false,
        );
        check_reads(
            format!(
                "{HEADER}\n{earlier}\n{}",
                entry("2026-01-08T00:00:00Z", &huge)
            )
            .as_bytes(),
            Some("2026-01-08T00:00:00.000Z"),
            false,
        );
        // Only the header before the long line.
        check_reads(
            format!("{HEADER}\n{{\"t\":\"{huge}\"}}\n").as_bytes(),
            Some("2026-01-01T00:00:00.000Z"),
            false,
        );
    }

    /// Final break review F3: the scan stops at the line cap, as `show` holds no longer
    /// line, and says so rather than counting the start silently.
    #[test]
    fn the_scan_is_bounded_by_the_line_cap() {
        let huge = "x".repeat(MAX_ACTIVITY_TAIL_BYTES as usize + 1000);
        let body = format!(
            "{HEADER}\n{}\n{}\n",
            entry("2026-01-02T00:00:00Z", "a"),
            entry("2026-01-04T00:00:00Z", &huge)
        );
        let max_line = MAX_ACTIVITY_TAIL_BYTES + 500;
        let activity = activity_within(body.as_bytes(), max_line);
        assert_eq!(activity.instant, None);
        let reason = activity.unknown.expect("a reason");
        assert!(
            reason.contains(&format!("longer than {max_line} bytes (the line cap)")),
            "{reason}"
        );
        // Lines without a timestamp fill the cap: the reason says that.
        let filler = format!("{{\"t\":\"{}\"}}\n", "y".repeat(600_000));
        let body = format!(
            "{HEADER}\n{}\n{}{{\"t\":\"{huge}\"}}\n",
            entry("2026-01-02T00:00:00Z", "a"),
            filler.repeat(20),
        );
        let reason = activity_within(body.as_bytes(), MAX_ACTIVITY_TAIL_BYTES * 2)
            .unknown
            .expect("a reason");
        assert!(reason.contains("no entry in the last 16 MiB"), "{reason}");
        // Within the cap, the same file gives the entry before the filler.
        let activity = activity_within(body.as_bytes(), MAX_ACTIVITY_TAIL_BYTES * 4);
        assert_eq!(
            activity
                .instant
                .map(|instant| instant.to_string())
                .as_deref(),
            Some("2026-01-02T00:00:00.000Z")
        );
        assert_eq!(activity.unknown, None);
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
