//! A cheap first look at one line: its type and role, read without building its value. The
//! full decode, as Pi decodes a line, is `read`'s [`decode_line`](pi_retrospect_read::decode_line).

use std::borrow::Cow;

use serde::Deserialize;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
