//! The one presentation layer: writers that turn every command's typed result into text or
//! JSON: the [`Listing`] of `list` in the contract's formats (this module, [`jsonl`], [`long`],
//! [`schema`]), one session's [`show`], [`inspect`] and [`entries`] views, and the [`text`]
//! helpers (sanitising, folding, warning lines) they share.
//!
//! Every writer takes `&mut dyn io::Write` and never prints by itself; the CLI decides where
//! the bytes go and what an I/O error means.

#![deny(missing_docs)]

pub mod entries;
pub mod failures;
pub mod handoff;
pub mod inspect;
pub mod jsonl;
pub mod long;
pub mod schema;
pub mod search;
pub mod show;
pub mod stats;
pub mod text;
pub mod when;

pub use text::Paint;

use std::io::{self, Write};

use crate::text::escape_for_terminal;
use pi_retrospect_core::{Listing, Session};

/// Writes the contract's rendered text: `Sessions (N)`, one `- <path>` bullet per session with
/// children indented two spaces per level, then, only when there are warnings, a blank line,
/// `Warnings (N)` and one `- <path>: <reason>` bullet each. Ends with a newline. Like the
/// contract, it leaves out what the discovery rules exclude ([`Warning::is_out_of_scope`]).
///
/// [`Warning::is_out_of_scope`]: pi_retrospect_core::Warning::is_out_of_scope
pub fn write_text(out: &mut dyn Write, listing: &Listing) -> io::Result<()> {
    // Built in a small buffer handed to `out` in pieces, like the JSON: one formatted write per
    // bullet through `dyn Write` cost twice the time of the whole JSON document.
    let mut text = Vec::with_capacity(2 * FLUSH_BYTES);
    text.extend_from_slice(format!("Sessions ({})\n", listing.sessions.len()).as_bytes());
    // Depth first with an explicit stack (children pushed in reverse), so runs nested
    // thousands of levels deep cannot overflow the thread's stack.
    let mut stack: Vec<(&Session, usize)> = listing
        .sessions
        .iter()
        .rev()
        .map(|session| (session, 0))
        .collect();
    while let Some((session, depth)) = stack.pop() {
        write_session_bullet(&mut text, session, depth);
        stack.extend(
            session
                .subagent_sessions
                .iter()
                .rev()
                .map(|child| (child, depth + 1)),
        );
        if text.len() >= FLUSH_BYTES {
            out.write_all(&text)?;
            text.clear();
        }
    }
    let n_warnings = contract_warnings(listing).count();
    if n_warnings > 0 {
        text.extend_from_slice(format!("\nWarnings ({n_warnings})\n").as_bytes());
        for warning in contract_warnings(listing) {
            text.extend_from_slice(b"- ");
            text.extend_from_slice(escape_for_terminal(&warning.path).as_bytes());
            text.extend_from_slice(b": ");
            text.extend_from_slice(escape_for_terminal(&warning.reason).as_bytes());
            text.push(b'\n');
        }
    }
    out.write_all(&text)
}

/// Returns the warnings of `listing` that the contract's documents hold: all but those about
/// entries the discovery rules exclude.
pub fn contract_warnings(listing: &Listing) -> impl Iterator<Item = &pi_retrospect_core::Warning> {
    listing
        .warnings
        .iter()
        .filter(|warning| !warning.is_out_of_scope)
}

/// Writes one session's bullet, indented two spaces per level of `depth`.
fn write_session_bullet(text: &mut Vec<u8>, session: &Session, depth: usize) {
    for _ in 0..depth {
        text.extend_from_slice(b"  ");
    }
    text.extend_from_slice(b"- ");
    text.extend_from_slice(escape_for_terminal(&session.path).as_bytes());
    text.push(b'\n');
}

/// Writes the contract's JSON document `{ "sessions": [...], "warnings": [...] }`, pretty-printed
/// with two-space indentation and a final newline.
///
/// The bytes are exactly what `serde_json::to_writer_pretty` gives for the [`Listing`] (a
/// property test holds the two to it), but the fixed shape is written by hand: paths rarely
/// need escaping, so a string is copied whole after one scan instead of byte by byte, which
/// was a third of the user time of `list --json` on a 10,000-session store. The text is built
/// in a small buffer that is handed to `out` after each top-level session once it holds
/// 64 KiB, so a large listing never sits in memory twice.
///
/// Like the contract, the document leaves out what the discovery rules exclude
/// ([`Warning::is_out_of_scope`]).
///
/// [`Warning::is_out_of_scope`]: pi_retrospect_core::Warning::is_out_of_scope
pub fn write_json(out: &mut dyn Write, listing: &Listing) -> io::Result<()> {
    let mut document = Vec::with_capacity(2 * FLUSH_BYTES);
    document.extend_from_slice(b"{\n  \"sessions\": ");
    if listing.sessions.is_empty() {
        document.extend_from_slice(b"[]");
    } else {
        document.push(b'[');
        write_sessions_json(out, &mut document, &listing.sessions)?;
        document.extend_from_slice(b"\n  ]");
    }
    document.extend_from_slice(b",\n  \"warnings\": ");
    if contract_warnings(listing).next().is_none() {
        document.extend_from_slice(b"[]");
    } else {
        document.extend_from_slice(b"[");
        for (idx, warning) in contract_warnings(listing).enumerate() {
            if idx > 0 {
                document.push(b',');
            }
            document.extend_from_slice(b"\n    {\n      \"path\": ");
            write_json_str(&mut document, &warning.path);
            document.extend_from_slice(b",\n      \"reason\": ");
            write_json_str(&mut document, &warning.reason);
            document.extend_from_slice(b"\n    }");
        }
        document.extend_from_slice(b"\n  ]");
    }
    document.extend_from_slice(b"\n}\n");
    out.write_all(&document)
}

/// How much JSON text is gathered before it is handed to the writer.
const FLUSH_BYTES: usize = 64 * 1024;

/// One step of writing the sessions array: a session's object up to its runs, or the close
/// of a session's runs and object.
enum JsonStep<'a> {
    /// Opens `session` at indentation `level`, after a comma unless it is the first of its
    /// array; its runs follow.
    Open {
        session: &'a Session,
        level: usize,
        is_first: bool,
    },
    /// Closes the runs array and the object of a session at indentation `level`.
    Close { level: usize },
}

/// Writes the elements of the top-level `sessions` array (its brackets are the caller's), each
/// object with its runs nested inside, handing the text to `out` whenever `document` holds
/// [`FLUSH_BYTES`]. Depth first with an explicit stack, so runs nested thousands of levels
/// deep cannot overflow the thread's stack.
fn write_sessions_json(
    out: &mut dyn Write,
    document: &mut Vec<u8>,
    sessions: &[Session],
) -> io::Result<()> {
    let mut stack: Vec<JsonStep<'_>> = sessions
        .iter()
        .enumerate()
        .rev()
        .map(|(idx, session)| JsonStep::Open {
            session,
            level: 2,
            is_first: idx == 0,
        })
        .collect();
    while let Some(step) = stack.pop() {
        match step {
            JsonStep::Open {
                session,
                level,
                is_first,
            } => {
                if !is_first {
                    document.push(b',');
                }
                write_session_json_open(document, session, level);
                if session.subagent_sessions.is_empty() {
                    document.extend_from_slice(b"[]");
                    newline_indent(document, level);
                    document.push(b'}');
                } else {
                    document.push(b'[');
                    stack.push(JsonStep::Close { level });
                    stack.extend(session.subagent_sessions.iter().enumerate().rev().map(
                        |(idx, child)| JsonStep::Open {
                            session: child,
                            level: level + 2,
                            is_first: idx == 0,
                        },
                    ));
                }
            }
            JsonStep::Close { level } => {
                newline_indent(document, level + 1);
                document.push(b']');
                newline_indent(document, level);
                document.push(b'}');
            }
        }
        if document.len() >= FLUSH_BYTES {
            out.write_all(document)?;
            document.clear();
        }
    }
    Ok(())
}

/// Writes one session object on a new line at indentation `level` (two spaces each), up to
/// and including the `"subagentSessions": ` key.
fn write_session_json_open(document: &mut Vec<u8>, session: &Session, level: usize) {
    newline_indent(document, level);
    document.push(b'{');
    let field = |document: &mut Vec<u8>, name: &[u8]| {
        newline_indent(document, level + 1);
        document.push(b'"');
        document.extend_from_slice(name);
        document.extend_from_slice(b"\": ");
    };
    field(document, b"id");
    write_json_str(document, &session.id);
    document.push(b',');
    field(document, b"path");
    write_json_str(document, &session.path);
    document.push(b',');
    field(document, b"timestamp");
    write_json_str(document, &session.timestamp);
    document.push(b',');
    field(document, b"cwd");
    write_json_str(document, &session.cwd);
    document.push(b',');
    if let Some(parent) = &session.parent_session_path {
        field(document, b"parentSessionPath");
        write_json_str(document, parent);
        document.push(b',');
    }
    field(document, b"subagentSessions");
}

fn newline_indent(document: &mut Vec<u8>, level: usize) {
    document.push(b'\n');
    for _ in 0..level {
        document.extend_from_slice(b"  ");
    }
}

/// Appends `text` as a JSON string, escaped exactly as serde_json escapes it: `"` and `\\`
/// with a backslash, the control characters below U+0020 as `\b \t \n \f \r` or `\u00xx`
/// (lower-case hex), everything else as it is. Runs with nothing to escape are copied whole.
/// Every JSON writer here (`--json`, `--jsonl`) escapes its strings with it.
pub(crate) fn write_json_str(out: &mut Vec<u8>, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut at = 0;
    loop {
        let next = next_escape(bytes, at);
        out.extend_from_slice(&bytes[at..next]);
        let Some(&byte) = bytes.get(next) else {
            break;
        };
        match byte {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(byte >> 4)]);
                out.push(HEX[usize::from(byte & 0xf)]);
            }
        }
        at = next + 1;
    }
    out.push(b'"');
}

/// Returns the index of the first byte at or after `at` that a JSON string must escape
/// (below 0x20, `"` or `\\`), or the length of `bytes` when there is none.
///
/// Clean stretches are tested sixteen bytes at a time, in a loop the compiler turns into
/// vector compares (three times serde_json's byte-by-byte table on a listing's strings).
fn next_escape(bytes: &[u8], mut at: usize) -> usize {
    const CHUNK: usize = 16;
    let needs_escape = |byte: u8| byte < 0x20 || byte == b'"' || byte == b'\\';
    while let Some(chunk) = bytes.get(at..at + CHUNK) {
        let is_dirty = chunk.iter().fold(false, |dirty, &byte| {
            dirty | (byte < 0x20) | (byte == b'"') | (byte == b'\\')
        });
        if is_dirty {
            break;
        }
        at += CHUNK;
    }
    bytes[at..]
        .iter()
        .position(|&byte| needs_escape(byte))
        .map_or(bytes.len(), |offset| at + offset)
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
            n_pruned_runs: 0,
            summary: None,
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
    fn text_escapes_control_characters_in_paths_and_reasons() {
        let listing = Listing {
            sessions: vec![session("/s/evil\u{1b}[2J\nname.jsonl", vec![])],
            warnings: vec![Warning::new(
                "/s/x.jsonl",
                "first line is not a session header (type: se\u{1b}]0;pwned\u{7}ss)",
            )],
        };
        assert_eq!(
            text(&listing),
            "Sessions (1)\n- /s/evil\\u{1b}[2J\\u{a}name.jsonl\n\nWarnings (1)\n\
             - /s/x.jsonl: first line is not a session header (type: se\\u{1b}]0;pwned\\u{7}ss)\n"
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

    /// Returns a chain of `depth` sessions, each the only run of the one before, built from
    /// the bottom up so that nothing recurses.
    fn chain(depth: usize) -> Listing {
        let mut sessions = Vec::new();
        for level in (0..depth).rev() {
            sessions = vec![session(&format!("/s/{level}.jsonl"), sessions)];
        }
        Listing {
            sessions,
            warnings: vec![],
        }
    }

    /// Runs `work` on a thread with a 128 KiB stack: a writer that recursed once per level of
    /// a chain a few thousand deep would overflow it.
    fn on_a_small_stack(work: impl FnOnce() + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(work)
            .expect("spawn")
            .join()
            .expect("no stack overflow");
    }

    /// The list writers walk runs nested thousands of levels deep with a work list.
    /// The text, JSON and `--long` forms indent every level, so their size grows with the
    /// square of the depth: they get 3,000 levels; `--jsonl` gets 100,000.
    #[test]
    fn deep_chains_are_written_without_recursion() {
        on_a_small_stack(|| {
            let depth = 3_000;
            let listing = chain(depth);
            let text = text(&listing);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), depth + 1);
            assert_eq!(lines[1], "- /s/0.jsonl");
            assert_eq!(
                lines[depth],
                format!("{}- /s/{}.jsonl", "  ".repeat(depth - 1), depth - 1)
            );

            let mut json = Vec::new();
            write_json(&mut json, &listing).expect("write to memory");
            let json = String::from_utf8(json).expect("utf-8");
            assert_eq!(json.matches("\"subagentSessions\": [\n").count(), depth - 1);
            assert_eq!(json.matches("\"subagentSessions\": []").count(), 1);
            assert!(json.ends_with("\n  ],\n  \"warnings\": []\n}\n"));

            let summary_of = |_: &str| None;
            let options = long::LongOptions {
                paint: crate::Paint::OFF,
                width: None,
                header: false,
                home: None,
                when_of: &|_, _, text| text.push_str("when"),
                summary_of: &summary_of,
                id_len_of: &|_| 8,
            };
            let mut long_text = Vec::new();
            long::write_long(&mut long_text, &listing, &options).expect("write to memory");
            assert_eq!(
                long_text.iter().filter(|&&byte| byte == b'\n').count(),
                depth
            );

            let listing = chain(100_000);
            let mut lines = Vec::new();
            jsonl::write_session_tree(&mut lines, &listing.sessions[0], &|_| None)
                .expect("write to memory");
            let lines: Vec<&[u8]> = lines.split(|&byte| byte == b'\n').collect();
            assert_eq!(lines.len(), 100_001, "one line each and the final newline");
            let last: serde_json::Value = serde_json::from_slice(lines[99_999]).expect("json");
            assert_eq!(last["depth"], 99_999);
            assert_eq!(last["parentPath"], "/s/99998.jsonl");
        });
        // The JSON is serde's, byte for byte, at a depth serde's own recursion can take.
        let listing = chain(200);
        let mut ours = Vec::new();
        write_json(&mut ours, &listing).expect("write to memory");
        let mut theirs = serde_json::to_vec_pretty(&listing).expect("json");
        theirs.push(b'\n');
        assert_eq!(String::from_utf8(ours), String::from_utf8(theirs));
    }

    proptest::proptest! {
        /// The hand-written writer gives serde_json's pretty output byte for byte.
        #[test]
        fn json_writer_matches_serde_json(
            texts in proptest::collection::vec("[a-z/\"\\\\\u{0}-\u{1f}\u{7f}é✓]{0,12}", 8),
            shape in proptest::collection::vec(0usize..3, 0..6),
            n_warnings in 0usize..3,
        ) {
            let mut sessions = Vec::new();
            for (idx, n_children) in shape.iter().enumerate() {
                let mut parent = session(&texts[idx % 8], vec![]);
                parent.id = texts[(idx + 1) % 8].clone();
                parent.cwd = texts[(idx + 2) % 8].clone();
                parent.timestamp = texts[(idx + 3) % 8].clone();
                if idx % 2 == 0 {
                    parent.parent_session_path = Some(texts[(idx + 4) % 8].clone());
                }
                for child in 0..*n_children {
                    let grandchildren = if child == 1 { vec![session(&texts[5], vec![])] } else { vec![] };
                    parent.subagent_sessions.push(session(&texts[(idx + child) % 8], grandchildren));
                }
                sessions.push(parent);
            }
            let warnings = (0..n_warnings).map(|n| Warning::new(texts[n].clone(), texts[7 - n].clone())).collect();
            let listing = Listing { sessions, warnings };
            let mut ours = Vec::new();
            write_json(&mut ours, &listing).expect("write");
            let mut expected = serde_json::to_vec_pretty(&listing).expect("serialize");
            expected.push(b'\n');
            proptest::prop_assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&expected));
        }
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
