//! Decoding one line as Pi's reader does: strict JSON first, then, for what JavaScript's
//! `JSON.parse` accepts but a strict parser refuses (invalid UTF-8, a lone surrogate escape),
//! a repaired copy in which both become U+FFFD.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

/// Returns the two facts of an entry that decide whether it can hold searchable text at all:
/// its `type` and its message's `role`.
///
/// Read with a typed parse that borrows and skips everything else, which is much cheaper than
/// building the whole value of a long tool result. It succeeds only on lines that are valid
/// JSON without a repeated `type`, `message` or `role` key and with the expected types, so on
/// success the full decode would find the same two values.
#[derive(Debug, Deserialize)]
pub(crate) struct Peek<'a> {
    #[serde(rename = "type", borrow)]
    pub entry_type: Cow<'a, str>,
    #[serde(default, borrow)]
    pub message: Option<PeekMessage<'a>>,
}

/// Returns the role of a [`Peek`]'s message.
#[derive(Debug, Deserialize)]
pub(crate) struct PeekMessage<'a> {
    #[serde(default, borrow)]
    pub role: Option<Cow<'a, str>>,
}

/// Returns the type and role of `line`, or `None` when the typed parse refuses it (the full
/// decode then decides).
pub(crate) fn peek_line(line: &[u8]) -> Option<Peek<'_>> {
    serde_json::from_slice(line).ok()
}

/// Returns the JSON value of `line`, or `None` when it is not JSON even after repair.
pub(crate) fn decode_line(line: &[u8]) -> Option<Value> {
    if let Ok(value) = serde_json::from_slice(line) {
        return Some(value);
    }
    let text = String::from_utf8_lossy(line);
    let repaired = repair_lone_surrogates(&text);
    // A number too large for a float (`1e400`) is Infinity to `JSON.parse`: null here, so the
    // line's text is still searched (issue 9).
    serde_json::from_str(&pi_retrospect_core::json_text::replace_overflowing_numbers(
        &repaired,
    ))
    .ok()
}

/// Returns the four hex digits after `\u` at `json[at..]` as a code unit.
fn code_unit_at(json: &str, at: usize) -> Option<u16> {
    let bytes = json.as_bytes();
    if bytes.get(at) != Some(&b'\\') || bytes.get(at + 1) != Some(&b'u') {
        return None;
    }
    u16::from_str_radix(json.get(at + 2..at + 6)?, 16).ok()
}

/// Returns `json` with every `\uD800`-`\uDFFF` escape that is not half of a valid pair
/// written as `\ufffd`. Escape sequences are stepped over whole, so an escaped backslash
/// followed by the text `ud800` is left alone.
fn repair_lone_surrogates(json: &str) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    let mut repaired = String::new();
    let mut copied_to = 0;
    let mut at = 0;
    while let Some(offset) = memchr::memchr(b'\\', &bytes[at..]) {
        at += offset;
        let Some(unit) = code_unit_at(json, at) else {
            at += 2;
            continue;
        };
        let is_high = (0xD800..0xDC00).contains(&unit);
        let is_low = (0xDC00..0xE000).contains(&unit);
        let is_pair = is_high
            && code_unit_at(json, at + 6).is_some_and(|next| (0xDC00..0xE000).contains(&next));
        if is_pair {
            at += 12;
            continue;
        }
        if is_high || is_low {
            repaired.push_str(&json[copied_to..at]);
            repaired.push_str("\\ufffd");
            copied_to = at + 6;
        }
        at += 6;
    }
    if copied_to == 0 {
        return Cow::Borrowed(json);
    }
    repaired.push_str(&json[copied_to..]);
    Cow::Owned(repaired)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn peeks_type_and_role_only_when_unambiguous() {
        let peek = |line: &str| {
            peek_line(line.as_bytes()).map(|peek| {
                let role = peek.message.and_then(|message| message.role);
                (peek.entry_type.into_owned(), role.map(Cow::into_owned))
            })
        };
        let some =
            |kind: &str, role: Option<&str>| Some((kind.to_owned(), role.map(str::to_owned)));
        assert_eq!(
            peek(r#"{"type":"message","message":{"role":"toolResult","content":[]}}"#),
            some("message", Some("toolResult"))
        );
        assert_eq!(
            peek(r#"{"message":{"content":"x","role":"user"},"type":"message"}"#),
            some("message", Some("user"))
        );
        assert_eq!(peek(r#"{"type":"label","label":"x"}"#), some("label", None));
        assert_eq!(
            peek(r#"{"type":"message","message":null}"#),
            some("message", None)
        );
        for refused in [
            r#"{"type":"message","type":"label"}"#,
            r#"{"type":"message","message":{"role":"toolResult","role":"user"}}"#,
            r#"{"type":"message","message":{"role":5}}"#,
            r#"{"type":7}"#,
            r#"{"id":"x"}"#,
            r#"{"type":"message","message":{"role":"toolResult","content":"cut"#,
            "[1]",
        ] {
            assert_eq!(peek(refused), None, "{refused}");
        }
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
    }
}
