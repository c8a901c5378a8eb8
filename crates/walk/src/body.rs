//! Cheap facts from a session file's body: its name and first user message.
//!
//! Listing reads only headers; these facts are read only when a filter or an output field
//! asks for them. The body is streamed line by line up to the size the file had when it was
//! opened (a file Pi is still appending to gives a consistent snapshot), and only the lines
//! that can matter are decoded: a line is parsed as JSON only when it contains
//! `"session_info"`, or, until the first user message is found, `"user"`.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use memchr::memmem;
use pi_retrospect_core::{SessionSummary, Warning};
use pi_retrospect_header::{describe_io, open_session_file};
use rayon::prelude::*;
use serde_json::Value;

/// Reads the summaries of many session files in parallel, in the order given.
pub fn read_summaries(paths: &[&str]) -> Vec<Result<SessionSummary, Warning>> {
    paths
        .par_iter()
        .map(|path| read_summary(Path::new(path)).map_err(|reason| Warning::new(*path, reason)))
        .collect()
}

/// Reads the name and first user message of one session file; the error is a warning reason.
pub fn read_summary(path: &Path) -> Result<SessionSummary, String> {
    let file = open_session_file(path)
        .map_err(|error| format!("could not open session body: {}", describe_io(&error)))?;
    let metadata = file
        .metadata()
        .map_err(|error| format!("could not read session body: {}", describe_io(&error)))?;
    if !metadata.is_file() {
        return Err("could not read session body: not a regular file".to_owned());
    }
    let mut reader = BufReader::with_capacity(256 * 1024, file.take(metadata.len()));
    let session_info = memmem::Finder::new(b"\"session_info\"");
    let user = memmem::Finder::new(b"\"user\"");
    let mut summary = SessionSummary::default();
    let mut line = Vec::new();
    let mut is_header = true;
    loop {
        let (n_read, is_whole) = read_bounded_line(&mut reader, &mut line)
            .map_err(|error| format!("could not read session body: {}", describe_io(&error)))?;
        if n_read == 0 {
            break;
        }
        if std::mem::take(&mut is_header) || !is_whole {
            continue;
        }
        if session_info.find(&line).is_some() {
            if let Some(entry) = parse_object(&line)
                && entry.get("type").and_then(Value::as_str) == Some("session_info")
            {
                summary.name = entry
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned);
            }
        } else if summary.first_user_message.is_none()
            && user.find(&line).is_some()
            && let Some(entry) = parse_object(&line)
        {
            summary.first_user_message = user_text(&entry);
        }
    }
    Ok(summary)
}

/// The longest line decoded for these facts. A session name is a few words and most first
/// messages are short; a longer line (a pasted log, an image) is skipped rather than held in
/// memory, so reading facts costs a bounded buffer whatever the file holds.
const MAX_FACT_LINE_BYTES: usize = 1024 * 1024;

/// Reads the next line into `line` (cleared first), keeping at most
/// [`MAX_FACT_LINE_BYTES`] of it; returns the bytes consumed and whether the whole line fits.
fn read_bounded_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> std::io::Result<(usize, bool)> {
    line.clear();
    let mut n_consumed = 0;
    let mut is_whole = true;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok((n_consumed, is_whole));
        }
        let (chunk, is_end) = match memchr::memchr(b'\n', available) {
            Some(newline) => (&available[..=newline], true),
            None => (available, false),
        };
        if is_whole && line.len() + chunk.len() <= MAX_FACT_LINE_BYTES {
            line.extend_from_slice(chunk);
        } else {
            is_whole = false;
            line.clear();
        }
        let n_chunk = chunk.len();
        reader.consume(n_chunk);
        n_consumed += n_chunk;
        if is_end {
            return Ok((n_consumed, is_whole));
        }
    }
}

fn parse_object(line: &[u8]) -> Option<serde_json::Map<String, Value>> {
    match serde_json::from_slice(line) {
        Ok(Value::Object(object)) => Some(object),
        _ => None,
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

    fn check(body: &str, name: Option<&str>, first: Option<&str>) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, body).expect("write");
        let summary = read_summary(&path).expect("readable");
        assert_eq!(summary.name.as_deref(), name, "{body}");
        assert_eq!(summary.first_user_message.as_deref(), first, "{body}");
    }

    const HEADER: &str =
        r#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w","user":"x"}"#;

    #[test]
    fn an_over_long_line_is_skipped_not_held() {
        let huge = "x".repeat(MAX_FACT_LINE_BYTES + 10);
        check(
            &format!(
                "{HEADER}\n{}\n{}\n{}\n",
                serde_json::json!({"type":"message","message":{"role":"user","content":huge}}),
                r#"{"type":"message","message":{"role":"user","content":"short"}}"#,
                r#"{"type":"session_info","name":"After the long line"}"#,
            ),
            Some("After the long line"),
            Some("short"),
        );
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
