//! Writers that turn a [`Listing`] into the contract's text and JSON formats.
//!
//! Every writer takes `&mut dyn io::Write` and never prints by itself; the CLI decides where
//! the bytes go and what an I/O error means.

#![deny(missing_docs)]

pub mod jsonl;
pub mod long;
pub mod schema;

use std::io::{self, Write};

use pi_retrospect_core::{Listing, Session};

/// Writes the contract's rendered text: `Sessions (N)`, one `- <path>` bullet per session with
/// children indented two spaces per level, then, only when there are warnings, a blank line,
/// `Warnings (N)` and one `- <path>: <reason>` bullet each. Ends with a newline.
pub fn write_text(out: &mut dyn Write, listing: &Listing) -> io::Result<()> {
    writeln!(out, "Sessions ({})", listing.sessions.len())?;
    write_session_bullets(out, &listing.sessions, 0)?;
    if !listing.warnings.is_empty() {
        writeln!(out)?;
        writeln!(out, "Warnings ({})", listing.warnings.len())?;
        for warning in &listing.warnings {
            writeln!(out, "- {}: {}", warning.path, warning.reason)?;
        }
    }
    Ok(())
}

fn write_session_bullets(
    out: &mut dyn Write,
    sessions: &[Session],
    depth: usize,
) -> io::Result<()> {
    for session in sessions {
        for _ in 0..depth {
            out.write_all(b"  ")?;
        }
        writeln!(out, "- {}", session.path)?;
        write_session_bullets(out, &session.subagent_sessions, depth + 1)?;
    }
    Ok(())
}

/// Writes the contract's JSON document `{ "sessions": [...], "warnings": [...] }`, pretty-printed
/// with two-space indentation and a final newline.
pub fn write_json(out: &mut dyn Write, listing: &Listing) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, listing).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_retrospect_core::{Warning, timestamp};

    fn session(path: &str, children: Vec<Session>) -> Session {
        Session {
            id: "id".into(),
            path: path.into(),
            timestamp: "2026-01-01T00:00:00Z".into(),
            cwd: "/w".into(),
            parent_session_path: None,
            subagent_sessions: children,
            instant: timestamp::parse("2026-01-01T00:00:00Z").unwrap_or_default(),
        }
    }

    fn text(listing: &Listing) -> String {
        let mut out = Vec::new();
        write_text(&mut out, listing).expect("write to memory");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn text_without_warnings_has_no_warning_section() {
        let listing = Listing {
            sessions: vec![session(
                "/a.jsonl",
                vec![session(
                    "/a/r/session.jsonl",
                    vec![session("/a/r/session/x/session.jsonl", vec![])],
                )],
            )],
            warnings: vec![],
        };
        assert_eq!(
            text(&listing),
            "Sessions (1)\n- /a.jsonl\n  - /a/r/session.jsonl\n    - /a/r/session/x/session.jsonl\n"
        );
    }

    #[test]
    fn text_with_warnings_and_no_sessions() {
        let listing = Listing {
            sessions: vec![],
            warnings: vec![Warning::new("/b.jsonl", "file is empty")],
        };
        assert_eq!(
            text(&listing),
            "Sessions (0)\n\nWarnings (1)\n- /b.jsonl: file is empty\n"
        );
    }

    #[test]
    fn json_has_exactly_the_contract_fields() {
        let mut forked = session("/f.jsonl", vec![]);
        forked.parent_session_path = Some("/a.jsonl".into());
        let listing = Listing {
            sessions: vec![session("/a.jsonl", vec![]), forked],
            warnings: vec![Warning::new("/b", "r")],
        };
        let mut out = Vec::new();
        write_json(&mut out, &listing).expect("write");
        let expected = r#"{
  "sessions": [
    {
      "id": "id",
      "path": "/a.jsonl",
      "timestamp": "2026-01-01T00:00:00Z",
      "cwd": "/w",
      "subagentSessions": []
    },
    {
      "id": "id",
      "path": "/f.jsonl",
      "timestamp": "2026-01-01T00:00:00Z",
      "cwd": "/w",
      "parentSessionPath": "/a.jsonl",
      "subagentSessions": []
    }
  ],
  "warnings": [
    {
      "path": "/b",
      "reason": "r"
    }
  ]
}
"#;
        assert_eq!(String::from_utf8(out).expect("utf-8"), expected);
    }
}
