//! `pi-retrospect search` end to end on the files the real Pi wrote: exit codes as
//! ripgrep's, the output modes, the opt-in scopes, and the JSON document against its schema.

use crate::common;

use std::path::{Path, PathBuf};

use common::{binary, stdout_of};
use pi_retrospect_testkit::{Block, Entry, Header, Message, Store};
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
    // An empty pattern would match every text: refused, as `inspect search` refuses it.
    let empty = run(&[""]);
    assert_eq!(empty.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&empty.stderr).contains("PATTERN: must not be empty"),
        "{}",
        String::from_utf8_lossy(&empty.stderr)
    );
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
    // Case rules: smart case unless -s or -i; -S, the old spelling of smart case, is kept.
    assert_eq!(run(&["enoent", "--tool-results"]).status.code(), Some(0));
    assert_eq!(
        run(&["enoent", "--tool-results", "-s"]).status.code(),
        Some(1)
    );
    assert_eq!(
        run(&["Enoent", "--tool-results", "-i"]).status.code(),
        Some(0)
    );
    assert_eq!(
        run(&["enoent", "--tool-results", "-s", "-S"]).status.code(),
        Some(0)
    );
    assert_eq!(run(&["Enoent", "--tool-results"]).status.code(), Some(1));
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

/// The progress line is for a terminal only; a stderr that is a pipe gets no
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

/// One session holding every kind of searchable text, each entry's text chosen so that a
/// pattern reaches it only through its kind (and case).
fn every_kind_session() -> Vec<String> {
    let mut lines = vec![Header::new("every-kind").to_string()];
    let mut parent: Option<String> = None;
    let mut push = |entry: Entry, id: &str| {
        let second = lines.len() % 10;
        lines.push(
            entry
                .id(id)
                .parent(parent.as_deref())
                .at(&format!("2026-01-01T00:00:0{second}.000Z"))
                .to_string(),
        );
        parent = Some(id.to_owned());
    };
    let message = |message: Message| Entry::message(message.timestamp(1));
    let failed = |error: &str| {
        Message::assistant(&[])
            .provider("p")
            .model("m")
            .stop_reason("error")
            .error_message(error)
    };
    push(
        message(
            Message::with_role("system")
                .text_member("content", "Policy: never run a command that pushes"),
        ),
        "sys",
    );
    push(
        message(Message::user("the db says connect ECONNREFUSED 127.0.0.1")),
        "u1",
    );
    push(
        message(
            Message::assistant(&[
                Block::thinking("Maybe econnrefused means the db is down"),
                Block::text("I will check the db port"),
                Block::tool_call(
                    "c1",
                    "bash",
                    r#"{"command":"curl localhost:5432","timeout":30}"#,
                ),
            ])
            .provider("p")
            .model("m")
            .stop_reason("toolUse"),
        ),
        "a1",
    );
    push(
        message(
            Message::tool_result("c1", "bash", "curl: (7) connect ECONNREFUSED").is_error(true),
        ),
        "t1",
    );
    push(
        message(failed("429 Too Many Requests: rate limit reached")),
        "e1",
    );
    push(
        message(failed("Overloaded: the server is overloaded")),
        "e2",
    );
    push(
        message(
            Message::bash_execution("pg_ctl start", "server started; Econnrefused gone", Some(0))
                .truncated(false),
        ),
        "b1",
    );
    push(
        Entry::compaction("Fixed the ECONNREFUSED by starting the db", "b1", 10),
        "k1",
    );
    push(
        Entry::branch_summary("u1", "An abandoned try at a rate limit retry"),
        "bs1",
    );
    push(
        Entry::custom_message("note", "extension says: command done", true),
        "cm1",
    );
    push(Entry::label("b1", Some("db fix")), "l1");
    push(Entry::session_info("db connection trouble"), "n1");
    lines
}

/// Returns the distinct entry ids in `items[*][field]`, sorted.
fn entry_ids(document: &Value, items: &str, field: &str) -> Vec<String> {
    let mut ids: Vec<String> = document[items]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item[field].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids.dedup();
    ids
}

/// `search`, `inspect … search` and `entries --grep` look in the same texts with the same
/// case rule and flags, so the same pattern finds the same entries in each.
#[test]
fn the_three_searching_commands_find_the_same_entries() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = Store::at(dir.path()).write(
        "--p--/2026-01-01T00-00-00-000Z_every-kind.jsonl",
        every_kind_session(),
    );
    let root = dir.path().to_str().expect("utf-8");
    let path = path.to_str().expect("utf-8");
    // Each command exits 1 when nothing matched (its document printed all the same), 0 when
    // something did: the three agree on that too.
    let found_in = |args: &[&str], list: &str, key: &str| -> Vec<String> {
        let output = binary().args(args).output().expect("run");
        let ids = entry_ids(
            &serde_json::from_slice(&output.stdout).expect("JSON"),
            list,
            key,
        );
        assert_eq!(
            output.status.code(),
            Some(i32::from(ids.is_empty())),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        ids
    };
    let json = |args: &[&str]| -> Value {
        let output = binary().args(args).output().expect("run");
        assert!(
            output.status.code().is_some_and(|code| code <= 1),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).expect("JSON")
    };
    let all = ["--thinking", "--tool-args", "--tool-results", "--system"];
    let flag_sets: [&[&str]; 9] = [
        &[],
        &["--thinking"],
        &["--tool-args"],
        &["--tool-results"],
        &["--system"],
        &["-s"],
        &["-i"],
        &["--case-sensitive", "--tool-results"],
        &all,
    ];
    for (pattern, expected_by_default) in [
        // A lower-case pattern ignores case (smart case).
        ("econnrefused", &["b1", "k1", "u1"][..]),
        ("ECONNREFUSED", &["k1", "u1"]),
        // An API error is searched by default.
        ("rate limit", &["bs1", "e1"]),
        ("overloaded", &["e2"]),
        ("Overloaded", &["e2"]),
        // `command` is a tool-call argument's key: never a text.
        ("command", &["cm1"]),
        ("curl", &[]),
        ("5432", &[]),
        ("30", &[]),
        ("db", &["a1", "k1", "l1", "n1", "u1"]),
        ("policy", &[]),
    ] {
        for flags in flag_sets {
            let mut search_args = vec!["search", pattern, "--sessions-root", root];
            search_args.extend(["--session", path, "--json"]);
            search_args.extend(flags);
            let from_search = found_in(&search_args, "hits", "entryId");
            let mut inspect_args = vec!["inspect", path, "--sessions-root", root];
            inspect_args.extend(["search", pattern, "--json", "--limit", "50"]);
            inspect_args.extend(flags);
            let from_inspect = found_in(&inspect_args, "hits", "entryId");
            let mut entries_args = vec!["entries", path, "--sessions-root", root];
            entries_args.extend(["--grep", pattern, "--json"]);
            entries_args.extend(flags);
            let from_entries = found_in(&entries_args, "entries", "id");
            assert_eq!(from_search, from_inspect, "{pattern:?} {flags:?}: inspect");
            assert_eq!(from_search, from_entries, "{pattern:?} {flags:?}: entries");
            if flags.is_empty() {
                assert_eq!(from_search, expected_by_default, "{pattern:?}");
            }
        }
    }
    // A role filter holds each text to its role in Pi's context in `search` and `entries`
    // alike: a custom message is `custom`, a compaction `compactionSummary`, its system
    // checkpoint `system`.
    for (pattern, roles) in [
        ("command", &["--role", "custom"][..]),
        ("db", &["--role", "compactionSummary"]),
        ("rate limit", &["--role", "branchSummary"]),
        ("policy", &["--role", "system", "--system"]),
        ("db", &["--role", "user", "--role", "custom"]),
    ] {
        let mut search_args = vec!["search", pattern, "--sessions-root", root];
        search_args.extend(["--session", path, "--json"]);
        search_args.extend(roles);
        let mut entries_args = vec!["entries", path, "--sessions-root", root];
        entries_args.extend(["--grep", pattern, "--json"]);
        entries_args.extend(roles);
        let from_search = found_in(&search_args, "hits", "entryId");
        assert!(
            !from_search.is_empty() || pattern == "policy",
            "{pattern:?} {roles:?}"
        );
        assert_eq!(
            from_search,
            found_in(&entries_args, "entries", "id"),
            "{pattern:?} {roles:?}"
        );
    }
    // The opt-in kinds each add their entries.
    let found = |pattern: &str, flags: &[&str]| {
        let mut args = vec!["search", pattern, "--sessions-root", root, "--json"];
        args.extend(flags);
        entry_ids(&json(&args), "hits", "entryId")
    };
    assert_eq!(found("maybe econnrefused", &["--thinking"]), ["a1"]);
    assert_eq!(found("curl localhost", &["--tool-args"]), ["a1"]);
    assert_eq!(found("curl: (7)", &["--tool-results"]), ["t1"]);
    assert_eq!(found("policy", &["--system"]), ["sys"]);
    assert_eq!(found("econnrefused", &["-s"]), Vec::<String>::new());
    assert_eq!(found("Econnrefused", &["-s"]), ["b1"]);
}

/// A searching command exits 1 only when nothing matched: a file that is not a session is
/// an error, 2, from each of the three.
#[test]
fn a_search_that_could_not_look_exits_two() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("notes.jsonl");
    std::fs::write(&path, "hello\n").expect("write");
    let path = path.to_str().expect("utf-8");
    let root = dir.path().to_str().expect("utf-8");
    for args in [
        &["search", "x", "--sessions-root", root, "--session", path][..],
        &["entries", path, "--grep", "x"],
        &["inspect", path, "search", "x"],
    ] {
        let output = binary().args(args).output().expect("run");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("not a session file"),
            "{args:?}"
        );
    }
    // Without a search, the same file is the failure it always was.
    let output = binary().args(["entries", path]).output().expect("run");
    assert_eq!(output.status.code(), Some(1));
}

/// The three searching commands keep the same line cap (`$PI_RETROSPECT_MAX_LINE`): a line
/// over it is found by none of them, one under it by all three.
#[test]
fn the_three_searches_keep_one_line_cap() {
    let dir = tempfile::tempdir().expect("temp dir");
    let long = format!("zqhead {} zqtail", "x".repeat(4096));
    let lines = vec![
        Entry::message(Message::user(&long))
            .id("u1")
            .parent(None)
            .at("2026-01-01T00:00:01.000Z"),
    ];
    let path = Store::at(dir.path()).write_session(&Header::new("cap"), lines);
    let path = path.to_str().expect("utf-8");
    let root = dir.path().to_str().expect("utf-8");
    for (cap, expected) in [("1K", 1), ("1M", 0)] {
        for args in [
            &["search", "zqtail", "--sessions-root", root, "--count"][..],
            &["entries", path, "--grep", "zqtail"],
            &["inspect", path, "search", "zqtail"],
        ] {
            let output = binary()
                .args(args)
                .env("PI_RETROSPECT_MAX_LINE", cap)
                .output()
                .expect("run");
            assert_eq!(output.status.code(), Some(expected), "{cap} {args:?}");
        }
    }
}
