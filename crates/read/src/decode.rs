//! Decoding one line as Pi decodes it: Pi reads a session file as UTF-8 text (invalid bytes
//! become U+FFFD) and hands each line to JavaScript's `JSON.parse`, which accepts a lone
//! surrogate escape (`\ud83d` without its pair) that a strict parser refuses. Every reader
//! here that needs what Pi would see of a line goes through [`decode_lossy`] or
//! [`decode_line`], and every repair of lone surrogates through [`repair_lone_surrogates`].

use std::borrow::Cow;

/// Returns the JSON value of a line's `bytes`, read as Pi reads it, or null when it is not
/// JSON even then (see [`decode_line`]).
pub fn decode_lossy(bytes: &[u8]) -> serde_json::Value {
    decode_line(bytes).unwrap_or(serde_json::Value::Null)
}

/// Returns the JSON value of one line read as Pi reads it, or `None` when it is not JSON even
/// then.
///
/// Invalid UTF-8 and lone surrogate escapes become U+FFFD, as in Pi's own reader; a number
/// too large for a float becomes null.
pub fn decode_line(bytes: &[u8]) -> Option<serde_json::Value> {
    match serde_json::from_slice(bytes) {
        Ok(value) => return Some(value),
        Err(error) if is_too_deep(&error) => return decode_deep(bytes),
        Err(_) => {}
    }
    // What JavaScript's `JSON.parse` reads but a strict parser refuses: invalid UTF-8, and a
    // lone surrogate escape (`\ud83d` without its pair, which JavaScript writes when a string
    // is cut between the halves of an emoji). Both become U+FFFD, as in Pi's own reader. And a
    // number too large for a float (`1e400`), which `JSON.parse` reads as Infinity: it reads
    // as null here, and the rest of the entry (its text) survives.
    let text = String::from_utf8_lossy(bytes);
    let repaired = repair_lone_surrogates(&text);
    let repaired = pi_retrospect_core::json_text::replace_overflowing_numbers(&repaired);
    match serde_json::from_str(&repaired) {
        Ok(value) => Some(value),
        Err(error) if is_too_deep(&error) => decode_deep(repaired.as_bytes()),
        Err(_) => None,
    }
}

/// Returns whether serde_json refused a value for its nesting (it stops at 128 levels, one
/// short of the tokenizer's [`crate::json::MAX_DEPTH`]).
fn is_too_deep(error: &serde_json::Error) -> bool {
    error.to_string().starts_with("recursion limit exceeded")
}

/// Returns the value of a line nested beyond serde_json's own limit but within the
/// tokenizer's, so that every reader takes or refuses the same lines; the tokenizer checks
/// the nesting first, which keeps the decoder's recursion shallow on any thread.
fn decode_deep(bytes: &[u8]) -> Option<serde_json::Value> {
    let mut reader = crate::json::Reader::new(bytes);
    reader.skip_value().ok()?;
    reader.end().ok()?;
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    deserializer.disable_recursion_limit();
    let value = <serde_json::Value as serde::Deserialize>::deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    Some(value)
}

/// Returns `json` with every `\uD800`-`\uDFFF` escape that is not half of a valid pair
/// replaced by `\ufffd`. An escaped backslash is skipped whole, so `\\ud800` (a backslash
/// followed by the text `ud800`) is left alone.
pub fn repair_lone_surrogates(json: &str) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    let escape_at = |idx: usize| -> Option<u16> {
        if bytes.get(idx) != Some(&b'\\') || bytes.get(idx + 1) != Some(&b'u') {
            return None;
        }
        let hex = json.get(idx + 2..idx + 6)?;
        u16::from_str_radix(hex, 16).ok()
    };
    let mut repaired: Option<String> = None;
    let mut copied_to = 0;
    let mut idx = 0;
    while idx < bytes.len() {
        if bytes[idx] != b'\\' {
            idx += 1;
            continue;
        }
        let Some(unit) = escape_at(idx) else {
            idx += 2;
            continue;
        };
        let is_high = (0xD800..0xDC00).contains(&unit);
        let is_low = (0xDC00..0xE000).contains(&unit);
        if is_high && escape_at(idx + 6).is_some_and(|next| (0xDC00..0xE000).contains(&next)) {
            idx += 12;
            continue;
        }
        if is_high || is_low {
            let out = repaired.get_or_insert_with(|| String::with_capacity(json.len()));
            out.push_str(&json[copied_to..idx]);
            out.push_str("\\ufffd");
            copied_to = idx + 6;
        }
        idx += 6;
    }
    match repaired {
        None => Cow::Borrowed(json),
        Some(mut out) => {
            out.push_str(&json[copied_to..]);
            Cow::Owned(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line is decoded exactly when the tokenizer reads it: nested up to its bound of
    /// 128 levels (one more than serde_json alone takes), with a lone surrogate too, and
    /// refused past it.
    #[test]
    fn decodes_as_deep_as_the_tokenizer_reads() {
        for depth in [1, 126, 127, 128, 129, 400] {
            // The line's object is one level; the array holds the rest.
            let inner = depth - 1;
            for text in ["t", "\\ud83d"] {
                let line = format!(
                    r#"{{"t":"{text}","x":{}1{}}}"#,
                    "[".repeat(inner),
                    "]".repeat(inner)
                );
                let tokenized = crate::json::Reader::new(line.as_bytes())
                    .skip_value()
                    .is_ok();
                assert_eq!(tokenized, depth <= crate::json::MAX_DEPTH, "{depth}");
                assert_eq!(
                    decode_line(line.as_bytes()).is_some(),
                    tokenized,
                    "{depth} {text}"
                );
            }
        }
    }

    fn check(line: &[u8], expected: Option<&str>) {
        let actual = decode_line(line).map(|value| value["t"].as_str().unwrap_or("?").to_owned());
        assert_eq!(
            actual.as_deref(),
            expected,
            "{}",
            String::from_utf8_lossy(line)
        );
    }

    #[test]
    fn decodes_as_pi_reads() {
        check(br#"{"t":"plain"}"#, Some("plain"));
        check(br#"{"t":"a\ud83d\ude00b"}"#, Some("a\u{1F600}b"));
        check(br#"{"t":"cut \ud83d"}"#, Some("cut \u{FFFD}"));
        check(
            br#"{"t":"\ude00 x \ud800\ud800"}"#,
            Some("\u{FFFD} x \u{FFFD}\u{FFFD}"),
        );
        check(br#"{"t":"\\ud800"}"#, Some("\\ud800"));
        check(b"{\"t\":\"bad \xff byte\"}", Some("bad \u{FFFD} byte"));
        check(br#"{"t":"with 1e400","n":1e400}"#, Some("with 1e400"));
        check(br#"{"t":"unterminated"#, None);
        check(b"", None);
        // JSON that is no object is still JSON, and null where it overflows a float.
        assert_eq!(decode_line(b"1e400"), Some(serde_json::Value::Null));
        assert_eq!(decode_line(b" null "), Some(serde_json::Value::Null));
        assert_eq!(decode_lossy(b"{"), serde_json::Value::Null);
    }
}
