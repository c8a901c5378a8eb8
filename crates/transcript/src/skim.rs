//! A hand-written skimmer for the two JSON questions `list --long` asks of every session
//! file: the top-level `timestamp` of its last line, and the text of a candidate first user
//! message.
//!
//! serde_json answers both at about 1 GB/s; the skimmer scans strings eight bytes at a time
//! and allocates nothing but the text it returns. It answers only when it is
//! certain: it has checked that the whole line is JSON that the serde decoding it stands in
//! for accepts, and its answer is that decoding's. Everything unusual (a syntax error, a key
//! holding an escape or a non-ASCII byte, a relevant value of an unexpected type, a repeated
//! relevant key, a surrogate escape in a relevant string, a control byte anywhere in the
//! line, nesting deeper than [`MAX_SKIP_DEPTH`]) makes it return `None`, and the caller decodes the line with serde as
//! before. The grammar it accepts is a subset of serde_json's: ignored values follow
//! `Deserializer::ignore_value` (which checks escapes and control bytes but not UTF-8 in the
//! strings it skips), values the serde code keeps are checked as UTF-8 as serde checks them.

/// The deepest nesting the skimmer follows inside a skipped value. serde_json skips ignored
/// values without recursion and without a depth limit, and the visitors the skimmer mirrors
/// recurse at most four levels, so anything within this bound is within serde's 128.
const MAX_SKIP_DEPTH: u32 = 64;

/// Returns the raw text of a line's top-level `timestamp` member as
/// `activity::StampedLine` decodes it (`Some(None)` when the line is one JSON object without a
/// string `timestamp`), or `None` when the skimmer is not certain.
pub(crate) fn line_timestamp(line: &[u8]) -> Option<Option<&str>> {
    if has_control_byte(line) {
        return None;
    }
    let mut skimmer = Skimmer::new(line);
    let mut timestamp = None;
    skimmer.skip_whitespace();
    skimmer.object(|skimmer, key| {
        if key != b"timestamp" {
            return skimmer.skip_value();
        }
        if timestamp.is_some() {
            return None;
        }
        timestamp = Some(skimmer.string_value()?.plain()?);
        Some(())
    })?;
    skimmer.finish()?;
    Some(timestamp)
}

/// Returns the text of a line that is a `message` entry with role `user`, as
/// `summary::typed::UserLine` finds it (`Some(None)` when the line is certainly no such entry
/// or its text is blank), or `None` when the skimmer is not certain.
pub(crate) fn user_message_text(line: &[u8]) -> Option<Option<String>> {
    if has_control_byte(line) {
        return None;
    }
    let mut skimmer = Skimmer::new(line);
    let mut kind = None;
    let mut message = None;
    skimmer.skip_whitespace();
    skimmer.object(|skimmer, key| match key {
        b"type" if kind.is_none() => {
            kind = Some(skimmer.string_value()?.plain()?);
            Some(())
        }
        b"message" if message.is_none() => {
            message = Some(skimmer.message()?);
            Some(())
        }
        b"type" | b"message" => None,
        _ => skimmer.skip_value(),
    })?;
    skimmer.finish()?;
    if kind != Some("message") {
        return Some(None);
    }
    let Some(message) = message else {
        return Some(None);
    };
    if message.role != Some("user") {
        return Some(None);
    }
    let text = match message.content {
        None => return Some(None),
        Some(Content::Text(text)) => {
            let mut decoded = String::with_capacity(text.raw.len());
            text.decode_into(&mut decoded)?;
            decoded
        }
        Some(Content::Blocks(text)) => text.unwrap_or_default(),
    };
    Some((!text.trim().is_empty()).then_some(text))
}

/// The members of a `message` object that decide its user text.
struct Message<'a> {
    role: Option<&'a str>,
    content: Option<Content<'a>>,
}

/// A message's content: one string, or the text blocks of an array joined by newlines
/// (`None` when it has none).
enum Content<'a> {
    Text(RawStr<'a>),
    Blocks(Option<String>),
}

/// A string's bytes between its quotes, checked as serde_json's `ignore_str` checks them (no
/// control byte, every escape well formed), not yet as UTF-8.
#[derive(Clone, Copy)]
struct RawStr<'a> {
    raw: &'a [u8],
    has_escape: bool,
}

impl<'a> RawStr<'a> {
    /// Returns the text when it holds no escape and is UTF-8.
    fn plain(self) -> Option<&'a str> {
        if self.has_escape {
            return None;
        }
        std::str::from_utf8(self.raw).ok()
    }

    /// Returns whether serde_json decodes the string into a `str`: UTF-8, and no surrogate
    /// escape (those are left to serde).
    fn is_decodable(self) -> bool {
        decode(self.raw, |_| {}).is_some()
    }

    /// Appends the decoded text to `out`; `None` (with part of it appended) when the string
    /// is not [`RawStr::is_decodable`].
    fn decode_into(self, out: &mut String) -> Option<()> {
        decode(self.raw, |text| out.push_str(text))
    }
}

/// Hands the decoded text of a string's raw bytes to `push`, piece by piece: UTF-8 stretches
/// and the simple escapes and non-surrogate `\u` escapes between them. Returns `None` on
/// anything else.
fn decode(raw: &[u8], mut push: impl FnMut(&str)) -> Option<()> {
    let mut rest = raw;
    while let Some(backslash) = memchr::memchr(b'\\', rest) {
        push(std::str::from_utf8(&rest[..backslash]).ok()?);
        let (decoded, length) = match *rest.get(backslash + 1)? {
            b'"' => ('"', 2),
            b'\\' => ('\\', 2),
            b'/' => ('/', 2),
            b'b' => ('\u{8}', 2),
            b'f' => ('\u{c}', 2),
            b'n' => ('\n', 2),
            b'r' => ('\r', 2),
            b't' => ('\t', 2),
            b'u' => {
                let code = hex_value(rest.get(backslash + 2..backslash + 6)?)?;
                // `from_u32` refuses surrogates, which serde pairs or rejects: left to it.
                (char::from_u32(code)?, 6)
            }
            _ => return None,
        };
        push(decoded.encode_utf8(&mut [0; 4]));
        rest = &rest[backslash + length..];
    }
    push(std::str::from_utf8(rest).ok()?);
    Some(())
}

/// Returns the value of four hexadecimal digits.
fn hex_value(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0, |value, &digit| {
        Some(value * 16 + char::from(digit).to_digit(16)?)
    })
}

/// Returns whether `line` holds a byte below 0x20. Pi writes none (JSON escapes them in
/// strings, and it puts no whitespace between tokens), and a line without them lets a string
/// be scanned for its two other special bytes only ([`clean_stretch`]); a line with them is
/// left to serde. The fold has no early exit, so the compiler turns it into vector compares.
fn has_control_byte(line: &[u8]) -> bool {
    line.iter()
        .fold(false, |found, &byte| found | (byte < 0x20))
}

/// Returns the length of the stretch at the start of `bytes` before its first quote or
/// backslash (all of it when there is none), in a line without control bytes
/// ([`has_control_byte`]). Eight bytes are tested at a time with word arithmetic: in
/// `(word - 0x01..01) & !word & 0x80..80`, the lowest set bit marks the first zero byte
/// exactly (a borrow only carries into the bytes above it), so XOR-ing the word with a
/// repeated quote or backslash first finds that byte. Most of a line's strings are a few
/// bytes long, which a byte loop would take one by one and a library search would pay a
/// call for.
fn clean_stretch(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
    const BACKSLASHES: u64 = u64::from_ne_bytes([b'\\'; 8]);
    let zero_bytes = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS;
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        // Little-endian, so that the lowest set bit belongs to the first byte.
        let word = u64::from_le_bytes(word);
        let special = zero_bytes(word ^ QUOTES) | zero_bytes(word ^ BACKSLASHES);
        if special != 0 {
            return at + (special.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    bytes[at..]
        .iter()
        .position(|&byte| byte == b'"' || byte == b'\\')
        .map_or(bytes.len(), |offset| at + offset)
}

/// A cursor over one line. Every method returns `None` as soon as it is not certain, leaving
/// the cursor anywhere: the caller then gives up on the line.
struct Skimmer<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Skimmer<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Skimmer { bytes, pos: 0 }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Moves past the JSON whitespace (space, tab, LF, CR) at the cursor.
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// Checks that nothing but whitespace follows the cursor, as `Deserializer::end` does.
    fn finish(&mut self) -> Option<()> {
        self.skip_whitespace();
        (self.pos == self.bytes.len()).then_some(())
    }

    /// Reads the object at the cursor, handing each member's key to `visit` with the cursor at
    /// the member's value (whitespace skipped); `visit` reads the value. Keys must be ASCII
    /// without escapes: serde compares visited keys after decoding them as UTF-8.
    fn object(&mut self, mut visit: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        if self.peek()? != b'{' {
            return None;
        }
        self.pos += 1;
        self.skip_whitespace();
        if self.peek()? == b'}' {
            self.pos += 1;
            return Some(());
        }
        loop {
            let key = self.string_value()?;
            if key.has_escape || !key.raw.is_ascii() {
                return None;
            }
            self.colon()?;
            visit(self, key.raw)?;
            self.skip_whitespace();
            match self.peek()? {
                b',' => {
                    self.pos += 1;
                    self.skip_whitespace();
                }
                b'}' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Moves past the `:` after a key and the whitespace around it.
    fn colon(&mut self) -> Option<()> {
        self.skip_whitespace();
        if self.peek()? != b':' {
            return None;
        }
        self.pos += 1;
        self.skip_whitespace();
        Some(())
    }

    /// Reads the string at the cursor (which must be one).
    fn string_value(&mut self) -> Option<RawStr<'a>> {
        if self.peek()? != b'"' {
            return None;
        }
        self.pos += 1;
        self.string_rest()
    }

    /// Reads a string whose opening quote is behind the cursor, through its closing quote.
    fn string_rest(&mut self) -> Option<RawStr<'a>> {
        let start = self.pos;
        let mut has_escape = false;
        loop {
            self.pos += clean_stretch(&self.bytes[self.pos..]);
            match self.peek()? {
                b'"' => {
                    let raw = &self.bytes[start..self.pos];
                    self.pos += 1;
                    return Some(RawStr { raw, has_escape });
                }
                b'\\' => {
                    has_escape = true;
                    self.escape()?;
                }
                _ => return None,
            }
        }
    }

    /// Moves past the escape at the cursor when it is one `ignore_escape` accepts.
    fn escape(&mut self) -> Option<()> {
        let length = match *self.bytes.get(self.pos + 1)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
            b'u' => {
                let digits = self.bytes.get(self.pos + 2..self.pos + 6)?;
                if !digits.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                6
            }
            _ => return None,
        };
        self.pos += length;
        Some(())
    }

    /// Moves past the literal `word` at the cursor.
    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if !self.bytes[self.pos..].starts_with(word) {
            return None;
        }
        self.pos += word.len();
        Some(())
    }

    /// Moves past the digits at the cursor; returns whether there was one.
    fn digits(&mut self) -> bool {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos > start
    }

    /// Moves past the number at the cursor, spelled as `ignore_integer`, `ignore_decimal` and
    /// `ignore_exponent` accept it (what follows is checked by the caller's grammar).
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek()? {
            b'0' => {
                self.pos += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return None;
                }
            }
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !self.digits() {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !self.digits() {
                return None;
            }
        }
        Some(())
    }

    /// Moves past a key of a skipped object (checked as `ignore_str` checks it) and its
    /// colon.
    fn skipped_key(&mut self) -> Option<()> {
        self.string_value()?;
        self.colon()
    }

    /// Moves past the value at the cursor, checked as `Deserializer::ignore_value` checks it,
    /// without recursion: a counter and a bit stack (set for an object) track the nesting.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0;
        let mut is_object: u64 = 0;
        loop {
            self.skip_whitespace();
            let mut is_closed = false;
            match self.peek()? {
                open @ (b'{' | b'[') => {
                    if depth == MAX_SKIP_DEPTH {
                        return None;
                    }
                    self.pos += 1;
                    self.skip_whitespace();
                    let close = if open == b'{' { b'}' } else { b']' };
                    if self.peek()? == close {
                        self.pos += 1;
                        is_closed = true;
                    } else {
                        depth += 1;
                        is_object = (is_object << 1) | u64::from(open == b'{');
                        if open == b'{' {
                            self.skipped_key()?;
                        }
                    }
                }
                b'"' => {
                    self.pos += 1;
                    self.string_rest()?;
                    is_closed = true;
                }
                b't' => {
                    self.literal(b"true")?;
                    is_closed = true;
                }
                b'f' => {
                    self.literal(b"false")?;
                    is_closed = true;
                }
                b'n' => {
                    self.literal(b"null")?;
                    is_closed = true;
                }
                b'-' | b'0'..=b'9' => {
                    self.number()?;
                    is_closed = true;
                }
                _ => return None,
            }
            if !is_closed {
                continue;
            }
            // A value ended: close containers until one goes on with a comma.
            loop {
                if depth == 0 {
                    return Some(());
                }
                self.skip_whitespace();
                let is_in_object = is_object & 1 == 1;
                match self.peek()? {
                    b',' => {
                        self.pos += 1;
                        if is_in_object {
                            self.skip_whitespace();
                            self.skipped_key()?;
                        }
                        break;
                    }
                    b'}' if is_in_object => {}
                    b']' if !is_in_object => {}
                    _ => return None,
                }
                self.pos += 1;
                depth -= 1;
                is_object >>= 1;
            }
        }
    }

    /// Reads a `message` object's role and content, as `typed::Message` does.
    fn message(&mut self) -> Option<Message<'a>> {
        let mut role = None;
        let mut content = None;
        self.object(|skimmer, key| match key {
            b"role" if role.is_none() => {
                role = Some(skimmer.string_value()?.plain()?);
                Some(())
            }
            b"content" if content.is_none() => {
                content = Some(skimmer.content()?);
                Some(())
            }
            b"role" | b"content" => None,
            _ => skimmer.skip_value(),
        })?;
        Some(Message { role, content })
    }

    /// Reads a message's content: a string, or an array of block objects whose `text`
    /// blocks' texts are joined by newlines. Anything else is left to serde.
    fn content(&mut self) -> Option<Content<'a>> {
        match self.peek()? {
            b'"' => {
                let text = self.string_value()?;
                text.is_decodable().then_some(Content::Text(text))
            }
            b'[' => {
                self.pos += 1;
                self.skip_whitespace();
                let mut joined = None;
                if self.peek()? == b']' {
                    self.pos += 1;
                    return Some(Content::Blocks(joined));
                }
                loop {
                    self.block(&mut joined)?;
                    self.skip_whitespace();
                    match self.peek()? {
                        b',' => {
                            self.pos += 1;
                            self.skip_whitespace();
                        }
                        b']' => {
                            self.pos += 1;
                            return Some(Content::Blocks(joined));
                        }
                        _ => return None,
                    }
                }
            }
            _ => None,
        }
    }

    /// Reads one content block (an object, as `typed::Block` reads it) and appends its text
    /// to `joined` when it is a `text` block with a text.
    fn block(&mut self, joined: &mut Option<String>) -> Option<()> {
        let mut kind = None;
        let mut text = None;
        self.object(|skimmer, key| match key {
            b"type" if kind.is_none() => {
                kind = Some(skimmer.string_value()?.plain()?);
                Some(())
            }
            b"text" if text.is_none() => {
                let value = skimmer.string_value()?;
                text = Some(value.is_decodable().then_some(value)?);
                Some(())
            }
            b"type" | b"text" => None,
            _ => skimmer.skip_value(),
        })?;
        if let (Some("text"), Some(text)) = (kind, text) {
            match joined {
                Some(joined) => {
                    joined.push('\n');
                    text.decode_into(joined)?;
                }
                None => {
                    let mut first = String::with_capacity(text.raw.len());
                    text.decode_into(&mut first)?;
                    *joined = Some(first);
                }
            }
        }
        Some(())
    }
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

    /// Asserts that, wherever the skimmer answers, it answers as serde does, and that both
    /// public paths (skimmer with fall-back) agree with serde alone. Returns whether the
    /// skimmer answered each question.
    fn check_agrees(line: &[u8]) -> (bool, bool) {
        let shown = String::from_utf8_lossy(line);
        let timestamp = line_timestamp(line);
        if let Some(timestamp) = timestamp {
            assert_eq!(
                serde_timestamp(line),
                Some(timestamp.map(str::to_owned)),
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
        assert_eq!(line_timestamp(line.as_bytes()), expected, "{line}");
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
        // Spaces between tokens are answered; other JSON whitespace (tab, CR, LF) is a control
        // byte, which Pi never writes, and is left to serde.
        check_timestamp(
            " { \"timestamp\" : \"t\" , \"a\" : [ 1 , { } , [ ] , -0.5e+3 ] } ",
            Some(Some("t")),
        );
        check_timestamp(
            " {\t\"timestamp\" :\r\n\"t\" , \"a\" : [ 1 , { } , [ ] , -0.5e+3 ] }\r",
            None,
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
            (r#"{"time\u0073tamp":"a"}"#, None),
            (r#"{"timestamp":"2026-01-23T23:07:10.059\u005a"}"#, None),
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
        assert_eq!(line_timestamp(line), Some(Some("a")));
        check_agrees(line);
        let line = b"{\"timestamp\":\"a\xff\"}";
        assert_eq!(line_timestamp(line), None);
        check_agrees(line);
    }

    #[test]
    fn nesting_beyond_the_bound_falls_back() {
        for (depth, is_answered) in [(1, true), (64, true), (65, false), (200, false)] {
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
            // Left to serde: surrogates, escaped keys and relevant values, other types,
            // repeated keys, broken lines.
            (
                r#"{"type":"message","message":{"role":"user","content":"\ud83d\ude00"}}"#,
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
                r#"{"type":"message","message":{"role":"\u0075ser","content":"x"}}"#,
                None,
            ),
            (
                r#"{"typ\u0065":"message","message":{"role":"user","content":"x"}}"#,
                None,
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
    /// the skimmer must answer), anything that can go wrong otherwise.
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
                // JSON whitespace too, but a control byte: the skimmer leaves it to serde.
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
                    let depth = [63, 64, 65, 66, 130][self.pick(5)];
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
        /// The eight-bytes-at-a-time scan stops where a byte-by-byte one does, whatever
        /// bytes are around the quote or backslash (high bytes, the bytes one above and below
        /// them, which word arithmetic could confuse) and wherever in a word it is.
        #[test]
        fn clean_stretch_stops_at_the_first_quote_or_backslash(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::prelude::Just(b'"'),
                    proptest::prelude::Just(b'\\'),
                    proptest::prelude::Just(b'"' + 1),
                    proptest::prelude::Just(b'"' - 1),
                    proptest::prelude::Just(b'\\' + 1),
                    proptest::prelude::Just(b'\\' - 1),
                    proptest::prelude::Just(0x80u8),
                    proptest::prelude::Just(0xffu8),
                    0x20u8..=0xff,
                ],
                0..40,
            ),
            start in 0usize..8,
        ) {
            let bytes = &bytes[start.min(bytes.len())..];
            let expected = bytes
                .iter()
                .position(|&byte| byte == b'"' || byte == b'\\')
                .unwrap_or(bytes.len());
            proptest::prop_assert_eq!(clean_stretch(bytes), expected);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(768))]

        /// The skimmer answers every clean Pi-like line, and answers it as serde does.
        #[test]
        fn clean_lines_are_answered_as_serde_answers(
            choices in proptest::collection::vec(proptest::prelude::any::<u16>(), 0..400),
        ) {
            let line = build_line(&choices, true);
            let answered = check_agrees(&line);
            proptest::prop_assert_eq!(answered, (true, true), "{}", String::from_utf8_lossy(&line));
        }

        /// On lines with every kind of damage, the skimmer with its fall-back answers as serde
        /// alone does.
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
