//! Quoting a path for a POSIX shell, and the command that resumes a session.

use std::borrow::Cow;

/// Returns the command that resumes the session stored at `path`: `pi --session PATH`.
pub fn resume_command(path: &str) -> String {
    format!("pi --session {}", shell_quote(path))
}

/// Returns `text` as one word of a POSIX shell command line.
///
/// Text made only of characters no shell treats specially is returned as is; other text is
/// put in single quotes (a `'` inside written `'\''`). Text holding a control or bidi
/// character, which must not reach a terminal or a clipboard raw, is written in ANSI-C
/// quotes (`$'...'`, understood by bash, zsh, ksh and POSIX.1-2024 sh) with those characters
/// as `\xHH` escapes of their UTF-8 bytes.
pub fn shell_quote(text: &str) -> Cow<'_, str> {
    let is_plain =
        |character: char| character.is_ascii_alphanumeric() || "_./:@%+=,-".contains(character);
    if !text.is_empty() && !text.starts_with(['-', '=']) && text.chars().all(is_plain) {
        return Cow::Borrowed(text);
    }
    if !text.chars().any(needs_escape) {
        return Cow::Owned(format!("'{}'", text.replace('\'', r"'\''")));
    }
    let mut quoted = String::with_capacity(text.len() + 8);
    quoted.push_str("$'");
    for character in text.chars() {
        match character {
            '\\' => quoted.push_str(r"\\"),
            '\'' => quoted.push_str(r"\'"),
            character if needs_escape(character) => {
                let mut buffer = [0u8; 4];
                for byte in character.encode_utf8(&mut buffer).bytes() {
                    quoted.push_str(&format!("\\x{byte:02x}"));
                }
            }
            character => quoted.push(character),
        }
    }
    quoted.push('\'');
    Cow::Owned(quoted)
}

/// Returns whether `character` is a control (C0, DEL, C1) or a bidi control.
fn needs_escape(character: char) -> bool {
    character.is_control()
        || matches!(
            character,
            '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: &str) {
        assert_eq!(shell_quote(input), expected, "input {input:?}");
    }

    #[test]
    fn quoting() {
        for (input, expected) in [
            (
                "/home/u/.pi/agent/sessions/--home-u-app--/2026-11-30T07-00-59-245Z_01a2.jsonl",
                "/home/u/.pi/agent/sessions/--home-u-app--/2026-11-30T07-00-59-245Z_01a2.jsonl",
            ),
            ("", "''"),
            ("-rf", "'-rf'"),
            ("/with space/x", "'/with space/x'"),
            ("/it's", r"'/it'\''s'"),
            ("/$(rm -rf ~)`x`", "'/$(rm -rf ~)`x`'"),
            ("/é/日本", "'/é/日本'"),
            ("/a\nb", r"$'/a\x0ab'"),
            ("/a\u{1b}[2J'\\", r"$'/a\x1b[2J\'\\'"),
            ("/x\u{202e}y", r"$'/x\xe2\x80\xaey'"),
            ("/c1\u{85}", r"$'/c1\xc2\x85'"),
        ] {
            check(input, expected);
        }
    }

    #[test]
    fn resume() {
        assert_eq!(
            resume_command("/s/a b.jsonl"),
            "pi --session '/s/a b.jsonl'"
        );
    }
}
