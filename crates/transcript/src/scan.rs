//! Splits a byte stream into physical lines without holding more than the longest line.
//!
//! Lines end at `\n` only: U+2028 and U+2029 are ordinary characters inside JSON strings, and
//! splitting on them (as some JavaScript line readers do) would corrupt entries.

use std::io::{self, Read};

/// Returns one physical line as handed to the visitor.
pub(crate) struct RawLine<'a> {
    /// 1-based physical line number.
    pub line_no: u64,
    /// Byte offset of the line's first byte in the stream.
    pub offset: u64,
    /// The line's bytes without the terminating `\n` (a `\r` before it is kept).
    pub bytes: &'a [u8],
    /// Whether a `\n` terminated the line.
    pub has_newline: bool,
}

/// Size of one read; lines longer than this grow the buffer.
const CHUNK: usize = 1 << 20;

/// Calls `visit` for every line among the first `limit` bytes of `reader`.
///
/// Returns the number of bytes read, which is below `limit` only when the stream ended early.
pub(crate) fn for_each_line<R: Read>(
    mut reader: R,
    limit: u64,
    mut visit: impl FnMut(RawLine<'_>),
) -> io::Result<u64> {
    let mut buffer = vec![0u8; CHUNK.min(usize::try_from(limit).unwrap_or(CHUNK)).max(1)];
    let mut filled = 0usize;
    // Bytes of buffer[..filled] already searched for a newline.
    let mut searched = 0usize;
    let mut base_offset = 0u64;
    let mut remaining = limit;
    let mut line_no = 0u64;
    loop {
        if filled == buffer.len() {
            // One line fills the whole buffer: grow it to fit a longer line.
            buffer.resize(buffer.len() * 2, 0);
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
            visit(RawLine {
                line_no,
                offset: base_offset + start as u64,
                bytes: &buffer[start..end],
                has_newline: true,
            });
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
    if filled > 0 {
        line_no += 1;
        visit(RawLine {
            line_no,
            offset: base_offset,
            bytes: &buffer[..filled],
            has_newline: false,
        });
    }
    Ok(base_offset + filled as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &[u8], limit: u64, expected: &[(u64, u64, &str, bool)]) {
        let mut actual = Vec::new();
        for_each_line(input, limit, |line| {
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
        for_each_line(input.as_bytes(), u64::MAX, |line| {
            lengths.push(line.bytes.len())
        })
        .expect("slice");
        assert_eq!(lengths, vec![long.len(), 5]);
    }
}
