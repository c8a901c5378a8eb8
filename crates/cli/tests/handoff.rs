//! Issue 15: `pi-retrospect handoff` end to end: the Markdown and JSON documents, redaction,
//! the schema, and `--out` that never replaces a file unless forced.

mod common;

use common::{binary, stdout_of};
use serde_json::Value;

const SECRET: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

fn session(dir: &std::path::Path) -> String {
    let path = dir.join("s.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"0199aaaa-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#.to_owned(),
        format!(
            r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"push with token {SECRET} please"}}}}"#
        ),
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"SECRET-THOUGHT"},{"type":"text","text":"Done."}],"provider":"p","model":"m"}}"#.to_owned(),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    path.display().to_string()
}

#[test]
fn markdown_and_json_are_redacted_and_bounded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = session(dir.path());
    let text = stdout_of(
        &binary()
            .args(["handoff", &path, "--goal", "ship it"])
            .output()
            .expect("run"),
    );
    assert!(
        !text.contains(SECRET) && !text.contains("SECRET-THOUGHT"),
        "{text}"
    );
    assert!(text.contains("[redacted: github-token]"), "{text}");
    assert!(
        text.contains("ship it") && text.contains("pi --session"),
        "{text}"
    );

    let json = stdout_of(
        &binary()
            .args(["handoff", &path, "--json"])
            .output()
            .expect("run"),
    );
    let document: Value = serde_json::from_str(&json).expect("JSON");
    let schema: Value = serde_json::from_str(&stdout_of(
        &binary().args(["schema", "handoff"]).output().expect("run"),
    ))
    .expect("schema JSON");
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    assert!(validator.is_valid(&document), "{json}");
    assert!(!json.contains(SECRET), "{json}");

    let one = stdout_of(
        &binary()
            .args(["handoff", &path, "--json", "--max-messages", "1"])
            .output()
            .expect("run"),
    );
    let one: Value = serde_json::from_str(&one).expect("JSON");
    assert_eq!(one["excerpt"]["messages"].as_array().map(Vec::len), Some(1));
}

#[test]
fn out_never_replaces_a_file_unless_forced() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = session(dir.path());
    let out = dir.path().join("handoff.md");
    std::fs::write(&out, "keep me").expect("write");
    let output = binary()
        .args(["handoff", &path, "--out", &out.display().to_string()])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("already exists"));
    assert_eq!(std::fs::read_to_string(&out).expect("read"), "keep me");
    stdout_of(
        &binary()
            .args([
                "handoff",
                &path,
                "--out",
                &out.display().to_string(),
                "--force",
            ])
            .output()
            .expect("run"),
    );
    assert!(
        std::fs::read_to_string(&out)
            .expect("read")
            .starts_with("# Pi session handoff")
    );
}
