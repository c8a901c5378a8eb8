//! Shared fixtures: session files materialised from JSONL text, and compact descriptions of
//! parsed sessions for table-driven assertions.

#![allow(dead_code)]

use std::path::PathBuf;

use pi_retrospect_transcript::Transcript;

/// A header line for a version 3 session with id `s1`.
pub const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

/// Returns a temp dir holding `session.jsonl` with exactly `contents`.
pub fn materialise(contents: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, contents).expect("write fixture");
    (dir, path)
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
    let mut text = String::new();
    for line in std::iter::once(&HEADER).chain(lines) {
        text.push_str(line);
        text.push('\n');
    }
    text
}

fn ts(n: u32) -> String {
    format!("2026-01-01T00:{:02}:{:02}.000Z", n / 60 % 60, n % 60)
}

fn parent(parent_id: Option<&str>) -> String {
    match parent_id {
        Some(id) => format!("\"{id}\""),
        None => "null".to_owned(),
    }
}

/// Returns a user message entry.
pub fn user(id: &str, parent_id: Option<&str>, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{},"timestamp":"{}","message":{{"role":"user","content":{},"timestamp":1}}}}"#,
        parent(parent_id),
        ts(id.len() as u32),
        serde_json::to_string(text).expect("string")
    )
}

/// Returns an assistant message with text and `tool_calls` tool calls (thinking included).
pub fn assistant(id: &str, parent_id: Option<&str>, text: &str, tool_calls: &[&str]) -> String {
    let mut blocks = vec![
        r#"{"type":"thinking","thinking":"secret thoughts","thinkingSignature":"sig"}"#.to_owned(),
        format!(
            r#"{{"type":"text","text":{}}}"#,
            serde_json::to_string(text).expect("string")
        ),
    ];
    for name in tool_calls {
        blocks.push(format!(
            r#"{{"type":"toolCall","id":"call_{name}","name":"{name}","arguments":{{"path":"src/secret_arg.rs","limit":5}}}}"#
        ));
    }
    let stop = if tool_calls.is_empty() {
        "stop"
    } else {
        "toolUse"
    };
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{},"timestamp":"2026-01-01T00:00:05.000Z","message":{{"role":"assistant","content":[{}],"api":"x","provider":"anthropic","model":"claude-x","usage":{{}},"stopReason":"{stop}","timestamp":2}}}}"#,
        parent(parent_id),
        blocks.join(",")
    )
}

/// Returns a tool result entry.
pub fn tool_result(id: &str, parent_id: Option<&str>, tool: &str, output: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{},"timestamp":"2026-01-01T00:00:06.000Z","message":{{"role":"toolResult","toolCallId":"call_{tool}","toolName":"{tool}","content":[{{"type":"text","text":{}}}],"isError":false,"timestamp":3}}}}"#,
        parent(parent_id),
        serde_json::to_string(output).expect("string")
    )
}

/// Returns an entry of `kind` with extra fields `fields` (a JSON object body without braces).
pub fn other(kind: &str, id: &str, parent_id: Option<&str>, fields: &str) -> String {
    let comma = if fields.is_empty() { "" } else { "," };
    format!(
        r#"{{"type":"{kind}","id":"{id}","parentId":{},"timestamp":"2026-01-01T00:00:07.000Z"{comma}{fields}}}"#,
        parent(parent_id)
    )
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
