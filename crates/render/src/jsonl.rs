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
use serde::Serialize;

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

#[derive(Serialize)]
struct WarningLine<'a> {
    kind: &'static str,
    path: &'a str,
    reason: &'a str,
}

/// Writes `session` and its whole tree, depth first, one line each. The tree is walked with
/// an explicit stack, so runs nested thousands of levels deep cannot overflow the thread's
/// stack (issue 9).
pub fn write_session_tree<'a, W: Write + ?Sized>(
    out: &mut W,
    session: &Session,
    summary_of: &dyn Fn(&str) -> Option<&'a SessionSummary>,
) -> io::Result<()> {
    let mut stack: Vec<(&Session, usize, Option<&str>)> = vec![(session, 0, None)];
    while let Some((session, depth, parent_path)) = stack.pop() {
        let summary = summary_of(&session.path);
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
        serde_json::to_writer(&mut *out, &line).map_err(io::Error::from)?;
        out.write_all(b"\n")?;
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
