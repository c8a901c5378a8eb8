//! Repairs of JSON text that JavaScript's `JSON.parse` (Pi's reader) accepts but a strict
//! parser refuses, so that such a line is read as Pi reads it instead of being lost.

use std::borrow::Cow;

/// Returns `json` with every number too large for a 64-bit float (`1e400`, which `JSON.parse`
/// reads as `Infinity`) replaced by `null`, which is what `JSON.stringify(Infinity)` writes:
/// the field reads as absent and everything else on the line, its text included, survives.
///
/// Strings are left alone (`"1e400"` inside a message is text). Borrows `json` when no number
/// overflows. The work is one pass over the bytes.
pub fn replace_overflowing_numbers(json: &str) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    let mut repaired: Option<String> = None;
    let mut copied_to = 0;
    let mut idx = 0;
    let mut is_in_string = false;
    while idx < bytes.len() {
        let byte = bytes[idx];
        if is_in_string {
            match byte {
                b'\\' => idx += 2,
                b'"' => {
                    is_in_string = false;
                    idx += 1;
                }
                _ => idx += 1,
            }
            continue;
        }
        if byte == b'"' {
            is_in_string = true;
            idx += 1;
            continue;
        }
        if byte != b'-' && !byte.is_ascii_digit() {
            idx += 1;
            continue;
        }
        let start = idx;
        while idx < bytes.len()
            && matches!(bytes[idx], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
        {
            idx += 1;
        }
        let number = &json[start..idx];
        if number.parse::<f64>().is_ok_and(f64::is_infinite) {
            let out = repaired.get_or_insert_with(|| String::with_capacity(json.len()));
            out.push_str(&json[copied_to..start]);
            out.push_str("null");
            copied_to = idx;
        }
    }
    match repaired {
        None => Cow::Borrowed(json),
        Some(mut out) => {
            out.push_str(&json[copied_to..]);
            Cow::Owned(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflowing_numbers_become_null_and_strings_stay() {
        let check = |json: &str, expected: &str| {
            assert_eq!(replace_overflowing_numbers(json), expected, "{json}");
        };
        check(r#"{"a":1,"b":-2.5e3}"#, r#"{"a":1,"b":-2.5e3}"#);
        check(
            r#"{"n":1e400,"m":{"content":"with 1e400","t":-1E+999}}"#,
            r#"{"n":null,"m":{"content":"with 1e400","t":null}}"#,
        );
        check(r#"["a\"1e400",1e400]"#, r#"["a\"1e400",null]"#);
        // Underflow is a plain zero to both readers: left alone.
        check(r#"{"n":1e-400}"#, r#"{"n":1e-400}"#);
        check("[1e308, 2e308]", "[1e308, null]");
    }
}

/// Returns `text` trimmed as JavaScript's `String.prototype.trim` trims it, which is how Pi
/// trims a session name: Unicode white space and line terminators at both ends, including
/// U+FEFF (which Rust's `str::trim` keeps) and not U+0085 (which Rust's removes).
pub fn js_trim(text: &str) -> &str {
    text.trim_matches(|character: char| {
        (character.is_whitespace() && character != '\u{85}') || character == '\u{feff}'
    })
}

#[cfg(test)]
mod js_trim_tests {
    #[test]
    fn trims_as_javascript_does() {
        assert_eq!(super::js_trim("\u{feff} name \u{3000}\n"), "name");
        assert_eq!(super::js_trim("\u{85}name\u{85}"), "\u{85}name\u{85}");
        assert_eq!(super::js_trim("\u{2028}\u{a0}\t"), "");
        assert_eq!(super::js_trim("a b"), "a b");
    }
}
