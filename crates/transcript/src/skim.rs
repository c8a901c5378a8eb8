//! The two JSON questions `list --long` asks of every session file, the top-level
//! `timestamp` of its last line and the text of a candidate first user message, answered
//! with the workspace's one JSON tokenizer ([`pi_retrospect_read::json::Reader`]) instead of
//! serde.
//!
//! The answers stand in for serde decodings (`activity::StampedLine`,
//! `summary::typed::UserLine`), so a question is answered only when the answer is certainly
//! theirs: the tokenizer accepted the whole line (it accepts what `JSON.parse` accepts, and
//! serde's decodings skip what they do not keep by the same grammar, with no depth limit),
//! and nothing that serde's decoding reads differently was met: a member name of an object
//! the decoding visits that is not ASCII (serde refuses one with invalid UTF-8 or a lone
//! surrogate), a repeated member the answer depends on, such a member of another type than
//! the expected one, or such a string that serde refuses ([`JsonStr::to_strict_text`]:
//! invalid UTF-8, a lone surrogate escape). Then `None` is returned and the caller decodes
//! the line with serde as before.

use std::borrow::Cow;

use pi_retrospect_read::json::{JsonStr, Kind, Reader, Result as JsonResult};

/// Returns the text of a line's top-level `timestamp` member as `activity::StampedLine`
/// decodes it (`Some(None)` when the line is one JSON object without a string `timestamp`),
/// or `None` when the answer is not certainly that decoding's.
pub(crate) fn line_timestamp(line: &[u8]) -> Option<Option<Cow<'_, str>>> {
    let mut reader = Reader::new(line);
    if reader.next_kind().ok()? != Kind::Object {
        return None;
    }
    let mut is_certain = true;
    let mut timestamp = None;
    reader
        .object(|reader, name| {
            is_certain &= name.is_ascii();
            if name != b"timestamp" {
                return reader.skip_value();
            }
            is_certain &= timestamp.is_none();
            timestamp = Some(strict_text(reader, &mut is_certain)?);
            Ok(())
        })
        .ok()?;
    reader.end().ok()?;
    is_certain.then_some(timestamp)
}

/// Returns the text of a line that is a `message` entry with role `user`, as
/// `summary::typed::UserLine` finds it (`Some(None)` when the line is certainly no such entry
/// or its text is blank), or `None` when the answer is not certainly that decoding's.
pub(crate) fn user_message_text(line: &[u8]) -> Option<Option<String>> {
    let mut reader = Reader::new(line);
    if reader.next_kind().ok()? != Kind::Object {
        return None;
    }
    let mut is_certain = true;
    let mut kind = None;
    let mut message = None;
    reader
        .object(|reader, name| {
            match name {
                b"type" => {
                    is_certain &= kind.is_none();
                    kind = Some(strict_text(reader, &mut is_certain)?);
                }
                b"message" => {
                    is_certain &= message.is_none();
                    message = Some(read_message(reader, &mut is_certain)?);
                }
                _ => {
                    is_certain &= name.is_ascii();
                    reader.skip_value()?;
                }
            }
            Ok(())
        })
        .ok()?;
    reader.end().ok()?;
    if !is_certain {
        return None;
    }
    if kind.as_deref() != Some("message") {
        return Some(None);
    }
    let Some(message) = message else {
        return Some(None);
    };
    if message.role.as_deref() != Some("user") {
        return Some(None);
    }
    let text = match message.content {
        None => return Some(None),
        Some(Content::Text(text)) => text.into_owned(),
        Some(Content::Blocks(text)) => text.unwrap_or_default(),
    };
    Some((!text.trim().is_empty()).then_some(text))
}

/// The members of a `message` object that decide its user text.
struct Message<'a> {
    role: Option<Cow<'a, str>>,
    content: Option<Content<'a>>,
}

/// A message's content: one string, or the text blocks of an array joined by newlines
/// (`None` when it has none).
enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Option<String>),
}

/// Reads a string the answer depends on, decoded as serde decodes it; a value of another
/// type, or a string serde refuses, makes the answer uncertain.
fn strict_text<'a>(reader: &mut Reader<'a>, is_certain: &mut bool) -> JsonResult<Cow<'a, str>> {
    let text = reader.string()?.as_ref().and_then(JsonStr::to_strict_text);
    *is_certain &= text.is_some();
    Ok(text.unwrap_or_default())
}

/// Reads a `message` object's role and content, as `typed::Message` does.
fn read_message<'a>(reader: &mut Reader<'a>, is_certain: &mut bool) -> JsonResult<Message<'a>> {
    let mut message = Message {
        role: None,
        content: None,
    };
    let is_object = reader.object(|reader, name| {
        match name {
            b"role" => {
                *is_certain &= message.role.is_none();
                message.role = Some(strict_text(reader, is_certain)?);
            }
            b"content" => {
                *is_certain &= message.content.is_none();
                message.content = Some(read_content(reader, is_certain)?);
            }
            _ => {
                *is_certain &= name.is_ascii();
                reader.skip_value()?;
            }
        }
        Ok(())
    })?;
    *is_certain &= is_object;
    Ok(message)
}

/// Reads a message's content: a string, or an array of block objects whose `text` blocks'
/// texts are joined by newlines. Anything else makes the answer uncertain.
fn read_content<'a>(reader: &mut Reader<'a>, is_certain: &mut bool) -> JsonResult<Content<'a>> {
    if reader.next_kind()? == Kind::String {
        return strict_text(reader, is_certain).map(Content::Text);
    }
    let mut joined: Option<String> = None;
    let is_array = reader.array(|reader| {
        let mut kind = None;
        let mut text = None;
        let is_object = reader.object(|reader, name| {
            match name {
                b"type" => {
                    *is_certain &= kind.is_none();
                    kind = Some(strict_text(reader, is_certain)?);
                }
                // serde decodes a block's text whatever the block's type.
                b"text" => {
                    *is_certain &= text.is_none();
                    text = Some(strict_text(reader, is_certain)?);
                }
                _ => {
                    *is_certain &= name.is_ascii();
                    reader.skip_value()?;
                }
            }
            Ok(())
        })?;
        *is_certain &= is_object;
        if let (Some("text"), Some(text)) = (kind.as_deref(), text) {
            match &mut joined {
                Some(joined) => {
                    joined.push('\n');
                    joined.push_str(&text);
                }
                None => joined = Some(text.into_owned()),
            }
        }
        Ok(())
    })?;
    *is_certain &= is_array;
    Ok(Content::Blocks(joined))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Pi tool result, the usual last line of a session file.
    const TOOL_RESULT: &str = r#"{"type":"message","id":"9433d465","parentId":"1160db19","timestamp":"2026-01-23T23:07:10.059Z","message":{"role":"toolResult","toolCallId":"toolu_6e","toolName":"write","content":[{"type":"text","text":"let module = value(vector, 210);\nlet x = \"quoted\" \\ done\t\u00e9 \u65e5\n"}],"isError":false,"timestamp":1769207348398}}"#;

    /// A Pi user message with string content.
    const USER_STRING: &str = r#"{"type":"message","id":"7cfc2986","parentId":"9d7a600e","timestamp":"2026-01-23T22:31:12.553Z","message":{"role":"user","content":"style record server\nsecond line \u00e9 d\u00e9j\u00e0 vu","timestamp":1769207472553}}"#;

    /// A Pi user message with text and image blocks.
    const USER_BLOCKS: &str = r#"{"type":"message","id":"7cfc2986","parentId":null,"timestamp":"2026-01-23T22:31:12.553Z","message":{"role":"user","content":[{"type":"text","text":"look at this"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"text":"and this","type":"text"}],"timestamp":1769207472553}}"#;

    /// The serde decoding's top-level timestamp (`None` when it refuses the line).
    fn serde_timestamp(line: &[u8]) -> Option<Option<String>> {
        crate::activity::decoded_line(line)
            .map(|stamped| stamped.timestamp.map(std::borrow::Cow::into_owned))
    }

    /// Asserts that, wherever the tokenizer answers, it answers as serde does, and that both
    /// public paths (tokenizer with fall-back) agree with serde alone. Returns whether the
    /// tokenizer answered each question.
    fn check_agrees(line: &[u8]) -> (bool, bool) {
        let shown = String::from_utf8_lossy(line);
        let timestamp = line_timestamp(line);
        if let Some(timestamp) = &timestamp {
            assert_eq!(
                serde_timestamp(line),
                Some(timestamp.as_deref().map(str::to_owned)),
                "timestamp of {shown:?}"
            );
        }
        let stripped = line.strip_suffix(b"\r").unwrap_or(line);
        let stripped = stripped
            .strip_prefix("\u{feff}".as_bytes())
            .unwrap_or(stripped);
        assert_eq!(
            crate::activity::line_timestamp(line),
            crate::activity::decoded_line(stripped).and_then(|stamped| stamped.instant()),
            "instant of {shown:?}"
        );
        let user = user_message_text(line);
        let decoded = crate::summary::decoded_user_message_text(line);
        if let Some(user) = &user {
            assert_eq!(user, &decoded, "user text of {shown:?}");
        }
        assert_eq!(
            crate::summary::user_message_text(line),
            decoded,
            "user text of {shown:?}"
        );
        (timestamp.is_some(), user.is_some())
    }

    fn check_timestamp(line: &str, expected: Option<Option<&str>>) {
        let actual = line_timestamp(line.as_bytes());
        let actual = actual.as_ref().map(|timestamp| timestamp.as_deref());
        assert_eq!(actual, expected, "{line}");
        check_agrees(line.as_bytes());
    }

    fn check_user(line: &str, expected: Option<Option<&str>>) {
        assert_eq!(
            user_message_text(line.as_bytes()),
            expected.map(|text| text.map(str::to_owned)),
            "{line}"
        );
        check_agrees(line.as_bytes());
    }

    #[test]
    fn typical_lines_are_answered() {
        let stamp = Some(Some("2026-01-23T23:07:10.059Z"));
        check_timestamp(TOOL_RESULT, stamp);
        check_user(TOOL_RESULT, Some(None));
        let stamp = Some(Some("2026-01-23T22:31:12.553Z"));
        check_timestamp(USER_STRING, stamp);
        check_user(
            USER_STRING,
            Some(Some("style record server\nsecond line é déjà vu")),
        );
        check_timestamp(USER_BLOCKS, stamp);
        check_user(USER_BLOCKS, Some(Some("look at this\nand this")));
        // White space between tokens is answered, as JSON has it (space, tab, CR, LF).
        check_timestamp(
            " { \"timestamp\" : \"t\" , \"a\" : [ 1 , { } , [ ] , -0.5e+3 ] } ",
            Some(Some("t")),
        );
        check_timestamp(
            " {\t\"timestamp\" :\r\n\"t\" , \"a\" : [ 1 , { } , [ ] , -0.5e+3 ] }\r",
            Some(Some("t")),
        );
    }

    #[test]
    fn timestamp_answers_and_fall_backs() {
        let cases: &[(&str, Option<Option<&str>>)] = &[
            (r#"{"type":"message"}"#, Some(None)),
            (r#"{}"#, Some(None)),
            (
                r#"{"timestamp":"a","x":"\u00e9\ud83d\ude00 \ud800"}"#,
                Some(Some("a")),
            ),
            (
                "{\"timestamp\":\"a\",\"x\":\"\u{e9} \u{1f600}\"}",
                Some(Some("a")),
            ),
            (r#"{"timestamp":5}"#, None),
            (r#"{"timestamp":null}"#, None),
            (r#"{"timestamp":"a","timestamp":"b"}"#, None),
            (r#"{"time\u0073tamp":"a"}"#, Some(Some("a"))),
            (
                r#"{"timestamp":"2026-01-23T23:07:10.059\u005a"}"#,
                Some(Some("2026-01-23T23:07:10.059Z")),
            ),
            (r#"{"timestamp":"\ud83d\ude00"}"#, Some(Some("\u{1f600}"))),
            (r#"{"timestamp":"\ud83d"}"#, None),
            (r#"{"t\u00e9":1,"timestamp":"a"}"#, None),
            (r#"{"timestamp":"a"} x"#, None),
            (r#"{"timestamp":"a",}"#, None),
            (r#"{"timestamp":"a","n":01}"#, None),
            (r#"{"timestamp":"a","n":1.}"#, None),
            (r#"{"timestamp":"a","n":1e400}"#, Some(Some("a"))),
            (r#"{"timestamp":"a","n":nul}"#, None),
            (r#"["timestamp","a"]"#, None),
            (r#"{"timestamp":"a","x":"\q"}"#, None),
            ("{\"timestamp\":\"a\",\"x\":\"\t\"}", None),
        ];
        for &(line, expected) in cases {
            check_timestamp(line, expected);
        }
        // Skipped strings are not checked as UTF-8, by serde either; kept ones are.
        let line = b"{\"timestamp\":\"a\",\"x\":\"\xff\"}";
        assert_eq!(line_timestamp(line), Some(Some(Cow::Borrowed("a"))));
        check_agrees(line);
        let line = b"{\"timestamp\":\"a\xff\"}";
        assert!(line_timestamp(line).is_none());
        check_agrees(line);
    }

    /// The tokenizer refuses nesting deeper than 128 levels (the line's object and 127 inside
    /// it); serde's skip of an ignored value has no bound, so such a line is left to it.
    #[test]
    fn nesting_beyond_the_bound_falls_back() {
        for (depth, is_answered) in [
            (1, true),
            (64, true),
            (127, true),
            (128, false),
            (200, false),
        ] {
            for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
                let line = format!(
                    "{{\"timestamp\":\"t\",\"deep\":{}1{}}}",
                    open.repeat(depth),
                    close.repeat(depth)
                );
                let expected = is_answered.then_some(Some("t"));
                check_timestamp(&line, expected);
            }
        }
    }

    #[test]
    fn user_text_answers_and_fall_backs() {
        let cases: &[(&str, Option<Option<&str>>)] = &[
            (
                r#"{"type":"message","message":{"role":"user","content":"hi"}}"#,
                Some(Some("hi")),
            ),
            (
                r#"{"message":{"content":"hi","role":"user"},"type":"message"}"#,
                Some(Some("hi")),
            ),
            (
                r#"{"type":"message","message":{"role":"user","content":"\"\\\/\b\f\n\r\t\u0000\uffff"}}"#,
                Some(Some("\"\\/\u{8}\u{c}\n\r\t\u{0}\u{ffff}")),
            ),
            (
                r#"{"type":"message","message":{"role":"user","content":" \n "}}"#,
                Some(None),
            ),
            (
                r#"{"type":"message","message":{"role":"user","content":[]}}"#,
                Some(None),
            ),
            (
                r#"{"type":"message","message":{"role":"user","content":[{"type":"text"},{"text":"no type"},{"type":"image","text":"i"}]}}"#,
                Some(None),
            ),
            (
                r#"{"type":"message","message":{"role":"assistant","content":"x"}}"#,
                Some(None),
            ),
            (
                r#"{"type":"custom","message":{"role":"user","content":"x"}}"#,
                Some(None),
            ),
            (r#"{"message":{"role":"user","content":"x"}}"#, Some(None)),
            (r#"{"type":"message"}"#, Some(None)),
            (
                r#"{"type":"message","message":{"role":"user"}}"#,
                Some(None),
            ),
            // Escapes, a surrogate pair included, are decoded as serde decodes them.
            (
                r#"{"type":"message","message":{"role":"user","content":"\ud83d\ude00"}}"#,
                Some(Some("\u{1f600}")),
            ),
            (
                r#"{"type":"message","message":{"role":"\u0075ser","content":"x"}}"#,
                Some(Some("x")),
            ),
            (
                r#"{"typ\u0065":"message","message":{"role":"user","content":"x"}}"#,
                Some(Some("x")),
            ),
            // Left to serde: lone surrogates in relevant strings, names that are not ASCII,
            // other types, repeated keys, broken lines.
            (
                r#"{"type":"message","message":{"role":"user","t\u00e9xt":1,"content":"x"}}"#,
                None,
            ),
            (
                r#"{"type":"message","message":{"role":"user","content":"\ud800"}}"#,
                None,
            ),
            (
                r#"{"type":"message","message":{"role":"user","content":"x","n":"\ud800"}}"#,
                Some(Some("x")),
            ),
            (
                r#"{"type":"message","message":{"role":"user","content":null}}"#,
                None,
            ),
            (
                r#"{"type":"message","message":{"role":"user","content":{"text":"x"}}}"#,
                None,
            ),
            (
                r#"{"type":"message","message":{"role":"user","content":[5]}}"#,
                None,
            ),
            (
                r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":5}]}}"#,
                None,
            ),
            // A block's text is decoded by serde whatever its type.
            (
                r#"{"type":"message","message":{"role":"user","content":[{"type":"image","text":"\ud800"},{"type":"text","text":"x"}]}}"#,
                None,
            ),
            (r#"{"type":"message","message":null}"#, None),
            (
                r#"{"type":"message","type":"message","message":{"role":"user","content":"x"}}"#,
                None,
            ),
            (
                r#"{"type":"message","message":{"role":"user","role":"user","content":"x"}}"#,
                None,
            ),
            (
                r#"{"type":"message","message":{"role":"user","content":[{"type":"text","type":"text","text":"x"}]}}"#,
                None,
            ),
            (
                r#"{"type":"message","message":{"role":"user","content":"x"}} x"#,
                None,
            ),
            (r#"["message",{"role":"user","content":"x"}]"#, None),
        ];
        for &(line, expected) in cases {
            check_user(line, expected);
        }
        // Invalid UTF-8 in a kept string is left to serde's lossy fall-back.
        let line = b"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\xffb\"}}";
        assert_eq!(user_message_text(line), None);
        check_agrees(line);
    }

    #[test]
    fn every_truncation_and_byte_mutation_of_typical_lines_agrees() {
        let replacements = [
            b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b' ', b'\n', b'\t', 0x01, 0x7f, 0xff,
            b'u', b'0', b'e', b'.', b'-', b'x',
        ];
        for line in [TOOL_RESULT, USER_STRING, USER_BLOCKS] {
            let line = line.as_bytes();
            for end in 0..line.len() {
                check_agrees(&line[..end]);
            }
            for at in 0..line.len() {
                let mut mutated = line.to_vec();
                mutated.remove(at);
                check_agrees(&mutated);
                for &byte in &replacements {
                    mutated.clone_from(&line.to_vec());
                    mutated[at] = byte;
                    check_agrees(&mutated);
                    mutated.insert(at, byte);
                    check_agrees(&mutated);
                }
            }
        }
    }

    /// Builds JSON-ish lines from a stream of choices: Pi-like entries in `clean` mode (what
    /// the tokenizer must answer), anything that can go wrong otherwise.
    struct LineBuilder<'c> {
        choices: &'c [u16],
        idx: usize,
        is_clean: bool,
        /// How rare dirty branches are (one in this many).
        dirt_rate: usize,
        out: Vec<u8>,
    }

    impl LineBuilder<'_> {
        fn pick(&mut self, n_options: usize) -> usize {
            // The choices are read round and round: every count and depth is bounded, so a
            // line ends whatever they hold.
            let choice = match self.choices.len() {
                0 => 0,
                n_choices => self.choices[self.idx % n_choices],
            };
            self.idx += 1;
            usize::from(choice) % n_options
        }

        /// Writes one of `clean`, or on a dirty turn one of `dirty`.
        fn one_of(&mut self, clean: &[&[u8]], dirty: &[&[u8]]) {
            let piece = if !dirty.is_empty() && self.is_dirty_turn() {
                dirty[self.pick(dirty.len())]
            } else {
                clean[self.pick(clean.len())]
            };
            self.out.extend_from_slice(piece);
        }

        /// Writes one of `options`.
        fn write_any(&mut self, options: &[&[u8]]) {
            let piece = options[self.pick(options.len())];
            self.out.extend_from_slice(piece);
        }

        /// Whether to take a dirty branch: never in clean mode, else once in `dirt_rate`.
        fn is_dirty_turn(&mut self) -> bool {
            !self.is_clean && self.pick(self.dirt_rate) == 0
        }

        fn whitespace(&mut self) {
            self.one_of(
                &[b"", b"", b"", b"", b"", b" ", b"  "],
                // JSON's other white space (tab, LF, CR) and bytes that only look like it.
                &[b"\t", b"\n", b"\r", b"\x0c", b"\x0b", b"\xc2\xa0", b"\x00"],
            );
        }

        fn text(&mut self) {
            self.out.push(b'"');
            let n_pieces = self.pick(8);
            for _ in 0..n_pieces {
                self.one_of(
                    &[
                        b"hello",
                        b" world",
                        b"let x = value(vector, 210);",
                        b"\\n",
                        b"\\t",
                        b"\\\"",
                        b"\\\\",
                        b"\\/",
                        b"\\r",
                        b"\\b",
                        b"\\f",
                        b"\xc3\xa9",
                        b"\xe6\x97\xa5",
                        b"\xf0\x9f\x98\x80",
                        b"\\u00e9",
                        b"\\u0041",
                        b"\\u65E5",
                        b"\\u0000",
                        b"user",
                        b"text",
                        b"0123456789abcdef",
                    ],
                    &[
                        b"\\ud83d\\ude00",
                        b"\\ud800",
                        b"\\udc00x",
                        b"\\uZZZZ",
                        b"\\u12",
                        b"\\x",
                        b"\\",
                        b"\x01",
                        b"\x1f",
                        b"\x7f",
                        b"\xff",
                        b"\xc3",
                        b"\xed\xa0\x80",
                        b"\"",
                        b"\n",
                        b"\\U0041",
                    ],
                );
            }
            self.out.push(b'"');
        }

        fn key(&mut self, name: &[u8]) {
            if self.is_dirty_turn() {
                self.write_any(&[
                    b"\"time\\u0073tamp\"",
                    b"\"typ\\u0065\"",
                    b"\"r\\u006fle\"",
                    b"\"t\xc3\xa9xt\"",
                    b"\"\\u0074ext\"",
                ]);
            } else {
                self.out.push(b'"');
                self.out.extend_from_slice(name);
                self.out.push(b'"');
            }
            self.whitespace();
            self.out.push(b':');
            self.whitespace();
        }

        fn number(&mut self) {
            self.one_of(
                &[
                    b"0",
                    b"-1",
                    b"1769207348398",
                    b"1.5",
                    b"2.5e-3",
                    b"1E+2",
                    b"-0.0",
                    b"10",
                ],
                &[
                    b"01", b"1.", b"-", b".5", b"1e", b"1e400", b"+1", b"0x10", b"1.5e", b"--1",
                    b"NaN", b"-01", b"1e+",
                ],
            );
        }

        fn any_value(&mut self, depth: usize) {
            let n_options = if depth == 0 { 4 } else { 7 };
            match self.pick(n_options) {
                0 => self.text(),
                1 => self.number(),
                2 => self.one_of(
                    &[b"true", b"false", b"null"],
                    &[b"nul", b"tru", b"True", b"nulll"],
                ),
                3 if self.is_dirty_turn() => {
                    let depth = [63, 64, 65, 66, 126, 127, 128, 130][self.pick(8)];
                    let (open, close) = if self.pick(2) == 0 {
                        ("[", "]")
                    } else {
                        ("{\"a\":", "}")
                    };
                    self.out.extend_from_slice(open.repeat(depth).as_bytes());
                    self.out.push(b'1');
                    self.out.extend_from_slice(close.repeat(depth).as_bytes());
                }
                3 => self.text(),
                4 | 5 => {
                    let n_members = self.pick(4);
                    self.object_with(n_members, |builder, _| {
                        let key = [b"a".as_slice(), b"text", b"type", b"role", b"timestamp"];
                        let key = key[builder.pick(key.len())];
                        builder.key(key);
                        builder.any_value(depth - 1);
                    });
                }
                _ => {
                    let n_elements = self.pick(4);
                    self.array_with(n_elements, |builder, _| builder.any_value(depth - 1));
                }
            }
        }

        fn separated(
            &mut self,
            open: u8,
            close: u8,
            n_items: usize,
            mut item: impl FnMut(&mut Self, usize),
        ) {
            self.out.push(open);
            self.whitespace();
            for idx in 0..n_items {
                if idx > 0 {
                    self.whitespace();
                    self.one_of(&[b","], &[b",,", b"", b";"]);
                    self.whitespace();
                }
                item(self, idx);
            }
            self.whitespace();
            if n_items > 0 && self.is_dirty_turn() {
                self.out.push(b',');
            }
            self.out.push(close);
        }

        fn object_with(&mut self, n_members: usize, member: impl FnMut(&mut Self, usize)) {
            self.separated(b'{', b'}', n_members, member);
        }

        fn array_with(&mut self, n_elements: usize, element: impl FnMut(&mut Self, usize)) {
            self.separated(b'[', b']', n_elements, element);
        }

        /// Writes one value of a relevant member: mostly the expected shape, sometimes (not
        /// in clean mode) any value at all.
        fn relevant(&mut self, expected: impl FnOnce(&mut Self)) {
            if self.is_dirty_turn() {
                self.any_value(2);
            } else {
                expected(self);
            }
        }

        fn block(&mut self) {
            if self.is_dirty_turn() {
                self.any_value(2);
                return;
            }
            let mut members: Vec<usize> = (0..4).filter(|_| self.pick(8) != 0).collect();
            self.shuffle_and_repeat(&mut members);
            self.object_with(members.len(), |builder, idx| match members[idx] {
                0 => {
                    builder.key(b"type");
                    builder.relevant(|builder| {
                        builder.one_of(
                            &[b"\"text\"", b"\"image\"", b"\"toolCall\""],
                            &[b"\"t\\u0065xt\""],
                        );
                    });
                }
                1 => {
                    builder.key(b"text");
                    builder.relevant(LineBuilder::text);
                }
                _ => {
                    builder.key(b"data");
                    builder.any_value(2);
                }
            });
        }

        fn message(&mut self) {
            let mut members: Vec<usize> = (0..5).filter(|_| self.pick(8) != 0).collect();
            self.shuffle_and_repeat(&mut members);
            self.object_with(members.len(), |builder, idx| match members[idx] {
                0 => {
                    builder.key(b"role");
                    builder.relevant(|builder| {
                        builder.one_of(
                            &[
                                b"\"user\"",
                                b"\"user\"",
                                b"\"user\"",
                                b"\"user\"",
                                b"\"assistant\"",
                                b"\"toolResult\"",
                            ],
                            &[b"\"\\u0075ser\""],
                        );
                    });
                }
                1 => {
                    builder.key(b"content");
                    builder.relevant(|builder| {
                        if builder.pick(2) == 0 {
                            builder.text();
                        } else {
                            let n_blocks = builder.pick(4);
                            builder.array_with(n_blocks, |builder, _| builder.block());
                        }
                    });
                }
                2 => {
                    builder.key(b"timestamp");
                    builder.number();
                }
                _ => {
                    builder.key(b"toolName");
                    builder.any_value(2);
                }
            });
        }

        /// Shuffles member kinds and, in dirty mode, sometimes repeats one.
        fn shuffle_and_repeat(&mut self, members: &mut Vec<usize>) {
            for idx in (1..members.len()).rev() {
                let other = self.pick(idx + 1);
                members.swap(idx, other);
            }
            if !members.is_empty() && self.is_dirty_turn() {
                let repeated = members[self.pick(members.len())];
                let at = self.pick(members.len() + 1);
                members.insert(at, repeated);
            }
        }

        fn entry(&mut self) {
            if self.is_dirty_turn() {
                self.write_any(&[b"\xef\xbb\xbf", b"x", b"[", b"\"", b"1"]);
            }
            self.whitespace();
            let mut members: Vec<usize> = (0..6).filter(|_| self.pick(8) != 0).collect();
            self.shuffle_and_repeat(&mut members);
            self.object_with(members.len(), |builder, idx| match members[idx] {
                0 => {
                    builder.key(b"type");
                    builder.relevant(|builder| {
                        builder.one_of(
                            &[
                                b"\"message\"",
                                b"\"message\"",
                                b"\"message\"",
                                b"\"message\"",
                                b"\"custom\"",
                                b"\"session_info\"",
                            ],
                            &[b"\"mess\\u0061ge\"", b"\"mess\xffage\""],
                        );
                    });
                }
                1 => {
                    builder.key(b"timestamp");
                    builder.relevant(|builder| {
                        builder.one_of(
                            &[
                                b"\"2026-01-23T23:07:10.059Z\"",
                                b"\"2026-01-23T23:07:10+01:00\"",
                                b"\"yesterday\"",
                            ],
                            &[
                                b"\"2026-01-23T23:07:10.059\\u005a\"",
                                b"\"2026-01-23T23:07:10\xff\"",
                            ],
                        );
                    });
                }
                2 => {
                    builder.key(b"message");
                    builder.relevant(LineBuilder::message);
                }
                3 => {
                    builder.key(b"id");
                    builder.text();
                }
                4 => {
                    builder.key(b"parentId");
                    builder.one_of(&[b"null", b"\"1160db19\""], &[]);
                }
                _ => {
                    builder.key(b"extra");
                    builder.any_value(3);
                }
            });
            self.whitespace();
            if self.is_dirty_turn() {
                self.write_any(&[b"x", b"}", b"{}", b"\r", b"\x00"]);
            }
        }
    }

    /// Returns the line built from `choices`.
    fn build_line(choices: &[u16], is_clean: bool) -> Vec<u8> {
        let mut builder = LineBuilder {
            choices,
            idx: 0,
            is_clean,
            dirt_rate: 1,
            out: Vec::new(),
        };
        builder.dirt_rate = [4, 16, 64, 256][builder.pick(4)];
        builder.entry();
        builder.out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(768))]

        /// The tokenizer answers every clean Pi-like line, and answers it as serde does.
        #[test]
        fn clean_lines_are_answered_as_serde_answers(
            choices in proptest::collection::vec(proptest::prelude::any::<u16>(), 0..400),
        ) {
            let line = build_line(&choices, true);
            let answered = check_agrees(&line);
            proptest::prop_assert_eq!(answered, (true, true), "{}", String::from_utf8_lossy(&line));
        }

        /// On lines with every kind of damage, the tokenizer with its fall-back answers as
        /// serde alone does.
        #[test]
        fn dirty_lines_agree_with_serde(
            choices in proptest::collection::vec(proptest::prelude::any::<u16>(), 0..400),
        ) {
            check_agrees(&build_line(&choices, false));
        }

        /// Truncations and single-byte mutations of clean lines agree with serde.
        #[test]
        fn mutated_lines_agree_with_serde(
            choices in proptest::collection::vec(proptest::prelude::any::<u16>(), 0..400),
            at in proptest::prelude::any::<proptest::sample::Index>(),
            byte in proptest::prelude::any::<u8>(),
            mutation in 0..4_u8,
        ) {
            let mut line = build_line(&choices, true);
            let idx = at.index(line.len());
            match mutation {
                0 => line.truncate(idx),
                1 => line[idx] = byte,
                2 => line.insert(idx, byte),
                _ => {
                    line.remove(idx);
                }
            }
            check_agrees(&line);
        }
    }
}
