//! End-to-end tests of `show`, `inspect` and `entries`: golden text on a real Pi file (the
//! fixture root redacted to `[ROOT]`; re-bless with `BLESS=1`), agreement with the values Pi
//! itself reports in `fixtures/pi-real/expected.json`, the SESSION argument, every flag, and
//! damaged, version 1 and growing files written to temp directories.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

mod common;
use common::{binary, golden, stdout_of};

const TREE: &str = "--tmp-pi-real-fixture-home-user-project--/2026-11-30T07-00-59-489Z_01a22b41-c1e1-73ac-b3e0-09602166f4c8.jsonl";
const TOOLS: &str = "--tmp-pi-real-fixture-home-user-project--/2026-11-30T07-00-59-245Z_01a22b41-c0ec-73ac-b3e0-0959dd92f796.jsonl";

fn pi_real() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/pi-real")
        .canonicalize()
        .expect("fixtures exist")
}

fn root() -> PathBuf {
    pi_real().join("sessions")
}

fn file(relative: &str) -> String {
    root().join(relative).display().to_string()
}

fn expected(relative: &str) -> Value {
    let text = std::fs::read_to_string(pi_real().join("expected.json")).expect("expected.json");
    let all: Value = serde_json::from_str(&text).expect("valid JSON");
    all["files"][relative].clone()
}

fn run(args: &[&str]) -> Output {
    binary().args(args).output().expect("run binary")
}

fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&stdout_of(&run(args))).expect("one JSON document")
}

fn jsonl(args: &[&str]) -> Vec<Value> {
    stdout_of(&run(args))
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("array")
        .iter()
        .map(|item| item.as_str().expect("string").to_owned())
        .collect()
}

fn field(rows: &Value, name: &str) -> Vec<String> {
    rows.as_array()
        .expect("array")
        .iter()
        .map(|row| match &row[name] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn redacted(text: &str) -> String {
    text.replace(&root().display().to_string(), "[ROOT]")
}

/// Writes `lines` (each followed by a newline) to `dir/name` and returns the path.
fn write_file(dir: &Path, name: &str, lines: &[String]) -> String {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let mut body = String::new();
    for line in lines {
        body.push_str(line);
        body.push('\n');
    }
    std::fs::write(&path, body).expect("write");
    path.display().to_string()
}

fn header(id: &str, cwd: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"{cwd}"}}"#
    )
}

fn message(id: &str, parent: Option<&str>, minute: u32, role: &str, text: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |parent| format!("{parent:?}"));
    let text = serde_json::to_string(text).expect("string");
    let extra = if role == "assistant" {
        r#","provider":"p","model":"m","stopReason":"stop""#
    } else {
        ""
    };
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:{minute:02}:00.000Z","message":{{"role":"{role}","content":[{{"type":"text","text":{text}}}]{extra}}}}}"#
    )
}

/// Returns a linear conversation of `n_turns` user/assistant pairs, ids `u<n>`/`a<n>`.
fn conversation(n_turns: u32, first: u32) -> Vec<String> {
    let mut lines = Vec::new();
    for turn in first..first + n_turns {
        let parent = (turn > 0).then(|| format!("a{}", turn - 1));
        lines.push(message(
            &format!("u{turn}"),
            parent.as_deref(),
            turn * 2,
            "user",
            &format!("question {turn}"),
        ));
        lines.push(message(
            &format!("a{turn}"),
            Some(&format!("u{turn}")),
            turn * 2 + 1,
            "assistant",
            &format!("answer {turn}"),
        ));
    }
    lines
}

#[test]
fn golden_text_outputs() {
    let tree = file(TREE);
    let tools = file(TOOLS);
    let cases: &[(&str, Vec<&str>)] = &[
        ("show.txt", vec!["show", &tree]),
        ("show-tree.txt", vec!["show", &tree, "--tree"]),
        (
            "show-tools-thinking.txt",
            vec!["show", &tools, "--thinking", "--tool-output", "20"],
        ),
        ("inspect-overview.txt", vec!["inspect", &tree, "overview"]),
        ("inspect-ancestors.txt", vec!["inspect", &tree, "ancestors"]),
        (
            "inspect-children.txt",
            vec!["inspect", &tree, "children", "e0dbe164"],
        ),
        (
            "inspect-search.txt",
            vec!["inspect", &tree, "search", "APPROACH"],
        ),
        (
            "inspect-read.txt",
            vec![
                "inspect", &tree, "read", "474589f5", "--before", "2", "--after", "3",
            ],
        ),
        ("entries.txt", vec!["entries", &tree]),
    ];
    for (name, args) in cases {
        let output = run(args);
        assert_eq!(stderr_of(&output), "", "{name}: no warnings on a Pi file");
        golden(name, &redacted(&stdout_of(&output)));
    }
}

#[test]
fn show_follows_the_active_branch_pi_reports() {
    for relative in [TREE, TOOLS] {
        let expected = expected(relative);
        let document = json(&["show", &file(relative), "--json"]);
        assert_eq!(document["leafId"], expected["leafId"], "{relative}");
        assert_eq!(document["sessionId"], expected["headerId"]);
        assert_eq!(document["name"], expected["sessionName"]);
        let shown: BTreeSet<String> = field(&document["items"], "entryId").into_iter().collect();
        let active: BTreeSet<String> = strings(&expected["activeBranchIds"]).into_iter().collect();
        assert_eq!(
            shown, active,
            "{relative}: every active entry, nothing else"
        );
        assert_eq!(document["warnings"], Value::Array(Vec::new()));
    }
}

#[test]
fn show_tree_marks_the_active_path_branches_and_labels() {
    for relative in [TREE, TOOLS] {
        let expected = expected(relative);
        let document = json(&["show", &file(relative), "--tree", "--json"]);
        let rows = document["tree"].as_array().expect("tree rows");
        let ids: BTreeSet<String> = field(&document["tree"], "entryId").into_iter().collect();
        let all: BTreeSet<String> = strings(&expected["entryIds"]).into_iter().collect();
        assert_eq!(ids, all, "{relative}: every entry once");
        let active: Vec<String> = rows
            .iter()
            .filter(|row| row["isOnActivePath"] == true)
            .map(|row| row["entryId"].as_str().expect("id").to_owned())
            .collect();
        assert_eq!(active, strings(&expected["activeBranchIds"]));
        for row in rows {
            let id = row["entryId"].as_str().expect("id");
            assert_eq!(row["label"], expected["labels"][id], "{relative} {id}");
        }
    }
    let document = json(&["show", &file(TREE), "--tree", "--json"]);
    let branch_points: Vec<&Value> = document["tree"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|row| row["isBranchPoint"] == true)
        .map(|row| &row["entryId"])
        .collect();
    assert_eq!(branch_points, ["e0dbe164"]);
}

#[test]
fn thinking_is_hidden_unless_asked() {
    let tools = file(TOOLS);
    let thinking = "Read README.md, then run ls";
    let kinds = |args: &[&str]| field(&json(args)["items"], "kind");
    assert!(!kinds(&["show", &tools, "--json"]).contains(&"thinking".to_owned()));
    assert!(kinds(&["show", &tools, "--json", "--thinking"]).contains(&"thinking".to_owned()));
    assert!(!stdout_of(&run(&["show", &tools])).contains(thinking));
    assert!(stdout_of(&run(&["show", &tools, "--thinking"])).contains(thinking));
}

#[test]
fn tool_output_is_cut_and_tool_calls_are_one_line() {
    let tools = file(TOOLS);
    let document = json(&["show", &tools, "--json", "--tool-output", "5"]);
    let items = document["items"].as_array().expect("items");
    let results: Vec<&Value> = items
        .iter()
        .filter(|item| item["kind"] == "toolResult")
        .collect();
    assert_eq!(results.len(), 3);
    for result in results {
        assert!(result["text"].as_str().expect("text").chars().count() <= 5);
    }
    assert!(items.iter().any(|item| item["isTruncated"] == true));
    let text = stdout_of(&run(&["show", &tools]));
    assert!(
        text.contains("[654633ae] -> read path=\"README.md\"\n"),
        "{text}"
    );
    let cut = stdout_of(&run(&["show", &tools, "--tool-output", "3"]));
    assert!(
        cut.contains("  # d\n  [… output cut to 3 characters]"),
        "{cut}"
    );
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let tree = file(TREE);
    let plain = stdout_of(&run(&["show", &tree]));
    assert!(!plain.contains('\u{1b}'));
    let never = stdout_of(&run(&["show", &tree, "--color", "never"]));
    assert_eq!(plain, never);
    let always = stdout_of(&run(&["show", &tree, "--tree", "--color", "always"]));
    assert!(always.contains("\u{1b}["), "{always}");
    let json = stdout_of(&run(&["show", &tree, "--json", "--color", "always"]));
    assert!(!json.contains('\u{1b}'));
}

#[test]
fn session_argument_forms() {
    let sessions_root = root().display().to_string();
    let tree = expected(TREE);
    let id = tree["headerId"].as_str().expect("id");
    let by_path = json(&["show", &file(TREE), "--json"]);
    for argument in [id, &id[..13]] {
        let by_id = json(&[
            "show",
            argument,
            "--json",
            "--sessions-root",
            &sessions_root,
        ]);
        assert_eq!(by_id, by_path, "{argument}");
    }

    // A prefix shared by several sessions is a usage error naming every candidate.
    let output = run(&["show", "01a22b41", "--sessions-root", &sessions_root]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = stderr_of(&output);
    assert!(stderr.contains("matches 7 sessions"), "{stderr}");
    assert!(stderr.contains(&file(TREE)), "{stderr}");
    assert!(stderr.contains("run-1/session.jsonl"), "{stderr}");

    let output = run(&["entries", "ffff", "--sessions-root", &sessions_root]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr_of(&output).contains("\"ffff\""),
        "{}",
        stderr_of(&output)
    );

    let output = run(&["inspect", "/nonexistent/s.jsonl", "overview"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("/nonexistent/s.jsonl") && stderr.contains("No such file"),
        "{stderr}"
    );
}

#[test]
fn latest_is_the_newest_session_in_the_current_directory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    let work_text = work.display().to_string();
    let store = dir.path().join("store");
    let session = |name: &str, id: &str, cwd: &str, timestamp: &str| {
        let header = format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{timestamp}","cwd":"{cwd}"}}"#
        );
        write_file(
            &store,
            &format!("--w--/{name}.jsonl"),
            &[header, message("u0", None, 0, "user", id)],
        )
    };
    session("a", "old-here", &work_text, "2026-01-01T00:00:00Z");
    session("b", "new-here", &work_text, "2026-01-03T00:00:00Z");
    session(
        "c",
        "newest-elsewhere",
        "/elsewhere",
        "2026-01-05T00:00:00Z",
    );
    let latest = |current: &Path| {
        binary()
            .args(["entries", "latest", "--jsonl", "--sessions-root"])
            .arg(&store)
            .current_dir(current)
            .output()
            .expect("run")
    };
    let rows: Vec<Value> = stdout_of(&latest(&work))
        .lines()
        .map(|line| serde_json::from_str(line).expect("row"))
        .collect();
    assert_eq!(rows[0]["text"], "new-here");
    let output = latest(dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr_of(&output).contains("latest: no session ran in"));

    // --session-dir: a flat custom directory, searched with the default root.
    let custom = dir.path().join("custom");
    write_file(
        &custom,
        "x.jsonl",
        &[
            header("custom-id", "/w"),
            message("u0", None, 0, "user", "hi"),
        ],
    );
    let output = binary()
        .args(["entries", "custom", "--jsonl", "--session-dir"])
        .arg(&custom)
        .env("HOME", dir.path())
        .output()
        .expect("run");
    assert_eq!(stdout_of(&output).lines().count(), 1);
}

#[test]
fn entries_match_the_file_pi_wrote() {
    let text = std::fs::read_to_string(pi_real().join("expected.json")).expect("expected.json");
    let all: Value = serde_json::from_str(&text).expect("JSON");
    for (relative, expected) in all["files"].as_object().expect("files") {
        let document = json(&["entries", &file(relative), "--json"]);
        let rows = &document["entries"];
        assert_eq!(
            field(rows, "id"),
            strings(&expected["entryIds"]),
            "{relative}"
        );
        assert_eq!(field(rows, "type"), strings(&expected["entryTypes"]));
        let line_numbers: Vec<String> = (2..2 + rows.as_array().expect("rows").len())
            .map(|line| line.to_string())
            .collect();
        assert_eq!(field(rows, "lineNo"), line_numbers);
        assert_eq!(document["version"], expected["version"]);
        assert!(!rows.to_string().contains("iVBORw0KGgo"), "no image data");
    }
    // Thinking and tool calls never reach `text`.
    let tools = json(&["entries", &file(TOOLS), "--json"]).to_string();
    assert!(!tools.contains("Read README.md, then run ls"));
    assert!(!tools.contains("wc -l main.rs"));
}

#[test]
fn entries_filters() {
    let tree = file(TREE);
    let ids = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["entries", tree.as_str(), "--jsonl"];
        all.extend_from_slice(args);
        jsonl(&all)
            .iter()
            .map(|row| row["id"].as_str().expect("id").to_owned())
            .collect()
    };
    assert_eq!(
        ids(&["--lines", "5..7"]),
        ["5ef17fa5", "e0dbe164", "fda52c88"]
    );
    assert_eq!(ids(&["--lines", "17.."]), ["12a50b94", "f614fd8a"]);
    assert_eq!(ids(&["--lines", "..2"]), ["4290af50"]);
    assert_eq!(ids(&["--lines", "1"]), Vec::<String>::new());
    assert_eq!(ids(&["--id", "474589f5"]), ["474589f5"]);
    assert_eq!(ids(&["--parent-id", "e0dbe164"]), ["fda52c88", "474589f5"]);
    assert_eq!(
        ids(&["--type", "label", "--type", "compaction"]),
        ["eec62c1f", "046fe6a4"]
    );
    assert_eq!(
        ids(&["--role", "user", "--lines", "..8"]),
        ["5ef17fa5", "fda52c88"]
    );
    assert_eq!(
        ids(&["--role", "system", "--role", "user", "--limit", "2"]),
        ["20f60ff6", "5ef17fa5"]
    );
    assert_eq!(
        ids(&[
            "--since",
            "2026-11-30T07:00:59.500Z",
            "--until",
            "2026-11-30T07:00:59.502Z"
        ]),
        ["e46c151b", "fd647475", "e4034af3"]
    );
    assert_eq!(
        ids(&["--grep", "APPROACH b", "--grep", "the test passes"]),
        ["843f2b6a", "e46c151b", "e4034af3", "046fe6a4", "12a50b94"]
    );
    assert_eq!(
        ids(&["--grep", "APPROACH b", "--case-sensitive"]),
        Vec::<String>::new()
    );
    assert_eq!(
        ids(&[
            "--grep",
            "Approach B",
            "--case-sensitive",
            "--role",
            "assistant"
        ]),
        ["e46c151b"]
    );

    // --raw: the line exactly as stored.
    let lines: Vec<String> = std::fs::read_to_string(&tree)
        .expect("read")
        .lines()
        .map(str::to_owned)
        .collect();
    let raw = stdout_of(&run(&[
        "entries", &tree, "--jsonl", "--raw", "--lines", "9",
    ]));
    assert!(raw.contains(&format!(",\"raw\":{}}}", lines[8])), "{raw}");
    assert!(!stdout_of(&run(&["entries", &tree, "--jsonl"])).contains("\"raw\""));
    let text = stdout_of(&run(&["entries", &tree, "--raw", "--lines", "9"]));
    assert!(text.contains(&format!("\n  {}\n", lines[8])), "{text}");

    for bad in [
        vec!["--lines", "7..3"],
        vec!["--lines", "0"],
        vec!["--since", "someday"],
        vec!["--limit", "0"],
        vec!["--json", "--jsonl"],
    ] {
        let mut args = vec!["entries", tree.as_str()];
        args.extend(bad.iter().copied());
        assert_eq!(run(&args).status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn version_1_files_have_null_ids_and_one_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write_file(
        dir.path(),
        "v1.jsonl",
        &[
            r#"{"type":"session","id":"v1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#
                .to_owned(),
            r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hello"}}"#.to_owned(),
            r#"{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}"#.to_owned(),
        ],
    );
    let document = json(&["entries", &path, "--json"]);
    assert_eq!(field(&document["entries"], "id"), ["null", "null"]);
    assert_eq!(field(&document["entries"], "parentId"), ["null", "null"]);
    assert_eq!(field(&document["entries"], "lineNo"), ["2", "3"]);
    assert_eq!(document["warnings"].as_array().expect("warnings").len(), 1);
    let output = run(&["entries", &path]);
    assert_eq!(stderr_of(&output).lines().count(), 1);
    assert!(stderr_of(&output).contains("version 1"));
    let page = json(&[
        "inspect", &path, "read", "line:3", "--before", "1", "--json",
    ]);
    assert_eq!(page["read"]["entry"]["entryId"], "line:3");
    assert_eq!(page["read"]["before"][0]["entryId"], "line:2");
}

#[test]
fn damage_is_a_warning_and_content_is_sanitised() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write_file(
        dir.path(),
        "damaged.jsonl",
        &[
            header("d", "/w"),
            message(
                "u0",
                None,
                0,
                "user",
                "red \u{1b}[31mALERT\u{1b}[0m \u{202e}txet",
            ),
            "{ not json".to_owned(),
            message("a0", Some("u0"), 1, "assistant", "ok"),
            message("u1", Some("gone"), 2, "user", "orphan"),
        ],
    );
    for args in [
        vec!["show", path.as_str()],
        vec!["show", path.as_str(), "--tree"],
        vec!["inspect", path.as_str(), "overview"],
        vec!["entries", path.as_str()],
    ] {
        let output = run(&args);
        let text = stdout_of(&output);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202e}'),
            "{args:?}: {text:?}"
        );
        let stderr = stderr_of(&output);
        assert!(
            stderr.contains("line 3 is not valid JSON"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("warning: "), "{stderr}");
    }
    assert!(stdout_of(&run(&["show", &path, "--tree"])).contains("red ALERT txet"));
    for args in [
        vec!["show", path.as_str(), "--json"],
        vec!["inspect", path.as_str(), "overview", "--json"],
        vec!["entries", path.as_str(), "--json"],
    ] {
        let output = run(&args);
        let document: Value = serde_json::from_str(&stdout_of(&output)).expect("JSON");
        assert!(document["warnings"].as_array().expect("warnings").len() >= 2);
        assert_eq!(stderr_of(&output), "", "{args:?}");
    }
}

#[test]
fn inspect_views_agree_with_the_tree() {
    let tree = file(TREE);
    let expected = expected(TREE);
    let overview = json(&["inspect", &tree, "overview", "--json"]);
    assert_eq!(overview["sessionId"], expected["headerId"]);
    assert_eq!(overview["activeEntryId"], expected["leafId"]);
    assert_eq!(
        field(&overview["checkpoints"], "entryId"),
        ["e0dbe164", "05e0be47", "e46c151b", "e4034af3", "12a50b94"]
    );
    assert!(
        overview["tokenEstimate"]
            .as_str()
            .expect("label")
            .contains("approximate")
    );
    let ancestors = json(&["inspect", &tree, "ancestors", "--json"]);
    assert_eq!(
        field(&ancestors["checkpoints"], "entryId"),
        ["e0dbe164", "e46c151b", "e4034af3", "12a50b94"]
    );
    let abandoned = json(&["inspect", &tree, "ancestors", "05e0be47", "--json"]);
    assert_eq!(
        field(&abandoned["checkpoints"], "entryId"),
        ["e0dbe164", "05e0be47"]
    );
    let children = json(&["inspect", &tree, "children", "e0dbe164", "--json"]);
    assert_eq!(
        field(&children["checkpoints"], "entryId"),
        ["05e0be47", "e46c151b"]
    );
    let hits = json(&["inspect", &tree, "search", "abandoned-A", "--json"]);
    assert_eq!(field(&hits["hits"], "field"), ["label"]);
    assert_eq!(field(&hits["hits"], "entryId"), ["474589f5"]);

    let read = json(&[
        "inspect", &tree, "read", "5ef17fa5", "--before", "1", "--after", "5", "--json",
    ]);
    assert_eq!(field(&read["read"]["before"], "entryId"), ["20f60ff6"]);
    assert_eq!(field(&read["read"]["after"], "entryId"), ["e0dbe164"]);
    assert_eq!(
        strings(&read["read"]["branchPoint"]["childIds"]),
        ["fda52c88", "474589f5"]
    );
    let read = json(&[
        "inspect", &tree, "read", "843f2b6a", "--before", "0", "--after", "2", "--json",
    ]);
    assert_eq!(read["read"]["before"], Value::Array(Vec::new()));
    assert_eq!(
        field(&read["read"]["after"], "entryId"),
        ["e46c151b", "fd647475"]
    );

    let output = run(&["inspect", &tree, "read", "nope"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr_of(&output).contains("\"nope\""));
    for bad in [
        vec!["read", "5ef17fa5", "--before", "11"],
        vec!["overview", "--limit", "51"],
        vec!["overview", "--limit", "0"],
        vec!["search", ""],
        vec!["overview", "--cursor", "nonsense"],
    ] {
        let mut args = vec!["inspect", tree.as_str()];
        args.extend(bad.iter().copied());
        assert_eq!(run(&args).status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn inspect_never_returns_thinking_images_or_arguments() {
    let tools = file(TOOLS);
    let mut everything = String::new();
    for view in [
        vec!["overview"],
        vec!["ancestors"],
        vec!["search", "README"],
        vec!["read", "654633ae", "--before", "10", "--after", "10"],
    ] {
        for tool_results in [false, true] {
            let mut args = vec!["inspect", tools.as_str()];
            args.extend(view.iter().copied());
            args.push("--json");
            if tool_results {
                args.push("--tool-results");
            }
            everything.push_str(&stdout_of(&run(&args)));
            args.retain(|arg| *arg != "--json");
            everything.push_str(&stdout_of(&run(&args)));
        }
    }
    assert!(
        !everything.contains("Read README.md, then run ls"),
        "thinking"
    );
    assert!(!everything.contains("iVBORw0KGgo"), "image data");
    assert!(!everything.contains("wc -l main.rs"), "tool-call arguments");
}

#[test]
fn tool_output_only_with_tool_results() {
    let tools = file(TOOLS);
    let output_text = "A tiny project used to generate";
    let search = |extra: &[&str]| {
        let mut args = vec![
            "inspect",
            tools.as_str(),
            "search",
            "tiny project",
            "--json",
        ];
        args.extend_from_slice(extra);
        json(&args)["nTotal"].clone()
    };
    assert_eq!(search(&[]), 0);
    assert_eq!(search(&["--tool-results"]), 1);
    let read = |extra: &[&str]| {
        let mut args = vec!["inspect", tools.as_str(), "read", "76e3f503"];
        args.extend_from_slice(extra);
        stdout_of(&run(&args))
    };
    assert!(!read(&[]).contains(output_text));
    assert!(read(&[]).contains("tool output hidden"));
    assert!(read(&["--tool-results"]).contains(output_text));
    let overview = |extra: &[&str]| {
        let mut args = vec!["inspect", tools.as_str(), "overview"];
        args.extend_from_slice(extra);
        stdout_of(&run(&args))
    };
    assert!(!overview(&[]).contains(output_text));
    assert!(overview(&["--tool-results"]).contains(output_text));
}

#[test]
fn pages_and_cursors_continue_the_same_snapshot() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut lines = vec![header("grow", "/w")];
    lines.extend(conversation(25, 0));
    let path = write_file(dir.path(), "grow.jsonl", &lines);
    let page = |extra: &[&str]| {
        let mut args = vec!["inspect", path.as_str(), "overview", "--json"];
        args.extend_from_slice(extra);
        json(&args)
    };
    let first = page(&[]);
    assert_eq!(first["nTotal"], 25);
    assert_eq!(first["checkpoints"].as_array().expect("page").len(), 20);
    let first = page(&["--limit", "10"]);
    assert_eq!(
        field(&first["checkpoints"], "entryId"),
        (0..10).map(|n| format!("a{n}")).collect::<Vec<_>>()
    );
    let cursor = first["nextCursor"].as_str().expect("cursor").to_owned();

    // Pi appends while the reader pages.
    let mut grown = lines.clone();
    grown.extend(conversation(5, 25));
    write_file(dir.path(), "grow.jsonl", &grown);
    assert_eq!(page(&[])["nTotal"], 30);

    let second = page(&["--limit", "10", "--cursor", &cursor]);
    assert_eq!(second["nTotal"], 25);
    assert_eq!(second["snapshot"], first["snapshot"]);
    assert_eq!(
        field(&second["checkpoints"], "entryId"),
        (10..20).map(|n| format!("a{n}")).collect::<Vec<_>>()
    );
    let third = page(&[
        "--limit",
        "10",
        "--cursor",
        second["nextCursor"].as_str().expect("cursor"),
    ]);
    assert_eq!(field(&third["checkpoints"], "entryId").len(), 5);
    assert_eq!(third["nextCursor"], Value::Null);

    // Text output names the range and the cursor to continue with.
    let text = stdout_of(&run(&["inspect", &path, "overview", "--limit", "10"]));
    assert!(text.contains("checkpoints 1-10 of 30"), "{text}");
    assert!(text.contains("next page: --cursor c1."), "{text}");

    // A cursor belongs to its request, and to a file at least as long as its snapshot.
    let output = run(&["inspect", &path, "search", "answer", "--cursor", &cursor]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr_of(&output).contains("different request"));
    write_file(dir.path(), "grow.jsonl", &lines[..3]);
    let output = run(&[
        "inspect", &path, "overview", "--limit", "10", "--cursor", &cursor,
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr_of(&output).contains("shrank"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn help_has_examples() {
    for command in ["show", "inspect", "entries"] {
        let help = stdout_of(&run(&[command, "--help"]));
        assert!(help.contains("Examples:"), "{command}");
        assert!(help.contains("latest"), "{command}");
    }
}

#[test]
fn broken_pipe_exits_0_quietly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut lines = vec![header("big", "/w")];
    lines.extend(conversation(3000, 0));
    let path = write_file(dir.path(), "big.jsonl", &lines);
    // Text and JSON writers fail differently on a closed pipe (an `io::Error`, or one wrapped
    // in a `serde_json::Error`); both must exit 0 without a word.
    let commands: [&[&str]; 6] = [
        &["show"],
        &["show", "--json"],
        &["entries"],
        &["entries", "--json"],
        &["entries", "--jsonl"],
        &["inspect", "--json", "--limit", "50", "overview"],
    ];
    for command in commands {
        let (name, flags) = command.split_first().expect("a command");
        common::assert_quiet_on_a_closed_pipe(
            binary().arg(name).arg(&path).args(flags),
            &format!("{command:?}"),
        );
    }
}

#[test]
fn long_notes_are_cut_in_text_and_whole_in_json() {
    let dir = tempfile::tempdir().expect("temp dir");
    let long = "extension context line\n".repeat(200);
    let custom = serde_json::json!({
        "type": "custom_message", "id": "c1", "parentId": "u1",
        "timestamp": "2026-01-01T00:02:00.000Z", "customType": "ext",
        "content": long, "display": true
    })
    .to_string();
    let path = write_file(
        dir.path(),
        "s.jsonl",
        &[
            header("long-notes", "/w"),
            message("u1", None, 1, "user", "hello"),
            custom,
        ],
    );
    let text = stdout_of(&run(&["show", &path, "--tool-output", "50"]));
    assert!(
        text.contains("[… cut to 50 characters; --json has all of it]"),
        "{text}"
    );
    assert_eq!(text.matches("extension context line").count(), 2, "{text}");
    let document = json(&["show", &path, "--json"]);
    assert!(
        document
            .to_string()
            .matches("extension context line")
            .count()
            >= 200
    );
}
