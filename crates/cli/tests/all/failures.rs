//! `pi-retrospect failures` end to end on the files the real Pi wrote: every kind found, the
//! document valid against `schema failures`, the count, grouping, and the exit statuses.

use crate::common;

use std::path::Path;

use common::{binary, stdout_of};
use pi_retrospect_testkit::{Block, Entry, Header, Message, Store};
use serde_json::Value;

fn sessions() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/pi-real/sessions");
    std::fs::canonicalize(&root)
        .unwrap_or(root)
        .display()
        .to_string()
}

fn run(args: &[&str]) -> (Option<i32>, String) {
    let output = binary()
        .arg("failures")
        .arg("--sessions-root")
        .arg(sessions())
        .args(args)
        .output()
        .expect("run");
    // `stdout_of` wants a success; exit 1 (nothing found) is one of the statuses checked.
    (
        output.status.code(),
        String::from_utf8(output.stdout).expect("utf-8"),
    )
}

#[test]
fn every_kind_pi_wrote_is_a_row_and_the_document_has_its_schema() {
    let (code, stdout) = run(&["--json"]);
    assert_eq!(code, Some(0));
    let document: Value = serde_json::from_str(&stdout).expect("JSON");
    let schema_out = binary().args(["schema", "failures"]).output().expect("run");
    let schema: Value = serde_json::from_str(&stdout_of(&schema_out)).expect("schema");
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    assert!(validator.is_valid(&document), "{document:#}");
    let mut kinds: Vec<&str> = document["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .map(|row| row["failureKind"].as_str().expect("kind"))
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(
        kinds,
        [
            "aborted",
            "api_error",
            "command_exit",
            "cut_off",
            "tool_error"
        ]
    );
    let bash = document["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .find(|row| row["failureKind"] == "tool_error" && row["toolName"] == "bash")
        .expect("a failed bash call");
    assert_eq!(bash["command"], "cat config.toml && echo read-ok");
}

#[test]
fn count_kind_and_exit_status() {
    let (code, all) = run(&["--count"]);
    assert_eq!(code, Some(0));
    let (_, jsonl) = run(&["--jsonl"]);
    let n_rows = jsonl
        .lines()
        .filter(|line| line.contains(r#""type":"failure""#))
        .count();
    assert_eq!(all.trim().parse::<usize>().expect("a number"), n_rows);
    let (code, api) = run(&["--kind", "api_error", "--count"]);
    assert_eq!((code, api.trim()), (Some(0), "1"));
    let (code, none) = run(&["--since", "2099-01-01", "--count"]);
    assert_eq!((code, none.trim()), (Some(1), "0"));
    let (code, _) = run(&["--kind", "no_such_kind"]);
    assert_eq!(code, Some(2));
}

#[test]
fn grouped_by_signature_each_group_has_an_example_handle() {
    let (code, stdout) = run(&["--by", "signature", "--json"]);
    assert_eq!(code, Some(0));
    let document: Value = serde_json::from_str(&stdout).expect("JSON");
    let groups = document["groups"].as_array().expect("groups");
    assert!(!groups.is_empty());
    let read = groups
        .iter()
        .find(|group| {
            group["key"]
                .as_str()
                .is_some_and(|key| key.starts_with("read: "))
        })
        .expect("the read failure");
    assert_eq!(
        read["key"],
        "read: ENOENT: no such file or directory, access <path>"
    );
    let path = read["examplePath"].as_str().expect("path");
    let entry = read["exampleEntryId"].as_str().expect("entry");
    let shown = binary()
        .args(["inspect", path, "read", entry])
        .output()
        .expect("run");
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
}

#[test]
fn text_never_colours_a_pipe() {
    let (_, stdout) = run(&[]);
    assert!(stdout.contains("tool_error(read)"), "{stdout}");
    assert!(!stdout.contains('\u{1b}'));
}

#[test]
fn jsonl_streams_the_rows_of_json_and_grouped_json_holds_no_rows() {
    let (_, json) = run(&["--json", "--repeats"]);
    let document: Value = serde_json::from_str(&json).expect("JSON");
    let (code, jsonl) = run(&["--jsonl", "--repeats"]);
    assert_eq!(code, Some(0));
    let rows: Vec<Value> = jsonl
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let of_type = |name: &str| -> Vec<String> {
        let mut found: Vec<String> = rows
            .iter()
            .filter(|row| row["type"] == name)
            .map(|row| {
                let mut row = row.clone();
                row.as_object_mut().map(|object| object.remove("type"));
                row.to_string()
            })
            .collect();
        found.sort();
        found
    };
    let mut failures: Vec<String> = document["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .map(Value::to_string)
        .collect();
    failures.sort();
    assert!(!failures.is_empty());
    assert_eq!(of_type("failure"), failures);
    let mut repeats: Vec<String> = document["repeats"]
        .as_array()
        .expect("repeats")
        .iter()
        .map(Value::to_string)
        .collect();
    repeats.sort();
    assert_eq!(of_type("repeat"), repeats);
    // Grouped, the document counts the failures and keeps one example per group.
    let (_, grouped) = run(&["--json", "--by", "tool"]);
    let grouped: Value = serde_json::from_str(&grouped).expect("JSON");
    assert_eq!(grouped["failures"], serde_json::json!([]));
    assert_eq!(grouped["nFailures"], failures.len());
    let total: u64 = grouped["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|group| group["count"].as_u64())
        .sum();
    assert_eq!(total, failures.len() as u64);
    let (code, _) = run(&["--kind", ""]);
    assert_eq!(code, Some(2));
    let (code, _) = run(&["--kind", "tool_error,"]);
    assert_eq!(code, Some(2));
}

/// A loop found with --repeats is a finding: exit 0 even when no call failed, and 1 without
/// --repeats.
#[test]
fn a_repeated_call_alone_exits_zero_with_repeats() {
    let dir = tempfile::tempdir().expect("temp dir");
    let header = Header::new("0199aaaa-0000-7000-8000-000000000001")
        .timestamp("2026-12-01T10:00:00.000Z")
        .cwd("/tmp/loop");
    let mut lines = vec![
        Entry::message(Message::user("list /x"))
            .id("u0")
            .parent(None)
            .at("2026-12-01T10:00:01.000Z"),
    ];
    let mut parent = "u0".to_owned();
    for turn in 0..4 {
        let (call_id, id, result_id) = (format!("c{turn}"), format!("a{turn}"), format!("r{turn}"));
        let call = Block::tool_call(&call_id, "bash", r#"{"command":"ls /x"}"#);
        lines.push(
            Entry::message(Message::assistant(&[call]).stop_reason("toolUse"))
                .id(&id)
                .parent(Some(&parent))
                .at(&format!("2026-12-01T10:00:0{}.000Z", 2 + turn)),
        );
        lines.push(
            Entry::message(Message::tool_result(&call_id, "bash", "ok").is_error(false))
                .id(&result_id)
                .parent(Some(&id))
                .at(&format!("2026-12-01T10:00:0{}.500Z", 2 + turn)),
        );
        parent = result_id;
    }
    Store::at(dir.path()).write_session(&header, lines);
    let run = |args: &[&str]| {
        binary()
            .arg("failures")
            .arg("--sessions-root")
            .arg(dir.path())
            .args(args)
            .output()
            .expect("run")
    };
    let plain = run(&[]);
    assert_eq!(plain.status.code(), Some(1));
    // Grouped by session, the repeats are found for their counts only: not listed, no
    // finding of their own.
    let by_session = run(&["--by", "session"]);
    assert_eq!(by_session.status.code(), Some(1));
    assert!(
        by_session.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&by_session.stdout)
    );
    let listed = run(&["--repeats"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).starts_with("repeated calls:"),
        "no blank line before the only section"
    );
    for args in [
        &["--repeats"][..],
        &["--repeats", "--jsonl"],
        &["--repeats", "--json"],
    ] {
        let output = run(args);
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("ls /x"),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
    // Counted, the loop is counted too: no failure, one repeated call, exit 0.
    let counted = run(&["--repeats", "--count"]);
    assert_eq!(counted.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&counted.stdout), "0\n1\n");
    let counted = run(&["--count"]);
    assert_eq!(counted.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&counted.stdout), "0\n");
}

/// `--by day` takes its days in `--timezone`, as `stats` does: the fixture's failures at
/// 19:15 UTC on 2026-11-30 are on December 1st in Kiritimati (UTC+14).
#[test]
fn days_are_in_the_time_zone_asked_for() {
    let day = |zone: &str| {
        let (code, out) = run(&["--by", "day", "--json", "--timezone", zone]);
        assert_eq!(code, Some(0), "{out}");
        let document: Value = serde_json::from_str(&out).expect("JSON");
        document["groups"][0]["key"]
            .as_str()
            .expect("a day")
            .to_owned()
    };
    assert_eq!(day("UTC"), "2026-11-30");
    assert_eq!(day("Pacific/Kiritimati"), "2026-12-01");
    let (code, _) = run(&[
        "failures",
        "--sessions-root",
        &sessions(),
        "--timezone",
        "Mars/Base",
    ]);
    assert_eq!(code, Some(2));
}
