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

/// The default page of a paged tool, as compact JSON, in bytes (about 8k tokens): an agent
/// that does not ask for more gets pages it can afford to read whole; `limit` raises it to
/// [`MAX_PAGE_BYTES`].
pub(crate) const DEFAULT_PAGE_BYTES: usize = 32 * 1024;

/// Room kept in every page for the `bytes` and `sizeClass` fields added last
/// (`,"bytes":262144,"sizeClass":"large"` is 36 bytes).
const SIZE_FIELDS_BYTES: usize = 64;

/// Returns the byte budget of a page: [`DEFAULT_PAGE_BYTES`] unless the caller gave a
/// `limit`, which raises it to [`MAX_PAGE_BYTES`].
pub(crate) fn page_budget(is_limit_given: bool) -> usize {
    if is_limit_given {
        MAX_PAGE_BYTES
    } else {
        DEFAULT_PAGE_BYTES
    }
}

/// Bounds a page whose rows are the array `rows_key` of `document`: long strings cut, then
/// rows dropped from the end until the page WITH its continuation fits in `budget` (less
/// the room of the size fields). `continuation(n_kept)` returns the fields that continue
/// after the first `n_kept` rows (a cursor, or null at the end); they are inserted into the
/// document, so a page can never fit only until its cursor is added. Returns how many rows
/// were kept.
pub(crate) fn fit_page(
    document: &mut Value,
    rows_key: &str,
    budget: usize,
    continuation: &mut dyn FnMut(usize) -> Vec<(&'static str, Value)>,
) -> usize {
    cut_long_strings(document);
    fit_rows(document, rows_key, budget, continuation)
}

/// Fits a page as [`fit_page`] does, without cutting long strings: for pages whose rows
/// bound their own strings (`session_entries` cuts `text` at 8,000 characters and marks it).
pub(crate) fn fit_rows(
    document: &mut Value,
    rows_key: &str,
    budget: usize,
    continuation: &mut dyn FnMut(usize) -> Vec<(&'static str, Value)>,
) -> usize {
    let budget = budget.saturating_sub(SIZE_FIELDS_BYTES);
    let Some(object) = document.as_object_mut() else {
        return 0;
    };
    let mut n_bytes = json_len_object(object);
    let Some(rows) = object.get_mut(rows_key).and_then(Value::as_array_mut) else {
        return 0;
    };
    let mut n_kept = rows.len();
    let mut row_bytes: Vec<usize> = rows.iter().map(json_len).collect();
    loop {
        // The fields add `,"key":value` each; a field that replaces one already there
        // (a cursor set by the writer) is measured as the difference.
        let fields = continuation(n_kept);
        let n_field_bytes: usize = fields
            .iter()
            .map(|(key, value)| key.len() + 4 + json_len(value))
            .sum();
        // One row is always kept when it fits the cap, so a cursor always moves on.
        let fits = n_bytes + n_field_bytes <= budget
            || (n_kept == 1 && n_bytes + n_field_bytes <= MAX_PAGE_BYTES - SIZE_FIELDS_BYTES);
        if fits || n_kept == 0 {
            break;
        }
        n_kept -= 1;
        let dropped = row_bytes.pop().unwrap_or(0);
        n_bytes -= dropped + usize::from(n_kept > 0);
    }
    if let Some(rows) = document.get_mut(rows_key).and_then(Value::as_array_mut) {
        rows.truncate(n_kept);
    }
    if let Some(object) = document.as_object_mut() {
        for (key, value) in continuation(n_kept) {
            object.insert(key.to_owned(), value);
        }
    }
    n_kept
}

fn json_len_object(object: &serde_json::Map<String, Value>) -> usize {
    let mut n_bytes = 2;
    for (idx, (key, value)) in object.iter().enumerate() {
        n_bytes += usize::from(idx > 0) + key.len() + 3 + json_len(value);
    }
    n_bytes
}

/// How large a page is, for an agent planning its context: `small` up to 8 KiB (about 2k
/// tokens), `medium` up to [`DEFAULT_PAGE_BYTES`], `large` beyond.
pub(crate) fn size_class(n_bytes: usize) -> &'static str {
    if n_bytes <= 8 * 1024 {
        "small"
    } else if n_bytes <= DEFAULT_PAGE_BYTES {
        "medium"
    } else {
        "large"
    }
}

/// Adds `bytes` (the page's size as compact JSON, these fields included) and `sizeClass` to
/// an object document.
pub(crate) fn add_size_fields(document: &mut Value) {
    let Some(object) = document.as_object_mut() else {
        return;
    };
    object.remove("bytes");
    object.remove("sizeClass");
    let base = json_len_object(object);
    // `,"bytes":N,"sizeClass":"C"`: the number's own digits count, so settle on a length
    // whose digit count is stable.
    let mut n_bytes = base;
    for _ in 0..3 {
        let class = size_class(n_bytes);
        let extra = usize::from(!object.is_empty())
            + r#""bytes":"#.len()
            + n_bytes.to_string().len()
            + r#","sizeClass":"#.len()
            + class.len()
            + 2;
        n_bytes = base + extra;
    }
    object.insert("bytes".to_owned(), Value::from(n_bytes));
    object.insert("sizeClass".to_owned(), Value::from(size_class(n_bytes)));
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
        let mut document = serde_json::json!({ "rows": rows });
        let n_kept = fit_page(&mut document, "rows", MAX_PAGE_BYTES, &mut |n_kept| {
            vec![("nextCursor", Value::from(format!("{long}{n_kept}")))]
        });
        add_size_fields(&mut document);
        assert!(json_len(&document) <= MAX_PAGE_BYTES);
        assert_eq!(document["bytes"], json_len(&document));
        assert!(
            document["nextCursor"]
                .as_str()
                .is_some_and(|cursor| cursor.ends_with(&n_kept.to_string()))
        );
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
    fn size_fields_state_the_page_size() {
        for n_chars in [0, 10, 9_000, 40_000, 100_000] {
            let mut document = serde_json::json!({ "text": "a".repeat(n_chars) });
            add_size_fields(&mut document);
            let n_bytes = json_len(&document);
            assert_eq!(document["bytes"], n_bytes, "{n_chars}");
            assert_eq!(document["sizeClass"], size_class(n_bytes));
        }
        assert_eq!(size_class(100), "small");
        assert_eq!(size_class(20_000), "medium");
        assert_eq!(size_class(40_000), "large");
    }

    #[test]
    fn json_len_is_the_compact_length() {
        let value = serde_json::json!({ "a": [1, "é", null] });
        assert_eq!(json_len(&value), value.to_string().len());
    }
}
