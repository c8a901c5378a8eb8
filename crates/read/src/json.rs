//! The exact JSON tokenizer of the workspace: one pass over one line of a session file that
//! reads the few members its caller names and passes over everything else, validating it the
//! way `JSON.parse` does, at little more than the cost of finding the bytes.
//!
//! It accepts what `JSON.parse` accepts, which is what decides whether Pi reads a line: the
//! RFC 8259 grammar, raw control characters refused inside strings, repeated members allowed
//! (the caller sees each; the last one wins in `JSON.parse`), nesting deeper than
//! [`MAX_DEPTH`] refused (`JSON.parse` has a larger limit; no Pi entry comes near it; every
//! reader here, `decode_line` included, refuses the same lines with a warning). Bytes
//! that are not UTF-8 are not an error, as Pi decodes a file with replacement characters
//! before parsing it; strings that are kept are decoded the same way.
//!
//! A caller descends with [`Reader::object`] (each member's name, then the caller reads or
//! skips its value) and [`Reader::array`], keeps a value with [`Reader::text`],
//! [`Reader::bytes`], [`Reader::string`] (a [`JsonStr`], decoded as the caller chooses) or
//! [`Reader::number`], and passes over any other with [`Reader::skip_value`];
//! [`Reader::end`] checks that nothing but white space follows. Strings are passed over a
//! block of bytes at a time (one dense with escapes found by its closing quote and checked
//! in one vectorised pass) and only the members asked for are decoded, so a line costs
//! little more than one pass over its bytes.
//!
//! ```
//! use pi_retrospect_read::json::Reader;
//!
//! let line = br#"{"type":"message","message":{"usage":{"input":12}},"id":"a1"}"#;
//! let mut reader = Reader::new(line);
//! let mut input = None;
//! reader.object(|reader, name| match name {
//!     b"message" => reader
//!         .object(|reader, name| match name {
//!             b"usage" => reader
//!                 .object(|reader, name| match name {
//!                     b"input" => reader.number().map(|number| input = number),
//!                     _ => reader.skip_value(),
//!                 })
//!                 .map(drop),
//!             _ => reader.skip_value(),
//!         })
//!         .map(drop),
//!     _ => reader.skip_value(),
//! })?;
//! reader.end()?;
//! assert_eq!(input.and_then(|number| number.as_token_count()), Some(12));
//! # Ok::<(), pi_retrospect_read::json::JsonError>(())
//! ```

use std::borrow::Cow;
use std::fmt;

/// The deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 128;

/// Strings up to this many bytes are scanned eight bytes at a time, longer ones with
/// `memchr2`.
const SHORT_STRING: usize = 32;

/// A string is dense with escapes once it has had at least this many, on average fewer than
/// [`DENSE_GAP`] bytes apart: the rest of it is then checked in one vectorised pass rather
/// than escape by escape.
const DENSE_ESCAPES: usize = 4;

/// See [`DENSE_ESCAPES`].
const DENSE_GAP: usize = 48;

/// Why a line is not JSON: what was wrong and at which byte of the line. Eight bytes, so
/// that every `Result` of the reader travels in registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonError {
    what: Problem,
    /// The byte (from 0), or `u32::MAX` when the line ended too soon.
    at: u32,
}

impl JsonError {
    /// Returns what was wrong.
    pub fn problem(&self) -> Problem {
        self.what
    }

    /// Returns the byte of the line (from 0) where it went wrong, or `None` when the line
    /// ended too soon.
    pub fn offset(&self) -> Option<usize> {
        (self.at != u32::MAX).then_some(self.at as usize)
    }
}

impl std::error::Error for JsonError {}

/// What was wrong with a line that is not JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// `unexpected end of line`.
    EndOfLine,
    /// `trailing characters`.
    Trailing,
    /// `expected a member name`.
    MemberName,
    /// `expected ',' or '}'`.
    ObjectSeparator,
    /// `expected ',' or ']'`.
    ArraySeparator,
    /// `expected a value`.
    Value,
    /// `nested too deeply`.
    TooDeep,
    /// `control character in a string`.
    ControlCharacter,
    /// `unterminated string`.
    Unterminated,
    /// `invalid escape`.
    Escape,
    /// `invalid number`.
    Number,
    /// `expected ':'`.
    Colon,
}

impl fmt::Display for JsonError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.what {
            Problem::EndOfLine => "unexpected end of line",
            Problem::Trailing => "trailing characters",
            Problem::MemberName => "expected a member name",
            Problem::ObjectSeparator => "expected ',' or '}'",
            Problem::ArraySeparator => "expected ',' or ']'",
            Problem::Value => "expected a value",
            Problem::TooDeep => "nested too deeply",
            Problem::ControlCharacter => "control character in a string",
            Problem::Unterminated => "unterminated string",
            Problem::Escape => "invalid escape",
            Problem::Number => "invalid number",
            Problem::Colon => "expected ':'",
        };
        match self.at {
            u32::MAX => formatter.write_str(what),
            at => write!(formatter, "{what} at byte {}", u64::from(at) + 1),
        }
    }
}

/// What the reader returns: a value, or why the line is not JSON.
pub type Result<T> = std::result::Result<T, JsonError>;

/// The kind of the next value, told by its first byte (the value itself is checked only
/// when it is read or skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `{`.
    Object,
    /// `[`.
    Array,
    /// `"`.
    String,
    /// `-` or a digit.
    Number,
    /// `t`.
    True,
    /// `f`.
    False,
    /// `n`.
    Null,
}

/// A JSON number as written: an integer that fits, or any other number as a float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// A non-negative integer below 2^64.
    Unsigned(u64),
    /// A negative integer at or above -2^63.
    Signed(i64),
    /// Any other number (a fraction, an exponent, or an integer out of those ranges).
    Float(f64),
}

impl Number {
    /// Returns the number as a token count: a non-negative integer.
    pub fn as_token_count(self) -> Option<u64> {
        match self {
            Number::Unsigned(count) => Some(count),
            Number::Signed(count) => u64::try_from(count).ok(),
            // 2^53: above it a float no longer holds every integer.
            Number::Float(count)
                if count >= 0.0 && count.fract() == 0.0 && count <= 9_007_199_254_740_992.0 =>
            {
                Some(count as u64)
            }
            Number::Float(_) => None,
        }
    }

    /// Returns the number as a float.
    pub fn as_f64(self) -> Option<f64> {
        Some(match self {
            Number::Unsigned(value) => value as f64,
            Number::Signed(value) => value as f64,
            Number::Float(value) => value,
        })
    }

    /// Returns the number as an integer, a float cut toward zero.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Number::Unsigned(value) => i64::try_from(value).ok(),
            Number::Signed(value) => Some(value),
            Number::Float(value) if value.is_finite() => Some(value as i64),
            Number::Float(_) => None,
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Unsigned(value) => write!(formatter, "{value}"),
            Number::Signed(value) => write!(formatter, "{value}"),
            // A forged 1e308 would otherwise be written out in 309 digits, in every warning.
            Number::Float(value) if value.is_finite() && value.abs() >= 1e16 => {
                write!(formatter, "{value:e}")
            }
            Number::Float(value) => write!(formatter, "{value}"),
        }
    }
}

/// A string value as written between its quotes: checked as `JSON.parse` checks it, its
/// escapes not yet decoded. Decoding is the caller's choice: as Pi reads it
/// ([`JsonStr::to_text`]), or as a strict reader does ([`JsonStr::to_strict_text`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonStr<'a> {
    raw: &'a [u8],
    has_escapes: bool,
}

impl<'a> JsonStr<'a> {
    /// Returns the string of the bytes between its quotes (checked), told whether it may hold
    /// escapes: a long string is passed over without noting them, so it is looked at again
    /// here, once, only when it is kept.
    #[inline]
    fn new(raw: &'a [u8], may_have_escapes: bool) -> JsonStr<'a> {
        let has_escapes = may_have_escapes && memchr::memchr(b'\\', raw).is_some();
        JsonStr { raw, has_escapes }
    }

    /// Returns the bytes between the quotes, escapes as written.
    #[inline]
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// Returns whether the string holds an escape.
    #[inline]
    pub fn has_escapes(&self) -> bool {
        self.has_escapes
    }

    /// Returns whether the string is empty (every escape stands for at least one character).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// Returns the string's bytes with its escapes decoded; a lone surrogate escape becomes a
    /// replacement character, bytes that are not UTF-8 are left as they are.
    #[inline]
    pub fn to_bytes(&self) -> Cow<'a, [u8]> {
        if !self.has_escapes {
            return Cow::Borrowed(self.raw);
        }
        let mut out = Vec::with_capacity(self.raw.len());
        unescape_into(self.raw, &mut out);
        Cow::Owned(out)
    }

    /// Returns the text as Pi reads it: escapes decoded, a lone surrogate escape and bytes
    /// that are not UTF-8 replacement characters.
    #[inline]
    pub fn to_text(&self) -> Cow<'a, str> {
        match self.to_bytes() {
            Cow::Borrowed(bytes) => String::from_utf8_lossy(bytes),
            Cow::Owned(bytes) => Cow::Owned(match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
            }),
        }
    }

    /// Returns the text as a strict JSON reader (serde_json) decodes it, or `None` where such
    /// a reader refuses the string: bytes that are not UTF-8, or a lone surrogate escape.
    #[inline]
    pub fn to_strict_text(&self) -> Option<Cow<'a, str>> {
        if !self.has_escapes {
            return std::str::from_utf8(self.raw).ok().map(Cow::Borrowed);
        }
        let mut out = Vec::with_capacity(self.raw.len());
        if unescape_into(self.raw, &mut out) {
            return None;
        }
        String::from_utf8(out).ok().map(Cow::Owned)
    }
}

/// A reader positioned in one line (or any one JSON text): it moves forward only, one value at
/// a time, and every method that reads or skips a value checks it.
#[derive(Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    depth: usize,
}

impl<'a> Reader<'a> {
    /// Returns a reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes,
            at: 0,
            depth: 0,
        }
    }

    fn error(&self, what: Problem) -> JsonError {
        let at = match self.at < self.bytes.len() {
            true => u32::try_from(self.at).unwrap_or(u32::MAX - 1),
            false => u32::MAX,
        };
        JsonError { what, at }
    }

    #[inline]
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// Returns the next byte that is not white space, without consuming it.
    #[inline]
    fn peek(&mut self) -> Result<u8> {
        // Pi writes no white space between tokens: one comparison settles the usual case.
        match self.bytes.get(self.at) {
            Some(&byte) if byte > b' ' => Ok(byte),
            _ => self.peek_after_whitespace(),
        }
    }

    /// [`Reader::peek`] when there is white space (or nothing) to pass over first.
    #[inline(never)]
    fn peek_after_whitespace(&mut self) -> Result<u8> {
        self.skip_whitespace();
        self.bytes
            .get(self.at)
            .copied()
            .ok_or_else(|| self.error(Problem::EndOfLine))
    }

    #[inline]
    fn expect(&mut self, byte: u8, what: Problem) -> Result<()> {
        if self.peek()? == byte {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(what))
        }
    }

    /// Returns the byte offset the reader has got to (after the last value read).
    pub fn offset(&self) -> usize {
        self.at
    }

    /// Passes over `literal` when the bytes at the reader are exactly it (no white space is
    /// skipped) and returns whether it did. Punctuation passed over this way is not checked
    /// for nesting depth: a caller reading a fixed layout this way checks what it accepts.
    #[inline]
    pub fn eat(&mut self, literal: &[u8]) -> bool {
        let is_there = self.bytes[self.at.min(self.bytes.len())..].starts_with(literal);
        if is_there {
            self.at += literal.len();
        }
        is_there
    }

    /// Returns how deep in objects and arrays the reader is.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Checks that only white space is left.
    pub fn end(&mut self) -> Result<()> {
        self.skip_whitespace();
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(self.error(Problem::Trailing))
        }
    }

    /// Reads an object member by member: `member` gets each name (its escapes decoded) and
    /// must read or skip the value. A repeated name is handed over each time (in `JSON.parse`
    /// the last one wins). Returns `false`, having skipped the value, when the value is not
    /// an object.
    pub fn object(
        &mut self,
        mut member: impl FnMut(&mut Reader<'a>, &[u8]) -> Result<()>,
    ) -> Result<bool> {
        if self.peek()? != b'{' {
            self.skip_value()?;
            return Ok(false);
        }
        self.enter()?;
        self.at += 1;
        if self.peek()? == b'}' {
            self.at += 1;
            self.depth -= 1;
            return Ok(true);
        }
        loop {
            if self.peek()? != b'"' {
                return Err(self.error(Problem::MemberName));
            }
            if let Some((start, length)) = self.short_name() {
                {
                    self.at = start + length + 2;
                    member(self, &self.bytes[start..start + length])?;
                    match self.peek()? {
                        b',' => self.at += 1,
                        b'}' => {
                            self.at += 1;
                            self.depth -= 1;
                            return Ok(true);
                        }
                        _ => return Err(self.error(Problem::ObjectSeparator)),
                    }
                    continue;
                }
            }
            let name = self.member_name()?;
            self.expect(b':', Problem::Colon)?;
            member(self, &name)?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    self.depth -= 1;
                    return Ok(true);
                }
                _ => return Err(self.error(Problem::ObjectSeparator)),
            }
        }
    }

    /// Reads an array element by element: `element` must read each value. Returns `false`,
    /// having skipped the value, when the value is not an array.
    pub fn array(
        &mut self,
        mut element: impl FnMut(&mut Reader<'a>) -> Result<()>,
    ) -> Result<bool> {
        if self.peek()? != b'[' {
            self.skip_value()?;
            return Ok(false);
        }
        self.enter()?;
        self.at += 1;
        if self.peek()? == b']' {
            self.at += 1;
            self.depth -= 1;
            return Ok(true);
        }
        loop {
            element(self)?;
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    self.depth -= 1;
                    return Ok(true);
                }
                _ => return Err(self.error(Problem::ArraySeparator)),
            }
        }
    }

    /// Reads a value that is kept only when it is a string (decoded like Pi decodes a file:
    /// bytes that are not UTF-8 become replacement characters).
    #[inline]
    pub fn text(&mut self) -> Result<Option<Cow<'a, str>>> {
        Ok(self.string()?.map(|string| string.to_text()))
    }

    /// Reads a value that is kept only when it is a string, as raw bytes (escapes decoded):
    /// for values that are only compared, or decoded later when needed.
    #[inline]
    pub fn bytes(&mut self) -> Result<Option<Cow<'a, [u8]>>> {
        Ok(self.string()?.map(|string| string.to_bytes()))
    }

    /// Reads a value that is kept only when it is a string, as written (checked, escapes not
    /// yet decoded): for a caller that decides how to decode it, or only needs to know
    /// whether it is empty.
    #[inline]
    pub fn string(&mut self) -> Result<Option<JsonStr<'a>>> {
        if self.peek()? != b'"' {
            self.skip_unwanted()?;
            return Ok(None);
        }
        let start = self.at + 1;
        let may_have_escapes = self.skip_string()?;
        Ok(Some(JsonStr::new(
            &self.bytes[start..self.at - 1],
            may_have_escapes,
        )))
    }

    /// Reads a value that is kept only when it is a number.
    #[inline]
    pub fn number(&mut self) -> Result<Option<Number>> {
        match self.peek()? {
            b'-' | b'0'..=b'9' => self.read_number().map(Some),
            _ => {
                self.skip_unwanted()?;
                Ok(None)
            }
        }
    }

    /// Returns the kind of the next value, from its first byte, without reading it; an
    /// error when no value can start there.
    #[inline]
    pub fn next_kind(&mut self) -> Result<Kind> {
        Ok(match self.peek()? {
            b'{' => Kind::Object,
            b'[' => Kind::Array,
            b'"' => Kind::String,
            b'-' | b'0'..=b'9' => Kind::Number,
            b't' => Kind::True,
            b'f' => Kind::False,
            b'n' => Kind::Null,
            _ => return Err(self.error(Problem::Value)),
        })
    }

    /// Passes over one value of any kind, checking its grammar, and returns its raw bytes
    /// (escapes not decoded, no white space around it).
    pub fn raw_value(&mut self) -> Result<&'a [u8]> {
        self.skip_whitespace();
        let start = self.at;
        self.skip_value()?;
        Ok(&self.bytes[start..self.at])
    }

    /// Passes over one value of any kind, checking its grammar, and appends it to `out` as
    /// [`to_strict_json`] writes it.
    fn copy_value(&mut self, out: &mut String) -> Result<()> {
        let close = match self.peek()? {
            b'"' => return self.copy_string(out),
            b'{' => b'}',
            b'[' => b']',
            _ => {
                // A number or a literal: ASCII, checked by the skip.
                let start = self.at;
                self.skip_value()?;
                out.push_str(&String::from_utf8_lossy(&self.bytes[start..self.at]));
                return Ok(());
            }
        };
        let is_object = close == b'}';
        self.enter()?;
        self.at += 1;
        out.push(char::from(self.bytes[self.at - 1]));
        if self.peek()? == close {
            self.at += 1;
            self.depth -= 1;
            out.push(char::from(close));
            return Ok(());
        }
        loop {
            if is_object {
                if self.peek()? != b'"' {
                    return Err(self.error(Problem::MemberName));
                }
                self.copy_string(out)?;
                self.expect(b':', Problem::Colon)?;
                out.push(':');
            }
            self.copy_value(out)?;
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    out.push(',');
                }
                byte if byte == close => {
                    self.at += 1;
                    self.depth -= 1;
                    out.push(char::from(close));
                    return Ok(());
                }
                _ if is_object => return Err(self.error(Problem::ObjectSeparator)),
                _ => return Err(self.error(Problem::ArraySeparator)),
            }
        }
    }

    /// Passes over a string (at its opening quote) and appends it to `out`, quotes and
    /// escapes as written, but bytes that are not UTF-8 and lone surrogate escapes replaced.
    fn copy_string(&mut self, out: &mut String) -> Result<()> {
        let start = self.at;
        self.skip_string()?;
        let quoted = String::from_utf8_lossy(&self.bytes[start..self.at]);
        out.push_str(&crate::decode::repair_lone_surrogates(&quoted));
        Ok(())
    }

    /// Reads a `true`, `false` or `null` literal and returns it.
    fn literal(&mut self) -> Result<&'static [u8]> {
        let rest = &self.bytes[self.at..];
        for literal in [&b"true"[..], b"false", b"null"] {
            if rest.starts_with(literal) {
                self.at += literal.len();
                return Ok(literal);
            }
        }
        Err(self.error(Problem::Value))
    }

    /// Passes over one value of any kind, checking its grammar.
    #[inline]
    pub fn skip_value(&mut self) -> Result<()> {
        // Strings and numbers, most values, without a call; containers and literals below.
        match self.peek()? {
            b'"' => self.skip_string().map(|_| ()),
            b'-' | b'0'..=b'9' => self.number_span(),
            _ => self.skip_other(),
        }
    }

    /// [`Reader::skip_value`] for a value of a kind the caller did not ask for: not inlined,
    /// as that is rare.
    #[inline(never)]
    fn skip_unwanted(&mut self) -> Result<()> {
        self.skip_value()
    }

    /// [`Reader::skip_value`] for an object, an array or a literal.
    #[inline(never)]
    fn skip_other(&mut self) -> Result<()> {
        match self.peek()? {
            b'{' => {
                // As `object`, without decoding the member names.
                self.enter()?;
                self.at += 1;
                if self.peek()? == b'}' {
                    self.at += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                loop {
                    if self.peek()? != b'"' {
                        return Err(self.error(Problem::MemberName));
                    }
                    match self.short_name() {
                        Some((start, length)) => self.at = start + length + 2,
                        None => {
                            self.skip_string()?;
                            self.expect(b':', Problem::Colon)?;
                        }
                    }
                    self.skip_value()?;
                    match self.peek()? {
                        b',' => self.at += 1,
                        b'}' => {
                            self.at += 1;
                            self.depth -= 1;
                            return Ok(());
                        }
                        _ => return Err(self.error(Problem::ObjectSeparator)),
                    }
                }
            }
            b'[' => {
                self.enter()?;
                self.at += 1;
                if self.peek()? == b']' {
                    self.at += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                loop {
                    self.skip_value()?;
                    match self.peek()? {
                        b',' => self.at += 1,
                        b']' => {
                            self.at += 1;
                            self.depth -= 1;
                            return Ok(());
                        }
                        _ => return Err(self.error(Problem::ArraySeparator)),
                    }
                }
            }
            _ => self.literal().map(|_| ()),
        }
    }

    /// Returns where the name of the member at the reader (at its opening quote) starts and
    /// how long it is, for the usual name: up to fifteen plain bytes, its closing quote and
    /// the colon right after, found with one or two eight-byte looks. `None` sends the caller
    /// to the general path.
    #[inline]
    fn short_name(&self) -> Option<(usize, usize)> {
        let start = self.at + 1;
        let length = short_name_length(self.bytes, start)?;
        (self.bytes[start + length] == b'"' && self.bytes.get(start + length + 1) == Some(&b':'))
            .then_some((start, length))
    }

    #[inline]
    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(Problem::TooDeep));
        }
        Ok(())
    }

    /// Reads a member name (at its opening quote) and returns its bytes, escapes decoded.
    #[inline]
    fn member_name(&mut self) -> Result<Cow<'a, [u8]>> {
        let start = self.at + 1;
        let may_have_escapes = self.skip_string()?;
        Ok(JsonStr::new(&self.bytes[start..self.at - 1], may_have_escapes).to_bytes())
    }

    /// Passes over a string (at its opening quote); returns whether it may hold escapes
    /// (`false` only when it certainly holds none).
    #[inline(always)]
    fn skip_string(&mut self) -> Result<bool> {
        // Most strings are short (names, ids, timestamps): look at them eight bytes at a time
        // before paying for the call of the vectorised search.
        let mut at = self.at + 1;
        for _ in 0..SHORT_STRING / 8 {
            let Some(chunk) = self.bytes.get(at..at + 8) else {
                break;
            };
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            if let Some(offset) = first_special(u64::from_le_bytes(word)) {
                at += offset;
                if self.bytes[at] == b'"' {
                    self.at = at + 1;
                    return Ok(false);
                }
                break;
            }
            at += 8;
        }
        self.at = at;
        self.skip_long_string()
    }

    /// Passes over the rest of a string from the reader's position (inside it, at a
    /// backslash or control character of it, never inside an escape); returns whether it
    /// may hold escapes.
    ///
    /// Escapes are checked one by one, each stretch between them for control characters,
    /// which is cheap while they are sparse. Long strings of tool output or thinking carry one
    /// every twenty bytes, where stopping at each costs more than the bytes between: once a
    /// string shows that density, the rest of it is passed over by [`Reader::skip_dense_string`].
    #[inline(never)]
    fn skip_long_string(&mut self) -> Result<bool> {
        let begin = self.at;
        let mut n_escapes = 0;
        loop {
            if self.pass_to_escape_or_end()? {
                return Ok(n_escapes > 0);
            }
            n_escapes += 1;
            if n_escapes >= DENSE_ESCAPES && self.at - begin < DENSE_GAP * n_escapes {
                return self.skip_dense_string().map(|()| true);
            }
        }
    }

    /// Passes over the rest of a string whose escapes are dense, from the reader's position
    /// (right after an escape): its end is found as the first quote after an even run of
    /// backslashes, and the bytes before it are checked in one pass the compiler vectorises
    /// ([`is_plain`]). A string that pass cannot clear (a control character, a `\u` escape,
    /// an unusual escape or run of backslashes) is walked escape by escape.
    #[cold]
    fn skip_dense_string(&mut self) -> Result<()> {
        let start = self.at;
        let mut from = start;
        let end = loop {
            let Some(found) = memchr::memchr(b'"', &self.bytes[from..]) else {
                return self.walk_string();
            };
            let quote = from + found;
            let n_backslashes = self.bytes[start..quote]
                .iter()
                .rev()
                .take_while(|&&byte| byte == b'\\')
                .count();
            if n_backslashes % 2 == 0 {
                break quote;
            }
            from = quote + 1;
        };
        if is_plain(&self.bytes[start..=end]) {
            self.at = end + 1;
            return Ok(());
        }
        self.walk_string()
    }

    /// Passes over the rest of a string escape by escape, from the reader's position (never
    /// inside an escape), checking each escape and every stretch between them.
    #[cold]
    fn walk_string(&mut self) -> Result<()> {
        loop {
            if self.pass_to_escape_or_end()? {
                return Ok(());
            }
        }
    }

    /// Passes over a string's bytes from the reader's position (never inside an escape) up to
    /// its next escape, which it checks and passes, or its closing quote: `true` at the end
    /// of the string, past its quote. The stretch before is checked for control characters.
    #[inline(always)]
    fn pass_to_escape_or_end(&mut self) -> Result<bool> {
        let rest = &self.bytes[self.at..];
        let Some(found) = memchr::memchr2(b'"', b'\\', rest) else {
            self.at = self.bytes.len();
            return Err(self.error(Problem::Unterminated));
        };
        if has_control(&rest[..found]) {
            return Err(self.error(Problem::ControlCharacter));
        }
        self.at += found;
        if self.bytes[self.at] == b'"' {
            self.at += 1;
            return Ok(true);
        }
        match self.bytes.get(self.at + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.at += 2,
            Some(b'u')
                if self
                    .bytes
                    .get(self.at + 2..self.at + 6)
                    .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)) =>
            {
                self.at += 6;
            }
            _ => return Err(self.error(Problem::Escape)),
        }
        Ok(false)
    }

    /// Passes over a number, checking its grammar.
    #[inline]
    fn number_span(&mut self) -> Result<()> {
        self.scan_number::<false>().map(|_| ())
    }

    #[inline(never)]
    fn read_number(&mut self) -> Result<Number> {
        self.scan_number::<true>()?
            .ok_or_else(|| self.error(Problem::Number))
    }

    /// Reads a number in one pass, checking its grammar, and returns its value when asked:
    /// a plain integer exactly, anything else as the float JavaScript would read (Clinger's
    /// exact fast path when the digits and the power of ten are exact, else Rust's float
    /// parsing, which rounds correctly too).
    #[inline]
    fn scan_number<const WANTS_VALUE: bool>(&mut self) -> Result<Option<Number>> {
        let bytes = self.bytes;
        let start = self.at;
        let mut at = start;
        let is_negative = bytes.get(at) == Some(&b'-');
        if is_negative {
            at += 1;
        }
        // The digits, accumulated while they fit; `exponent` scales them back.
        let mut mantissa: Option<u64> = Some(0);
        let mut exponent: i64 = 0;
        let integer_start = at;
        at = digits::<WANTS_VALUE>(bytes, at, &mut mantissa);
        let n_integer_digits = at - integer_start;
        if n_integer_digits == 0 || (n_integer_digits > 1 && bytes[integer_start] == b'0') {
            self.at = at;
            return Err(self.error(Problem::Number));
        }
        let mut is_integer = true;
        if at < bytes.len() && bytes[at] == b'.' {
            at += 1;
            is_integer = false;
            let fraction_start = at;
            at = digits::<WANTS_VALUE>(bytes, at, &mut mantissa);
            if at == fraction_start {
                self.at = at;
                return Err(self.error(Problem::Number));
            }
            exponent -= (at - fraction_start) as i64;
        }
        if at < bytes.len() && (bytes[at] | 0x20) == b'e' {
            at += 1;
            is_integer = false;
            let is_negative_exponent = bytes.get(at) == Some(&b'-');
            if matches!(bytes.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            let exponent_start = at;
            let mut written: i64 = 0;
            while at < bytes.len() && bytes[at].is_ascii_digit() {
                if WANTS_VALUE {
                    written = written
                        .saturating_mul(10)
                        .saturating_add(i64::from(bytes[at] - b'0'));
                }
                at += 1;
            }
            if at == exponent_start {
                self.at = at;
                return Err(self.error(Problem::Number));
            }
            exponent = exponent.saturating_add(if is_negative_exponent {
                -written
            } else {
                written
            });
        }
        self.at = at;
        if !WANTS_VALUE {
            return Ok(None);
        }
        match (is_integer, is_negative, mantissa) {
            (true, false, Some(value)) => return Ok(Some(Number::Unsigned(value))),
            (true, true, Some(value)) if value <= 1 << 63 => {
                return Ok(Some(Number::Signed((value as i64).wrapping_neg())));
            }
            (_, _, Some(value)) if value <= 1 << 53 && (-22..=22).contains(&exponent) => {
                // Both operands are exact, so the one rounding is the correct one.
                let power = POWERS_OF_TEN[exponent.unsigned_abs() as usize];
                let magnitude = if exponent < 0 {
                    value as f64 / power
                } else {
                    value as f64 * power
                };
                return Ok(Some(Number::Float(if is_negative {
                    -magnitude
                } else {
                    magnitude
                })));
            }
            _ => {}
        }
        std::str::from_utf8(&bytes[start..at])
            .ok()
            .and_then(|text| text.parse::<f64>().ok())
            .map(|value| Some(Number::Float(value)))
            .ok_or_else(|| self.error(Problem::Number))
    }
}

/// Returns one JSON text (a line Pi wrote) as strict, single-line JSON text that any JSON
/// reader accepts: white space between tokens is dropped (so no raw CR or TAB survives),
/// bytes that are not UTF-8 and lone surrogate escapes become U+FFFD (as Pi reads them), and
/// everything else (member order, repeated members, number spelling, escapes) is kept
/// exactly as written. An error when the text is not JSON.
pub fn to_strict_json(text: &[u8]) -> Result<String> {
    let mut reader = Reader::new(text);
    let mut out = String::with_capacity(text.len());
    reader.copy_value(&mut out)?;
    reader.end()?;
    Ok(out)
}

/// Passes over the run of ASCII digits at `at` and returns where it ends; when
/// `WANTS_VALUE`, appends them to `mantissa`, which becomes `None` once it no longer fits in
/// a `u64` (exactly when adding them one at a time would overflow: every prefix of a number
/// that fits fits too). Eight digits are found and converted at a time.
#[inline]
fn digits<const WANTS_VALUE: bool>(
    bytes: &[u8],
    mut at: usize,
    mantissa: &mut Option<u64>,
) -> usize {
    while let Some(chunk) = bytes.get(at..at + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let n_digits = leading_digits(word);
        if n_digits == 0 {
            return at;
        }
        if WANTS_VALUE {
            *mantissa = mantissa
                .and_then(|value| value.checked_mul(EXACT_POWERS_OF_TEN[n_digits]))
                .and_then(|value| value.checked_add(digits_value(word, n_digits)));
        }
        at += n_digits;
        if n_digits < 8 {
            return at;
        }
    }
    // The last few bytes of the line, one at a time.
    while at < bytes.len() && bytes[at].is_ascii_digit() {
        if WANTS_VALUE {
            *mantissa = mantissa
                .and_then(|value| value.checked_mul(10))
                .and_then(|value| value.checked_add(u64::from(bytes[at] - b'0')));
        }
        at += 1;
    }
    at
}

/// Returns how many of eight little-endian bytes, from the first, are ASCII digits. A byte
/// below `0` or above `9` sets its own top bit in one of the two sums; a carry or borrow
/// only ever reaches the bytes after such a byte, so the first flagged byte is exact.
#[inline]
fn leading_digits(word: u64) -> usize {
    const ONES: u64 = u64::MAX / 255;
    let not_digit = (word.wrapping_add(ONES * 0x46) | word.wrapping_sub(ONES * 0x30)) & (ONES << 7);
    (not_digit.trailing_zeros() / 8) as usize
}

/// Returns the value of the first `n_digits` (1 to 8) ASCII digits of eight little-endian
/// bytes: the digits are moved to the top, the bytes before them become leading zeros, and
/// pairs, quads and octets are combined with three multiplications.
#[inline]
fn digits_value(word: u64, n_digits: usize) -> u64 {
    let word = (word & 0x0F0F_0F0F_0F0F_0F0F) << (8 * (8 - n_digits));
    let word = word.wrapping_mul(1 + (10 << 8)) >> 8;
    let word = (word & 0x00FF_00FF_00FF_00FF).wrapping_mul(1 + (100 << 16)) >> 16;
    (word & 0x0000_FFFF_0000_FFFF).wrapping_mul(1 + (10_000 << 32)) >> 32
}

/// The powers of ten up to 10^8, as integers.
const EXACT_POWERS_OF_TEN: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// The powers of ten that a double holds exactly.
const POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Returns the index of the first special byte of eight little-endian bytes, if any: a
/// quote, a backslash or a control character (which JSON forbids raw in a string), the bytes
/// that end the plain run of a string. The classic "has a zero byte" test, for three conditions at once; it can
/// flag bytes after the first real one, never before it.
#[inline]
fn first_special(chunk: u64) -> Option<usize> {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES << 7;
    // Flipping bit 1 maps the control characters 0x00-0x1F onto themselves and the quote
    // (0x22) onto 0x20, so one "byte below 0x21" test finds both.
    let flipped = chunk ^ (ONES * 0x02);
    let control_or_quote = flipped.wrapping_sub(ONES * 0x21) & !flipped;
    let backslashes = chunk ^ (ONES * u64::from(b'\\'));
    let backslash = backslashes.wrapping_sub(ONES) & !backslashes;
    let found = (control_or_quote | backslash) & HIGH;
    (found != 0).then(|| (found.trailing_zeros() / 8) as usize)
}

/// Returns where the first special byte (see [`first_special`]) is among the sixteen bytes from
/// `start`, if there are sixteen and one of them is.
#[inline]
fn short_name_length(bytes: &[u8], start: usize) -> Option<usize> {
    let chunk = bytes.get(start..start + 16)?;
    let word = |from: usize| {
        let mut word = [0; 8];
        word.copy_from_slice(&chunk[from..from + 8]);
        u64::from_le_bytes(word)
    };
    first_special(word(0)).or_else(|| first_special(word(8)).map(|offset| 8 + offset))
}

/// Returns whether `bytes` holds a byte below 0x20, which JSON forbids raw in a string.
fn has_control(bytes: &[u8]) -> bool {
    // A fold without an early exit, so that it compiles to a vectorised minimum.
    bytes.iter().fold(u8::MAX, |lowest, byte| lowest.min(*byte)) < 0x20
}

/// Returns whether the bytes of a string up to and including its closing quote (`stretch`,
/// which starts outside any escape: a backslash there starts one) hold only plain bytes and
/// two-byte escapes
/// (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`); `false` when there may be something else
/// (a control character, a `\u` escape, an invalid escape), which the caller then checks
/// escape by escape.
///
/// A backslash starts an escape unless it ends an odd run of backslashes; the pass tells
/// only a run of exactly one before it (`\\` then this one) apart, so after a longer run a
/// backslash counts as starting an escape and is flagged unless the byte after it is a
/// plain escape's: never a false "plain", sometimes a needless exact walk. One branch-free
/// fold per block of 256 bytes, which the compiler vectorises.
#[inline]
fn is_plain(stretch: &[u8]) -> bool {
    let is_plain_escape =
        |byte: u8| matches!(byte, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't');
    // Whether the byte `here` flags the string, given the two bytes before it and the one
    // after it.
    let is_suspect = |before2: u8, before1: u8, here: u8, after: u8| {
        let is_pair_end = (before1 == b'\\') & (before2 != b'\\');
        (here < 0x20) | ((here == b'\\') & !is_plain_escape(after) & !is_pair_end)
    };
    // The string's bytes are `stretch[..n]`; `stretch[n]` is its closing quote. The byte
    // before the stretch is not a backslash, so it reads as a space here.
    let n = stretch.len() - 1;
    let at = |idx: usize| stretch.get(idx).copied().unwrap_or(b' ');
    for idx in 0..n.min(2) {
        let before2 = idx.checked_sub(2).map_or(b' ', at);
        let before1 = idx.checked_sub(1).map_or(b' ', at);
        if is_suspect(before2, before1, stretch[idx], stretch[idx + 1]) {
            return false;
        }
    }
    if n <= 2 {
        return true;
    }
    // Every later byte with the two before it and the one after it.
    let (before2, before1, here, after) = (
        &stretch[..n - 2],
        &stretch[1..n - 1],
        &stretch[2..n],
        &stretch[3..=n],
    );
    let mut start = 0;
    while start < here.len() {
        let end = (start + 256).min(here.len());
        let is_flagged = before2[start..end]
            .iter()
            .zip(&before1[start..end])
            .zip(&here[start..end])
            .zip(&after[start..end])
            .fold(
                false,
                |is_flagged, (((&before2, &before1), &here), &after)| {
                    is_flagged | is_suspect(before2, before1, here, after)
                },
            );
        if is_flagged {
            return false;
        }
        start = end;
    }
    true
}

/// Appends the text of a string's raw bytes (already checked by `skip_string`) to `out`,
/// escapes decoded, and returns whether a lone surrogate escape was among them (written as a
/// replacement character, as `JSON.parse` keeps it and Pi's text shows it).
fn unescape_into(raw: &[u8], out: &mut Vec<u8>) -> bool {
    let mut has_lone_surrogate = false;
    let mut idx = 0;
    while let Some(found) = memchr::memchr(b'\\', &raw[idx..]) {
        out.extend_from_slice(&raw[idx..idx + found]);
        idx += found;
        let escaped = raw.get(idx + 1).copied().unwrap_or(b'\\');
        idx += 2;
        let simple = match escaped {
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'u' => None,
            other => Some(other),
        };
        if let Some(simple) = simple {
            out.push(simple);
            continue;
        }
        let unit = hex4(raw, idx);
        idx += 4;
        let code = if (0xD800..0xDC00).contains(&unit)
            && raw.get(idx) == Some(&b'\\')
            && raw.get(idx + 1) == Some(&b'u')
            && (0xDC00..0xE000).contains(&hex4(raw, idx + 2))
        {
            let low = hex4(raw, idx + 2);
            idx += 6;
            0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
        } else {
            unit
        };
        let character = char::from_u32(code).unwrap_or_else(|| {
            has_lone_surrogate = true;
            char::REPLACEMENT_CHARACTER
        });
        let mut buffer = [0; 4];
        out.extend_from_slice(character.encode_utf8(&mut buffer).as_bytes());
    }
    out.extend_from_slice(&raw[idx.min(raw.len())..]);
    has_lone_surrogate
}

/// Returns the value of the four hex digits at `idx` (checked by `skip_string`; 0 if absent).
fn hex4(raw: &[u8], idx: usize) -> u32 {
    raw.get(idx..idx + 4)
        .and_then(|hex| std::str::from_utf8(hex).ok())
        .and_then(|hex| u32::from_str_radix(hex, 16).ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Returns whether `text` is accepted as one JSON value, and agrees with serde_json on it
    /// (serde_json follows RFC 8259 as `JSON.parse` does, for everything tested here).
    fn check(text: &str, is_valid: bool) {
        let mut reader = Reader::new(text.as_bytes());
        let ours = reader.skip_value().and_then(|()| reader.end()).is_ok();
        assert_eq!(ours, is_valid, "{text:?}");
        let serde = serde_json::from_str::<serde_json::Value>(text).is_ok();
        assert_eq!(ours, serde, "serde_json disagrees on {text:?}");
    }

    #[test]
    fn accepts_exactly_json() {
        for text in [
            "{}",
            "[]",
            r#"{"a":[1,-2,3.5e-3,0,-0,1E+2,true,false,null,"x\"y\\z\u00e9\n"],"b":{"c":{}}}"#,
            " \t{ \"a\" : 1 } \r\n",
            r#""\ud83d\ude00""#,
            "18446744073709551616",
        ] {
            check(text, true);
        }
        for text in [
            "",
            "{",
            r#"{"a":1"#,
            r#"{"a":1,}"#,
            "[1,]",
            "[01]",
            "[1.]",
            "[.5]",
            "[1e]",
            "[-]",
            "[+1]",
            "{a:1}",
            r#"{"a" 1}"#,
            r#""unterminated"#,
            r#""bad \x escape""#,
            r#""bad \u12 escape""#,
            "\"raw\ttab\"",
            "[tru]",
            "[1] [2]",
            "nul",
        ] {
            check(text, false);
        }
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        let mut reader = Reader::new(deep.as_bytes());
        assert!(reader.skip_value().is_err(), "too deep");
    }

    #[test]
    fn finds_every_byte_that_ends_a_plain_run_wherever_it_is() {
        // Each byte value at each place of the first three eight-byte words of a string and
        // of a member name: the block-wise checks must agree with serde_json (bytes that are
        // not ASCII are passed over, as Pi decodes them before parsing).
        for byte in 0..=255_u8 {
            for before in 0..20 {
                let mut text = b"\"".to_vec();
                text.extend(std::iter::repeat_n(b'a', before));
                text.push(byte);
                text.extend_from_slice(b"bcd\"");
                let as_name = [b"{".as_slice(), &text, b":1}"].concat();
                for text in [text, as_name] {
                    let mut reader = Reader::new(&text);
                    let ours = reader.skip_value().and_then(|()| reader.end()).is_ok();
                    let expected = match byte {
                        0x80.. => true,
                        _ => serde_json::from_slice::<serde_json::Value>(&text).is_ok(),
                    };
                    assert_eq!(ours, expected, "{:?}", String::from_utf8_lossy(&text));
                }
            }
        }
    }

    #[test]
    fn gives_raw_values_offsets_and_where_an_error_is() {
        let line = br#"{"a": [1, {"b":"c\n"}] , "d":2}"#;
        let mut reader = Reader::new(line);
        let mut raw = Vec::new();
        reader
            .object(|reader, name| {
                raw.push((name.to_vec(), reader.raw_value()?.to_vec()));
                Ok(())
            })
            .expect("valid");
        assert_eq!(
            raw,
            [
                (b"a".to_vec(), br#"[1, {"b":"c\n"}]"#.to_vec()),
                (b"d".to_vec(), b"2".to_vec())
            ]
        );
        assert_eq!(reader.offset(), line.len());
        let error = Reader::new(b"[1,,2]").skip_value().expect_err("invalid");
        assert_eq!((error.problem(), error.offset()), (Problem::Value, Some(3)));
        let error = Reader::new(b"[1,").skip_value().expect_err("cut short");
        assert_eq!(
            (error.problem(), error.offset()),
            (Problem::EndOfLine, None)
        );
        assert_eq!(error.to_string(), "unexpected end of line");
    }

    #[test]
    fn reads_members_texts_and_numbers() {
        let line = br#"{"n\u0061me":"caf\u00e9","big":18446744073709551615,"neg":-5,"f":0.1,"s":"x","o":{"k":1}}"#;
        let mut reader = Reader::new(line);
        let mut seen = Vec::new();
        let is_object = reader
            .object(|reader, name| {
                match name {
                    b"name" => seen.push(format!("name={:?}", reader.text()?)),
                    b"big" | b"neg" | b"f" => {
                        seen.push(format!(
                            "{}={:?}",
                            String::from_utf8_lossy(name),
                            reader.number()?
                        ));
                    }
                    b"s" => seen.push(format!("s as number={:?}", reader.number()?)),
                    _ => reader.skip_value()?,
                }
                Ok(())
            })
            .expect("valid");
        assert!(is_object);
        reader.end().expect("nothing after");
        assert_eq!(
            seen,
            [
                r#"name=Some("café")"#,
                "big=Some(Unsigned(18446744073709551615))",
                "neg=Some(Signed(-5))",
                "f=Some(Float(0.1))",
                "s as number=None",
            ]
        );
        let mut reader = Reader::new(b"[1]");
        assert_eq!(reader.object(|reader, _| reader.skip_value()), Ok(false));
        assert_eq!(
            Reader::new(b"{\"a\":}").object(|reader, _| reader.skip_value()),
            Err(JsonError {
                what: Problem::Value,
                at: 5
            })
        );
    }

    proptest::proptest! {
        /// On any ASCII text built from JSON's own characters, the reader accepts exactly
        /// what serde_json (RFC 8259, like `JSON.parse`) accepts, and never panics.
        #[test]
        fn agrees_with_serde_json_on_arbitrary_text(text in r#"[\[\]{}":,\\ tfrueanls0-9.eE+\-xu\t]{0,40}"#) {
            let mut reader = Reader::new(text.as_bytes());
            let ours = reader.skip_value().and_then(|()| reader.end()).is_ok();
            let serde = serde_json::from_str::<serde_json::Value>(&text).is_ok();
            proptest::prop_assert_eq!(ours, serde, "{:?}", text);
        }

        /// Valid documents (serde_json's own output for generated values) are accepted.
        #[test]
        fn accepts_every_serialised_value(value in json_value()) {
            let text = serde_json::to_string(&value).expect("serialises");
            let mut reader = Reader::new(text.as_bytes());
            proptest::prop_assert!(reader.skip_value().and_then(|()| reader.end()).is_ok(), "{}", text);
        }
    }

    proptest::proptest! {
        /// Every number reads as Rust's correctly rounded float parsing (and JavaScript's)
        /// reads it, whether it takes the exact fast path or not.
        #[test]
        fn reads_numbers_like_correct_float_parsing(
            text in r"-?(0|[1-9][0-9]{0,20})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?",
        ) {
            let mut reader = Reader::new(text.as_bytes());
            let ours = reader.number().expect("valid").expect("a number");
            let expected: f64 = text.parse().expect("Rust parses it");
            let as_float = match ours {
                Number::Unsigned(value) => value as f64,
                Number::Signed(value) => value as f64,
                Number::Float(value) => value,
            };
            if let Number::Float(_) = ours {
                proptest::prop_assert_eq!(as_float.to_bits(), expected.to_bits(), "{}", text);
            } else {
                proptest::prop_assert_eq!(as_float, expected, "{}", text);
            }
        }
    }

    proptest::proptest! {
        /// Every integer reads exactly, whatever its length and wherever it ends: the digits
        /// are read eight at a time while eight bytes are left in the line, then one by one.
        #[test]
        fn reads_integers_exactly(value in proptest::prelude::any::<i64>(), suffix in "[,}\\]]{0,9}") {
            let text = format!("{value}{suffix}");
            let mut reader = Reader::new(text.as_bytes());
            let expected = match u64::try_from(value) {
                Ok(value) => Number::Unsigned(value),
                Err(_) => Number::Signed(value),
            };
            proptest::prop_assert_eq!(reader.number(), Ok(Some(expected)), "{}", text);
            proptest::prop_assert_eq!(reader.offset(), value.to_string().len());
        }
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>()
                .prop_filter("finite", |x| x.is_finite())
                .prop_map(serde_json::Value::from),
            "[\\PC\\t\\n\"\\\\]{0,12}".prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                proptest::collection::btree_map("[a-z\"]{0,6}", inner, 0..6)
                    .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
            ]
        })
    }

    /// Pieces of string content: plain text, every kind of escape (valid, invalid, cut
    /// short, surrogates), runs of backslashes, control characters and bytes that are not
    /// UTF-8.
    const STRING_PIECES: &[&str] = &[
        "a",
        "plain text of some length ",
        "\\",
        "\\\\",
        "\\\\\\",
        "\\n",
        "\\t",
        "\\\"",
        "\\/",
        "\\u00e9",
        "\\u001b",
        "\\u12",
        "\\uZZZZ",
        "\\ud83d",
        "\\ude00",
        "\\ud83d\\ude00",
        "\\x",
        "\t",
        "\u{1}",
        "\u{1f}",
        "\u{7f}",
        "é",
        "日本",
    ];

    /// Returns a string literal made of `pieces`, `repeat` times over, with `invalid` (a byte
    /// that is not UTF-8) at `at` when asked.
    fn string_literal(pieces: &[usize], repeat: usize, invalid: Option<usize>) -> Vec<u8> {
        let mut body: Vec<u8> = Vec::new();
        for _ in 0..repeat {
            for &piece in pieces {
                body.extend_from_slice(STRING_PIECES[piece].as_bytes());
            }
        }
        if let Some(at) = invalid {
            body.insert(at.min(body.len()), 0xff);
        }
        [b"\"".as_slice(), &body, b"\""].concat()
    }

    proptest::proptest! {
        /// Strings of any length (the short path, the long one, blocks of the vectorised
        /// check and their edges) are accepted exactly when serde_json's own string check
        /// accepts them (which, like `JSON.parse` over decoded text, takes lone surrogates and
        /// does not look at UTF-8), and end where they end.
        #[test]
        fn checks_strings_of_any_length_like_json_parse(
            pieces in proptest::collection::vec(0..STRING_PIECES.len(), 0..12),
            repeat in 1usize..40,
            invalid in proptest::option::of(0usize..2000),
        ) {
            let literal = string_literal(&pieces, repeat, invalid);
            let line = [b"[".as_slice(), &literal, b",1]"].concat();
            let mut reader = Reader::new(&line);
            let ours = reader.skip_value().and_then(|()| reader.end()).is_ok();
            let serde = serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok();
            proptest::prop_assert_eq!(ours, serde, "{:?}", String::from_utf8_lossy(&line));
        }

        /// A kept string decodes as serde_json decodes it wherever serde_json accepts it
        /// (strictly), and as serde_json decodes it after Pi's repairs (lone surrogates and
        /// bytes that are not UTF-8 become replacement characters) as Pi reads it.
        #[test]
        fn decodes_strings_like_serde_json(
            pieces in proptest::collection::vec(0..STRING_PIECES.len(), 0..12),
            repeat in 1usize..4,
            invalid in proptest::option::of(0usize..200),
        ) {
            let literal = string_literal(&pieces, repeat, invalid);
            let mut reader = Reader::new(&literal);
            let Ok(Some(string)) = reader.string() else {
                return Ok(());
            };
            if reader.end().is_err() {
                return Ok(());
            }
            let strict = serde_json::from_slice::<String>(&literal).ok();
            proptest::prop_assert_eq!(string.to_strict_text().map(Cow::into_owned), strict);
            let as_pi = match crate::decode_lossy(&literal) {
                serde_json::Value::String(text) => Some(text),
                _ => None,
            };
            proptest::prop_assert_eq!(Some(string.to_text().into_owned()), as_pi);
        }
    }

    proptest::proptest! {
        /// A value written with white space everywhere it may go comes back as serde_json
        /// writes it compactly; a text that is not JSON is refused as the reader refuses it.
        #[test]
        fn strict_json_drops_white_space_and_keeps_the_rest(value in json_value()) {
            let pretty = serde_json::to_string_pretty(&value).expect("serialises");
            let spaced = pretty.replace('\n', "\r\n\t");
            let compact = serde_json::to_string(&value).expect("serialises");
            proptest::prop_assert_eq!(to_strict_json(spaced.as_bytes()), Ok(compact));
        }

        #[test]
        fn strict_json_refuses_what_is_not_json(text in r#"[\[\]{}":,\\ tfrueanls0-9.eE+\-xu\t]{0,40}"#) {
            let mut reader = Reader::new(text.as_bytes());
            let is_json = reader.skip_value().and_then(|()| reader.end()).is_ok();
            proptest::prop_assert_eq!(to_strict_json(text.as_bytes()).is_ok(), is_json);
        }
    }

    #[test]
    fn strict_json_repairs_what_pi_repairs() {
        let line =
            b"{ \"a\" :\t\"x\xff \\ud83d \\ud83d\\ude00 \\\\ud800 \" , \"b\":[ 1e400 , -0 ] }";
        assert_eq!(
            to_strict_json(line).as_deref(),
            Ok("{\"a\":\"x\u{fffd} \\ufffd \\ud83d\\ude00 \\\\ud800 \",\"b\":[1e400,-0]}")
        );
    }

    #[test]
    fn reads_numbers_as_javascript_sees_them() {
        let check = |text: &str, expected: std::result::Result<Number, ()>| {
            let mut reader = Reader::new(text.as_bytes());
            let actual = reader
                .number()
                .and_then(|number| reader.end().map(|()| number))
                .map(|number| number.expect("a number"))
                .map_err(|_| ());
            assert_eq!(actual, expected, "{text}");
        };
        check("0", Ok(Number::Unsigned(0)));
        check("148785", Ok(Number::Unsigned(148_785)));
        check("18446744073709551615", Ok(Number::Unsigned(u64::MAX)));
        check(
            "18446744073709551616",
            Ok(Number::Float(18_446_744_073_709_551_616.0)),
        );
        check("-0", Ok(Number::Signed(0)));
        check("-5", Ok(Number::Signed(-5)));
        check("-9223372036854775808", Ok(Number::Signed(i64::MIN)));
        check(
            "-9223372036854775809",
            Ok(Number::Float(-9_223_372_036_854_775_809.0)),
        );
        check("0.006", Ok(Number::Float(0.006)));
        check("1e3", Ok(Number::Float(1000.0)));
        check("01", Err(()));
        check("-", Err(()));
        check("1.", Err(()));
        check("1e", Err(()));
    }

    #[test]
    fn bytes_that_are_not_utf8_are_replaced_not_refused() {
        let mut reader = Reader::new(b"\"a\xffb\"");
        assert_eq!(reader.text(), Ok(Some(Cow::Owned("a\u{fffd}b".to_owned()))));
    }
}
