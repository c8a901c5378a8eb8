//! Everyday flows and tool-wide conventions, end to end: last activity, time
//! values, `latest`, `--jsonl` rows, `--id` on runs, shared store flags, `--long` on a
//! terminal, usage messages, completions and a full disk.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common;
use common::{binary, stdout_of};
use pi_retrospect_testkit::{
    Block, Entry, Header, Message, Usage, append_jsonl, write_session_file,
};

fn agent() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/agent")
        .canonicalize()
        .expect("fixtures exist")
}

fn run(command: &mut Command) -> Output {
    command.output().expect("run binary")
}

fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn rows(output: &Output) -> Vec<Value> {
    stdout_of(output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect()
}

/// A temporary store of sessions `(name, id, cwd, start, last entry)`, in one project.
struct Store {
    dir: tempfile::TempDir,
}

impl Store {
    fn new(sessions: &[(&str, &str, &str, &str, &str)]) -> Store {
        let dir = tempfile::tempdir().expect("temp dir");
        let project = dir.path().join("sessions/--w--");
        for (name, id, cwd, start, last) in sessions {
            let cwd = cwd.replace("[TMP]", &dir.path().display().to_string());
            let header = Header::new(id).timestamp(start).cwd(&cwd);
            let first = Entry::message(Message::user(&format!("first of {id}")).timestamp(0))
                .id("e1")
                .parent(None)
                .at(start);
            let last = Entry::message(Message::assistant(&[Block::text("ok")]).timestamp(0))
                .id("e2")
                .parent(Some("e1"))
                .at(last);
            write_session_file(
                &project.join(format!("{name}.jsonl")),
                &header,
                [first, last],
            );
        }
        Store { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("sessions")
    }

    fn list(&self, args: &[&str]) -> Output {
        run(binary()
            .env("TZ", "UTC")
            .arg("list")
            .arg("--sessions-root")
            .arg(self.root())
            .args(args))
    }

    fn ids(&self, args: &[&str]) -> Vec<String> {
        rows(&self.list(&[&["--jsonl"], args].concat()))
            .iter()
            .filter(|row| row["kind"] == "session")
            .map(|row| row["id"].as_str().expect("id").to_owned())
            .collect()
    }
}

fn week() -> Store {
    Store::new(&[
        // Started Monday, continued Wednesday.
        (
            "a",
            "monday",
            "/w",
            "2026-03-02T09:00:00Z",
            "2026-03-04T17:00:00Z",
        ),
        (
            "b",
            "tuesday",
            "/w",
            "2026-03-03T09:00:00Z",
            "2026-03-03T10:00:00Z",
        ),
        (
            "c",
            "wednesday",
            "/w",
            "2026-03-04T09:00:00Z",
            "2026-03-04T09:30:00Z",
        ),
    ])
}

#[test]
fn last_activity_filters_and_sorts() {
    let store = week();
    let check = |args: &[&str], expected: &[&str]| {
        assert_eq!(store.ids(args), expected, "{args:?}");
    };
    // What was I working on on Wednesday? The session started on Monday too.
    check(
        &[
            "--active-since",
            "2026-03-04",
            "--active-until",
            "2026-03-04",
        ],
        &["monday", "wednesday"],
    );
    check(&["--since", "2026-03-04"], &["wednesday"]);
    check(&["--active-until", "2026-03-02"], &["monday"]);
    check(&["--sort", "activity"], &["tuesday", "wednesday", "monday"]);
    check(
        &["--sort", "activity", "--newest-first", "--limit", "1"],
        &["monday"],
    );
    let output = store.list(&[
        "--active-since",
        "2026-03-05",
        "--active-until",
        "2026-03-04",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr_of(&output)
            .contains("--active-until: 2026-03-04T23:59:59.999Z is before --active-since ("),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn jsonl_rows_always_carry_what_long_shows() {
    let store = week();
    let rows = rows(&store.list(&["--jsonl", "--id", "monday"]));
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row["lastActivity"], "2026-03-04T17:00:00.000Z");
    assert_eq!(row["firstUserMessage"], "first of monday");
    assert_eq!(row["name"], Value::Null);
    assert_eq!(row["nSubagents"], 0);
    let mut keys: Vec<&str> = row
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "cwd",
            "depth",
            "firstUserMessage",
            "id",
            "kind",
            "lastActivity",
            "nSubagents",
            "name",
            "parentPath",
            "path",
            "timestamp"
        ]
    );
    // The streaming form carries the same.
    let streamed = self::rows(&store.list(&["--jsonl", "--unordered", "--id", "monday"]));
    assert_eq!(streamed, rows);
    // --long shows the last activity after the start.
    let long = stdout_of(&store.list(&["--long", "--id", "monday"]));
    assert!(long.starts_with("2026-03-02 09:00→03-04  monday"), "{long}");
}

#[test]
fn time_values_people_type() {
    let store = week();
    for value in [
        "1y",
        "6MO",
        "3D",
        "2 weeks",
        "today",
        "YESTERDAY",
        "now",
        "90min",
    ] {
        let output = store.list(&["--json", "--since", value]);
        assert!(output.status.success(), "{value}: {}", stderr_of(&output));
    }
    for value in ["1x", "last week", "3M"] {
        let output = store.list(&["--since", value]);
        assert_eq!(output.status.code(), Some(2), "{value}");
        let stderr = stderr_of(&output);
        assert!(stderr.starts_with("pi-retrospect: --since: "), "{stderr}");
        assert!(
            stderr.contains("yesterday") || stderr.contains("ambiguous"),
            "{value}: {stderr}"
        );
        assert!(!stderr.contains("failed to parse"), "{value}: {stderr}");
    }
}

#[test]
fn latest_skips_the_running_session_climbs_and_goes_back() {
    let store = Store::new(&[
        (
            "a",
            "oldest",
            "[TMP]/repo",
            "2026-03-01T00:00:00Z",
            "2026-03-01T00:00:00Z",
        ),
        (
            "b",
            "older",
            "[TMP]/repo",
            "2026-03-02T00:00:00Z",
            "2026-03-02T00:00:00Z",
        ),
        (
            "c",
            "running",
            "[TMP]/repo",
            "2026-03-03T00:00:00Z",
            "2026-03-03T00:00:00Z",
        ),
        (
            "d",
            "elsewhere",
            "[TMP]/other",
            "2026-03-04T00:00:00Z",
            "2026-03-04T00:00:00Z",
        ),
    ]);
    let sub = store.dir.path().join("repo/crates/deep");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let running = store.root().join("--w--/c.jsonl");
    let latest = |session: &str, current: &Path, running: Option<&Path>| {
        let mut command = binary();
        command
            .args(["entries", session, "--json", "--sessions-root"])
            .arg(store.root())
            .current_dir(current);
        if let Some(running) = running {
            command.env("PI_SESSION_FILE", running);
        }
        run(&mut command)
    };
    let id_of = |output: &Output| {
        let document: Value = serde_json::from_str(&stdout_of(output)).expect("json");
        document["sessionId"].as_str().expect("id").to_owned()
    };
    let repo = store.dir.path().join("repo");
    let check = |session: &str, current: &Path, running: Option<&Path>, expected: &str| {
        assert_eq!(
            id_of(&latest(session, current, running)),
            expected,
            "{session}"
        );
    };
    check("latest", &repo, None, "running");
    check("latest", &repo, Some(&running), "older");
    check("latest~1", &repo, Some(&running), "oldest");
    check("latest~0", &repo, None, "running");
    check("latest~2", &repo, None, "oldest");
    // From a subdirectory: the nearest directory above with sessions, said on stderr.
    let output = latest("latest", &sub, None);
    assert_eq!(id_of(&output), "running");
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("pi-retrospect: note: latest: no session ran in ")
            && stderr.contains("/repo/crates/deep; using ")
            && stderr
                .trim_end()
                .ends_with("/repo, the nearest directory above it with sessions"),
        "{stderr}"
    );
    let output = latest("latest~3", &repo, None);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr_of(&output).contains("latest~3: only 3 sessions ran in "),
        "{}",
        stderr_of(&output)
    );
    let output = latest("latest~x", &repo, None);
    assert_eq!(output.status.code(), Some(2));
}

/// `latest` is the most recently active session (its newest
/// entry, never the file's mtime), as Pi's `--continue` picks the session last written;
/// `latest~N` goes back in the same order, ties going to the later start.
#[test]
fn latest_is_the_most_recently_active_session() {
    let store = Store::new(&[
        // Started first, resumed last.
        (
            "a",
            "resumed",
            "[TMP]/repo",
            "2026-03-01T00:00:00Z",
            "2026-03-09T00:00:00Z",
        ),
        (
            "b",
            "started-last",
            "[TMP]/repo",
            "2026-03-05T00:00:00Z",
            "2026-03-05T01:00:00Z",
        ),
        // Last active when `b` was, started earlier: the tie goes to `b`.
        (
            "c",
            "tied",
            "[TMP]/repo",
            "2026-03-04T00:00:00Z",
            "2026-03-05T01:00:00Z",
        ),
        (
            "d",
            "quiet",
            "[TMP]/repo",
            "2026-03-02T00:00:00Z",
            "2026-03-02T00:00:00Z",
        ),
    ]);
    let repo = store.dir.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    // A modification time is not activity: the quiet session touched into the future stays
    // last.
    std::fs::File::options()
        .append(true)
        .open(store.root().join("--w--/d.jsonl"))
        .expect("open")
        .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(86_400 * 365))
        .expect("set mtime");
    let id_of = |session: &str, running: Option<&Path>| {
        let mut command = binary();
        command
            .args(["handoff", session, "--json", "--sessions-root"])
            .arg(store.root())
            .current_dir(&repo);
        if let Some(running) = running {
            command.env("PI_SESSION_FILE", running);
        }
        let document: Value = serde_json::from_str(&stdout_of(&run(&mut command))).expect("json");
        document["source"]["sessionId"]
            .as_str()
            .expect("id")
            .to_owned()
    };
    for (session, expected) in [
        ("latest", "resumed"),
        ("latest~1", "started-last"),
        ("latest~2", "tied"),
        ("latest~3", "quiet"),
    ] {
        assert_eq!(id_of(session, None), expected, "{session}");
    }
    // The running session is left out of the same order.
    let running = store.root().join("--w--/a.jsonl");
    assert_eq!(id_of("latest", Some(&running)), "started-last");
    assert_eq!(id_of("latest~1", Some(&running)), "tied");
    // `list --here --sort activity` ends with the same session.
    let listed = store.ids(&["--cwd", &repo.display().to_string(), "--sort", "activity"]);
    assert_eq!(listed.last().map(String::as_str), Some("resumed"));
}

/// `$PI_SESSION_FILE` names the running session by file, not
/// by text: through a symlinked directory, a relative path or `..`, `latest` still skips it
/// and `list --exclude-current` still leaves it out.
#[test]
fn the_running_session_is_recognised_through_links_and_relative_paths() {
    let store = Store::new(&[
        (
            "a",
            "older",
            "[TMP]/repo",
            "2026-03-01T00:00:00Z",
            "2026-03-01T00:00:00Z",
        ),
        (
            "b",
            "running",
            "[TMP]/repo",
            "2026-03-02T00:00:00Z",
            "2026-03-02T00:00:00Z",
        ),
    ]);
    let repo = store.dir.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    let link = store.dir.path().join("link");
    std::os::unix::fs::symlink(store.root(), &link).expect("symlink");
    let spellings = [
        link.join("--w--/b.jsonl").display().to_string(),
        "../sessions/--w--/b.jsonl".to_owned(),
        "./../link/--w--/../--w--/b.jsonl".to_owned(),
    ];
    for running in &spellings {
        let output = run(binary()
            .args(["show", "latest", "--json", "--sessions-root"])
            .arg(store.root())
            .env("PI_SESSION_FILE", running)
            .current_dir(&repo));
        let document: Value = serde_json::from_str(&stdout_of(&output)).expect("json");
        assert_eq!(document["sessionId"], "older", "{running}");
        let listed = rows(&run(binary()
            .args([
                "list",
                "--here",
                "--exclude-current",
                "--jsonl",
                "--sessions-root",
            ])
            .arg(store.root())
            .env("PI_SESSION_FILE", running)
            .current_dir(&repo)))
        .iter()
        .map(|row| row["id"].as_str().expect("id").to_owned())
        .collect::<Vec<_>>();
        assert_eq!(listed, ["older"], "{running}");
    }
    // The store read through the link, the variable through the real path.
    let listed = rows(&run(binary()
        .args(["list", "--exclude-current", "--jsonl", "--sessions-root"])
        .arg(&link)
        .env("PI_SESSION_FILE", store.root().join("--w--/b.jsonl"))))
    .iter()
    .map(|row| row["id"].as_str().expect("id").to_owned())
    .collect::<Vec<_>>();
    assert_eq!(listed, ["older"]);
}

#[test]
fn id_finds_runs_with_their_ancestors() {
    let output = run(binary()
        .args([
            "list",
            "--jsonl",
            "--id",
            "01990000-0000-7000-8000-000000000202",
        ])
        .env("PI_CODING_AGENT_DIR", agent()));
    let ids: Vec<String> = rows(&output)
        .iter()
        .map(|row| format!("{}:{}", row["depth"], row["id"].as_str().expect("id")))
        .collect();
    assert_eq!(
        ids,
        [
            "0:01990000-0000-7000-8000-000000000200",
            "1:01990000-0000-7000-8000-000000000201",
            "2:01990000-0000-7000-8000-000000000202"
        ]
    );
}

#[test]
fn reading_commands_take_the_list_store_flags() {
    // An archived session opens by id with --include-archive, and only with it.
    let archived = |extra: &[&str]| {
        run(binary()
            .env("PI_CODING_AGENT_DIR", agent())
            .args(["entries", "01990000-0000-7000-8000-000000000220", "--jsonl"])
            .args(extra))
    };
    let not_found = archived(&[]);
    assert_eq!(not_found.status.code(), Some(2));
    // The error says the archive holds it.
    let stderr = stderr_of(&not_found);
    assert!(
        stderr.contains("\npi-retrospect: note: the archive ")
            && stderr.contains(
                "/sessions-archive holds 1 session with that id or prefix; add \
                 --include-archive to search it too"
            ),
        "{stderr}"
    );
    // An id that the archive does not hold either gets no such hint.
    let output = run(binary()
        .env("PI_CODING_AGENT_DIR", agent())
        .args(["show", "0000dead"]));
    assert_eq!(output.status.code(), Some(2));
    assert!(
        !stderr_of(&output).contains("archive"),
        "{}",
        stderr_of(&output)
    );
    let output = archived(&["--include-archive"]);
    let rows = rows(&output);
    assert_eq!(rows[0]["text"], "Archived long ago");
    for command in ["show", "inspect", "entries", "list"] {
        let help = stdout_of(&run(binary().args([command, "--help"])));
        for flag in ["--sessions-root", "--session-dir", "--include-archive"] {
            assert!(help.contains(flag), "{command} --help lacks {flag}");
        }
    }
}

#[test]
fn store_flags_expand_tilde_and_hint_at_the_layout() {
    let store = week();
    let home = store.dir.path();
    let output =
        run(binary()
            .env("HOME", home)
            .args(["list", "--jsonl", "--sessions-root=~/sessions"]));
    assert_eq!(rows(&output).len(), 3);
    let output = run(binary().env("HOME", home).args([
        "entries",
        "tuesday",
        "--jsonl",
        "--sessions-root=~/sessions",
    ]));
    assert!(output.status.success(), "{}", stderr_of(&output));

    // A project directory as the sessions root: nothing listed, and a hint.
    let output = run(binary()
        .arg("list")
        .arg("--sessions-root")
        .arg(store.root().join("--w--")));
    assert_eq!(stdout_of(&output), "Sessions (0)\n");
    let stderr = stderr_of(&output);
    assert!(
        stderr.starts_with("pi-retrospect: note: ")
            && stderr.contains("looks like a project directory")
            && stderr.contains(&format!("--sessions-root {}", store.root().display())),
        "{stderr}"
    );
    let output = run(binary()
        .args(["list", "-q", "--sessions-root"])
        .arg(store.root().join("--w--")));
    assert_eq!(stderr_of(&output), "");
    // The same hint when a reading command finds nothing there.
    let output = run(binary()
        .args(["show", "tuesday", "--sessions-root"])
        .arg(store.root().join("--w--")));
    assert_eq!(output.status.code(), Some(2));
    // A note an error carries is written as every note is (it was once `hint: …`).
    let stderr = stderr_of(&output);
    assert!(
        stderr.starts_with("pi-retrospect: no session has the id")
            && stderr.contains("\npi-retrospect: note: ")
            && stderr.contains("looks like a project directory")
            && !stderr.contains("hint:"),
        "{stderr}"
    );
}

#[test]
fn usage_messages() {
    let check = |args: &[&str], fragment: &str| {
        let output = run(binary().args(args));
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr_of(&output).contains(fragment),
            "{args:?}: {}",
            stderr_of(&output)
        );
    };
    check(
        &["list", "--threads", "0"],
        "--threads must be at least 1 (leave it out for one thread per core)",
    );
    // One rule and one message for --limit in every command.
    for args in [
        &["list", "--limit", "0"][..],
        &["list", "--limit", "-3"],
        &["search", "x", "--limit", "0"],
        &["entries", "latest", "--limit", "0"],
        &["inspect", "latest", "search", "x", "--limit", "0"],
    ] {
        check(args, "must be at least 1, not ");
        check(args, "(leave --limit out for no limit)");
    }
    check(
        &["search", "x", "-m", "0"],
        "(leave --max-count out for no limit)",
    );
    check(
        &["inspect", "latest", "search", "x", "--limit", "51"],
        "must be at most 50 a page, not 51",
    );
    check(&["list", "--id", ""], "--id: needs a non-empty prefix");
    // One rule for an empty filter value: refused, naming the flag, never read as "any"
    // (`--name ""` listed every named session).
    let file = pi_real_session("01a22b41-c0ec");
    let file = file.to_str().expect("utf-8");
    for (args, message) in [
        (&["list", "--name", ""][..], "--name: needs non-empty text"),
        (&["stats", "--name", ""], "--name: needs non-empty text"),
        (
            &["entries", file, "--entry", ""],
            "--entry: needs an entry id or a line:N handle",
        ),
        (
            &["entries", file, "--parent", ""],
            "--parent: needs an entry id or a line:N handle",
        ),
        // Search's own filters too.
        (&["search", "x", "--tool", ""], "--tool <NAME>"),
        (&["search", "x", "--model", ""], "--model <MODEL>"),
    ] {
        check(args, message);
    }
    // `--unordered` means something only with `--jsonl`; with another format it is refused,
    // not ignored (clap's `requires` gives way to the format group).
    for format in ["-l", "--long", "--json"] {
        check(
            &["list", "--unordered", format],
            "--unordered needs --jsonl",
        );
    }
    check(&["list", "--unordered"], "--jsonl");
}

/// Returns the committed real-Pi session file whose name holds `id`.
fn pi_real_session(id: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/pi-real/sessions/--tmp-pi-real-fixture-home-user-project--")
        .canonicalize()
        .expect("fixtures exist");
    std::fs::read_dir(&dir)
        .expect("read fixtures")
        .map(|entry| entry.expect("entry").path())
        .find(|path| {
            path.extension().is_some_and(|ext| ext == "jsonl")
                && path.to_string_lossy().contains(id)
        })
        .expect("the fixture session")
}

/// `stats --session PATH` reads the file and the runs
/// beside it with no store to walk, as show, search and handoff do.
#[test]
fn stats_of_a_session_path_needs_no_store() {
    let home = tempfile::tempdir().expect("temp dir");
    let file = pi_real_session("01a22b41-c0ec");
    let report = |store: &[&str]| -> Value {
        let output = run(binary()
            .env("HOME", home.path())
            .args(["stats", "--by", "session", "--json", "--session"])
            .arg(&file)
            .args(store));
        serde_json::from_str(&stdout_of(&output)).expect("JSON")
    };
    let alone = report(&[]);
    let sessions = file.parent().and_then(Path::parent).expect("store");
    let in_store = report(&["--sessions-root", sessions.to_str().expect("utf-8")]);
    // The session and its three runs, counted as with the store.
    assert_eq!(alone["rows"].as_array().map(Vec::len), Some(4), "{alone}");
    assert_eq!(alone["rows"], in_store["rows"]);
    assert_eq!(alone["total"], in_store["total"]);
    // A directory is refused with the reading commands' words.
    let output = run(binary()
        .env("HOME", home.path())
        .args(["stats", "--session"])
        .arg(sessions));
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr_of(&output).contains("cannot open session file ")
            && stderr_of(&output).contains(": is a directory, not a regular file"),
        "{}",
        stderr_of(&output)
    );
}

/// `stats --by session` shows each id by a prefix
/// unique in the store, not only among the rows a filter kept, so it is a handle `show` takes.
#[test]
fn stats_ids_are_handles_in_the_store() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("sessions/--w--");
    for (n, cwd) in [(1, "/a"), (2, "/b")] {
        let id = format!("0199aaaa-bbbb-7000-8000-00000000000{n}");
        let start = format!("2026-03-0{n}T09:00:00Z");
        let header = Header::new(&id).timestamp(&start).cwd(cwd);
        let answer = Message::assistant(&[Block::text("ok")])
            .usage(Usage::tokens(10, 5).cost_total_only(0.01))
            .timestamp(0);
        let lines = [
            Entry::message(Message::user("hi").timestamp(0))
                .id("e1")
                .parent(None)
                .at(&start),
            Entry::message(answer)
                .id("e2")
                .parent(Some("e1"))
                .at(&start),
        ];
        write_session_file(&project.join(format!("{n}.jsonl")), &header, lines);
    }
    let root = dir.path().join("sessions");
    let output = run(binary()
        .args(["stats", "--cwd", "/a", "--by", "session", "--sessions-root"])
        .arg(&root));
    let text = stdout_of(&output);
    let shown = text
        .lines()
        .nth(1)
        .and_then(|line| line.split_whitespace().next())
        .expect("a session row")
        .to_owned();
    assert_eq!(shown, "0199aaaa-bbbb-7000-8000-000000000001", "{text}");
    let output = run(binary()
        .args(["show", &shown, "--sessions-root"])
        .arg(&root));
    assert!(output.status.success(), "{}", stderr_of(&output));
}

/// `show` titles each run it launched as `list` does,
/// by its name when it has one, else its first task; `--json` gives both.
#[test]
fn show_titles_runs_as_list_does() {
    let file = pi_real_session("01a22b41-c0ec");
    let output = run(binary().arg("show").arg(&file));
    let text = stdout_of(&output);
    let fork = text
        .lines()
        .find(|line| line.contains("/forks/") && line.contains("01a22b41-c1dd"))
        .expect("the fork's run line");
    assert!(fork.ends_with("\"Explore the demo project\""), "{fork}");
    let output = run(binary().arg("show").arg(&file).arg("--json"));
    let document: Value = serde_json::from_str(&stdout_of(&output)).expect("JSON");
    let run = document["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .find(|run| {
            run["path"]
                .as_str()
                .is_some_and(|path| path.contains("/forks/"))
        })
        .expect("the fork");
    assert_eq!(run["name"], "Explore the demo project");
    assert!(
        run["firstTask"]
            .as_str()
            .is_some_and(|task| task.starts_with("What is in this project?")),
        "{run}"
    );
    let unnamed = document["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .find(|run| {
            run["path"]
                .as_str()
                .is_some_and(|path| path.ends_with("run-0/session.jsonl"))
        })
        .expect("run-0");
    assert_eq!(unnamed["name"], Value::Null);
}

#[test]
fn long_warnings_go_to_stderr_unless_quiet() {
    let store = week();
    std::fs::write(store.root().join("--w--/broken.jsonl"), "not json\n").expect("write");
    let output = store.list(&["--long"]);
    let text = stdout_of(&output);
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(!text.contains("broken"), "{text}");
    let stderr = stderr_of(&output);
    assert!(
        stderr.starts_with("pi-retrospect: warning: ")
            && stderr.contains("broken.jsonl: first line is not valid JSON"),
        "{stderr}"
    );
    assert_eq!(stderr_of(&store.list(&["--long", "--quiet"])), "");
    // The documents keep their warnings.
    assert!(stdout_of(&store.list(&["-q"])).contains("Warnings (1)"));
}

/// `--long` on a terminal (through `script`, which gives the command a pseudo-terminal):
/// a header row, and no line wider than COLUMNS.
#[test]
fn long_fits_the_terminal() {
    let store = week();
    let command = format!(
        "{} list --long --color never --sessions-root '{}'",
        env!("CARGO_BIN_EXE_pi-retrospect"),
        store.root().display()
    );
    let output = run(Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env("COLUMNS", "50")
        .env("TZ", "UTC")
        .env("HOME", "/nonexistent-home-for-tests")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("PI_CODING_AGENT_DIR"));
    let text = stdout_of(&output).replace('\r', "");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with("WHEN "), "{text}");
    for heading in ["ID", "CWD", "RUNS", "TITLE"] {
        assert!(lines[0].contains(heading), "{text}");
    }
    for line in &lines {
        assert!(line.chars().count() <= 50, "{line:?}");
    }
    assert!(lines[1].ends_with('…'), "{text}");
}

#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = stdout_of(&run(binary().args(["completions", shell])));
        assert!(script.contains("pi-retrospect"), "{shell}");
        assert!(script.contains("include-archive"), "{shell}");
    }
    let output = run(binary().args(["completions", "tcsh"]));
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn a_full_disk_is_named() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let output = run(binary()
        .args(["list", "--json", "--sessions-root"])
        .arg(agent().join("sessions"))
        .stdout(full));
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr_of(&output),
        "pi-retrospect: writing to stdout: No space left on device (os error 28)\n"
    );
    // clap's own output says so in the same words.
    for args in [&["list", "--help"][..], &["--version"], &["-h"]] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let output = run(binary().args(args).stdout(full));
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        assert_eq!(
            stderr_of(&output),
            "pi-retrospect: writing to stdout: No space left on device (os error 28)\n",
            "{args:?}"
        );
    }
}

/// A line feed in a file name, in a project's `sessionDir` or in
/// a path given on the command line reaches stderr escaped, so it cannot forge a line: the
/// ambiguous-prefix candidates, `latest`'s "searched …" and "cannot open session file".
#[test]
fn line_feeds_in_names_and_settings_cannot_forge_stderr_lines() {
    let store = Store::new(&[
        (
            "a\nforged",
            "01a70000-1",
            "/w",
            "2026-03-01T00:00:00Z",
            "2026-03-01T00:00:00Z",
        ),
        (
            "b",
            "01a70000-2",
            "/w",
            "2026-03-02T00:00:00Z",
            "2026-03-02T00:00:00Z",
        ),
    ]);
    let check = |output: &Output, n_lines: usize, needle: &str| {
        let stderr = stderr_of(output);
        assert_eq!(stderr.lines().count(), n_lines, "{stderr}");
        assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
        assert!(stderr.contains(needle), "{stderr}");
    };
    let ambiguous = run(binary()
        .args(["show", "01a70000", "--sessions-root"])
        .arg(store.root()));
    assert_eq!(ambiguous.status.code(), Some(2));
    check(&ambiguous, 3, "/--w--/a\\u{a}forged.jsonl (01a70000-1)");

    let project = store.dir.path().join("proj");
    std::fs::create_dir_all(project.join(".pi")).expect("mkdir");
    std::fs::write(
        project.join(".pi/settings.json"),
        r#"{"sessionDir":"/nonexistent/x\n\u001b[31mEVIL"}"#,
    )
    .expect("write");
    let latest = run(binary().args(["show", "latest"]).current_dir(&project));
    assert_eq!(latest.status.code(), Some(2));
    check(&latest, 1, "(searched /nonexistent/x\\u{a}\\u{1b}[31mEVIL");

    let missing = store.dir.path().join("no\nsuch.jsonl");
    let cannot_open = run(binary().arg("show").arg(&missing));
    // A path that names no file is a SESSION that names nothing.
    assert_eq!(cannot_open.status.code(), Some(2));
    check(
        &cannot_open,
        1,
        "no\\u{a}such.jsonl: No such file or directory",
    );
}

/// `latest` where the only session is the one running the
/// command says so, instead of "no session ran".
#[test]
fn latest_says_when_the_only_session_is_the_running_one() {
    let store = Store::new(&[(
        "a",
        "running",
        "[TMP]/repo",
        "2026-03-01T00:00:00Z",
        "2026-03-01T00:00:00Z",
    )]);
    let repo = store.dir.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    let output = run(binary()
        .args(["show", "latest", "--sessions-root"])
        .arg(store.root())
        .env("PI_SESSION_FILE", store.root().join("--w--/a.jsonl"))
        .current_dir(&repo));
    assert_eq!(output.status.code(), Some(2));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("latest: the only session that ran in ")
            && stderr.contains("is the current one ($PI_SESSION_FILE, "),
        "{stderr}"
    );
}

/// When the only session of the current directory is the
/// running one, the note on using a directory above says so, not "no session ran".
#[test]
fn latest_says_why_it_climbed_past_the_running_session() {
    let store = Store::new(&[
        (
            "a",
            "above",
            "[TMP]/repo",
            "2026-03-01T00:00:00Z",
            "2026-03-01T00:00:00Z",
        ),
        (
            "b",
            "running",
            "[TMP]/repo/sub",
            "2026-03-02T00:00:00Z",
            "2026-03-02T00:00:00Z",
        ),
    ]);
    let sub = store.dir.path().join("repo/sub");
    let deeper = sub.join("deeper");
    std::fs::create_dir_all(&deeper).expect("mkdir");
    let latest = |current: &Path| {
        run(binary()
            .args(["show", "latest", "--json", "--sessions-root"])
            .arg(store.root())
            .env("PI_SESSION_FILE", store.root().join("--w--/b.jsonl"))
            .current_dir(current))
    };
    let output = latest(&sub);
    let document: Value = serde_json::from_str(&stdout_of(&output)).expect("json");
    assert_eq!(document["sessionId"], "above");
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("pi-retrospect: note: latest: the only session that ran in ")
            && stderr.contains(
                "/repo/sub is the current one ($PI_SESSION_FILE), which is left out; using "
            )
            && stderr
                .trim_end()
                .ends_with("/repo, the nearest directory above it with other sessions"),
        "{stderr}"
    );
    let stderr = stderr_of(&latest(&deeper));
    assert!(
        stderr.contains("latest: no session ran in ")
            && stderr.contains("/repo/sub/deeper, and the only one in ")
            && stderr.contains("/repo/sub is the current one ($PI_SESSION_FILE)"),
        "{stderr}"
    );
}

/// Every command that prints takes `--color`, so one alias or
/// script can pass it everywhere.
#[test]
fn every_printing_command_takes_color() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../fixtures/pi-real/sessions/--tmp-pi-real-fixture-home-user-project--/2026-11-30T07-00-59-489Z_01a22b41-c1e1-73ac-b3e0-09602166f4c8.jsonl",
    );
    let file = file.to_str().expect("utf-8");
    for args in [
        vec!["show", file],
        vec!["entries", file],
        vec!["inspect", file, "overview"],
        vec!["inspect", file, "--color", "always", "overview"],
        vec!["handoff", file],
    ] {
        for choice in ["never", "always", "auto"] {
            let output = run(binary().args(&args).args(["--color", choice]));
            assert!(
                output.status.success(),
                "{args:?} --color {choice}: {}",
                stderr_of(&output)
            );
        }
    }
}

/// The line cap is settable with `PI_RETROSPECT_MAX_LINE`, and a
/// value that is not a byte count is refused.
#[test]
fn the_line_cap_is_settable() {
    let store = Store::new(&[(
        "a",
        "capped",
        "/w",
        "2026-03-01T00:00:00Z",
        "2026-03-01T00:00:00Z",
    )]);
    let file = store.root().join("--w--/a.jsonl");
    let long = Entry::message(Message::user(&"x".repeat(3000)).timestamp(0))
        .id("e3")
        .parent(Some("e2"))
        .at("2026-03-01T00:00:00Z");
    append_jsonl(&file, [long]);
    let entries = |cap: Option<&str>| {
        let mut command = binary();
        command.arg("entries").arg(&file);
        if let Some(cap) = cap {
            command.env("PI_RETROSPECT_MAX_LINE", cap);
        }
        run(&mut command)
    };
    let uncapped = entries(None);
    let n_rows = stdout_of(&uncapped).lines().count();
    assert_eq!(stderr_of(&uncapped), "");
    for cap in ["2000", "2k"] {
        let capped = entries(Some(cap));
        assert_eq!(stdout_of(&capped).lines().count(), n_rows - 1, "{cap}");
        let stderr = stderr_of(&capped);
        assert!(stderr.contains("line limit"), "{cap}: {stderr}");
    }
    let refused = entries(Some("lots"));
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr_of(&refused).contains("$PI_RETROSPECT_MAX_LINE: expected a number of bytes"),
        "{}",
        stderr_of(&refused)
    );
}

/// A session whose last entry is a tool result of tens of megabytes
/// (longer than the 8 MiB tail window) is last active at that entry's timestamp, as `show`
/// says, so `--active-since` finds it; a last line over the line cap (64 MiB) leaves the
/// start as its last activity with a warning naming the file and the reason, never silently.
#[test]
fn a_huge_last_entry_still_gives_the_last_activity() {
    let store = Store::new(&[]);
    let project = store.root().join("--w--");
    std::fs::create_dir_all(&project).expect("mkdir");
    // The sessions ran in a real directory, so that `latest` run there finds them.
    let cwd = store.dir.path().canonicalize().expect("temp dir");
    let write = |name: &str, start: &str, text_bytes: usize| {
        let header = Header::new(name)
            .timestamp(start)
            .cwd(cwd.to_str().expect("UTF-8 temp dir"));
        let user = Entry::message(Message::user(&format!("question {name}")).timestamp(0))
            .id("a1")
            .parent(None)
            .at("2026-11-30T10:01:00.000Z");
        // Written with spaces after the separators, as another writer may.
        let result = format!(
            "{{\"type\": \"message\", \"id\": \"a2\", \"parentId\": \"a1\", \"timestamp\": \"2026-11-30T11:00:00.000Z\", \"message\": {{\"role\": \"toolResult\", \"toolCallId\": \"t\", \"toolName\": \"read\", \"content\": [{{\"type\": \"text\", \"text\": \"{}\"}}]}}}}",
            "y".repeat(text_bytes)
        );
        let path = project.join(format!("{name}.jsonl"));
        std::fs::write(&path, format!("{header}\n{user}\n{result}\n")).expect("write");
        path
    };
    write("ten", "2026-11-30T10:00:00.000Z", 10_000_000);
    write("thirty", "2026-11-30T10:00:00.000Z", 30_000_000);
    // Started later than the others: by its start alone it would be the latest.
    let over = write("over", "2026-11-30T10:30:00.000Z", 64 * 1024 * 1024 + 10);
    let last_activities = |args: &[&str]| -> Vec<(String, String)> {
        rows(&store.list(&[&["--jsonl"], args].concat()))
            .iter()
            .filter(|row| row["kind"] == "session")
            .map(|row| {
                (
                    row["id"].as_str().expect("id").to_owned(),
                    row["lastActivity"].as_str().expect("instant").to_owned(),
                )
            })
            .collect()
    };
    let pair = |id: &str, instant: &str| (id.to_owned(), instant.to_owned());
    assert_eq!(
        last_activities(&["--sort", "path"]),
        [
            pair("over", "2026-11-30T10:30:00.000Z"),
            pair("ten", "2026-11-30T11:00:00.000Z"),
            pair("thirty", "2026-11-30T11:00:00.000Z"),
        ]
    );
    assert_eq!(
        store.ids(&["--active-since", "2026-11-30T10:45:00Z", "--sort", "path"]),
        ["ten", "thirty"]
    );
    // The reason is a warning row, and on stderr with `--long`.
    let warnings: Vec<Value> = rows(&store.list(&["--jsonl"]))
        .into_iter()
        .filter(|row| row["kind"] == "warning")
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0]["path"], over.display().to_string());
    let reason = warnings[0]["reason"].as_str().expect("reason");
    assert!(
        reason.contains("longer than 64 MiB (the line cap), so the start time counts"),
        "{reason}"
    );
    let long = store.list(&["-l", "--active-since", "2026-11-30T10:45:00Z"]);
    assert_eq!(stdout_of(&long).lines().count(), 2);
    let stderr = stderr_of(&long);
    assert!(
        stderr.contains(&over.display().to_string()) && stderr.contains("line cap"),
        "{stderr}"
    );
    // `latest` orders by the same last activity, and says which file it could not read.
    let latest = |back: &str| {
        run(binary()
            .current_dir(&cwd)
            .args(["show", back, "--json", "--sessions-root"])
            .arg(store.root()))
    };
    let oldest = latest("latest~2");
    let shown: Value = serde_json::from_str(&stdout_of(&oldest)).expect("JSON");
    assert_eq!(shown["sessionId"], "over", "{shown:.200}");
    let stderr = stderr_of(&oldest);
    assert!(
        stderr.contains("pi-retrospect: note: latest~2: ")
            && stderr.contains(&over.display().to_string())
            && stderr.contains("line cap"),
        "{stderr}"
    );
}

/// A `latest~N` too large to count says so; `handoff` (and the other
/// commands that check a file's header first) refuse a directory in `show`'s words; a bare
/// word naming a directory here, read as an id, hints at `./WORD`.
#[test]
fn small_messages_name_what_went_wrong() {
    let store = week();
    let cwd = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(cwd.path().join("real")).expect("mkdir");
    // The store flags go before the rest: `inspect`'s view takes no flags after it.
    let command = |args: &[&str]| {
        run(binary()
            .current_dir(cwd.path())
            .arg(args[0])
            .arg("--sessions-root")
            .arg(store.root())
            .args(&args[1..]))
    };
    let output = command(&["show", "latest~99999999999999999999"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("99999999999999999999 is too large") && !stderr.contains("whole number"),
        "{stderr}"
    );
    let directory = cwd.path().join("real").display().to_string();
    let show = command(&["show", "./real"]);
    for reader in [
        &["handoff", "./real"][..],
        &["show", "./real"],
        &["entries", "./real"],
        &["inspect", "./real", "overview"],
    ] {
        let output = command(reader);
        assert_eq!(output.status.code(), Some(1), "{reader:?}");
        assert_eq!(stderr_of(&output), stderr_of(&show), "{reader:?}");
        assert!(
            stderr_of(&output).contains(&format!(
                "cannot open session file {directory}: is a directory, not a regular file"
            )),
            "{reader:?}: {}",
            stderr_of(&output)
        );
    }
    let output = command(&["show", "real"]);
    assert_eq!(output.status.code(), Some(2));
    // A SESSION naming nothing is an error (2), never `failures`' "none found" (1).
    let failures = command(&["failures", "--session", "real"]);
    assert_eq!(failures.status.code(), Some(2), "{}", stderr_of(&failures));
    assert!(stderr_of(&failures).contains("no session has the id"));
    let stderr = stderr_of(&output);
    assert!(
        stderr.starts_with("pi-retrospect: no session has the id or id prefix, or the name or name prefix, \"real\"")
            && stderr.contains("\npi-retrospect: note: did you mean ./real?"),
        "{stderr}"
    );
    // The note states the rule as it is.
    assert!(
        stderr.contains(
            "\"real\" is in the current directory but is not a file, so it was read as an id; \
             a SESSION without a /, not ending in .jsonl and not starting with ~ is read as a \
             file when one of that name is in the current directory, else as an id"
        ),
        "{stderr}"
    );
    // A word that names nothing here gets no such note.
    let stderr = stderr_of(&command(&["show", "unreal"]));
    assert!(!stderr.contains("did you mean"), "{stderr}");
}

/// A bare word naming a file in the current directory is that file, even
/// when it is also a stored id or id prefix; a note says which reading won and names the
/// stored session. A word naming a file and no stored id gets no note; a word naming no file
/// is an id.
#[test]
fn a_file_here_wins_over_an_id_and_a_note_says_so() {
    let store = week();
    let cwd = tempfile::tempdir().expect("temp dir");
    let monday = store.root().join("--w--/a.jsonl");
    let tuesday = store.root().join("--w--/b.jsonl");
    // `tues` is a file here holding monday's session, and a prefix of tuesday's id.
    std::fs::copy(&monday, cwd.path().join("tues")).expect("copy");
    std::fs::copy(&monday, cwd.path().join("other")).expect("copy");
    let show = |word: &str| {
        run(binary()
            .current_dir(cwd.path())
            .args(["show", word, "--json", "--sessions-root"])
            .arg(store.root()))
    };
    let output = show("tues");
    let shown: Value = serde_json::from_str(&stdout_of(&output)).expect("JSON");
    assert_eq!(shown["sessionId"], "monday", "the file here is read");
    let stderr = stderr_of(&output);
    assert!(
        stderr.starts_with(
            "pi-retrospect: note: \"tues\" is a file in the current directory, read as that \
             file; it is also the id or id prefix of the stored session "
        ) && stderr.contains(&format!("{} (tuesday)", tuesday.display()))
            && stderr.contains(
                "is read as a file when one of that name is in the current directory, else as an id"
            ),
        "{stderr}"
    );
    let output = show("other");
    let shown: Value = serde_json::from_str(&stdout_of(&output)).expect("JSON");
    assert_eq!(shown["sessionId"], "monday");
    assert_eq!(stderr_of(&output), "");
    let output = show("wed");
    let shown: Value = serde_json::from_str(&stdout_of(&output)).expect("JSON");
    assert_eq!(shown["sessionId"], "wednesday");
    assert_eq!(stderr_of(&output), "");
}
