//! The signature of a failure: its tool (or kind) and the first and last lines of its error
//! text with the parts that vary between occurrences (quoted and absolute paths, line and
//! column positions, hex and other ids, numbers) replaced, so the same failure in many
//! sessions groups into one row. The last line is kept because a traceback's first line is
//! the same for every error (`Traceback (most recent call last):`) and its last names it.

use std::sync::OnceLock;

use regex::{Captures, Regex};

/// Characters of the normalised text kept in a signature.
const SIGNATURE_CHARS: usize = 200;
/// Characters of each of the first and the last line kept when both are.
const LINE_CHARS: usize = SIGNATURE_CHARS / 2;
/// What stands between the first and the last line.
const BETWEEN_LINES: &str = " … ";
/// The key of a failure without any error text, so that it never reads as an empty key.
const NO_TEXT: &str = "(no error text)";

struct Rules {
    quoted_path: Regex,
    quoted_word: Regex,
    bare_path: Regex,
    number_with_unit: Regex,
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
            r#"'[^'\n]*[/\\][^'\n]*'|"[^"\n]*[/\\][^"\n]*"|`[^`\n]*[/\\][^`\n]*`"#,
        )
        .unwrap(),
        quoted_word: Regex::new(r#"'[^'\s]{1,200}'|"[^"\s]{1,200}"|`[^`\s]{1,200}`"#).unwrap(),
        // An absolute or home path, a relative one with a directory and a file extension
        // (`src/lib.rs`), or a Windows one (`C:\Users\…`).
        bare_path: Regex::new(
            r"(^|[\s(=\[])((?:~|\.\.?)?/[A-Za-z0-9_.@+\-/]+|(?:[A-Za-z0-9_.@+\-]+/)+[A-Za-z0-9_@+\-]+\.[A-Za-z0-9]{1,8}|[A-Za-z]:\\[^\s'\x22:]+)",
        )
        .unwrap(),
        number_with_unit: Regex::new(r"^\d+(?:\.\d+)?[A-Za-z]{1,3}$").unwrap(),
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

/// Returns `text` with its variable parts replaced (see the module's summary): its first
/// non-empty line, and when it has more than one, ` … ` and its last non-empty line (each
/// at most 100 characters), whitespace collapsed; at most 200 characters.
pub fn normalize_error(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|line| !line.is_empty());
    let first = lines.next().unwrap_or("");
    match lines.next_back() {
        Some(last) => {
            let first = normalize_line(first);
            let last = normalize_line(last);
            if first == last {
                first.chars().take(SIGNATURE_CHARS).collect()
            } else {
                let mut key: String = first.chars().take(LINE_CHARS).collect();
                key.push_str(BETWEEN_LINES);
                key.extend(last.chars().take(LINE_CHARS));
                key
            }
        }
        None => normalize_line(first)
            .chars()
            .take(SIGNATURE_CHARS)
            .collect(),
    }
}

/// Returns one line with its variable parts replaced and its whitespace collapsed.
fn normalize_line(line: &str) -> String {
    let rules = rules();
    let text = rules.quoted_path.replace_all(line, "<path>");
    let text = rules.quoted_word.replace_all(&text, "<name>");
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
        // `120000ms` is a number with its unit, as `30000ms` is: the number rule has it.
        if has_digit && has_letter && !rules.number_with_unit.is_match(word) {
            "<id>".to_owned()
        } else {
            word.to_owned()
        }
    });
    let text = rules.number.replace_all(&text, "<n>");
    rules.spaces.replace_all(&text, " ").trim().to_owned()
}

/// Returns the signature of a failure of `tool_or_kind` with error `text`; a failure
/// without error text is `TOOL: (no error text)`.
pub fn signature(tool_or_kind: &str, text: &str) -> String {
    let normalized = normalize_error(text);
    if normalized.is_empty() {
        format!("{tool_or_kind}: {NO_TEXT}")
    } else {
        format!("{tool_or_kind}: {normalized}")
    }
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
                "error[E<n>]: mismatched types at <path>:<pos>",
            ),
            ("cannot open /home/u/x.txt", "cannot open <path>"),
            (
                "ls: cannot access 'no-such-dir': No such file or directory",
                "ls: cannot access <name>: No such file or directory",
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
                "Command exited with code <n> … more output",
            ),
            (
                "Traceback (most recent call last):\n  File \"/srv/app/main.py\", line 12, in <module>\n    main()\nValueError: invalid literal for int() with base 10: 'x1'\n\n",
                "Traceback (most recent call last): … ValueError: invalid literal for int() with base <n>: <name>",
            ),
            (
                "Traceback (most recent call last):\n  File \"/srv/app/db.py\", line 40, in connect\nConnectionRefusedError: [Errno 111] Connection refused",
                "Traceback (most recent call last): … ConnectionRefusedError: [Errno <n>] Connection refused",
            ),
            ("npm ERR! code 1\nnpm ERR! code 1\n", "npm ERR! code <n>"),
            (
                "warning: unused\n\nCommand exited with code 101",
                "warning: unused … Command exited with code <n>",
            ),
            (
                "Error: timeout after 120000ms",
                "Error: timeout after <n>ms",
            ),
            ("Error: timeout after 30000ms", "Error: timeout after <n>ms"),
            (
                "panicked at crates/app/src/lib.rs:10:5",
                "panicked at <path>:<pos>",
            ),
            (r"cannot open C:\Users\me\notes.txt", "cannot open <path>"),
            ("KeyError: 'user_id'", "KeyError: <name>"),
            ("read and/or write failed", "read and/or write failed"),
            ("\n \n\t\n", ""),
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

    #[test]
    fn a_failure_without_text_has_a_key_that_says_so() {
        for text in ["", "   ", "\n\n", "\t\n  \n"] {
            assert_eq!(signature("bash", text), "bash: (no error text)", "{text:?}");
        }
        assert_ne!(signature("bash", "x"), signature("bash", ""));
    }

    #[test]
    fn two_tracebacks_with_other_errors_are_two_signatures_and_long_lines_are_bounded() {
        let first = "Traceback (most recent call last):\n  File \"a.py\"\nKeyError: 'user'";
        let second = "Traceback (most recent call last):\n  File \"a.py\"\nTypeError: not iterable";
        assert_ne!(normalize_error(first), normalize_error(second));
        let long = format!("{}\n{}", "a ".repeat(300), "z ".repeat(300));
        let key = normalize_error(&long);
        assert!(key.chars().count() <= SIGNATURE_CHARS + BETWEEN_LINES.chars().count());
        assert!(key.contains(" … z z"), "{key}");
    }
}
