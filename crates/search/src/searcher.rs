//! Searching one session file: `read`'s region reader, the raw-byte prefilter over each
//! region, the exact check of candidate lines, and the active-branch flag of the hits.

use std::io::Read;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use pi_retrospect_core::search::{FieldKind, SearchHit, SearchWarning};
use pi_retrospect_read::searchable::{
    EntryFacts, LineEntry, Text, context_role, entry_texts, line_texts, may_hold_text,
};
use pi_retrospect_read::{
    DEFAULT_MAX_LINE_BYTES, LineCounter, OverLong, Piece, RegionReader, Symlinks, decode_line,
    describe_io, open_regular,
};
use pi_retrospect_transcript::{ReadLimits, Transcript};
use serde_json::Value;

use crate::decode::peek_line;
use crate::error::SearchError;
use crate::pattern::{Matcher, Pattern};
use crate::prefilter::{Prefilter, non_canonical_escapes};
use crate::scope::{FieldKinds, Scope};
use crate::snippet::snippet;

/// Characters of context on each side of a match in a snippet, unless the query says.
pub const DEFAULT_CONTEXT_CHARS: usize = 60;

/// Bytes read at a time; a longer line grows the buffer to fit it, up to the line cap.
const CHUNK: usize = 1 << 18;

/// The most skipped lines remembered per file to repair the active branch (each is at least
/// the line cap long, so a real file has a handful).
const MAX_SKIPPED_LINES: usize = 1024;

/// Candidate lines left to the decoder that are at least this long are peeked at (type and
/// role only) before they are decoded whole: a long tool result whose kind is off is skipped
/// at a fraction of the cost.
const PEEK_MIN_BYTES: usize = 4096;

/// The most bytes of line 1 kept to read the format version from.
const MAX_HEADER_BYTES: usize = 4096;

/// Returns a whole search request: what to look for, where, and how much context to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// What to look for.
    pub pattern: Pattern,
    /// Which texts to look in.
    pub scope: Scope,
    /// Characters of context on each side of a match in a snippet.
    pub context_chars: usize,
}

impl Query {
    /// Returns a query for `pattern` over the default kinds, with default context.
    pub fn new(pattern: Pattern) -> Query {
        Query {
            pattern,
            scope: Scope::default(),
            context_chars: DEFAULT_CONTEXT_CHARS,
        }
    }
}

/// Returns one file to search and its run depth (0 for a top-level session).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchFile {
    /// Absolute path of the session file.
    pub path: String,
    /// Run depth, reported in every hit.
    pub depth: u32,
}

/// Returns what a search delivers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// Every hit with its snippet and active-branch flag.
    #[default]
    Hits,
    /// Only how many hits each file has: no snippets, no entry tree.
    Count,
    /// Only whether each file has a hit: the scan of a file stops at its first.
    FilesWithMatches,
}

/// Returns what searching one file found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileResult {
    /// The hits in file order (empty unless [`Mode::Hits`]).
    pub hits: Vec<SearchHit>,
    /// How many hits the file has (at most the limit asked for; at most 1 for
    /// [`Mode::FilesWithMatches`]).
    pub n_hits: u64,
    /// What went wrong: the file could not be read, or a line that could hold a match is
    /// not JSON.
    pub warnings: Vec<SearchWarning>,
    /// Bytes read.
    pub n_bytes: u64,
    /// The file's hits outgrew what a run's worker holds for it (256 KiB): the result is
    /// empty, and the run's consumer reads the file's hits again one at a time, so memory
    /// holds a few hits whatever the file holds.
    pub is_deferred: bool,
}

/// Bytes of hits (roughly: each hit's strings plus its fixed part) one file's result may hold
/// in a parallel run before the file is deferred to its delivery; with the run's window of
/// files this bounds what the workers hold ahead of the consumer.
pub(crate) const HELD_HIT_BYTES: usize = 256 * 1024;

/// Receives the hits of a streamed file one at a time, flags set, in file order.
pub(crate) type HitSink<'a> = &'a mut dyn FnMut(&SearchHit) -> ControlFlow<()>;

/// Sets a streamed hit's flag and hands it on.
type FlaggingSink<'a> = &'a mut dyn FnMut(&mut SearchHit) -> ControlFlow<()>;

/// How candidate lines are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    /// Lines the raw-byte prefilter stops on (every line when there is no prefilter).
    Prefiltered,
    /// Every line: the reference the prefilter is tested against.
    EveryLine,
}

/// Where the bytes of a file come from.
#[derive(Debug, Clone, Copy)]
enum Source<'b> {
    /// Read from the file at the search file's path.
    Path,
    /// Already in memory.
    Bytes(&'b [u8]),
}

/// Returns reusable buffers for searching one file after another on one thread.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    buffer: Vec<u8>,
    first_line: Vec<u8>,
    forced: Vec<usize>,
    /// The texts of the line being checked (empty between lines; see [`recycle`]).
    texts: Vec<Text<'static>>,
}

/// Returns a compiled query: searches session files.
#[derive(Debug, Clone)]
pub struct Searcher {
    matcher: Matcher,
    prefilter: Option<Prefilter>,
    /// Finds `\u` escapes (see [`non_canonical_escapes`]).
    escape_finder: memchr::memmem::Finder<'static>,
    kinds: FieldKinds,
    scope: Scope,
    context_chars: usize,
    /// The longest line held in memory, as `transcript`'s [`ReadLimits::max_line_bytes`].
    max_line_bytes: usize,
}

impl Searcher {
    /// Returns the searcher for `query`, or why its pattern cannot be compiled.
    pub fn new(query: &Query) -> Result<Searcher, SearchError> {
        let matcher = Matcher::new(&query.pattern)?;
        let prefilter = Prefilter::new(matcher.hir(), matcher.size_limit());
        Ok(Searcher {
            prefilter,
            escape_finder: memchr::memmem::Finder::new(b"\\u"),
            matcher,
            kinds: query.scope.effective_kinds(),
            scope: query.scope.clone(),
            context_chars: query.context_chars,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        })
    }

    /// Returns the searcher holding no line longer than `max_line_bytes` (default: the
    /// transcript reader's 64 MiB, so search sees the lines `show` and `entries` see). A
    /// longer line is skipped with one warning naming it, and never held whole.
    pub fn with_max_line_bytes(mut self, max_line_bytes: usize) -> Searcher {
        self.max_line_bytes = max_line_bytes.max(1);
        self
    }

    /// Returns the matcher, to find matches in other text the same way.
    pub fn matcher(&self) -> &Matcher {
        &self.matcher
    }

    /// Returns whether lines are chosen by the raw-byte prefilter; without one (a pattern
    /// that matches the empty string, or one too large to translate), every line is decoded.
    pub fn has_prefilter(&self) -> bool {
        self.prefilter.is_some()
    }

    /// Returns what `file` holds, reading at most `max_hits` hits (`None`: all of them).
    ///
    /// The file is opened read-only without following a symbolic link and without blocking,
    /// and read up to its size at open time. A file that cannot be opened or read is a
    /// warning, never an error.
    pub fn search_file(&self, file: &SearchFile, mode: Mode, max_hits: Option<u64>) -> FileResult {
        let never = AtomicBool::new(false);
        let max_hits = max_hits.unwrap_or(u64::MAX);
        self.scan(
            file,
            Source::Path,
            mode,
            max_hits,
            Strategy::Prefiltered,
            &mut Scratch::default(),
            &never,
        )
    }

    /// Returns what `bytes`, the whole contents of a session file, hold; `file` names it in
    /// hits and warnings.
    pub fn search_bytes(
        &self,
        file: &SearchFile,
        bytes: &[u8],
        mode: Mode,
        max_hits: Option<u64>,
    ) -> FileResult {
        let never = AtomicBool::new(false);
        self.scan(
            file,
            Source::Bytes(bytes),
            mode,
            max_hits.unwrap_or(u64::MAX),
            Strategy::Prefiltered,
            &mut Scratch::default(),
            &never,
        )
    }

    /// Returns what `bytes` hold, found by decoding every line instead of the prefilter's
    /// candidates: slow, and the reference the fast path must agree with.
    pub fn search_bytes_decoding_every_line(
        &self,
        file: &SearchFile,
        bytes: &[u8],
        mode: Mode,
        max_hits: Option<u64>,
    ) -> FileResult {
        let never = AtomicBool::new(false);
        self.scan(
            file,
            Source::Bytes(bytes),
            mode,
            max_hits.unwrap_or(u64::MAX),
            Strategy::EveryLine,
            &mut Scratch::default(),
            &never,
        )
    }

    /// Searches one file from a run, with a thread's reusable buffers and the run's stop
    /// flag, giving up on holding its hits once they pass [`HELD_HIT_BYTES`] (the result is
    /// then [`FileResult::is_deferred`]).
    pub(crate) fn search_file_in_run(
        &self,
        file: &SearchFile,
        mode: Mode,
        max_hits: u64,
        scratch: &mut Scratch,
        stop: &AtomicBool,
    ) -> FileResult {
        let mut scan = self.file_scan(file, mode, max_hits, Strategy::Prefiltered, scratch);
        scan.held_budget = HELD_HIT_BYTES;
        self.finish_scan(scan, Source::Path, u64::MAX, stop)
    }

    /// Searches one file and hands its hits to `on_hit` one at a time, holding none: the file
    /// is read three times up to its length at the first reading (its counts and skipped
    /// lines, its entry tree for the active-branch flags, then its hits). `on_hit` returns
    /// [`ControlFlow::Break`] to stop. The result carries the warnings and the bytes read, and
    /// no hits; its count is of the hits handed over.
    pub(crate) fn stream_file(
        &self,
        file: &SearchFile,
        max_hits: u64,
        scratch: &mut Scratch,
        stop: &AtomicBool,
        on_hit: HitSink<'_>,
    ) -> FileResult {
        // The warnings and the skipped lines of the whole file, without a hit held.
        let scan = self.file_scan(file, Mode::Count, u64::MAX, Strategy::Prefiltered, scratch);
        let (mut result, skipped, len) = self.run_scan(scan, Source::Path, u64::MAX, stop);
        if result.n_hits == 0 || stop.load(Ordering::Relaxed) {
            result.n_hits = 0;
            return result;
        }
        let active = match active_line_set(file, Source::Path, self.max_line_bytes, &skipped, len) {
            Ok((active, unsure)) => {
                if let Some(warning) = unsure {
                    result.warnings.push(warning);
                }
                Some(active)
            }
            Err(warning) => {
                result.warnings.push(warning);
                None
            }
        };
        let n_bytes = len;
        let mut n_handed = 0u64;
        let mut sink = |hit: &mut SearchHit| {
            hit.is_on_active_branch = active
                .as_ref()
                .is_some_and(|lines| lines.binary_search(&hit.line_no).is_ok());
            n_handed += 1;
            on_hit(hit)
        };
        let mut scan = self.file_scan(file, Mode::Hits, max_hits, Strategy::Prefiltered, scratch);
        scan.sink = Some(&mut sink);
        // Its warnings are the first reading's again.
        let _ = self.run_scan(scan, Source::Path, n_bytes, stop);
        result.n_hits = n_handed;
        result
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "one private entry point behind the public ones"
    )]
    fn scan(
        &self,
        file: &SearchFile,
        source: Source<'_>,
        mode: Mode,
        max_hits: u64,
        strategy: Strategy,
        scratch: &mut Scratch,
        stop: &AtomicBool,
    ) -> FileResult {
        let scan = self.file_scan(file, mode, max_hits, strategy, scratch);
        self.finish_scan(scan, source, u64::MAX, stop)
    }

    /// Returns the state of a search of `file` that has not started.
    fn file_scan<'s>(
        &'s self,
        file: &'s SearchFile,
        mode: Mode,
        max_hits: u64,
        strategy: Strategy,
        scratch: &'s mut Scratch,
    ) -> FileScan<'s> {
        let Scratch {
            buffer,
            first_line,
            forced,
            texts,
        } = scratch;
        first_line.clear();
        FileScan {
            searcher: self,
            file,
            mode,
            max_hits,
            strategy,
            lines_before: 0,
            buffer,
            first_line,
            forced,
            texts,
            version: None,
            result: FileResult::default(),
            skipped: Vec::new(),
            is_done: max_hits == 0,
            is_reading_skipped_only: false,
            held_budget: usize::MAX,
            held_bytes: 0,
            sink: None,
            len: 0,
        }
    }

    /// Runs `scan` over the first `max_len` bytes of the source (at most its length) and sets
    /// its hits' active-branch flags.
    fn finish_scan(
        &self,
        scan: FileScan<'_>,
        source: Source<'_>,
        max_len: u64,
        stop: &AtomicBool,
    ) -> FileResult {
        let file = scan.file;
        let mode = scan.mode;
        let (mut result, skipped, len) = self.run_scan(scan, source, max_len, stop);
        if mode == Mode::Hits && !result.hits.is_empty() {
            flag_active_branch(
                file,
                source,
                self.max_line_bytes,
                &skipped,
                len,
                &mut result,
            );
        }
        result
    }

    /// Runs `scan` and returns its result, the lines it skipped for their length and the
    /// file's length as its reading started.
    fn run_scan(
        &self,
        mut scan: FileScan<'_>,
        source: Source<'_>,
        max_len: u64,
        stop: &AtomicBool,
    ) -> (FileResult, Vec<SkippedLine>, u64) {
        if !scan.is_done {
            match source {
                Source::Bytes(bytes) => {
                    let len = (bytes.len() as u64).min(max_len);
                    scan.read_stream(bytes, len, stop);
                }
                Source::Path => scan.read_file(max_len, stop),
            }
        }
        if scan.buffer.len() > CHUNK {
            // A long line grew the buffer: give the memory back before the next file.
            scan.buffer.truncate(CHUNK);
            scan.buffer.shrink_to_fit();
        }
        (scan.result, scan.skipped, scan.len)
    }
}

/// Returns the state of the search of one file.
struct FileScan<'s> {
    searcher: &'s Searcher,
    file: &'s SearchFile,
    mode: Mode,
    max_hits: u64,
    strategy: Strategy,
    /// Physical lines before the region being scanned (kept up to date only for regions
    /// that are not the file's last).
    lines_before: u64,
    /// The start of line 1, kept to read the format version when a line needs it.
    first_line: &'s mut Vec<u8>,
    /// Offsets in the current region of escapes that force their line to be decoded.
    forced: &'s mut Vec<usize>,
    /// Where a candidate line's texts are collected (see [`recycle`]).
    texts: &'s mut Vec<Text<'static>>,
    version: Option<u64>,
    result: FileResult,
    /// Lines over the line cap, in file order (the first [`MAX_SKIPPED_LINES`]).
    skipped: Vec<SkippedLine>,
    /// Whether the search of this file is over (enough hits, or told to stop).
    is_done: bool,
    /// Whether the hits are all found and the rest of the file is read only for the lines
    /// skipped for their length (their ids and parents bridge the active branch).
    is_reading_skipped_only: bool,
    /// The bytes of hits the result may hold before the file is deferred.
    held_budget: usize,
    /// Roughly the bytes of the hits held.
    held_bytes: usize,
    /// Where hits go one at a time instead of into the result, flags set.
    sink: Option<FlaggingSink<'s>>,
    /// The file's bytes are read through this.
    buffer: &'s mut Vec<u8>,
    /// The length of the file as its reading started (what it reads unless stopped early):
    /// the active branch is the one of these bytes, however far the scan went.
    len: u64,
}

/// A line skipped for being over the cap, and what its start says it held.
#[derive(Debug)]
struct SkippedLine {
    line_no: u64,
    head: SkippedHead,
}

/// What the start of a skipped line says about it.
#[derive(Debug, PartialEq, Eq)]
enum SkippedHead {
    /// Not a JSON object (a run of NUL bytes, binary data): no entry, for Pi either.
    NotAnEntry,
    /// An entry with this id below this parent (`None`: a root).
    Entry {
        id: String,
        parent_id: Option<String>,
    },
    /// An object whose id or parent is not among its first bytes.
    Unknown,
}

impl FileScan<'_> {
    fn warn(&mut self, line_no: Option<u64>, message: String) {
        self.result
            .warnings
            .push(SearchWarning::new(self.file.path.clone(), line_no, message));
    }

    /// Reads the file chunk by chunk, up to `max_len` bytes, and scans every chunk's complete
    /// lines.
    fn read_file(&mut self, max_len: u64, stop: &AtomicBool) {
        let (file, metadata) = match open_regular(Path::new(&self.file.path), Symlinks::Refuse) {
            Ok(opened) => opened,
            Err(error) => {
                self.warn(None, format!("cannot open: {}", error.reason()));
                return;
            }
        };
        self.read_stream(&file, metadata.len().min(max_len), stop);
    }

    /// Reads the first `len` bytes of `reader` in regions of whole lines and scans each,
    /// holding no line longer than the cap: a longer one is skipped with one warning, as
    /// `show` and `entries` skip it.
    fn read_stream<R: Read>(&mut self, reader: R, len: u64, stop: &AtomicBool) {
        self.len = len;
        let lines = RegionReader::new(self.searcher.max_line_bytes, CHUNK);
        // Out of `self` while the closure borrows it, and back after.
        let mut buffer = std::mem::take(self.buffer);
        let read = lines.read(reader, len, &mut buffer, |piece| {
            if stop.load(Ordering::Relaxed) {
                self.is_done = true;
                return ControlFlow::Break(());
            }
            match piece {
                Piece::Lines(region) => self.region(region.bytes, region.offset, region.is_final),
                Piece::OverLong(line) => self.over_long(line),
            }
            if self.is_done && !self.is_reading_skipped_only {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        match read {
            Ok(n_read) => self.result.n_bytes = n_read,
            Err(error) => {
                self.result.n_bytes = error.n_read;
                let message = format!(
                    "cannot read past byte {}: {}",
                    error.n_read,
                    describe_io(&error.error)
                );
                self.warn(None, message);
            }
        }
        *self.buffer = buffer;
    }

    /// Reports a skipped over-long line (the warning `transcript` gives for it) and notes what
    /// its start says, to repair the active branch around it.
    fn over_long(&mut self, line: OverLong<'_>) {
        let line_no = self.lines_before + 1;
        let n_bytes = line.n_bytes;
        let cap = self.searcher.max_line_bytes;
        self.warn(
            Some(line_no),
            format!(
                "line {line_no} is {n_bytes} bytes, longer than the {cap} byte line limit; skipped"
            ),
        );
        if self.skipped.len() < MAX_SKIPPED_LINES {
            self.skipped.push(SkippedLine {
                line_no,
                head: skipped_head(line.head),
            });
        }
        self.lines_before += 1;
    }

    /// Scans `region`, which starts at byte `offset` of the file: complete lines, except that
    /// the final region of a file may end with a line that has no newline.
    fn region(&mut self, region: &[u8], offset: u64, is_final: bool) {
        if self.is_reading_skipped_only {
            if !is_final {
                self.lines_before += memchr::memchr_iter(b'\n', region).count() as u64;
            }
            return;
        }
        if offset == 0 {
            let end = memchr::memchr(b'\n', region).unwrap_or(region.len());
            self.first_line
                .extend_from_slice(&region[..end.min(MAX_HEADER_BYTES)]);
        }
        let prefilter = match self.strategy {
            Strategy::Prefiltered => self.searcher.prefilter.as_ref(),
            Strategy::EveryLine => None,
        };
        self.forced.clear();
        if prefilter.is_some() {
            non_canonical_escapes(&self.searcher.escape_finder, region, self.forced);
        }
        let mut next_forced = 0usize;
        let mut pending: Option<std::ops::Range<usize>> = None;
        let mut counter = LineCounter::new(self.lines_before);
        let mut from = 0usize;
        while from < region.len() && !self.is_done {
            let line_start = match prefilter {
                None => from,
                Some(prefilter) => {
                    if pending.as_ref().is_none_or(|found| found.start < from) {
                        pending = prefilter.find(region, from);
                    }
                    while self.forced.get(next_forced).is_some_and(|&at| at < from) {
                        next_forced += 1;
                    }
                    let candidate = match (&pending, self.forced.get(next_forced)) {
                        (Some(found), Some(&at)) => found.start.min(at),
                        (Some(found), None) => found.start,
                        (None, Some(&at)) => at,
                        (None, None) => break,
                    };
                    memchr::memrchr(b'\n', &region[from..candidate])
                        .map_or(from, |idx| from + idx + 1)
                }
            };
            let line_end = memchr::memchr(b'\n', &region[line_start..])
                .map_or(region.len(), |idx| line_start + idx);
            let has_newline = line_end < region.len();
            debug_assert!(has_newline || is_final, "a region ends with a newline");
            let is_first_line = offset == 0 && line_start == 0;
            let mut line_no = || counter.line_no(region, line_start);
            self.line(
                &region[line_start..line_end],
                is_first_line,
                &mut line_no,
                has_newline,
            );
            from = line_end + 1;
        }
        // Nothing after the final region needs a line number.
        if !is_final {
            self.lines_before = counter.line_no(region, region.len()) - 1;
        }
    }

    /// Reads one candidate line's texts and checks them.
    fn line(
        &mut self,
        line: &[u8],
        is_first_line: bool,
        line_no: &mut dyn FnMut() -> u64,
        has_newline: bool,
    ) {
        let mut bytes = line;
        if is_first_line {
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let mut texts = recycle(std::mem::take(self.texts));
        // The texts are read straight from the bytes; only a line that leaves the fast
        // reading in doubt (and every line of the reference strategy) is decoded whole.
        let entry = match self.strategy {
            Strategy::Prefiltered => {
                let first_line: &[u8] = self.first_line;
                let cached_version = &mut self.version;
                let mut version =
                    || *cached_version.get_or_insert_with(|| header_version(first_line));
                line_texts(bytes, self.searcher.kinds, &mut version, &mut texts)
            }
            Strategy::EveryLine => LineEntry::Undecided,
        };
        match entry {
            LineEntry::Entry(facts) => self.check_texts(&facts, &texts, line_no),
            LineEntry::NotAnEntry => {}
            LineEntry::Undecided => self.decode_line(bytes, line_no, has_newline),
        }
        *self.texts = recycle(texts);
    }

    /// Decodes one candidate line as Pi decodes it and checks its texts.
    fn decode_line(&mut self, bytes: &[u8], line_no: &mut dyn FnMut() -> u64, has_newline: bool) {
        if bytes.len() >= PEEK_MIN_BYTES && self.cannot_hold_text(bytes) {
            return;
        }
        let Some(value) = decode_line(bytes) else {
            let line_no = line_no();
            let message = if has_newline {
                format!("line {line_no} is not valid JSON; a match in it was not checked")
            } else {
                format!(
                    "the final line {line_no} has no newline and is not valid JSON (probably being written); a match in it was not checked"
                )
            };
            self.warn(Some(line_no), message);
            return;
        };
        let mut texts: Vec<Text<'_>> = Vec::new();
        let kinds = self.searcher.kinds;
        let first_line: &[u8] = self.first_line;
        let cached_version = &mut self.version;
        let mut version = || *cached_version.get_or_insert_with(|| header_version(first_line));
        if let Some(facts) = entry_texts(&value, kinds, &mut version, &mut texts) {
            self.check_texts(&facts, &texts, line_no);
        }
    }

    /// Checks the texts of one entry against the scope and the pattern.
    fn check_texts(
        &mut self,
        facts: &EntryFacts<'_>,
        texts: &[Text<'_>],
        line_no: &mut dyn FnMut() -> u64,
    ) {
        let scope = &self.searcher.scope;
        if (scope.since.is_some() || scope.until.is_some())
            && !facts
                .timestamp
                .and_then(pi_retrospect_core::timestamp::parse)
                .is_some_and(|instant| {
                    scope.since.is_none_or(|since| instant >= since)
                        && scope.until.is_none_or(|until| instant <= until)
                })
        {
            return;
        }
        for text in texts {
            if !scope.roles.is_empty()
                && !context_role(facts.entry_type, facts.role, text.kind)
                    .is_some_and(|role| contains(&scope.roles, role))
            {
                continue;
            }
            if !self.is_in_scope(facts, text) {
                continue;
            }
            self.check_text(facts, text, line_no);
            if self.is_done {
                return;
            }
        }
    }

    /// Returns whether a typed peek at `line` shows that it holds no text of a searched kind:
    /// an entry type that never does, or a tool result or system message whose kind is off.
    fn cannot_hold_text(&self, line: &[u8]) -> bool {
        let Some(peek) = peek_line(line) else {
            return false;
        };
        let role = peek.message.and_then(|message| message.role);
        !may_hold_text(&peek.entry_type, role.as_deref(), self.searcher.kinds)
    }

    fn is_in_scope(&self, facts: &EntryFacts<'_>, text: &Text<'_>) -> bool {
        let scope = &self.searcher.scope;
        if !scope.tools.is_empty()
            && !text
                .tool_name
                .is_some_and(|tool| contains(&scope.tools, tool))
        {
            return false;
        }
        if !scope.models.is_empty() {
            let is_assistant_text = matches!(
                text.kind,
                FieldKind::Assistant
                    | FieldKind::ErrorMessage
                    | FieldKind::Thinking
                    | FieldKind::ToolArgs
            );
            let is_model = facts.model.is_some_and(|model| {
                scope.models.iter().any(|wanted| {
                    wanted == model
                        || wanted.split_once('/').is_some_and(|(provider, name)| {
                            facts.provider == Some(provider) && name == model
                        })
                })
            });
            if !(is_assistant_text && is_model) {
                return false;
            }
        }
        true
    }

    fn check_text(
        &mut self,
        facts: &EntryFacts<'_>,
        text: &Text<'_>,
        line_no: &mut dyn FnMut() -> u64,
    ) {
        let matcher = &self.searcher.matcher;
        match self.mode {
            Mode::Hits => {
                let Some((found, n_matches)) = matcher.find_counting(&text.text) else {
                    return;
                };
                let (snippet, match_range) =
                    snippet(&text.text, found, self.searcher.context_chars);
                let is_assistant_text = matches!(
                    text.kind,
                    FieldKind::Assistant
                        | FieldKind::ErrorMessage
                        | FieldKind::Thinking
                        | FieldKind::ToolArgs
                );
                let mut hit = SearchHit {
                    path: self.file.path.clone(),
                    depth: self.file.depth,
                    line_no: line_no(),
                    entry_id: facts.id.map(str::to_owned),
                    timestamp: facts.timestamp.map(str::to_owned),
                    entry_type: facts.entry_type.to_owned(),
                    role: facts.role.map(str::to_owned),
                    field: text.kind,
                    tool_name: text.tool_name.map(str::to_owned),
                    model: facts.model.filter(|_| is_assistant_text).map(str::to_owned),
                    is_on_active_branch: false,
                    snippet,
                    match_range,
                    n_matches,
                };
                if let Some(sink) = self.sink.as_mut() {
                    self.result.n_hits += 1;
                    if sink(&mut hit).is_break() || self.result.n_hits >= self.max_hits {
                        self.is_done = true;
                    }
                    return;
                }
                self.held_bytes += held_size(&hit);
                self.result.hits.push(hit);
                if self.held_bytes > self.held_budget {
                    // Too many to hold: the file is read again as it is delivered.
                    self.result.hits = Vec::new();
                    self.result.warnings = Vec::new();
                    self.result.n_hits = 0;
                    self.result.is_deferred = true;
                    self.is_done = true;
                    return;
                }
            }
            Mode::Count | Mode::FilesWithMatches => {
                if !matcher.is_match(&text.text) {
                    return;
                }
            }
        }
        self.result.n_hits += 1;
        if self.result.n_hits >= self.max_hits || self.mode == Mode::FilesWithMatches {
            self.is_done = true;
            // Held hits are flagged after the scan, by the whole file's branch, which a line
            // skipped for its length further on may bridge: the rest is read for those only.
            self.is_reading_skipped_only = self.mode == Mode::Hits && self.sink.is_none();
        }
    }
}

/// Returns roughly the bytes `hit` holds: its fixed part and its strings.
fn held_size(hit: &SearchHit) -> usize {
    let strings = [
        Some(&hit.path),
        hit.entry_id.as_ref(),
        hit.timestamp.as_ref(),
        Some(&hit.entry_type),
        hit.role.as_ref(),
        hit.tool_name.as_ref(),
        hit.model.as_ref(),
        Some(&hit.snippet),
    ];
    std::mem::size_of::<SearchHit>()
        + strings
            .into_iter()
            .flatten()
            .map(String::len)
            .sum::<usize>()
}

/// Returns `texts` emptied, keeping its allocation, for texts that borrow from another line:
/// collecting an emptied vector into a vector of the same layout reuses its memory, so the
/// candidate lines of a search share one allocation per thread instead of one each.
fn recycle<'a, 'b>(mut texts: Vec<Text<'a>>) -> Vec<Text<'b>> {
    texts.clear();
    #[expect(
        clippy::unnecessary_filter_map,
        reason = "the closure changes the lifetime, which `filter` cannot"
    )]
    texts.into_iter().filter_map(|_| None).collect()
}

/// Returns the format version line 1 gives: 1 when the header has none, 3 when line 1 is not
/// a header or names a version this reader does not know (as the transcript parser reads it).
fn header_version(first_line: &[u8]) -> u64 {
    let line = first_line
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(first_line);
    let Some(header) = decode_line(line) else {
        return 3;
    };
    if header.get("type").and_then(Value::as_str) != Some("session") {
        return 3;
    }
    match header.get("version") {
        None | Some(Value::Null) => 1,
        Some(version) => version
            .as_u64()
            .filter(|version| (1..=3).contains(version))
            .unwrap_or(3),
    }
}

fn contains(names: &[String], name: &str) -> bool {
    names.iter().any(|wanted| wanted == name)
}

/// Returns what the first bytes of a skipped line say it held.
fn skipped_head(head: &[u8]) -> SkippedHead {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    if !head.trim_ascii_start().starts_with(b"{") {
        return SkippedHead::NotAnEntry;
    }
    let Some(Some(id)) = string_member(head, b"\"id\":") else {
        return SkippedHead::Unknown;
    };
    match string_member(head, b"\"parentId\":") {
        Some(parent_id) => SkippedHead::Entry { id, parent_id },
        None => SkippedHead::Unknown,
    }
}

/// Returns the value of the first member `key` (`"name":`) in `head`: `Some(None)` for
/// `null`, `None` when it is absent, cut off, or a string with escapes.
fn string_member(head: &[u8], key: &[u8]) -> Option<Option<String>> {
    let at = memchr::memmem::find(head, key)? + key.len();
    let value = head[at..].trim_ascii_start();
    if value.starts_with(b"null") {
        return Some(None);
    }
    let value = value.strip_prefix(b"\"")?;
    let end = memchr::memchr2(b'"', b'\\', value)?;
    if value[end] != b'"' {
        return None;
    }
    Some(Some(std::str::from_utf8(&value[..end]).ok()?.to_owned()))
}

/// Sets each hit's active-branch flag from the entry tree of the same bytes that were
/// searched: the file is parsed again up to its length when the search began (`len`), with
/// the same line cap, so an append in between does not move the leaf, and a search that
/// stopped early at a limit flags its hits by the whole file's branch, as a full one does.
///
/// The parser leaves out a line over the cap, as the search does, so the tree may lack an
/// entry of the active branch: the leaf itself, or one whose child becomes a root. Such a
/// line's first bytes name its id and parent, which bridge the gap; when they do not, the
/// flags are set from what is known and a warning says they may be wrong.
fn flag_active_branch(
    file: &SearchFile,
    source: Source<'_>,
    max_line_bytes: usize,
    skipped: &[SkippedLine],
    len: u64,
    result: &mut FileResult,
) {
    match active_line_set(file, source, max_line_bytes, skipped, len) {
        Ok((active_lines, unsure)) => {
            for hit in &mut result.hits {
                hit.is_on_active_branch = active_lines.binary_search(&hit.line_no).is_ok();
            }
            result.warnings.extend(unsure);
        }
        Err(warning) => result.warnings.push(warning),
    }
}

/// Returns the sorted line numbers of the active branch of the first `n_bytes` of the file
/// (see [`flag_active_branch`]) and the warning that they may be wrong, if they may; or the
/// warning that they cannot be told.
fn active_line_set(
    file: &SearchFile,
    source: Source<'_>,
    max_line_bytes: usize,
    skipped: &[SkippedLine],
    n_bytes: u64,
) -> Result<(Vec<u64>, Option<SearchWarning>), SearchWarning> {
    let limits = ReadLimits {
        snapshot_bytes: Some(n_bytes),
        max_line_bytes,
    };
    let transcript = match source {
        Source::Bytes(bytes) => Ok(Transcript::from_bytes_with(bytes.to_vec(), &limits)),
        Source::Path => Transcript::open_with(Path::new(&file.path), &limits),
    };
    let transcript = transcript.map_err(|error| {
        SearchWarning::new(
            file.path.clone(),
            None,
            format!("cannot tell which hits are on the active branch: {error}"),
        )
    })?;
    let (mut active_lines, unsure) = active_lines(&transcript, skipped);
    drop(transcript);
    active_lines.sort_unstable();
    active_lines.shrink_to_fit();
    let unsure = unsure.map(|line_no| {
        SearchWarning::new(
            file.path.clone(),
            Some(line_no),
            format!(
                "line {line_no} was skipped and its start does not show which entry it held, so the active-branch flags of this file's hits may be wrong"
            ),
        )
    });
    Ok((active_lines, unsure))
}

/// Returns the lines of the active branch, bridged across skipped lines, and a skipped line
/// that leaves it unsure, if one does.
fn active_lines(transcript: &Transcript, skipped: &[SkippedLine]) -> (Vec<u64>, Option<u64>) {
    let by_id: std::collections::HashMap<&str, Option<&str>> = skipped
        .iter()
        .filter_map(|line| match &line.head {
            SkippedHead::Entry { id, parent_id } => Some((id.as_str(), parent_id.as_deref())),
            _ => None,
        })
        .collect();
    let first_unknown = skipped
        .iter()
        .find(|line| line.head == SkippedHead::Unknown)
        .map(|line| line.line_no);
    let leaf = transcript.leaf();
    let leaf_line = leaf.map_or(0, |leaf| transcript.entry(leaf).line_no);
    let mut lines = Vec::new();
    let mut unsure = None;
    // The leaf is the last entry appended: a skipped entry after the last one read is it.
    let mut current = leaf;
    let mut wanted: Option<&str> = None;
    if let Some(last) = skipped
        .iter()
        .rev()
        .find(|line| line.line_no > leaf_line && line.head != SkippedHead::NotAnEntry)
    {
        match &last.head {
            SkippedHead::Entry { parent_id, .. } => {
                current = parent_id
                    .as_deref()
                    .and_then(|parent| transcript.find(parent));
                wanted = parent_id.as_deref().filter(|_| current.is_none());
            }
            _ => unsure = Some(last.line_no),
        }
    }
    // Each skipped entry is crossed at most once, so a cycle among them ends.
    let mut n_crossed = 0usize;
    loop {
        if let Some(idx) = current.take() {
            let path = transcript.path_to(idx);
            lines.extend(path.iter().map(|&idx| transcript.entry(idx).line_no));
            let root = transcript.entry(path[0]);
            // A root that names a parent lost it: perhaps to a skipped line.
            wanted = root.parent_id;
            if wanted.is_some_and(|parent| !by_id.contains_key(parent)) {
                if first_unknown.is_some_and(|line| line < root.line_no) {
                    unsure = unsure.or(first_unknown);
                }
                break;
            }
        }
        let Some(parent) = wanted.take() else {
            break;
        };
        if n_crossed > by_id.len() {
            break;
        }
        n_crossed += 1;
        match by_id.get(parent) {
            // The parent was skipped: continue from its own parent.
            Some(Some(grandparent)) => match transcript.find(grandparent) {
                Some(idx) => current = Some(idx),
                None => wanted = Some(grandparent),
            },
            // A skipped root, or a parent that is in the tree (a cut cycle).
            Some(None) | None => break,
        }
    }
    (lines, unsure)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recycled list keeps its memory, so candidate lines do not allocate one each.
    #[test]
    fn recycling_keeps_the_allocation() {
        let line = String::from("text");
        let mut texts: Vec<Text<'_>> = Vec::with_capacity(8);
        texts.push(Text {
            kind: FieldKind::User,
            text: std::borrow::Cow::Borrowed(&line),
            tool_name: None,
        });
        let recycled: Vec<Text<'static>> = recycle(texts);
        assert!(recycled.is_empty());
        assert!(recycled.capacity() >= 8, "{}", recycled.capacity());
    }
}
