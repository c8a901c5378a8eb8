//! Reading a session file into its header, entry envelopes, warnings and entry tree.
//!
//! The tree is resolved once at parse time and is always a forest: missing parents, parent
//! cycles and duplicate ids are repaired (and reported) so that every later walk terminates.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use pi_retrospect_header::Symlinks;
use serde::Serialize;

use crate::entry::{Entry, EntryKind, entry_from_envelope};
use crate::error::TranscriptError;
use crate::json::{EnvelopeError, Loose, parse_envelope};
use crate::scan::{DEFAULT_MAX_LINE_BYTES, RawLine, for_each_line};
use crate::warning::{TranscriptWarning, WarningKind};

/// Returns the session header (line 1 of a well-formed file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    /// The physical line the header is on.
    pub line_no: u64,
    /// The session id.
    pub id: Option<String>,
    /// The format version: 1 when the header has none.
    pub version: u64,
    /// The header timestamp as stored.
    pub timestamp: Option<String>,
    /// The working directory the session ran in.
    pub cwd: Option<String>,
    /// The session this one was forked or cloned from.
    pub parent_session: Option<String>,
}

/// Returns how much of the file a parse covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// Bytes parsed: the file's size when it was opened (or a smaller cursor bound).
    pub bytes: u64,
    /// Physical lines seen within those bytes.
    pub n_lines: u64,
}

/// Where entry content is re-read from.
#[derive(Debug)]
enum Source {
    File { path: PathBuf, file: File },
    Memory(Vec<u8>),
}

/// Returns a parsed session: header, entry envelopes in file order, warnings and the tree.
#[derive(Debug)]
pub struct Transcript {
    source: Source,
    header: Option<Header>,
    version: u64,
    entries: Vec<Entry>,
    warnings: Vec<TranscriptWarning>,
    snapshot: Snapshot,
    by_id: HashMap<String, usize>,
    parents: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
    roots: Vec<usize>,
    is_linear: bool,
}

/// How much of a session file a reader may take in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// Read only this many bytes (a cursor's snapshot); `None` reads the size seen at open.
    pub snapshot_bytes: Option<u64>,
    /// The longest line held in memory; a longer line is skipped with a warning.
    pub max_line_bytes: usize,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            snapshot_bytes: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// A line that failed to parse, kept to explain the entries it orphaned.
struct MalformedLine {
    line_no: u64,
    salvaged_id: Option<String>,
}

/// Accumulates lines into a session.
struct Builder {
    header: Option<Header>,
    version: u64,
    entries: Vec<Entry>,
    warnings: Vec<TranscriptWarning>,
    malformed: Vec<MalformedLine>,
    n_lines: u64,
    n_crlf: u64,
    first_crlf_line: u64,
    has_seen_record: bool,
    max_line_bytes: usize,
}

impl Builder {
    fn new(max_line_bytes: usize) -> Self {
        Builder {
            max_line_bytes,
            header: None,
            version: 3,
            entries: Vec::new(),
            warnings: Vec::new(),
            malformed: Vec::new(),
            n_lines: 0,
            n_crlf: 0,
            first_crlf_line: 0,
            has_seen_record: false,
        }
    }

    fn push_line(&mut self, line: RawLine<'_>) {
        self.n_lines = line.line_no;
        if let Some(length) = line.over_long {
            let line_no = line.line_no;
            self.warnings.push(TranscriptWarning::new(
                Some(line_no),
                WarningKind::OverLongLine,
                format!(
                    "line {line_no} is {length} bytes, longer than the {} byte line limit; skipped",
                    self.max_line_bytes
                ),
            ));
            self.malformed.push(MalformedLine {
                line_no,
                salvaged_id: None,
            });
            return;
        }
        let mut bytes = line.bytes;
        let mut offset = line.offset;
        if line.line_no == 1 && bytes.starts_with(b"\xEF\xBB\xBF") {
            bytes = &bytes[3..];
            offset += 3;
            self.warnings.push(TranscriptWarning::new(
                Some(1),
                WarningKind::ByteOrderMark,
                "the file starts with a UTF-8 byte order mark; it was skipped",
            ));
        }
        if let Some(stripped) = bytes.strip_suffix(b"\r") {
            bytes = stripped;
            if self.n_crlf == 0 {
                self.first_crlf_line = line.line_no;
            }
            self.n_crlf += 1;
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let line_no = line.line_no;
        let envelope = match parse_envelope(bytes) {
            Ok(envelope) => envelope,
            Err(EnvelopeError::Syntax(error)) => {
                if line.has_newline {
                    let salvaged_id = salvage_id(bytes);
                    let about_id = salvaged_id
                        .as_deref()
                        .map(|id| format!(" (it looks like entry {id})"))
                        .unwrap_or_default();
                    self.warnings.push(TranscriptWarning::new(
                        Some(line_no),
                        WarningKind::MalformedLine,
                        format!("line {line_no} is not valid JSON{about_id}: {error}; skipped"),
                    ));
                    self.malformed.push(MalformedLine {
                        line_no,
                        salvaged_id,
                    });
                } else {
                    self.warnings.push(TranscriptWarning::new(
                        Some(line_no),
                        WarningKind::PartialFinalLine,
                        format!(
                            "the final line {line_no} has no newline and is incomplete ({} bytes), probably being written; ignored",
                            bytes.len()
                        ),
                    ));
                }
                return;
            }
            Err(EnvelopeError::NotAnObject) => {
                self.warnings.push(TranscriptWarning::new(
                    Some(line_no),
                    WarningKind::NotAnEntry,
                    format!("line {line_no} is JSON but not an object; skipped"),
                ));
                return;
            }
        };
        if !line.has_newline {
            self.warnings.push(TranscriptWarning::new(
                Some(line_no),
                WarningKind::MissingFinalNewline,
                format!("the final line {line_no} has no newline; it is complete JSON and kept"),
            ));
        }
        let Some(entry_type) = envelope.kind.0.as_deref().map(str::to_owned) else {
            self.warnings.push(TranscriptWarning::new(
                Some(line_no),
                WarningKind::NotAnEntry,
                format!("line {line_no} has no string \"type\"; skipped"),
            ));
            return;
        };
        let is_first_record = !self.has_seen_record;
        self.has_seen_record = true;
        if entry_type == "session" {
            if is_first_record {
                let version = match envelope.version {
                    Loose::Absent | Loose::Null => 1,
                    Loose::Unsigned(version @ 1..=3) => version,
                    other => {
                        self.warnings.push(TranscriptWarning::new(
                            Some(line_no),
                            WarningKind::UnknownVersion,
                            format!("unknown session version {other:?}; read as version 3"),
                        ));
                        3
                    }
                };
                self.version = version;
                self.header = Some(Header {
                    line_no,
                    id: envelope.id.into_owned(),
                    version,
                    timestamp: envelope.timestamp.into_owned(),
                    cwd: envelope.cwd.into_owned(),
                    parent_session: envelope.parent_session.into_owned(),
                });
            } else {
                let id = envelope.id.0.as_deref().unwrap_or("?");
                self.warnings.push(TranscriptWarning::new(
                    Some(line_no),
                    WarningKind::ExtraHeader,
                    format!(
                        "line {line_no} is another session header (session {id}); the entries after it stay in this tree"
                    ),
                ));
            }
            return;
        }
        if is_first_record {
            self.warnings.push(TranscriptWarning::new(
                Some(line_no),
                WarningKind::MissingHeader,
                format!("line {line_no} is a {entry_type:?} entry, not a session header; Pi would not open this file"),
            ));
        }
        let byte_len = bytes.len() as u64;
        let n_chars = count_chars(bytes);
        self.entries.push(entry_from_envelope(
            envelope,
            entry_type,
            self.version,
            line_no,
            offset,
            byte_len,
            n_chars,
        ));
    }
}

/// Returns how many characters `bytes` hold: every byte that does not continue a UTF-8
/// sequence starts one. An ASCII line (the common case) is answered by the fast `is_ascii`
/// scan; otherwise continuation bytes are counted in chunks of 255 with byte-wide
/// accumulators, which the compiler vectorises (a per-byte `filter().count()` cost a third of
/// the whole parse of a 128 MiB session).
fn count_chars(bytes: &[u8]) -> u64 {
    if bytes.is_ascii() {
        return bytes.len() as u64;
    }
    let n_continuation: usize = bytes
        .chunks(255)
        .map(|chunk| {
            let in_chunk = chunk
                .iter()
                .fold(0u8, |count, &byte| count + u8::from((byte as i8) < -0x40));
            usize::from(in_chunk)
        })
        .sum();
    (bytes.len() - n_continuation) as u64
}

/// Returns the id a malformed line seems to carry, from a `"id":"..."` near its start.
fn salvage_id(bytes: &[u8]) -> Option<String> {
    let head = &bytes[..bytes.len().min(512)];
    let key = b"\"id\":\"";
    let start = memchr::memmem::find(head, key)? + key.len();
    let rest = &bytes[start..bytes.len().min(start + 128)];
    let end = memchr::memchr(b'"', rest)?;
    let id = std::str::from_utf8(&rest[..end]).ok()?;
    (!id.is_empty() && !id.contains('\\')).then(|| id.to_owned())
}

fn open_regular(path: &Path) -> Result<(File, u64), TranscriptError> {
    // One open for every reader: O_NOFOLLOW | O_NONBLOCK, then fstat on the descriptor, so a
    // FIFO swapped in at any moment can neither block nor be read.
    let (file, metadata) = pi_retrospect_header::open_regular(path, Symlinks::Refuse)?;
    Ok((file, metadata.len()))
}

impl Transcript {
    /// Returns the session stored at `path`, read up to its size at open time.
    pub fn open(path: &Path) -> Result<Transcript, TranscriptError> {
        Transcript::open_snapshot(path, None)
    }

    /// Returns the session at `path` read up to `max_bytes` (or its whole size at open time).
    ///
    /// Fails with [`TranscriptError::SnapshotGone`] when the file is shorter than `max_bytes`.
    pub fn open_snapshot(
        path: &Path,
        max_bytes: Option<u64>,
    ) -> Result<Transcript, TranscriptError> {
        Transcript::open_with(
            path,
            &ReadLimits {
                snapshot_bytes: max_bytes,
                ..ReadLimits::default()
            },
        )
    }

    /// Returns the session at `path` read within `limits`: up to `limits.snapshot_bytes` (or
    /// its whole size at open time), holding no line longer than `limits.max_line_bytes`.
    ///
    /// Fails with [`TranscriptError::SnapshotGone`] when the file is shorter than the snapshot.
    pub fn open_with(path: &Path, limits: &ReadLimits) -> Result<Transcript, TranscriptError> {
        let max_bytes = limits.snapshot_bytes;
        let (file, size) = open_regular(path)?;
        let limit = match max_bytes {
            Some(max_bytes) if max_bytes > size => {
                return Err(TranscriptError::SnapshotGone {
                    path: path.to_owned(),
                    snapshot_bytes: max_bytes,
                    file_bytes: size,
                });
            }
            Some(max_bytes) => max_bytes,
            None => size,
        };
        let mut builder = Builder::new(limits.max_line_bytes);
        let n_bytes = for_each_line(&file, limit, limits.max_line_bytes, |line| {
            builder.push_line(line)
        })
        .map_err(|source| TranscriptError::Read {
            path: path.to_owned(),
            source,
        })?;
        let source = Source::File {
            path: path.to_owned(),
            file,
        };
        Ok(Transcript::finish(builder, source, n_bytes))
    }

    /// Returns the session held in `bytes` (a whole file's contents).
    pub fn from_bytes(bytes: Vec<u8>) -> Transcript {
        let mut builder = Builder::new(DEFAULT_MAX_LINE_BYTES);
        let n_bytes = bytes.len() as u64;
        // Reading from a slice cannot fail.
        let _ = for_each_line(bytes.as_slice(), n_bytes, DEFAULT_MAX_LINE_BYTES, |line| {
            builder.push_line(line)
        });
        Transcript::finish(builder, Source::Memory(bytes), n_bytes)
    }

    fn finish(builder: Builder, source: Source, n_bytes: u64) -> Transcript {
        let Builder {
            header,
            version,
            entries,
            mut warnings,
            malformed,
            n_lines,
            n_crlf,
            first_crlf_line,
            ..
        } = builder;
        if header.is_none()
            && entries.is_empty()
            && !warnings
                .iter()
                .any(|warning| warning.kind == WarningKind::MissingHeader)
        {
            warnings.push(TranscriptWarning::new(
                None,
                WarningKind::MissingHeader,
                "the file holds no session header",
            ));
        }
        if n_crlf > 0 {
            warnings.push(TranscriptWarning::new(
                Some(first_crlf_line),
                WarningKind::CrlfLineEndings,
                format!("{n_crlf} lines end with CRLF; the CR was ignored"),
            ));
        }
        let is_linear = match &header {
            Some(header) => header.version == 1,
            None => !entries.is_empty() && entries.iter().all(|entry| entry.id.is_none()),
        };
        if is_linear && !entries.is_empty() {
            warnings.push(TranscriptWarning::new(
                header.as_ref().map(|header| header.line_no),
                WarningKind::Version1Ids,
                "version 1 file: entries have no ids (Pi invents new ones on every open); the entries form one linear branch and line numbers are their handles",
            ));
        }
        let mut session = Transcript {
            source,
            header,
            version,
            entries,
            warnings,
            snapshot: Snapshot {
                bytes: n_bytes,
                n_lines,
            },
            by_id: HashMap::new(),
            parents: Vec::new(),
            children: Vec::new(),
            roots: Vec::new(),
            is_linear,
        };
        session.build_tree(&malformed);
        session
    }

    fn build_tree(&mut self, malformed: &[MalformedLine]) {
        let n_entries = self.entries.len();
        let mut parents: Vec<Option<usize>> = vec![None; n_entries];
        if self.is_linear {
            for (idx, parent) in parents.iter_mut().enumerate().skip(1) {
                *parent = Some(idx - 1);
            }
        } else {
            for (idx, entry) in self.entries.iter().enumerate() {
                let Some(id) = &entry.id else {
                    self.warnings.push(TranscriptWarning::new(
                        Some(entry.line_no),
                        WarningKind::MissingId,
                        format!(
                            "the {} entry on line {} has no id; nothing can continue from it",
                            entry.entry_type, entry.line_no
                        ),
                    ));
                    continue;
                };
                if let Some(previous) = self.by_id.insert(id.clone(), idx) {
                    self.warnings.push(TranscriptWarning::new(
                        Some(entry.line_no),
                        WarningKind::DuplicateId,
                        format!(
                            "id {id} on line {} was already used on line {}; the later entry wins lookups, as in Pi",
                            entry.line_no, self.entries[previous].line_no
                        ),
                    ));
                }
            }
            for (idx, entry) in self.entries.iter().enumerate() {
                let Some(parent_id) = &entry.parent_id else {
                    continue;
                };
                match self.by_id.get(parent_id) {
                    Some(&parent) => parents[idx] = Some(parent),
                    None => {
                        let handle = entry.handle();
                        let line_no = entry.line_no;
                        let cause = malformed
                            .iter()
                            .find(|line| line.salvaged_id.as_deref() == Some(parent_id.as_str()))
                            .map(|line| format!("it was on malformed line {}", line.line_no))
                            .or_else(|| {
                                malformed
                                    .iter()
                                    .rev()
                                    .find(|line| line.line_no < line_no)
                                    .map(|line| {
                                        format!(
                                            "it may have been on malformed line {}",
                                            line.line_no
                                        )
                                    })
                            })
                            .unwrap_or_else(|| "no line of the file holds it".to_owned());
                        self.warnings.push(TranscriptWarning::new(
                            Some(line_no),
                            WarningKind::MissingParent,
                            format!(
                                "entry {handle} on line {line_no} names parent {parent_id}, which is missing ({cause}); kept as an extra root, where Pi drops the history above it"
                            ),
                        ));
                    }
                }
            }
        }
        self.break_cycles(&mut parents);
        let mut children = vec![Vec::new(); n_entries];
        let mut roots = Vec::new();
        for (idx, parent) in parents.iter().enumerate() {
            match parent {
                Some(parent) => children[*parent].push(idx),
                None => roots.push(idx),
            }
        }
        self.parents = parents;
        self.children = children;
        self.roots = roots;
    }

    /// Cuts every parent cycle at its member that comes first in the file.
    fn break_cycles(&mut self, parents: &mut [Option<usize>]) {
        // 0 = unvisited; otherwise the walk (start index + 1) that first reached the entry.
        let mut walk_of = vec![0usize; parents.len()];
        let mut path = Vec::new();
        for start in 0..parents.len() {
            if walk_of[start] != 0 {
                continue;
            }
            let walk = start + 1;
            path.clear();
            let mut current = Some(start);
            while let Some(idx) = current {
                if walk_of[idx] == walk {
                    // `idx` is on this walk twice: the path from its first visit is a cycle.
                    let cycle_start = path.iter().position(|&member| member == idx).unwrap_or(0);
                    let cycle = &path[cycle_start..];
                    let first = cycle.iter().copied().min().unwrap_or(idx);
                    let lines: Vec<String> = cycle
                        .iter()
                        .map(|&member| self.entries[member].line_no.to_string())
                        .collect();
                    let entry = &self.entries[first];
                    let message = if cycle.len() == 1 {
                        format!(
                            "entry {} on line {} is its own parent (Pi loops forever on it); made a root",
                            entry.handle(),
                            entry.line_no
                        )
                    } else {
                        format!(
                            "entries on lines {} form a parent cycle; entry {} on line {} was made a root",
                            lines.join(", "),
                            entry.handle(),
                            entry.line_no
                        )
                    };
                    self.warnings.push(TranscriptWarning::new(
                        Some(entry.line_no),
                        WarningKind::Cycle,
                        message,
                    ));
                    parents[first] = None;
                    break;
                }
                if walk_of[idx] != 0 {
                    // Reached a part of the forest an earlier walk already checked.
                    break;
                }
                walk_of[idx] = walk;
                path.push(idx);
                current = parents[idx];
            }
        }
    }

    /// Returns the header, when line 1 holds one.
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// Returns the session id from the header.
    pub fn session_id(&self) -> Option<&str> {
        self.header.as_ref().and_then(|header| header.id.as_deref())
    }

    /// Returns the format version the file was read as (1, 2 or 3).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Returns whether entries form one linear chain by file order (version 1 files).
    pub fn is_linear(&self) -> bool {
        self.is_linear
    }

    /// Returns every entry in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Returns the entry at `idx`.
    pub fn entry(&self, idx: usize) -> &Entry {
        &self.entries[idx]
    }

    /// Returns every warning, in the order found.
    pub fn warnings(&self) -> &[TranscriptWarning] {
        &self.warnings
    }

    /// Returns how much of the file was parsed.
    pub fn snapshot(&self) -> Snapshot {
        self.snapshot
    }

    /// Returns the resolved parent of `idx` in the repaired tree.
    pub fn parent(&self, idx: usize) -> Option<usize> {
        self.parents[idx]
    }

    /// Returns the children of `idx` in file order.
    pub fn children(&self, idx: usize) -> &[usize] {
        &self.children[idx]
    }

    /// Returns the roots in file order: entries with no parent, a missing one, or a cut cycle.
    pub fn roots(&self) -> &[usize] {
        &self.roots
    }

    /// Returns the leaf: the last entry appended, as Pi picks it on open.
    pub fn leaf(&self) -> Option<usize> {
        self.entries.len().checked_sub(1)
    }

    /// Returns the entry a handle names: an id (the later entry for duplicates) or `line:N`.
    pub fn find(&self, handle: &str) -> Option<usize> {
        if !self.is_linear
            && let Some(&idx) = self.by_id.get(handle)
        {
            return Some(idx);
        }
        let line_no: u64 = handle.strip_prefix("line:")?.parse().ok()?;
        self.entries
            .binary_search_by_key(&line_no, |entry| entry.line_no)
            .ok()
    }

    /// Returns the path from a root down to `idx`, root first.
    pub fn path_to(&self, idx: usize) -> Vec<usize> {
        let mut path = vec![idx];
        let mut current = idx;
        while let Some(parent) = self.parents[current] {
            path.push(parent);
            current = parent;
        }
        path.reverse();
        path
    }

    /// Returns the active branch: the path from a root down to the leaf, root first.
    pub fn active_branch(&self) -> Vec<usize> {
        self.leaf()
            .map(|leaf| self.path_to(leaf))
            .unwrap_or_default()
    }

    /// Returns the entry a compaction keeps from, resolved on the compaction's own branch.
    pub fn first_kept_of(&self, compaction: usize) -> Option<usize> {
        let EntryKind::Compaction {
            first_kept_entry_id,
            first_kept_entry_index,
            ..
        } = &self.entries[compaction].kind
        else {
            return None;
        };
        if let Some(id) = first_kept_entry_id {
            if self.is_linear {
                return None;
            }
            return self.by_id.get(id).copied();
        }
        // Version 1: an index into the file's parsed records, where record 0 is the header.
        let index = usize::try_from((*first_kept_entry_index)?).ok()?;
        let offset = usize::from(self.header.is_some());
        index
            .checked_sub(offset)
            .filter(|&idx| idx < self.entries.len())
    }

    /// Returns the raw bytes of the line holding entry `idx` (without its line ending).
    pub fn line_bytes(&self, idx: usize) -> Result<Cow<'_, [u8]>, TranscriptError> {
        let entry = &self.entries[idx];
        let start = entry.byte_offset;
        let len = entry.byte_len;
        match &self.source {
            Source::Memory(bytes) => {
                // Offsets come from scanning these very bytes, so the range is in bounds.
                let start = usize::try_from(start).unwrap_or(usize::MAX);
                let end = start.saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
                Ok(Cow::Borrowed(bytes.get(start..end).unwrap_or_default()))
            }
            Source::File { path, file } => {
                let mut buffer = vec![0u8; usize::try_from(len).unwrap_or(0)];
                read_exact_at(file, &mut buffer, start).map_err(|source| {
                    TranscriptError::Read {
                        path: path.clone(),
                        source,
                    }
                })?;
                Ok(Cow::Owned(buffer))
            }
        }
    }

    /// Returns the full JSON value of entry `idx`, decoded on demand.
    ///
    /// Invalid UTF-8 inside strings is replaced with U+FFFD, as Pi's own reader does.
    pub fn decode(&self, idx: usize) -> Result<serde_json::Value, TranscriptError> {
        let bytes = self.line_bytes(idx)?;
        Ok(decode_lossy(&bytes))
    }
}

/// Returns the verbatim JSON text of a line's `bytes` (from [`Transcript::line_bytes`]).
pub(crate) fn raw_json(bytes: &[u8]) -> Box<serde_json::value::RawValue> {
    let text = String::from_utf8_lossy(bytes).into_owned();
    // The envelope parsed, so the text is JSON; `null` stands in only if the file changed
    // under us.
    serde_json::value::RawValue::from_string(text).unwrap_or_else(|_| null_raw())
}

#[expect(
    clippy::unwrap_used,
    reason = "the literal `null` is valid JSON, so parsing it cannot fail"
)]
fn null_raw() -> Box<serde_json::value::RawValue> {
    serde_json::value::RawValue::from_string("null".to_owned()).unwrap()
}

/// Returns the JSON value of a line's `bytes` (from [`Transcript::line_bytes`]), read as Pi
/// reads it; see [`Transcript::decode`].
pub(crate) fn decode_lossy(bytes: &[u8]) -> serde_json::Value {
    if let Ok(value) = serde_json::from_slice(bytes) {
        return value;
    }
    // What JavaScript's `JSON.parse` reads but a strict parser refuses: invalid UTF-8, and a
    // lone surrogate escape (`\ud83d` without its pair, which JavaScript writes when a string
    // is cut between the halves of an emoji). Both become U+FFFD, as in Pi's own reader.
    let text = String::from_utf8_lossy(bytes);
    let repaired = replace_lone_surrogates(&text);
    serde_json::from_str(&repaired).unwrap_or(serde_json::Value::Null)
}

/// Returns `json` with every `\uD800`-`\uDFFF` escape that is not half of a valid pair
/// replaced by `\ufffd`. An escaped backslash is skipped whole, so `\\ud800` (a backslash
/// followed by the text `ud800`) is left alone.
fn replace_lone_surrogates(json: &str) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    let escape_at = |idx: usize| -> Option<u16> {
        if bytes.get(idx) != Some(&b'\\') || bytes.get(idx + 1) != Some(&b'u') {
            return None;
        }
        let hex = json.get(idx + 2..idx + 6)?;
        u16::from_str_radix(hex, 16).ok()
    };
    let mut repaired: Option<String> = None;
    let mut copied_to = 0;
    let mut idx = 0;
    while idx < bytes.len() {
        if bytes[idx] != b'\\' {
            idx += 1;
            continue;
        }
        let Some(unit) = escape_at(idx) else {
            idx += 2;
            continue;
        };
        let is_high = (0xD800..0xDC00).contains(&unit);
        let is_low = (0xDC00..0xE000).contains(&unit);
        if is_high && escape_at(idx + 6).is_some_and(|next| (0xDC00..0xE000).contains(&next)) {
            idx += 12;
            continue;
        }
        if is_high || is_low {
            let out = repaired.get_or_insert_with(|| String::with_capacity(json.len()));
            out.push_str(&json[copied_to..idx]);
            out.push_str("\\ufffd");
            copied_to = idx + 6;
        }
        idx += 6;
    }
    match repaired {
        None => Cow::Borrowed(json),
        Some(mut out) => {
            out.push_str(&json[copied_to..]);
            Cow::Owned(out)
        }
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buffer, offset)
}

#[cfg(not(unix))]
fn read_exact_at(file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = file;
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buffer)
}
