//! One pass over one session file, collecting its usage records the way Pi's session
//! statistics (`AgentSession.getSessionStats`) count them.
//!
//! Pi adds, over every entry of the file (all branches, in file order): the `usage` of an
//! assistant message, of a tool result that has one (nested model work), of a `usage` entry
//! (any `kind`), and of a `compaction` or `branch_summary` that has one. Its total is
//! `input + output + cacheRead + cacheWrite` and its cost the sum of `usage.cost.total`.
//!
//! The file is opened with the one safe open ([`open_regular`]: no symlink, never blocking, no
//! lock) and read once, up to the length it had when it was opened, by the one line reader
//! ([`RegionReader`]) in regions of many whole lines. Only lines that can carry usage are
//! decoded: in JSON text a `"` inside a string is always escaped, so the bytes `"usage"` occur
//! only where a key (or a string value) is exactly `usage`. Every other line is passed over by
//! a vectorised substring search over the region. A line longer than the line cap is skipped
//! with a warning, as `show` skips it, and never held whole. (So an assistant message
//! with no `usage` member at all counts nothing and says nothing; Pi's own statistics fail on
//! it. One whose `usage` is `null` or not an object is a warning.)

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Read};
use std::ops::ControlFlow;
use std::path::Path;

use jiff::civil::Date;
use memchr::memmem::Finder;
use pi_retrospect_core::path::normalize_absolute;
use pi_retrospect_core::stats::{MAX_FACT_CHARS, MAX_TOOL_NAMES, SessionFacts, Usage};
use pi_retrospect_core::{Timestamp as HeaderInstant, Warning, timestamp};
use pi_retrospect_header::{HeaderError, MAX_HEADER_LINE_BYTES, parse_header};
use pi_retrospect_read::json::{JsonError, Kind, Number, Reader};
use pi_retrospect_read::{
    Piece, ReadAt, RegionReader, Symlinks, describe_io, open_regular, read_full_at,
};

use crate::options::StatsOptions;

/// Bytes read at a time; a line that fits is decoded from the buffer in place.
const READ_BYTES: usize = 1024 * 1024;

/// Problem lines of one file reported one by one; the rest are one `… and N more` warning,
/// so a file of a million bad lines costs a count, not a million warnings.
pub(crate) const MAX_LINE_WARNINGS: usize = 5;

/// The substring every line that can carry usage contains.
const USAGE_NEEDLE: &[u8] = b"\"usage\"";
/// The substring of a `model_change` entry, read only when rows are keyed by model (it names
/// the model a later compaction or branch summary is attributed to).
const MODEL_CHANGE_NEEDLE: &[u8] = b"\"model_change\"";

thread_local! {
    /// One read buffer per thread, reused for every file the thread scans.
    static BUFFER: RefCell<Vec<u8>> = RefCell::new(vec![0; READ_BYTES]);
}

/// What to collect from one file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScanRequest<'a> {
    /// Grouping and time range.
    pub options: &'a StatsOptions,
    /// Whether the file's records are counted (false for a fork parent read only for its keys).
    pub is_counted: bool,
    /// Whether to keep every counted record (a fork, whose copied records are subtracted later).
    pub keeps_records: bool,
    /// Whether to keep the identity of every record (a fork parent).
    pub keeps_keys: bool,
    /// The header's instant, when the listing has already validated this file's header: line
    /// 1 is then only checked to be a session header, not validated again.
    pub listed_instant: Option<HeaderInstant>,
    /// The paths of every session file of the listing: a subagent run a tool result names
    /// is counted from its own file when that file is one of these, and from the tool
    /// result's nested usage only when it is not.
    pub listed: &'a PathSet<'a>,
    /// Whether to read what the session was ([`SessionFacts`]), for rows grouped by session.
    pub wants_facts: bool,
}

/// The listing's session paths, each also by its place in the store, to the path as listed;
/// hashed with foldhash: a store's paths are tens of thousands of strings, hashed once each
/// for every report.
pub(crate) type PathSet<'a> = HashMap<&'a str, &'a str, foldhash::fast::RandomState>;

/// The identity of an entry across a fork: its `id` and `timestamp`, which Pi copies verbatim.
pub(crate) type EntryKey = Box<str>;

/// The figures of one (model, day) cell of one file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bucket {
    /// `provider/model`, when rows are keyed by model.
    pub model: Option<Box<str>>,
    /// The record's calendar day in the report's zone, when rows are keyed by a period;
    /// `None` there means the record had no valid timestamp.
    pub day: Option<Date>,
    /// The sum of the records in the cell as Pi counts them (a tool result's nested usage
    /// whole).
    pub usage: Usage,
    /// The sum of what the records add to a report: a tool result's nested usage only for
    /// the subagent runs whose session files are not listed.
    pub own: Usage,
}

/// One counted record of a fork, kept until its parent's keys are known.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Record {
    /// The entry's identity, when it has an `id` and a `timestamp`.
    pub key: Option<EntryKey>,
    /// Index of its cell in [`FileScan::buckets`].
    pub bucket: usize,
    /// What it adds to a report (see [`Bucket::own`]).
    pub usage: Usage,
}

/// What one session file contributes to a report. Built by
/// [`StatsPlan::scan`](crate::StatsPlan::scan) on any thread, consumed by
/// [`StatsPlan::finish`](crate::StatsPlan::finish).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileScan {
    /// The header's instant; `None` when the file is no readable session.
    pub(crate) instant: Option<HeaderInstant>,
    /// Why the file could not be read as a session at all.
    pub(crate) failure: Option<String>,
    /// Per-cell figures of every counted record (what Pi reports, within the time range).
    pub(crate) buckets: Vec<Bucket>,
    /// Every counted record, when asked for.
    pub(crate) records: Vec<Record>,
    /// The identity of every record carrying usage, in range or not, when asked for.
    pub(crate) keys: HashSet<EntryKey>,
    /// Lines that could not be counted (the first few; see [`MAX_LINE_WARNINGS`]).
    pub(crate) warnings: Vec<Warning>,
    /// How many problems were found, those summed up in one warning included.
    pub(crate) n_warnings: u64,
    /// What the session was, when asked for.
    pub(crate) facts: SessionFacts,
    /// Whether a tool result names subagent runs: what it adds then depends on which run
    /// files the listing holds, so a scan made before the listing was known is not used.
    pub(crate) names_runs: bool,
    /// For a fork (records kept): each tool result that names runs with no listed file, by
    /// its entry's identity, with how many and the first file named. Whether the fork
    /// launched them or copied the launch from its parent is known only once the parent's
    /// keys are: the warning is then given by the plan, not by the scan.
    pub(crate) missing_runs: Vec<MissingRuns>,
    /// For any other file: how many runs its tool results name with no listed file, and
    /// the first file named (the plan says so, once it knows which of the file's listed runs
    /// no result named).
    pub(crate) n_missing_runs: u64,
    pub(crate) first_missing_run: Option<String>,
    /// Per cell (index into `buckets`), what tool results add to `own` for runs without a
    /// listed file (their usage, or a result's whole nested usage when it names no run): the
    /// plan takes from it what the launcher's listed runs that no result named hold, which
    /// are those runs counted in their own files. Empty when there is none; not kept for
    /// forks.
    pub(crate) unexplained: Vec<Usage>,
    /// The listed run files this file's tool results name (as listed).
    pub(crate) claimed_runs: Vec<String>,
    /// What the file's records add, whatever their time: a run's calls stand for its
    /// launcher's result in full, also when the time range keeps only some of them.
    pub(crate) unbounded_own: Usage,
}

/// Runs launched by one tool result that have no session file in the listing.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MissingRuns {
    /// The tool result's identity, when it has one.
    pub key: Option<EntryKey>,
    /// How many runs.
    pub n_runs: u64,
    /// The first session file such a run names.
    pub first: Option<String>,
}

/// Returns the warning reason for `n_runs` launched runs with no session file, `first` the
/// first one named.
pub(crate) fn missing_runs_reason(n_runs: u64, first: Option<&str>) -> String {
    let named = match first {
        Some(path) => format!("the first named is {path}"),
        None => "they name no session file".to_owned(),
    };
    format!(
        "{n_runs} subagent runs launched here have no session file in the listing ({named}): their usage is counted from this session's tool results"
    )
}

/// Reads the session file at `path` and collects what `request` asks for.
pub(crate) fn scan_file(path: &str, request: &ScanRequest<'_>) -> FileScan {
    match open_regular(Path::new(path), Symlinks::Refuse) {
        Ok((file, _)) => scan_open_file(path, &file, request),
        Err(error) => FileScan {
            failure: Some(error.reason()),
            ..FileScan::default()
        },
    }
}

/// Reads the session file at `path`, already open as `file` (a regular file opened without
/// following a symlink; any offset, it is read with positional reads), and collects what
/// `request` asks for.
pub(crate) fn scan_open_file(path: &str, file: &File, request: &ScanRequest<'_>) -> FileScan {
    scan_open_file_from(path, file, Head::default(), request)
}

/// The first bytes of a file, read before the scan by whoever opened it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Head<'a> {
    /// The bytes from the file's first byte on.
    pub bytes: &'a [u8],
    /// Whether the file ended within them.
    pub is_whole: bool,
}

/// Scans like [`scan_open_file`], starting from `head`, which was read from the file's start
/// through `file`: a file wholly in it is not read again, and a longer one is read on from
/// where it stops.
pub(crate) fn scan_open_file_from(
    path: &str,
    file: &File,
    head: Head<'_>,
    request: &ScanRequest<'_>,
) -> FileScan {
    let mut scanner = Scanner::new(path, request);
    if let Err(reason) = scanner.read(Path::new(path), file, head) {
        scanner.scan.failure = Some(reason);
    }
    if scanner.scan.failure.is_some() {
        // A file that could not be read to its end contributes nothing but its warning.
        return FileScan {
            failure: scanner.scan.failure,
            ..FileScan::default()
        };
    }
    scanner.finish()
}

/// The state of one pass over one file.
struct Scanner<'a> {
    path: &'a str,
    request: &'a ScanRequest<'a>,
    scan: FileScan,
    usage_finder: Finder<'static>,
    model_change_finder: Option<Finder<'static>>,
    is_header_read: bool,
    /// The model a compaction or branch summary is attributed to: the latest assistant
    /// message's or `model_change`'s, in file order.
    current_model: Option<String>,
    /// Scratch space for a record's model name.
    model: String,
    /// The cells by model and day, once a file has more than a few (see `bucket_index`).
    cells: Option<CellIndex>,
    days: DayCache,
    hours: HourCache,
    n_without_time: u64,
    is_time_bounded: bool,
    /// The first few problems found on lines, by the byte offset where the line starts.
    line_warnings: Vec<(u64, String)>,
    /// How many problem lines there were in all.
    n_line_problems: u64,
    /// Whether a sum of the file stopped at its bound.
    is_saturated: bool,
    /// Subagent runs named by tool results whose session files are not listed, and the
    /// first such file named.
    n_missing_runs: u64,
    first_missing_run: Option<String>,
    /// The first and last entry timestamps seen, in file order.
    first_time: Option<HeaderInstant>,
    last_time: Option<HeaderInstant>,
    /// Whether the line after the header has been looked at for the first timestamp.
    is_first_entry_seen: bool,
}

impl<'a> Scanner<'a> {
    fn new(path: &'a str, request: &'a ScanRequest<'a>) -> Scanner<'a> {
        let options = request.options;
        Scanner {
            path,
            request,
            scan: FileScan::default(),
            usage_finder: Finder::new(USAGE_NEEDLE),
            model_change_finder: options
                .needs_model()
                .then(|| Finder::new(MODEL_CHANGE_NEEDLE)),
            is_header_read: false,
            current_model: None,
            model: String::new(),
            days: DayCache::default(),
            hours: HourCache::default(),
            n_without_time: 0,
            is_time_bounded: options.since.is_some() || options.until.is_some(),
            line_warnings: Vec::new(),
            n_line_problems: 0,
            is_saturated: false,
            n_missing_runs: 0,
            first_missing_run: None,
            first_time: None,
            last_time: None,
            is_first_entry_seen: false,
            cells: None,
        }
    }

    fn finish(mut self) -> FileScan {
        self.scan.n_missing_runs = self.n_missing_runs;
        self.scan.first_missing_run = self.first_missing_run.take();
        if self.is_saturated {
            self.warn(format!(
                "token or cost sums reached the largest value they can hold ({} tokens, ${:e}) and stopped there",
                u64::MAX,
                f64::MAX
            ));
        }
        if self.request.wants_facts
            && let (Some(first), Some(last)) = (self.first_time, self.last_time)
        {
            let millis = last.as_millis().saturating_sub(first.as_millis());
            self.scan.facts.duration_ms = u64::try_from(millis).ok();
        }
        if self.n_without_time > 0 {
            let what = if self.is_time_bounded {
                "left out of the time range"
            } else {
                "counted under the period `unknown`"
            };
            self.warn(format!(
                "{} usage records have no valid timestamp: {what}",
                self.n_without_time
            ));
        }
        self.scan
    }

    fn warn(&mut self, reason: String) {
        self.scan.n_warnings = self.scan.n_warnings.saturating_add(1);
        self.scan.warnings.push(Warning::new(self.path, reason));
    }

    /// Notes a problem with the line starting at byte `line_offset`. Its line number is found
    /// once the file has been read (see [`Scanner::number_lines`]): counting every newline as
    /// the file goes by would cost a pass over all of its bytes for warnings that are rare.
    fn warn_at(&mut self, line_offset: u64, reason: String) {
        self.n_line_problems += 1;
        if self.line_warnings.len() < MAX_LINE_WARNINGS {
            self.line_warnings.push((line_offset, reason));
        }
    }

    /// Turns the problems noted by [`Scanner::warn_at`] into warnings naming their line,
    /// counting the newlines before each offset (the offsets ascend, so the file's prefix is
    /// read once).
    fn number_lines(&mut self, file: &File, buffer: &mut [u8]) -> io::Result<()> {
        let mut position: u64 = 0;
        let mut line_no: u64 = 1;
        for (offset, reason) in std::mem::take(&mut self.line_warnings) {
            while position < offset {
                let n_wanted = buffer
                    .len()
                    .min(usize::try_from(offset - position).unwrap_or(usize::MAX));
                let n_read = read_full_at(file, &mut buffer[..n_wanted], position)?;
                if n_read == 0 {
                    break;
                }
                line_no += count_newlines(&buffer[..n_read]);
                position += n_read as u64;
            }
            self.warn(format!("line {line_no}: {reason}"));
        }
        let n_more = self
            .n_line_problems
            .saturating_sub(MAX_LINE_WARNINGS as u64);
        if n_more > 0 {
            self.warn(format!(
                "… and {n_more} more lines that could not be counted"
            ));
            // The summing-up warning stands for the lines it counts, not for one more.
            self.scan.n_warnings = self.scan.n_warnings.saturating_add(n_more - 1);
        }
        Ok(())
    }

    /// Reads the file once, a buffer at a time, handing every line that may carry usage to
    /// [`Scanner::on_line`]. The error is the reason the file could not be read at all.
    fn read(&mut self, path: &Path, file: &File, head: Head<'_>) -> Result<(), String> {
        if self.request.wants_facts {
            // The name and first request as `list -l` reads them, from the same descriptor.
            match pi_retrospect_transcript::read_summary_from(path, file) {
                Ok(summary) => {
                    self.scan.facts.name = summary.name;
                    self.scan.facts.first_user_message = summary
                        .first_user_message
                        .map(|text| cut_chars(text, MAX_FACT_CHARS));
                }
                Err(error) => self.warn(error.to_string()),
            }
        }
        BUFFER
            .with(|buffer| {
                let mut buffer = buffer.borrow_mut();
                let cap = self.request.options.max_line_bytes.max(1);
                if head.is_whole && head.bytes.len() <= cap {
                    // The whole file is at hand, and no line of it can be over the cap: no
                    // length to ask for, nothing to read.
                    self.on_region(head.bytes, 0);
                } else {
                    let length = if head.is_whole {
                        head.bytes.len() as u64
                    } else {
                        file.metadata()?.len()
                    };
                    // Positional reads after the head: the descriptor may stand anywhere.
                    let rest = ReadAt::new(file, head.bytes.len() as u64);
                    RegionReader::new(cap, READ_BYTES).read(
                        head.bytes.chain(rest),
                        length,
                        &mut buffer,
                        |piece| {
                            match piece {
                                Piece::Lines(region) => self.on_region(region.bytes, region.offset),
                                Piece::OverLong(line) => {
                                    self.on_over_long(line.offset, line.n_bytes)
                                }
                            }
                            if self.scan.failure.is_some() {
                                ControlFlow::Break(())
                            } else {
                                ControlFlow::Continue(())
                            }
                        },
                    )?;
                }
                let numbered = self.number_lines(file, &mut buffer);
                if buffer.len() > READ_BYTES {
                    // A long line grew the buffer: give the memory back before the next file.
                    buffer.truncate(READ_BYTES);
                    buffer.shrink_to_fit();
                }
                numbered
            })
            .map_err(|error| format!("could not read file: {}", describe_io(&error)))?;
        if self.scan.failure.is_none() && !self.is_header_read {
            return Err(HeaderError::Empty.to_string());
        }
        Ok(())
    }

    /// Handles a line longer than the line cap, which the reader skipped: a header that long
    /// is refused as `list` refuses it, any other line is a problem line (its usage, if it
    /// held any, is not counted).
    fn on_over_long(&mut self, offset: u64, n_bytes: u64) {
        if !self.is_header_read {
            self.scan.failure = Some(HeaderError::TooLong.to_string());
            return;
        }
        self.warn_at(
            offset,
            format!(
                "{n_bytes} bytes, longer than the {} byte line limit; skipped",
                self.request.options.max_line_bytes
            ),
        );
    }

    /// Handles whole lines `region`, which starts at byte `offset` of the file.
    fn on_region(&mut self, region: &[u8], offset: u64) {
        let mut position = 0;
        if !self.is_header_read {
            if region.is_empty() {
                return;
            }
            let end = memchr::memchr(b'\n', region).unwrap_or(region.len());
            // The bound `list` applies to a header line, so that a file it lists is read here
            // and one it refuses is refused here too.
            if end > MAX_HEADER_LINE_BYTES {
                self.scan.failure = Some(HeaderError::TooLong.to_string());
                return;
            }
            // A header the listing validated is only checked to be one still; any other, or
            // one that fails the check (the file was replaced), is validated to give the reason.
            let header = match self.request.listed_instant {
                Some(instant) if is_session_header(&region[..end]) => Ok(instant),
                _ => parse_header(&region[..end])
                    .map(|header| header.instant)
                    .map_err(|error| error.to_string()),
            };
            match header {
                Ok(instant) => {
                    self.scan.instant = Some(instant);
                    self.is_header_read = true;
                }
                Err(reason) => {
                    self.scan.failure = Some(reason);
                    return;
                }
            }
            position = (end + 1).min(region.len());
        }
        if self.request.wants_facts {
            self.note_entry_times(&region[position..]);
        }
        // Each finder's next hit is an offset in `region`; a finder searches again only once
        // the lines read have passed its hit, so a kind of line that is rare (or absent) is
        // looked for once per region, not once per line of the other kind.
        let find_from = |finder: &memchr::memmem::Finder<'_>, from: usize| {
            finder.find(&region[from..]).map(|hit| from + hit)
        };
        let mut next_usage = find_from(&self.usage_finder, position);
        let mut next_model_change = self
            .model_change_finder
            .as_ref()
            .and_then(|finder| find_from(finder, position));
        loop {
            let at = match (next_usage, next_model_change) {
                (Some(usage), Some(change)) => usage.min(change),
                (Some(hit), None) | (None, Some(hit)) => hit,
                (None, None) => break,
            };
            let line_start = memchr::memrchr(b'\n', &region[..at]).map_or(0, |newline| newline + 1);
            let line_end = memchr::memchr(b'\n', &region[at..]).map_or(region.len(), |i| at + i);
            self.on_line(&region[line_start..line_end], offset + line_start as u64);
            if line_end >= region.len() {
                break;
            }
            position = line_end + 1;
            if next_usage.is_some_and(|hit| hit < position) {
                next_usage = find_from(&self.usage_finder, position);
            }
            if next_model_change.is_some_and(|hit| hit < position) {
                next_model_change = self
                    .model_change_finder
                    .as_ref()
                    .and_then(|finder| find_from(finder, position));
            }
        }
    }

    /// Notes the timestamp of the first entry of the file (the first line of the first
    /// `lines` after the header) and of the last line of `lines`: the last one noted is the
    /// file's last entry, and each costs one decode per read buffer.
    fn note_entry_times(&mut self, lines: &[u8]) {
        let lines = lines.strip_suffix(b"\n").unwrap_or(lines);
        if lines.is_empty() {
            return;
        }
        if !self.is_first_entry_seen {
            self.is_first_entry_seen = true;
            let end = memchr::memchr(b'\n', lines).unwrap_or(lines.len());
            self.first_time = entry_timestamp(&lines[..end]);
        }
        let start = memchr::memrchr(b'\n', lines).map_or(0, |newline| newline + 1);
        if let Some(instant) = entry_timestamp(&lines[start..]) {
            self.last_time = Some(instant);
        }
    }

    /// Decodes one line that may carry usage and counts it as Pi would.
    fn on_line(&mut self, line: &[u8], line_offset: u64) {
        let mut entry = RawEntry::default();
        let options = self.request.options;
        let wants = Wants {
            models: options.needs_model(),
            facts: self.request.wants_facts,
            listed: self.request.listed,
            launcher: self.path,
        };
        match parse_entry(line, &wants, &mut entry) {
            Ok(true) => {}
            Ok(false) => return,
            Err(error) => {
                self.warn_at(line_offset, format!("not valid JSON: {error}"));
                return;
            }
        }
        let kind = entry.kind.as_deref().unwrap_or_default();
        let (usage, model, is_required, runs) = match kind {
            b"message" => {
                let Some(message) = &entry.message else {
                    return;
                };
                match message.role.as_deref() {
                    Some(b"assistant") => {
                        if self.request.options.needs_model()
                            && let Some(name) = model_name(&message.provider, &message.model)
                        {
                            self.current_model = Some(name);
                        }
                        if self.request.wants_facts {
                            count_turn(&mut self.scan.facts, &message.tool_calls);
                        }
                        (
                            &message.usage,
                            ModelOf::Pair(&message.provider, &message.model),
                            true,
                            None,
                        )
                    }
                    Some(b"toolResult") => (
                        &message.usage,
                        ModelOf::Tool(message.tool_name.as_deref()),
                        false,
                        Some(&message.runs),
                    ),
                    _ => return,
                }
            }
            b"usage" => (
                &entry.usage,
                ModelOf::Pair(&entry.provider, &entry.model),
                true,
                None,
            ),
            b"compaction" | b"branch_summary" => (&entry.usage, ModelOf::Current, false, None),
            b"model_change" => {
                if let Some(name) = model_name(&entry.provider, &entry.model_id) {
                    self.current_model = Some(name);
                }
                return;
            }
            _ => return,
        };
        let raw = match usage {
            UsageField::Object(raw) => raw,
            UsageField::Absent | UsageField::Falsy if !is_required => return,
            UsageField::Absent | UsageField::Falsy => {
                self.warn_at(
                    line_offset,
                    format!("{} without usage", describe(kind, &entry)),
                );
                return;
            }
            UsageField::Other => {
                self.warn_at(line_offset, "usage is not an object".to_owned());
                return;
            }
        };
        let usage = match usage_of(raw) {
            Ok(usage) => usage,
            Err(problem) => {
                self.warn_at(line_offset, problem);
                return;
            }
        };
        if raw.is_cost_not_a_number {
            self.warn_at(
                line_offset,
                "usage.cost.total is not a number: the record's cost is counted as unknown"
                    .to_owned(),
            );
        }
        self.is_saturated |= [usage.output, usage.cache_read, usage.cache_write]
            .into_iter()
            .try_fold(usage.input, u64::checked_add)
            .is_none();
        // A tool result's nested usage is the sum of the subagent runs it launched or waited
        // for. A run whose session file is listed is counted there, call by call with its
        // model and time; only the runs without one are counted here, from their share.
        let mut own = match runs {
            // Some missing runs recorded no usage, every listed one did: the missing runs'
            // share is what the tool result's sum leaves after the listed runs' own.
            Some(runs)
                if runs.n_listed > 0
                    && runs.n_without_usage > 0
                    && runs.n_listed_without_usage == 0
                    && let Some(rest) = usage_minus(&usage, &runs.listed_recorded) =>
            {
                rest
            }
            Some(runs) if runs.n_listed > 0 => {
                let mut own = runs.unlisted;
                own.n_entries = u64::from(runs.n_unlisted > 0);
                own.n_cost_unknown = own.n_cost_unknown.min(own.n_entries);
                own
            }
            _ => usage,
        };
        let is_share_unknown = runs.is_some_and(|runs| {
            runs.n_listed > 0
                && runs.n_without_usage > 0
                && (runs.n_listed_without_usage > 0
                    || usage_minus(&usage, &runs.listed_recorded).is_none())
        });
        if self.request.is_counted {
            self.scan.unbounded_own.add(&own);
        }
        // A missing run whose model pi-subagents recorded is counted under that model; the
        // tool's row keeps the rest (when the runs' shares fit in what is counted here, so
        // that no grouping counts more than another).
        let mut by_model = Vec::new();
        if let Some(runs) = runs
            && !runs.unlisted_by_model.is_empty()
            && let Some((rest, shares)) = split_runs(&own, &runs.unlisted_by_model)
        {
            own = rest;
            by_model = shares;
        }
        let mut missing_runs = None;
        if let Some(runs) = runs {
            self.scan.names_runs |= runs.n_named > 0;
            if runs.n_unlisted > 0 && self.request.is_counted {
                if self.request.keeps_records {
                    missing_runs = Some((runs.n_unlisted, runs.first_unlisted.clone()));
                } else {
                    self.n_missing_runs = self.n_missing_runs.saturating_add(runs.n_unlisted);
                    if self.first_missing_run.is_none() {
                        self.first_missing_run = runs.first_unlisted.clone();
                    }
                }
            }
            if is_share_unknown && self.request.is_counted {
                self.warn_at(
                    line_offset,
                    format!(
                        "{} subagent runs the tool result names have no session file in the stores and no usage of their own: what they cost is not counted",
                        runs.n_without_usage
                    ),
                );
            }
            if runs.n_bad > 0 {
                self.warn_at(
                    line_offset,
                    format!(
                        "{} subagent runs in the tool result's details have a usage that is not a token count: not counted",
                        runs.n_bad
                    ),
                );
            }
        }
        // An entry's identity is needed only to tell a fork's copies from its own entries.
        let key = match (&entry.id, &entry.timestamp) {
            (Some(id), Some(timestamp))
                if self.request.keeps_keys || self.request.keeps_records =>
            {
                Some(entry_key(id, timestamp))
            }
            _ => None,
        };
        if self.request.keeps_keys
            && let Some(key) = &key
        {
            self.scan.keys.insert(key.clone());
        }
        if let Some((n_runs, first)) = missing_runs {
            self.scan.missing_runs.push(MissingRuns {
                key: key.clone(),
                n_runs,
                first,
            });
        }
        if !self.request.is_counted {
            return;
        }
        let Some(day) = self.day_of(&entry) else {
            return;
        };
        if self.request.options.needs_model() {
            self.model.clear();
            match model {
                ModelOf::Pair(provider, name) => {
                    write_model_name(&mut self.model, provider, name);
                }
                ModelOf::Tool(tool) => {
                    self.model.push_str("tool:");
                    self.model.push_str(tool.unwrap_or("unknown"));
                }
                ModelOf::Current => self
                    .model
                    .push_str(self.current_model.as_deref().unwrap_or("unknown")),
            }
        }
        // What a tool result adds for runs without a listed file may be the usage of the
        // launcher's listed runs that no result names (a result without `runId` or
        // `sessionFile`): kept per cell for the plan, which knows those runs.
        let is_unexplained = runs.is_some() && !self.request.keeps_records;
        if is_unexplained && let Some(runs) = runs {
            self.scan.claimed_runs.extend(runs.claimed.iter().cloned());
        }
        let bucket = self.bucket_index(day);
        let cell = &mut self.scan.buckets[bucket];
        self.is_saturated |= cell.usage.add_checked(&usage);
        self.is_saturated |= cell.own.add_checked(&own);
        if self.request.keeps_records {
            self.scan.records.push(Record {
                key: key.clone(),
                bucket,
                usage: own,
            });
        }
        if is_unexplained && !adds_nothing(&own) {
            self.note_unexplained(bucket, &own);
        }
        for (model, run) in by_model {
            self.model.clear();
            self.model.push_str(model);
            let bucket = self.bucket_index(day);
            let cell = &mut self.scan.buckets[bucket];
            self.is_saturated |= cell.own.add_checked(&run);
            if self.request.keeps_records {
                self.scan.records.push(Record {
                    key: key.clone(),
                    bucket,
                    usage: run,
                });
            }
            if is_unexplained {
                self.note_unexplained(bucket, &run);
            }
        }
    }

    /// Adds `usage` to what tool results add to cell `bucket` for runs without a listed file.
    fn note_unexplained(&mut self, bucket: usize, usage: &Usage) {
        let unexplained = &mut self.scan.unexplained;
        if unexplained.len() <= bucket {
            unexplained.resize(bucket + 1, Usage::default());
        }
        unexplained[bucket].add(usage);
    }

    /// Returns the cell a record falls in by time: `Some(None)` when periods do not matter
    /// (or the record has no timestamp and is still counted), `Some(Some(day))` for its day,
    /// and `None` when it is not counted (outside the range, or no timestamp with a range).
    fn day_of(&mut self, entry: &RawEntry<'_>) -> Option<Option<Date>> {
        let options = self.request.options;
        if !options.needs_time() {
            return Some(None);
        }
        let hours = &mut self.hours;
        let instant = entry
            .timestamp
            .as_deref()
            .and_then(|text| hours.parse(text))
            .and_then(|instant| jiff::Timestamp::new(instant.seconds, instant.nanos as i32).ok());
        // Only the entry's own time places a record, as in `failures` and `entries`: a
        // message's millisecond `timestamp` of 0 once put records on 1970-01-01, inside every
        // `--until`.
        let Some(instant) = instant else {
            self.n_without_time += 1;
            return if self.is_time_bounded {
                None
            } else {
                Some(None)
            };
        };
        if !options.is_in_range(instant) {
            return None;
        }
        if !options.needs_period() {
            return Some(None);
        }
        Some(Some(self.days.day_of(instant, &options.time_zone)))
    }

    /// Returns the index of the cell for the current model name and `day`, adding it if new.
    fn bucket_index(&mut self, day: Option<Date>) -> usize {
        let needs_model = self.request.options.needs_model();
        let model = needs_model.then_some(self.model.as_str());
        let buckets = &self.scan.buckets;
        if buckets.len() > MAX_CELLS_SCANNED && self.cells.is_none() {
            // Many cells (a file of many days or models): look them up, not along, so that
            // a file's time stays linear in its records.
            let mut cells = CellIndex::new();
            for (idx, bucket) in buckets.iter().enumerate() {
                let name = bucket.model.as_deref().unwrap_or_default();
                cells
                    .entry(name.into())
                    .or_default()
                    .insert(bucket.day, idx);
            }
            self.cells = Some(cells);
        }
        if let Some(cells) = &mut self.cells {
            let name = model.unwrap_or_default();
            if let Some(&idx) = cells.get(name).and_then(|days| days.get(&day)) {
                return idx;
            }
            let idx = buckets.len();
            cells.entry(name.into()).or_default().insert(day, idx);
        } else if let Some(idx) = buckets
            .iter()
            // Records come in runs of the same cell; look at the latest cells first.
            .rposition(|bucket| bucket.day == day && bucket.model.as_deref() == model)
        {
            return idx;
        }
        self.scan.buckets.push(Bucket {
            model: model.map(Box::from),
            day,
            usage: Usage::default(),
            own: Usage::default(),
        });
        self.scan.buckets.len() - 1
    }
}

/// Which model a record is attributed to.
enum ModelOf<'e, 'a> {
    /// The `provider` and `model` the record names.
    Pair(&'e Option<Cow<'a, str>>, &'e Option<Cow<'a, str>>),
    /// A tool result's nested usage: `tool:<name>`.
    Tool(Option<&'e str>),
    /// A summary: the model in effect at that point of the file.
    Current,
}

fn model_name(provider: &Option<Cow<'_, str>>, model: &Option<Cow<'_, str>>) -> Option<String> {
    if provider.is_none() && model.is_none() {
        return None;
    }
    let mut name = String::new();
    write_model_name(&mut name, provider, model);
    Some(name)
}

fn write_model_name(
    out: &mut String,
    provider: &Option<Cow<'_, str>>,
    model: &Option<Cow<'_, str>>,
) {
    match (provider.as_deref(), model.as_deref()) {
        (Some(provider), Some(model)) => {
            out.push_str(provider);
            out.push('/');
            out.push_str(model);
        }
        (None, Some(model)) => out.push_str(model),
        (Some(provider), None) => {
            out.push_str(provider);
            out.push_str("/unknown");
        }
        (None, None) => out.push_str("unknown"),
    }
}

fn describe(kind: &[u8], entry: &RawEntry<'_>) -> String {
    match kind {
        b"message" => format!(
            "{} message",
            entry
                .message
                .as_ref()
                .and_then(|message| message.role.as_deref())
                .map_or(Cow::Borrowed("a"), String::from_utf8_lossy)
        ),
        other => format!("{} entry", String::from_utf8_lossy(other)),
    }
}

fn entry_key(id: &[u8], timestamp: &[u8]) -> EntryKey {
    let mut key = String::from_utf8_lossy(id).into_owned();
    key.push('\n');
    key.push_str(&String::from_utf8_lossy(timestamp));
    key.into_boxed_str()
}

/// Returns a record's figures, or what is wrong with its token counts.
fn usage_of(raw: &RawUsage) -> Result<Usage, String> {
    if let Some(name) = raw.not_a_number {
        return Err(format!("usage.{name} is not a number"));
    }
    let tokens = |value: Option<Number>, name: &str| -> Result<u64, String> {
        match value {
            None => Ok(0),
            Some(number) => number
                .as_token_count()
                .ok_or_else(|| format!("usage.{name} is not a token count: {number}")),
        }
    };
    let input = tokens(raw.input, "input")?;
    let output = tokens(raw.output, "output")?;
    let cache_read = tokens(raw.cache_read, "cacheRead")?;
    let cache_write = tokens(raw.cache_write, "cacheWrite")?;
    // A record whose counts add up past the largest count stops there, like every sum; the
    // scanner says so (see `is_saturated`).
    let total = input
        .saturating_add(output)
        .saturating_add(cache_read)
        .saturating_add(cache_write);
    // A recorded zero is a known zero (free and local providers; Pi shows $0.00); only a
    // missing or non-finite cost is unknown.
    let cost = raw
        .cost_total
        .and_then(Number::as_f64)
        .filter(|cost| cost.is_finite());
    // No provider charges less than nothing: a negative cost is a forged or broken record,
    // refused whole like a negative token count, so that it cannot lower any sum.
    if let Some(cost) = cost
        && cost < 0.0
    {
        return Err(format!("usage.cost.total is negative: {cost}"));
    }
    if let Some(name) = raw.negative_cost_part {
        return Err(format!("usage.cost.{name} is negative"));
    }
    Ok(Usage {
        input,
        output,
        cache_read,
        cache_write,
        total,
        cost: cost.unwrap_or(0.0),
        n_entries: 1,
        n_cost_unknown: u64::from(cost.is_none()),
    })
}

fn count_newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// The hour of the latest UTC timestamp parsed, so that the next ones of the same hour are
/// read from their minutes on.
///
/// Pi writes every entry's `timestamp` as JavaScript's `toISOString()`,
/// `YYYY-MM-DDTHH:MM:SS.sssZ`, and the entries of a file come in runs of the same hour:
/// parsing the date again (text check, calendar check, days since the epoch) for each was
/// a third of what `stats` spends on a usage line besides the JSON. A text is read the
/// short way only when its first 13 bytes (`YYYY-MM-DDTHH`) are those of a text that
/// [`timestamp::parse`] accepted and that ended in `Z`, and only when the rest has exactly
/// the form that parser accepts there (`:MM:SS`, an optional `.` and 1 to 9 digits, `Z`);
/// anything else goes to the parser, so the result is always the parser's.
#[derive(Debug, Default)]
struct HourCache {
    /// The `YYYY-MM-DDTHH` of the latest UTC text parsed, and its hour's first second.
    hour: Option<([u8; 13], i64)>,
}

impl HourCache {
    /// Returns what [`timestamp::parse`] returns for `text` (as bytes: text that is not UTF-8
    /// is no timestamp).
    fn parse(&mut self, text: &[u8]) -> Option<HeaderInstant> {
        if let Some((prefix, start)) = &self.hour
            && text.len() >= 20
            && text[..13] == prefix[..]
            && let Some((minutes_seconds, nanos)) = minutes_seconds_utc(&text[13..])
        {
            return Some(HeaderInstant {
                seconds: start + minutes_seconds,
                nanos,
            });
        }
        let instant = timestamp::parse(std::str::from_utf8(text).ok()?)?;
        if text.len() >= 20
            && let Some(prefix) = text.first_chunk::<13>()
            && let Some((minutes_seconds, _)) = minutes_seconds_utc(&text[13..])
        {
            self.hour = Some((*prefix, instant.seconds - minutes_seconds));
        }
        Some(instant)
    }
}

/// Reads the tail `:MM:SS(.fraction)Z` of a UTC timestamp (what follows `YYYY-MM-DDTHH`),
/// exactly as [`timestamp::parse`] accepts it: the seconds into the hour and the nanoseconds.
#[inline]
fn minutes_seconds_utc(tail: &[u8]) -> Option<(i64, u32)> {
    let [b':', m1, m2, b':', s1, s2, rest @ ..] = tail else {
        return None;
    };
    let digit = |byte: u8| byte.is_ascii_digit().then(|| u32::from(byte - b'0'));
    let minute = digit(*m1)? * 10 + digit(*m2)?;
    let second = digit(*s1)? * 10 + digit(*s2)?;
    if minute > 59 || second > 59 {
        return None;
    }
    let nanos = match rest {
        [b'Z'] => 0,
        [b'.', fraction @ .., b'Z'] if (1..=9).contains(&fraction.len()) => {
            let mut nanos = 0u32;
            for byte in fraction {
                nanos = nanos * 10 + digit(*byte)?;
            }
            nanos * 10u32.pow(9 - fraction.len() as u32)
        }
        _ => return None,
    };
    Some((i64::from(minute * 60 + second), nanos))
}

/// The calendar day of the latest instant looked up, with the instants it spans.
#[derive(Debug, Default)]
struct DayCache {
    span: Option<(jiff::Timestamp, jiff::Timestamp, Date)>,
}

impl DayCache {
    /// Returns the day `instant` falls on in `zone`. Records of one file mostly share a day,
    /// so the day's span is kept and most lookups are two comparisons.
    fn day_of(&mut self, instant: jiff::Timestamp, zone: &jiff::tz::TimeZone) -> Date {
        if let Some((start, end, day)) = self.span
            && start <= instant
            && instant < end
        {
            return day;
        }
        let day = zone.to_datetime(instant).date();
        let start_of = |day: Date| {
            zone.to_ambiguous_timestamp(day.to_datetime(jiff::civil::Time::midnight()))
                .compatible()
                .ok()
        };
        self.span = match (start_of(day), day.tomorrow().ok().and_then(start_of)) {
            (Some(start), Some(end)) if start <= instant && instant < end => {
                Some((start, end, day))
            }
            _ => None,
        };
        day
    }
}

/// A file's cells by model name (empty when rows have no model) and day.
type CellIndex = HashMap<Box<str>, HashMap<Option<Date>, usize>>;

/// The most cells of a file looked along for a record's cell; past it they are looked up.
const MAX_CELLS_SCANNED: usize = 16;

// ---------------------------------------------------------------- decoding one line

/// The members of an entry line that matter here; every other member is skipped unparsed
/// beyond validation. A member that is repeated takes its last value, as in `JSON.parse`.
#[derive(Default)]
struct RawEntry<'a> {
    kind: Option<Cow<'a, [u8]>>,
    id: Option<Cow<'a, [u8]>>,
    timestamp: Option<Cow<'a, [u8]>>,
    message: Option<RawMessage<'a>>,
    provider: Option<Cow<'a, str>>,
    model: Option<Cow<'a, str>>,
    model_id: Option<Cow<'a, str>>,
    usage: UsageField,
}

#[derive(Default)]
struct RawMessage<'a> {
    role: Option<Cow<'a, [u8]>>,
    provider: Option<Cow<'a, str>>,
    model: Option<Cow<'a, str>>,
    tool_name: Option<Cow<'a, str>>,
    usage: UsageField,
    /// The subagent runs a tool result's `details` names (pi-subagents).
    runs: RunTally,
    /// The names of an assistant message's tool calls, when facts are wanted.
    tool_calls: Vec<Cow<'a, str>>,
}

/// What to decode of a line.
struct Wants<'a> {
    models: bool,
    facts: bool,
    listed: &'a PathSet<'a>,
    /// The path of the file being read: a run that names no session file is looked for
    /// where pi-subagents writes it, under this file's stem.
    launcher: &'a str,
}

/// The subagent runs a tool result stands for, as pi-subagents records them: each entry of
/// `details.results` (a foreground launch) and of `details.completions[].results` (a
/// background run's completion, delivered by a later wait) has the run's `sessionFile` (or its
/// `index` in the launch whose `runId` the details give), its `model` and its `usage` (`input`,
/// `output`, `cacheRead`, `cacheWrite`, `cost` in dollars).
#[derive(Default)]
struct RunTally {
    /// Every run named, matched or not.
    n_named: u64,
    /// Runs whose session file is in the listing.
    n_listed: u64,
    /// Runs with usage whose session file is not (or that name none).
    n_unlisted: u64,
    /// The sum of their usage.
    unlisted: Usage,
    /// The first session file such a run names.
    first_unlisted: Option<String>,
    /// Runs whose usage could not be read.
    n_bad: u64,
    /// Unlisted runs that recorded no usage: what they cost is known only from the tool
    /// result's sum, which is not counted once some of its runs have files.
    n_without_usage: u64,
    /// The usage the listed runs recorded on the tool result (counted in their files).
    listed_recorded: Usage,
    /// Listed runs that recorded none.
    n_listed_without_usage: u64,
    /// The runs among the unlisted ones whose model is recorded, with their usage (only when
    /// rows are keyed by model): each is counted under its model, not under the tool.
    unlisted_by_model: Vec<(String, Usage)>,
    /// The listed run files the results name (as listed).
    claimed: Vec<String>,
}

/// A `usage` member as JavaScript's truthiness sees it.
#[derive(Default)]
#[cfg_attr(test, derive(Debug, PartialEq))]
enum UsageField {
    /// No such member.
    #[default]
    Absent,
    /// `null`, `false`, `0` or `""`: Pi skips it where usage is optional.
    Falsy,
    /// An object.
    Object(RawUsage),
    /// Anything else.
    Other,
}

#[derive(Default)]
#[cfg_attr(test, derive(Debug, PartialEq))]
struct RawUsage {
    input: Option<Number>,
    output: Option<Number>,
    cache_read: Option<Number>,
    cache_write: Option<Number>,
    /// `cost.total`, when `cost` is an object holding a number there.
    cost_total: Option<Number>,
    /// The first token member whose value is neither a number nor `null` (a string, say):
    /// Pi's sums would turn such a value into text, so the record is not counted.
    not_a_number: Option<&'static str>,
    /// A part of `cost` (`input`, `output`, `cacheRead`, `cacheWrite`) below zero.
    negative_cost_part: Option<&'static str>,
    /// `cost.total` is there but is no number (`"NaN"`, an object): the cost is unknown,
    /// and said.
    is_cost_not_a_number: bool,
}

/// Reads `cost.total`: a number, or `None` (absent as `null` is), noting one that is
/// something else.
fn cost_total(reader: &mut Reader<'_>, raw: &mut RawUsage) -> Result<Option<Number>, JsonError> {
    match reader.next_kind()? {
        Kind::Number => reader.number(),
        Kind::Null => reader.skip_value().map(|()| None),
        _ => {
            raw.is_cost_not_a_number = true;
            reader.skip_value().map(|()| None)
        }
    }
}

/// Reads one member of a `cost` object other than `total`: only a negative number matters
/// (it marks the record as broken), so anything else is checked and passed over.
fn cost_part(reader: &mut Reader<'_>, name: &[u8], raw: &mut RawUsage) -> Result<(), JsonError> {
    if reader.next_kind()? != Kind::Number {
        return reader.skip_value();
    }
    // Only a number written with a minus can be below zero: every other is checked and
    // passed over without its value being worked out (four of a usage line's ten numbers).
    let text = reader.raw_value()?;
    if text.first() != Some(&b'-') || raw.negative_cost_part.is_some() {
        return Ok(());
    }
    let is_negative = Reader::new(text)
        .number()
        .ok()
        .flatten()
        .and_then(Number::as_f64)
        .is_some_and(|value| value < 0.0);
    if is_negative {
        raw.negative_cost_part = match name {
            b"input" => Some("input"),
            b"output" => Some("output"),
            b"cacheRead" => Some("cacheRead"),
            b"cacheWrite" => Some("cacheWrite"),
            _ => None,
        };
    }
    Ok(())
}

impl RawUsage {
    /// Reads the value of the token member `name` (a number, or `null` for none).
    fn token(
        &mut self,
        reader: &mut Reader<'_>,
        name: &'static str,
    ) -> Result<Option<Number>, JsonError> {
        match reader.next_kind()? {
            Kind::Number => reader.number(),
            // JavaScript adds `null` as 0.
            Kind::Null => reader.skip_value().map(|()| None),
            _ => {
                reader.skip_value()?;
                self.not_a_number.get_or_insert(name);
                Ok(None)
            }
        }
    }
}

/// Returns whether a header line (already validated once, by the listing) is still a JSON
/// object whose `type` is `session`.
fn is_session_header(line: &[u8]) -> bool {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let mut reader = Reader::new(line);
    let mut is_session = false;
    let is_object = reader.object(|reader, name| {
        if name == b"type" {
            is_session = reader.bytes()?.as_deref() == Some(b"session");
            Ok(())
        } else {
            reader.skip_value()
        }
    });
    matches!(is_object, Ok(true)) && reader.end().is_ok() && is_session
}

/// Decodes an entry line into `entry` (filled in place: the decoded members are never moved);
/// `Ok(false)` when it is valid JSON but not an object. Model names are decoded only when
/// `wants_models`; other values are checked and passed over.
fn parse_entry<'a>(
    line: &'a [u8],
    wants: &Wants<'_>,
    entry: &mut RawEntry<'a>,
) -> Result<bool, JsonError> {
    let wants_models = wants.models;
    let mut reader = Reader::new(line);
    let is_object = reader.object(|reader, name| {
        match name {
            b"type" => entry.kind = reader.bytes()?,
            b"id" => entry.id = reader.bytes()?,
            b"timestamp" => entry.timestamp = reader.bytes()?,
            b"message" => {
                let message = entry.message.insert(RawMessage::default());
                let is_object =
                    reader.object(|reader, name| message.member(reader, name, wants))?;
                if !is_object {
                    entry.message = None;
                }
            }
            b"provider" if wants_models => entry.provider = reader.text()?,
            b"model" if wants_models => entry.model = reader.text()?,
            b"modelId" if wants_models => entry.model_id = reader.text()?,
            b"usage" => entry.usage = read_usage(reader)?,
            _ => reader.skip_value()?,
        }
        Ok(())
    })?;
    reader.end()?;
    Ok(is_object)
}

impl<'a> RawMessage<'a> {
    fn member(
        &mut self,
        reader: &mut Reader<'a>,
        name: &[u8],
        wants: &Wants<'_>,
    ) -> Result<(), JsonError> {
        match name {
            b"role" => self.role = reader.bytes()?,
            b"provider" if wants.models => self.provider = reader.text()?,
            b"model" if wants.models => self.model = reader.text()?,
            b"toolName" if wants.models => self.tool_name = reader.text()?,
            b"usage" => self.usage = read_usage(reader)?,
            b"details" => {
                // A run's file is known only once the launch's `runId` is, which may come
                // after the results: the runs are gathered, then matched.
                let mut launch_id: Option<Cow<'a, str>> = None;
                let mut launched = Vec::new();
                let mut completions: Vec<(Option<Cow<'a, str>>, Vec<RunRef<'a>>)> = Vec::new();
                reader.object(|reader, name| match name {
                    b"runId" => {
                        launch_id = reader.text()?;
                        Ok(())
                    }
                    b"results" => reader
                        .array(|reader| read_run(reader, &mut launched))
                        .map(drop),
                    b"completions" => reader
                        .array(|reader| {
                            let mut run_id = None;
                            let mut runs = Vec::new();
                            reader.object(|reader, name| match name {
                                b"runId" => {
                                    run_id = reader.text()?;
                                    Ok(())
                                }
                                b"results" => {
                                    reader.array(|reader| read_run(reader, &mut runs)).map(drop)
                                }
                                _ => reader.skip_value(),
                            })?;
                            completions.push((run_id, runs));
                            Ok(())
                        })
                        .map(drop),
                    _ => reader.skip_value(),
                })?;
                let runs = &mut self.runs;
                if launched.is_empty()
                    && let Some(launch_id) = launch_id.as_deref()
                {
                    tally_unnamed_runs(launch_id, wants, runs);
                }
                tally_runs(launched, launch_id.as_deref(), wants, runs);
                for (run_id, launched) in completions {
                    tally_runs(launched, run_id.as_deref(), wants, runs);
                }
            }
            b"content" if wants.facts => {
                let names = &mut self.tool_calls;
                reader.array(|reader| {
                    let mut is_tool_call = false;
                    let mut tool = None;
                    reader.object(|reader, name| {
                        match name {
                            b"type" => {
                                is_tool_call = reader.bytes()?.as_deref() == Some(b"toolCall")
                            }
                            b"name" => tool = reader.text()?,
                            _ => reader.skip_value()?,
                        }
                        Ok(())
                    })?;
                    if is_tool_call {
                        names.push(tool.unwrap_or(Cow::Borrowed("unknown")));
                    }
                    Ok(())
                })?;
            }
            _ => reader.skip_value()?,
        }
        Ok(())
    }
}

/// One subagent run as a tool result's details record it.
struct RunRef<'a> {
    session_file: Option<Cow<'a, str>>,
    /// Its place in the launch (`run-<index>/` of its directory).
    index: Option<u64>,
    /// The model pi-subagents recorded for it.
    model: Option<Cow<'a, str>>,
    usage: Option<Result<Usage, String>>,
}

/// Reads one subagent run of a tool result's details into `runs`.
fn read_run<'a>(reader: &mut Reader<'a>, runs: &mut Vec<RunRef<'a>>) -> Result<(), JsonError> {
    let mut run = RunRef {
        session_file: None,
        index: None,
        model: None,
        usage: None,
    };
    reader.object(|reader, name| {
        match name {
            b"sessionFile" => run.session_file = reader.text()?,
            b"index" => run.index = reader.number()?.and_then(Number::as_token_count),
            b"model" => run.model = reader.text()?,
            b"usage" => {
                let mut raw = RawUsage::default();
                let is_object = reader.object(|reader, name| {
                    match name {
                        b"input" => raw.input = raw.token(reader, "input")?,
                        b"output" => raw.output = raw.token(reader, "output")?,
                        b"cacheRead" => raw.cache_read = raw.token(reader, "cacheRead")?,
                        b"cacheWrite" => raw.cache_write = raw.token(reader, "cacheWrite")?,
                        // pi-subagents keeps a run's cost as a number; Pi's shape too.
                        b"cost" => match reader.next_kind()? {
                            Kind::Object => {
                                reader.object(|reader, name| {
                                    match name {
                                        b"total" => raw.cost_total = reader.number()?,
                                        _ => cost_part(reader, name, &mut raw)?,
                                    }
                                    Ok(())
                                })?;
                            }
                            _ => raw.cost_total = reader.number()?,
                        },
                        _ => reader.skip_value()?,
                    }
                    Ok(())
                })?;
                run.usage = is_object.then(|| usage_of(&raw));
            }
            _ => reader.skip_value()?,
        }
        Ok(())
    })?;
    runs.push(run);
    Ok(())
}

/// Matches the runs of one launch (`launch_id`: its `runId`) to the listing's files and adds
/// them to `runs`. A run is its file when its `sessionFile` is listed (as written, normalised,
/// or by its place in the store) or, when it names none, when the file pi-subagents writes
/// for it, `<launcher's stem>/<launch id>/run-<index>/session.jsonl`, is listed.
/// Tallies the runs of a launch whose result lists none (only its `runId`): the run files
/// pi-subagents wrote for it, `run-0`, `run-1`, … in its directory, are listed runs whose
/// usage is counted in their own files. The launch counts as naming runs either way, so that
/// a scan made before the listing was known is not used for it.
fn tally_unnamed_runs(launch_id: &str, wants: &Wants<'_>, runs: &mut RunTally) {
    runs.n_named += 1;
    let Some(stem) = wants.launcher.strip_suffix(".jsonl") else {
        return;
    };
    if !is_plain_name(launch_id) {
        return;
    }
    let mut index = 0u64;
    while let Some(&listed) = wants
        .listed
        .get(format!("{stem}/{launch_id}/run-{index}/session.jsonl").as_str())
    {
        runs.n_listed += 1;
        runs.n_listed_without_usage += 1;
        runs.claimed.push(listed.to_owned());
        index += 1;
    }
}

fn tally_runs(
    launched: Vec<RunRef<'_>>,
    launch_id: Option<&str>,
    wants: &Wants<'_>,
    runs: &mut RunTally,
) {
    let listed = wants.listed;
    let stem = wants.launcher.strip_suffix(".jsonl");
    // A run's file is one of the launcher's runs, which the walk lists below the launcher's
    // stem, and each is claimed once per result: a result naming the launcher itself, another
    // session or a run already named leaves its run unlisted, so its usage is counted here.
    let is_run_of_launcher = |path: &str| {
        stem.is_some_and(|stem| {
            path.strip_prefix(stem)
                .is_some_and(|rest| rest.starts_with('/'))
        })
    };
    let first_claim = runs.claimed.len();
    let mut seen: Vec<(Option<String>, Option<u64>)> = Vec::new();
    for (position, run) in launched.into_iter().enumerate() {
        runs.n_named += 1;
        // The same result twice (same file, same index) is one run.
        let identity = (run.session_file.as_deref().map(str::to_owned), run.index);
        if identity.0.is_some() && seen.contains(&identity) {
            continue;
        }
        seen.push(identity);
        let by_name = run.session_file.as_deref().and_then(|path| {
            listed
                .get(path)
                .or_else(|| {
                    path.starts_with('/')
                        .then(|| listed.get(normalize_absolute(path).as_str()))
                        .flatten()
                })
                .or_else(|| {
                    pi_retrospect_core::path::store_tail(path).and_then(|tail| listed.get(tail))
                })
                .copied()
        });
        // Where pi-subagents writes the run: found there too when the file it names has moved
        // or it names none. Results written before pi-subagents recorded an `index` are in
        // launch order.
        let by_place = || match (launch_id, stem) {
            (Some(launch_id), Some(stem)) if is_plain_name(launch_id) => {
                let index = run.index.unwrap_or(position as u64);
                listed
                    .get(format!("{stem}/{launch_id}/run-{index}/session.jsonl").as_str())
                    .copied()
            }
            _ => None,
        };
        let is_unclaimed = |path: &&str| {
            !runs.claimed[first_claim..]
                .iter()
                .any(|claimed| claimed == path)
        };
        let found = by_name
            .filter(|path| is_run_of_launcher(path))
            .filter(is_unclaimed)
            .or_else(|| by_place().filter(is_unclaimed));
        if let Some(path) = found {
            runs.claimed.push(path.to_owned());
            runs.n_listed += 1;
            match run.usage {
                Some(Ok(usage)) => runs.listed_recorded.add(&usage),
                _ => runs.n_listed_without_usage += 1,
            }
            continue;
        }
        match run.usage {
            Some(Ok(usage)) if usage.total > 0 || usage.cost != 0.0 => {
                runs.n_unlisted += 1;
                runs.unlisted.add(&usage);
                if runs.first_unlisted.is_none() {
                    runs.first_unlisted = run.session_file.map(Cow::into_owned);
                }
                if wants.models
                    && let Some(model) = run.model
                {
                    runs.unlisted_by_model
                        .push((without_thinking_level(&model).to_owned(), usage));
                }
            }
            Some(Err(_)) => runs.n_bad += 1,
            Some(Ok(_)) => {}
            None => runs.n_without_usage += 1,
        }
    }
}

/// Returns a model as pi-subagents records it (`provider/model:high`, as Pi's `--model` takes
/// it) without its thinking level: the run's calls were made with the model itself.
fn without_thinking_level(model: &str) -> &str {
    const LEVELS: [&str; 6] = ["off", "minimal", "low", "medium", "high", "xhigh"];
    match model.rsplit_once(':') {
        Some((name, level)) if !name.is_empty() && LEVELS.contains(&level) => name,
        _ => model,
    }
}

/// Returns whether `usage` adds nothing to a row: no record, no token, no cost (a run's share
/// of a launch can carry tokens without being a record of its own).
pub(crate) fn adds_nothing(usage: &Usage) -> bool {
    usage.is_empty() && usage.total == 0 && usage.cost == 0.0
}

/// Returns `total` less `part`, one record, or `None` when `part` does not fit in it.
fn usage_minus(total: &Usage, part: &Usage) -> Option<Usage> {
    let input = total.input.checked_sub(part.input)?;
    let output = total.output.checked_sub(part.output)?;
    let cache_read = total.cache_read.checked_sub(part.cache_read)?;
    let cache_write = total.cache_write.checked_sub(part.cache_write)?;
    let cost = total.cost - part.cost;
    (cost >= -1e-9).then_some(Usage {
        cost: cost.max(0.0),
        n_entries: 1,
        n_cost_unknown: total.n_cost_unknown.min(1),
        ..Usage::of_tokens(input, output, cache_read, cache_write)
    })
}

/// Splits `own` into what stays on the launching tool result and each run's share, or
/// `None` when a run's tokens do not fit in `own` (a forged share). The one record `own`
/// stands for stays on the tool result while any usage is left there, else goes with the
/// first run, so every grouping counts the same records.
fn split_runs<'r>(
    own: &Usage,
    runs: &'r [(String, Usage)],
) -> Option<(Usage, Vec<(&'r str, Usage)>)> {
    let mut rest = *own;
    let mut shares = Vec::with_capacity(runs.len());
    for (model, run) in runs {
        rest.input = rest.input.checked_sub(run.input)?;
        rest.output = rest.output.checked_sub(run.output)?;
        rest.cache_read = rest.cache_read.checked_sub(run.cache_read)?;
        rest.cache_write = rest.cache_write.checked_sub(run.cache_write)?;
        rest.total = rest.total.checked_sub(run.total)?;
        rest.cost = (rest.cost - run.cost).max(0.0);
        let mut share = *run;
        share.n_entries = 0;
        share.n_cost_unknown = 0;
        shares.push((model.as_str(), share));
    }
    if rest.total == 0 && rest.cost == 0.0 {
        if let Some((_, first)) = shares.first_mut() {
            first.n_entries = rest.n_entries;
            first.n_cost_unknown = rest.n_cost_unknown;
        }
        rest.n_entries = 0;
        rest.n_cost_unknown = 0;
    }
    Some((rest, shares))
}

/// Returns whether `name` is one path component (a launch id names a directory).
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains('/')
}

/// Counts one assistant message and its tool calls into `facts`.
fn count_turn(facts: &mut SessionFacts, tool_calls: &[Cow<'_, str>]) {
    facts.n_turns = facts.n_turns.saturating_add(1);
    for tool in tool_calls {
        let name = if facts.tool_calls.contains_key(tool.as_ref())
            || facts.tool_calls.len() < MAX_TOOL_NAMES
        {
            tool.as_ref()
        } else {
            "(other)"
        };
        match facts.tool_calls.get_mut(name) {
            Some(count) => *count = count.saturating_add(1),
            None => {
                facts.tool_calls.insert(name.to_owned(), 1);
            }
        }
    }
}

/// Returns `text` cut to at most `max` characters, ending in `…` when it was cut.
fn cut_chars(text: String, max: usize) -> String {
    match text.char_indices().nth(max.saturating_sub(1)) {
        Some((end, _)) if text[end..].chars().nth(1).is_some() => {
            let mut cut = text[..end].to_owned();
            cut.push('…');
            cut
        }
        _ => text,
    }
}

/// Returns the `timestamp` of an entry line, when it is an object with a valid one.
fn entry_timestamp(line: &[u8]) -> Option<HeaderInstant> {
    let mut reader = Reader::new(line);
    let mut found = None;
    reader
        .object(|reader, name| {
            match name {
                b"timestamp" => found = reader.bytes()?,
                _ => reader.skip_value()?,
            }
            Ok(())
        })
        .ok()?;
    let text = found?;
    timestamp::parse(std::str::from_utf8(&text).ok()?)
}

/// Reads a usage object written exactly as Pi writes one (its members in Pi's order, no
/// white space, token counts and cost parts that are numbers, none written with a minus),
/// checking every value as [`read_usage`] does, without the general loop over members. Any
/// other bytes leave the reader where it was and return `None`: the general path then reads
/// them, so the result is the same either way, only sooner for the usual line.
#[inline]
fn read_usage_as_pi_writes_it(reader: &mut Reader<'_>) -> Option<RawUsage> {
    // The two objects passed over here are within the nesting limit.
    if reader.depth() + 2 > pi_retrospect_read::json::MAX_DEPTH {
        return None;
    }
    let mut fast = reader.clone();
    let token = |fast: &mut Reader<'_>, name: &[u8]| -> Option<Number> {
        if !fast.eat(name) || !matches!(fast.next_kind(), Ok(Kind::Number)) {
            return None;
        }
        fast.number().ok().flatten()
    };
    let mut usage = RawUsage {
        input: Some(token(&mut fast, b"{\"input\":")?),
        output: Some(token(&mut fast, b",\"output\":")?),
        cache_read: Some(token(&mut fast, b",\"cacheRead\":")?),
        cache_write: Some(token(&mut fast, b",\"cacheWrite\":")?),
        ..RawUsage::default()
    };
    // `totalTokens` is not read, only checked; the cost parts other than the total matter
    // only when below zero, which the general path works out.
    token(&mut fast, b",\"totalTokens\":")?;
    for part in [
        &b",\"cost\":{\"input\":"[..],
        b",\"output\":",
        b",\"cacheRead\":",
        b",\"cacheWrite\":",
    ] {
        if !fast.eat(part) || !matches!(fast.next_kind(), Ok(Kind::Number)) || fast.eat(b"-") {
            return None;
        }
        fast.skip_value().ok()?;
    }
    usage.cost_total = Some(token(&mut fast, b",\"total\":")?);
    if !fast.eat(b"}}") {
        return None;
    }
    *reader = fast;
    Some(usage)
}

/// Reads a `usage` member, classified the way JavaScript's truthiness and Pi's code see it.
fn read_usage(reader: &mut Reader<'_>) -> Result<UsageField, JsonError> {
    match read_usage_as_pi_writes_it(reader) {
        Some(usage) => Ok(UsageField::Object(usage)),
        None => read_any_usage(reader),
    }
}

/// [`read_usage`] for a value in any layout.
fn read_any_usage(reader: &mut Reader<'_>) -> Result<UsageField, JsonError> {
    Ok(match reader.next_kind()? {
        Kind::Object => {
            let mut usage = RawUsage::default();
            reader.object(|reader, name| {
                match name {
                    b"input" => usage.input = usage.token(reader, "input")?,
                    b"output" => usage.output = usage.token(reader, "output")?,
                    b"cacheRead" => usage.cache_read = usage.token(reader, "cacheRead")?,
                    b"cacheWrite" => usage.cache_write = usage.token(reader, "cacheWrite")?,
                    b"cost" => {
                        let mut total = None;
                        let is_object = reader.object(|reader, name| {
                            match name {
                                b"total" => total = cost_total(reader, &mut usage)?,
                                _ => cost_part(reader, name, &mut usage)?,
                            }
                            Ok(())
                        })?;
                        usage.cost_total = if is_object { total } else { None };
                    }
                    _ => reader.skip_value()?,
                }
                Ok(())
            })?;
            UsageField::Object(usage)
        }
        Kind::String => match reader.text()? {
            Some(text) if text.is_empty() => UsageField::Falsy,
            _ => UsageField::Other,
        },
        Kind::Number => match reader.number()? {
            Some(Number::Unsigned(0) | Number::Signed(0)) => UsageField::Falsy,
            Some(Number::Float(0.0)) => UsageField::Falsy,
            _ => UsageField::Other,
        },
        Kind::Array | Kind::True => {
            reader.skip_value()?;
            UsageField::Other
        }
        Kind::False | Kind::Null => {
            reader.skip_value()?;
            UsageField::Falsy
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Parses `text` the one way every other reader does.
    fn parsed(text: &str) -> Option<HeaderInstant> {
        timestamp::parse(text)
    }

    #[test]
    fn a_thinking_level_is_not_part_of_the_model() {
        for (recorded, model) in [
            (
                "anthropic/claude-sonnet-4-5:high",
                "anthropic/claude-sonnet-4-5",
            ),
            ("m:xhigh", "m"),
            ("m:off", "m"),
            // A tag that is no thinking level is the model's own name.
            ("ollama/llama3:8b", "ollama/llama3:8b"),
            (":high", ":high"),
            ("m", "m"),
        ] {
            assert_eq!(without_thinking_level(recorded), model, "{recorded}");
        }
    }

    #[test]
    fn reads_an_hour_again_only_in_the_form_the_parser_accepts() {
        let mut hours = HourCache::default();
        for text in [
            "2026-12-07T18:05:09.123Z",
            "2026-12-07T18:59:59Z",
            "2026-12-07T18:00:00.123456789Z",
            "2026-12-07T18:00:00.1234567890Z",
            "2026-12-07T18:00:00.Z",
            "2026-12-07T18:60:00Z",
            "2026-12-07T18:00:60Z",
            "2026-12-07T18:00:00+01:00",
            "2026-12-07T18:00:00z",
            "2026-12-07T18:0a:00Z",
            "2026-12-07T18:00:00.12aZ",
            "2026-12-07T18:00:00.123ZZ",
            "2026-12-07T19:00:00.000Z",
            "2026-02-29T19:00:00.000Z",
        ] {
            assert_eq!(hours.parse(text.as_bytes()), parsed(text), "{text}");
        }
        assert_eq!(hours.parse(b"2026-12-07T18:05:09.\xffZ"), None);
    }

    /// A usage value as Pi writes it, or bent in one of the ways a forged or foreign file
    /// might bend it.
    fn usage_text() -> impl Strategy<Value = String> {
        let number = prop_oneof![
            30 => (0u64..100_000).prop_map(|n| n.to_string()),
            3 => Just("0.001".to_owned()),
            1 => Just("-1".to_owned()),
            1 => Just("-0.5".to_owned()),
            1 => Just("1e400".to_owned()),
            1 => Just("01".to_owned()),
            1 => Just("\"7\"".to_owned()),
            1 => Just("null".to_owned()),
            1 => Just("{}".to_owned()),
        ];
        let names = [
            "input",
            "output",
            "cacheRead",
            "cacheWrite",
            "totalTokens",
            "input",
            "output",
            "cacheRead",
            "cacheWrite",
            "total",
        ];
        (
            proptest::collection::vec(number, 10),
            proptest::collection::vec(0u8..12, 0..3),
        )
            .prop_map(move |(numbers, bends)| {
                let mut parts: Vec<String> = names
                    .iter()
                    .zip(&numbers)
                    .map(|(name, number)| format!("\"{name}\":{number}"))
                    .collect();
                let mut separator = ",";
                let mut tail = "}}";
                for bend in bends {
                    match bend {
                        0 => parts.swap(0, 1),
                        1 if parts.len() > 9 => parts.swap(5, 9),
                        2 => drop(parts.remove(2)),
                        3 => parts.push(parts[0].clone()),
                        4 => separator = ", ",
                        5 => tail = "} }",
                        6 => tail = "}",
                        7 if parts.len() > 4 => parts[4] = "\"totalTokens\":1x".to_owned(),
                        _ => {}
                    }
                }
                let (tokens, cost) = parts.split_at(parts.len().min(5));
                format!(
                    "{{{},\"cost\":{{{}{tail}",
                    tokens.join(separator),
                    cost.join(separator)
                )
            })
    }

    #[test]
    fn takes_the_short_path_only_for_the_layout_pi_writes() {
        let pi = br#"{"input":3652,"output":3527,"cacheRead":62811,"cacheWrite":0,"totalTokens":69990,"cost":{"input":0.001,"output":0.002,"cacheRead":0.003,"cacheWrite":0,"total":0.006}},"#;
        let mut reader = Reader::new(pi);
        let usage = read_usage_as_pi_writes_it(&mut reader).expect("Pi's layout");
        assert_eq!(usage.input, Some(Number::Unsigned(3652)));
        assert_eq!(usage.cost_total, Some(Number::Float(0.006)));
        assert_eq!(reader.offset(), pi.len() - 1);
        let negative = br#"{"input":1,"output":1,"cacheRead":1,"cacheWrite":0,"totalTokens":3,"cost":{"input":-0.001,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#;
        let mut reader = Reader::new(negative);
        assert!(read_usage_as_pi_writes_it(&mut reader).is_none());
        assert_eq!(reader.offset(), 0);
    }

    proptest! {
        #[test]
        fn reads_usage_as_pi_writes_it_like_any_usage(text in usage_text(), suffix in "[,}]{0,2}") {
            let line = format!("{text}{suffix}");
            let mut fast = Reader::new(line.as_bytes());
            let mut general = Reader::new(line.as_bytes());
            let read = read_usage(&mut fast);
            let expected = read_any_usage(&mut general);
            prop_assert_eq!(read.is_ok(), expected.is_ok());
            if let (Ok(read), Ok(expected)) = (read, expected) {
                prop_assert_eq!(read, expected);
                prop_assert_eq!(fast.offset(), general.offset());
            }
        }

        /// Runs of timestamps sharing their hour, valid or broken anywhere, read through one
        /// cache give exactly what the parser gives for each.
        #[test]
        fn agrees_with_the_parser_on_runs_of_timestamps(
            texts in proptest::collection::vec(
                (
                    // Few hours, so that most texts find the one before them cached; some
                    // of them are no date (February 29th of 2026, hour 24).
                    proptest::sample::select(&[
                        "2024-02-29T23", "2026-02-29T23", "2026-12-07T00", "2026-12-07T24",
                    ][..]),
                    // Minutes and seconds near and past their bounds, or not digits.
                    proptest::sample::select(&["00", "07", "59", "60", "61", "a1", "5"][..]),
                    proptest::sample::select(&["00", "09", "59", "60", "99", "1a"][..]),
                    proptest::option::of("[0-9]{0,10}|[0-9]{2}a"),
                    proptest::sample::select(&["Z", "Z", "Z", "z", "+01:00", "ZZ", ""][..]),
                ),
                1..40,
            )
        ) {
            let mut hours = HourCache::default();
            for (hour, minute, second, fraction, end) in texts {
                let fraction = fraction.map(|digits| format!(".{digits}")).unwrap_or_default();
                let text = format!("{hour}:{minute}:{second}{fraction}{end}");
                prop_assert_eq!(hours.parse(text.as_bytes()), parsed(&text), "{}", text);
            }
        }
    }
}
