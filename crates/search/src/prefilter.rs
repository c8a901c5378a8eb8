//! The raw-byte prefilter: which lines of a session file can hold a match, decided before any
//! JSON is decoded.
//!
//! A JSON string stores its text escaped. Pi writes with `JSON.stringify`, whose escaping is
//! *canonical*: `"` and `\` become `\"` and `\\`, the controls U+0008, U+0009, U+000A, U+000C
//! and U+000D become `\b`, `\t`, `\n`, `\f`, `\r`, every other control below U+0020 becomes
//! `\u00xx` (lowercase hex), and every other character is written as itself. Canonical
//! escaping works character by character, so the stored form of a substring is a substring of
//! the stored form of the text.
//!
//! The prefilter is therefore the pattern *translated into stored form*: every literal
//! character becomes its escape, every character class gains the escapes of the characters it
//! holds, and look-arounds (`^`, `$`, word boundaries) become empty, which only widens it.
//! Whatever the pattern matches in a canonically escaped text, the translation matches in the
//! stored bytes, so a line it does not match holds no match.
//!
//! Other writers may escape differently (`\u00e9` for `é`, `\/` for `/`, uppercase hex). A
//! `/` in the pattern also matches `\/`. For `\u`, the caller looks for every `\u` in the
//! bytes with a fast two-byte search ([`non_canonical_escapes`]): an escape Pi writes itself
//! is skipped, and any other sends its line to the exact, decoding check, so the search stays
//! exact for any valid JSON. Invalid UTF-8 in a line decodes to U+FFFD, so a U+FFFD in the
//! pattern also matches one to three bytes that are not ASCII.
//!
//! A line the prefilter matches is only a candidate: the match may be in a field name, an id
//! or image data. The caller decodes the line and checks the searchable texts exactly.

use std::ops::Range;

use regex_automata::Input;
use regex_automata::meta;
use regex_syntax::hir::{
    self, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind,
};

/// Returns the compiled prefilter of one pattern.
#[derive(Debug, Clone)]
pub(crate) struct Prefilter {
    regex: meta::Regex,
}

/// Class members that more than this many escaped characters are replaced by "any escape".
const MAX_LISTED_ESCAPES: usize = 4;

impl Prefilter {
    /// Returns the prefilter for a pattern's `hir`, or `None` when no prefilter helps (the
    /// pattern can match the empty string, so every line is a candidate) or the translation
    /// does not compile (too large); the caller then decodes every line.
    pub(crate) fn new(hir: &Hir, size_limit: usize) -> Option<Prefilter> {
        if hir.properties().minimum_len() == Some(0) {
            return None;
        }
        let encoder = Encoder::new()?;
        let stored = encoder.encode(hir);
        let regex = meta::Regex::builder()
            .configure(
                meta::Config::new()
                    .utf8_empty(false)
                    .nfa_size_limit(Some(size_limit))
                    .hybrid_cache_capacity(crate::pattern::REGEX_DFA_SIZE_LIMIT),
            )
            .build_from_hir(&stored)
            .ok()?;
        Some(Prefilter { regex })
    }

    /// Returns the next match in `haystack` at or after `from`.
    pub(crate) fn find(&self, haystack: &[u8], from: usize) -> Option<Range<usize>> {
        let input = Input::new(haystack).range(from..);
        self.regex.find(input).map(|found| found.range())
    }
}

/// Appends to `positions` the offset of every `\u` escape in `haystack` that canonical JSON
/// would not have written (see [`is_canonical_escape`]): a line holding one must be decoded
/// whatever the prefilter says.
pub(crate) fn non_canonical_escapes(
    finder: &memchr::memmem::Finder<'_>,
    haystack: &[u8],
    positions: &mut Vec<usize>,
) {
    positions.extend(
        finder
            .find_iter(haystack)
            .filter(|&at| !is_canonical_escape(haystack, at)),
    );
}

/// Returns whether the `\u` at `line[at..]` cannot hide a match: either its backslash
/// is itself escaped (`\\u` is a backslash and a `u`), or it is `\u00xx` for a control that
/// canonical escaping writes that way, which the translated pattern already expects.
pub(crate) fn is_canonical_escape(line: &[u8], at: usize) -> bool {
    let n_backslashes_before = line[..at]
        .iter()
        .rev()
        .take_while(|&&byte| byte == b'\\')
        .count();
    if n_backslashes_before % 2 == 1 {
        return true;
    }
    let Some(&[b'u', b'0', b'0', high, low]) = line.get(at + 1..at + 6) else {
        return false;
    };
    let value = match (high, low) {
        (b'0' | b'1', b'0'..=b'9') => (high - b'0') * 16 + (low - b'0'),
        (b'0' | b'1', b'a'..=b'f') => (high - b'0') * 16 + (low - b'a' + 10),
        _ => return false,
    };
    short_escape(char::from(value)).is_none()
}

/// Returns the two-character escape canonical JSON uses for `character`, if it has one.
fn short_escape(character: char) -> Option<&'static [u8]> {
    match character {
        '"' => Some(br#"\""#),
        '\\' => Some(br"\\"),
        '\u{08}' => Some(br"\b"),
        '\u{0C}' => Some(br"\f"),
        '\n' => Some(br"\n"),
        '\r' => Some(br"\r"),
        '\t' => Some(br"\t"),
        _ => None,
    }
}

/// Appends the canonical stored form of `character` to `out`.
pub(crate) fn encode_char(character: char, out: &mut Vec<u8>) {
    if let Some(escape) = short_escape(character) {
        out.extend_from_slice(escape);
    } else if u32::from(character) < 0x20 {
        out.extend_from_slice(format!("\\u{:04x}", u32::from(character)).as_bytes());
    } else {
        let mut buffer = [0u8; 4];
        out.extend_from_slice(character.encode_utf8(&mut buffer).as_bytes());
    }
}

/// Returns whether canonical JSON escapes `character`.
fn is_escaped(character: char) -> bool {
    u32::from(character) < 0x20 || character == '"' || character == '\\'
}

/// Returns `/` or its optional escape `\/`.
fn slash() -> Hir {
    Hir::alternation(vec![Hir::literal(*b"/"), Hir::literal(*b"\\/")])
}

/// Translates a pattern into the stored form of what it matches.
struct Encoder {
    /// Every escape JSON allows: `\` and one of `"\/bfnrt`, or `u` and four hex digits.
    any_escape: Hir,
    /// One to three bytes that are not ASCII: what one U+FFFD of a lossy decode stood for.
    invalid_utf8: Hir,
    /// The characters canonical JSON escapes, as a class.
    escaped: ClassUnicode,
}

impl Encoder {
    fn new() -> Option<Encoder> {
        let any_escape = regex_syntax::parse(r#"\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})"#).ok()?;
        let invalid_utf8 = regex_syntax::ParserBuilder::new()
            .utf8(false)
            .build()
            .parse(r"(?-u:[\x80-\xFF]){1,3}")
            .ok()?;
        let escaped = ClassUnicode::new([
            ClassUnicodeRange::new('\u{0}', '\u{1F}'),
            ClassUnicodeRange::new('"', '"'),
            ClassUnicodeRange::new('\\', '\\'),
        ]);
        Some(Encoder {
            any_escape,
            invalid_utf8,
            escaped,
        })
    }

    /// Returns the stored-form translation of `hir`; recursion is bounded by the parser's
    /// nesting limit.
    fn encode(&self, hir: &Hir) -> Hir {
        match hir.kind() {
            HirKind::Empty | HirKind::Look(_) => Hir::empty(),
            HirKind::Literal(hir::Literal(bytes)) => self.encode_literal(bytes),
            HirKind::Class(Class::Unicode(class)) => self.encode_unicode_class(class),
            HirKind::Class(Class::Bytes(class)) => self.encode_byte_class(class),
            HirKind::Repetition(repetition) => Hir::repetition(hir::Repetition {
                min: repetition.min,
                max: repetition.max,
                greedy: repetition.greedy,
                sub: Box::new(self.encode(&repetition.sub)),
            }),
            HirKind::Capture(capture) => self.encode(&capture.sub),
            HirKind::Concat(subs) => Hir::concat(subs.iter().map(|sub| self.encode(sub)).collect()),
            HirKind::Alternation(subs) => {
                Hir::alternation(subs.iter().map(|sub| self.encode(sub)).collect())
            }
        }
    }

    fn replacement_character(&self) -> Hir {
        Hir::alternation(vec![
            Hir::literal("\u{FFFD}".as_bytes()),
            self.invalid_utf8.clone(),
        ])
    }

    fn encode_literal(&self, bytes: &[u8]) -> Hir {
        let mut pieces = Vec::new();
        let mut current = Vec::with_capacity(bytes.len());
        for chunk in bytes.utf8_chunks() {
            for character in chunk.valid().chars() {
                if character == '\u{FFFD}' {
                    pieces.push(Hir::literal(std::mem::take(&mut current)));
                    pieces.push(self.replacement_character());
                } else if character == '/' {
                    pieces.push(Hir::literal(std::mem::take(&mut current)));
                    pieces.push(slash());
                } else {
                    encode_char(character, &mut current);
                }
            }
            // Bytes that are not UTF-8 (only in `(?-u:...)`) match themselves.
            current.extend_from_slice(chunk.invalid());
        }
        pieces.push(Hir::literal(current));
        Hir::concat(pieces)
    }

    /// Returns the alternatives for a class: its unescaped members as a class, then the
    /// escapes of its escaped members (or any escape, when there are many).
    fn escape_alternatives(&self, escaped_members: Vec<char>, alternatives: &mut Vec<Hir>) {
        if escaped_members.len() > MAX_LISTED_ESCAPES {
            alternatives.push(self.any_escape.clone());
            return;
        }
        for character in escaped_members {
            let mut stored = Vec::new();
            encode_char(character, &mut stored);
            alternatives.push(Hir::literal(stored));
        }
    }

    fn encode_unicode_class(&self, class: &ClassUnicode) -> Hir {
        let mut plain = class.clone();
        plain.difference(&self.escaped);
        let mut escaped = class.clone();
        escaped.intersect(&self.escaped);
        let escaped_members: Vec<char> = escaped
            .iter()
            .flat_map(|range| range.start()..=range.end())
            .collect();
        let has_replacement = class
            .iter()
            .any(|range| (range.start()..=range.end()).contains(&'\u{FFFD}'));
        let mut alternatives = Vec::new();
        if plain.iter().next().is_some() {
            alternatives.push(Hir::class(Class::Unicode(plain)));
        }
        self.escape_alternatives(escaped_members, &mut alternatives);
        if has_replacement {
            alternatives.push(self.invalid_utf8.clone());
        }
        if class
            .iter()
            .any(|range| (range.start()..=range.end()).contains(&'/'))
        {
            alternatives.push(Hir::literal(*b"\\/"));
        }
        Hir::alternation(alternatives)
    }

    fn encode_byte_class(&self, class: &ClassBytes) -> Hir {
        let escaped_bytes = ClassBytes::new([
            ClassBytesRange::new(0, 0x1F),
            ClassBytesRange::new(b'"', b'"'),
            ClassBytesRange::new(b'\\', b'\\'),
        ]);
        let mut plain = class.clone();
        plain.difference(&escaped_bytes);
        let mut escaped = class.clone();
        escaped.intersect(&escaped_bytes);
        let escaped_members: Vec<char> = escaped
            .iter()
            .flat_map(|range| range.start()..=range.end())
            .map(char::from)
            .filter(|&character| is_escaped(character))
            .collect();
        let mut alternatives = Vec::new();
        if plain.iter().next().is_some() {
            alternatives.push(Hir::class(Class::Bytes(plain)));
        }
        self.escape_alternatives(escaped_members, &mut alternatives);
        if class
            .iter()
            .any(|range| (range.start()..=range.end()).contains(&b'/'))
        {
            alternatives.push(Hir::literal(*b"\\/"));
        }
        Hir::alternation(alternatives)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::{Matcher, Pattern};

    /// Returns whether the JSON string body `stored` is a candidate for `pattern`: the
    /// prefilter matches it, or it holds an escape canonical JSON would not write.
    fn candidates(pattern: &Pattern, stored: &str) -> bool {
        let matcher = Matcher::new(pattern).expect("compiles");
        let Some(prefilter) = Prefilter::new(matcher.hir(), matcher.size_limit()) else {
            return true;
        };
        let line = stored.as_bytes();
        let mut forced = Vec::new();
        non_canonical_escapes(&memchr::memmem::Finder::new(b"\\u"), line, &mut forced);
        !forced.is_empty() || prefilter.find(line, 0).is_some()
    }

    /// Checks that `pattern` against the JSON string body `stored` is a candidate or not.
    fn check(pattern: Pattern, stored: &str, expected: bool) {
        assert_eq!(
            candidates(&pattern, stored),
            expected,
            "{pattern:?} on {stored}"
        );
    }

    #[test]
    fn escapes_in_the_pattern_are_found_in_stored_form() {
        check(Pattern::literal("say \"hi\""), r#"x say \"hi\" y"#, true);
        check(Pattern::literal(r"C:\dir"), r"x C:\\dir", true);
        check(Pattern::literal("a\nb"), r"a\nb", true);
        check(Pattern::literal("a\tb"), r"a\tb", true);
        check(Pattern::literal("a\u{1b}[0m"), r"a\u001b[0m", true);
        check(Pattern::literal("a\nb"), "a b", false);
        check(Pattern::regex(r"a\sb"), r"a\nb", true);
        check(Pattern::regex(r"a[^x]b"), r#"a\"b"#, true);
        check(Pattern::regex(r"a.b"), r"a\u0007b", true);
        check(Pattern::regex(r"^foo$"), r"foo", true);
        check(Pattern::literal("foo").whole_word(), r"\nfoo", true);
    }

    #[test]
    fn canonical_escapes_elsewhere_do_not_make_candidates() {
        check(
            Pattern::literal("needle"),
            r"plain \u001b[31m red \n text",
            false,
        );
        check(Pattern::literal("needle"), r"C:\\users\\u", false);
        check(
            Pattern::literal("needle"),
            r#"quote \" and \\/ slash"#,
            false,
        );
    }

    #[test]
    fn other_escapes_always_make_candidates() {
        // `\u006e` is `n`: a writer other than Pi could hide the needle this way.
        check(Pattern::literal("needle"), r"\u006eeedle", true);
        check(Pattern::literal("needle"), r"\u00e9", true);
        check(Pattern::literal("needle"), r"\u001B", true);
        check(Pattern::literal("needle"), r"\u000a", true);
        check(Pattern::literal("a/b"), r"x a\/b", true);
        check(Pattern::regex("a[/]b"), r"x a\/b", true);
        check(Pattern::literal("needle"), r"\ud83d\ude00", true);
    }

    #[test]
    fn case_folding_and_unicode_survive_translation() {
        let insensitive =
            |text: &str| Pattern::literal(text).with_case(crate::pattern::CaseMode::Insensitive);
        check(insensitive("error"), "An ERROR", true);
        check(insensitive("k"), "\u{212A}", true);
        check(insensitive("straße"), "STRASSE", false);
        check(Pattern::literal("日本"), "x日本y", true);
        check(Pattern::literal("\u{FFFD}x"), "\u{FFFD}x", true);
    }

    #[test]
    fn patterns_that_match_empty_have_no_prefilter() {
        let matcher = Matcher::new(&Pattern::regex("a*")).expect("compiles");
        assert!(Prefilter::new(matcher.hir(), matcher.size_limit()).is_none());
    }

    #[test]
    fn canonical_escape_rules() {
        for (line, at, expected) in [
            (&br"\u001b"[..], 0, true),
            (br"\u001B", 0, false),
            (br"\u000a", 0, false),
            (br"\u0041", 0, false),
            (br"\u00e9", 0, false),
            (br"\\u0041", 1, true),
            (br"\\\u0041", 2, false),
            (br"\u00", 0, false),
        ] {
            assert_eq!(
                is_canonical_escape(line, at),
                expected,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }
}
