//! Reading and validating line 1 of a Pi session file.
//!
//! [`read_first_line`] reads at most [`MAX_HEADER_LINE_BYTES`] + 1 bytes from a regular file,
//! opened read-only, without following a symlink and without blocking on a FIFO or device.
//! [`parse_header`] validates the line strictly. Together they implement the contract's
//! validation table: any failure is a [`HeaderError`] whose message is the warning reason.

#![deny(missing_docs)]

use pi_retrospect_read::{describe_file_type, describe_io, open_session_file};

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use pi_retrospect_core::path::is_absolute_cwd;
use pi_retrospect_core::{HeaderFields, timestamp};
use serde_json::Value;

/// The longest accepted header line in bytes, excluding its newline.
pub const MAX_HEADER_LINE_BYTES: usize = 4096;

/// How many bytes the first read of a header asks for (see [`read_first_line`]).
const FIRST_READ_BYTES: usize = 1024;

/// Why a file did not yield a session row; `Display` is the warning reason.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HeaderError {
    /// The file could not be opened.
    #[error("could not open file: {0}")]
    Open(String),
    /// No file is at the path (it was never there, or was removed since it was listed).
    #[error("could not open file: {0}")]
    Missing(String),
    /// The path is not a regular file (a FIFO, socket, device or directory).
    #[error("not a regular file: {0}")]
    NotRegular(&'static str),
    /// Reading failed after the file was opened.
    #[error("could not read file: {0}")]
    Read(String),
    /// The file has no bytes at all.
    #[error("file is empty")]
    Empty,
    /// Line 1 is longer than the bound.
    #[error("first line is longer than {MAX_HEADER_LINE_BYTES} bytes")]
    TooLong,
    /// Line 1 is empty or only white space.
    #[error("first line is empty")]
    EmptyLine,
    /// Line 1 is not strict JSON.
    #[error("first line is not valid JSON: {0}")]
    InvalidJson(String),
    /// Line 1 is JSON but not an object.
    #[error("first line is not a JSON object")]
    NotObject,
    /// Line 1 is an object whose `type` is not `"session"`.
    #[error("first line is not a session header (type: {0})")]
    NotSessionHeader(String),
    /// `id` is missing, not a string, or empty.
    #[error("session header has no id")]
    NoId,
    /// `cwd` is missing, not a string, or empty.
    #[error("session header has no cwd")]
    NoCwd,
    /// `cwd` is a string but not an absolute path.
    #[error("session header cwd is not an absolute path: {0}")]
    RelativeCwd(String),
    /// `timestamp` is missing, not a string, or not a real instant.
    #[error("session header has no valid ISO 8601 timestamp")]
    BadTimestamp,
    /// `parentSession` is present but not a string.
    #[error("session header parentSession is not a string")]
    ParentNotString,
}

/// Reads and validates the header of the session file at `path`.
pub fn read_header(path: &Path) -> Result<HeaderFields, HeaderError> {
    let mut buffer = [0u8; MAX_HEADER_LINE_BYTES + 1];
    let line = read_first_line(path, &mut buffer)?;
    parse_header(line)
}

/// Reads and validates the header of a file that a directory listing has just reported as a
/// regular file, without asking the kernel again.
///
/// The walk already knows each entry's type from `readdir`, so the `fstat` that
/// [`read_header`] makes costs one system call per file for nothing (measured at about 6% of
/// `list`'s time on 10,000 sessions). What keeps this safe if the file is swapped for
/// something else in between is the open itself: `O_NOFOLLOW` refuses a symlink, and
/// `O_NONBLOCK` makes opening and reading a FIFO or a device return at once (a FIFO reads as
/// empty or fails), so the walk can still never block.
pub fn read_listed_header(path: &Path) -> Result<HeaderFields, HeaderError> {
    let mut buffer = [0u8; MAX_HEADER_LINE_BYTES + 1];
    let line = read_line_from(path, &mut buffer, false)?;
    parse_header(line)
}

/// Reads line 1 of the regular file at `path` into `buffer` and returns it without its newline.
///
/// At most `MAX_HEADER_LINE_BYTES + 1` bytes are read: a line that fills them without a newline
/// is [`HeaderError::TooLong`]; a line of exactly `MAX_HEADER_LINE_BYTES` bytes is accepted, and
/// so is a last line with no newline. The file is opened with `O_NOFOLLOW | O_NONBLOCK`, and
/// anything but a regular file is refused before a byte is read, so a symlink swapped in after
/// discovery is not followed and a FIFO can never block the caller. No lock is taken.
pub fn read_first_line<'a>(
    path: &Path,
    buffer: &'a mut [u8; MAX_HEADER_LINE_BYTES + 1],
) -> Result<&'a [u8], HeaderError> {
    read_line_from(path, buffer, true)
}

/// Reads and validates the header of an already opened file that a directory listing reported
/// as a regular file; the caller opened it `O_NOFOLLOW | O_NONBLOCK` (see
/// [`read_listed_header`]), typically relative to its directory's descriptor.
pub fn read_listed_header_from(file: &mut File) -> Result<HeaderFields, HeaderError> {
    let mut buffer = [0u8; MAX_HEADER_LINE_BYTES + 1];
    let line = read_line_of(file, &mut buffer)?;
    parse_header(line)
}

/// Reads and validates the header of an already opened file as [`read_listed_header_from`]
/// does, with a first read of `first_read` bytes (at least the usual one) into `head`, for a
/// caller that wants the start of the body too. Returns the fields, how many bytes from the
/// file's start `head` then holds (the header line and what followed it in those reads:
/// `head[..n]`), and whether the file ended within them, in which case they are the whole
/// file. `head` is scratch space: it only grows, so a buffer reused from file to file is
/// neither zeroed nor allocated again.
pub fn read_listed_header_into(
    file: &mut File,
    head: &mut Vec<u8>,
    first_read: usize,
) -> Result<(HeaderFields, usize, bool), HeaderError> {
    let first_read = first_read.max(FIRST_READ_BYTES);
    let mut is_end = false;
    let mut filled = 0;
    loop {
        // The first read asks for `first_read`; a header line still open after it is read on
        // to the header's bound, as `read_line_of` does.
        let want = if filled == 0 {
            first_read
        } else {
            (MAX_HEADER_LINE_BYTES + 1).saturating_sub(filled).max(1)
        };
        if head.len() < filled + want {
            head.resize(filled + want, 0);
        }
        match file.read(&mut head[filled..filled + want]) {
            Ok(0) => {
                is_end = true;
                break;
            }
            Ok(n_read) => {
                let had_newline = head[filled..filled + n_read].contains(&b'\n');
                filled += n_read;
                if n_read < want {
                    // A regular file's short read is its end (at this instant).
                    is_end = true;
                    break;
                }
                if had_newline || filled > MAX_HEADER_LINE_BYTES {
                    break;
                }
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(HeaderError::Read(describe_io(&error))),
        }
    }
    let bytes = &head[..filled];
    Ok((parse_header(line_of(bytes)?)?, filled, is_end))
}

/// Returns line 1 of `data`, the bytes read from a file's start: up to its newline (all of
/// `data` when it has none), refused when empty or longer than [`MAX_HEADER_LINE_BYTES`].
fn line_of(data: &[u8]) -> Result<&[u8], HeaderError> {
    if data.is_empty() {
        return Err(HeaderError::Empty);
    }
    match data.iter().position(|byte| *byte == b'\n') {
        Some(newline) if newline <= MAX_HEADER_LINE_BYTES => Ok(&data[..newline]),
        Some(_) => Err(HeaderError::TooLong),
        None if data.len() > MAX_HEADER_LINE_BYTES => Err(HeaderError::TooLong),
        None => Ok(data),
    }
}

fn read_line_from<'a>(
    path: &Path,
    buffer: &'a mut [u8; MAX_HEADER_LINE_BYTES + 1],
    check_regular: bool,
) -> Result<&'a [u8], HeaderError> {
    let mut file = open_session_file(path).map_err(|error| {
        // With O_NOFOLLOW, ELOOP means the last component is a symlink: said as `show` says
        // it, not as "too many levels of symbolic links".
        if error.raw_os_error() == Some(libc::ELOOP)
            && std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
        {
            return HeaderError::Open("is a symbolic link (not followed)".to_owned());
        }
        if error.kind() == std::io::ErrorKind::NotFound {
            return HeaderError::Missing(describe_io(&error));
        }
        HeaderError::Open(describe_io(&error))
    })?;
    if check_regular {
        let file_type = file
            .metadata()
            .map_err(|error| HeaderError::Read(describe_io(&error)))?
            .file_type();
        if !file_type.is_file() {
            return Err(HeaderError::NotRegular(describe_file_type(&file_type)));
        }
    }

    read_line_of(&mut file, buffer)
}

/// Reads line 1 of an open file into `buffer` (see [`read_first_line`] for the bounds).
fn read_line_of<'a>(
    file: &mut File,
    buffer: &'a mut [u8; MAX_HEADER_LINE_BYTES + 1],
) -> Result<&'a [u8], HeaderError> {
    let mut filled = 0;
    while filled < buffer.len() {
        // The first read asks for one small chunk, which holds a typical header (150-300
        // bytes) and its newline: asking for all 4097 bytes would copy a whole page and touch
        // a second one for every file. Longer lines are read on to the bound as before.
        let end = if filled == 0 {
            FIRST_READ_BYTES
        } else {
            buffer.len()
        };
        match file.read(&mut buffer[filled..end]) {
            Ok(0) => break,
            Ok(n_read) => {
                // Most headers arrive in the first read; stop as soon as the line is complete.
                let had_newline = buffer[filled..filled + n_read].contains(&b'\n');
                filled += n_read;
                if had_newline {
                    break;
                }
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(HeaderError::Read(describe_io(&error))),
        }
    }
    // The buffer holds one byte more than the bound, so a line with no newline in it is too
    // long, and a newline in it ends a line within the bound.
    line_of(&buffer[..filled])
}

/// Validates a header line (without its newline) and returns the fields of the row it yields.
///
/// A leading UTF-8 byte order mark is ignored. The JSON must be strict RFC 8259 text in valid
/// UTF-8 (no comments, trailing commas, `NaN` or lone surrogates). The checks run in the
/// contract's order: object, `type == "session"`, non-empty string `id`, non-empty string
/// absolute `cwd`, a real ISO 8601 `timestamp`, and a string `parentSession` when present (an
/// empty one counts as absent).
pub fn parse_header(line: &[u8]) -> Result<HeaderFields, HeaderError> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if is_blank(line) {
        return Err(HeaderError::EmptyLine);
    }
    // Fastest path: the five members the contract reads are taken as strings borrowed from
    // the line, every other member is still parsed strictly into a `Value` and dropped (see
    // `typed`). Any surprise (a member of the wrong type, invalid JSON) falls through to the
    // paths below, which decide the exact warning reason.
    if let Ok(typed) = serde_json::from_slice::<typed::TypedHeader<'_>>(line) {
        return typed.into_fields();
    }
    parse_header_members(line)
}

/// The general path of [`parse_header`], after the BOM and blank checks: it decides every
/// warning reason.
fn parse_header_members(line: &[u8]) -> Result<HeaderFields, HeaderError> {
    let value: Value = serde_json::from_slice(line)
        .map_err(|error| HeaderError::InvalidJson(error.to_string()))?;
    let Value::Object(mut record) = value else {
        return Err(HeaderError::NotObject);
    };
    fields_from(&mut record)
}

mod typed {
    //! A header whose string members borrow from the line: the allocation-free fast path of
    //! [`parse_header`](super::parse_header).

    use std::borrow::Cow;
    use std::fmt;

    use pi_retrospect_core::HeaderFields;
    use serde::de::{self, Deserializer, MapAccess, Visitor};
    use serde_json::Value;

    use super::HeaderError;

    /// A string member, borrowed when it has no escapes.
    struct Text<'a>(Cow<'a, str>);

    impl<'de> de::Deserialize<'de> for Text<'de> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct TextVisitor;
            impl<'de> Visitor<'de> for TextVisitor {
                type Value = Text<'de>;
                fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                    formatter.write_str("a string")
                }
                fn visit_borrowed_str<E: de::Error>(
                    self,
                    text: &'de str,
                ) -> Result<Self::Value, E> {
                    Ok(Text(Cow::Borrowed(text)))
                }
                fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                    Ok(Text(Cow::Owned(text.to_owned())))
                }
            }
            deserializer.deserialize_str(TextVisitor)
        }
    }

    /// The members the contract reads; a later duplicate wins, as in `JSON.parse`.
    #[derive(Default)]
    pub(super) struct TypedHeader<'a> {
        kind: Option<Cow<'a, str>>,
        id: Option<Cow<'a, str>>,
        timestamp: Option<Cow<'a, str>>,
        cwd: Option<Cow<'a, str>>,
        parent_session: Option<Cow<'a, str>>,
    }

    impl<'de> de::Deserialize<'de> for TypedHeader<'de> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct HeaderVisitor;
            impl<'de> Visitor<'de> for HeaderVisitor {
                type Value = TypedHeader<'de>;
                fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                    formatter.write_str("a session header object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                    let mut header = TypedHeader::default();
                    while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
                        let slot = match key.as_ref() {
                            "type" => &mut header.kind,
                            "id" => &mut header.id,
                            "timestamp" => &mut header.timestamp,
                            "cwd" => &mut header.cwd,
                            "parentSession" => &mut header.parent_session,
                            _ => {
                                // Parsed as strictly as the slow path parses it, then dropped.
                                map.next_value::<Value>()?;
                                continue;
                            }
                        };
                        *slot = Some(map.next_value::<Text<'de>>()?.0);
                    }
                    Ok(header)
                }
            }
            deserializer.deserialize_map(HeaderVisitor)
        }
    }

    impl TypedHeader<'_> {
        /// Applies the contract's checks in its order (the members are all strings here).
        pub(super) fn into_fields(self) -> Result<HeaderFields, HeaderError> {
            match self.kind.as_deref() {
                Some("session") => {}
                Some(kind) => return Err(HeaderError::NotSessionHeader(kind.to_owned())),
                None => return Err(HeaderError::NotSessionHeader("undefined".to_owned())),
            }
            let id = match self.id {
                Some(id) if !id.is_empty() => id.into_owned(),
                _ => return Err(HeaderError::NoId),
            };
            let cwd = match self.cwd {
                Some(cwd) if !cwd.is_empty() => cwd.into_owned(),
                _ => return Err(HeaderError::NoCwd),
            };
            if !super::is_absolute_cwd(&cwd) {
                return Err(HeaderError::RelativeCwd(cwd));
            }
            let timestamp = self.timestamp.ok_or(HeaderError::BadTimestamp)?;
            let instant = super::timestamp::parse(&timestamp).ok_or(HeaderError::BadTimestamp)?;
            let parent_session_path = self
                .parent_session
                .filter(|parent| !parent.is_empty())
                .map(Cow::into_owned);
            Ok(HeaderFields {
                id,
                timestamp: timestamp.into_owned(),
                instant,
                cwd,
                parent_session_path,
            })
        }
    }
}

/// Applies the contract's checks, in its order, to the members of a header object.
fn fields_from(record: &mut serde_json::Map<String, Value>) -> Result<HeaderFields, HeaderError> {
    match record.remove("type") {
        Some(Value::String(kind)) if kind == "session" => {}
        Some(Value::String(kind)) => return Err(HeaderError::NotSessionHeader(kind)),
        Some(other) => return Err(HeaderError::NotSessionHeader(other.to_string())),
        None => return Err(HeaderError::NotSessionHeader("undefined".to_owned())),
    }
    let id = match record.remove("id") {
        Some(Value::String(id)) if !id.is_empty() => id,
        _ => return Err(HeaderError::NoId),
    };
    let cwd = match record.remove("cwd") {
        Some(Value::String(cwd)) if !cwd.is_empty() => cwd,
        _ => return Err(HeaderError::NoCwd),
    };
    if !is_absolute_cwd(&cwd) {
        return Err(HeaderError::RelativeCwd(cwd));
    }
    let (timestamp, instant) = match record.remove("timestamp") {
        Some(Value::String(text)) => match timestamp::parse(&text) {
            Some(instant) => (text, instant),
            None => return Err(HeaderError::BadTimestamp),
        },
        _ => return Err(HeaderError::BadTimestamp),
    };
    let parent_session_path = match record.remove("parentSession") {
        None => None,
        Some(Value::String(parent)) if parent.is_empty() => None,
        Some(Value::String(parent)) => Some(parent),
        Some(_) => return Err(HeaderError::ParentNotString),
    };
    Ok(HeaderFields {
        id,
        timestamp,
        instant,
        cwd,
        parent_session_path,
    })
}

/// Returns whether a line holds nothing but white space, as JavaScript's `trim` sees it
/// for the ASCII and Latin-1 cases that occur in practice.
fn is_blank(line: &[u8]) -> bool {
    match std::str::from_utf8(line) {
        Ok(text) => {
            text.trim().is_empty() || text.chars().all(|c| c == '\u{FEFF}' || c.is_whitespace())
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symlink given by path is refused as a symlink, the way `show`
    /// refuses it, not as a loop.
    #[test]
    fn a_symlink_is_said_to_be_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let target = dir.path().join("real.jsonl");
        std::fs::write(&target, format!("{GOOD}\n")).expect("write");
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let error = read_header(&link).expect_err("a symlink is refused");
        assert_eq!(
            error.to_string(),
            HeaderError::Open("is a symbolic link (not followed)".to_owned()).to_string()
        );
        assert!(read_header(&target).is_ok());
    }

    /// The header read that keeps the file's first bytes accepts and refuses exactly what
    /// the plain one does, keeps every byte it read, and says when they are the whole file.
    #[test]
    fn the_header_read_with_a_head_agrees_with_the_plain_one() {
        let header = r#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}"#;
        let long_header = format!(
            r#"{{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w","x":"{}"}}"#,
            "x".repeat(MAX_HEADER_LINE_BYTES)
        );
        let at_bound = format!(
            r#"{{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w","x":"{}"}}"#,
            "x".repeat(MAX_HEADER_LINE_BYTES - header.len() - 7)
        );
        assert_eq!(at_bound.len(), MAX_HEADER_LINE_BYTES);
        let body = "b".repeat(20_000);
        let cases: Vec<String> = vec![
            String::new(),
            "\n".to_owned(),
            header.to_owned(),
            format!("{header}\n"),
            format!("{header}\n{body}\n"),
            format!("{at_bound}\n{body}"),
            format!("{long_header}\n{body}"),
            long_header.clone(),
            "not json\n".to_owned(),
        ];
        let dir = tempfile::tempdir().expect("temp dir");
        // One buffer for every file, as the walk reuses one: bytes a longer file left behind
        // must not count.
        let mut head = Vec::new();
        for (index, text) in cases.iter().enumerate() {
            let path = dir.path().join(format!("{index}.jsonl"));
            std::fs::write(&path, text).expect("write");
            let plain = read_listed_header_from(&mut File::open(&path).expect("open"));
            for first_read in [0, 100, 16 * 1024, 64 * 1024] {
                let with_head = read_listed_header_into(
                    &mut File::open(&path).expect("open"),
                    &mut head,
                    first_read,
                );
                assert_eq!(
                    with_head
                        .as_ref()
                        .map(|(fields, _, _)| format!("{fields:?}"))
                        .map_err(ToString::to_string),
                    plain
                        .as_ref()
                        .map(|fields| format!("{fields:?}"))
                        .map_err(ToString::to_string),
                    "case {index}, first read {first_read}"
                );
                if let Ok((_, n_read, is_whole)) = with_head {
                    let head = &head[..n_read];
                    assert!(text.as_bytes().starts_with(head), "case {index}");
                    assert_eq!(
                        is_whole,
                        head.len() == text.len(),
                        "case {index}, {first_read}"
                    );
                    assert!(head.len() >= first_read.min(text.len()), "case {index}");
                }
            }
        }
    }

    const GOOD: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-09-01T10:00:00.000Z","cwd":"/home/u/app"}"#;

    fn check(line: &str, expected: Result<(&str, Option<&str>), &str>) {
        let actual = parse_header(line.as_bytes())
            .map_err(|error| error.to_string())
            .map(|fields| (fields.id, fields.parent_session_path));
        let expected = expected
            .map(|(id, parent)| (id.to_owned(), parent.map(str::to_owned)))
            .map_err(str::to_owned);
        assert_eq!(actual, expected, "parse_header({line:?})");
    }

    #[test]
    fn validation_table() {
        let header = |extra: &str| {
            format!(
                r#"{{"type":"session","id":"s1","timestamp":"2026-09-01T10:00:00.000Z","cwd":"/w"{extra}}}"#
            )
        };
        check(GOOD, Ok(("s1", None)));
        check(&format!("\u{FEFF}{GOOD}"), Ok(("s1", None)));
        check(&format!("{GOOD}\r"), Ok(("s1", None)));
        check(
            &header(r#","parentSession":"/x.jsonl""#),
            Ok(("s1", Some("/x.jsonl"))),
        );
        check(&header(r#","parentSession":"""#), Ok(("s1", None)));
        check("", Err("first line is empty"));
        check("  \t\r", Err("first line is empty"));
        check("\u{FEFF}", Err("first line is empty"));
        check(
            "{",
            Err("first line is not valid JSON: EOF while parsing an object at line 1 column 1"),
        );
        check("[1]", Err("first line is not a JSON object"));
        check("null", Err("first line is not a JSON object"));
        check(r#""session""#, Err("first line is not a JSON object"));
        check(
            r#"{"type":"message"}"#,
            Err("first line is not a session header (type: message)"),
        );
        check(
            r#"{"id":"x"}"#,
            Err("first line is not a session header (type: undefined)"),
        );
        check(
            r#"{"type":7}"#,
            Err("first line is not a session header (type: 7)"),
        );
        check(
            r#"{"type":"session","timestamp":"2026-09-01T10:00:00Z","cwd":"/w"}"#,
            Err("session header has no id"),
        );
        check(
            r#"{"type":"session","id":"","timestamp":"2026-09-01T10:00:00Z","cwd":"/w"}"#,
            Err("session header has no id"),
        );
        check(
            r#"{"type":"session","id":5,"timestamp":"2026-09-01T10:00:00Z","cwd":"/w"}"#,
            Err("session header has no id"),
        );
        check(
            r#"{"type":"session","id":"s","timestamp":"2026-09-01T10:00:00Z","cwd":""}"#,
            Err("session header has no cwd"),
        );
        check(
            r#"{"type":"session","id":"s","timestamp":"2026-09-01T10:00:00Z"}"#,
            Err("session header has no cwd"),
        );
        check(
            r#"{"type":"session","id":"s","timestamp":"2026-09-01T10:00:00Z","cwd":"rel/dir"}"#,
            Err("session header cwd is not an absolute path: rel/dir"),
        );
        check(
            r#"{"type":"session","id":"s","timestamp":"2026-09-01T10:00:00Z","cwd":"C:\\Users\\me"}"#,
            Ok(("s", None)),
        );
        check(
            r#"{"type":"session","id":"s","cwd":"/w"}"#,
            Err("session header has no valid ISO 8601 timestamp"),
        );
        check(
            r#"{"type":"session","id":"s","timestamp":1788256800000,"cwd":"/w"}"#,
            Err("session header has no valid ISO 8601 timestamp"),
        );
        check(
            r#"{"type":"session","id":"s","timestamp":"2026-02-30T08:00:00.000Z","cwd":"/w"}"#,
            Err("session header has no valid ISO 8601 timestamp"),
        );
        check(
            r#"{"type":"session","id":"s","timestamp":"2026-12-31T23:59:60Z","cwd":"/w"}"#,
            Err("session header has no valid ISO 8601 timestamp"),
        );
        check(
            r#"{"type":"session","id":"s","timestamp":"2024-02-29T00:00:00Z","cwd":"/w"}"#,
            Ok(("s", None)),
        );
        check(
            &header(r#","parentSession":null"#),
            Err("session header parentSession is not a string"),
        );
        check(
            &header(r#","parentSession":{}"#),
            Err("session header parentSession is not a string"),
        );
    }

    #[test]
    fn strict_json_refusals_are_errors_not_crashes() {
        for line in [
            r#"{"type":"session",}"#,
            r#"{'type':'session'}"#,
            r#"{"type":"session"} trailing"#,
            r#"{"type":"session","id":"\ud800","cwd":"/w"}"#,
            r#"{"a":NaN}"#,
            "{\"type\":\"session\",\"id\":\"a\u{0}b\"}",
        ] {
            let result = parse_header(line.as_bytes());
            assert!(
                matches!(result, Err(HeaderError::InvalidJson(_))),
                "{line:?} gave {result:?}"
            );
        }
        let invalid_utf8 = b"{\"type\":\"session\",\"id\":\"\xff\"}";
        assert!(matches!(
            parse_header(invalid_utf8),
            Err(HeaderError::InvalidJson(_))
        ));
    }

    #[test]
    fn the_fast_path_changes_nothing() {
        // The typed fast path in `parse_header` must accept and reject exactly what parsing into a
        // `Value` does: escaped keys, duplicate keys (the last wins) and strictness inside
        // members the header does not use.
        let base = r#""type":"session","timestamp":"2026-09-01T10:00:00Z","cwd":"/w""#;
        check(
            &format!(r#"{{{base},"\u0069d":"escaped"}}"#),
            Ok(("escaped", None)),
        );
        check(
            &format!(r#"{{"id":"first",{base},"id":"last"}}"#),
            Ok(("last", None)),
        );
        check(
            &format!(r#"{{"id":"first",{base},"id":5}}"#),
            Err("session header has no id"),
        );
        check(
            &format!(r#"{{"type":"message",{base},"id":"s"}}"#),
            Ok(("s", None)),
        );
        for ignored in [r#""\ud800""#, "1e400", r#"[1,]"#, "\"\u{1}\""] {
            let line = format!(r#"{{"id":"s",{base},"x":{ignored}}}"#);
            let result = parse_header(line.as_bytes());
            assert!(
                matches!(result, Err(HeaderError::InvalidJson(_))),
                "{line:?} gave {result:?}"
            );
        }
    }

    proptest::proptest! {
        /// The typed fast path gives exactly what the general path gives, on lines mixing the
        /// members the contract reads (of every type) with others, duplicates and escapes.
        #[test]
        fn the_typed_fast_path_agrees_with_the_general_path(
            picks in proptest::collection::vec(0usize..22, 0..9)
        ) {
            const MEMBERS: [&str; 22] = [
                r#""type":"session""#, r#""type":"message""#, r#""type":7"#,
                r#""id":"a""#, r#""id":"""#, r#""id":5"#, r#""i\u0064":"e""#,
                r#""cwd":"/w""#, r#""cwd":"rel""#, r#""cwd":null"#, r#""cwd":"C:\\x""#,
                r#""timestamp":"2026-01-01T00:00:00Z""#, r#""timestamp":"bad""#, r#""timestamp":1"#,
                r#""parentSession":"""#, r#""parentSession":"/p""#, r#""parentSession":null"#,
                r#""version":3"#, r#""x":"\ud800""#, r#""x":[1,{"y":2}]"#, r#""x":1e400"#,
                r#""pad":"a\"b""#,
            ];
            let body: Vec<&str> = picks.iter().map(|pick| MEMBERS[*pick]).collect();
            let line = format!("{{{}}}", body.join(","));
            proptest::prop_assert_eq!(
                parse_header(line.as_bytes()),
                parse_header_members(line.as_bytes()),
                "{}", line
            );
        }
    }

    fn read(contents: &[u8]) -> Result<Vec<u8>, HeaderError> {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("x.jsonl");
        std::fs::write(&path, contents).expect("write");
        let mut buffer = [0u8; MAX_HEADER_LINE_BYTES + 1];
        read_first_line(&path, &mut buffer).map(<[u8]>::to_vec)
    }

    #[test]
    fn line_bounds() {
        let exact = vec![b'a'; MAX_HEADER_LINE_BYTES];
        let mut exact_with_newline = exact.clone();
        exact_with_newline.extend_from_slice(b"\nmore");
        assert_eq!(read(&exact_with_newline), Ok(exact.clone()));
        assert_eq!(read(&exact), Ok(exact.clone()), "last line without newline");
        let too_long = vec![b'a'; MAX_HEADER_LINE_BYTES + 1];
        assert_eq!(read(&too_long), Err(HeaderError::TooLong));
        let mut too_long_newline = too_long.clone();
        too_long_newline.push(b'\n');
        assert_eq!(read(&too_long_newline), Err(HeaderError::TooLong));
        assert_eq!(read(b""), Err(HeaderError::Empty));
        assert_eq!(read(b"\n{}"), Ok(Vec::new()));
        assert_eq!(read(b"abc"), Ok(b"abc".to_vec()));
    }

    #[test]
    fn refuses_fifos_without_blocking_and_symlinks_without_following() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fifo = dir.path().join("pipe.jsonl");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("run mkfifo");
        assert!(status.success());
        let mut buffer = [0u8; MAX_HEADER_LINE_BYTES + 1];
        assert_eq!(
            read_first_line(&fifo, &mut buffer),
            Err(HeaderError::NotRegular("FIFO"))
        );

        let target = dir.path().join("real.jsonl");
        std::fs::write(&target, GOOD).expect("write");
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        assert!(matches!(
            read_first_line(&link, &mut buffer),
            Err(HeaderError::Open(_))
        ));
        assert!(read_header(&target).is_ok());
        assert!(read_listed_header(&target).is_ok());

        // Without the type check, a FIFO still cannot block: it opens and reads at once.
        assert_eq!(read_listed_header(&fifo), Err(HeaderError::Empty));
        assert!(matches!(
            read_listed_header(&link),
            Err(HeaderError::Open(_))
        ));
        assert!(matches!(
            read_listed_header(dir.path()),
            Err(HeaderError::Read(_))
        ));
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_arbitrary_lines(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let _ = parse_header(&bytes);
        }

        /// First lines of every committed fixture, damaged (bytes flipped, cut or
        /// inserted), never panic the parser and get the same answer from the fast path as
        /// from the general path that decides the warning reasons.
        #[test]
        fn damaged_fixture_headers_agree_with_the_general_path(
            pick in proptest::prelude::any::<proptest::sample::Index>(),
            edits in proptest::collection::vec(
                (0.0..=1.0f64, 0u8..3, proptest::collection::vec(proptest::num::u8::ANY, 0..4)),
                0..4,
            ),
        ) {
            let lines = fixture_first_lines();
            let mut line = lines[pick.index(lines.len())].clone();
            for (fraction, kind, bytes) in edits {
                let at = ((line.len() as f64) * fraction) as usize;
                match kind {
                    0 => {
                        if let Some(byte) = line.get_mut(at) {
                            *byte ^= bytes.first().copied().unwrap_or(1) | 1;
                        }
                    }
                    1 => {
                        line.truncate(at);
                    }
                    _ => {
                        line.splice(at..at, bytes);
                    }
                }
            }
            let result = parse_header(&line);
            let body = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line);
            if !is_blank(body) {
                proptest::prop_assert_eq!(result, parse_header_members(body));
            }
        }
    }

    /// Returns the first line of every `.jsonl` file under `fixtures/`: the seed corpus.
    fn fixture_first_lines() -> &'static [Vec<u8>] {
        static LINES: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
        LINES.get_or_init(|| {
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
            let mut lines = Vec::new();
            let mut pending = vec![root];
            while let Some(dir) = pending.pop() {
                let Ok(listing) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for entry in listing.flatten() {
                    let path = entry.path();
                    if path.is_dir() {
                        pending.push(path);
                    } else if path.extension().is_some_and(|ext| ext == "jsonl")
                        && let Ok(bytes) = std::fs::read(&path)
                    {
                        let end = bytes
                            .iter()
                            .position(|&byte| byte == b'\n')
                            .unwrap_or(bytes.len());
                        lines.push(bytes[..end].to_vec());
                    }
                }
            }
            lines.sort();
            assert!(lines.len() > 20, "the fixtures are the seed corpus");
            lines
        })
    }
}
