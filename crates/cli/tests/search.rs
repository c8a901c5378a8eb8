//! `pi-retrospect search` end to end on the files the real Pi wrote: exit codes as
//! ripgrep's, the output modes, the opt-in scopes, and the JSON document against its schema.

mod common;

use std::path::{Path, PathBuf};

use common::{binary, stdout_of};
use serde_json::Value;

fn sessions() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/pi-real/sessions");
    std::fs::canonicalize(&root)
        .unwrap_or(PathBuf::from(&root))
        .display()
        .to_string()
}

fn run(args: &[&str]) -> std::process::Output {
    binary()
        .arg("search")
        .args(["--sessions-root", &sessions()])
        .args(args)
        .output()
        .expect("run")
}

#[test]
fn exit_status_is_ripgreps() {
    assert_eq!(run(&["git push", "--tool-args"]).status.code(), Some(0));
    assert_eq!(run(&["zz-no-such-text-zz"]).status.code(), Some(1));
    assert_eq!(run(&["-E", "("]).status.code(), Some(2));
    assert_eq!(
        run(&["x", "--session", "no-such-id"]).status.code(),
        Some(2)
    );
}

#[test]
fn scopes_are_opt_in() {
    // The bash command is a tool-call argument: found only with --tool-args.
    assert_eq!(run(&["git push origin main"]).status.code(), Some(1));
    let text = stdout_of(&run(&["git push origin main", "--tool-args"]));
    assert!(text.contains("git push origin main"), "{text}");
    // Tool output only with --tool-results.
    assert_eq!(run(&["ENOENT"]).status.code(), Some(1));
    assert_eq!(run(&["ENOENT", "--tool-results"]).status.code(), Some(0));
    // Case rules.
    assert_eq!(run(&["enoent", "--tool-results"]).status.code(), Some(1));
    assert_eq!(
        run(&["enoent", "--tool-results", "-i"]).status.code(),
        Some(0)
    );
    assert_eq!(
        run(&["enoent", "--tool-results", "-S"]).status.code(),
        Some(0)
    );
    assert_eq!(
        run(&["Enoent", "--tool-results", "-S"]).status.code(),
        Some(1)
    );
}

#[test]
fn modes_and_the_json_document() {
    let json = stdout_of(&run(&["the", "--json"]));
    let document: Value = serde_json::from_str(&json).expect("JSON");
    let hits = document["hits"].as_array().expect("hits");
    assert!(!hits.is_empty());
    assert_eq!(
        document["totals"]["nHits"].as_u64(),
        Some(hits.len() as u64)
    );
    let schema: Value = serde_json::from_str(&stdout_of(
        &binary().args(["schema", "search"]).output().expect("run"),
    ))
    .expect("schema");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    assert!(validator.is_valid(&document));

    let paths = stdout_of(&run(&["the", "-l"]));
    let mut expected: Vec<&str> = hits
        .iter()
        .map(|hit| hit["path"].as_str().expect("path"))
        .collect();
    expected.dedup();
    let listed: Vec<&str> = paths.lines().collect();
    assert_eq!(listed, expected);

    let counts = stdout_of(&run(&["the", "--count"]));
    let total: u64 = counts
        .lines()
        .map(|line| {
            line.rsplit_once(':')
                .expect("path:count")
                .1
                .parse::<u64>()
                .expect("count")
        })
        .sum();
    assert_eq!(total, hits.len() as u64);

    let limited = stdout_of(&run(&["the", "--jsonl", "--limit", "2"]));
    assert_eq!(
        limited
            .lines()
            .filter(|line| line.contains("\"kind\":\"hit\""))
            .count(),
        2
    );
}

/// Issue 12: the progress line is for a terminal only; a stderr that is a pipe gets no
/// progress bytes, whatever the terminal type and output mode.
#[test]
fn no_progress_line_when_stderr_is_not_a_terminal() {
    for args in [
        &["config", "--tool-args"][..],
        &["config", "--count"],
        &["-E", "rate limit|429", "--files-with-matches"],
        &["config", "--json"],
        &["config", "--jsonl"],
    ] {
        let output = binary()
            .arg("search")
            .args(["--sessions-root", &sessions()])
            .args(args)
            .env("TERM", "xterm-256color")
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !stderr.contains('\r') && !stderr.contains("\x1b[") && !stderr.contains("searched"),
            "{args:?}: {stderr:?}"
        );
    }
}

/// `--since`/`--until` bound each hit's own entry time, not when its session started: a
/// session begun in January and continued in March has its March hit in a March range and
/// its January hit in a January one.
#[test]
fn since_and_until_bound_each_hits_entry_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("--w--");
    std::fs::create_dir_all(&project).expect("mkdir");
    let lines = [
        r#"{"type":"session","version":3,"id":"0199aaaa-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"needle in january"}}"#,
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-03-05T10:00:00.000Z","message":{"role":"user","content":"needle in march"}}"#,
    ];
    std::fs::write(
        project.join("2026-01-01T00-00-00-000Z_0199aaaa-0000-7000-8000-000000000001.jsonl"),
        lines.join("\n") + "\n",
    )
    .expect("write");
    let root = dir.path().display().to_string();
    let snippets = |range: &[&str]| -> Vec<String> {
        let output = binary()
            .env("TZ", "UTC")
            .args(["search", "needle", "--json", "--sessions-root", &root])
            .args(range)
            .output()
            .expect("run");
        // Exit 1 says nothing matched, as ripgrep's does; the document is printed either way.
        assert!(matches!(output.status.code(), Some(0 | 1)), "{output:?}");
        let document: Value = serde_json::from_slice(&output.stdout).expect("JSON");
        document["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .map(|hit| hit["snippet"].as_str().unwrap_or("").to_owned())
            .collect()
    };
    assert_eq!(snippets(&["--since", "2026-03-01"]), ["needle in march"]);
    assert_eq!(snippets(&["--until", "2026-01-31"]), ["needle in january"]);
    assert_eq!(
        snippets(&["--since", "2026-02-01", "--until", "2026-02-28"]),
        Vec::<String>::new()
    );
    assert_eq!(snippets(&[]).len(), 2);
}

/// Each session's heading is its path, then a line with its title (name, else first user
/// message) and cwd; a pipe gets whole lines.
#[test]
fn headings_name_the_session_and_its_cwd() {
    let output = run(&["Answer with the other model", "--limit", "1"]);
    let text = stdout_of(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].ends_with(".jsonl"), "{text}");
    assert_eq!(
        lines[1], "  Costs and usage  /tmp/pi-real-fixture/home/user/project",
        "{text}"
    );
    assert!(
        lines[2].ends_with("user: Answer with the other model."),
        "{text}"
    );
}

/// `-m NUM` keeps each file's first NUM hits (and caps `--count` per file), as ripgrep's.
#[test]
fn max_count_keeps_each_files_first_hits() {
    let hits = |args: &[&str]| -> Vec<Value> {
        stdout_of(&run(args))
            .lines()
            .map(|line| serde_json::from_str(line).expect("a JSON row"))
            .filter(|row: &Value| row["kind"] == "hit")
            .collect()
    };
    let all = hits(&["the", "--jsonl", "--sort", "path"]);
    let first = hits(&["the", "--jsonl", "--sort", "path", "-m", "1"]);
    let mut expected: Vec<&Value> = Vec::new();
    for hit in &all {
        if !expected.iter().any(|kept| kept["path"] == hit["path"]) {
            expected.push(hit);
        }
    }
    assert!(expected.len() < all.len(), "every file has one hit only");
    assert_eq!(first.iter().collect::<Vec<_>>(), expected);
    let counts = stdout_of(&run(&["the", "--count", "-m", "2"]));
    assert!(
        counts
            .lines()
            .all(|line| line.ends_with(":1") || line.ends_with(":2")),
        "{counts}"
    );
}
