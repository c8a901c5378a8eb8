//! Splits a byte stream into physical lines without holding more than one capped line.
//!
//! Lines end at `\n` only: U+2028 and U+2029 are ordinary characters inside JSON strings, and
//! splitting on them (as some JavaScript line readers do) would corrupt entries.
//!
//! A line longer than the cap (a crash's zero-filled tail, a sparse file, a pasted binary) is
//! never held: its bytes are skipped up to the next newline and the visitor is told only its
//! length, so memory stays at most the cap plus one read whatever the file holds. Every
//! reader of session bodies (the transcript parser, the list's name read, search and stats)
//! goes through [`for_each_line`], so these rules exist once.

use std::cell::Cell;
use std::io::{self, Read};

/// The default longest line held in memory: 64 MiB. Pi writes one entry per line, and the
/// largest real entries (a big tool output, an image) stay well below this.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One physical line as handed to the visitor.
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

/// Size of one read; lines longer than this grow the buffer up to the cap.
const CHUNK: usize = 1 << 20;

/// Calls `visit` for every line among the first `limit` bytes of `reader`, holding at most
/// `max_line_bytes` of any one line (longer lines are reported with [`RawLine::over_long`]).
///
/// Returns the number of bytes read, which is below `limit` only when the stream ended early.
pub fn for_each_line<R: Read>(
    reader: R,
    limit: u64,
    max_line_bytes: usize,
    visit: impl FnMut(RawLine<'_>),
) -> io::Result<u64> {
    // A visitor that reads another file on this thread finds the cell empty and gets a
    // buffer of its own; whichever is put back last is kept.
    let mut buffer = READ_BUFFER.with(Cell::take);
    let result = lines_of(reader, limit, max_line_bytes, visit, &mut buffer);
    if buffer.capacity() <= MAX_KEPT_BUFFER {
        READ_BUFFER.with(|cell| cell.set(buffer));
    }
    result
}

thread_local! {
    /// The read buffer of [`for_each_line`], one per thread and reused from stream to stream:
    /// a fresh zeroed buffer for every file costs about as much as reading a small file.
    static READ_BUFFER: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// The largest read buffer kept for the next stream (one grown for a long line is dropped).
const MAX_KEPT_BUFFER: usize = 4 * CHUNK;

fn lines_of<R: Read>(
    mut reader: R,
    limit: u64,
    max_line_bytes: usize,
    mut visit: impl FnMut(RawLine<'_>),
    buffer: &mut Vec<u8>,
) -> io::Result<u64> {
    let max_line_bytes = max_line_bytes.max(1);
    let first = CHUNK
        .min(usize::try_from(limit).unwrap_or(CHUNK))
        .min(max_line_bytes.saturating_add(1))
        .max(1);
    // Exactly `first` bytes long; bytes left from an earlier stream are never read (only
    // `buffer[..filled]` is), so only a growth is zeroed.
    buffer.truncate(first);
    buffer.resize(first, 0);
    let mut filled = 0usize;
    // Bytes of buffer[..filled] already searched for a newline.
    let mut searched = 0usize;
    let mut base_offset = 0u64;
    let mut remaining = limit;
    let mut line_no = 0u64;
    // While skipping an over-long line: its start offset and the bytes dropped so far.
    let mut skipping: Option<(u64, u64)> = None;
    loop {
        if filled == buffer.len() {
            if buffer.len() > max_line_bytes {
                // The line in the buffer is longer than the cap: drop what is held and skip
                // on to its newline, remembering only where it started and how long it is.
                let (start, dropped) = skipping.unwrap_or((base_offset, 0));
                skipping = Some((start, dropped + filled as u64));
                base_offset += filled as u64;
                filled = 0;
                searched = 0;
            } else {
                // One line fills the whole buffer: grow it, but never past the cap plus one.
                let grown = (buffer.len() * 2).min(max_line_bytes.saturating_add(1));
                buffer.resize(grown, 0);
            }
        }
        let room = buffer.len() - filled;
        let want = usize::try_from(remaining).map_or(room, |remaining| remaining.min(room));
        if want == 0 {
            break;
        }
        let n_read = match reader.read(&mut buffer[filled..filled + want]) {
            Ok(0) => break,
            Ok(n_read) => n_read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        filled += n_read;
        remaining -= n_read as u64;

        let mut start = 0usize;
        while let Some(position) = memchr::memchr(b'\n', &buffer[searched..filled]) {
            let end = searched + position;
            line_no += 1;
            match skipping.take() {
                Some((line_start, dropped)) => visit(RawLine {
                    line_no,
                    offset: line_start,
                    bytes: &[],
                    has_newline: true,
                    over_long: Some(dropped + end as u64),
                }),
                None if end - start > max_line_bytes => visit(RawLine {
                    line_no,
                    offset: base_offset + start as u64,
                    bytes: &[],
                    has_newline: true,
                    over_long: Some((end - start) as u64),
                }),
                None => visit(RawLine {
                    line_no,
                    offset: base_offset + start as u64,
                    bytes: &buffer[start..end],
                    has_newline: true,
                    over_long: None,
                }),
            }
            start = end + 1;
            searched = start;
        }
        searched = filled;
        if start > 0 {
            buffer.copy_within(start..filled, 0);
            filled -= start;
            searched -= start;
            base_offset += start as u64;
        }
    }
    if filled > 0 || skipping.is_some() {
        line_no += 1;
        let line = match skipping {
            Some((line_start, dropped)) => RawLine {
                line_no,
                offset: line_start,
                bytes: &[],
                has_newline: false,
                over_long: Some(dropped + filled as u64),
            },
            None if filled > max_line_bytes => RawLine {
                line_no,
                offset: base_offset,
                bytes: &[],
                has_newline: false,
                over_long: Some(filled as u64),
            },
            None => RawLine {
                line_no,
                offset: base_offset,
                bytes: &buffer[..filled],
                has_newline: false,
                over_long: None,
            },
        };
        visit(line);
    }
    Ok(base_offset + filled as u64)
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
        let long = "x".repeat(CHUNK * 3 + 17);
        let input = format!("{long}\nshort\n");
        let mut lengths = Vec::new();
        for_each_line(input.as_bytes(), u64::MAX, DEFAULT_MAX_LINE_BYTES, |line| {
            lengths.push(line.bytes.len())
        })
        .expect("slice");
        assert_eq!(lengths, vec![long.len(), 5]);
    }

    /// Issue 9: a line longer than the cap is skipped, reported with its length, and never
    /// held; the lines around it are intact, wherever the chunk boundaries fall.
    #[test]
    fn over_long_lines_are_skipped_and_measured() {
        for cap in [1usize, 3, 5, 8, 4096] {
            for long_len in [cap + 1, cap * 2 + 3, CHUNK + 5] {
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

    /// Issue 9: a run of NUL bytes with no newline (a crash's zero-filled tail) is one
    /// over-long line, read in bounded memory.
    #[test]
    fn a_nul_tail_is_one_over_long_line() {
        let mut input = b"{}\n".to_vec();
        input.extend(std::iter::repeat_n(0u8, 3 * CHUNK + 1));
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
                (2, 0, Some(3 * CHUNK as u64 + 1), false)
            ]
        );
    }
}
