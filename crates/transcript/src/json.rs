//! Envelope decoding: reads only the fields the tree and context need and skips the rest
//! (message content, tool output, signatures) without building values for them.
//!
//! This is a small hand-written JSON scanner rather than `serde_json`, because skipping is
//! where the time goes on a 130 MB session: strings are skipped with `memchr` jumps to the next
//! quote or backslash. The grammar is the one JavaScript's `JSON.parse` accepts, which is what
//! Pi reads each line with: structure is checked fully (brackets, commas, colons, literals,
//! numbers, no trailing data), every escape must be valid (`\x` or a short `\u12` fails), and a
//! raw control character (U+0000 to U+001F, a TAB included) inside a string fails the line, so
//! a line Pi would skip is skipped here too, with a warning. Two things `JSON.parse` reads are
//! read here as well: invalid UTF-8 (Pi reads the file as UTF-8 text, which turns it into
//! U+FFFD) and a lone surrogate escape (`\ud83d` alone). Raw control characters are rare, so
//! a line is first checked in one vectorised pass (see `needs_strict_strings`), and only a line
//! that may hold a control character or an odd escape checks its strings byte by byte.
//!
//! Every field is lenient about its JSON type: a field of an unexpected type reads as absent
//! instead of failing the whole line, because a line that is valid JSON is an entry to Pi.
//! A repeated key takes its last value, as `JSON.parse` does.

use std::borrow::Cow;

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
    /// The line is not valid JSON: what was wrong and at which byte column (1-based).
    Syntax(String),
    /// The line is valid JSON but not an object.
    NotAnObject,
}

/// Nesting deeper than this is rejected, as `serde_json` does, to bound recursion.
const MAX_DEPTH: u32 = 128;

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// The line may hold a control byte or an invalid escape, so every string is checked
    /// byte by byte (see [`needs_strict_strings`]).
    is_strict: bool,
}

/// Returns whether the strings of a line must be checked byte by byte: the line holds a
/// control byte (below 0x20) somewhere, or an escape that may be invalid, a backslash that
/// starts an escape (it does not end a pair `\\`) followed by anything but `"`, `\`, `/`,
/// `b`, `f`, `n`, `r` or `t`. A `\u` counts (its digits are not checked here), and so does a
/// backslash ending a run of three or more, so a line this flags is only checked more closely;
/// a line it passes holds neither. One branch-free pass the compiler vectorises: checking each
/// escape as strings are skipped (a `memchr` stop at every backslash, six million in the
/// 128 MiB benchmark session) made opening it 2.5 times slower.
fn needs_strict_strings(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if n < 3 {
        return bytes.iter().any(|&byte| byte < 0x20 || byte == b'\\');
    }
    // Position `i` (from 2 on) with the two bytes before it and the one after it.
    let (before2, before1, here, after) = (
        &bytes[..n - 3],
        &bytes[1..n - 2],
        &bytes[2..n - 1],
        &bytes[3..],
    );
    let is_suspect = |before2: u8, before1: u8, here: u8, after: u8| {
        let is_pair_end = (before1 == b'\\') & (before2 != b'\\');
        let is_plain = matches!(
            after,
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't'
        );
        (here < 0x20) | ((here == b'\\') & !is_plain & !is_pair_end)
    };
    let mut start = 0;
    while start < n - 3 {
        let end = (start + 256).min(n - 3);
        let found = before2[start..end]
            .iter()
            .zip(&before1[start..end])
            .zip(&here[start..end])
            .zip(&after[start..end])
            .fold(false, |found, (((&a, &b), &c), &d)| {
                found | is_suspect(a, b, c, d)
            });
        if found {
            return true;
        }
        start = end;
    }
    // The first two positions and the last, which the pass above does not cover.
    let is_odd = |byte: u8| byte < 0x20 || byte == b'\\';
    bytes[..2].iter().any(|&byte| is_odd(byte)) || is_odd(bytes[n - 1])
}

type ScanResult<T> = Result<T, String>;

impl<'a> Scanner<'a> {
    fn error<T>(&self, what: &str) -> ScanResult<T> {
        if self.pos >= self.bytes.len() {
            Err(format!("{what} at end of line (column {})", self.pos + 1))
        } else {
            Err(format!("{what} at column {}", self.pos + 1))
        }
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.bytes.get(self.pos).copied()
    }

    fn eat(&mut self, wanted: u8, what: &str) -> ScanResult<()> {
        if self.peek() == Some(wanted) {
            self.pos += 1;
            Ok(())
        } else {
            self.error(what)
        }
    }

    /// Returns the raw bytes between the quotes of the string at the cursor, and whether it
    /// holds escapes.
    fn raw_string(&mut self) -> ScanResult<(&'a [u8], bool)> {
        self.eat(b'"', "expected a string")?;
        let start = self.pos;
        let mut has_escape = false;
        loop {
            let rest = &self.bytes[self.pos..];
            let Some(found) = memchr::memchr2(b'"', b'\\', rest) else {
                self.pos = self.bytes.len();
                return self.error("unterminated string");
            };
            self.pos += found;
            if self.bytes[self.pos] == b'"' {
                let raw = &self.bytes[start..self.pos];
                if self.is_strict
                    && let Some(at) = raw.iter().position(|&byte| byte < 0x20)
                {
                    self.pos = start + at;
                    return self.error("control character in string");
                }
                self.pos += 1;
                return Ok((raw, has_escape));
            }
            has_escape = true;
            match self.bytes.get(self.pos + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.pos += 2,
                Some(b'u') => {
                    let digits = self.bytes.get(self.pos + 2..self.pos + 6);
                    if !digits.is_some_and(|digits| digits.iter().all(u8::is_ascii_hexdigit)) {
                        self.pos += 1;
                        return self.error("invalid unicode escape");
                    }
                    self.pos += 6;
                }
                _ => {
                    self.pos += 1;
                    return self.error("invalid escape");
                }
            }
        }
    }

    /// Skips the string at the cursor.
    ///
    /// Skipped strings are the bulk of a session (tool output, thinking, signatures) and carry
    /// a backslash every few dozen bytes, so when the line holds no control byte and no
    /// escape that could be invalid (checked once per line), only quotes are searched for: a
    /// quote is the end unless an odd number of backslashes precedes it. Otherwise the string
    /// is checked as [`Scanner::raw_string`] checks it.
    fn skip_string(&mut self) -> ScanResult<()> {
        if self.is_strict {
            return self.raw_string().map(|_| ());
        }
        self.eat(b'"', "expected a string")?;
        let start = self.pos;
        loop {
            let Some(found) = memchr::memchr(b'"', &self.bytes[self.pos..]) else {
                self.pos = self.bytes.len();
                return self.error("unterminated string");
            };
            let quote = self.pos + found;
            let n_backslashes = self.bytes[start..quote]
                .iter()
                .rev()
                .take_while(|&&byte| byte == b'\\')
                .count();
            self.pos = quote + 1;
            if n_backslashes % 2 == 0 {
                return Ok(());
            }
        }
    }

    /// Returns the decoded string at the cursor.
    fn string(&mut self) -> ScanResult<Cow<'a, str>> {
        let (raw, has_escape) = self.raw_string()?;
        if !has_escape {
            return Ok(String::from_utf8_lossy(raw));
        }
        // Escapes are rare in the short fields decoded here; let serde_json decode them.
        let quoted = &self.bytes[self.pos - raw.len() - 2..self.pos];
        match serde_json::from_slice::<String>(quoted) {
            Ok(text) => Ok(Cow::Owned(text)),
            // A lone surrogate escape or invalid UTF-8: U+FFFD, as Pi reads it and as `list`
            // reads names and first messages ([`pi_retrospect_read::decode_lossy`]), not an empty string.
            Err(_) => Ok(Cow::Owned(match pi_retrospect_read::decode_lossy(quoted) {
                serde_json::Value::String(text) => text,
                _ => String::new(),
            })),
        }
    }

    fn literal(&mut self, word: &[u8]) -> ScanResult<()> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            self.error("invalid literal")
        }
    }

    /// Returns the number at the cursor, read leniently.
    fn number(&mut self) -> ScanResult<Loose> {
        let start = self.pos;
        if self.bytes.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        while self.bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        let n_int_digits = self.pos - int_start;
        if n_int_digits == 0 || (n_int_digits > 1 && self.bytes[int_start] == b'0') {
            return self.error("invalid number");
        }
        let mut is_integer = true;
        if self.bytes.get(self.pos) == Some(&b'.') {
            is_integer = false;
            self.pos += 1;
            let frac_start = self.pos;
            while self.bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
                self.pos += 1;
            }
            if self.pos == frac_start {
                return self.error("invalid number");
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.pos) {
            is_integer = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
            let exp_start = self.pos;
            while self.bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
                self.pos += 1;
            }
            if self.pos == exp_start {
                return self.error("invalid number");
            }
        }
        let text = std::str::from_utf8(&self.bytes[start..self.pos]).unwrap_or("");
        if is_integer {
            return Ok(text.parse::<u64>().map_or(Loose::Other, Loose::Unsigned));
        }
        let value: f64 = text.parse().unwrap_or(f64::NAN);
        let is_whole = value.fract() == 0.0 && (0.0..9.0e15).contains(&value);
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "the range check above keeps the value a small whole number"
        )]
        Ok(if is_whole {
            Loose::Unsigned(value as u64)
        } else {
            Loose::Other
        })
    }

    /// Skips any value, returning it as a [`Loose`] scalar.
    fn value(&mut self, depth: u32) -> ScanResult<Loose> {
        match self.peek() {
            Some(b'"') => {
                self.skip_string()?;
                Ok(Loose::Other)
            }
            Some(b'{') => {
                self.object(depth, |scanner, _key, depth| {
                    scanner.value(depth).map(|_| ())
                })?;
                Ok(Loose::Other)
            }
            Some(b'[') => {
                self.array(depth, |scanner, depth| scanner.value(depth).map(|_| ()))?;
                Ok(Loose::Other)
            }
            Some(b't') => self.literal(b"true").map(|()| Loose::Bool(true)),
            Some(b'f') => self.literal(b"false").map(|()| Loose::Bool(false)),
            Some(b'n') => self.literal(b"null").map(|()| Loose::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => self.error("expected a value"),
        }
    }

    /// Returns a string value, or `None` after skipping a value of another type.
    fn loose_str(&mut self, depth: u32) -> ScanResult<LooseStr<'a>> {
        if self.peek() == Some(b'"') {
            return Ok(LooseStr(Some(self.string()?)));
        }
        self.value(depth)?;
        Ok(LooseStr(None))
    }

    /// Walks an object, calling `field` with each key and the cursor at its value.
    fn object(
        &mut self,
        depth: u32,
        mut field: impl FnMut(&mut Self, &[u8], u32) -> ScanResult<()>,
    ) -> ScanResult<()> {
        if depth >= MAX_DEPTH {
            return self.error("nesting too deep");
        }
        self.eat(b'{', "expected an object")?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            if self.peek() != Some(b'"') {
                return self.error("expected a key");
            }
            let (key, has_escape) = self.raw_string()?;
            self.eat(b':', "expected ':'")?;
            if has_escape {
                // An escaped key is never one of the fields read here.
                self.value(depth + 1)?;
            } else {
                field(self, key, depth + 1)?;
            }
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return self.error("expected ',' or '}'"),
            }
        }
    }

    /// Walks an array, calling `element` with the cursor at each element.
    fn array(
        &mut self,
        depth: u32,
        mut element: impl FnMut(&mut Self, u32) -> ScanResult<()>,
    ) -> ScanResult<()> {
        if depth >= MAX_DEPTH {
            return self.error("nesting too deep");
        }
        self.eat(b'[', "expected an array")?;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            element(self, depth + 1)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return self.error("expected ',' or ']'"),
            }
        }
    }

    fn content_shape(&mut self, depth: u32) -> ScanResult<RawShape> {
        let mut shape = RawShape::default();
        match self.peek() {
            Some(b'"') => {
                self.skip_string()?;
                shape.is_string = true;
            }
            Some(b'[') => self.array(depth, |scanner, depth| {
                if scanner.peek() != Some(b'{') {
                    scanner.value(depth)?;
                    shape.n_other = shape.n_other.saturating_add(1);
                    return Ok(());
                }
                let mut kind = LooseStr(None);
                scanner.object(depth, |scanner, key, depth| {
                    if key == b"type" {
                        kind = scanner.loose_str(depth)?;
                    } else {
                        scanner.value(depth)?;
                    }
                    Ok(())
                })?;
                let counter = match kind.0.as_deref() {
                    Some("text") => &mut shape.n_text,
                    Some("thinking") => &mut shape.n_thinking,
                    Some("toolCall") => &mut shape.n_tool_calls,
                    Some("image") => &mut shape.n_images,
                    _ => &mut shape.n_other,
                };
                *counter = counter.saturating_add(1);
                Ok(())
            })?,
            _ => {
                self.value(depth)?;
            }
        }
        Ok(shape)
    }

    fn message(&mut self, depth: u32) -> ScanResult<LooseMessage<'a>> {
        if self.peek() != Some(b'{') {
            self.value(depth)?;
            return Ok(LooseMessage(None));
        }
        let mut message = RawMessage::default();
        self.object(depth, |scanner, key, depth| {
            match key {
                b"role" => message.role = scanner.loose_str(depth)?,
                b"content" => message.content = scanner.content_shape(depth)?,
                b"provider" => message.provider = scanner.loose_str(depth)?,
                b"model" => message.model = scanner.loose_str(depth)?,
                b"stopReason" => message.stop_reason = scanner.loose_str(depth)?,
                b"toolName" => message.tool_name = scanner.loose_str(depth)?,
                b"customType" => message.custom_type = scanner.loose_str(depth)?,
                b"excludeFromContext" => message.exclude_from_context = scanner.value(depth)?,
                b"isError" => message.is_error = scanner.value(depth)?,
                _ => {
                    scanner.value(depth)?;
                }
            }
            Ok(())
        })?;
        Ok(LooseMessage(Some(message)))
    }

    /// Skips a value and returns whether JavaScript would find it truthy, so that a field Pi
    /// tests with `if (entry.field)` is judged as Pi judges it without decoding its text.
    fn truthy(&mut self, depth: u32) -> ScanResult<bool> {
        let is_empty_string =
            self.peek() == Some(b'"') && self.bytes.get(self.pos + 1) == Some(&b'"');
        let value = self.value(depth)?;
        Ok(!is_empty_string
            && !matches!(value, Loose::Null | Loose::Bool(false) | Loose::Unsigned(0)))
    }

    fn envelope(&mut self) -> ScanResult<RawEnvelope<'a>> {
        let mut envelope = RawEnvelope::default();
        self.object(0, |scanner, key, depth| {
            let envelope = &mut envelope;
            match key {
                b"type" => envelope.kind = scanner.loose_str(depth)?,
                b"id" => envelope.id = scanner.loose_str(depth)?,
                b"parentId" => envelope.parent_id = scanner.loose_str(depth)?,
                b"timestamp" => envelope.timestamp = scanner.loose_str(depth)?,
                b"version" => envelope.version = scanner.value(depth)?,
                b"cwd" => envelope.cwd = scanner.loose_str(depth)?,
                b"parentSession" => envelope.parent_session = scanner.loose_str(depth)?,
                b"message" => envelope.message = scanner.message(depth)?,
                b"firstKeptEntryId" => envelope.first_kept_entry_id = scanner.loose_str(depth)?,
                b"firstKeptEntryIndex" => envelope.first_kept_entry_index = scanner.value(depth)?,
                b"systemMessage" => {
                    let value = scanner.value(depth)?;
                    envelope.system_message = (value != Loose::Null).then_some(());
                }
                b"targetId" => envelope.target_id = scanner.loose_str(depth)?,
                b"replacement" => envelope.replacement = scanner.value(depth)?,
                b"label" => envelope.label = scanner.loose_str(depth)?,
                b"name" => envelope.name = scanner.loose_str(depth)?,
                b"fromId" => envelope.from_id = scanner.loose_str(depth)?,
                b"summary" => envelope.has_summary = scanner.truthy(depth)?,
                b"provider" => envelope.provider = scanner.loose_str(depth)?,
                b"modelId" => envelope.model_id = scanner.loose_str(depth)?,
                b"thinkingLevel" => envelope.thinking_level = scanner.loose_str(depth)?,
                b"customType" => envelope.custom_type = scanner.loose_str(depth)?,
                b"kind" => envelope.usage_kind = scanner.loose_str(depth)?,
                b"display" => envelope.display = scanner.value(depth)?,
                _ => {
                    scanner.value(depth)?;
                }
            }
            Ok(())
        })?;
        Ok(envelope)
    }

    fn finish(&mut self) -> ScanResult<()> {
        if self.peek().is_some() {
            return self.error("trailing characters");
        }
        Ok(())
    }
}

/// Returns the envelope of one line.
pub(crate) fn parse_envelope(line: &[u8]) -> Result<RawEnvelope<'_>, EnvelopeError> {
    let mut scanner = Scanner {
        bytes: line,
        pos: 0,
        is_strict: needs_strict_strings(line),
    };
    if scanner.peek() != Some(b'{') {
        scanner.value(0).map_err(EnvelopeError::Syntax)?;
        scanner.finish().map_err(EnvelopeError::Syntax)?;
        return Err(EnvelopeError::NotAnObject);
    }
    let envelope = scanner.envelope().map_err(EnvelopeError::Syntax)?;
    scanner.finish().map_err(EnvelopeError::Syntax)?;
    Ok(envelope)
}

/// Returns a line's JSON as strict, single-line JSON text that any JSON reader accepts:
/// whitespace between tokens is dropped (so no raw CR or TAB survives), invalid UTF-8 and lone
/// surrogate escapes become U+FFFD, and everything else (key order, duplicate keys, number
/// spelling, escapes) is kept exactly as stored.
///
/// `bytes` must be a line the envelope scanner accepted; `null` stands in for anything else
/// (only possible when the file changed after it was parsed).
pub(crate) fn strict_json(bytes: &[u8]) -> Box<serde_json::value::RawValue> {
    let text = String::from_utf8_lossy(bytes);
    let compact = drop_whitespace_between_tokens(&text);
    let repaired = pi_retrospect_read::repair_lone_surrogates(&compact).into_owned();
    serde_json::value::RawValue::from_string(repaired).unwrap_or_else(|_| null_raw())
}

#[expect(
    clippy::unwrap_used,
    reason = "the literal `null` is valid JSON, so parsing it cannot fail"
)]
fn null_raw() -> Box<serde_json::value::RawValue> {
    serde_json::value::RawValue::from_string("null".to_owned()).unwrap()
}

/// Returns `json` without the whitespace outside its strings.
fn drop_whitespace_between_tokens(json: &str) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    let is_whitespace = |byte: u8| matches!(byte, b' ' | b'\t' | b'\n' | b'\r');
    let mut out: Option<String> = None;
    let mut copied_to = 0;
    let mut idx = 0;
    let mut is_in_string = false;
    while idx < bytes.len() {
        let byte = bytes[idx];
        if is_in_string {
            match byte {
                b'\\' => idx += 1,
                b'"' => is_in_string = false,
                _ => {}
            }
        } else if byte == b'"' {
            is_in_string = true;
        } else if is_whitespace(byte) {
            let out = out.get_or_insert_with(|| String::with_capacity(json.len()));
            out.push_str(&json[copied_to..idx]);
            copied_to = idx + 1;
        }
        idx += 1;
    }
    match out {
        None => Cow::Borrowed(json),
        Some(mut out) => {
            out.push_str(json.get(copied_to..).unwrap_or_default());
            Cow::Owned(out)
        }
    }
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
