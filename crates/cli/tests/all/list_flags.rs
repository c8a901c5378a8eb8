//! `list` flags on the committed agent-directory fixture (`fixtures/agent`): store
//! resolution, every filter, ordering, limits and the output modes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pi_retrospect_testkit::{Entry, Header, Message, write_session_file};
use serde_json::Value;

use crate::common;

fn agent() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/agent")
        .canonicalize()
        .expect("fixtures exist")
}

fn binary() -> Command {
    let mut command = common::binary();
    command
        .env_remove("NO_COLOR")
        .env("PI_CODING_AGENT_DIR", agent())
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

fn run(command: &mut Command) -> Output {
    command.output().expect("run binary")
}

fn success(output: Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8")
}

/// Returns the JSONL rows of `list --jsonl ARGS`.
fn rows(command: &mut Command) -> Vec<Value> {
    success(run(command))
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect()
}

/// Returns `depth:last-three-digits-of-id` for each session row of `list --jsonl ARGS`.
fn ids(args: &[&str]) -> Vec<String> {
    ids_of(binary().args(["list", "--jsonl"]).args(args))
}

fn ids_of(command: &mut Command) -> Vec<String> {
    rows(command)
        .iter()
        .filter(|row| row["kind"] == "session")
        .map(|row| {
            let id = row["id"].as_str().expect("id");
            format!("{}:{}", row["depth"], &id[id.len() - 3..])
        })
        .collect()
}

fn top(args: &[&str]) -> Vec<String> {
    ids(args)
        .into_iter()
        .filter_map(|row| row.strip_prefix("0:").map(str::to_owned))
        .collect()
}

#[test]
fn stores() {
    assert_eq!(top(&[]), ["200", "203", "204", "205", "206"]);
    assert_eq!(
        top(&["--include-archive"]),
        ["220", "200", "203", "204", "205", "206"]
    );
    let custom = agent().join("custom-sessions");
    let custom = custom.to_str().expect("utf-8");
    let with_custom = ["200", "203", "204", "205", "210", "206"];
    assert_eq!(top(&["--session-dir", custom]), with_custom);
    assert_eq!(
        ids_of(binary().env("PI_CODING_AGENT_SESSION_DIR", custom).args([
            "list",
            "--jsonl",
            "--max-depth",
            "0"
        ]))
        .iter()
        .map(|row| row.trim_start_matches("0:").to_owned())
        .collect::<Vec<_>>(),
        with_custom
    );
    // A custom directory that is the default root itself hides nothing.
    let default_root = agent().join("sessions");
    assert_eq!(
        top(&["--session-dir", default_root.to_str().expect("utf-8")]),
        ["200", "203", "204", "205", "206"]
    );
    // A custom directory's runs: forks/ runs are children, artifact copies never appear.
    let custom_rows = ids(&[
        "--session-dir",
        custom,
        "--id",
        "01990000-0000-7000-8000-000000000210",
    ]);
    assert_eq!(custom_rows, ["0:210", "1:211", "1:212"]);

    // settings.json names the custom directory; the default root is missing and not warned about.
    let agent_dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        agent_dir.path().join("settings.json"),
        serde_json::json!({ "sessionDir": custom }).to_string(),
    )
    .expect("write");
    let output = rows(
        binary()
            .env("PI_CODING_AGENT_DIR", agent_dir.path())
            .args(["list", "--jsonl"]),
    );
    let kinds: Vec<&str> = output
        .iter()
        .map(|row| row["kind"].as_str().expect("kind"))
        .collect();
    assert_eq!(kinds, ["session", "session", "session"]);

    // A settings file that is not JSON is a warning, and the default root is still listed.
    std::fs::write(agent_dir.path().join("settings.json"), "{ nope").expect("write");
    let output = rows(
        binary()
            .env("PI_CODING_AGENT_DIR", agent_dir.path())
            .args(["list", "--jsonl"]),
    );
    let reasons: Vec<&str> = output
        .iter()
        .map(|row| row["reason"].as_str().expect("reason"))
        .collect();
    assert_eq!(reasons.len(), 2, "{output:?}");
    assert!(
        reasons[0].starts_with("sessions root not readable"),
        "{reasons:?}"
    );
    assert!(
        reasons[1].starts_with("settings file is not valid JSON"),
        "{reasons:?}"
    );
}

#[test]
fn cwd_filters() {
    assert_eq!(top(&["--cwd", "/repos/app"]), ["200", "206"]);
    assert_eq!(top(&["--cwd", "/repos/app/"]), ["200", "206"]);
    assert_eq!(top(&["--cwd-prefix", "/repos/app"]), ["200", "203", "206"]);
    assert_eq!(
        top(&["--cwd", "/repos/app", "--worktrees"]),
        ["200", "204", "206"]
    );
    assert_eq!(
        top(&["--cwd", "/repos/app", "--cwd", "/repos/application"]),
        ["200", "205", "206"]
    );
    assert_eq!(top(&["--cwd", "/repos/nothing"]), Vec::<String>::new());

    // --here and relative --cwd resolve against the current directory.
    let dir = tempfile::tempdir().expect("temp dir");
    let here = dir.path().canonicalize().expect("canonical");
    let store = here.join("store/--x--");
    std::fs::create_dir_all(&store).expect("mkdir");
    let header = |id: &str, cwd: &Path| {
        Header::new(id)
            .version(None)
            .timestamp("2026-01-01T00:00:00Z")
            .cwd(cwd.to_str().expect("UTF-8 temp dir"))
            .to_string()
    };
    std::fs::write(store.join("a.jsonl"), header("here-001", &here)).expect("write");
    std::fs::write(
        store.join("b.jsonl"),
        header("elsewhere-002", &here.join("sub")),
    )
    .expect("write");
    let list_here = |args: &[&str]| {
        ids_of(
            binary()
                .current_dir(&here)
                .args(["list", "--jsonl", "--sessions-root", "store"])
                .args(args),
        )
    };
    assert_eq!(list_here(&["--here"]), ["0:001"]);
    assert_eq!(list_here(&["--cwd", "."]), ["0:001"]);
    assert_eq!(list_here(&["--cwd", "sub"]), ["0:002"]);
    assert_eq!(list_here(&["--cwd-prefix", "."]), ["0:001", "0:002"]);
    // A leading `~` is expanded with $HOME, as Pi does.
    let with_home = |args: &[&str]| {
        ids_of(
            binary()
                .env("HOME", &here)
                .args(["list", "--jsonl", "--sessions-root"])
                .arg(here.join("store"))
                .args(args),
        )
    };
    assert_eq!(with_home(&["--cwd", "~"]), ["0:001"]);
    assert_eq!(with_home(&["--cwd", "~/sub"]), ["0:002"]);
}

#[test]
fn time_filters() {
    assert_eq!(top(&["--since", "2026-09-12"]), ["204", "205", "206"]);
    assert_eq!(
        top(&["--since", "2026-09-11", "--until", "2026-09-12"]),
        ["203", "204"]
    );
    assert_eq!(
        top(&["--until", "2026-09-30"]),
        ["200", "203", "204", "205", "206"]
    );
    assert_eq!(
        top(&[
            "--since",
            "2026-09-12T09:00:00Z",
            "--until",
            "2026-09-13T09:00:00Z"
        ]),
        ["204", "205"]
    );
    // A bare date is a local calendar day: 23:30 UTC on the 30th is October 1st at UTC+2.
    let at_plus_two = |args: &[&str]| {
        ids_of(
            binary()
                .env("TZ", "XXX-2")
                .args(["list", "--jsonl", "--max-depth", "0"])
                .args(args),
        )
    };
    assert_eq!(
        at_plus_two(&["--since", "2026-09-30", "--until", "2026-09-30"]),
        Vec::<String>::new()
    );
    assert_eq!(
        at_plus_two(&["--since", "2026-10-01", "--until", "2026-10-01"]),
        ["0:206"]
    );
    assert_eq!(
        at_plus_two(&["--since", "2026-09-13T11:00", "--until", "2026-09-13T11:00"]),
        ["0:205"]
    );
    // Ages count back from now: every fixture session is older than a week.
    assert_eq!(top(&["--since", "1w"]), Vec::<String>::new());
    assert_eq!(top(&["--until", "2h"]).len(), 5);
}

#[test]
fn bad_bounds_are_usage_errors_before_any_read() {
    for args in [
        &["--since", "2026-02-30"][..],
        &["--until", "next tuesday"],
        &["--since", "2026-09-12", "--until", "2026-09-11"],
        &["--limit", "0"],
        &["--limit", "-3"],
        &["--jsonl", "--unordered", "--limit", "2"],
        &["--sort", "size"],
    ] {
        // The root does not exist: an error before reading would not mention it.
        let output = run(binary()
            .args(["list", "--sessions-root", "/nonexistent"])
            .args(args));
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("/nonexistent"), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn bad_bounds_are_reported_before_the_store_is_even_resolved() {
    // With no $HOME and no --sessions-root, resolving the store fails with exit 1; a bad
    // bound must still be the error (exit 2), because it is checked first.
    let output = run(binary()
        .env_remove("HOME")
        .env_remove("PI_CODING_AGENT_DIR")
        .args(["list", "--since", "2026-02-30"]));
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--since"), "{stderr}");
    let output = run(binary()
        .env_remove("HOME")
        .env_remove("PI_CODING_AGENT_DIR")
        .args(["list"]));
    assert_eq!(
        output.status.code(),
        Some(1),
        "the control case fails on the store"
    );
}

#[test]
fn runs_hidden_by_max_depth_still_count() {
    let output = rows(binary().args(["list", "--jsonl", "--max-depth", "0", "--with-subagents"]));
    assert_eq!(output.len(), 1);
    assert_eq!(output[0]["nSubagents"], 1);
    let long = success(run(binary().args([
        "list",
        "--long",
        "--max-depth",
        "0",
        "--with-subagents",
    ])));
    assert!(long.contains("/repos/app  1  Flaky login"), "{long}");
}

#[test]
fn tree_filters() {
    assert_eq!(ids(&["--with-subagents"]), ["0:200", "1:201", "2:202"]);
    assert_eq!(
        ids(&["--with-subagents", "--max-depth", "1"]),
        ["0:200", "1:201"]
    );
    assert_eq!(
        ids(&["--max-depth", "0", "--cwd", "/repos/app"]),
        ["0:200", "0:206"]
    );
    let run_path = agent().join(
        "sessions/--repos-app--/2026-09-10T09-00-00-000Z_01990000-0000-7000-8000-000000000200/5f0c2a4e-1b7d-4c2a-9e3f-000000000001/run-0/session.jsonl",
    );
    let excluded = ids_of(binary().env("PI_SESSION_FILE", &run_path).args([
        "list",
        "--jsonl",
        "--exclude-current",
        "--cwd",
        "/repos/app",
    ]));
    assert_eq!(excluded, ["0:200", "0:206"]);
    // Without --exclude-current the variable changes nothing.
    let kept = ids_of(binary().env("PI_SESSION_FILE", &run_path).args([
        "list",
        "--jsonl",
        "--cwd",
        "/repos/app",
    ]));
    assert_eq!(kept, ["0:200", "1:201", "2:202", "0:206"]);
}

#[test]
fn ids_and_names() {
    assert_eq!(top(&["--id", "a1b2"]), ["203"]);
    assert_eq!(
        top(&[
            "--id",
            "a1b2",
            "--id",
            "01990000-0000-7000-8000-00000000020"
        ]),
        ["200", "203", "204", "205", "206"]
    );
    assert_eq!(top(&["--name", "FLAKY"]), ["200"]);
    assert_eq!(top(&["--name", "branch"]), ["204"]);
    assert_eq!(top(&["--name", "no such name"]), Vec::<String>::new());
    let named = rows(binary().args(["list", "--jsonl", "--name", "flaky", "--max-depth", "0"]));
    assert_eq!(named[0]["name"], "Flaky login");
    assert_eq!(named[0]["firstUserMessage"], "Fix the flaky login test");
}

#[test]
fn sorting_and_limits() {
    assert_eq!(
        top(&["--newest-first"]),
        ["206", "205", "204", "203", "200"]
    );
    assert_eq!(top(&["--newest-first", "--limit", "2"]), ["206", "205"]);
    assert_eq!(top(&["--limit", "2"]), ["200", "203"]);
    assert_eq!(top(&["--sort", "cwd"]), ["200", "206", "204", "203", "205"]);
    assert_eq!(top(&["--sort", "id"]), ["200", "204", "205", "206", "203"]);
    assert_eq!(
        top(&["--sort", "path", "--newest-first", "--limit", "1"]),
        ["205"]
    );
    // Children stay in launch order when the top level is reversed.
    assert_eq!(
        ids(&["--newest-first", "--with-subagents"]),
        ["0:200", "1:201", "2:202"]
    );
}

#[test]
fn jsonl_rows_and_streaming() {
    let output = rows(binary().args(["list", "--jsonl", "--with-subagents"]));
    assert_eq!(output[0]["parentPath"], Value::Null);
    assert_eq!(output[0]["nSubagents"], 1);
    assert_eq!(output[1]["parentPath"], output[0]["path"]);
    assert_eq!(output[2]["parentPath"], output[1]["path"]);
    assert_eq!(output[2]["depth"], 2);

    let mut ordered = ids(&["--include-archive"]);
    let mut unordered = ids(&["--include-archive", "--unordered"]);
    ordered.sort();
    unordered.sort();
    assert_eq!(ordered, unordered);
}

#[test]
fn json_is_the_filtered_contract_document() {
    let text = success(run(binary().args([
        "list",
        "--json",
        "--cwd",
        "/repos/app-fix",
    ])));
    let document: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(document["sessions"].as_array().map(Vec::len), Some(1));
    assert_eq!(document["warnings"], serde_json::json!([]));
    let keys: Vec<&String> = document["sessions"][0]
        .as_object()
        .expect("object")
        .keys()
        .collect();
    assert_eq!(keys.len(), 5);

    let schema: Value =
        serde_json::from_str(&success(run(binary().args(["schema", "list"])))).expect("schema");
    assert_eq!(
        schema["$defs"]["SessionMetadata"]["required"][4],
        "subagentSessions"
    );
}

#[test]
fn long_lines_and_colour() {
    let plain = success(run(binary().args([
        "list",
        "--long",
        "--cwd",
        "/repos/app",
    ])));
    let lines: Vec<&str> = plain.lines().collect();
    assert_eq!(lines.len(), 4, "{plain}");
    // Off a terminal: no header row, nothing cut, warnings on stderr.
    assert!(
        lines[0].starts_with(
            "2026-09-10 09:00  01990000-0000-7000-8000-000000000200  /repos/app  1  Flaky login"
        ),
        "{plain}"
    );
    assert!(lines[1].ends_with("↳ Run the test suite"), "{plain}");
    assert!(
        lines[3].ends_with("-  Late on the last day of September"),
        "{plain}"
    );
    assert!(!plain.contains('\u{1b}'), "no colour when not a terminal");

    let coloured = success(run(binary().args([
        "list",
        "--long",
        "--color",
        "always",
        "--cwd",
        "/repos/app",
    ])));
    assert!(
        coloured.contains("\u{1b}[1mFlaky login\u{1b}[0m"),
        "{coloured}"
    );
    // CLICOLOR_FORCE colours a pipe under `auto`, and NO_COLOR still wins over it.
    let forced = success(run(binary().env("CLICOLOR_FORCE", "1").args([
        "list",
        "--long",
        "--cwd",
        "/repos/app-fix",
    ])));
    assert!(
        forced.contains("\u{1b}[1mHotfix branch\u{1b}[0m"),
        "{forced}"
    );
    let never = success(run(binary()
        .env("CLICOLOR_FORCE", "1")
        .env("NO_COLOR", "1")
        .args(["list", "--long", "--color", "auto"])));
    assert!(!never.contains('\u{1b}'), "{never}");

    // Titles are one line, cut to the width, with controls and bidi overrides stripped.
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("--x--")).expect("mkdir");
    let body = format!(
        "{}\n{}\n",
        Header::new("s1")
            .version(None)
            .timestamp("2026-01-01T00:00:00Z")
            .cwd("/x"),
        Entry::message(Message::user("evil \u{1b}[31mred\u{1b}[0m\nsecond line \u{202e}reversed and a long tail that will not fit in sixty columns"))
            .id("a")
            .parent(None)
            .at("2026-01-01T00:00:00Z")
    );
    std::fs::write(dir.path().join("--x--/s.jsonl"), body).expect("write");
    let long = success(run(binary()
        .env("COLUMNS", "60")
        .args(["list", "--long", "--sessions-root"])
        .arg(dir.path())));
    let line = long.lines().next().expect("a line");
    // Not a terminal: COLUMNS does not cut a pipe.
    assert_eq!(
        line,
        "2026-01-01 00:00  s1  /x  -  evil red second line reversed and a long tail that will not fit in sixty columns"
    );
}

/// `--jsonl --unordered` streams a store of more trees than its
/// channel holds (64) to the end. Writing a streamed tree on the walk's own pool deadlocked:
/// every worker waited for the writer, and the writer for a worker.
#[test]
fn unordered_streams_a_store_larger_than_its_channel() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("--w--");
    std::fs::create_dir(&project).expect("mkdir");
    for index in 0..300 {
        let header = Header::new(&format!("s{index:04}"))
            .timestamp("2026-01-01T00:00:00Z")
            .cwd("/w");
        write_session_file(
            &project.join(format!("s{index:04}.jsonl")),
            &header,
            Vec::<String>::new(),
        );
    }
    for threads in ["1", "2"] {
        let mut child = binary()
            .args(["list", "--jsonl", "--unordered", "--threads", threads])
            .arg("--sessions-root")
            .arg(dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        let mut stdout = child.stdout.take().expect("stdout");
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut stdout, &mut text).expect("read");
            text
        });
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break Some(status);
            }
            if started.elapsed() > std::time::Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let text = reader.join().expect("reader");
        assert!(
            status.is_some_and(|status| status.success()),
            "{threads} threads: hung or failed"
        );
        assert_eq!(text.lines().count(), 300, "{threads} threads");
    }
}
