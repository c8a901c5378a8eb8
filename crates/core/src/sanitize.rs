//! Terminal sanitising: session content is untrusted text that may carry escape sequences or
//! bidirectional overrides that would rewrite what a terminal shows.

use std::borrow::Cow;

/// Returns whether `character` is a bidi control that can reorder displayed text.
fn is_bidi_control(character: char) -> bool {
    matches!(
        character,
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
    )
}

/// Returns whether `character` is invisible yet can change what a reader takes a line to say:
/// zero-width characters (space, joiners, word joiner, BOM), invisible operators, and the
/// Unicode tag block (used to smuggle hidden text), as fd's sanitiser removes them.
fn is_invisible(character: char) -> bool {
    matches!(
        character,
        '\u{200B}'..='\u{200D}'
            | '\u{2060}'..='\u{2064}'
            | '\u{FEFF}'
            | '\u{180E}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

/// Returns whether `character` is a Unicode line or paragraph separator (U+2028, U+2029):
/// not a control, yet a line break to some viewers.
fn is_line_separator(character: char) -> bool {
    matches!(character, '\u{2028}' | '\u{2029}')
}

/// Returns whether every byte of `text` is printable ASCII, space to tilde: text that needs
/// no escaping. The fold has no early exit, so the compiler checks many bytes per
/// instruction.
pub fn is_printable_ascii(text: &str) -> bool {
    text.bytes().fold(true, |printable, byte| {
        printable & (0x20..0x7f).contains(&byte)
    })
}

/// Returns whether every byte of `text` is printable ASCII, a tab or a newline: text
/// [`sanitize_for_terminal`] leaves as it is.
fn is_clean_ascii(text: &str) -> bool {
    text.bytes().fold(true, |clean, byte| {
        clean & ((0x20..0x7f).contains(&byte) | (byte == b'\n') | (byte == b'\t'))
    })
}

/// Returns whether `character` must go: a C0 control other than newline and tab, DEL, a C1
/// control, a bidi control, or an invisible character.
fn is_stripped(character: char) -> bool {
    (character.is_control() && character != '\n' && character != '\t')
        || is_bidi_control(character)
        || is_invisible(character)
}

/// Returns `text` without terminal control sequences (ESC/CSI/OSC/DCS and friends), C0/C1
/// controls except newline and tab, bidi override characters, zero-width characters and
/// Unicode tag characters.
///
/// Borrows `text` unchanged when there is nothing to strip.
pub fn sanitize_for_terminal(text: &str) -> Cow<'_, str> {
    if is_clean_ascii(text) || !text.chars().any(is_stripped) {
        return Cow::Borrowed(text);
    }
    let mut clean = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(character) = chars.next() {
        match character {
            '\u{1B}' => match chars.next() {
                // CSI: parameters and intermediates up to one final byte.
                Some('[') => skip_csi(&mut chars),
                // OSC, DCS, SOS, PM, APC: a string up to BEL or ST.
                Some(']' | 'P' | 'X' | '^' | '_') => skip_string(&mut chars),
                // Other escapes: intermediates, then one final character.
                Some(next) if ('\u{20}'..='\u{2F}').contains(&next) => {
                    while chars
                        .next_if(|c| ('\u{20}'..='\u{2F}').contains(c))
                        .is_some()
                    {}
                    chars.next();
                }
                Some(_) | None => {}
            },
            '\u{9B}' => skip_csi(&mut chars),
            '\u{9D}' | '\u{90}' | '\u{98}' | '\u{9E}' | '\u{9F}' => skip_string(&mut chars),
            character if is_stripped(character) => {}
            character => clean.push(character),
        }
    }
    Cow::Owned(clean)
}

/// Returns whether [`escape_for_terminal`] must write `character` as an escape.
fn needs_escape(character: char) -> bool {
    character.is_control()
        || is_line_separator(character)
        || is_bidi_control(character)
        || is_invisible(character)
}

/// Returns whether `text` may hold a character [`needs_escape`] is true of, from its bytes
/// alone: a C0 control or DEL, or the first bytes of the UTF-8 forms of the others (`C2` for
/// the C1 controls, `D8` for U+061C, `E1` for U+180E, `E2 80`/`E2 81` for U+2000-U+207F,
/// `EF` for U+FEFF, `F3` for the tag block). Never false for such text; true for some text
/// that is clean (then the exact check decides). Saves that check its character decoding
/// for text such as `10:00→12:00`.
fn may_need_escape(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(index, &byte)| match byte {
        0x00..=0x1f | 0x7f | 0xc2 | 0xd8 | 0xe1 | 0xef | 0xf3 => true,
        0xe2 => matches!(bytes.get(index + 1), Some(0x80 | 0x81)),
        _ => false,
    })
}

/// Returns `text` with every control character (C0 including newline and tab, DEL, C1), the
/// Unicode line and paragraph separators, every bidi control and every invisible character
/// written as a visible `\u{..}` escape.
///
/// For single-line fields of a listing (paths, cwds, warning reasons) shown to a person: unlike
/// [`sanitize_for_terminal`] nothing is removed, so the text can still be matched against the
/// file, and a newline cannot forge a second row. Borrows `text` when nothing needs escaping,
/// which is the case for every ordinary path.
pub fn escape_for_terminal(text: &str) -> Cow<'_, str> {
    // Printable ASCII (every ordinary path) needs nothing.
    if is_printable_ascii(text) || !may_need_escape(text) {
        return Cow::Borrowed(text);
    }
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        if needs_escape(character) {
            escaped.push_str(&format!("\\u{{{:x}}}", u32::from(character)));
        } else {
            escaped.push(character);
        }
    }
    Cow::Owned(escaped)
}

fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(&character) = chars.peek() {
        if ('\u{20}'..='\u{3F}').contains(&character) {
            chars.next();
        } else {
            if ('\u{40}'..='\u{7E}').contains(&character) {
                chars.next();
            }
            // Anything else ends a broken sequence and is left for the caller to judge.
            return;
        }
    }
}

fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(character) = chars.next() {
        match character {
            '\u{07}' | '\u{9C}' => return,
            '\u{1B}' if chars.peek() == Some(&'\\') => {
                chars.next();
                return;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: &str) {
        assert_eq!(sanitize_for_terminal(input), expected, "input {input:?}");
    }

    #[test]
    fn strips_sequences_and_controls() {
        for (input, expected) in [
            ("plain\ttext\nline", "plain\ttext\nline"),
            ("\u{1B}[31mred\u{1B}[0m", "red"),
            ("\u{1B}[?25l\u{1B}[2J", ""),
            ("a\u{1B}]0;title\u{07}b", "ab"),
            (
                "a\u{1B}]8;;http://x\u{1B}\\link\u{1B}]8;;\u{1B}\\b",
                "alinkb",
            ),
            ("a\u{1B}Pdata\u{1B}\\b", "ab"),
            ("a\u{1B}(Bb", "ab"),
            ("a\u{1B}7b", "ab"),
            ("a\r\u{8}\u{0}b\u{7F}", "ab"),
            ("a\u{9B}31mb", "ab"),
            ("a\u{85}b", "ab"),
            ("abc\u{202E}fed\u{202C}", "abcfed"),
            ("x\u{2066}y\u{2069}\u{200E}\u{200F}\u{061C}", "xy"),
            ("tail\u{1B}", "tail"),
            ("tail\u{1B}]unterminated", "tail"),
            ("é ✓ 日本", "é ✓ 日本"),
            // Zero-width and tag characters hide text from the reader.
            ("rm\u{200B}-rf\u{200D}\u{2060}\u{FEFF}", "rm-rf"),
            ("ok\u{E0001}\u{E0068}\u{E0069}\u{E007F}", "ok"),
        ] {
            check(input, expected);
        }
    }

    #[test]
    fn escapes_controls_visibly() {
        assert_eq!(
            escape_for_terminal("/home/u/app.jsonl"),
            "/home/u/app.jsonl"
        );
        assert!(matches!(escape_for_terminal("plain é ✓"), Cow::Borrowed(_)));
        assert_eq!(
            escape_for_terminal("a\u{1b}]0;t\u{7}b"),
            "a\\u{1b}]0;t\\u{7}b"
        );
        assert_eq!(escape_for_terminal("rel\nfake\tx"), "rel\\u{a}fake\\u{9}x");
        assert_eq!(
            escape_for_terminal("x\u{202e}y\u{85}"),
            "x\\u{202e}y\\u{85}"
        );
        assert_eq!(escape_for_terminal("a\u{200b}b"), "a\\u{200b}b");
        // A line or paragraph separator cannot break a one-line field either.
        assert_eq!(
            escape_for_terminal("a\u{2028}b\u{2029}"),
            "a\\u{2028}b\\u{2029}"
        );
    }

    #[test]
    fn borrows_clean_text() {
        assert!(matches!(
            sanitize_for_terminal("clean\ntext"),
            Cow::Borrowed(_)
        ));
    }

    /// The byte pre-check never passes a character that needs an escape: checked for every
    /// character there is, alone and between others.
    #[test]
    fn the_byte_check_misses_no_character_that_needs_escaping() {
        for code in 0..=u32::from(char::MAX) {
            let Some(character) = char::from_u32(code) else {
                continue;
            };
            if needs_escape(character) {
                assert!(may_need_escape(&format!("a{character}→b")), "U+{code:04X}");
            }
        }
        assert!(!may_need_escape("2026-11-30 10:00→12:00"));
        assert!(matches!(
            escape_for_terminal("10:00→12:00"),
            Cow::Borrowed(_)
        ));
        assert_eq!(escape_for_terminal("a\u{2028}→"), "a\\u{2028}→");
    }

    proptest::proptest! {
        #[test]
        fn output_has_no_escape_or_bidi(input in ".{0,64}") {
            let clean = sanitize_for_terminal(&input);
            proptest::prop_assert!(!clean.chars().any(is_stripped));
        }
    }
}
