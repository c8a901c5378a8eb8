//! What a tool returns: a JSON document (`structuredContent`) and readable text (`content`),
//! both produced by the render crate's writers, with the size bounds the tools document.

use std::io;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use crate::error::ToolError;

/// The largest text `content` of a reading tool, in bytes (Pi shows the model at most about
/// 20 KB of a tool's text anyway; the whole document is in `structuredContent`).
pub(crate) const MAX_TEXT_BYTES: usize = 48_000;

/// The largest `structuredContent` page of a reading tool, as compact JSON, in bytes.
pub(crate) const MAX_PAGE_BYTES: usize = 256 * 1024;

/// At most this many warnings about a session file are returned (`nWarnings` counts all).
pub(crate) const MAX_WARNINGS: usize = 50;

/// The longest string a page holds, in bytes, but for paths and cursors (handles, which are
/// never cut): a longer one (a hostile model id, cwd or name) is cut on a character boundary
/// and ends in `… [cut: N bytes]`.
pub(crate) const MAX_STRING_BYTES: usize = 4096;

/// Returns whether the object key `key` holds a handle that must never be cut.
fn is_handle(key: &str) -> bool {
    key.ends_with("path") || key.ends_with("Path") || key.ends_with("Cursor") || key == "cursor"
}

/// Cuts every string of `value` longer than [`MAX_STRING_BYTES`] (paths and cursors aside)
/// with a marker.
pub(crate) fn cut_long_strings(value: &mut Value) {
    match value {
        Value::String(text) => cut_string(text),
        Value::Array(items) => items.iter_mut().for_each(cut_long_strings),
        Value::Object(object) => {
            for (key, item) in object.iter_mut() {
                if !(is_handle(key) && item.is_string()) {
                    cut_long_strings(item);
                }
            }
        }
        _ => {}
    }
}

fn cut_string(text: &mut String) {
    if text.len() <= MAX_STRING_BYTES {
        return;
    }
    let mut end = MAX_STRING_BYTES - 40;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let n_cut = text.len() - end;
    text.truncate(end);
    text.push_str(&format!("… [cut: {n_cut} bytes]"));
}

/// Bounds a page whose rows are the array `rows_key` of `document`: long strings cut, then
/// rows dropped from the end while the page is larger than [`MAX_PAGE_BYTES`]. Returns how
/// many rows were kept, so the tool's cursor continues after them.
pub(crate) fn fit_page(document: &mut Value, rows_key: &str) -> usize {
    cut_long_strings(document);
    let mut n_bytes = json_len(document);
    let Some(rows) = document.get_mut(rows_key).and_then(Value::as_array_mut) else {
        return 0;
    };
    while n_bytes > MAX_PAGE_BYTES && !rows.is_empty() {
        if let Some(row) = rows.pop() {
            n_bytes -= json_len(&row) + usize::from(!rows.is_empty());
        }
    }
    rows.len()
}

/// A successful tool result.
#[derive(Debug)]
pub(crate) struct ToolOutput {
    /// The document, valid against the tool's output schema.
    pub structured: Value,
    /// The same result as readable text.
    pub text: String,
}

impl ToolOutput {
    /// Returns the MCP result carrying this output.
    pub(crate) fn into_result(self) -> CallToolResult {
        let mut result = CallToolResult::success(vec![ContentBlock::text(self.text)]);
        result.structured_content = Some(self.structured);
        result
    }
}

/// Returns the tool error result for `error`: its message as the only text.
pub(crate) fn error_result(error: &ToolError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(error.to_string())])
}

/// Returns what a render writer writes, as a JSON value.
pub(crate) fn json_from_writer(
    write: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
) -> Result<Value, ToolError> {
    let mut bytes = Vec::new();
    write(&mut bytes).map_err(|error| ToolError::Internal(error.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|error| ToolError::Internal(error.to_string()))
}

/// Returns what a render writer writes, as text (lossy only if a writer wrote invalid
/// UTF-8, which they do not).
pub(crate) fn text_from_writer(
    write: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
) -> Result<String, ToolError> {
    let mut bytes = Vec::new();
    write(&mut bytes).map_err(|error| ToolError::Internal(error.to_string()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Returns `text` cut to at most [`MAX_TEXT_BYTES`] at a character boundary, with a line
/// saying so when it was cut.
pub(crate) fn bounded_text(mut text: String) -> String {
    const NOTE: &str = "\n[… text cut; structuredContent holds the whole page]\n";
    if text.len() <= MAX_TEXT_BYTES {
        return text;
    }
    let mut end = MAX_TEXT_BYTES - NOTE.len();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(NOTE);
    text
}

/// Returns the size of `value` as compact JSON.
pub(crate) fn json_len(value: &Value) -> usize {
    struct Counter(usize);
    impl io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing a `Value` to a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// Keeps at most [`MAX_WARNINGS`] of the document's `warnings` and sets `nWarnings` to how
/// many there were.
pub(crate) fn bound_warnings(document: &mut Value) {
    let Some(object) = document.as_object_mut() else {
        return;
    };
    let n_warnings = match object.get_mut("warnings").and_then(Value::as_array_mut) {
        Some(warnings) => {
            let n_warnings = warnings.len();
            warnings.truncate(MAX_WARNINGS);
            n_warnings
        }
        None => 0,
    };
    object.insert("nWarnings".to_owned(), Value::from(n_warnings));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_at_a_character_boundary() {
        for (text, is_cut) in [
            ("short".to_owned(), false),
            ("é".repeat(MAX_TEXT_BYTES / 2), false),
            ("é".repeat(MAX_TEXT_BYTES), true),
            (format!("a{}", "é".repeat(MAX_TEXT_BYTES)), true),
        ] {
            let bounded = bounded_text(text.clone());
            assert!(bounded.len() <= MAX_TEXT_BYTES, "{}", bounded.len());
            assert_eq!(bounded != text, is_cut);
            if is_cut {
                assert!(bounded.ends_with("holds the whole page]\n"));
            }
        }
    }

    #[test]
    fn warnings_are_counted_and_capped() {
        for (n_warnings, n_kept) in [(0, 0), (3, 3), (MAX_WARNINGS + 7, MAX_WARNINGS)] {
            let warnings: Vec<Value> = (0..n_warnings).map(Value::from).collect();
            let mut document = serde_json::json!({ "warnings": warnings });
            bound_warnings(&mut document);
            assert_eq!(document["nWarnings"], n_warnings);
            assert_eq!(document["warnings"].as_array().map(Vec::len), Some(n_kept));
        }
    }

    #[test]
    fn pages_are_cut_to_the_bound() {
        let long = "é".repeat(MAX_STRING_BYTES);
        let rows: Vec<Value> = (0..200)
            .map(|_| serde_json::json!({ "model": long, "path": long }))
            .collect();
        let mut document = serde_json::json!({ "rows": rows, "nextCursor": long });
        let n_kept = fit_page(&mut document, "rows");
        assert!(json_len(&document) <= MAX_PAGE_BYTES);
        assert!(n_kept > 0 && n_kept < 200);
        let row = &document["rows"][0];
        assert!(
            row["model"]
                .as_str()
                .is_some_and(|model| model.len() <= MAX_STRING_BYTES && model.ends_with(" bytes]"))
        );
        assert_eq!(row["path"].as_str(), Some(long.as_str()));
    }

    #[test]
    fn json_len_is_the_compact_length() {
        let value = serde_json::json!({ "a": [1, "é", null] });
        assert_eq!(json_len(&value), value.to_string().len());
    }
}
