//! The signature of a failure: its tool (or kind) and the first line of its error text with
//! the parts that vary between occurrences (quoted and absolute paths, line and column
//! positions, hex and other ids, numbers) replaced, so the same failure in many sessions
//! groups into one row.

use std::sync::OnceLock;

use regex::{Captures, Regex};

/// Characters of the normalised text kept in a signature.
const SIGNATURE_CHARS: usize = 200;

struct Rules {
    quoted_path: Regex,
    bare_path: Regex,
    position: Regex,
    uuid: Regex,
    hex: Regex,
    word_id: Regex,
    number: Regex,
    spaces: Regex,
}

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    // The patterns are constants checked by the table test; a failure to compile one is a
    // bug in this file, never input.
    #[expect(
        clippy::unwrap_used,
        reason = "constant patterns, compiled by every test"
    )]
    RULES.get_or_init(|| Rules {
        // A quoted text holding a `/`, or one word quoted (`'no-such-dir'`): what varies
        // between occurrences of one failure is the name, not the message around it.
        quoted_path: Regex::new(
            r#"'[^'\n]*/[^'\n]*'|'[^'\s]{1,200}'|"[^"\n]*/[^"\n]*"|"[^"\s]{1,200}"|`[^`\n]*/[^`\n]*`|`[^`\s]{1,200}`"#,
        )
            .unwrap(),
        bare_path: Regex::new(r"(^|[\s(=\[])((?:~|\.\.?)?/[A-Za-z0-9_.@+\-/]+)").unwrap(),
        position: Regex::new(r":\d+(?::\d+)?\b|(?i)\b(line|column|col|row)\s+\d+").unwrap(),
        uuid: Regex::new(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
        )
        .unwrap(),
        hex: Regex::new(r"\b0x[0-9a-fA-F]+\b").unwrap(),
        word_id: Regex::new(r"\b[A-Za-z0-9_\-]{8,}\b").unwrap(),
        number: Regex::new(r"\d+(?:\.\d+)?").unwrap(),
        spaces: Regex::new(r"\s+").unwrap(),
    })
}

/// Returns `text` with its variable parts replaced (see the module's summary): the first
/// non-empty line, whitespace collapsed, at most 200 characters.
pub fn normalize_error(text: &str) -> String {
    let rules = rules();
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("");
    let text = rules.quoted_path.replace_all(line, "<path>");
    let text = rules.bare_path.replace_all(&text, "${1}<path>");
    let text = rules
        .position
        .replace_all(&text, |captures: &Captures<'_>| match captures.get(1) {
            Some(word) => format!("{} <pos>", word.as_str()),
            None => ":<pos>".to_owned(),
        });
    let text = rules.uuid.replace_all(&text, "<id>");
    let text = rules.hex.replace_all(&text, "<hex>");
    let text = rules.word_id.replace_all(&text, |captures: &Captures<'_>| {
        let word = &captures[0];
        let has_digit = word.bytes().any(|byte| byte.is_ascii_digit());
        let has_letter = word.bytes().any(|byte| byte.is_ascii_alphabetic());
        if has_digit && has_letter {
            "<id>".to_owned()
        } else {
            word.to_owned()
        }
    });
    let text = rules.number.replace_all(&text, "<n>");
    let text = rules.spaces.replace_all(&text, " ");
    text.chars().take(SIGNATURE_CHARS).collect()
}

/// Returns the signature of a failure of `tool_or_kind` with error `text`.
pub fn signature(tool_or_kind: &str, text: &str) -> String {
    format!("{tool_or_kind}: {}", normalize_error(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variable_parts_are_replaced() {
        let table = [
            (
                "ENOENT: no such file or directory, access '/tmp/a/config.toml'",
                "ENOENT: no such file or directory, access <path>",
            ),
            (
                "error[E0308]: mismatched types at src/main.rs:12:5",
                "error[E<n>]: mismatched types at src/main.rs:<pos>",
            ),
            ("cannot open /home/u/x.txt", "cannot open <path>"),
            (
                "ls: cannot access 'no-such-dir': No such file or directory",
                "ls: cannot access <path>: No such file or directory",
            ),
            (
                "can't read 'a b': it is gone",
                "can't read 'a b': it is gone",
            ),
            (
                "SyntaxError: Unexpected token at line 3 column 17",
                "SyntaxError: Unexpected token at line <pos> column <pos>",
            ),
            (
                "entry 01a22de2-540d-7602-8b63-cd7f53f64b36 not found",
                "entry <id> not found",
            ),
            ("segfault at 0x7ffd1234", "segfault at <hex>"),
            ("commit 3f9a2c7e1b missing", "commit <id> missing"),
            (
                "429 Too Many Requests: retry after 30.5 s",
                "<n> Too Many Requests: retry after <n> s",
            ),
            (
                "\n\n  Command   exited with code 2\nmore output",
                "Command exited with code <n>",
            ),
            ("plain words stay", "plain words stay"),
            ("", ""),
        ];
        for (input, expected) in table {
            assert_eq!(normalize_error(input), expected, "{input:?}");
        }
    }

    #[test]
    fn signature_names_the_tool() {
        assert_eq!(
            signature("read", "ENOENT '/a/b'"),
            "read: ENOENT <path>".to_owned()
        );
    }
}
