//! What `search` and `stats` share end to end: the report's time zone, a subagent run's
//! context, errors for an unreadable store, output valid against the published schemas,
//! checked flags, saturating sums and the common warning prefix. Stores are generated in
//! temp dirs.

use crate::common;

use std::path::Path;

use common::{binary, stdout_of};
use pi_retrospect_testkit::{
    Block, Entry, Header, Message, Usage, fork_path, run_path, write_session_file,
};
use serde_json::Value;

/// Returns an assistant entry line with `usage` at `timestamp`.
fn assistant(id: &str, parent: Option<&str>, timestamp: &str, input: u64, cost: f64) -> String {
    let message = Message::assistant(&[Block::text(&format!("answer {id}"))])
        .api("x")
        .provider("p")
        .model("m")
        .usage(Usage::tokens(input, 0).cost_total_only(cost))
        .stop_reason("stop")
        .timestamp(1);
    Entry::message(message)
        .id(id)
        .parent(parent)
        .at(timestamp)
        .to_string()
}

/// Writes a session file `name` under the project directory of `/p` in `root`, with a
/// header of `id` started at `started`, and `lines`; returns its path.
fn session(root: &Path, name: &str, id: &str, started: &str, lines: &[String]) -> String {
    let header = Header::new(id).timestamp(started).cwd("/p");
    write_session_file(&root.join("--p--").join(name), &header, lines)
        .display()
        .to_string()
}

fn json_of(output: &std::process::Output) -> Value {
    serde_json::from_str(&stdout_of(output)).expect("JSON")
}

/// `--since`/`--until` dates are read in `--timezone`, the zone of the period rows,
/// whatever the local zone is.
#[test]
fn stats_since_until_use_the_report_time_zone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    session(
        root,
        "2026-03-01T20-00-00-000Z_s1.jsonl",
        "s1",
        "2026-03-01T20:00:00.000Z",
        &[
            // 03:00 UTC on 2026-03-02: still 2026-03-01 in New York.
            assistant("a1", None, "2026-03-02T03:00:00.000Z", 100, 1.0),
            assistant("a2", Some("a1"), "2026-03-02T12:00:00.000Z", 10, 0.1),
            assistant("a3", Some("a2"), "2026-03-03T01:00:00.000Z", 1, 0.01),
        ],
    );
    let root = root.display().to_string();
    let report = |extra: &[&str]| {
        let output = binary()
            .env("TZ", "America/New_York")
            .args(["stats", "--sessions-root", &root, "-q", "--by", "day"])
            .args(["--timezone", "UTC", "--json"])
            .args(extra)
            .output()
            .expect("run");
        json_of(&output)
    };
    let ranged = report(&["--since", "2026-03-02", "--until", "2026-03-02"]);
    assert_eq!(ranged["since"], "2026-03-02T00:00:00Z", "{ranged}");
    assert_eq!(
        ranged["until"], "2026-03-02T23:59:59.999999999Z",
        "{ranged}"
    );
    assert_eq!(ranged["total"]["input"], 110, "{ranged}");
    let all = report(&[]);
    let day = all["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|row| row["day"] == "2026-03-02")
        .cloned();
    let day = day.unwrap_or_else(|| panic!("no 2026-03-02 row in {all}"));
    assert_eq!(day["usage"]["input"], ranged["total"]["input"]);
}

fn user_line(id: &str, parent: Option<&str>, timestamp: &str, text: &str) -> String {
    Entry::message(Message::user(text).timestamp(1))
        .id(id)
        .parent(parent)
        .at(timestamp)
        .to_string()
}

/// Writes a session at `path` (any place) with header `id` and `lines`.
fn write_at(path: &Path, id: &str, lines: &[String]) -> String {
    let header = Header::new(id)
        .timestamp("2026-03-02T10:00:00.000Z")
        .cwd("/p");
    write_session_file(path, &header, lines)
        .display()
        .to_string()
}

/// A store with a session, a `forks/` run copying its entries and a subagent run.
struct Store {
    _dir: tempfile::TempDir,
    root: String,
    session: String,
    fork: String,
    run: String,
}

fn store() -> Store {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().display().to_string();
    let shared = vec![
        user_line("u1", None, "2026-03-02T10:00:01.000Z", "forked needle"),
        assistant("a1", Some("u1"), "2026-03-02T10:00:02.000Z", 1000, 1.0),
    ];
    let session = session(
        dir.path(),
        "2026-03-02T10-00-00-000Z_s1.jsonl",
        "s1",
        "2026-03-02T10:00:00.000Z",
        &shared,
    );
    let mut fork_lines = shared.clone();
    fork_lines.push(assistant(
        "f1",
        Some("a1"),
        "2026-03-02T11:00:00.000Z",
        7,
        0.5,
    ));
    let fork = write_at(
        &fork_path(Path::new(&session), "2026-03-02T11-00-00-000Z_f1.jsonl"),
        "f1",
        &fork_lines,
    );
    let run = write_at(
        &run_path(Path::new(&session), "launch-1", 0),
        "r1",
        &[user_line(
            "r1u",
            None,
            "2026-03-02T12:00:00.000Z",
            "run needle",
        )],
    );
    Store {
        _dir: dir,
        root,
        session,
        fork,
        run,
    }
}

/// A subagent run chosen with `--session` keeps its context: its depth, its launcher,
/// and for a `forks/` run its fork parent, so its copied entries are not counted as its own.
#[test]
fn session_flag_keeps_the_run_context() {
    let store = store();
    let stats = |session: &str| {
        json_of(
            &binary()
                .args(["stats", "--sessions-root", &store.root, "-q"])
                .args(["--by", "session", "--json", "--session", session])
                .output()
                .expect("run"),
        )
    };
    let fork = stats(&store.fork);
    let rows = fork["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{fork}");
    assert_eq!(rows[0]["path"], store.fork.as_str());
    assert_eq!(rows[0]["depth"], 1);
    assert_eq!(rows[0]["launchedBy"], store.session.as_str());
    assert_eq!(rows[0]["forkOf"], store.session.as_str());
    assert_eq!(rows[0]["pi"]["input"], 1007);
    assert_eq!(rows[0]["own"]["input"], 7);
    assert_eq!(fork["total"]["input"], 7);
    // The launcher with its runs, as before.
    let session = stats(&store.session);
    assert_eq!(
        session["rows"].as_array().expect("rows").len(),
        3,
        "{session}"
    );
    assert_eq!(session["total"]["input"], 1007);

    for (session, pattern, depth) in [
        (&store.fork, "forked", 1),
        (&store.run, "run needle", 1),
        (&store.session, "forked", 0),
    ] {
        let output = binary()
            .args(["search", "--sessions-root", &store.root, pattern])
            .args(["--session", session, "--jsonl"])
            .output()
            .expect("run");
        let row: Value =
            serde_json::from_str(stdout_of(&output).lines().next().expect("a hit")).expect("JSON");
        assert_eq!(row["depth"], depth, "{session}");
    }
}

/// A sessions root that cannot be read is an error naming it: search exits 2, stats 1.
#[test]
fn unreadable_store_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "x").expect("write");
    for root in [
        "/nonexistent-root-for-tests".to_owned(),
        file.display().to_string(),
    ] {
        for (command, code) in [("search", 2), ("stats", 1)] {
            let mut args = vec![command, "--sessions-root", &root];
            if command == "search" {
                args.push("needle");
            }
            let output = binary().args(&args).output().expect("run");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(
                output.status.code(),
                Some(code),
                "{command} {root}: {stderr}"
            );
            assert!(
                stderr.contains(&format!("{root}: sessions root not readable")),
                "{command}: {stderr}"
            );
            assert!(output.stdout.is_empty(), "{command}");
        }
    }
}

/// Returns a validator of `definition` in the schema `schema` prints for `command`.
fn validator(command: &str, definition: Option<&str>) -> jsonschema::Validator {
    let output = binary().args(["schema", command]).output().expect("run");
    let mut schema: Value = serde_json::from_str(&stdout_of(&output)).expect("schema");
    if let Some(definition) = definition {
        let object = schema.as_object_mut().expect("object");
        for member in ["type", "properties", "required", "additionalProperties"] {
            object.remove(member);
        }
        object.insert("$ref".to_owned(), format!("#/$defs/{definition}").into());
    }
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

fn assert_valid(validator: &jsonschema::Validator, value: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|error| error.to_string())
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:?}\n{value}");
}

/// The real output of every `search` mode and `stats` validates against
/// `schema`; `--count` and `-l` give their per-file data as JSON documents and rows.
#[test]
fn real_output_validates_against_the_schemas() {
    let store = store();
    // A damaged line that could hold a match makes a warning row.
    let damaged = write_at(
        &Path::new(&store.root).join("--q--/2026-03-03T10-00-00-000Z_d1.jsonl"),
        "d1",
        &["{\"type\":\"message\",\"message\":\"needle".to_owned()],
    );
    let search = |extra: &[&str]| {
        let output = binary()
            .args([
                "search",
                "--sessions-root",
                &store.root,
                "needle",
                "--sort",
                "path",
            ])
            .args(extra)
            .output()
            .expect("run");
        assert_eq!(output.status.code(), Some(0), "{extra:?}");
        String::from_utf8(output.stdout).expect("UTF-8")
    };
    let document = validator("search", None);
    let rows: Vec<(&str, jsonschema::Validator)> = ["HitRow", "CountRow", "FileRow", "WarningRow"]
        .into_iter()
        .map(|name| (name, validator("search", Some(name))))
        .collect();
    let mut kinds = Vec::new();
    for extra in [&[][..], &["--count"], &["-l"]] {
        let json: Value =
            serde_json::from_str(&search(&[extra, &["--json"]].concat())).expect("JSON");
        assert_valid(&document, &json, &format!("{extra:?} --json"));
        for line in search(&[extra, &["--jsonl"]].concat()).lines() {
            let row: Value = serde_json::from_str(line).expect("JSON row");
            let kind = row["kind"].as_str().expect("kind").to_owned();
            let name = match kind.as_str() {
                "hit" => "HitRow",
                "count" => "CountRow",
                "file" => "FileRow",
                "warning" => "WarningRow",
                other => panic!("kind {other}"),
            };
            let (_, validator) = rows.iter().find(|(row, _)| *row == name).expect("row");
            assert_valid(validator, &row, line);
            kinds.push(kind);
        }
    }
    for kind in ["hit", "count", "file", "warning"] {
        assert!(
            kinds.iter().any(|seen| seen == kind),
            "no {kind} row: {kinds:?}"
        );
    }
    // The per-file data itself.
    let counts: Value = serde_json::from_str(&search(&["--count", "--json"])).expect("JSON");
    assert_eq!(counts["hits"], serde_json::json!([]));
    let counted: Vec<(String, u64)> = counts["counts"]
        .as_array()
        .expect("counts")
        .iter()
        .map(|count| {
            let path = count["path"].as_str().expect("path").to_owned();
            (path, count["nHits"].as_u64().expect("nHits"))
        })
        .collect();
    let mut expected = vec![
        (store.fork.clone(), 1),
        (store.run.clone(), 1),
        (store.session.clone(), 1),
    ];
    expected.sort();
    assert_eq!(counted, expected);
    let files: Value = serde_json::from_str(&search(&["-l", "--json"])).expect("JSON");
    let paths: Vec<&str> = expected.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(files["files"], serde_json::json!(paths));
    assert!(files["warnings"].to_string().contains(&damaged), "{files}");
    let count_rows: Vec<Value> = search(&["--count", "--jsonl"])
        .lines()
        .map(|line| serde_json::from_str(line).expect("row"))
        .filter(|row: &Value| row["kind"] == "count")
        .collect();
    assert_eq!(count_rows.len(), 3);

    let stats = validator("stats", None);
    for by in ["session", "day,model", "project"] {
        let output = binary()
            .args([
                "stats",
                "--sessions-root",
                &store.root,
                "--by",
                by,
                "--json",
            ])
            .output()
            .expect("run");
        assert_valid(&stats, &json_of(&output), by);
    }
}

/// `--role` takes only Pi's roles, and an entry Pi turns into a message has its role.
#[test]
fn search_role_is_validated_and_custom_covers_custom_messages() {
    let dir = tempfile::tempdir().expect("temp dir");
    session(
        dir.path(),
        "2026-03-02T10-00-00-000Z_s1.jsonl",
        "s1",
        "2026-03-02T10:00:00.000Z",
        &[
            user_line(
                "u1",
                None,
                "2026-03-02T10:00:01.000Z",
                "injected by the user",
            ),
            Entry::custom_message("ext", "Injected context", true)
                .id("c1")
                .parent(Some("u1"))
                .at("2026-03-02T10:00:02.000Z")
                .to_string(),
            Entry::branch_summary("u1", "Injected summary")
                .id("b1")
                .parent(Some("c1"))
                .at("2026-03-02T10:00:03.000Z")
                .to_string(),
        ],
    );
    let root = dir.path().display().to_string();
    let search = |extra: &[&str]| {
        binary()
            .args([
                "search",
                "--sessions-root",
                &root,
                "-i",
                "injected",
                "--jsonl",
            ])
            .args(extra)
            .output()
            .expect("run")
    };
    let entries = |extra: &[&str]| -> Vec<String> {
        stdout_of(&search(extra))
            .lines()
            .map(|line| {
                let row: Value = serde_json::from_str(line).expect("row");
                row["entryId"].as_str().expect("id").to_owned()
            })
            .collect()
    };
    assert_eq!(entries(&["--role", "custom"]), ["c1"]);
    assert_eq!(entries(&["--role", "branchSummary"]), ["b1"]);
    assert_eq!(
        entries(&["--role", "user", "--role", "custom"]),
        ["u1", "c1"]
    );
    let output = search(&["--role", "tool_result"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("toolResult") && stderr.contains("custom"),
        "{stderr}"
    );
}

/// Text hits show the entry's time in the local zone; `-l` and `--count` write
/// paths as they are when stdout is not a terminal, as ripgrep does.
#[test]
fn text_hits_show_local_time_and_paths_are_raw_on_a_pipe() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("--p-\u{1b}]0;TITLE\u{7}--");
    std::fs::create_dir_all(&project).expect("mkdir");
    let path = write_at(
        &project.join("2026-03-02T10-00-00-000Z_s1.jsonl"),
        "s1",
        &[user_line("u1", None, "2026-03-02T10:00:01.000Z", "needle")],
    );
    let root = dir.path().display().to_string();
    let run = |extra: &[&str]| {
        stdout_of(
            &binary()
                .env("TZ", "Europe/Berlin")
                .args(["search", "--sessions-root", &root, "needle"])
                .args(extra)
                .output()
                .expect("run"),
        )
    };
    let text = run(&[]);
    assert!(
        text.contains("2:[u1] 2026-03-02 11:00:01 user: needle"),
        "{text}"
    );
    assert_eq!(run(&["-l"]), format!("{path}\n"));
    assert_eq!(run(&["--count"]), format!("{path}:1\n"));
}

/// `--threads 0` is refused by search and stats with list's message.
#[test]
fn threads_zero_is_refused() {
    for args in [vec!["list"], vec!["search", "needle"], vec!["stats"]] {
        let output = binary()
            .args(&args)
            .args([
                "--sessions-root",
                "/nonexistent-root-for-tests",
                "--threads",
                "0",
            ])
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("--threads must be at least 1 (leave it out for one thread per core)"),
            "{args:?}: {stderr}"
        );
    }
}

/// Absurd token counts saturate instead of wrapping, an infinite cost sum stays a
/// number, and a recorded zero cost is a known $0.
#[test]
fn sums_saturate_and_zero_cost_is_known() {
    let dir = tempfile::tempdir().expect("temp dir");
    let huge = |id: &str, parent: Option<&str>| {
        // Written by hand: the sums overflow, so no total of them is the `totalTokens` here.
        let usage = r#"{"input":1,"output":18446744073709551615,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"total":1e308}}"#;
        let message = Message::assistant(&[])
            .api("x")
            .provider("p")
            .model("m")
            .member("usage", usage)
            .stop_reason("stop")
            .timestamp(1);
        Entry::message(message)
            .id(id)
            .parent(parent)
            .at("2026-03-02T10:00:01.000Z")
            .to_string()
    };
    session(
        dir.path(),
        "2026-03-02T10-00-00-000Z_s1.jsonl",
        "s1",
        "2026-03-02T10:00:00.000Z",
        &[
            huge("a1", None),
            huge("a2", Some("a1")),
            huge("a3", Some("a2")),
        ],
    );
    let zero_dir = tempfile::tempdir().expect("temp dir");
    session(
        zero_dir.path(),
        "2026-03-02T10-00-00-000Z_s2.jsonl",
        "s2",
        "2026-03-02T10:00:00.000Z",
        &[assistant("a1", None, "2026-03-02T10:00:01.000Z", 50, 0.0)],
    );
    let stats = validator("stats", None);
    let report = |root: &Path| {
        json_of(
            &binary()
                .args([
                    "stats",
                    "--sessions-root",
                    &root.display().to_string(),
                    "--json",
                ])
                .output()
                .expect("run"),
        )
    };
    let huge = report(dir.path());
    assert_valid(&stats, &huge, "saturated");
    assert_eq!(huge["total"]["output"], u64::MAX, "{huge}");
    assert_eq!(huge["total"]["total"], u64::MAX, "{huge}");
    assert_eq!(huge["total"]["cost"], f64::MAX, "{huge}");
    let zero = report(zero_dir.path());
    assert_eq!(zero["total"]["nCostUnknown"], 0, "{zero}");
    assert_eq!(zero["total"]["cost"], 0.0, "{zero}");
    let text = stdout_of(
        &binary()
            .args([
                "stats",
                "--sessions-root",
                &zero_dir.path().display().to_string(),
            ])
            .output()
            .expect("run"),
    );
    assert!(text.contains("$0.0000") && !text.contains('*'), "{text}");
}

/// Search's warnings on stderr carry the prefix every command's warnings carry.
#[test]
fn search_warnings_have_the_common_prefix() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    session(
        root,
        "2026-03-01T20-00-00-000Z_s1.jsonl",
        "s1",
        "2026-03-01T20:00:00.000Z",
        &[
            assistant("a1", None, "2026-03-02T03:00:00.000Z", 100, 1.0),
            "{not json answer".to_owned(),
        ],
    );
    let root = root.display().to_string();
    let output = binary()
        .args(["search", "--sessions-root", &root, "answer"])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.is_empty(), "a warning: {output:?}");
    for line in stderr.lines() {
        assert!(line.starts_with("pi-retrospect: warning: /"), "{stderr}");
    }
}

/// `search --session` on a file that is missing, a directory or not a session is an error
/// (exit 2, as ripgrep exits for a missing file), never "nothing matched" (exit 1).
#[test]
fn search_session_that_is_not_a_session_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").expect("write");
    let missing = dir.path().join("missing.jsonl");
    for target in [&missing, &empty, &dir.path().to_path_buf()] {
        let output = binary()
            .args(["search", "needle", "--sessions-root"])
            .arg(dir.path())
            .arg("--session")
            .arg(target)
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{}: {stderr}",
            target.display()
        );
        assert!(stderr.contains(&target.display().to_string()), "{stderr}");
    }
}
