//! Cheap facts from a session file's body: its name and first user message, read by
//! streaming, and its last activity, read from the end ([`crate::read_last_activity`]).
//!
//! Listing reads only headers; these facts are read only when a filter or an output field
//! asks for them. The body is streamed line by line up to the size the file had when it was
//! opened (a file Pi is still appending to gives a consistent snapshot), and only the lines
//! that can matter are decoded: a line is parsed as JSON only when it contains
//! `"session_info"`, or, until the first user message is found, `"user"`.

use std::fs::File;
use std::path::Path;

use memchr::memmem;
use pi_retrospect_core::SessionSummary;
use pi_retrospect_read::{OpenError, Symlinks, open_regular};
use serde_json::Value;

use pi_retrospect_read::{DEFAULT_MAX_LINE_BYTES, ReadAt, for_each_line};

/// Why a summary could not be read: the file could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    /// Opening failed, or the path is not a regular file.
    #[error("could not open session body: {}", .0.reason())]
    Open(#[from] OpenError),
    /// Reading failed part way.
    #[error("could not read session body: {}", pi_retrospect_read::describe_io(.0))]
    Read(#[from] std::io::Error),
}

/// How much of a session's body [`read_summary_in`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SummaryScope {
    /// Every line up to the size at open: the name is the latest `session_info` of the whole
    /// file. Time grows with the file.
    #[default]
    Whole,
    /// Only the ends: lines from the start until the first user message (those starting in
    /// the first [`HEAD_BYTES`]) and the window read from the end for the last activity (at
    /// least 16 KiB). The name is the latest `session_info` among those lines, so a name set
    /// in the middle of a long session and never again is not seen. Time is bounded per file
    /// whatever its size; a file of at most 16 KiB is read in one piece, and a file the
    /// windows cover is read whole, and then the facts are exact.
    Ends,
}

/// Lines starting in this many bytes from a file's start are read by [`SummaryScope::Ends`]
/// while looking for the first user message. Pi writes the system prompt (with every
/// AGENTS.md it loaded) as a message before the first prompt, so it has to reach past a
/// prompt of a few hundred kilobytes (64 KiB left such sessions untitled).
pub const HEAD_BYTES: u64 = 1024 * 1024;

/// Reads the name, first user message and last activity of one session file, the whole
/// body ([`SummaryScope::Whole`]).
pub fn read_summary(path: &Path) -> Result<SessionSummary, SummaryError> {
    read_summary_in(path, SummaryScope::Whole)
}

/// Reads the name, first user message and last activity of one session file, from as much
/// of its body as `scope` says.
///
/// [`SummaryScope::Whole`] streams the file once through the shared line reader
/// ([`for_each_line`]) up to the size it had when opened, holding at most the tool's line cap
/// ([`pi_retrospect_read::DEFAULT_MAX_LINE_BYTES`]) of any line, as `show` does: a longer line is
/// skipped. The last activity is then read from the end of the same snapshot, as
/// [`crate::read_last_activity`] reads it.
pub fn read_summary_in(path: &Path, scope: SummaryScope) -> Result<SessionSummary, SummaryError> {
    let (file, metadata) = open_regular(path, Symlinks::Refuse)?;
    Ok(summary_of(&file, metadata.len(), scope)?)
}

/// Reads the name, first user message and last activity of a session file that is already
/// open (the walk's descriptor, which read its header), the whole body
/// ([`SummaryScope::Whole`]), exactly as [`read_summary`] reads the file at `path`.
///
/// Reads are positional from the file's first byte, so the descriptor's offset does not
/// matter and is not moved. `path` only names the file in an error. The descriptor is checked
/// with `fstat` (anything but a regular file is refused, as [`read_summary`] refuses it), and
/// its size then is the snapshot read.
pub fn read_summary_from(path: &Path, file: &File) -> Result<SessionSummary, SummaryError> {
    read_summary_from_in(path, file, SummaryScope::Whole)
}

/// Reads the facts of a session file that is already open, from as much of its body as
/// `scope` says, exactly as [`read_summary_in`] reads the file at `path` (positional reads;
/// `path` only names the file in an error).
pub fn read_summary_from_in(
    path: &Path,
    file: &File,
    scope: SummaryScope,
) -> Result<SessionSummary, SummaryError> {
    let size = regular_size(path, file)?;
    Ok(summary_of(file, size, scope)?)
}

/// Returns the size of the open `file` after checking that it is a regular file.
pub(crate) fn regular_size(path: &Path, file: &File) -> Result<u64, SummaryError> {
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(SummaryError::Open(OpenError::NotRegular {
            path: path.to_owned(),
            kind: pi_retrospect_read::describe_file_type(&metadata.file_type()),
        }));
    }
    Ok(metadata.len())
}

/// Reads the facts of the first `size` bytes of `file` as `scope` says.
fn summary_of(file: &File, size: u64, scope: SummaryScope) -> std::io::Result<SessionSummary> {
    match scope {
        SummaryScope::Whole => whole_summary_of(file, size),
        // A small file is read in one piece, which serves as head and tail: its facts are
        // exact.
        SummaryScope::Ends if size <= WHOLE_READ_BYTES => whole_summary_of(file, size),
        SummaryScope::Ends => ends_summary_with(file, size, &[]),
    }
}

/// Reads the facts of a file longer than [`WHOLE_READ_BYTES`] from its ends: the head until
/// the first user message, then the tail for the last activity; the name is the latest
/// `session_info` in the tail, else in the head. The file's first bytes are taken from `head`
/// when the caller already read them (it may be empty), and read on from there only when
/// they do not reach the first user message.
fn ends_summary_with(file: &File, size: u64, head: &[u8]) -> std::io::Result<SessionSummary> {
    let mut summary = SessionSummary::default();
    SCRATCH.with_borrow_mut(|buffer| {
        let window =
            crate::activity::read_tail_into(file, size, crate::activity::FIRST_TAIL_BYTES, buffer)?;
        if window.starts_at_file_start() {
            // The tail grew to cover the whole file: every fact is exact.
            FACTS.apply_whole(buffer, &mut summary);
            summary.last_activity = window.last_activity;
            return Ok(summary);
        }
        let tail_name = FACTS.last_name_in(buffer, false, true);
        if window.is_settled() {
            summary.last_activity = window.last_activity;
        } else {
            // The window reached its cap inside one long line: the read goes on before it,
            // in bounded chunks (the buffer is free again once the tail's name is taken).
            let activity = crate::activity::scan_before_window(
                file,
                window.start,
                buffer,
                crate::activity::max_line_bytes(),
            )?;
            summary.last_activity = activity.instant;
            summary.last_activity_unknown = activity.unknown;
        }
        read_head(file, size, head, buffer, &mut summary)?;
        // The tail ends at the end of the snapshot, so its last name is the latest.
        if let Some(name) = tail_name {
            summary.name = name;
        }
        Ok(summary)
    })
}

/// Reads the bounded facts ([`SummaryScope::Ends`]) of a session file that is already open,
/// whose first bytes the caller already read (the walk reads them with the header): `head`
/// from the file's first byte, the whole file when `head_is_whole`. A whole head is all
/// there is to read, so no other read is made; otherwise the file is read as
/// [`read_summary_from_in`] reads it, minus what `head` holds.
pub fn read_ends_with_head(
    path: &Path,
    file: &File,
    head: &[u8],
    head_is_whole: bool,
) -> Result<SessionSummary, SummaryError> {
    if head_is_whole {
        let mut summary = SessionSummary::default();
        FACTS.apply_whole(head, &mut summary);
        summary.last_activity = crate::activity::newest_in(head, true);
        return Ok(summary);
    }
    let size = seekable_size(path, file)?;
    if size <= WHOLE_READ_BYTES || size <= head.len() as u64 {
        return Ok(whole_summary_of(file, size)?);
    }
    Ok(ends_summary_with(file, size, head)?)
}

/// Returns the size of a file the walk found to be a regular one, from a seek to its end,
/// which costs less than `fstat` (it fills in much more than the size; every read after
/// this one is positional, so where the descriptor stands does not matter). Should the file
/// have been replaced since by something that cannot seek (a FIFO), `fstat` says what it is.
fn seekable_size(path: &Path, mut file: &File) -> Result<u64, SummaryError> {
    use std::io::Seek;
    match file.seek(std::io::SeekFrom::End(0)) {
        Ok(size) => Ok(size),
        Err(_) => regular_size(path, file),
    }
}

/// Files up to this size are read by [`whole_summary_of`] in one positional read into a
/// buffer each thread reuses; longer ones are streamed. It equals the stream's first read
/// ([`for_each_line`] asks for at most 1 MiB at a time), so memory is what streaming holds,
/// and it cannot hold a line longer than [`MAX_FACT_LINE_BYTES`], so no line is skipped.
const ONE_READ_BYTES: u64 = 1024 * 1024;

/// Reads the facts of the first `size` bytes of `file`: the name is the latest
/// `session_info` of the whole body, the first user message the first in file order, the
/// last activity the newest entry timestamp read from the end.
fn whole_summary_of(file: &File, size: u64) -> std::io::Result<SessionSummary> {
    let facts = &*FACTS;
    let mut summary = SessionSummary::default();
    if size <= ONE_READ_BYTES {
        return SCRATCH.with_borrow_mut(|buffer| {
            // Grown (and zeroed) only when a larger file comes: the memory is reused.
            let size = usize::try_from(size).unwrap_or(usize::MAX);
            if buffer.len() < size {
                buffer.resize(size, 0);
            }
            let n_read = pi_retrospect_read::read_full_at(file, &mut buffer[..size], 0)?;
            let bytes = &buffer[..n_read];
            facts.apply_whole(bytes, &mut summary);
            summary.last_activity = crate::activity::newest_in(bytes, true);
            Ok(summary)
        });
    }
    // Positional reads from 0: the caller's descriptor may stand anywhere (the walk read its
    // header through it).
    let reader = pi_retrospect_read::ReadAt::new(file, 0);
    for_each_line(
        reader,
        size,
        pi_retrospect_read::DEFAULT_MAX_LINE_BYTES,
        |line| {
            if line.line_no == 1 || line.over_long.is_some() {
                return;
            }
            facts.apply(line.bytes, &mut summary);
        },
    )?;
    let activity = crate::activity::last_activity_of(file, size)?;
    summary.last_activity = activity.instant;
    summary.last_activity_unknown = activity.unknown;
    Ok(summary)
}

/// What [`scan_summary_from`] read: the facts of the file's first `size` bytes and how far
/// its whole lines reach, so that a later read of what was appended can go on from there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SummaryScan {
    /// The facts, as [`read_summary`] reads them (the whole body).
    pub summary: SessionSummary,
    /// The offset just past the last newline read: where the next line starts.
    pub lines_end: u64,
    /// The bytes of the body streamed by this read (from `from` to `size`), not counting the
    /// bounded read from the end for the last activity.
    pub n_bytes_scanned: u64,
}

/// Reads the whole-body facts of the first `size` bytes of the open `file` from offset
/// `from` on, going on from `prior` (the facts of the bytes before `from`): a `session_info`
/// after `from` sets the name, a first user message is looked for only when `prior` has
/// none. `from` must be the start of a line (0, or the [`SummaryScan::lines_end`] of an
/// earlier read of the same file); from 0 the facts equal [`read_summary_from`]'s. The last
/// activity is read again from the end of the `size` bytes, as every read reads it.
///
/// Reads are positional, so the descriptor's offset does not matter.
pub fn scan_summary_from(
    file: &File,
    size: u64,
    prior: SessionSummary,
    from: u64,
) -> Result<SummaryScan, SummaryError> {
    let facts = &*FACTS;
    let mut summary = prior;
    let from = from.min(size);
    let mut lines_end = from;
    let reader = ReadAt { file, offset: from };
    let n_bytes_scanned = for_each_line(reader, size - from, DEFAULT_MAX_LINE_BYTES, |line| {
        let length = line.over_long.unwrap_or(line.bytes.len() as u64);
        if line.has_newline {
            lines_end = from + line.offset + length + 1;
        }
        if (from == 0 && line.line_no == 1) || line.over_long.is_some() {
            return;
        }
        facts.apply(line.bytes, &mut summary);
    })?;
    let activity = crate::activity::last_activity_of(file, size)?;
    summary.last_activity = activity.instant;
    summary.last_activity_unknown = activity.unknown;
    Ok(SummaryScan {
        summary,
        lines_end,
        n_bytes_scanned,
    })
}

thread_local! {
    /// The buffer a small file, or a file's ends, are read into, kept per thread so that
    /// listing thousands of files neither allocates nor zeroes one per file.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The finders for the only lines worth decoding, built once.
static FACTS: std::sync::LazyLock<FactFinder> = std::sync::LazyLock::new(FactFinder::new);

/// Files up to this size are read in one piece by [`SummaryScope::Ends`]. A caller that
/// reads this many bytes of a file's start anyway (the walk, with the header) hands them to
/// [`read_ends_with_head`], and a file no longer than that costs no other read.
pub const ENDS_WHOLE_BYTES: usize = 16 * 1024;
const WHOLE_READ_BYTES: u64 = ENDS_WHOLE_BYTES as u64;

/// Applies the head of `file` (lines starting in the first [`HEAD_BYTES`], until the first
/// user message) to `summary`. The file's first bytes are taken from `initial` where the
/// caller already holds them (copied into `buffer`, scratch space, only when more must be
/// read).
fn read_head(
    file: &File,
    size: u64,
    initial: &[u8],
    buffer: &mut Vec<u8>,
    summary: &mut SessionSummary,
) -> std::io::Result<()> {
    let mut head = HeadLines::default();
    if !initial.is_empty() {
        if head.apply(initial, size, false, summary) {
            return Ok(());
        }
        buffer.clear();
        buffer.extend_from_slice(initial);
    } else {
        buffer.clear();
    }
    // The first read is small: Pi writes the first user message a few lines in.
    let mut window = if buffer.is_empty() {
        (8 * 1024u64).min(size)
    } else {
        (buffer.len() as u64 * 2).min(size)
    };
    loop {
        let old_len = buffer.len();
        let wanted = usize::try_from(window).unwrap_or(usize::MAX);
        buffer.resize(wanted.max(old_len), 0);
        let n_read =
            pi_retrospect_read::read_full_at(file, &mut buffer[old_len..], old_len as u64)?;
        buffer.truncate(old_len + n_read);
        // A read that comes back short means the file ended before `size` (it shrank since).
        let is_cut = buffer.len() < wanted;
        if head.apply(buffer, size, is_cut, summary) {
            return Ok(());
        }
        window = (window * 2).min(size);
    }
}

/// Where the head's lines have been applied up to.
#[derive(Default)]
struct HeadLines {
    /// Bytes applied (whole lines with their newlines).
    applied: usize,
    /// Lines applied, the header included.
    line_no: u64,
}

impl HeadLines {
    /// Applies the whole lines of `bytes` (the file's first bytes, of which those before
    /// `self.applied` are done) to `summary`; returns whether the head is done: the first
    /// user message found, [`HEAD_BYTES`] passed, a line too long to decode, or the end of
    /// the file (at `size`, or sooner when `is_cut`) reached.
    fn apply(
        &mut self,
        bytes: &[u8],
        size: u64,
        is_cut: bool,
        summary: &mut SessionSummary,
    ) -> bool {
        while let Some(position) = memchr::memchr(b'\n', &bytes[self.applied..]) {
            if position > MAX_FACT_LINE_BYTES {
                // Too long to decode: the head ends here rather than skip on without bound.
                return true;
            }
            let line = &bytes[self.applied..self.applied + position];
            self.line_no += 1;
            self.applied += position + 1;
            if self.line_no > 1 {
                FACTS.apply(line, summary);
            }
            if summary.first_user_message.is_some() || self.applied as u64 >= HEAD_BYTES {
                return true;
            }
        }
        let is_end = bytes.len() as u64 >= size || is_cut;
        let line_is_too_long = bytes.len() - self.applied > MAX_FACT_LINE_BYTES;
        if is_end || line_is_too_long {
            if is_end && self.line_no >= 1 && self.applied < bytes.len() {
                // A last line without a newline: complete JSON counts, as for the stream.
                FACTS.apply(&bytes[self.applied..], summary);
            }
            return true;
        }
        false
    }
}

/// What decides the facts of one line: the finders for the only lines worth decoding.
///
/// A line is decoded for the name when it holds `"session_info"`, and for the first user
/// message when it holds `"user"`; a line holding a `\u` escape is decoded for both, since
/// `"session\u005finfo"` or `"\u0075ser"` is the same string to a JSON reader (Pi's
/// included) and would hide from the plain finders. Pi writes such escapes only
/// for control characters, so these lines are few.
struct FactFinder {
    session_info: memmem::Finder<'static>,
    user: memmem::Finder<'static>,
    escape: memmem::Finder<'static>,
}

impl FactFinder {
    fn new() -> FactFinder {
        FactFinder {
            session_info: rare_pair_finder(b"\"session_info\"", *b"_o"),
            user: rare_pair_finder(b"\"user\"", *b"\"u"),
            escape: memmem::Finder::new(b"\\u"),
        }
    }

    /// Applies one line (not the header) to `summary`: a `session_info` entry sets the name
    /// (the latest wins), the first user message is kept. A line holding `"session_info"`
    /// is never a first message.
    fn apply(&self, bytes: &[u8], summary: &mut SessionSummary) {
        let has_info = self.session_info.find(bytes).is_some();
        let has_escape = self.escape.find(bytes).is_some();
        if has_info || has_escape {
            if let Some(name) = session_name(bytes) {
                summary.name = name;
                return;
            }
            if has_info {
                return;
            }
        }
        if summary.first_user_message.is_none() && (has_escape || self.user.find(bytes).is_some()) {
            summary.first_user_message = user_message_text(bytes);
        }
    }

    /// Applies a whole file (`bytes`, header first) to `summary` as [`FactFinder::apply`]
    /// applied to each line after the first, in order, would: the name is that of the last
    /// line that is a `session_info` entry, and the first user message is looked for only in
    /// lines without `"session_info"`. Each pattern is searched over the whole body instead
    /// of once per line.
    fn apply_whole(&self, bytes: &[u8], summary: &mut SessionSummary) {
        let Some(header_end) = memchr::memchr(b'\n', bytes) else {
            return;
        };
        let body = &bytes[header_end + 1..];
        // Most bodies hold no escape at all: one pass says so, and the escape finder need
        // not run again, neither for the first message nor for the name.
        let first_escape = self.escape.find(body);
        let mut from = 0;
        while summary.first_user_message.is_none() {
            let next_user = self.user.find(&body[from..]);
            let next_escape = match first_escape {
                None => None,
                Some(at) if at >= from => Some(at - from),
                Some(_) => self.escape.find(&body[from..]),
            };
            let Some(found) = next_user.into_iter().chain(next_escape).min() else {
                break;
            };
            let (start, end) = line_around(body, from + found);
            let line = &body[start..end];
            if self.session_info.find(line).is_none() {
                summary.first_user_message = user_message_text(line);
            }
            from = end;
        }
        if let Some(name) = self.last_name_in(body, true, first_escape.is_some()) {
            summary.name = name;
        }
    }

    /// Returns the name set by the last whole `session_info` line of `bytes` (the first
    /// line counts only when `starts_at_file_start`), or `None` when there is none. Lines
    /// holding a `\u` escape are looked at only when `may_have_escape` (the caller knows
    /// when `bytes` holds none).
    fn last_name_in(
        &self,
        bytes: &[u8],
        starts_at_file_start: bool,
        may_have_escape: bool,
    ) -> Option<Option<String>> {
        let first_newline = if starts_at_file_start {
            0
        } else {
            memchr::memchr(b'\n', bytes)? + 1
        };
        let bytes = &bytes[first_newline..];
        // Most windows hold no match at all: two passes over the whole window say so (a
        // search per line would pay a call per line). Otherwise the lines from the last down
        // to the one holding the first match are searched one by one, each forward
        // (memchr's reverse substring search is not vectorised; its newline search is), so
        // each byte is looked at a bounded number of times whatever the lines hold: finding
        // the line of every match made a long line full of `\u` escapes (coloured tool
        // output, which Pi writes as `\u001b`) quadratic.
        let first_info = self.session_info.find(bytes);
        let first_escape = may_have_escape.then(|| self.escape.find(bytes)).flatten();
        let first_match = match (first_info, first_escape) {
            (Some(info), Some(escape)) => info.min(escape),
            (Some(found), None) | (None, Some(found)) => found,
            (None, None) => return None,
        };
        let mut end = bytes.len();
        loop {
            let start = memchr::memrchr(b'\n', &bytes[..end]).map_or(0, |newline| newline + 1);
            let line = &bytes[start..end];
            #[cfg(test)]
            tests::LINES_TRIED.with(|tried| tried.set(tried.get() + 1));
            let is_candidate = self.session_info.find(line).is_some()
                || (may_have_escape && self.escape.find(line).is_some());
            if is_candidate && let Some(name) = session_name(line) {
                return Some(name);
            }
            if start <= first_match {
                return None;
            }
            end = start - 1;
        }
    }
}

/// Returns a finder for `needle` that looks first for the two bytes of `rare`, which must
/// occur in it.
///
/// memchr's finder scans for the needle's two rarest bytes and checks each place they both
/// occur. Its idea of rare comes from prose and code, where `"` is uncommon, so for
/// `"user"` it picks the two quotes, which JSON puts around every four-letter key (`"type"`,
/// `"role"`, `"text"`): most places checked are no match. Pairs chosen on the benchmark's
/// transcripts scan a file's ends about 1.6 times as fast (`"u` for `"user"`, `_o` for
/// `"session_info"`). What is found is the same whichever pair is used.
fn rare_pair_finder(needle: &'static [u8], rare: [u8; 2]) -> memmem::Finder<'static> {
    memmem::FinderBuilder::new().build_forward_with_ranker(RareFirst(rare), needle)
}

/// A byte frequency ranking in which the two given bytes are the rarest and all others
/// equally common.
struct RareFirst([u8; 2]);

impl memchr::arch::all::packedpair::HeuristicFrequencyRank for RareFirst {
    fn rank(&self, byte: u8) -> u8 {
        if byte == self.0[0] {
            0
        } else if byte == self.0[1] {
            1
        } else {
            u8::MAX
        }
    }
}

/// Returns the bounds of the line of `bytes` that holds the byte at `position`, without its
/// newline.
fn line_around(bytes: &[u8], position: usize) -> (usize, usize) {
    let start = memchr::memrchr(b'\n', &bytes[..position]).map_or(0, |newline| newline + 1);
    let end =
        memchr::memchr(b'\n', &bytes[position..]).map_or(bytes.len(), |newline| position + newline);
    (start, end)
}

/// Returns the name a `session_info` line sets (`Some(None)` when it clears it), or `None`
/// when the line is not a `session_info` entry.
fn session_name(line: &[u8]) -> Option<Option<String>> {
    let entry = parse_object(line)?;
    if entry.get("type").and_then(Value::as_str) != Some("session_info") {
        return None;
    }
    Some(
        entry
            .get("name")
            .and_then(Value::as_str)
            .map(pi_retrospect_core::json_text::js_trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned),
    )
}

/// The longest line decoded for these facts. A session name is a few words and most first
/// messages are short; a longer line is skipped rather than held in memory, so reading facts
/// costs a bounded buffer whatever the file holds.
pub const MAX_FACT_LINE_BYTES: usize = 1024 * 1024;

/// Decodes `line` as a JSON object, as `show` reads it ([`pi_retrospect_read::decode_lossy`]): a
/// number too large for a float (`1e400`) reads as `null`, and invalid UTF-8 and a lone
/// surrogate escape (`\ud83d`) as U+FFFD, so the rest of the line survives and `list` shows
/// the name and first message that `show` does. The lossy repair runs
/// only when the strict decoding fails.
fn parse_object(line: &[u8]) -> Option<serde_json::Map<String, Value>> {
    match pi_retrospect_read::decode_lossy(line) {
        Value::Object(object) => Some(object),
        _ => None,
    }
}

/// Returns the text of `line` when it is a `message` entry with role `user` (text blocks
/// joined by newlines, `None` when blank), as [`user_text`] finds it in the decoded line.
///
/// The line is read with the tokenizer first ([`crate::skim::user_message_text`]), which
/// answers the common case exactly without serde. When that answer is not certain, the line
/// is decoded into
/// borrowed fields ([`typed::UserLine`]), which costs a few times less than a [`Value`];
/// anything that shape cannot hold (a member of another type, a duplicated key) is decoded as
/// a [`Value`] instead, so the answer is always [`user_text`]'s.
pub(crate) fn user_message_text(line: &[u8]) -> Option<String> {
    match crate::skim::user_message_text(line) {
        Some(text) => text,
        None => decoded_user_message_text(line),
    }
}

/// Returns what [`user_message_text`] returns, decoded by serde alone: what it falls back on
/// when the tokenizer's answer ([`crate::skim`]) is not certain.
pub(crate) fn decoded_user_message_text(line: &[u8]) -> Option<String> {
    match serde_json::from_slice::<typed::UserLine<'_>>(line) {
        Ok(entry) => entry.user_text(),
        Err(_) => user_text(&parse_object(line)?),
    }
}

/// The first user message's line, decoded into the few members that matter, borrowed from
/// the line where no escape needs decoding.
mod typed {
    use std::borrow::Cow;
    use std::fmt;

    use serde::Deserialize;
    use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

    #[derive(Deserialize)]
    pub(super) struct UserLine<'a> {
        #[serde(rename = "type", borrow, default)]
        kind: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        message: Option<Message<'a>>,
    }

    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow, default)]
        role: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        content: Option<Content<'a>>,
    }

    #[derive(Deserialize)]
    struct Block<'a> {
        #[serde(rename = "type", borrow, default)]
        kind: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        text: Option<Cow<'a, str>>,
    }

    /// A message's `content`: a string, a list of blocks, or anything else (which holds no
    /// text).
    enum Content<'a> {
        Text(Cow<'a, str>),
        Blocks(Vec<Block<'a>>),
        Other,
    }

    impl UserLine<'_> {
        /// Returns the text of a user message, as `super::user_text` returns it.
        pub(super) fn user_text(&self) -> Option<String> {
            if self.kind.as_deref() != Some("message") {
                return None;
            }
            let message = self.message.as_ref()?;
            if message.role.as_deref() != Some("user") {
                return None;
            }
            let text = match message.content.as_ref()? {
                Content::Text(text) => text.clone().into_owned(),
                Content::Blocks(blocks) => blocks
                    .iter()
                    .filter(|block| block.kind.as_deref() == Some("text"))
                    .filter_map(|block| block.text.as_deref())
                    .collect::<Vec<_>>()
                    .join("\n"),
                Content::Other => return None,
            };
            (!text.trim().is_empty()).then_some(text)
        }
    }

    impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
        fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct ContentVisitor;

            impl<'de> Visitor<'de> for ContentVisitor {
                type Value = Content<'de>;

                fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                    formatter.write_str("message content")
                }

                fn visit_borrowed_str<E: de::Error>(
                    self,
                    text: &'de str,
                ) -> Result<Self::Value, E> {
                    Ok(Content::Text(Cow::Borrowed(text)))
                }

                fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                    Ok(Content::Text(Cow::Owned(text.to_owned())))
                }

                fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                    Ok(Content::Text(Cow::Owned(text)))
                }

                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                    let mut blocks = Vec::new();
                    while let Some(block) = seq.next_element::<Block<'de>>()? {
                        blocks.push(block);
                    }
                    Ok(Content::Blocks(blocks))
                }

                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    Ok(Content::Other)
                }

                fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                    Ok(Content::Other)
                }

                fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                    Ok(Content::Other)
                }

                fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                    Ok(Content::Other)
                }

                fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                    Ok(Content::Other)
                }

                fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                    Ok(Content::Other)
                }
            }

            deserializer.deserialize_any(ContentVisitor)
        }
    }
}

/// Returns the text of a `message` entry with role `user`, text blocks joined by newlines.
fn user_text(entry: &serde_json::Map<String, Value>) -> Option<String> {
    if entry.get("type").and_then(Value::as_str) != Some("message") {
        return None;
    }
    let message = entry.get("message")?;
    if message.get("role").and_then(Value::as_str) != Some("user") {
        return None;
    }
    let text = match message.get("content")? {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// The lines [`FactFinder::last_name_in`] looked at on this thread.
        pub(super) static LINES_TRIED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    /// The name search from the end looks at each line once, however many
    /// escapes or `"session_info"` strings a line holds (it found the line of every match,
    /// scanning back to the line's start each time: quadratic in a long line of them), and
    /// still finds the last `session_info` line, escaped or not.
    #[test]
    fn the_name_search_from_the_end_looks_at_each_line_once() {
        let facts = FactFinder::new();
        let colours = "\\u001b[32mok\\u001b[0m ".repeat(20_000);
        let infos = "\"session_info\",".repeat(20_000);
        let body = format!(
            "{HEADER}\n{}\n{}\n{}\n{}\n{}\n",
            r#"{"type":"session_info","name":"early"}"#,
            r#"{"type":"session\u005finfo","name":"escaped"}"#,
            format_args!(
                r#"{{"type":"message","message":{{"role":"toolResult","content":"{colours}"}}}}"#
            ),
            format_args!(r#"{{"type":"custom","details":[{infos}0]}}"#),
            r#"{"type":"message","message":{"role":"assistant","content":"done"}}"#,
        );
        let n_lines = body.lines().count() as u64;
        LINES_TRIED.with(|tried| tried.set(0));
        let name = facts.last_name_in(body.as_bytes(), true, true);
        assert_eq!(name, Some(Some("escaped".to_owned())));
        let tried = LINES_TRIED.with(std::cell::Cell::get);
        assert!(tried <= n_lines + 1, "{tried} lines tried of {n_lines}");
        // Without the escaped line's escape being looked for, the plain one before it wins.
        assert_eq!(
            facts.last_name_in(body.as_bytes(), true, false),
            Some(Some("early".to_owned()))
        );
        // A window without a match is not searched line by line.
        let plain = format!(
            "{HEADER}\n{}\n",
            r#"{"type":"message","message":{"role":"assistant","content":"done"}}"#
        );
        LINES_TRIED.with(|tried| tried.set(0));
        assert_eq!(facts.last_name_in(plain.as_bytes(), true, true), None);
        assert_eq!(LINES_TRIED.with(std::cell::Cell::get), 0);
        // A window that starts mid-line skips its first, cut line.
        let cut = &body.as_bytes()[HEADER.len() + 5..];
        assert_eq!(
            facts.last_name_in(cut, false, true),
            Some(Some("escaped".to_owned()))
        );
    }

    /// Checks both scopes: a small file is read whole by either, so they agree.
    fn check(body: &str, name: Option<&str>, first: Option<&str>) {
        for scope in [SummaryScope::Whole, SummaryScope::Ends] {
            check_in(scope, body, name, first);
        }
    }

    fn check_in(scope: SummaryScope, body: &str, name: Option<&str>, first: Option<&str>) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, body).expect("write");
        let summary = read_summary_in(&path, scope).expect("readable");
        if scope == SummaryScope::Whole {
            // The walk's descriptor has read past the header: its offset must not matter.
            let mut file = std::fs::File::open(&path).expect("open");
            let mut head = [0u8; 100];
            let _ = std::io::Read::read(&mut file, &mut head).expect("read");
            let from_open = read_summary_from(&path, &file).expect("readable");
            assert_eq!(from_open, summary, "read_summary_from");
            check_scan_in_two_steps(dir.path(), body, &summary);
        }
        // Compared whole, shown short: bodies and messages can be megabytes.
        let short = |text: Option<&str>| text.map(|text| text.chars().take(60).collect::<String>());
        let shown = short(Some(body));
        assert!(
            summary.name.as_deref() == name,
            "{scope:?}: name {:?}, expected {name:?}: {shown:?}",
            short(summary.name.as_deref())
        );
        assert!(
            summary.first_user_message.as_deref() == first,
            "{scope:?}: first message {:?}, expected {:?}: {shown:?}",
            short(summary.first_user_message.as_deref()),
            short(first)
        );
    }

    /// Checks that [`scan_summary_from`] finds `expected` from the start, and in two steps as
    /// after an append: the file cut at a few places (line ends and mid-line), then the rest
    /// read from where the first read's whole lines ended.
    fn check_scan_in_two_steps(dir: &Path, body: &str, expected: &SessionSummary) {
        let whole_path = dir.join("whole.jsonl");
        std::fs::write(&whole_path, body).expect("write");
        let whole = File::open(&whole_path).expect("open");
        let size = body.len() as u64;
        let scan = scan_summary_from(&whole, size, SessionSummary::default(), 0).expect("read");
        assert_eq!(&scan.summary, expected, "scan from the start");
        assert_eq!(scan.n_bytes_scanned, size);
        let newlines: Vec<usize> = body.match_indices('\n').map(|(at, _)| at + 1).collect();
        let mut cuts: Vec<usize> = newlines
            .iter()
            .step_by(newlines.len() / 4 + 1)
            .copied()
            .collect();
        cuts.push(body.len() / 2);
        cuts.push(body.len() - 1);
        for cut in cuts {
            let part_path = dir.join("part.jsonl");
            std::fs::write(&part_path, &body.as_bytes()[..cut]).expect("write");
            let part = File::open(&part_path).expect("open");
            let first =
                scan_summary_from(&part, cut as u64, SessionSummary::default(), 0).expect("read");
            assert!(first.lines_end <= cut as u64);
            let rest =
                scan_summary_from(&whole, size, first.summary, first.lines_end).expect("read");
            assert_eq!(&rest.summary, expected, "cut at {cut}");
            assert_eq!(rest.n_bytes_scanned, size - first.lines_end, "cut at {cut}");
        }
    }

    fn filler(n_lines: usize) -> String {
        let line = serde_json::json!({
            "type": "message", "timestamp": "2026-01-01T00:00:01Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "x".repeat(1000)}]},
        });
        format!("{line}\n").repeat(n_lines)
    }

    /// The ends read is bounded: a name set in the middle of a long session is
    /// seen by the whole read only; a name near the end and a first message in the head are
    /// seen by both.
    #[test]
    fn the_ends_read_is_bounded() {
        let user = r#"{"type":"message","message":{"role":"user","content":"early"}}"#;
        let named = |name: &str| format!(r#"{{"type":"session_info","name":"{name}"}}"#);
        let middle = format!(
            "{HEADER}\n{user}\n{}{}\n{}",
            filler(200),
            named("In the middle"),
            filler(200)
        );
        check_in(
            SummaryScope::Whole,
            &middle,
            Some("In the middle"),
            Some("early"),
        );
        check_in(SummaryScope::Ends, &middle, None, Some("early"));
        let late = format!(
            "{HEADER}\n{user}\n{}\n{}{}\n{}",
            named("Early name"),
            filler(400),
            named("Late name"),
            filler(3)
        );
        check(&late, Some("Late name"), Some("early"));
        let early_only = format!("{HEADER}\n{}\n{user}\n{}", named("Early name"), filler(400));
        check(&early_only, Some("Early name"), Some("early"));
        // A first message behind a system prompt of a few hundred kilobytes (Pi writes every
        // AGENTS.md it loaded there) is found.
        let system = serde_json::json!({"type":"message","timestamp":"2026-01-01T00:00:01Z",
            "message":{"role":"system","content":"s".repeat(300_000)}});
        let behind_prompt = format!("{HEADER}\n{system}\n{user}\n{}", filler(3));
        check(&behind_prompt, None, Some("early"));
        // A first message that starts beyond the head (1 MiB) is not looked for.
        let far = format!("{HEADER}\n{}{user}\n", filler(1000));
        check_in(SummaryScope::Whole, &far, None, Some("early"));
        check_in(SummaryScope::Ends, &far, None, None);
    }

    const HEADER: &str =
        r#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w","user":"x"}"#;

    /// Returns the facts of `bytes` the way the stream reads them: every line after the
    /// first applied in order.
    fn per_line(bytes: &[u8]) -> SessionSummary {
        let facts = FactFinder::new();
        let mut summary = SessionSummary::default();
        for_each_line(bytes, bytes.len() as u64, MAX_FACT_LINE_BYTES, |line| {
            if line.line_no > 1 && line.over_long.is_none() {
                facts.apply(line.bytes, &mut summary);
            }
        })
        .expect("in memory");
        summary
    }

    proptest::proptest! {
        /// The finders that look for a chosen pair of bytes first find every match memchr's
        /// own finders find, in JSON-like bytes dense with the needles' bytes and parts.
        #[test]
        fn rare_pair_finders_find_what_plain_ones_do(
            parts in proptest::collection::vec(0usize..10, 0..200),
        ) {
            const PARTS: [&str; 10] =
                ["\"", "u", "_", "o", "\"user\"", "\"session_info\"", "\"us", "info\"", "session_", " "];
            let haystack: String = parts.iter().map(|part| PARTS[*part]).collect();
            let facts = FactFinder::new();
            for (finder, needle) in [
                (&facts.user, &b"\"user\""[..]),
                (&facts.session_info, &b"\"session_info\""[..]),
            ] {
                let plain = memmem::Finder::new(needle);
                proptest::prop_assert_eq!(
                    finder.find_iter(haystack.as_bytes()).collect::<Vec<_>>(),
                    plain.find_iter(haystack.as_bytes()).collect::<Vec<_>>()
                );
            }
        }

        /// The one-piece read of a small file finds the same name and first user
        /// message as the line-by-line stream, whatever the lines (a `"user"` inside a
        /// `session_info` line, names cleared and set again, damaged lines, no final newline).
        #[test]
        fn the_one_piece_read_agrees_with_the_stream(
            lines in proptest::collection::vec(0usize..12, 0..12),
            final_newline in proptest::bool::ANY,
        ) {
            const LINES: [&str; 12] = [
                r#"{"type":"session_info","name":"A"}"#,
                r#"{"type":"session_info","name":"  "}"#,
                r#"{"type":"session_info","name":"B","user":"u"}"#,
                r#"{"type":"message","message":{"role":"user","content":"first"}}"#,
                r#"{"type":"message","message":{"role":"user","content":"second","x":"session_info"}}"#,
                r#"{"type":"message","message":{"role":"user","content":"  "}}"#,
                r#"{"type":"message","message":{"role":"assistant","content":"user"}}"#,
                r#"{"user" broken"#,
                "",
                r#"{"type":"session\u005finfo","name":"Escaped"}"#,
                r#"{"type":"message","message":{"role":"\u0075ser","content":"escaped role"}}"#,
                r#"{"type":"message","message":{"role":"assistant","content":"\u001b[31m"}}"#,
            ];
            let mut body = format!("{HEADER}\n");
            for (index, line) in lines.iter().enumerate() {
                body.push_str(LINES[*line]);
                if final_newline || index + 1 < lines.len() {
                    body.push('\n');
                }
            }
            let facts = FactFinder::new();
            let mut whole = SessionSummary::default();
            facts.apply_whole(body.as_bytes(), &mut whole);
            proptest::prop_assert_eq!(whole, per_line(body.as_bytes()), "{}", body);
        }
    }

    /// A line longer than the bounded read's 1 MiB still counts for
    /// the whole read, up to the tool's line cap, as `show` reads it: a huge first message
    /// is the first message (not the next one), and a huge `session_info` sets the name.
    #[test]
    fn a_long_line_counts_for_the_whole_read() {
        let huge = "x".repeat(MAX_FACT_LINE_BYTES + 10);
        let body = format!(
            "{HEADER}\n{}\n{}\n{}\n",
            serde_json::json!({"type":"message","message":{"role":"user","content":huge}}),
            r#"{"type":"message","message":{"role":"user","content":"short"}}"#,
            r#"{"type":"session_info","name":"After the long line"}"#,
        );
        // No entry has a timestamp, so the ends read grows its tail over the whole file (it
        // is below the tail's bound) and then reads it as the whole read does.
        check(&body, Some("After the long line"), Some(&huge));
        // With a timestamp at the end, the tail stays small and the head stops at the long
        // line: the bounded read does not look for the first message past it.
        let stamped = format!(
            "{body}{}\n",
            r#"{"type":"message","timestamp":"2026-01-02T00:00:00Z","message":{"role":"assistant","content":"ok"}}"#
        );
        check_in(
            SummaryScope::Ends,
            &stamped,
            Some("After the long line"),
            None,
        );
        check_in(
            SummaryScope::Whole,
            &stamped,
            Some("After the long line"),
            Some(&huge),
        );
        // A name longer than 1 MiB, set after a short one, is the name.
        let long_name = "n".repeat(MAX_FACT_LINE_BYTES + 10);
        let renamed = format!(
            "{HEADER}\n{}\n{}\n{}\n",
            r#"{"type":"session_info","name":"Early name"}"#,
            serde_json::json!({"type":"session_info","name":long_name}),
            r#"{"type":"message","timestamp":"2026-01-02T00:00:00Z","message":{"role":"assistant","content":"ok"}}"#,
        );
        check_in(SummaryScope::Whole, &renamed, Some(&long_name), None);
    }

    /// The ends read that starts from the bytes the walk read with the header finds what
    /// the plain ends read finds, whatever those bytes cover: none, part of the head, the
    /// first user message and more, or the whole file.
    #[test]
    fn the_ends_read_from_a_head_agrees_with_the_plain_one() {
        let filler = |n: usize, role: &str| {
            serde_json::json!({"type":"message","timestamp":"2026-01-01T00:00:01Z",
                "message":{"role":role,"content":"f".repeat(n)}})
            .to_string()
        };
        let bodies = [
            format!("{HEADER}\n{}\n", filler(10, "user")),
            format!(
                "{HEADER}\n{}\n{}\n{}\n",
                filler(30_000, "assistant"),
                filler(10, "user"),
                filler(20_000, "assistant")
            ),
            format!(
                "{HEADER}\n{}\n{}\n{}\n{}\n",
                r#"{"type":"session_info","name":"Head name"}"#,
                filler(100, "user"),
                filler(40_000, "assistant"),
                r#"{"type":"session_info","name":"Tail name","timestamp":"2026-01-02T00:00:00Z"}"#
            ),
            format!("{HEADER}\n{}", filler(20_000, "user")),
        ];
        let dir = tempfile::tempdir().expect("temp dir");
        for (index, body) in bodies.iter().enumerate() {
            let path = dir.path().join(format!("{index}.jsonl"));
            std::fs::write(&path, body).expect("write");
            let plain = read_summary_in(&path, SummaryScope::Ends).expect("readable");
            let file = File::open(&path).expect("open");
            for head_len in [0, 100, 4096, ENDS_WHOLE_BYTES, body.len()] {
                let head_len = head_len.min(body.len());
                let head = &body.as_bytes()[..head_len];
                let is_whole = head_len == body.len();
                let from_head =
                    read_ends_with_head(&path, &file, head, is_whole).expect("readable");
                assert_eq!(from_head, plain, "body {index}, head {head_len}");
            }
        }
    }

    /// A file that shrank after its size was taken is read to where it ends, not waited on.
    #[test]
    fn the_head_read_stops_where_a_shrunk_file_ends() {
        let body = format!(
            "{HEADER}\n{}\n{}\n",
            serde_json::json!({"type":"message","message":{"role":"assistant","content":"a".repeat(40_000)}}),
            r#"{"type":"message","timestamp":"2026-01-02T00:00:00Z","message":{"role":"assistant","content":"end"}}"#
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, &body).expect("write");
        let file = File::open(&path).expect("open");
        // As if the size had been taken when the file was a little longer: the tail still
        // finds the last entry, and the head reads on to the real end, then stops.
        let summary = ends_summary_with(&file, body.len() as u64 + 100, &[]).expect("readable");
        assert_eq!(summary.first_user_message, None);
        assert!(summary.last_activity.is_some());
    }

    /// A type or role spelled with JSON escapes is the same string to
    /// Pi, so the name and the first message are found as `show` finds them.
    #[test]
    fn escaped_types_and_roles_count() {
        let body = format!(
            "{HEADER}\n{}\n{}\n{}\n{}\n",
            r#"{"type":"session_info","name":"Visible name"}"#,
            r#"{"type":"message","message":{"role":"\u0075ser","content":"escaped first"}}"#,
            r#"{"type":"message","message":{"role":"assistant","content":"\u001b[1mbold"}}"#,
            r#"{"type":"sess\u0069on_info","name":"Hidden name"}"#,
        );
        check(&body, Some("Hidden name"), Some("escaped first"));
    }

    #[test]
    fn names_and_first_messages() {
        check(&format!("{HEADER}\n"), None, None);
        check(
            &format!(
                "{HEADER}\n{}\n{}\n{}\n{}",
                r#"{"type":"message","id":"a","message":{"role":"user","content":"first"}}"#,
                r#"{"type":"session_info","id":"b","name":"Old"}"#,
                r#"{"type":"message","id":"c","message":{"role":"user","content":[{"type":"text","text":"second"}]}}"#,
                r#"{"type":"session_info","id":"d","name":"New name"}"#,
            ),
            Some("New name"),
            Some("first"),
        );
        check(
            &format!(
                "{HEADER}\n{}\n{}\n{}\n",
                r#"{"type":"session_info","id":"b","name":"Old"}"#,
                r#"{"type":"session_info","id":"d"}"#,
                r#"{"type":"message","id":"c","message":{"role":"user","content":[{"type":"image","data":"x"},{"type":"text","text":"look"}]}}"#,
            ),
            None,
            Some("look"),
        );
        // A lone surrogate escape (JSON.stringify writes one when a
        // string is cut inside an emoji) is U+FFFD, as `show` reads it; a pair is the emoji.
        check(
            &format!(
                "{HEADER}\n{}\n{}\n",
                r#"{"type":"message","message":{"role":"user","content":"lone \ud83d here"}}"#,
                r#"{"type":"session_info","name":"lone \ud83d name \ud83d\ude00"}"#,
            ),
            Some("lone \u{FFFD} name \u{1F600}"),
            Some("lone \u{FFFD} here"),
        );
        check(
            &format!(
                "{HEADER}\n{}\n",
                r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"\udc00 low"}]}}"#,
            ),
            None,
            Some("\u{FFFD} low"),
        );
        // A damaged line is skipped; a partial last line is ignored.
        check(
            &format!(
                "{HEADER}\n{{\"user\" broken\n{}\n{{\"type\":\"session_info\",\"name\":\"par",
                r#"{"type":"message","message":{"role":"user","content":"ok"}}"#
            ),
            None,
            Some("ok"),
        );
    }
}

#[cfg(test)]
mod user_text_tests {
    use super::*;

    /// The borrowed decoding answers as the `Value` one does, whatever shape the line has.
    #[test]
    fn typed_user_text_agrees_with_value() {
        let lines = [
            r#"{"type":"message","message":{"role":"user","content":"hello"}}"#,
            r#"{"type":"message","message":{"role":"user","content":"tab\tand \u00e9 \"q\""}}"#,
            r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b"}]}}"#,
            r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":5}]}}"#,
            r#"{"type":"message","message":{"role":"user","content":[{"type":"text"},{"text":"no type"}]}}"#,
            r#"{"type":"message","message":{"role":"user","content":"   "}}"#,
            r#"{"type":"message","message":{"role":"user","content":null}}"#,
            r#"{"type":"message","message":{"role":"user","content":{"text":"object"}}}"#,
            r#"{"type":"message","message":{"role":"user","content":7}}"#,
            r#"{"type":"message","message":{"role":"assistant","content":"not user"}}"#,
            r#"{"type":"message","message":{"role":"user"}}"#,
            r#"{"type":"message","message":null}"#,
            r#"{"type":"message","message":"user"}"#,
            r#"{"type":"custom","message":{"role":"user","content":"x"}}"#,
            r#"{"type":5,"message":{"role":"user","content":"x"}}"#,
            r#"{"message":{"role":"user","content":"no type"}}"#,
            r#"{"type":"message","type":"message","message":{"role":"user","content":"dup"}}"#,
            r#"{"type":"message","message":{"role":"user","content":"first"},"message":{"role":"user","content":"second"}}"#,
            r#"{"type":"message","message":{"role":"user","role":"assistant","content":"dup role"}}"#,
            r#"{"type":"message","message":{"role":"user","content":"x","extra":[1,2,{"a":null}]},"n":1.5e3}"#,
            r#"{"type":"message","message":{"role":"user","content":"big number"},"n":1e400}"#,
            r#"{"type":"message","message":{"role":"user","content":"\ud800 lone"}}"#,
            r#"{"type":"message","message":{"role":"user","content":"trailing"}} x"#,
            r#"["type","message"]"#,
            r#"{"type":"message","message":{"role":"user","content":"cut"#,
            r#"{"type":"message","message":{"role":"\u0075ser","content":"escaped role"}}"#,
        ];
        for line in lines {
            let expected = parse_object(line.as_bytes()).and_then(|entry| user_text(&entry));
            let typed_ok = serde_json::from_slice::<typed::UserLine<'_>>(line.as_bytes()).is_ok();
            assert_eq!(
                user_message_text(line.as_bytes()),
                expected,
                "{line} (typed decoding {})",
                if typed_ok { "used" } else { "fell back" }
            );
        }
    }
}
