//! Splits a byte stream into physical lines without holding more than one capped line: the
//! one line reader every reader of session bodies uses (the transcript parser, the list's
//! name read, search, stats and failures), so the rules below exist once.
//!
//! Lines end at `\n` only: U+2028 and U+2029 are ordinary characters inside JSON strings, and
//! splitting on them (as some JavaScript line readers do) would corrupt entries.
//!
//! The cap rule: a line of at most `max_line_bytes` bytes (without its newline) is handed
//! over whole; a longer one (a crash's zero-filled tail, a sparse file, a pasted binary) is
//! never held: its bytes are skipped up to the next newline and the caller is told where it
//! started, how long it is and its first [`OVER_LONG_HEAD_BYTES`] bytes. Memory stays at most
//! the cap plus one byte whatever the file holds.
//!
//! [`RegionReader`] hands over regions of many whole lines at once, for callers that search a
//! region with one vectorised pass instead of line by line (search, stats); [`for_each_line`]
//! splits those regions into [`RawLine`]s.

use std::cell::Cell;
use std::io::{self, Read};
use std::ops::ControlFlow;

/// The default longest line held in memory: 64 MiB. Pi writes one entry per line, and the
/// largest real entries (a big tool output, an image) stay well below this.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// How many bytes from the start of an over-long line are kept for the caller: enough for
/// the `type`, `id` and `parentId` Pi writes first.
pub const OVER_LONG_HEAD_BYTES: usize = 4096;

/// The size of one read of [`for_each_line`]; lines longer than this grow the buffer up to
/// the cap.
const LINE_CHUNK_BYTES: usize = 1 << 20;

/// Whole lines of a stream, read in one piece.
#[derive(Debug, Clone, Copy)]
pub struct Region<'a> {
    /// The lines, each with its `\n`, except that the last line of a final region may have
    /// none. No line in it is longer than the cap.
    pub bytes: &'a [u8],
    /// Offset of the region's first byte in the stream.
    pub offset: u64,
    /// Whether this region ends the stream (its last line may lack a newline). A stream whose
    /// end was not known in advance (read to `u64::MAX`) may also end after a region that is
    /// not final.
    pub is_final: bool,
}

/// A line longer than the cap, skipped without being held.
#[derive(Debug, Clone, Copy)]
pub struct OverLong<'a> {
    /// Offset of the line's first byte in the stream.
    pub offset: u64,
    /// The line's length in bytes, without its newline.
    pub n_bytes: u64,
    /// The line's first bytes (at most [`OVER_LONG_HEAD_BYTES`]).
    pub head: &'a [u8],
    /// Whether a `\n` terminated the line.
    pub has_newline: bool,
}

/// What a [`RegionReader`] hands over, in stream order.
#[derive(Debug, Clone, Copy)]
pub enum Piece<'a> {
    /// Whole lines within the cap.
    Lines(Region<'a>),
    /// One line over the cap.
    OverLong(OverLong<'a>),
}

/// Why a stream could not be read to its end, and how far it was read.
#[derive(Debug)]
pub struct ReadError {
    /// The error of the read that failed.
    pub error: io::Error,
    /// Bytes read before it.
    pub n_read: u64,
}

impl From<ReadError> for io::Error {
    fn from(error: ReadError) -> io::Error {
        error.error
    }
}

/// The line reader: how long a line may be, and how much is read at a time.
#[derive(Debug, Clone, Copy)]
pub struct RegionReader {
    /// The longest line held (at least 1).
    pub max_line_bytes: usize,
    /// The size of one read, and so of most regions; a line longer than this grows the buffer
    /// up to the cap.
    pub chunk_bytes: usize,
}

impl RegionReader {
    /// Returns the reader holding lines of at most `max_line_bytes`, reading `chunk_bytes`
    /// at a time.
    pub fn new(max_line_bytes: usize, chunk_bytes: usize) -> RegionReader {
        RegionReader {
            max_line_bytes: max_line_bytes.max(1),
            chunk_bytes: chunk_bytes.max(1),
        }
    }

    /// Calls `visit` with the lines among the first `limit` bytes of `reader`, as regions of
    /// whole lines and over-long lines in stream order, until the stream ends or `visit`
    /// breaks. `buffer` is scratch space, reused from stream to stream: it only grows (up to
    /// the cap plus one byte), so its caller decides when to give memory back.
    ///
    /// A stream that starts with bytes already read (a file's head, read with its header) is
    /// `head.chain(rest)`.
    ///
    /// Returns the number of bytes read, which is below `limit` only when the stream ended
    /// early or `visit` stopped it.
    pub fn read<R: Read>(
        &self,
        mut reader: R,
        limit: u64,
        buffer: &mut Vec<u8>,
        mut visit: impl FnMut(Piece<'_>) -> ControlFlow<()>,
    ) -> Result<u64, ReadError> {
        let cap = self.max_line_bytes.max(1);
        // The window of `buffer` in use: never longer than the cap plus one, so that every
        // whole line in it fits the cap. A small stream gets a small window; bytes left in
        // `buffer` from an earlier stream are never read (only `buffer[..filled]` is), so only
        // a growth past its length is zeroed.
        let mut size = self
            .chunk_bytes
            .min(usize::try_from(limit).unwrap_or(usize::MAX))
            .min(cap.saturating_add(1))
            .max(1);
        if buffer.len() < size {
            buffer.resize(size, 0);
        }
        let mut filled = 0usize;
        // buffer[..searched] is known to hold no newline (the tail carried over).
        let mut searched = 0usize;
        // Offset in the stream of buffer[0].
        let mut base_offset = 0u64;
        let mut n_read_total = 0u64;
        let mut remaining = limit;
        // While skipping an over-long line: its start, the bytes dropped so far, its head.
        let mut skipping: Option<(u64, u64, Vec<u8>)> = None;
        loop {
            if filled == size {
                if size > cap {
                    // One line fills the window and is over the cap: drop what is held and skip
                    // on to its newline, remembering only where it started, its length and head.
                    let skip = skipping.get_or_insert_with(|| {
                        (
                            base_offset,
                            0,
                            buffer[..filled.min(OVER_LONG_HEAD_BYTES)].to_vec(),
                        )
                    });
                    skip.1 += filled as u64;
                    base_offset += filled as u64;
                    filled = 0;
                    searched = 0;
                } else {
                    // One line fills the whole window: grow it, never past the cap plus one.
                    size = (size * 2).min(cap.saturating_add(1));
                    if buffer.len() < size {
                        buffer.resize(size, 0);
                    }
                }
            }
            let room = size - filled;
            let want = usize::try_from(remaining).map_or(room, |remaining| remaining.min(room));
            if want == 0 {
                break;
            }
            // A stop asked for by another thread ends the read here (see `stop`).
            let read =
                crate::stop::check().and_then(|()| reader.read(&mut buffer[filled..filled + want]));
            let n_read = match read {
                Ok(0) => break,
                Ok(n_read) => n_read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    return Err(ReadError {
                        error,
                        n_read: n_read_total,
                    });
                }
            };
            let new_start = filled;
            filled += n_read;
            remaining -= n_read as u64;
            n_read_total += n_read as u64;
            if let Some((start, dropped, head)) = &skipping {
                // Everything held belongs to the skipped line until its newline.
                let Some(at) = memchr::memchr(b'\n', &buffer[new_start..filled]) else {
                    if remaining == 0 {
                        break;
                    }
                    continue;
                };
                let end = new_start + at;
                let piece = Piece::OverLong(OverLong {
                    offset: *start,
                    n_bytes: dropped + end as u64,
                    head,
                    has_newline: true,
                });
                if visit(piece).is_break() {
                    return Ok(n_read_total);
                }
                skipping = None;
                buffer.copy_within(end + 1..filled, 0);
                filled -= end + 1;
                base_offset += end as u64 + 1;
                searched = 0;
            }
            if remaining == 0 {
                // Everything up to the limit is here: the final region follows the loop.
                break;
            }
            if filled < size {
                // A short read (the end of a head read before the file, or of a pipe): fill
                // the window first, so that regions stay large whatever the reads return.
                continue;
            }
            // Only the bytes read since the last region can hold the last newline.
            let Some(last_newline) = memchr::memrchr(b'\n', &buffer[searched..filled]) else {
                searched = filled;
                continue;
            };
            let region_end = searched + last_newline + 1;
            let region = Region {
                bytes: &buffer[..region_end],
                offset: base_offset,
                is_final: false,
            };
            if visit(Piece::Lines(region)).is_break() {
                return Ok(n_read_total);
            }
            buffer.copy_within(region_end..filled, 0);
            filled -= region_end;
            searched = filled;
            base_offset += region_end as u64;
        }
        if let Some((start, dropped, head)) = skipping {
            let _ = visit(Piece::OverLong(OverLong {
                offset: start,
                n_bytes: dropped + filled as u64,
                head: &head,
                has_newline: false,
            }));
            return Ok(n_read_total);
        }
        if filled == 0 {
            return Ok(n_read_total);
        }
        // The final line has no newline and may be one byte over the cap.
        let tail_start = memchr::memrchr(b'\n', &buffer[..filled]).map_or(0, |idx| idx + 1);
        if filled - tail_start > cap {
            if tail_start > 0 {
                let region = Region {
                    bytes: &buffer[..tail_start],
                    offset: base_offset,
                    is_final: false,
                };
                if visit(Piece::Lines(region)).is_break() {
                    return Ok(n_read_total);
                }
            }
            let tail = &buffer[tail_start..filled];
            let _ = visit(Piece::OverLong(OverLong {
                offset: base_offset + tail_start as u64,
                n_bytes: tail.len() as u64,
                head: &tail[..tail.len().min(OVER_LONG_HEAD_BYTES)],
                has_newline: false,
            }));
        } else {
            let _ = visit(Piece::Lines(Region {
                bytes: &buffer[..filled],
                offset: base_offset,
                is_final: true,
            }));
        }
        Ok(n_read_total)
    }
}

/// One physical line as handed to the visitor of [`for_each_line`].
#[derive(Debug, Clone, Copy)]
pub struct RawLine<'a> {
    /// 1-based physical line number.
    pub line_no: u64,
    /// Byte offset of the line's first byte in the stream.
    pub offset: u64,
    /// The line's bytes without the terminating `\n` (a `\r` before it is kept); empty when
    /// the line was over long (see [`RawLine::over_long`]).
    pub bytes: &'a [u8],
    /// Whether a `\n` terminated the line.
    pub has_newline: bool,
    /// The line's whole length in bytes (without its newline) when it was longer than the
    /// cap and therefore skipped; `None` for an ordinary line.
    pub over_long: Option<u64>,
}

/// Calls `visit` for every line among the first `limit` bytes of `reader`, holding at most
/// `max_line_bytes` of any one line (longer lines are reported with [`RawLine::over_long`]).
///
/// Returns the number of bytes read, which is below `limit` only when the stream ended early.
pub fn for_each_line<R: Read>(
    reader: R,
    limit: u64,
    max_line_bytes: usize,
    mut visit: impl FnMut(RawLine<'_>),
) -> io::Result<u64> {
    // A visitor that reads another file on this thread finds the cell empty and gets a
    // buffer of its own; whichever is put back last is kept.
    let mut buffer = READ_BUFFER.with(Cell::take);
    let mut line_no = 0u64;
    let result = RegionReader::new(max_line_bytes, LINE_CHUNK_BYTES).read(
        reader,
        limit,
        &mut buffer,
        |piece| {
            match piece {
                Piece::Lines(region) => {
                    let mut start = 0usize;
                    let bytes = region.bytes;
                    for end in memchr::memchr_iter(b'\n', bytes) {
                        line_no += 1;
                        visit(RawLine {
                            line_no,
                            offset: region.offset + start as u64,
                            bytes: &bytes[start..end],
                            has_newline: true,
                            over_long: None,
                        });
                        start = end + 1;
                    }
                    if start < bytes.len() {
                        line_no += 1;
                        visit(RawLine {
                            line_no,
                            offset: region.offset + start as u64,
                            bytes: &bytes[start..],
                            has_newline: false,
                            over_long: None,
                        });
                    }
                }
                Piece::OverLong(line) => {
                    line_no += 1;
                    visit(RawLine {
                        line_no,
                        offset: line.offset,
                        bytes: &[],
                        has_newline: line.has_newline,
                        over_long: Some(line.n_bytes),
                    });
                }
            }
            ControlFlow::Continue(())
        },
    );
    if buffer.len() <= MAX_KEPT_BUFFER {
        READ_BUFFER.with(|cell| cell.set(buffer));
    }
    result.map_err(io::Error::from)
}

thread_local! {
    /// The read buffer of [`for_each_line`], one per thread and reused from stream to stream:
    /// a fresh zeroed buffer for every file costs about as much as reading a small file.
    static READ_BUFFER: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// The largest read buffer kept for the next stream (one grown for a long line is dropped).
const MAX_KEPT_BUFFER: usize = 4 * LINE_CHUNK_BYTES;

/// Counts the lines of regions as far as a line number is asked for: a file whose lines
/// never need numbering (no warning, no hit) costs no count at all.
#[derive(Debug, Clone, Copy, Default)]
pub struct LineCounter {
    /// Lines before the region being counted.
    pub lines_before: u64,
    n_newlines: u64,
    counted_to: usize,
}

impl LineCounter {
    /// Returns the counter of a region that follows `lines_before` lines.
    #[inline]
    pub fn new(lines_before: u64) -> LineCounter {
        LineCounter {
            lines_before,
            n_newlines: 0,
            counted_to: 0,
        }
    }

    /// Returns the 1-based number of the line starting at `region[line_start]`; calls come
    /// with ascending `line_start` for one region.
    #[inline]
    pub fn line_no(&mut self, region: &[u8], line_start: usize) -> u64 {
        self.n_newlines +=
            memchr::memchr_iter(b'\n', &region[self.counted_to..line_start]).count() as u64;
        self.counted_to = line_start;
        self.lines_before + self.n_newlines + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &[u8], limit: u64, expected: &[(u64, u64, &str, bool)]) {
        let mut actual = Vec::new();
        for_each_line(input, limit, DEFAULT_MAX_LINE_BYTES, |line| {
            actual.push((
                line.line_no,
                line.offset,
                String::from_utf8_lossy(line.bytes).into_owned(),
                line.has_newline,
            ));
        })
        .expect("reading a slice cannot fail");
        let expected: Vec<_> = expected
            .iter()
            .map(|(no, offset, text, newline)| (*no, *offset, text.to_string(), *newline))
            .collect();
        assert_eq!(actual, expected, "input {input:?} limit {limit}");
    }

    #[test]
    fn splits_on_newline_only() {
        check(b"", 100, &[]);
        check(b"a\n", 100, &[(1, 0, "a", true)]);
        check(b"a\nbc", 100, &[(1, 0, "a", true), (2, 2, "bc", false)]);
        check(
            b"a\r\n\nb\n",
            100,
            &[(1, 0, "a\r", true), (2, 3, "", true), (3, 4, "b", true)],
        );
        check(
            "x\u{2028}y\n".as_bytes(),
            100,
            &[(1, 0, "x\u{2028}y", true)],
        );
    }

    #[test]
    fn stops_at_the_limit() {
        check(b"a\nbc\nd\n", 4, &[(1, 0, "a", true), (2, 2, "bc", false)]);
        check(b"a\nbc\nd\n", 5, &[(1, 0, "a", true), (2, 2, "bc", true)]);
        check(b"a\nbc\nd\n", 0, &[]);
    }

    #[test]
    fn handles_lines_longer_than_a_chunk() {
        let long = "x".repeat(LINE_CHUNK_BYTES * 3 + 17);
        let input = format!("{long}\nshort\n");
        let mut lengths = Vec::new();
        for_each_line(input.as_bytes(), u64::MAX, DEFAULT_MAX_LINE_BYTES, |line| {
            lengths.push(line.bytes.len())
        })
        .expect("slice");
        assert_eq!(lengths, vec![long.len(), 5]);
    }

    /// A line longer than the cap is skipped, reported with its length, and never held; the
    /// lines around it are intact, wherever the chunk boundaries fall.
    #[test]
    fn over_long_lines_are_skipped_and_measured() {
        for cap in [1usize, 3, 5, 8, 4096] {
            for long_len in [cap + 1, cap * 2 + 3, LINE_CHUNK_BYTES + 5] {
                let long = "z".repeat(long_len);
                for tail in ["", "\n"] {
                    let input = format!("ab\n{long}\nc{tail}");
                    let mut seen = Vec::new();
                    let mut max_held = 0;
                    for_each_line(input.as_bytes(), u64::MAX, cap, |line| {
                        max_held = max_held.max(line.bytes.len());
                        seen.push((
                            line.line_no,
                            line.offset,
                            line.bytes.to_vec(),
                            line.over_long,
                        ));
                    })
                    .expect("slice");
                    assert!(max_held <= cap, "cap {cap} held {max_held}");
                    let short = |text: &str| {
                        if text.len() > cap {
                            (Vec::new(), Some(text.len() as u64))
                        } else {
                            (text.as_bytes().to_vec(), None)
                        }
                    };
                    let (ab, ab_long) = short("ab");
                    let (c, c_long) = short("c");
                    assert_eq!(
                        seen,
                        vec![
                            (1, 0, ab, ab_long),
                            (2, 3, Vec::new(), Some(long_len as u64)),
                            (3, 4 + long_len as u64, c, c_long),
                        ],
                        "cap {cap} long {long_len} tail {tail:?}"
                    );
                }
            }
        }
    }

    /// A run of NUL bytes with no newline (a crash's zero-filled tail) is one over-long line,
    /// read in bounded memory.
    #[test]
    fn a_nul_tail_is_one_over_long_line() {
        let mut input = b"{}\n".to_vec();
        input.extend(std::iter::repeat_n(0u8, 3 * LINE_CHUNK_BYTES + 1));
        let mut seen = Vec::new();
        let n_read = for_each_line(input.as_slice(), u64::MAX, 1024, |line| {
            seen.push((
                line.line_no,
                line.bytes.len(),
                line.over_long,
                line.has_newline,
            ));
        })
        .expect("slice");
        assert_eq!(n_read, input.len() as u64);
        assert_eq!(
            seen,
            vec![
                (1, 2, None, true),
                (2, 0, Some(3 * LINE_CHUNK_BYTES as u64 + 1), false)
            ]
        );
    }

    /// What the region reader hands over, flattened: `(offset, text, is_final)` for a region,
    /// `(offset, "!<length>:<head>", has_newline)` for an over-long line.
    fn pieces(input: &[u8], cap: usize, chunk: usize) -> Vec<(u64, String, bool)> {
        let mut seen = Vec::new();
        let mut buffer = Vec::new();
        let n_read = RegionReader::new(cap, chunk)
            .read(input, input.len() as u64, &mut buffer, |piece| {
                seen.push(match piece {
                    Piece::Lines(region) => (
                        region.offset,
                        String::from_utf8_lossy(region.bytes).into_owned(),
                        region.is_final,
                    ),
                    Piece::OverLong(line) => (
                        line.offset,
                        format!("!{}:{}", line.n_bytes, String::from_utf8_lossy(line.head)),
                        line.has_newline,
                    ),
                });
                ControlFlow::Continue(())
            })
            .expect("slice");
        assert_eq!(n_read, input.len() as u64);
        assert!(buffer.len() <= cap + 1, "cap {cap} buffer {}", buffer.len());
        seen
    }

    #[test]
    fn regions_hold_whole_lines_and_over_long_lines_come_apart() {
        assert_eq!(
            pieces(b"ab\ncd\nef", 8, 4),
            vec![
                (0, "ab\n".to_owned(), false),
                (3, "cd\n".to_owned(), false),
                (6, "ef".to_owned(), true),
            ]
        );
        assert_eq!(
            pieces(b"ab\ncd\n", 8, 64),
            vec![(0, "ab\ncd\n".to_owned(), true)]
        );
        assert_eq!(
            pieces(b"a\nlonglong\nb\n", 3, 4),
            vec![
                (0, "a\n".to_owned(), false),
                (2, "!8:long".to_owned(), true),
                (11, "b\n".to_owned(), true),
            ]
        );
        assert_eq!(
            pieces(b"a\nlonger", 3, 64),
            vec![
                (0, "a\n".to_owned(), false),
                (2, "!6:long".to_owned(), false)
            ]
        );
    }

    /// A reader that hands over at most `step` bytes per read, as a pipe may.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            let n_read = self.step.min(buffer.len()).min(self.bytes.len());
            buffer[..n_read].copy_from_slice(&self.bytes[..n_read]);
            self.bytes = &self.bytes[n_read..];
            Ok(n_read)
        }
    }

    /// The region reader and a plain split agree on every line, whatever the cap, the chunk
    /// and the size of each read.
    #[test]
    fn regions_agree_with_a_plain_split() {
        use proptest::prelude::*;
        proptest!(|(input in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'x'), Just(b'y')], 0..200),
                    cap in 1usize..20, chunk in 1usize..40, step in 1usize..7, is_length_known in proptest::bool::ANY)| {
            let mut expected = Vec::new();
            let mut offset = 0u64;
            let text = input.as_slice();
            let parts: Vec<&[u8]> = text.split(|byte| *byte == b'\n').collect();
            for (idx, part) in parts.iter().enumerate() {
                let is_last = idx + 1 == parts.len();
                if is_last && part.is_empty() {
                    break;
                }
                let held = part.len() <= cap;
                expected.push((offset, if held { part.to_vec() } else { Vec::new() }, (!held).then_some(part.len() as u64), !is_last));
                offset += part.len() as u64 + 1;
            }
            let mut actual = Vec::new();
            let mut buffer = vec![7u8; 5];
            let mut line_offsets = Vec::new();
            let reader = Trickle { bytes: text, step };
            let limit = if is_length_known { text.len() as u64 } else { u64::MAX };
            RegionReader::new(cap, chunk).read(reader, limit, &mut buffer, |piece| {
                match piece {
                    Piece::Lines(region) => {
                        let mut start = 0;
                        for (idx, byte) in region.bytes.iter().enumerate() {
                            if *byte == b'\n' {
                                actual.push((region.offset + start as u64, region.bytes[start..idx].to_vec(), None, true));
                                line_offsets.push(region.offset + start as u64);
                                start = idx + 1;
                            }
                        }
                        if start < region.bytes.len() {
                            assert!(region.is_final);
                            actual.push((region.offset + start as u64, region.bytes[start..].to_vec(), None, false));
                        }
                    }
                    Piece::OverLong(line) => {
                        actual.push((line.offset, Vec::new(), Some(line.n_bytes), line.has_newline));
                    }
                }
                ControlFlow::Continue(())
            }).expect("slice");
            prop_assert_eq!(actual, expected);
        });
    }
}
