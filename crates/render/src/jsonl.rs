//! The `--jsonl` listing: one flattened JSON object per line, for scripts and streams.
//!
//! A session row is `{"kind":"session","depth":…,"parentPath":…,"id","path","timestamp",
//! "cwd","parentSessionPath"?,"nSubagents","name","firstUserMessage","lastActivity"}`, where
//! `depth` is the nesting level (0 for a top-level session), `parentPath` the path of the
//! session it is nested under (`null` at the top level), `name` and `firstUserMessage` are
//! `null` when the session has none (or its body could not be read), and `lastActivity` is
//! the newest entry's timestamp (RFC 3339, UTC, milliseconds; the header's when none was
//! read). A warning row is `{"kind":"warning","path","reason"}`.

use std::io::{self, Write};

use pi_retrospect_core::{Session, SessionSummary, Warning};

use crate::write_json_str;
use serde::Serialize;

#[derive(Serialize)]
struct WarningLine<'a> {
    kind: &'static str,
    path: &'a str,
    reason: &'a str,
}

/// Writes `session` and its whole tree, depth first, one line each. The tree is walked with
/// an explicit stack, so runs nested thousands of levels deep cannot overflow the thread's
/// stack.
///
/// Each line is built by hand into one buffer and written at once: the bytes are exactly what
/// serde_json writes for the documented row (a test holds them to it), at a fraction of the cost
/// (serde_json escapes a string byte by byte; a listing's lines are mostly long paths).
///
/// `summary_of` returns a session's body facts read apart from it (by path); a session's own
/// [`Session::summary`] serves otherwise.
pub fn write_session_tree<'a, W: Write + ?Sized>(
    out: &mut W,
    session: &Session,
    summary_of: &dyn Fn(&str) -> Option<&'a SessionSummary>,
) -> io::Result<()> {
    let mut stack: Vec<(&Session, usize, Option<&str>)> = vec![(session, 0, None)];
    let mut line = Vec::with_capacity(1024);
    while let Some((session, depth, parent_path)) = stack.pop() {
        let summary = session.facts(summary_of(&session.path));
        line.clear();
        push_session_line(&mut line, session, depth, parent_path, summary);
        out.write_all(&line)?;
        stack.extend(
            session
                .subagent_sessions
                .iter()
                .rev()
                .map(|child| (child, depth + 1, Some(session.path.as_str()))),
        );
    }
    Ok(())
}

/// Appends the line of one session (its newline included) to `line`.
fn push_session_line(
    line: &mut Vec<u8>,
    session: &Session,
    depth: usize,
    parent_path: Option<&str>,
    summary: Option<&SessionSummary>,
) {
    line.extend_from_slice(b"{\"kind\":\"session\",\"depth\":");
    push_usize(line, depth);
    line.extend_from_slice(b",\"parentPath\":");
    push_json_option(line, parent_path);
    line.extend_from_slice(b",\"id\":");
    write_json_str(line, &session.id);
    line.extend_from_slice(b",\"path\":");
    write_json_str(line, &session.path);
    line.extend_from_slice(b",\"timestamp\":");
    write_json_str(line, &session.timestamp);
    line.extend_from_slice(b",\"cwd\":");
    write_json_str(line, &session.cwd);
    if let Some(parent_session_path) = &session.parent_session_path {
        line.extend_from_slice(b",\"parentSessionPath\":");
        write_json_str(line, parent_session_path);
    }
    line.extend_from_slice(b",\"nSubagents\":");
    push_usize(line, session.n_runs());
    line.extend_from_slice(b",\"name\":");
    push_json_option(line, summary.and_then(|summary| summary.name.as_deref()));
    line.extend_from_slice(b",\"firstUserMessage\":");
    push_json_option(
        line,
        summary.and_then(|summary| summary.first_user_message.as_deref()),
    );
    line.extend_from_slice(b",\"lastActivity\":\"");
    session.last_activity(summary).push_rfc3339(line);
    line.extend_from_slice(b"\"}\n");
}

/// Appends `value` in decimal.
fn push_usize(out: &mut Vec<u8>, mut value: usize) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        // A digit: below 10, so the cast keeps it.
        digits[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[start..]);
}

/// Appends `text` as a JSON string, or `null`.
fn push_json_option(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(text) => write_json_str(out, text),
        None => out.extend_from_slice(b"null"),
    }
}

/// Writes one warning line.
pub fn write_warning(out: &mut dyn Write, warning: &Warning) -> io::Result<()> {
    let line = WarningLine {
        kind: "warning",
        path: &warning.path,
        reason: &warning.reason,
    };
    serde_json::to_writer(&mut *out, &line).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_retrospect_core::timestamp;
    use proptest::prelude::*;

    /// The row as serde_json writes it: what the hand-made lines are held to.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct SessionLine<'a> {
        kind: &'static str,
        depth: usize,
        parent_path: Option<&'a str>,
        id: &'a str,
        path: &'a str,
        timestamp: &'a str,
        cwd: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_session_path: Option<&'a str>,
        n_subagents: usize,
        name: Option<&'a str>,
        first_user_message: Option<&'a str>,
        last_activity: String,
    }

    fn serde_line(
        session: &Session,
        depth: usize,
        parent_path: Option<&str>,
        summary: Option<&SessionSummary>,
    ) -> Vec<u8> {
        let line = SessionLine {
            kind: "session",
            depth,
            parent_path,
            id: &session.id,
            path: &session.path,
            timestamp: &session.timestamp,
            cwd: &session.cwd,
            parent_session_path: session.parent_session_path.as_deref(),
            n_subagents: session.n_runs(),
            name: summary.and_then(|summary| summary.name.as_deref()),
            first_user_message: summary.and_then(|summary| summary.first_user_message.as_deref()),
            last_activity: session.last_activity(summary).to_string(),
        };
        let mut bytes = serde_json::to_vec(&line).expect("serialize");
        bytes.push(b'\n');
        bytes
    }

    /// Strings rich in what JSON escapes: every control character, quotes, backslashes,
    /// DEL, and multi-byte characters, at every alignment of the sixteen-byte steps.
    fn tricky() -> impl Strategy<Value = String> {
        let ch = prop_oneof![
            (0u8..0x20).prop_map(char::from),
            Just('"'),
            Just('\\'),
            Just('\u{7f}'),
            Just('é'),
            Just('\u{2028}'),
            Just('😀'),
            (0x20u8..0x7f).prop_map(char::from),
            any::<char>(),
        ];
        proptest::collection::vec(ch, 0..80).prop_map(|chars| chars.into_iter().collect())
    }

    proptest! {
        #[test]
        fn strings_are_escaped_as_serde_json_escapes_them(text in tricky()) {
            let mut ours = b"x".to_vec();
            write_json_str(&mut ours, &text);
            let theirs = serde_json::to_vec(&text).expect("serialize");
            prop_assert_eq!(&ours[1..], &theirs[..]);
        }

        #[test]
        fn lines_are_serde_json_lines(
            id in tricky(),
            path in tricky(),
            cwd in tricky(),
            parent in proptest::option::of(tricky()),
            parent_session in proptest::option::of(tricky()),
            name in proptest::option::of(tricky()),
            first in proptest::option::of(tricky()),
            has_summary in any::<bool>(),
            depth in 0usize..100_000,
            later_ms in proptest::option::of(0i64..10_000_000_000),
        ) {
            let header = "2026-01-02T03:04:05.678+01:00";
            let instant = timestamp::parse(header).expect("valid");
            let session = Session {
                id,
                path,
                timestamp: header.to_owned(),
                cwd,
                parent_session_path: parent_session,
                subagent_sessions: Vec::new(),
                instant,
                n_pruned_runs: depth % 3,
                summary: None,
            };
            let summary = SessionSummary {
                name,
                first_user_message: first,
                last_activity: later_ms.map(|ms| timestamp::Timestamp {
                    seconds: instant.seconds + ms / 1000,
                    nanos: u32::try_from(ms % 1000).expect("small") * 1_000_000,
                }),
                ..SessionSummary::default()
            };
            let summary = has_summary.then_some(&summary);
            let mut ours = Vec::new();
            push_session_line(&mut ours, &session, depth, parent.as_deref(), summary);
            prop_assert_eq!(
                String::from_utf8(ours).expect("utf-8"),
                String::from_utf8(serde_line(&session, depth, parent.as_deref(), summary))
                    .expect("utf-8")
            );
        }
    }
}
