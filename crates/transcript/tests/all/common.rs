//! Shared fixtures: session files materialised from JSONL text, and compact descriptions of
//! parsed sessions for table-driven assertions.

#![allow(dead_code)]

use std::path::PathBuf;

use pi_retrospect_testkit::{Block, Entry, Message};
use pi_retrospect_transcript::Transcript;

/// A header line for a version 3 session with id `s1`.
pub use pi_retrospect_testkit::HEADER;

/// Returns a temp dir holding `session.jsonl` with exactly `contents`.
pub fn materialise(contents: &[u8]) -> (tempfile::TempDir, PathBuf) {
    pi_retrospect_testkit::temp_file("session.jsonl", contents)
}

/// Returns the session parsed from a file holding `contents`.
pub fn parse(contents: &str) -> Transcript {
    parse_bytes(contents.as_bytes())
}

/// Returns the session parsed from a file holding `contents`, checking that the in-memory
/// parse agrees with the file parse.
pub fn parse_bytes(contents: &[u8]) -> Transcript {
    let (_dir, path) = materialise(contents);
    let session = Transcript::open(&path).expect("open fixture");
    let in_memory = Transcript::from_bytes(contents.to_vec());
    assert_eq!(
        describe(&session),
        describe(&in_memory),
        "file and memory parses differ"
    );
    session
}

/// Returns JSONL text: the header followed by `lines`, each ending in a newline.
pub fn jsonl(lines: &[&str]) -> String {
    pi_retrospect_testkit::jsonl(std::iter::once(&HEADER).chain(lines))
}

fn ts(n: u32) -> String {
    pi_retrospect_testkit::timestamp_in_month("2026-01", u64::from(n % 3600))
}

/// Returns a user message entry.
pub fn user(id: &str, parent_id: Option<&str>, text: &str) -> String {
    Entry::message(Message::user(text).timestamp(1))
        .id(id)
        .parent(parent_id)
        .at(&ts(id.len() as u32))
        .to_string()
}

/// Returns an assistant message with text and `tool_calls` tool calls (thinking included).
pub fn assistant(id: &str, parent_id: Option<&str>, text: &str, tool_calls: &[&str]) -> String {
    let mut blocks = vec![
        Block::thinking("secret thoughts").text_member("thinkingSignature", "sig"),
        Block::text(text),
    ];
    for name in tool_calls {
        blocks.push(Block::tool_call(
            &format!("call_{name}"),
            name,
            r#"{"path":"src/secret_arg.rs","limit":5}"#,
        ));
    }
    let stop = if tool_calls.is_empty() {
        "stop"
    } else {
        "toolUse"
    };
    let message = Message::assistant(&blocks)
        .api("x")
        .provider("anthropic")
        .model("claude-x")
        .member("usage", "{}")
        .stop_reason(stop)
        .timestamp(2);
    Entry::message(message)
        .id(id)
        .parent(parent_id)
        .at("2026-01-01T00:00:05.000Z")
        .to_string()
}

/// Returns a tool result entry.
pub fn tool_result(id: &str, parent_id: Option<&str>, tool: &str, output: &str) -> String {
    let message = Message::tool_result(&format!("call_{tool}"), tool, output)
        .is_error(false)
        .timestamp(3);
    Entry::message(message)
        .id(id)
        .parent(parent_id)
        .at("2026-01-01T00:00:06.000Z")
        .to_string()
}

/// Returns an entry of `kind` with extra fields `fields` (a JSON object body without braces).
pub fn other(kind: &str, id: &str, parent_id: Option<&str>, fields: &str) -> String {
    let entry = Entry::of_type(kind)
        .id(id)
        .parent(parent_id)
        .at("2026-01-01T00:00:07.000Z");
    if fields.is_empty() {
        entry.to_string()
    } else {
        entry.raw_members(fields).to_string()
    }
}

/// Returns a one-line description of the tree: roots, leaf, active branch and warnings.
pub fn describe(session: &Transcript) -> String {
    let handle = |idx: usize| session.entry(idx).handle();
    let list = |indices: &[usize]| {
        indices
            .iter()
            .map(|&idx| handle(idx))
            .collect::<Vec<_>>()
            .join(",")
    };
    let warnings: Vec<String> = session
        .warnings()
        .iter()
        .map(|warning| {
            let kind = serde_json::to_value(warning.kind).expect("kind");
            match warning.line_no {
                Some(line_no) => format!("{}@{line_no}", kind.as_str().unwrap_or("?")),
                None => kind.as_str().unwrap_or("?").to_owned(),
            }
        })
        .collect();
    format!(
        "roots=[{}] leaf={} branch=[{}] warnings=[{}]",
        list(session.roots()),
        session.leaf().map(handle).unwrap_or_default(),
        list(&session.active_branch()),
        warnings.join(",")
    )
}
