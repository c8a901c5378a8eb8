//! The raw-byte recognition of a line that may record a failure, before anything is decoded.
//!
//! Pi writes each entry with `JSON.stringify`, so a failure always shows as one of a few exact
//! byte runs: `"isError":true` (a failed tool result), `"stopReason":"error"`, `"aborted"` or
//! `"length"` (a failed, stopped or cut-off reply) and `"exitCode":N` with N not 0 (a failed
//! `!` command). A key inside a JSON string has its quotes escaped (`\"isError\"`), so these
//! runs never match text a tool printed. Whitespace around the colon (another writer's
//! spacing) is skipped. A key or value may also be spelled with `\u` escapes
//! (`"\u0069sError":true`); `JSON.stringify` escapes only control characters, quotes,
//! backslashes and lone surrogates, so a line holding the escape of a printable ASCII
//! character was written by another writer and is always decoded. A line this says no to is
//! never decoded; a line it says yes to is decoded and the decoded value decides
//! (`decode::classify`), so a false yes costs time, never a row.
//!
//! This is the one place the scan looks at raw bytes; everything else reads decoded values.

use memchr::memmem::Finder;
use std::sync::OnceLock;

/// The keys a failure is recognised by, each with the test of the bytes after its colon.
struct Keys {
    is_error: Finder<'static>,
    stop_reason: Finder<'static>,
    exit_code: Finder<'static>,
    tool_call: Finder<'static>,
    ascii_escape: Finder<'static>,
}

fn keys() -> &'static Keys {
    static KEYS: OnceLock<Keys> = OnceLock::new();
    KEYS.get_or_init(|| Keys {
        is_error: Finder::new(b"\"isError\""),
        stop_reason: Finder::new(b"\"stopReason\""),
        exit_code: Finder::new(b"\"exitCode\""),
        tool_call: Finder::new(b"\"toolCall\""),
        ascii_escape: Finder::new(b"\\u00"),
    })
}

/// Returns whether `line` may record a failure: it holds one of the byte runs above. Never
/// says no to a line whose decoded value is a failure.
pub fn may_record_failure(line: &[u8]) -> bool {
    let keys = keys();
    any_value(line, &keys.is_error, |value| value.starts_with(b"true"))
        || any_value(line, &keys.stop_reason, |value| {
            value.starts_with(b"\"error\"")
                || value.starts_with(b"\"aborted\"")
                || value.starts_with(b"\"length\"")
        })
        || any_value(line, &keys.exit_code, is_nonzero_number)
        || has_ascii_escape(line, &keys.ascii_escape)
}

/// Returns whether `line` holds `\u00XX` with XX a printable ASCII character (0x20 to 0x7e),
/// which `JSON.stringify` never writes (an escaped backslash before it only costs a decode).
fn has_ascii_escape(line: &[u8], finder: &Finder<'_>) -> bool {
    finder.find_iter(line).any(|at| {
        let digits = line.get(at + 4..at + 6);
        matches!(digits, Some([high @ b'2'..=b'7', low]) if low.is_ascii_hexdigit()
            && !(*high == b'7' && matches!(low, b'f' | b'F')))
    })
}

/// Returns whether `line` may hold a tool call (a `"toolCall"` block), for the repeat count.
pub fn may_hold_tool_call(line: &[u8]) -> bool {
    keys().tool_call.find(line).is_some()
}

/// Returns whether some occurrence of the key `finder` looks for in `line` is followed by a
/// colon and a value (whitespace around the colon skipped) that `test` accepts.
fn any_value(line: &[u8], finder: &Finder<'_>, test: impl Fn(&[u8]) -> bool) -> bool {
    let mut rest = line;
    while let Some(at) = finder.find(rest) {
        let after = skip_spaces(&rest[at + finder.needle().len()..]);
        if let Some(value) = after.strip_prefix(b":")
            && test(skip_spaces(value))
        {
            return true;
        }
        rest = after;
    }
    false
}

/// Returns `bytes` without the JSON whitespace it starts with.
fn skip_spaces(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|byte| !matches!(byte, b' ' | b'\t' | b'\n' | b'\r'))
        .unwrap_or(bytes.len());
    &bytes[start..]
}

/// Returns whether `value` starts with a JSON number that may be other than 0: anything but
/// `0` followed by the end of the number (`-0`, `0.5` and `1e0` are left to decoding).
fn is_nonzero_number(value: &[u8]) -> bool {
    match value.first() {
        Some(b'0') => matches!(value.get(1), Some(b'.' | b'e' | b'E' | b'0'..=b'9')),
        Some(b'-' | b'1'..=b'9') => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &str, expected: bool) {
        assert_eq!(may_record_failure(line.as_bytes()), expected, "{line}");
    }

    #[test]
    fn recognises_the_byte_runs_pi_writes_and_nothing_else() {
        check(r#"{"message":{"role":"toolResult","isError":true}}"#, true);
        check(
            r#"{"message":{"role":"toolResult","isError":false}}"#,
            false,
        );
        check(
            r#"{"message":{"stopReason":"error","errorMessage":"x"}}"#,
            true,
        );
        check(r#"{"message":{"stopReason":"aborted"}}"#, true);
        check(r#"{"message":{"stopReason":"length"}}"#, true);
        check(r#"{"message":{"stopReason":"toolUse"}}"#, false);
        check(r#"{"message":{"stopReason":"stop"}}"#, false);
        check(r#"{"message":{"exitCode":0,"cancelled":false}}"#, false);
        check(r#"{"message":{"exitCode":0}}"#, false);
        check(r#"{"message":{"exitCode":2}}"#, true);
        check(r#"{"message":{"exitCode":-1}}"#, true);
        check(r#"{"message":{"exitCode":01}}"#, true);
        check(r#"{"message":{"exitCode":null}}"#, false);
        check(r#"{"message":{"isError" :true}}"#, true);
        check(r#"{"message":{"isError" : false}}"#, false);
        check(r#"{"message":{"\u0069sError":true}}"#, true);
        check(r#"{"message":{"stopReason":"\u0065rror"}}"#, true);
        // Escapes Pi writes (controls, as in terminal output) are not a reason to decode.
        check(r#"{"text":"\u001b[31mred\u001b[0m \u007f"}"#, false);
        check(r#"{"message":{"isError": true}}"#, true);
        check(
            r#"{"message":{"isError":false,"x":{"isError":true}}}"#,
            true,
        );
        // A tool that printed the bytes: inside a string every quote is escaped.
        check(r#"{"text":"{\"isError\":true,\"exitCode\":1}"}"#, false);
        check(r#"{"text":"stopReason error"}"#, false);
    }
}
