//! Cheap facts from a session file's body, read by streaming: its name and first user message.
//!
//! Listing reads only headers; these facts are read only when a filter or an output field
//! asks for them. The body is streamed line by line up to the size the file had when it was
//! opened (a file Pi is still appending to gives a consistent snapshot), and only the lines
//! that can matter are decoded: a line is parsed as JSON only when it contains
//! `"session_info"`, or, until the first user message is found, `"user"`.

use std::path::Path;

use memchr::memmem;
use pi_retrospect_core::SessionSummary;
use pi_retrospect_header::{OpenError, Symlinks, open_regular};
use serde_json::Value;

use crate::scan::for_each_line;

/// Why a summary could not be read: the file could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    /// Opening failed, or the path is not a regular file.
    #[error("could not open session body: {}", .0.reason())]
    Open(#[from] OpenError),
    /// Reading failed part way.
    #[error("could not read session body: {}", pi_retrospect_header::describe_io(.0))]
    Read(#[from] std::io::Error),
}

/// Reads the name and first user message of one session file.
///
/// The file is streamed once through the shared line reader ([`for_each_line`]) up to the
/// size it had when opened, holding at most [`MAX_FACT_LINE_BYTES`] of any line: a longer line
/// (a pasted log, an image) cannot hold a name and is skipped.
pub fn read_summary(path: &Path) -> Result<SessionSummary, SummaryError> {
    let (file, metadata) = open_regular(path, Symlinks::Refuse)?;
    let session_info = memmem::Finder::new(b"\"session_info\"");
    let user = memmem::Finder::new(b"\"user\"");
    let mut summary = SessionSummary::default();
    for_each_line(&file, metadata.len(), MAX_FACT_LINE_BYTES, |line| {
        if line.line_no == 1 || line.over_long.is_some() {
            return;
        }
        let bytes = line.bytes;
        if session_info.find(bytes).is_some() {
            if let Some(entry) = parse_object(bytes)
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
            && user.find(bytes).is_some()
            && let Some(entry) = parse_object(bytes)
        {
            summary.first_user_message = user_text(&entry);
        }
    })?;
    Ok(summary)
}

/// The longest line decoded for these facts. A session name is a few words and most first
/// messages are short; a longer line is skipped rather than held in memory, so reading facts
/// costs a bounded buffer whatever the file holds.
pub const MAX_FACT_LINE_BYTES: usize = 1024 * 1024;

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
