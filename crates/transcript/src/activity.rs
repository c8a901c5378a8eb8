//! A session's last activity: the timestamp of its newest entry, read from the end of the
//! file with a bounded read (never the file's modification time, which a copy, a backup or a
//! `touch` changes).

use std::borrow::Cow;
use std::fs::File;
use std::path::Path;

use pi_retrospect_core::{SessionSummary, Timestamp};
use pi_retrospect_read::{ReadAt, Symlinks, open_regular, read_full_at};
use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};

use crate::summary::SummaryError;

/// The first window read from the end of a file. Pi's last entry is usually an assistant
/// message or a tool result of a few kilobytes.
pub(crate) const FIRST_TAIL_BYTES: u64 = 8 * 1024;

/// The largest window read from the end of a file in one piece. When the lines that fit in
/// it hold no timestamp (one tool result larger than this), the read goes on backwards in
/// chunks of 1 MiB through the line the window cut and the lines before it, each decoded
/// whole (the start time counted before, silently).
pub const MAX_ACTIVITY_TAIL_BYTES: u64 = 8 * 1024 * 1024;

/// How much the scan before the tail window reads at a time: its memory whatever the line.
const SCAN_CHUNK_BYTES: u64 = 1024 * 1024;

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
/// ([`pi_retrospect_read::DEFAULT_MAX_LINE_BYTES`]) of the end; when there is none within it, the reason
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
    pi_retrospect_read::DEFAULT_MAX_LINE_BYTES as u64
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
/// (so memory stays bounded whatever the line), each chunk ending at the end of the line
/// looked for. A line the chunk holds whole is decoded from it, as [`newest_in`] decodes the
/// window, so lines of any number cost one read per chunk (one read per
/// line before); only a line longer than a chunk is read on its own, streamed
/// ([`long_line_timestamp`]). Only lines starting within `max_line` bytes of the window's
/// end are looked at, as `show` holds no longer line; past that the last activity is
/// unknown, with the reason.
pub(crate) fn scan_before_window(
    file: &File,
    window_start: u64,
    buffer: &mut Vec<u8>,
    max_line: u64,
) -> std::io::Result<LastActivity> {
    let window_end = window_start + buffer.len() as u64;
    // The line the window cut ends at the window's first newline; with none, it is a final
    // line without a newline (still being written unless it is complete JSON).
    let mut end = match memchr::memchr(b'\n', buffer) {
        Some(newline) => window_start + newline as u64,
        None => window_end,
    };
    let lowest_start = window_end.saturating_sub(max_line);
    let mut chunks = BackwardChunks::new(file, buffer);
    let mut is_first_line = true;
    loop {
        let (line_start, instant) = match chunks.line_start(end, lowest_start)? {
            Some(LineStart::Held(start)) => (start, line_timestamp(chunks.held(start, end))),
            Some(LineStart::Long(start)) => (start, long_line_timestamp(file, start, end)?),
            None => {
                return Ok(LastActivity {
                    instant: None,
                    unknown: Some(unknown_reason(is_first_line, max_line)),
                });
            }
        };
        if instant.is_some() {
            return Ok(LastActivity::found(instant));
        }
        if line_start == 0 {
            return Ok(LastActivity::default());
        }
        end = line_start - 1;
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

/// Where a line found by [`BackwardChunks::line_start`] starts.
enum LineStart {
    /// The chunk buffer holds the whole line, from this offset.
    Held(u64),
    /// The line, from this offset, is longer than a chunk.
    Long(u64),
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

    /// Returns where the line that ends at `end` starts, or `None` when it starts before
    /// `lowest_start`. The line is searched in the buffer, and in a chunk read to end at
    /// `end` when the buffer does not reach back far enough, so the chunk holds whole every
    /// line of up to a chunk: each read moves the search back by at least half a chunk.
    fn line_start(&mut self, end: u64, lowest_start: u64) -> std::io::Result<Option<LineStart>> {
        // A newline just before `lowest_start` still starts a line within the bound.
        let lowest = lowest_start.saturating_sub(1);
        let buffer_end = self.start + self.buffer.len() as u64;
        if end <= self.start || end > buffer_end {
            self.read_chunk_ending_at(end, lowest)?;
        }
        loop {
            let from = lowest.max(self.start);
            if let Some(newline) = memchr::memrchr(b'\n', self.held(from, end)) {
                return Ok(Some(LineStart::Held(from + newline as u64 + 1)));
            }
            if from == lowest {
                // Searched down to the bound: the line starts at the file's start, or
                // before the bound.
                return Ok((lowest_start == 0).then_some(LineStart::Held(0)));
            }
            if self.start > end.saturating_sub(SCAN_CHUNK_BYTES).max(lowest) {
                // A chunk ending at `end` holds more of the line.
                self.read_chunk_ending_at(end, lowest)?;
                continue;
            }
            // Longer than a chunk: its start is searched for in the chunks before.
            return Ok(match self.newline_before(self.start, lowest)? {
                Some(newline) => Some(LineStart::Long(newline + 1)),
                None if lowest_start == 0 => Some(LineStart::Long(0)),
                None => None,
            });
        }
    }

    /// Returns the buffer's bytes from `from` to `end`, which it holds.
    fn held(&self, from: u64, end: u64) -> &[u8] {
        // Both bounds lie within the buffer, whose length is a usize.
        &self.buffer[(from - self.start) as usize..(end - self.start) as usize]
    }

    /// Reads the chunk that ends at `end`, of [`SCAN_CHUNK_BYTES`] or down to `lowest`.
    fn read_chunk_ending_at(&mut self, end: u64, lowest: u64) -> std::io::Result<()> {
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
        Ok(())
    }

    /// Returns the offset of the last newline in the file's bytes from `lowest` to `end`
    /// (excluded), or `None` when there is none.
    fn newline_before(&mut self, end: u64, lowest: u64) -> std::io::Result<Option<u64>> {
        let mut end = end;
        while end > lowest {
            let buffer_end = self.start + self.buffer.len() as u64;
            if end > self.start && end <= buffer_end {
                let from = lowest.max(self.start);
                if let Some(newline) = memchr::memrchr(b'\n', self.held(from, end)) {
                    return Ok(Some(from + newline as u64));
                }
                end = from;
                continue;
            }
            self.read_chunk_ending_at(end, lowest)?;
        }
        Ok(None)
    }
}

/// Returns the timestamp of a line longer than a chunk, from `start` to `end` (its newline
/// excluded), as [`line_timestamp`] reads a line in memory: the line is decoded whole,
/// streamed through a small buffer, so it counts only when all of it is one JSON object
/// (a torn write glued to the next entry counted by the timestamp in its
/// first bytes before, which Pi and `show` skip).
fn long_line_timestamp(file: &File, start: u64, end: u64) -> std::io::Result<Option<Timestamp>> {
    let bom = "\u{feff}".as_bytes();
    let mut first = [0; 3];
    let n_read = read_full_at(file, &mut first, start)?;
    let skipped = if first[..n_read] == *bom {
        bom.len() as u64
    } else {
        0
    };
    let line = std::io::Read::take(
        ReadAt::new(file, start + skipped),
        (end - start).saturating_sub(skipped),
    );
    let reader = std::io::BufReader::with_capacity(64 * 1024, line);
    let mut deserializer = serde_json::Deserializer::from_reader(reader);
    let decoded = StampedLine::deserialize(&mut deserializer)
        .and_then(|stamped| deserializer.end().map(|()| stamped));
    match decoded {
        Ok(stamped) => Ok(stamped.instant()),
        Err(error) if error.is_io() => Err(error.into()),
        Err(_) => Ok(None),
    }
}

/// The top-level `timestamp` of an entry line, decoded as `JSON.parse` (Pi) reads the line:
/// it must be one JSON object, every other member is checked and skipped without being
/// kept, a key's JSON escapes count (`"time\u0073tamp"`), and of repeated `timestamp`
/// members the last one wins. A value that is not a string is no
/// timestamp.
pub(crate) struct StampedLine<'de> {
    pub(crate) timestamp: Option<Cow<'de, str>>,
}

impl StampedLine<'_> {
    /// Returns the timestamp's instant, when it is a valid one.
    pub(crate) fn instant(&self) -> Option<Timestamp> {
        pi_retrospect_core::timestamp::parse(self.timestamp.as_deref()?)
    }
}

impl<'de> Deserialize<'de> for StampedLine<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = StampedLine<'de>;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("an entry object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut timestamp = None;
                while let Some(TimestampKey(is_timestamp)) = map.next_key()? {
                    if is_timestamp {
                        timestamp = map.next_value::<LooseStr<'de>>()?.0;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(StampedLine { timestamp })
            }
        }
        deserializer.deserialize_map(Members)
    }
}

/// Whether an object key is `timestamp`, compared without keeping the key.
struct TimestampKey(bool);

impl<'de> Deserialize<'de> for TimestampKey {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Key;
        impl Visitor<'_> for Key {
            type Value = TimestampKey;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a key")
            }

            fn visit_str<E: de::Error>(self, key: &str) -> Result<TimestampKey, E> {
                Ok(TimestampKey(key == "timestamp"))
            }
        }
        deserializer.deserialize_str(Key)
    }
}

/// A string value, borrowed from the line when it has no escape, or `None` for a value of
/// any other type (checked and skipped).
struct LooseStr<'de>(Option<Cow<'de, str>>);

impl<'de> Deserialize<'de> for LooseStr<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Loose;
        impl<'de> Visitor<'de> for Loose {
            type Value = LooseStr<'de>;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("any value")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(LooseStr(Some(Cow::Borrowed(text))))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(LooseStr(Some(Cow::Owned(text.to_owned()))))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(LooseStr(Some(Cow::Owned(text))))
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(LooseStr(None))
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(LooseStr(None))
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(LooseStr(None))
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(LooseStr(None))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LooseStr(None))
            }

            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                IgnoredAny.visit_seq(seq).map(|_| LooseStr(None))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                IgnoredAny.visit_map(map).map(|_| LooseStr(None))
            }
        }
        deserializer.deserialize_any(Loose)
    }
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

/// Returns the instant of a line's top-level `timestamp` member ([`StampedLine`]), when the
/// line is one JSON object: read with the tokenizer ([`crate::skim`]) when its answer is
/// certain, decoded by serde otherwise.
pub(crate) fn line_timestamp(line: &[u8]) -> Option<Timestamp> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
    // The finders first: on an entry they stop at its `timestamp` key, a few dozen bytes in,
    // and a run of lines without one (a damaged or foreign file read back from its end) is
    // passed over without being skimmed (skimming first made that 7-15
    // times slower).
    if !may_have_timestamp(line) {
        return None;
    }
    #[cfg(test)]
    tests::LINES_SKIMMED.with(|skimmed| skimmed.set(skimmed.get() + 1));
    match crate::skim::line_timestamp(line) {
        Some(timestamp) => timestamp
            .as_deref()
            .and_then(pi_retrospect_core::timestamp::parse),
        None => decoded_line(line)?.instant(),
    }
}

/// Returns a line's [`StampedLine`] decoded by serde, when the line is one JSON object: what
/// [`line_timestamp`] falls back on when the tokenizer's answer is not certain.
pub(crate) fn decoded_line(line: &[u8]) -> Option<StampedLine<'_>> {
    let mut deserializer = serde_json::Deserializer::from_slice(line);
    let stamped = StampedLine::deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    Some(stamped)
}

/// Returns whether a line can spell a `timestamp` key: it holds the word, or a `\u` escape
/// that could spell it. A line that cannot (a run of `{"a":1}` or `x` lines in a damaged
/// file) is passed over without being decoded.
fn may_have_timestamp(line: &[u8]) -> bool {
    static TIMESTAMP: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"timestamp"));
    static ESCAPE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\\u"));
    TIMESTAMP.find(line).is_some() || ESCAPE.find(line).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// The lines [`line_timestamp`] skimmed on this thread.
        pub(super) static LINES_SKIMMED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    /// Returns what `run` returns, with the number of positional reads it made and the bytes
    /// they returned.
    pub(super) fn count_reads<T>(run: impl FnOnce() -> T) -> (T, u64, u64) {
        let before = pi_retrospect_read::reads_on_this_thread();
        let value = run();
        let after = pi_retrospect_read::reads_on_this_thread();
        (value, after.0 - before.0, after.1 - before.1)
    }

    fn check(body: &[u8], expected: Option<&str>) {
        check_reads(body, expected, true);
    }

    /// Reading back through lines that cannot hold a `timestamp` key
    /// skims none of them; only the line that has one is skimmed.
    #[test]
    fn lines_without_a_timestamp_are_not_skimmed() {
        let stamped = r#"{"type":"message","timestamp":"2026-01-02T00:00:00.000Z"}"#;
        let mut body = format!("{HEADER}\n{stamped}\n");
        for index in 0..1000 {
            body.push_str(&format!("{{\"type\":\"custom\",\"n\":{index}}}\n"));
        }
        LINES_SKIMMED.with(|skimmed| skimmed.set(0));
        let newest = newest_in(body.as_bytes(), true).map(|instant| instant.to_string());
        assert_eq!(newest.as_deref(), Some("2026-01-02T00:00:00.000Z"));
        assert_eq!(LINES_SKIMMED.with(std::cell::Cell::get), 1);
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

    /// A last line longer than the tail window (a tool result of
    /// tens of megabytes) gives its own timestamp, decoded whole after a scan back to its
    /// start, whatever the spelling of its members; the start no longer counts silently.
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
            // A torn write glued to the next entry is not JSON, whatever
            // its first bytes say (Pi and `show` skip it).
            (
                format!(
                    r#"{{"type":"message","timestamp":"2026-01-09T00:00:00Z","t":"{huge}" garbage}}"#
                ),
                "2026-01-02T00:00:00.000Z",
            ),
            (
                format!(
                    r#"{{"type":"message","timestamp":"2026-01-09T00:00:00Z","t":"{huge}"}}{{"type":"message","timestamp":"2026-01-10T00:00:00Z"}}"#
                ),
                "2026-01-02T00:00:00.000Z",
            ),
            // Of repeated timestamps the last wins, as in JSON.parse.
            (
                format!(
                    r#"{{"timestamp":"2026-01-09T00:00:00Z","t":"{huge}","timestamp":"2026-01-10T00:00:00Z"}}"#
                ),
                "2026-01-10T00:00:00.000Z",
            ),
            (
                format!(r#"{{"timestamp":"2026-01-09T00:00:00Z","t":"{huge}","timestamp":null}}"#),
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

    /// A short line decodes as `JSON.parse` reads it, as a long one does:
    /// of repeated `timestamp` members the last wins (a value that is not a string is no
    /// timestamp), and a line that is not one JSON object is skipped.
    #[test]
    fn repeated_timestamps_take_the_last() {
        let earlier = entry("2026-01-02T00:00:00Z", "a");
        let cases = [
            (
                r#"{"type":"message","timestamp":"2026-01-03T00:00:00Z","id":"t","timestamp":"2026-01-04T00:00:00Z"}"#,
                Some("2026-01-04T00:00:00.000Z"),
            ),
            (
                r#"{"timestamp":5,"timestamp":"2026-01-05T00:00:00Z"}"#,
                Some("2026-01-05T00:00:00.000Z"),
            ),
            (
                r#"{"timestamp":"2026-01-03T00:00:00Z","timestamp":{"a":[1]}}"#,
                Some("2026-01-02T00:00:00.000Z"),
            ),
            (
                r#"{"timestamp":"2026-01-03T00:00:00Z","timestamp":"soon"}"#,
                Some("2026-01-02T00:00:00.000Z"),
            ),
            (
                r#"{"timestamp":"2026-01-03T00:00:00Z"} garbage"#,
                Some("2026-01-02T00:00:00.000Z"),
            ),
            (
                r#"["2026-01-03T00:00:00Z"]"#,
                Some("2026-01-02T00:00:00.000Z"),
            ),
        ];
        for (last, expected) in cases {
            check(
                format!("{HEADER}\n{earlier}\n{last}\n").as_bytes(),
                expected,
            );
            // The same line in a file longer than the ends read's whole-read size.
            let filler = format!("{{\"t\":\"{}\"}}\n", "y".repeat(40_000));
            check(
                format!("{HEADER}\n{earlier}\n{filler}{last}\n").as_bytes(),
                expected,
            );
        }
    }

    /// A file that ends in megabytes of short lines without a timestamp is
    /// scanned back in chunks, each line decoded from the chunk that holds it: the reads are
    /// counted in chunks, not in lines (one read per line before: millions).
    #[test]
    fn many_short_lines_cost_reads_per_chunk() {
        let filler_lines = ["{\"a\":1}\n", "x\n", "{\"t\":\"timestamp\"}\n", "\n"];
        let mut body = format!("{HEADER}\n{}\n", entry("2026-01-02T00:00:00Z", "a"));
        let mut index = 0;
        while body.len() < 20_000_000 {
            body.push_str(filler_lines[index % filler_lines.len()]);
            index += 1;
        }
        let size = body.len() as u64;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, &body).expect("write");
        let (activity, n_reads, n_bytes) = count_reads(|| read_last_activity(&path));
        let activity = activity.expect("readable");
        assert_eq!(
            activity
                .instant
                .map(|instant| instant.to_string())
                .as_deref(),
            Some("2026-01-02T00:00:00.000Z")
        );
        // The doubling window (12 reads, 16 MiB) and then a chunk per half a chunk at most.
        let n_chunks = size / SCAN_CHUNK_BYTES + 1;
        assert!(n_reads <= 12 + 2 * n_chunks, "{n_reads} reads");
        assert!(
            n_bytes <= 2 * MAX_ACTIVITY_TAIL_BYTES + 2 * size,
            "{n_bytes} bytes"
        );
        // The ends read of `list --long` shares the scan.
        let (summary, n_reads, _) =
            count_reads(|| crate::summary::read_summary_in(&path, crate::SummaryScope::Ends));
        assert_eq!(
            summary
                .expect("readable")
                .last_activity
                .map(|instant| instant.to_string())
                .as_deref(),
            Some("2026-01-02T00:00:00.000Z")
        );
        assert!(n_reads <= 20 + 2 * n_chunks, "{n_reads} reads");
    }

    /// Lines are decoded from the chunk that holds them whole, so the
    /// newest entry is found wherever the chunks' ends fall: before, across and after a
    /// chunk's end, longer than a chunk, and after lines longer than a chunk.
    #[test]
    fn lines_across_chunk_ends() {
        let chunk = SCAN_CHUNK_BYTES as usize;
        let window = MAX_ACTIVITY_TAIL_BYTES as usize;
        let short = "{\"a\":1}\n".repeat(window / 8 + 3);
        let long_filler = format!("{{\"t\":\"{}\"}}\n", "y".repeat(chunk + 100));
        let near_chunk = format!("{{\"t\":\"{}\"}}\n", "y".repeat(chunk - 300));
        // Empty lines after the entry shift where the chunks' ends fall.
        let cases = [
            (10, 0),
            (8 * 1024, 7),
            (chunk / 2, 0),
            (chunk - 200, 7),
            (chunk + 50, 0),
        ];
        for (text_length, shift) in cases {
            for filler in [&short, &near_chunk.repeat(9), &long_filler.repeat(9)] {
                let text = "z".repeat(text_length);
                let body = format!(
                    "{HEADER}\n{}\n{}\n{}{filler}",
                    entry("2026-01-02T00:00:00Z", "a"),
                    entry("2026-01-03T00:00:00Z", &text),
                    "\n".repeat(shift),
                );
                check_reads(
                    body.as_bytes(),
                    Some("2026-01-03T00:00:00.000Z"),
                    text_length == 10,
                );
            }
        }
    }

    /// The scan stops at the line cap, as `show` holds no longer
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
