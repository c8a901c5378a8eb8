//! Reading a session file into its header, entry envelopes, warnings and entry tree.
//!
//! One pass over the file's lines (through the capped reader in `scan.rs`) keeps each entry's
//! envelope in the compact store (`store.rs`); the tree is then resolved once (`tree.rs`).
//! The pass is bracketed by the checks in `change.rs`, so a file rewritten in place while it
//! was read is reported instead of silently mixing two versions.

use std::borrow::Cow;
use std::fs::File;
use std::path::{Path, PathBuf};

use pi_retrospect_read::Symlinks;
use serde::Serialize;

use crate::change::{FileState, HashingReader, ReadWatch, is_unchanged_since};
use crate::entry::{Entry, EntryKind, LineSpan, entry_from_envelope};
use crate::envelope::{EnvelopeError, Loose, RawEnvelope, parse_envelope};
use crate::error::TranscriptError;
use crate::store::EntryStore;
use crate::tree::{MAX_ENTRIES, MalformedLines, Tree, short};
use crate::warning::{TranscriptWarning, WarningCounts, WarningKind, Warnings};
use pi_retrospect_read::decode_lossy;
use pi_retrospect_read::{DEFAULT_MAX_LINE_BYTES, RawLine, for_each_line};

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
    store: EntryStore,
    warnings: Vec<TranscriptWarning>,
    warning_counts: WarningCounts,
    snapshot: Snapshot,
    tree: Tree,
    is_linear: bool,
    /// The line cap the file was read with, for the second pass of `for_each_warning`.
    max_line_bytes: usize,
    /// The hash of the bytes read from a file, for the second pass to compare.
    read_hash: Option<u64>,
    /// The file's state when the first read ended, for [`Transcript::check_unchanged`].
    state_after: Option<FileState>,
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

/// Returns the entries of a transcript in file order: a cheap handle that decodes each
/// [`Entry`] as it is asked for.
#[derive(Debug, Clone, Copy)]
pub struct Entries<'a> {
    store: &'a EntryStore,
}

impl<'a> Entries<'a> {
    /// Returns the number of entries.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Returns whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.store.len() == 0
    }

    /// Returns entry `idx`, if there is one.
    pub fn get(&self, idx: usize) -> Option<Entry<'a>> {
        (idx < self.store.len()).then(|| self.store.get(idx))
    }

    /// Returns the entries in file order.
    pub fn iter(&self) -> EntriesIter<'a> {
        EntriesIter {
            store: self.store,
            front: 0,
            back: self.store.len(),
        }
    }
}

impl<'a> IntoIterator for Entries<'a> {
    type Item = Entry<'a>;
    type IntoIter = EntriesIter<'a>;

    fn into_iter(self) -> EntriesIter<'a> {
        self.iter()
    }
}

/// Returns an iterator over a transcript's entries in file order.
#[derive(Debug, Clone)]
pub struct EntriesIter<'a> {
    store: &'a EntryStore,
    front: usize,
    back: usize,
}

impl<'a> Iterator for EntriesIter<'a> {
    type Item = Entry<'a>;

    fn next(&mut self) -> Option<Entry<'a>> {
        if self.front == self.back {
            return None;
        }
        self.front += 1;
        Some(self.store.get(self.front - 1))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }

    fn nth(&mut self, n: usize) -> Option<Entry<'a>> {
        self.front = self.front.saturating_add(n).min(self.back);
        self.next()
    }
}

impl DoubleEndedIterator for EntriesIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        Some(self.store.get(self.back))
    }
}

impl ExactSizeIterator for EntriesIter<'_> {}

impl std::iter::FusedIterator for EntriesIter<'_> {}

/// Accumulates lines into a session.
struct Builder<'s> {
    header: Option<Header>,
    version: u64,
    store: EntryStore,
    warnings: Warnings<'s>,
    malformed: MalformedLines,
    n_lines: u64,
    n_crlf: u64,
    first_crlf_line: u64,
    has_seen_record: bool,
    max_line_bytes: usize,
}

impl<'s> Builder<'s> {
    fn new(max_line_bytes: usize) -> Self {
        Builder::with_warnings(max_line_bytes, Warnings::default())
    }

    fn with_warnings(max_line_bytes: usize, warnings: Warnings<'s>) -> Self {
        Builder {
            max_line_bytes,
            header: None,
            version: 3,
            store: EntryStore::default(),
            warnings,
            malformed: MalformedLines::default(),
            n_lines: 0,
            n_crlf: 0,
            first_crlf_line: 0,
            has_seen_record: false,
        }
    }

    fn push_line(&mut self, line: RawLine<'_>) {
        self.n_lines = line.line_no;
        if let Some(length) = line.over_long {
            self.skip_over_long_line(line.line_no, length);
            return;
        }
        let (bytes, offset) = self.strip_line(&line);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match parse_envelope(bytes) {
            Ok(envelope) => self.push_record(&line, bytes, offset, &envelope),
            Err(error) => self.reject_line(&line, bytes, error),
        }
    }

    fn skip_over_long_line(&mut self, line_no: u64, length: u64) {
        let cap = self.max_line_bytes;
        self.warnings
            .push(Some(line_no), WarningKind::OverLongLine, || {
                format!(
                    "line {line_no} is {length} bytes, longer than the {cap} byte line limit; skipped"
                )
            });
        self.malformed.note(line_no, None);
    }

    /// Returns the line's JSON text and its offset: without a byte order mark at the start of
    /// the file and without the CR of a CRLF ending (both counted for a warning).
    fn strip_line<'l>(&mut self, line: &RawLine<'l>) -> (&'l [u8], u64) {
        let mut bytes = line.bytes;
        let mut offset = line.offset;
        if line.line_no == 1 && bytes.starts_with(b"\xEF\xBB\xBF") {
            bytes = &bytes[3..];
            offset += 3;
            self.warnings.push(Some(1), WarningKind::ByteOrderMark, || {
                "the file starts with a UTF-8 byte order mark; it was skipped".to_owned()
            });
        }
        if let Some(stripped) = bytes.strip_suffix(b"\r") {
            bytes = stripped;
            if self.n_crlf == 0 {
                self.first_crlf_line = line.line_no;
            }
            self.n_crlf += 1;
        }
        (bytes, offset)
    }

    /// Reports a line that is not an entry object: malformed, or an unfinished final line.
    fn reject_line(&mut self, line: &RawLine<'_>, bytes: &[u8], error: EnvelopeError) {
        let line_no = line.line_no;
        match error {
            EnvelopeError::Syntax(error) if line.has_newline => {
                let salvaged_id = salvage_id(bytes);
                let about_id = salvaged_id
                    .as_deref()
                    .map(|id| format!(" (it looks like entry {})", short(id)))
                    .unwrap_or_default();
                self.warnings
                    .push(Some(line_no), WarningKind::MalformedLine, || {
                        format!("line {line_no} is not valid JSON{about_id}: {error}; skipped")
                    });
                self.malformed.note(line_no, salvaged_id);
            }
            EnvelopeError::Syntax(_) => {
                let n_bytes = bytes.len();
                self.warnings
                    .push(Some(line_no), WarningKind::PartialFinalLine, || {
                        format!(
                            "the final line {line_no} has no newline and is incomplete ({n_bytes} bytes), probably being written; ignored"
                        )
                    });
            }
            EnvelopeError::NotAnObject => {
                self.warnings
                    .push(Some(line_no), WarningKind::NotAnEntry, || {
                        format!("line {line_no} is JSON but not an object; skipped")
                    });
            }
        }
    }

    /// Takes in a line that is a JSON object: the header, an entry, or neither.
    fn push_record(
        &mut self,
        line: &RawLine<'_>,
        bytes: &[u8],
        offset: u64,
        envelope: &RawEnvelope<'_>,
    ) {
        let line_no = line.line_no;
        if !line.has_newline {
            self.warnings
                .push(Some(line_no), WarningKind::MissingFinalNewline, || {
                    format!("the final line {line_no} has no newline; it is complete JSON and kept")
                });
        }
        let Some(entry_type) = envelope.kind.as_str() else {
            self.warnings
                .push(Some(line_no), WarningKind::NotAnEntry, || {
                    format!("line {line_no} has no string \"type\"; skipped")
                });
            return;
        };
        let is_first_record = !self.has_seen_record;
        self.has_seen_record = true;
        if entry_type == "session" {
            self.read_header(line_no, envelope, is_first_record);
            return;
        }
        if is_first_record {
            self.warnings
                .push(Some(line_no), WarningKind::MissingHeader, || {
                    format!(
                        "line {line_no} is a {:?} entry, not a session header; Pi would not open this file",
                        short(entry_type)
                    )
                });
        }
        if self.store.len() >= MAX_ENTRIES {
            self.warnings
                .push(Some(line_no), WarningKind::TooManyEntries, || {
                    format!(
                        "line {line_no} and the entries after it were not read: one transcript holds at most {MAX_ENTRIES} entries"
                    )
                });
            return;
        }
        let span = LineSpan {
            line_no,
            byte_offset: offset,
            byte_len: bytes.len() as u64,
            n_chars: count_chars(bytes),
        };
        self.malformed.entry_read(self.store.len());
        self.store.push(&entry_from_envelope(
            envelope,
            entry_type,
            self.version,
            span,
        ));
    }

    /// Takes in a `session` line: the header when it is the first record, else a warning.
    fn read_header(&mut self, line_no: u64, envelope: &RawEnvelope<'_>, is_first_record: bool) {
        if !is_first_record {
            let id = envelope.id.as_str().unwrap_or("?");
            self.warnings.push(Some(line_no), WarningKind::ExtraHeader, || {
                format!(
                    "line {line_no} is another session header (session {}); the entries after it stay in this tree",
                    short(id)
                )
            });
            return;
        }
        let version = match envelope.version {
            Loose::Absent | Loose::Null => 1,
            Loose::Unsigned(version @ 1..=3) => version,
            other => {
                self.warnings
                    .push(Some(line_no), WarningKind::UnknownVersion, || {
                        format!("unknown session version {other:?}; read as version 3")
                    });
                3
            }
        };
        let owned = |text: Option<&str>| text.map(str::to_owned);
        self.version = version;
        self.header = Some(Header {
            line_no,
            id: owned(envelope.id.as_str()),
            version,
            timestamp: owned(envelope.timestamp.as_str()),
            cwd: owned(envelope.cwd.as_str()),
            parent_session: owned(envelope.parent_session.as_str()),
        });
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

/// A session's parts once its lines are all in: the warnings of the whole file found and the
/// tree built.
struct Closed<'s> {
    header: Option<Header>,
    version: u64,
    store: EntryStore,
    warnings: Warnings<'s>,
    n_lines: u64,
    tree: Tree,
    is_linear: bool,
}

/// Returns the parts of the session `builder` took the lines of: the warnings about the whole
/// file added, in the same order on every pass, and the tree built.
fn close(builder: Builder<'_>) -> Closed<'_> {
    let Builder {
        header,
        version,
        mut store,
        mut warnings,
        malformed,
        n_lines,
        n_crlf,
        first_crlf_line,
        ..
    } = builder;
    store.shrink_to_fit();
    if header.is_none() && store.len() == 0 && !warnings.has(WarningKind::MissingHeader) {
        warnings.push(None, WarningKind::MissingHeader, || {
            "the file holds no session header".to_owned()
        });
    }
    if n_crlf > 0 {
        warnings.push(Some(first_crlf_line), WarningKind::CrlfLineEndings, || {
            format!("{n_crlf} lines end with CRLF; the CR was ignored")
        });
    }
    let is_linear = match &header {
        Some(header) => header.version == 1,
        None => store.len() > 0 && (0..store.len()).all(|idx| store.id(idx).is_none()),
    };
    if is_linear && store.len() > 0 {
        warnings.push(
            header.as_ref().map(|header| header.line_no),
            WarningKind::Version1Ids,
            || "version 1 file: entries have no ids (Pi invents new ones on every open); the entries form one linear branch and line numbers are their handles".to_owned(),
        );
    }
    let tree = Tree::build(&store, is_linear, &malformed, &mut warnings);
    Closed {
        header,
        version,
        store,
        warnings,
        n_lines,
        tree,
        is_linear,
    }
}

fn open_regular(path: &Path) -> Result<(File, FileState), TranscriptError> {
    // One open for every reader: O_NOFOLLOW | O_NONBLOCK, then fstat on the descriptor, so a
    // FIFO swapped in at any moment can neither block nor be read. That fstat is also the
    // state a change while reading is measured from.
    let (file, metadata) = pi_retrospect_read::open_regular(path, Symlinks::Refuse)?;
    Ok((file, FileState::from_metadata(&metadata)))
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
    /// A file that shrank or was rewritten in place while it was read (any change but an
    /// append after the bytes read) gets a [`WarningKind::ChangedWhileRead`] warning.
    pub fn open_with(path: &Path, limits: &ReadLimits) -> Result<Transcript, TranscriptError> {
        Transcript::open_observed(path, limits, |_| {})
    }

    /// Does what [`Transcript::open_with`] does, calling `on_line` with each line number as
    /// the line is taken in (a test rewrites the file from it).
    fn open_observed(
        path: &Path,
        limits: &ReadLimits,
        mut on_line: impl FnMut(u64),
    ) -> Result<Transcript, TranscriptError> {
        let read_error = |source| TranscriptError::Read {
            path: path.to_owned(),
            source,
        };
        let (file, before) = open_regular(path)?;
        let size = before.size();
        let limit = match limits.snapshot_bytes {
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
        let watch = ReadWatch::start(&file, before, limit).map_err(read_error)?;
        let mut builder = Builder::new(limits.max_line_bytes);
        let mut reader = HashingReader::new(&file);
        let n_bytes = for_each_line(&mut reader, limit, limits.max_line_bytes, |line| {
            let line_no = line.line_no;
            builder.push_line(line);
            on_line(line_no);
        })
        .map_err(read_error)?;
        let read_hash = reader.hash();
        let (change, state_after) = watch
            .finish(&file, n_bytes, read_hash)
            .map_err(read_error)?;
        if let Some(message) = change {
            builder
                .warnings
                .push(None, WarningKind::ChangedWhileRead, || message);
        }
        let source = Source::File {
            path: path.to_owned(),
            file,
        };
        let mut transcript = Transcript::finish(builder, source, n_bytes);
        transcript.read_hash = Some(read_hash);
        transcript.state_after = Some(state_after);
        Ok(transcript)
    }

    /// Returns the session held in `bytes` (a whole file's contents).
    pub fn from_bytes(bytes: Vec<u8>) -> Transcript {
        Transcript::from_bytes_with(bytes, &ReadLimits::default())
    }

    /// Returns the session held in `bytes` read within `limits`: up to
    /// `limits.snapshot_bytes` (or all of them), holding no line longer than
    /// `limits.max_line_bytes`.
    pub fn from_bytes_with(mut bytes: Vec<u8>, limits: &ReadLimits) -> Transcript {
        if let Some(snapshot_bytes) = limits.snapshot_bytes {
            bytes.truncate(usize::try_from(snapshot_bytes).unwrap_or(usize::MAX));
        }
        let mut builder = Builder::new(limits.max_line_bytes);
        let n_bytes = bytes.len() as u64;
        // Reading from a slice cannot fail.
        let _ = for_each_line(bytes.as_slice(), n_bytes, limits.max_line_bytes, |line| {
            builder.push_line(line)
        });
        Transcript::finish(builder, Source::Memory(bytes), n_bytes)
    }

    fn finish(builder: Builder<'_>, source: Source, n_bytes: u64) -> Transcript {
        let max_line_bytes = builder.max_line_bytes;
        let Closed {
            header,
            version,
            store,
            warnings,
            n_lines,
            tree,
            is_linear,
        } = close(builder);
        let (warnings, warning_counts) = warnings.finish();
        Transcript {
            source,
            header,
            version,
            store,
            warnings,
            warning_counts,
            snapshot: Snapshot {
                bytes: n_bytes,
                n_lines,
            },
            tree,
            is_linear,
            max_line_bytes,
            read_hash: None,
            state_after: None,
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
    pub fn entries(&self) -> Entries<'_> {
        Entries { store: &self.store }
    }

    /// Returns the entry at `idx`.
    pub fn entry(&self, idx: usize) -> Entry<'_> {
        self.store.get(idx)
    }

    /// Returns the warnings kept: the first [`crate::KEPT_PER_KIND`] of each kind in the order
    /// found, then one [`WarningKind::Omitted`] warning per kind that had more.
    pub fn warnings(&self) -> &[TranscriptWarning] {
        &self.warnings
    }

    /// Calls `visit` with every warning about the file, in the order [`Transcript::warnings`]
    /// keeps them, however many there are (`--json` lists all of them).
    ///
    /// When no kind had more than [`crate::KEPT_PER_KIND`], those are the kept warnings.
    /// Otherwise the file is read a second time, through the descriptor it was parsed from and
    /// up to the same snapshot, and its warnings are found again and handed on one at a time,
    /// so memory holds one warning (and, while the pass runs, a second entry index), never
    /// all of them. If the bytes of the second read differ from the first's, a last
    /// [`WarningKind::ChangedWhileRead`] warning says that the list may not match the
    /// entries.
    ///
    /// Either way the list ends with a [`WarningKind::ChangedWhileRead`] warning if the file
    /// was rewritten in place since it was read: written last, after a document's content,
    /// it covers every read of content made for it.
    pub fn for_each_warning(
        &self,
        mut visit: impl FnMut(&TranscriptWarning),
    ) -> Result<(), TranscriptError> {
        let is_complete = self
            .warnings
            .iter()
            .all(|warning| warning.kind != WarningKind::Omitted);
        if is_complete {
            self.warnings.iter().for_each(&mut visit);
            if let Some(change) = self.check_unchanged()? {
                visit(&change);
            }
            return Ok(());
        }
        // A change seen by the first read is not re-derived by the second: it is handed on
        // where the first read found it, after the lines.
        let changes: Vec<TranscriptWarning> = self
            .warnings
            .iter()
            .filter(|warning| warning.kind == WarningKind::ChangedWhileRead)
            .cloned()
            .collect();
        let mut sink = |warning: TranscriptWarning| visit(&warning);
        let mut builder =
            Builder::with_warnings(self.max_line_bytes, Warnings::streaming(&mut sink));
        let limit = self.snapshot.bytes;
        let read_hash = match &self.source {
            Source::File { path, file } => {
                let mut reader = HashingReader::new(pi_retrospect_read::ReadAt::new(file, 0));
                for_each_line(&mut reader, limit, self.max_line_bytes, |line| {
                    builder.push_line(line)
                })
                .map_err(|source| TranscriptError::Read {
                    path: path.clone(),
                    source,
                })?;
                Some(reader.hash())
            }
            Source::Memory(bytes) => {
                // Reading from a slice cannot fail.
                let _ = for_each_line(bytes.as_slice(), limit, self.max_line_bytes, |line| {
                    builder.push_line(line)
                });
                None
            }
        };
        for change in changes {
            builder
                .warnings
                .push(change.line_no, change.kind, || change.message);
        }
        // The tree's warnings come last, as in the first pass; the tree itself is dropped.
        drop(close(builder));
        if read_hash != self.read_hash {
            visit(&TranscriptWarning::new(
                None,
                WarningKind::ChangedWhileRead,
                "the file changed between the read that made the entries and the second read that lists every warning; the warnings may not match the entries",
            ));
        }
        Ok(())
    }

    /// Returns a [`WarningKind::ChangedWhileRead`] warning when the file was rewritten in
    /// place since it was read, or `None` when the bytes read are still what it holds (it may
    /// have grown). Content is re-read from the file as views ask for it, so a front end calls
    /// this after its last output to say when that content may mix two versions. Costs one
    /// `fstat` when the file did not change, and one read of the snapshot when it did.
    pub fn check_unchanged(&self) -> Result<Option<TranscriptWarning>, TranscriptError> {
        let (Source::File { path, file }, Some(state_after), Some(read_hash)) =
            (&self.source, self.state_after, self.read_hash)
        else {
            return Ok(None);
        };
        let is_unchanged = is_unchanged_since(file, state_after, self.snapshot.bytes, read_hash)
            .map_err(|source| TranscriptError::Read {
                path: path.clone(),
                source,
            })?;
        Ok((!is_unchanged).then(|| {
            TranscriptWarning::new(
                None,
                WarningKind::ChangedWhileRead,
                "the file was rewritten in place after it was read, while its content was shown; the content shown may mix two versions of it",
            )
        }))
    }

    /// Returns the exact number of warnings of each kind, the ones not kept included.
    pub fn warning_counts(&self) -> &WarningCounts {
        &self.warning_counts
    }

    /// Returns how much of the file was parsed.
    pub fn snapshot(&self) -> Snapshot {
        self.snapshot
    }

    /// Returns the elementary steps the tree build took (entries visited, id-table probes,
    /// missing parents explained): linear in the number of entries, which tests check on
    /// generated worst cases.
    pub fn n_build_steps(&self) -> u64 {
        self.tree.n_build_steps()
    }

    /// Returns the resolved parent of `idx` in the repaired tree.
    pub fn parent(&self, idx: usize) -> Option<usize> {
        self.tree.parent(idx)
    }

    /// Returns the children of `idx` in file order.
    pub fn children(&self, idx: usize) -> &[usize] {
        self.tree.children(idx)
    }

    /// Returns the roots in file order: entries with no parent, a missing one, or a cut cycle.
    pub fn roots(&self) -> &[usize] {
        self.tree.roots()
    }

    /// Returns the leaf: the last entry appended, as Pi picks it on open.
    pub fn leaf(&self) -> Option<usize> {
        self.store.len().checked_sub(1)
    }

    /// Returns the entry with stored id `id` (the later entry for duplicates); `None` in a
    /// version 1 file, where stored ids are not handles.
    pub(crate) fn find_id(&self, id: &str) -> Option<usize> {
        if self.is_linear {
            return None;
        }
        self.tree.find_id(&self.store, id)
    }

    /// Returns the entry a handle names: an id (the later entry for duplicates) or `line:N`.
    pub fn find(&self, handle: &str) -> Option<usize> {
        if let Some(idx) = self.find_id(handle) {
            return Some(idx);
        }
        let line_no: u64 = handle.strip_prefix("line:")?.parse().ok()?;
        let idx = partition_point(self.store.len(), |idx| self.store.line_no(idx) < line_no);
        (idx < self.store.len() && self.store.line_no(idx) == line_no).then_some(idx)
    }

    /// Returns the path from a root down to `idx`, root first. The path is measured first and
    /// filled from its end, so it is allocated once at its size (a long chain grown by
    /// doubling and reversed held up to three times as much for a moment).
    pub fn path_to(&self, idx: usize) -> Vec<usize> {
        let mut path = vec![idx; self.depth_of(idx) + 1];
        let mut current = idx;
        for slot in path.iter_mut().rev() {
            *slot = current;
            current = self.parent(current).unwrap_or(current);
        }
        path
    }

    /// Returns how many ancestors `idx` has (0 for a root).
    fn depth_of(&self, idx: usize) -> usize {
        let mut depth = 0;
        let mut current = idx;
        while let Some(parent) = self.parent(current) {
            depth += 1;
            current = parent;
        }
        depth
    }

    /// Returns the active branch: the path from a root down to the leaf, root first.
    pub fn active_branch(&self) -> Vec<usize> {
        self.leaf()
            .map(|leaf| self.path_to(leaf))
            .unwrap_or_default()
    }

    /// Returns the number of entries on the active branch, without listing them.
    pub fn active_branch_len(&self) -> usize {
        self.leaf().map_or(0, |leaf| self.depth_of(leaf) + 1)
    }

    /// Returns the entry a compaction keeps from, resolved on the compaction's own branch.
    pub fn first_kept_of(&self, compaction: usize) -> Option<usize> {
        let EntryKind::Compaction {
            first_kept_entry_id,
            first_kept_entry_index,
            ..
        } = self.entry(compaction).kind
        else {
            return None;
        };
        if let Some(id) = first_kept_entry_id {
            return self.find_id(id);
        }
        // Version 1: an index into the file's parsed records, where record 0 is the header.
        let index = usize::try_from(first_kept_entry_index?).ok()?;
        let offset = usize::from(self.header.is_some());
        index
            .checked_sub(offset)
            .filter(|&idx| idx < self.store.len())
    }

    /// Returns the raw bytes of the line holding entry `idx` (without its line ending).
    pub fn line_bytes(&self, idx: usize) -> Result<Cow<'_, [u8]>, TranscriptError> {
        let entry = self.entry(idx);
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

/// Returns the first index in `0..len` for which `is_before` is false, `is_before` being true
/// for a prefix of the range.
fn partition_point(len: usize, is_before: impl Fn(usize) -> bool) -> usize {
    let (mut low, mut high) = (0, len);
    while low < high {
        let middle = low + (high - low) / 2;
        if is_before(middle) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    low
}

/// Reads exactly `buffer.len()` bytes at `offset`, or says that the file shrank.
fn read_exact_at(file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    let n_read = pi_retrospect_read::read_full_at(file, buffer, offset)?;
    if n_read < buffer.len() {
        return Err(shrank(
            std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
            offset,
        ));
    }
    Ok(())
}

/// Says what a short read of an entry the file held when it was opened means: the file
/// shrank (was truncated or rewritten shorter) while it was read.
fn shrank(error: std::io::Error, offset: u64) -> std::io::Error {
    if error.kind() == std::io::ErrorKind::UnexpectedEof {
        std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!(
                "the file shrank while it was read: the line at byte {offset} is no longer there"
            ),
        )
    } else {
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

    /// A line the file held when it was opened and no longer holds (the file was truncated
    /// meanwhile) is an error that says the file shrank, not a bare short read.
    #[test]
    fn a_line_gone_since_the_open_says_the_file_shrank() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, file_of(3)).expect("write");
        let session = Transcript::open(&path).expect("opens");
        File::options()
            .write(true)
            .open(&path)
            .and_then(|file| file.set_len(u64::try_from(HEADER.len()).expect("fits") + 1))
            .expect("truncate");
        let error = session
            .line_bytes(session.entries().len() - 1)
            .expect_err("the line is gone");
        let reason = std::error::Error::source(&error).map(ToString::to_string);
        assert!(
            reason
                .as_deref()
                .is_some_and(|reason| reason.contains("the file shrank while it was read")),
            "{error}: {reason:?}"
        );
    }

    fn file_of(n_entries: usize) -> String {
        let mut text = format!("{HEADER}\n");
        let mut parent = "null".to_owned();
        for idx in 0..n_entries {
            text.push_str(&format!(
                "{{\"type\":\"message\",\"id\":\"e{idx}\",\"parentId\":{parent},\"message\":{{\"role\":\"user\",\"content\":\"q\"}}}}\n"
            ));
            parent = format!("\"e{idx}\"");
        }
        text
    }

    /// Returns a session of `n_entries` entries of 1.5 MiB each, so that it is read in several
    /// chunks and a rewrite between lines lands between reads.
    fn big_file_of(n_entries: usize) -> String {
        let padding = "p".repeat(1536 * 1024);
        file_of(n_entries).replace("\"q\"", &format!("\"q{padding}\""))
    }

    /// A rewrite of the file, run after the line it names has been taken in.
    type Rewrite<'a> = (u64, &'a dyn Fn(&Path));

    /// Opens `original`, running each of `rewrites` on the path after the line it names has
    /// been taken in, and checks the warnings about a change against `expected`.
    ///
    /// The file's mtime is set an hour back before it is opened, so a write during the read
    /// changes it whatever the file system's timestamp granularity.
    fn check(original: &str, rewrites: &[Rewrite<'_>], expected: Option<&str>) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, original).expect("write");
        let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        File::options()
            .write(true)
            .open(&path)
            .and_then(|file| file.set_modified(an_hour_ago))
            .expect("set mtime");
        let session = Transcript::open_observed(&path, &ReadLimits::default(), |line_no| {
            for (after_line, rewrite) in rewrites {
                if line_no == *after_line {
                    rewrite(&path);
                }
            }
        })
        .expect("open");
        let changes: Vec<&str> = session
            .warnings()
            .iter()
            .filter(|warning| warning.kind == WarningKind::ChangedWhileRead)
            .map(|warning| warning.message.as_str())
            .collect();
        match expected {
            None => assert_eq!(changes, Vec::<&str>::new()),
            Some(expected) => {
                assert_eq!(changes.len(), 1, "{changes:?}");
                assert!(changes[0].contains(expected), "{}", changes[0]);
            }
        }
    }

    /// A file rewritten in place while it is read (shrunk, or any of its bytes read
    /// changed) is reported; one that only grew (Pi appending) is not.
    #[test]
    fn a_file_rewritten_while_read_is_reported() {
        let original = big_file_of(3);
        let append = format!("{original}x\n");
        let shorter = big_file_of(1);
        // Same size, different bytes, and not in the first line: beyond any prefix a small
        // hash would cover once the file is large, and here after the bytes already read.
        let same_size = original.replacen("\"q", "\"Q", 3);
        assert_eq!(same_size.len(), original.len());
        let write = |text: &str| {
            let text = text.to_owned();
            move |path: &Path| {
                // In place: the same inode, truncated and written again (as `cat > f` does).
                let mut file = File::options()
                    .write(true)
                    .truncate(true)
                    .open(path)
                    .expect("open");
                std::io::Write::write_all(&mut file, text.as_bytes()).expect("write");
            }
        };
        let (to_append, to_shorter) = (write(&append), write(&shorter));
        let (to_same_size, back_to_original) = (write(&same_size), write(&original));
        let truncate = |path: &Path| {
            let file = File::options().write(true).open(path).expect("open");
            file.set_len(10).expect("truncate");
        };
        check(&original, &[], None);
        check(&original, &[(2, &to_append)], None);
        check(
            &original,
            &[(2, &to_shorter)],
            Some(&format!("shrank from {} to", original.len())),
        );
        check(&original, &[(2, &to_same_size)], Some("rewritten in place"));
        check(&original, &[(2, &truncate)], Some("to 10 bytes"));
        // A→B→A, the file back as it was when the read ends, first bytes and size
        // included, yet the lines read between mix both versions.
        check(
            &original,
            &[(2, &to_same_size), (3, &back_to_original)],
            Some("rewritten in place"),
        );
        // Rewritten to the very bytes it held: nothing read can mix two versions.
        check(&original, &[(2, &back_to_original)], None);
        // Appended to twice, while and after reading: still one version.
        let twice = format!("{append}y\n");
        let to_twice = write(&twice);
        check(&original, &[(2, &to_append), (4, &to_twice)], None);
    }

    /// A file replaced by a rename while it is read is read whole from the inode that was
    /// opened: one version, no warning.
    #[test]
    fn a_file_replaced_by_rename_is_read_whole() {
        let original = file_of(3);
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, &original).expect("write");
        let session = Transcript::open_observed(&path, &ReadLimits::default(), |line_no| {
            if line_no == 2 {
                let other = dir.path().join("other.jsonl");
                std::fs::write(&other, file_of(1)).expect("write");
                std::fs::rename(&other, &path).expect("rename");
            }
        })
        .expect("open");
        assert_eq!(session.entries().len(), 3);
        assert!(
            !session
                .warnings()
                .iter()
                .any(|warning| warning.kind == WarningKind::ChangedWhileRead)
        );
    }

    /// Returns every warning `for_each_warning` hands on, as (line, kind).
    fn every_warning(session: &Transcript) -> Vec<(Option<u64>, WarningKind)> {
        let mut all = Vec::new();
        session
            .for_each_warning(|warning| all.push((warning.line_no, warning.kind)))
            .expect("second read");
        all
    }

    /// Returns a file of 1,000 malformed lines and 30 entries with a missing parent.
    fn damaged_file() -> String {
        let mut text = format!("{HEADER}\n");
        for idx in 0..1000 {
            text.push_str(&format!("{{\"bad\" {idx}\n"));
        }
        for idx in 0..30 {
            text.push_str(&format!(
                "{{\"type\":\"label\",\"id\":\"l{idx}\",\"parentId\":\"gone\"}}\n"
            ));
        }
        text
    }

    /// Every warning is listed on demand, in the order the kept ones
    /// are, by a second read; the kept list stays at twenty of each kind.
    #[test]
    fn every_warning_is_listed_by_a_second_read() {
        let text = damaged_file();
        let from_memory = Transcript::from_bytes(text.clone().into_bytes());
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, &text).expect("write");
        let from_file = Transcript::open(&path).expect("open");
        for session in [&from_memory, &from_file] {
            assert_eq!(session.warnings().len(), 20 + 20 + 2);
            let all = every_warning(session);
            let n_of = |kind| all.iter().filter(|(_, found)| *found == kind).count();
            assert_eq!(n_of(WarningKind::MalformedLine), 1000);
            assert_eq!(n_of(WarningKind::MissingParent), 30);
            assert_eq!(all.len(), 1030);
            let kept: Vec<(Option<u64>, WarningKind)> = session
                .warnings()
                .iter()
                .filter(|warning| warning.kind != WarningKind::Omitted)
                .map(|warning| (warning.line_no, warning.kind))
                .collect();
            let first_of_each: Vec<(Option<u64>, WarningKind)> = all
                .iter()
                .filter(|(line_no, kind)| kept.contains(&(*line_no, *kind)))
                .copied()
                .collect();
            assert_eq!(first_of_each, kept);
            assert_eq!(all[0], (Some(2), WarningKind::MalformedLine));
            assert_eq!(all[1000], (Some(1002), WarningKind::MissingParent));
        }
        // A file with no more than twenty of any kind is listed from what was kept.
        let small = Transcript::from_bytes(file_of(2).into_bytes());
        assert_eq!(every_warning(&small).len(), small.warnings().len());
    }

    /// A file rewritten between the first read and the second says so at the end of
    /// the list.
    #[test]
    fn a_change_before_the_second_read_is_reported() {
        let text = damaged_file();
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, &text).expect("write");
        let session = Transcript::open(&path).expect("open");
        std::fs::write(&path, text.replacen("bad", "BAD", 1)).expect("rewrite");
        let all = every_warning(&session);
        assert_eq!(all.len(), 1031);
        assert_eq!(all[1030], (None, WarningKind::ChangedWhileRead));
    }

    /// Content is re-read as it is shown, so a rewrite in place after
    /// the parse is reported by `check_unchanged`, and also ends the full warning list; an
    /// append is not.
    #[test]
    fn a_rewrite_after_the_read_is_reported_at_the_end() {
        let original = file_of(3);
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        let check = |rewrite: &dyn Fn(&Path), is_reported: bool| {
            std::fs::write(&path, &original).expect("write");
            File::options()
                .write(true)
                .open(&path)
                .and_then(|file| file.set_modified(an_hour_ago))
                .expect("set mtime");
            let session = Transcript::open(&path).expect("open");
            assert!(session.check_unchanged().expect("check").is_none());
            rewrite(&path);
            let change = session.check_unchanged().expect("check");
            assert_eq!(change.is_some(), is_reported, "{change:?}");
            let last = every_warning(&session).pop();
            assert_eq!(
                last.is_some_and(|(_, kind)| kind == WarningKind::ChangedWhileRead),
                is_reported
            );
        };
        let in_place = |text: String| {
            move |path: &Path| {
                let mut file = File::options().write(true).open(path).expect("open");
                std::io::Write::write_all(&mut file, text.as_bytes()).expect("write");
            }
        };
        check(&|_| {}, false);
        check(&in_place(format!("{original}x\n")), false);
        check(&in_place(original.replacen("\"q\"", "\"Q\"", 1)), true);
        check(
            &|path: &Path| {
                let file = File::options().write(true).open(path).expect("open");
                file.set_len(10).expect("truncate");
            },
            true,
        );
    }
}
