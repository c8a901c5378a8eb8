//! Quoting a path for a POSIX shell, and the command that resumes a session.

use std::borrow::Cow;

/// Returns the command that resumes the session stored at `path`: `pi --session PATH`.
pub fn resume_command(path: &str) -> String {
    format!("pi --session {}", shell_quote(path))
}

/// Returns `text` as one word of a POSIX shell command line (`sh`, dash, bash, zsh, ksh).
///
/// Text made only of characters no shell treats specially is returned as is; other text is
/// put in single quotes (a `'` inside written `'\''`; a newline or tab stays inside the
/// quotes as it is, which every POSIX shell reads back unchanged). Any other control or bidi
/// character, which must not reach a terminal or a clipboard raw, is written as a command
/// substitution `"$(printf '\NNN')"` of its UTF-8 bytes in octal, joined to the quoted
/// runs around it (no trailing newline to lose, so the word is exact).
pub fn shell_quote(text: &str) -> Cow<'_, str> {
    let is_plain =
        |character: char| character.is_ascii_alphanumeric() || "_./:@%+=,-".contains(character);
    if !text.is_empty() && !text.starts_with(['-', '=']) && text.chars().all(is_plain) {
        return Cow::Borrowed(text);
    }
    if !text.chars().any(needs_escape) {
        return Cow::Owned(format!("'{}'", text.replace('\'', r"'\''")));
    }
    let mut quoted = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while !rest.is_empty() {
        let n_plain = rest.find(needs_escape).unwrap_or(rest.len());
        if n_plain > 0 {
            quoted.push('\'');
            quoted.push_str(&rest[..n_plain].replace('\'', r"'\''"));
            quoted.push('\'');
            rest = &rest[n_plain..];
        }
        let n_escaped = rest
            .find(|character| !needs_escape(character))
            .unwrap_or(rest.len());
        if n_escaped > 0 {
            quoted.push_str("\"$(printf '");
            for byte in rest[..n_escaped].bytes() {
                quoted.push_str(&format!("\\{byte:03o}"));
            }
            quoted.push_str("')\"");
            rest = &rest[n_escaped..];
        }
    }
    Cow::Owned(quoted)
}

/// Returns whether `character` is a control (C0 but newline and tab, DEL, C1) or a bidi
/// control.
fn needs_escape(character: char) -> bool {
    (character.is_control() && !matches!(character, '\n' | '\t'))
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
            // A newline stays inside single quotes, which POSIX sh (dash) reads.
            ("/a\nb", "'/a\nb'"),
            ("/a\tb", "'/a\tb'"),
            ("/a\u{1b}[2J'\\", r#"'/a'"$(printf '\033')"'[2J'\''\'"#),
            ("/x\u{202e}y", r#"'/x'"$(printf '\342\200\256')"'y'"#),
            ("/c1\u{85}", r#"'/c1'"$(printf '\302\205')""#),
            ("\u{1b}", r#""$(printf '\033')""#),
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
