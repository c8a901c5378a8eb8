//! Envelope decoding: reads only the fields the tree and context need and passes over the
//! rest (message content, tool output, signatures) without building values for them, with
//! the workspace's one JSON tokenizer ([`pi_retrospect_read::json::Reader`]).
//!
//! The tokenizer accepts what JavaScript's `JSON.parse` accepts, which is what Pi reads each
//! line with, so a line Pi would skip is skipped here too, with a warning: structure is
//! checked fully, every escape must be valid (`\x` or a short `\u12` fails), and a raw control
//! character (U+0000 to U+001F, a TAB included) inside a string fails the line. Two things
//! `JSON.parse` reads are read here as well: invalid UTF-8 (Pi reads the file as UTF-8 text,
//! which turns it into U+FFFD) and a lone surrogate escape (`\ud83d` alone, U+FFFD too).
//!
//! Every field is lenient about its JSON type: a field of an unexpected type reads as absent
//! instead of failing the whole line, because a line that is valid JSON is an entry to Pi.
//! A member name's escapes are decoded, and a repeated name takes its last value, as
//! `JSON.parse` does.

use std::borrow::Cow;

use pi_retrospect_read::json::{JsonError, Kind, Number, Reader, Result as JsonResult};

/// Returns a string field, or `None` when the value is absent or not a string.
#[derive(Debug, Default)]
pub(crate) struct LooseStr<'a>(pub Option<Cow<'a, str>>);

impl LooseStr<'_> {
    pub(crate) fn as_str(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

/// Returns a scalar field read leniently: a bool, a non-negative integer, null, or other.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loose {
    /// The field was absent.
    #[default]
    Absent,
    /// The field was `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A non-negative integer (or a float with an integral value).
    Unsigned(u64),
    /// Anything else: a string, a negative or fractional number, an array or an object.
    Other,
}

/// Returns how a message's `content` is made up, counted without decoding the text.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawShape {
    pub is_string: bool,
    pub n_text: u32,
    pub n_thinking: u32,
    pub n_tool_calls: u32,
    pub n_images: u32,
    pub n_other: u32,
}

/// Returns the envelope of a `message` entry's `message` value.
#[derive(Default)]
pub(crate) struct RawMessage<'a> {
    pub role: LooseStr<'a>,
    pub content: RawShape,
    pub provider: LooseStr<'a>,
    pub model: LooseStr<'a>,
    pub stop_reason: LooseStr<'a>,
    pub tool_name: LooseStr<'a>,
    pub custom_type: LooseStr<'a>,
    pub exclude_from_context: Loose,
    pub is_error: Loose,
}

impl RawMessage<'static> {
    /// A message with no fields: what a `message` entry without a `message` object has.
    pub(crate) const EMPTY: RawMessage<'static> = RawMessage {
        role: LooseStr(None),
        content: RawShape {
            is_string: false,
            n_text: 0,
            n_thinking: 0,
            n_tool_calls: 0,
            n_images: 0,
            n_other: 0,
        },
        provider: LooseStr(None),
        model: LooseStr(None),
        stop_reason: LooseStr(None),
        tool_name: LooseStr(None),
        custom_type: LooseStr(None),
        exclude_from_context: Loose::Absent,
        is_error: Loose::Absent,
    };
}

/// Returns a `message` value, or `None` when the value is not an object.
#[derive(Default)]
pub(crate) struct LooseMessage<'a>(pub Option<RawMessage<'a>>);

/// Returns the envelope of any line: header fields and entry fields share one struct so that
/// each line is decoded exactly once.
#[derive(Default)]
pub(crate) struct RawEnvelope<'a> {
    pub kind: LooseStr<'a>,
    pub id: LooseStr<'a>,
    pub parent_id: LooseStr<'a>,
    pub timestamp: LooseStr<'a>,
    // Header fields.
    pub version: Loose,
    pub cwd: LooseStr<'a>,
    pub parent_session: LooseStr<'a>,
    // Entry fields.
    pub message: LooseMessage<'a>,
    pub first_kept_entry_id: LooseStr<'a>,
    pub first_kept_entry_index: Loose,
    pub system_message: Option<()>,
    pub target_id: LooseStr<'a>,
    pub replacement: Loose,
    pub label: LooseStr<'a>,
    pub name: LooseStr<'a>,
    pub from_id: LooseStr<'a>,
    /// `summary` is truthy as JavaScript sees it (a non-empty string, for what Pi writes).
    pub has_summary: bool,
    pub provider: LooseStr<'a>,
    pub model_id: LooseStr<'a>,
    pub thinking_level: LooseStr<'a>,
    pub custom_type: LooseStr<'a>,
    pub usage_kind: LooseStr<'a>,
    pub display: Loose,
}

/// Returns why a line is not an entry envelope.
#[derive(Debug)]
pub(crate) enum EnvelopeError {
    /// The line is not valid JSON: what was wrong and at which byte.
    Syntax(JsonError),
    /// The line is valid JSON but not an object.
    NotAnObject,
}

/// Returns the envelope of one line.
pub(crate) fn parse_envelope(line: &[u8]) -> Result<RawEnvelope<'_>, EnvelopeError> {
    let mut reader = Reader::new(line);
    let mut envelope = RawEnvelope::default();
    let is_object = reader
        .object(|reader, name| envelope_member(reader, name, &mut envelope))
        .and_then(|is_object| reader.end().map(|()| is_object))
        .map_err(EnvelopeError::Syntax)?;
    match is_object {
        true => Ok(envelope),
        false => Err(EnvelopeError::NotAnObject),
    }
}

/// Reads one member of an entry (or the header) into `envelope`.
fn envelope_member<'a>(
    reader: &mut Reader<'a>,
    name: &[u8],
    envelope: &mut RawEnvelope<'a>,
) -> JsonResult<()> {
    match name {
        b"type" => envelope.kind = loose_str(reader)?,
        b"id" => envelope.id = loose_str(reader)?,
        b"parentId" => envelope.parent_id = loose_str(reader)?,
        b"timestamp" => envelope.timestamp = loose_str(reader)?,
        b"version" => envelope.version = loose(reader)?,
        b"cwd" => envelope.cwd = loose_str(reader)?,
        b"parentSession" => envelope.parent_session = loose_str(reader)?,
        b"message" => envelope.message = message(reader)?,
        b"firstKeptEntryId" => envelope.first_kept_entry_id = loose_str(reader)?,
        b"firstKeptEntryIndex" => envelope.first_kept_entry_index = loose(reader)?,
        b"systemMessage" => {
            envelope.system_message = (loose(reader)? != Loose::Null).then_some(());
        }
        b"targetId" => envelope.target_id = loose_str(reader)?,
        b"replacement" => envelope.replacement = loose(reader)?,
        b"label" => envelope.label = loose_str(reader)?,
        b"name" => envelope.name = loose_str(reader)?,
        b"fromId" => envelope.from_id = loose_str(reader)?,
        b"summary" => envelope.has_summary = truthy(reader)?,
        b"provider" => envelope.provider = loose_str(reader)?,
        b"modelId" => envelope.model_id = loose_str(reader)?,
        b"thinkingLevel" => envelope.thinking_level = loose_str(reader)?,
        b"customType" => envelope.custom_type = loose_str(reader)?,
        b"kind" => envelope.usage_kind = loose_str(reader)?,
        b"display" => envelope.display = loose(reader)?,
        _ => reader.skip_value()?,
    }
    Ok(())
}

/// Returns a `message` value, or `None` (having passed over it) when it is not an object.
fn message<'a>(reader: &mut Reader<'a>) -> JsonResult<LooseMessage<'a>> {
    if reader.next_kind()? != Kind::Object {
        reader.skip_value()?;
        return Ok(LooseMessage(None));
    }
    let mut message = RawMessage::default();
    reader.object(|reader, name| {
        match name {
            b"role" => message.role = loose_str(reader)?,
            b"content" => message.content = content_shape(reader)?,
            b"provider" => message.provider = loose_str(reader)?,
            b"model" => message.model = loose_str(reader)?,
            b"stopReason" => message.stop_reason = loose_str(reader)?,
            b"toolName" => message.tool_name = loose_str(reader)?,
            b"customType" => message.custom_type = loose_str(reader)?,
            b"excludeFromContext" => message.exclude_from_context = loose(reader)?,
            b"isError" => message.is_error = loose(reader)?,
            _ => reader.skip_value()?,
        }
        Ok(())
    })?;
    Ok(LooseMessage(Some(message)))
}

/// Returns how a message's `content` is made up: a string, or an array whose blocks are
/// counted by their `type` (an element that is not an object counts as other).
fn content_shape(reader: &mut Reader<'_>) -> JsonResult<RawShape> {
    let mut shape = RawShape::default();
    match reader.next_kind()? {
        Kind::String => {
            reader.skip_value()?;
            shape.is_string = true;
        }
        Kind::Array => {
            reader.array(|reader| {
                if reader.next_kind()? != Kind::Object {
                    reader.skip_value()?;
                    shape.n_other = shape.n_other.saturating_add(1);
                    return Ok(());
                }
                let mut kind = None;
                reader.object(|reader, name| {
                    match name {
                        b"type" => kind = reader.bytes()?,
                        _ => reader.skip_value()?,
                    }
                    Ok(())
                })?;
                let counter = match kind.as_deref() {
                    Some(b"text") => &mut shape.n_text,
                    Some(b"thinking") => &mut shape.n_thinking,
                    Some(b"toolCall") => &mut shape.n_tool_calls,
                    Some(b"image") => &mut shape.n_images,
                    _ => &mut shape.n_other,
                };
                *counter = counter.saturating_add(1);
                Ok(())
            })?;
        }
        _ => reader.skip_value()?,
    }
    Ok(shape)
}

/// Returns a string value as Pi reads it, or `None` after passing over a value of another
/// type.
fn loose_str<'a>(reader: &mut Reader<'a>) -> JsonResult<LooseStr<'a>> {
    reader.text().map(LooseStr)
}

/// Returns a scalar value read leniently ([`Loose`]), passing over any other.
fn loose(reader: &mut Reader<'_>) -> JsonResult<Loose> {
    let kind = reader.next_kind()?;
    if kind == Kind::Number {
        return Ok(reader.number()?.map_or(Loose::Other, loose_number));
    }
    reader.skip_value()?;
    Ok(match kind {
        Kind::True => Loose::Bool(true),
        Kind::False => Loose::Bool(false),
        Kind::Null => Loose::Null,
        _ => Loose::Other,
    })
}

/// Returns a number read leniently: a non-negative integer, or a float with a small whole
/// value, is [`Loose::Unsigned`]; anything else (a negative integer, `-0` included, a
/// fraction, a number too large) is [`Loose::Other`].
fn loose_number(number: Number) -> Loose {
    match number {
        Number::Unsigned(value) => Loose::Unsigned(value),
        Number::Signed(_) => Loose::Other,
        Number::Float(value) if value.fract() == 0.0 && (0.0..9.0e15).contains(&value) =>
        {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "the range check above keeps the value a small whole number"
            )]
            Loose::Unsigned(value as u64)
        }
        Number::Float(_) => Loose::Other,
    }
}

/// Passes over a value and returns whether JavaScript would find it truthy, so that a field
/// Pi tests with `if (entry.field)` is judged as Pi judges it without decoding its text.
fn truthy(reader: &mut Reader<'_>) -> JsonResult<bool> {
    if reader.next_kind()? == Kind::String {
        return Ok(reader.string()?.is_some_and(|text| !text.is_empty()));
    }
    let value = loose(reader)?;
    Ok(!matches!(
        value,
        Loose::Null | Loose::Bool(false) | Loose::Unsigned(0)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &str, expected: Result<(&str, &str), &str>) {
        let actual = match parse_envelope(line.as_bytes()) {
            Ok(envelope) => Ok((
                envelope.kind.0.unwrap_or_default().into_owned(),
                envelope.id.0.unwrap_or_default().into_owned(),
            )),
            Err(EnvelopeError::NotAnObject) => Err("not an object".to_owned()),
            Err(EnvelopeError::Syntax(_)) => Err("syntax".to_owned()),
        };
        let expected = expected
            .map(|(kind, id)| (kind.to_owned(), id.to_owned()))
            .map_err(str::to_owned);
        assert_eq!(actual, expected, "line {line:?}");
    }

    #[test]
    fn scans_envelopes() {
        check(r#"{"type":"message","id":"a1"}"#, Ok(("message", "a1")));
        check(
            r#" { "type" : "x" , "id" : "a\u0031\n" } "#,
            Ok(("x", "a1\n")),
        );
        check(r#"{"id":"first","id":"last","type":1}"#, Ok(("", "last")));
        check(
            r#"{"type":"m","deep":[1,-2.5e3,true,false,null,{"a":[]},"s\"q"]}"#,
            Ok(("m", "")),
        );
        check(r#"{}"#, Ok(("", "")));
        check(r#"[1,2]"#, Err("not an object"));
        check(r#""text""#, Err("not an object"));
        for bad in [
            "",
            "{",
            r#"{"type":"m""#,
            r#"{"type":"m",}"#,
            r#"{"type" "m"}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":tru}"#,
            r#"{"id":"\x"}"#,
            r#"{"type":"\u12"}"#,
            r#"{} x"#,
            r#"{"a":"unterminated\"}"#,
            r#"{"a\":1}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":-}"#,
            r#"{a:1}"#,
        ] {
            check(bad, Err("syntax"));
        }
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(200), "]".repeat(200));
        check(&deep, Err("syntax"));
    }

    /// A name holding a lone surrogate escape reads with U+FFFD, as `list`
    /// and Pi read it, not as an empty name.
    #[test]
    fn a_lone_surrogate_reads_as_a_replacement_character() {
        let line = r#"{"type":"session_info","name":"lone \ud83d here"}"#;
        let envelope = parse_envelope(line.as_bytes()).unwrap_or_else(|_| panic!("valid"));
        assert_eq!(envelope.name.0.as_deref(), Some("lone \u{fffd} here"));
        let paired = r#"{"type":"session_info","name":"\ud83d\ude00 \u0041"}"#;
        let envelope = parse_envelope(paired.as_bytes()).unwrap_or_else(|_| panic!("valid"));
        assert_eq!(envelope.name.0.as_deref(), Some("😀 A"));
    }

    /// A member name's escapes are decoded before it is compared, as `JSON.parse` decodes
    /// them: `"t\u0079pe"` is the entry's type.
    #[test]
    fn escaped_member_names_are_read_as_json_parse_reads_them() {
        check(r#"{"t\u0079pe":"m","\u0069d":"x"}"#, Ok(("m", "x")));
        check(r#"{"type":"m","id":"x","\u0069d":"y"}"#, Ok(("m", "y")));
    }

    #[test]
    fn reads_message_shapes() {
        let line = r#"{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"x"},{"type":"toolCall","name":"n","arguments":{"a":[1]}},{"type":"image"},7],"isError":true,"excludeFromContext":1}}"#;
        let envelope = parse_envelope(line.as_bytes()).unwrap_or_else(|_| panic!("valid"));
        let message = envelope.message.0.unwrap_or_default();
        assert_eq!(message.role.0.as_deref(), Some("assistant"));
        assert_eq!(
            (
                message.content.n_thinking,
                message.content.n_text,
                message.content.n_tool_calls,
                message.content.n_images,
                message.content.n_other
            ),
            (1, 1, 1, 1, 1)
        );
        assert_eq!(message.is_error, Loose::Bool(true));
        assert_eq!(message.exclude_from_context, Loose::Unsigned(1));
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_serde_json_on_valid_objects(value in arbitrary_json()) {
            let line = serde_json::to_string(&value).unwrap_or_default();
            let parsed = parse_envelope(line.as_bytes());
            match &value {
                serde_json::Value::Object(map) => {
                    let envelope = parsed.map_err(|_| ()).unwrap_or_else(|()| panic!("rejected {line}"));
                    proptest::prop_assert_eq!(
                        envelope.id.0.as_deref(),
                        map.get("id").and_then(serde_json::Value::as_str)
                    );
                    proptest::prop_assert_eq!(
                        envelope.kind.0.as_deref(),
                        map.get("type").and_then(serde_json::Value::as_str)
                    );
                }
                _ => proptest::prop_assert!(matches!(parsed, Err(EnvelopeError::NotAnObject))),
            }
        }

        #[test]
        fn rejects_what_serde_json_rejects_structurally(line in r#"[\[\]{}",:0-9a-z .-]{0,30}"#) {
            let ours = parse_envelope(line.as_bytes());
            let theirs = serde_json::from_str::<serde_json::Value>(&line);
            proptest::prop_assert_eq!(
                ours.is_err() && !matches!(ours, Err(EnvelopeError::NotAnObject)),
                theirs.is_err(),
                "line {:?}", line
            );
        }

        /// Strings are checked as strictly as `JSON.parse` checks them: a control
        /// character or a bad escape fails the line. Only lone surrogates, which `JSON.parse`
        /// reads and serde refuses, are accepted where serde refuses.
        #[test]
        fn strings_are_as_strict_as_json_parse(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "\\", "\\n", "\\u00e9", "\\u12", "\\ud83d", "\\ude00", "\\x",
                    "\\\"", "\t", "\u{1}", "\u{1f}", " ", "\u{7f}", "é", "\\/",
                ]),
                0..8,
            )
        ) {
            let text = parts.concat();
            let line = format!(r#"{{"type":"x","s":"{text}","n":{{"k":["{text}"]}}}}"#);
            let ours = parse_envelope(line.as_bytes()).is_ok();
            let theirs = serde_json::from_str::<serde_json::Value>(&line).is_ok();
            let has_surrogate = text.contains("\\ud83d") || text.contains("\\ude00");
            if has_surrogate {
                proptest::prop_assert!(ours || !theirs, "line {:?}", line);
            } else {
                proptest::prop_assert_eq!(ours, theirs, "line {:?}", line);
            }
        }
    }

    fn arbitrary_json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(|n| serde_json::json!(n)),
            any::<f64>()
                .prop_filter("finite", |n| n.is_finite())
                .prop_map(|n| serde_json::json!(n)),
            "\\PC{0,8}".prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
                proptest::collection::btree_map(
                    prop_oneof![
                        Just("type".to_owned()),
                        Just("id".to_owned()),
                        Just("message".to_owned()),
                        Just("content".to_owned()),
                        "[a-z]{1,4}".prop_map(|s| s)
                    ],
                    inner,
                    0..5
                )
                .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
            ]
        })
    }
}
