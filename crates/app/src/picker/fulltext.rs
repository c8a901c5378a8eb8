//! The picker's full-text test: does a session's conversation hold a text?
//!
//! A stand-in until the `search` capability lands: a plain, case-insensitive substring test
//! over the text of user and assistant messages and the session's name, one file at a time
//! through the shared line reader (`transcript::for_each_line`). Lines that cannot hold the
//! text (checked on the raw bytes) are never decoded. Thinking, tool calls and tool output are
//! not searched, like the preview.

use std::path::Path;

use pi_retrospect_header::{Symlinks, open_regular};
use serde_json::Value;

/// Lines longer than this are skipped (pasted logs and images are not conversation text).
const MAX_LINE_BYTES: usize = 16 << 20;

/// A text to find in sessions' conversations, prepared once for every file.
#[derive(Debug, Clone)]
pub struct ConversationSearch {
    /// The text, lower-cased.
    lower: String,
    /// The text's ASCII-lower-cased bytes as they appear raw in a JSON line, when they appear
    /// verbatim there (no quote, backslash or control character, which JSON escapes).
    raw: Option<Vec<u8>>,
}

impl ConversationSearch {
    /// Returns the search for `text` (matched case-insensitively).
    pub fn new(text: &str) -> ConversationSearch {
        let lower = text.to_lowercase();
        let is_verbatim = !lower
            .chars()
            .any(|character| character == '"' || character == '\\' || character.is_control());
        // Only ASCII letters are folded on the raw bytes, so the raw test holds only for a
        // needle whose other characters have no case (`é` could be stored as `É`).
        let is_foldable = lower.chars().all(|character| {
            character.is_ascii()
                || (character.to_uppercase().eq([character])
                    && character.to_lowercase().eq([character]))
        });
        ConversationSearch {
            raw: (is_verbatim && is_foldable).then(|| lower.as_bytes().to_vec()),
            lower,
        }
    }

    /// Returns whether the session file at `path` holds the text in a user or assistant
    /// message's text or in its name. The file is opened read-only like every session file
    /// (never through a symlink, never blocking); one that cannot be read holds nothing.
    pub fn is_in_file(&self, path: &Path) -> bool {
        let Ok((file, metadata)) = open_regular(path, Symlinks::Refuse) else {
            return false;
        };
        let mut is_found = false;
        let mut folded = Vec::new();
        let result = pi_retrospect_transcript::for_each_line(
            &file,
            metadata.len(),
            MAX_LINE_BYTES,
            |line| {
                if is_found || line.line_no == 1 || line.over_long.is_some() {
                    return;
                }
                if let Some(raw) = &self.raw {
                    folded.clear();
                    folded.extend(line.bytes.iter().map(u8::to_ascii_lowercase));
                    if !contains(&folded, raw) {
                        return;
                    }
                }
                is_found = self.is_in_line(line.bytes);
            },
        );
        result.is_ok() && is_found
    }

    /// Returns whether one entry's searched texts hold the text.
    fn is_in_line(&self, bytes: &[u8]) -> bool {
        let Ok(entry) = serde_json::from_slice::<Value>(bytes) else {
            return false;
        };
        let holds = |text: &str| text.to_lowercase().contains(&self.lower);
        match entry.get("type").and_then(Value::as_str) {
            Some("session_info") => entry.get("name").and_then(Value::as_str).is_some_and(holds),
            Some("message") => {
                let Some(message) = entry.get("message") else {
                    return false;
                };
                let role = message.get("role").and_then(Value::as_str);
                if !matches!(role, Some("user" | "assistant")) {
                    return false;
                }
                match message.get("content") {
                    Some(Value::String(text)) => holds(text),
                    Some(Value::Array(blocks)) => blocks.iter().any(|block| {
                        block.get("type").and_then(Value::as_str) == Some("text")
                            && block.get("text").and_then(Value::as_str).is_some_and(holds)
                    }),
                    _ => false,
                }
            }
            _ => false,
        }
    }
}

/// Returns whether `haystack` contains `needle`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSION: &str = concat!(
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"Why does the \"Parser\" drop lines?\nSee café.log"}}"#,
        "\n",
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"secret plan"},{"type":"text","text":"Because of ÉTAT"},{"type":"toolCall","id":"t","name":"bash","arguments":{"command":"grep needle"}}]}}"#,
        "\n",
        r#"{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03Z","message":{"role":"toolResult","toolCallId":"t","content":[{"type":"text","text":"tool output only"}]}}"#,
        "\n",
        r#"{"type":"session_info","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:04Z","name":"Line Dropper"}"#,
        "\n",
    );

    #[test]
    fn finds_conversation_text_only() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, SESSION).expect("write");
        // (needle, found)
        let cases = [
            ("parser", true),
            ("\"parser\" drop", true),
            ("lines?\nsee", true),
            ("CAFÉ", true),
            ("état", true),
            ("日本", false),
            ("line dropper", true),
            ("secret plan", false),
            ("grep needle", false),
            ("tool output", false),
            ("session", false),
            ("2026-01-01", false),
        ];
        for (needle, is_found) in cases {
            assert_eq!(
                ConversationSearch::new(needle).is_in_file(&path),
                is_found,
                "{needle:?}"
            );
        }
        assert!(!ConversationSearch::new("parser").is_in_file(&dir.path().join("missing.jsonl")));
    }
}
