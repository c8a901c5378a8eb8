//! End-to-end tests of `show`, `inspect` and `entries`: golden text on a real Pi file (the
//! fixture root redacted to `[ROOT]`; re-bless with `BLESS=1`), agreement with the values Pi
//! itself reports in `fixtures/pi-real/expected.json`, the SESSION argument, every flag, and
//! damaged, version 1 and growing files written to temp directories.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common;
use common::{binary, golden, stdout_of};
use pi_retrospect_testkit::{Block, Entry, Header, Message, write_jsonl};

const TREE: &str = "--tmp-pi-real-fixture-home-user-project--/2026-11-30T07-00-59-489Z_01a22b41-c1e1-73ac-b3e0-09602166f4c8.jsonl";
const TOOLS: &str = "--tmp-pi-real-fixture-home-user-project--/2026-11-30T07-00-59-245Z_01a22b41-c0ec-73ac-b3e0-0959dd92f796.jsonl";
const FAILURES: &str = "--tmp-pi-real-fixture-home-user-project--/2026-11-30T19-15-37-102Z_01a22de2-540d-7602-8b63-cd7f53f64b36.jsonl";
const BRANCHES: &str = "--tmp-pi-real-fixture-home-user-project--/2026-11-30T19-15-37-609Z_01a22de2-5609-7602-8b63-cd81e7ace702.jsonl";
const FORK: &str = "--tmp-pi-real-fixture-home-user-project--/2026-11-30T07-00-59-507Z_01a22b41-c1f3-73ac-b3e0-0967020c40d2.jsonl";
const API: &str = "--tmp-pi-real-fixture-home-user-project--/2026-11-30T07-00-59-510Z_01a22b41-c1f6-73ac-b3e0-0968419dc9f7.jsonl";
const RUN_0: &str = "--tmp-pi-real-fixture-home-user-project--/2026-11-30T07-00-59-245Z_01a22b41-c0ec-73ac-b3e0-0959dd92f796/7d0c4a52-3f0e-4c43-9a57-1b2f5c6d8e90/run-0/session.jsonl";

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

/// Runs the binary with a fixed line width, so text fitted to the terminal is the same on
/// every machine.
fn run(args: &[&str]) -> Output {
    binary()
        .env("COLUMNS", "120")
        .args(args)
        .output()
        .expect("run binary")
}

fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The standard output of a run that succeeded, or of a search (`inspect … search`,
/// `entries --grep`) that found nothing, which exits 1 and prints its document all the same.
fn document_of(args: &[&str]) -> String {
    let output = run(args);
    let is_search = args.iter().any(|arg| *arg == "search" || *arg == "--grep");
    if is_search && output.status.code() == Some(1) {
        return String::from_utf8(output.stdout).expect("utf-8 output");
    }
    stdout_of(&output)
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&document_of(args)).expect("one JSON document")
}

fn jsonl(args: &[&str]) -> Vec<Value> {
    document_of(args)
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
    write_jsonl(&dir.join(name), lines).display().to_string()
}

fn header(id: &str, cwd: &str) -> String {
    Header::new(id).cwd(cwd).to_string()
}

/// Returns a message of `role` holding one text block, written at `minute` (an assistant's
/// with its provider, model and stop reason).
fn message(id: &str, parent: Option<&str>, minute: u32, role: &str, text: &str) -> String {
    let message = Message::with_role(role).content(&[Block::text(text)]);
    let message = if role == "assistant" {
        message.provider("p").model("m").stop_reason("stop")
    } else {
        message
    };
    Entry::message(message)
        .id(id)
        .parent(parent)
        .at(&format!("2026-01-01T00:{minute:02}:00.000Z"))
        .to_string()
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
    let failures = file(FAILURES);
    let branches = file(BRANCHES);
    let cases: &[(&str, Vec<&str>)] = &[
        (
            "show-failures.txt",
            vec!["show", &failures, "--tool-output", "300"],
        ),
        ("show-failures-tree.txt", vec!["show", &failures, "--tree"]),
        (
            "show-branches-fold.txt",
            vec!["show", &branches, "--tree", "--fold"],
        ),
        (
            "inspect-failures.txt",
            vec!["inspect", &failures, "overview"],
        ),
        ("entries-failures.txt", vec!["entries", &failures]),
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
            vec!["inspect", &tree, "search", "approach"],
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

/// Long output keeps head and tail and says what it left out; `--json` never cuts;
/// `--tool-output 0` is the header line alone.
#[test]
fn tool_output_is_cut_head_and_tail_and_whole_in_json() {
    let failures = file(FAILURES);
    let document = json(&["show", &failures, "--json", "--tool-output", "5"]);
    let items = document["items"].as_array().expect("items");
    let seq = items
        .iter()
        .find(|item| item["entryId"] == "8b495b2c")
        .expect("the seq 1 3000 result");
    let whole = seq["text"].as_str().expect("text");
    assert_eq!(
        whole
            .lines()
            .filter(|line| line.parse::<u32>().is_ok())
            .count(),
        2000
    );
    assert!(seq.get("omitted").is_none(), "--json never cuts");
    let text = stdout_of(&run(&["show", &failures]));
    let mut block: Vec<&str> = text
        .lines()
        .skip_while(|line| !line.starts_with("[8b495b2c]"))
        .take_while(|line| !line.starts_with("[9ad2d801]"))
        .collect();
    block.pop_if(|line| line.is_empty());
    assert_eq!(block[0], "[8b495b2c] <- bash result (2,002 lines, 9.9 KB)");
    assert_eq!(block[1], "  1001");
    assert!(
        block.contains(&"  [… 1,960 lines, 9.6 KB omitted]"),
        "{block:?}"
    );
    assert_eq!(
        block[block.len() - 3..],
        [
            "  3000",
            "",
            "  [Showing lines 1001-3000 of 3000. Full output: /tmp/pi-real-fixture/tmp/pi-bash-6612d6c1156ff19f.log]"
        ],
        "the tail and Pi's own notice"
    );
    let header_only = stdout_of(&run(&["show", &failures, "--tool-output", "0"]));
    assert!(
        header_only.contains("[8b495b2c] <- bash result (2,002 lines, 9.9 KB)\n\n"),
        "{header_only}"
    );
    assert!(!header_only.contains("  1001\n"));
    let tools = stdout_of(&run(&["show", &file(TOOLS)]));
    assert!(
        tools.contains("[654633ae] -> read path=\"README.md\"\n"),
        "{tools}"
    );
}

/// Failed, aborted and cut-off responses, failed tools and `!` commands are marked
/// in every view, and every JSON shape carries how a message ended.
#[test]
fn failures_are_visible_in_every_view() {
    let failures = file(FAILURES);
    let show = stdout_of(&run(&["show", &failures]));
    for expected in [
        "[d3f326d9] assistant (faux/faux-reasoner)\n  [error: 429 Too Many Requests: rate limit exceeded, retry after 30s]\n",
        "[d6004df0] assistant (faux/faux-reasoner)\n  [aborted]\n",
        "  The build starts with cargo, then it compiles main.rs, then\n  [cut off: output limit]\n",
        "[c00c1ab4] <- read result [error]\n",
        "[3ea7de20] ! ls no-such-dir [exit 2]\n  ls: cannot access 'no-such-dir': No such file or directory\n",
        "[23fda95d] !! echo private note  (not sent to the model)\n  private note\n",
        "[dc237402] ! seq 1 3000 [output truncated by Pi]",
        "[667f4b34] <- read result (image)\n",
        "[e294b9c7] assistant (faux/faux-reasoner)\n  (thinking only, hidden; --thinking shows it)\n",
    ] {
        assert!(show.contains(expected), "{expected}\n---\n{show}");
    }
    // A tool-only turn is its calls, not an empty assistant block.
    assert!(show.contains("[8704fa23] user\n  Print 1 to 3000, then run the checks.\n\n[78c2c7f4] -> bash $ seq 1 3000\n"), "{show}");
    let tree = stdout_of(&run(&["show", &failures, "--tree"]));
    for expected in [
        "d3f326d9 assistant [error: 429 Too Many Requests",
        "d6004df0 assistant [aborted]",
        "afb68071 assistant [cut off: output limit]",
        "c00c1ab4 toolResult [error]",
        "3ea7de20 bashExecution [exit 2]  !ls no-such-dir",
        "ebd40560 assistant  -> bash wc -c main.rs",
        "e294b9c7 assistant  (thinking only)",
        "667f4b34 toolResult  Read image file [image/png] (image)",
    ] {
        assert!(tree.contains(expected), "{expected}\n---\n{tree}");
    }
    let overview = stdout_of(&run(&["inspect", &failures, "overview"]));
    for expected in [
        "  reply: (none)  [error: 429 Too Many Requests: rate limit exceeded, retry after 30s]\n",
        "  reply: (none)  [aborted]\n",
        "  reply: The build starts with cargo, then it compiles main.rs, then  [cut off: output limit]\n",
        "  failed: read (c00c1ab4), bash (651bff89)\n",
        "  reply: (tool calls only)\n",
        "  reply: (thinking only, not shown)\n",
    ] {
        assert!(overview.contains(expected), "{expected}\n---\n{overview}");
    }
    let entries = stdout_of(&run(&["entries", &failures]));
    for expected in [
        "[error: 429 Too Many Requests: rate limit exceeded, retry after 30s]\n",
        "[aborted]\n",
        "[cut off: output limit] The build starts",
        "[error] ENOENT",
        "[exit 2] !ls no-such-dir\n",
        "!!echo private note\n",
        "-> bash, bash\n",
        "(thinking only)\n",
        "Read image file [image/png] (image)\n",
    ] {
        assert!(entries.contains(expected), "{expected}\n---\n{entries}");
    }

    // JSON: every shape says how the response ended.
    let error = |rows: &Value, id_field: &str| -> Value {
        rows.as_array()
            .expect("rows")
            .iter()
            .find(|row| row[id_field] == "d3f326d9")
            .cloned()
            .expect("the failed response")
    };
    let items = json(&["show", &failures, "--json"]);
    let tree = json(&["show", &failures, "--tree", "--json"]);
    let overview = json(&["inspect", &failures, "overview", "--json"]);
    let read = json(&["inspect", &failures, "read", "d3f326d9", "--json"]);
    let rows = json(&["entries", &failures, "--json"]);
    for row in [
        error(&items["items"], "entryId"),
        error(&tree["tree"], "entryId"),
        error(&overview["checkpoints"], "entryId"),
        read["read"]["entry"].clone(),
        error(&rows["entries"], "id"),
    ] {
        assert_eq!(row["stopReason"], "error", "{row}");
        assert_eq!(
            row["errorMessage"],
            "429 Too Many Requests: rate limit exceeded, retry after 30s"
        );
    }
    // isError in every view, `inspect read` and `overview` included.
    let read = json(&["inspect", &failures, "read", "c00c1ab4", "--json"]);
    assert_eq!(read["read"]["entry"]["isError"], true);
    assert_eq!(
        read["read"]["after"][0]["isError"], true,
        "651bff89 failed too"
    );
    let checkpoint = &overview["checkpoints"][0];
    assert_eq!(
        checkpoint["toolResults"][0]["isError"], true,
        "{checkpoint}"
    );
    let bash = items["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|item| item["entryId"] == "3ea7de20")
        .expect("the ! command");
    assert_eq!(bash["kind"], "bash");
    assert_eq!(bash["exitCode"], 2);
    let excluded = error(&rows["entries"], "id");
    assert_eq!(excluded["type"], "message");
}

/// A long command is shown whole, the JSON carries every argument and the call id,
/// and `--tool-args` lets `entries --grep` and `inspect search` answer "did it run git push?".
#[test]
fn tool_arguments_are_readable_and_findable() {
    let failures = file(FAILURES);
    let show = stdout_of(&run(&["show", &failures]));
    assert!(
        show.contains(
            "[78c2c7f4] -> bash\n  $ cd /tmp/pi-real-fixture/home/user/project && ls -la"
        ),
        "{show}"
    );
    assert!(
        show.contains("origin main (not run)'\n"),
        "the command's tail: {show}"
    );
    let all_arguments = stdout_of(&run(&["show", &failures, "--tool-args"]));
    assert!(
        all_arguments.contains(
            "[71feb2c7] -> read path=\"red.png\"\n    {\n      \"path\": \"red.png\"\n    }\n"
        ),
        "{all_arguments}"
    );
    let document = json(&["show", &failures, "--json"]);
    let call = document["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|item| item["toolCallId"] == "call_bash_long")
        .expect("the long call");
    assert!(
        call["arguments"]["command"]
            .as_str()
            .expect("command")
            .ends_with("echo 'final step: git push origin main (not run)'")
    );
    let usage = root()
        .join("--tmp-pi-real-fixture-home-user-project--/2026-11-30T19-15-37-733Z_01a22de2-5685-7602-8b63-cd825dec9328.jsonl")
        .display()
        .to_string();
    let tree = json(&["show", &usage, "--tree", "--json"]);
    assert!(
        tree.to_string().contains(r#"-> delegate tasks=[\"check main.rs compiles\", \"check README.md mentions main.rs\"]"#),
        "arrays are shown, not counted: {tree}"
    );

    let grep = |extra: &[&str]| -> Vec<String> {
        let mut args = vec![
            "entries",
            failures.as_str(),
            "--jsonl",
            "--grep",
            "git push",
        ];
        args.extend_from_slice(extra);
        jsonl(&args)
            .iter()
            .map(|row| row["id"].as_str().expect("id").to_owned())
            .collect()
    };
    // The call's argument and the tool's output mention it: neither is searched by default.
    assert_eq!(grep(&[]), Vec::<String>::new());
    assert_eq!(grep(&["--tool-results"]), ["9ad2d801"]);
    assert_eq!(grep(&["--tool-args"]), ["78c2c7f4"]);
    assert_eq!(
        grep(&["--tool-args", "--tool-results"]),
        ["78c2c7f4", "9ad2d801"]
    );
    let search = |extra: &[&str]| {
        let mut args = vec!["inspect", failures.as_str(), "search", "git push", "--json"];
        args.extend_from_slice(extra);
        json(&args)
    };
    let plain = search(&[]);
    assert_eq!(plain["nTotal"], 0);
    assert_eq!(
        plain["notSearched"],
        serde_json::json!(["toolResults", "toolArgs", "thinking", "system"])
    );
    let no_hit = run(&["inspect", &failures, "search", "git push"]);
    assert_eq!(
        no_hit.status.code(),
        Some(1),
        "a search without a hit exits 1"
    );
    let text = String::from_utf8_lossy(&no_hit.stdout).into_owned();
    assert!(
        text.contains(
            "not searched: tool output (--tool-results), tool-call arguments (--tool-args)"
        ),
        "{text}"
    );
    let with_args = search(&["--tool-args"]);
    assert_eq!(field(&with_args["hits"], "entryId"), ["78c2c7f4"]);
    assert_eq!(field(&with_args["hits"], "field"), ["toolArgs"]);
    let everything = search(&["--tool-args", "--tool-results"]);
    assert_eq!(
        field(&everything["hits"], "entryId"),
        ["78c2c7f4", "9ad2d801"]
    );
    assert!(
        everything
            .get("notSearched")
            .is_none_or(|missing| missing != &serde_json::json!([]))
    );
    let thinking = json(&[
        "inspect",
        &failures,
        "search",
        "only said thanks",
        "--thinking",
        "--json",
    ]);
    assert_eq!(field(&thinking["hits"], "field"), ["thinking"]);
    let thinking = jsonl(&[
        "entries",
        &failures,
        "--jsonl",
        "--grep",
        "only said thanks",
        "--thinking",
    ]);
    assert_eq!(thinking.len(), 1);
}

/// A system prompt is one line unless asked for; notes say what they do.
#[test]
fn notes_say_what_they_do() {
    let tree = stdout_of(&run(&["show", &file(TREE)]));
    for expected in [
        "[20f60ff6] system prompt: 153 B; sections: cwd, preamble; tools: read, bash\n[5ef17fa5] user",
        "[474589f5] branch summary of the branch left at [05e0be47]:\n  Tried approach A (rewrite main.rs); abandoned in favour of B.\n",
        "[eec62c1f] label \"abandoned-a\" on [474589f5]\n",
        "[046fe6a4] compaction: 477 tokens before; the model keeps entries from [474589f5] on, after this summary:\n  ## Goal\n",
    ] {
        assert!(tree.contains(expected), "{expected}\n---\n{tree}");
    }
    assert!(
        !tree.contains("The user explored a different conversation branch"),
        "{tree}"
    );
    let system = stdout_of(&run(&["show", &file(TREE), "--system"]));
    assert!(system.contains("[20f60ff6] system prompt: 153 B; sections: cwd, preamble; tools: read, bash\n  [section cwd]\n  <cwd>\n"), "{system}");
    let api = stdout_of(&run(&["show", &file(API), "--tree"]));
    assert!(
        api.contains("f1db7c33 context_edit  (hides afcb1d71 from the model)\n"),
        "{api}"
    );
    assert!(
        api.contains("d8052a72 label  (clears the label of afcb1d71)\n"),
        "{api}"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let edit = |id: &str, parent: &str, replacement: &str| {
        format!(
            r#"{{"type":"context_edit","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:05:00.000Z","targetId":"a0","replacement":{replacement}}}"#
        )
    };
    let path = write_file(
        dir.path(),
        "notes.jsonl",
        &[
            header("notes", "/w"),
            message("u0", None, 0, "user", "hi"),
            message("a0", Some("u0"), 1, "assistant", "secret"),
            edit("e1", "a0", "null"),
            edit("e2", "e1", r#"[{"type":"text","text":"redacted"}]"#),
            r#"{"type":"label","id":"l1","parentId":"e2","timestamp":"2026-01-01T00:06:00.000Z","targetId":"a0"}"#.to_owned(),
        ],
    );
    let notes = stdout_of(&run(&["show", &path]));
    for expected in [
        "[e1] context edit: hides [a0] from the model\n",
        "[e2] context edit: the model sees [a0] as:\n  redacted\n",
        "[l1] label cleared on [a0]\n",
    ] {
        assert!(notes.contains(expected), "{expected}\n---\n{notes}");
    }
}

/// A fork says where its copies end, a session lists its runs, a run names the
/// session that launched it.
#[test]
fn lineage_fork_runs_and_launcher() {
    let fork = stdout_of(&run(&["show", &file(FORK)]));
    // The recorded parent lies in the generator's staging directory, which exists only on a
    // machine that generated the corpus: expect whichever is true here.
    let parent = "/tmp/pi-real-fixture/home/user/.pi/agent/sessions/--tmp-pi-real-fixture-home-user-project--/2026-11-30T07-00-59-245Z_01a22b41-c0ec-73ac-b3e0-0959dd92f796.jsonl";
    let parent_exists = Path::new(parent).is_file();
    let not_found = if parent_exists { "" } else { " (not found)" };
    let expected = format!(
        "forked from: {parent}{not_found}\n  copied 13 entries up to [b37b76e2]; the fork's own entries follow\n"
    );
    assert!(fork.contains(&expected), "{fork}");
    let document = json(&["show", &file(FORK), "--json"]);
    assert_eq!(document["forkCopy"]["lastEntryId"], "b37b76e2");
    assert_eq!(document["parentSessionExists"], parent_exists);
    let tools = redacted(&stdout_of(&run(&["show", &file(TOOLS)])));
    assert!(tools.contains("runs (3):\n  - [ROOT]"), "{tools}");
    assert!(
        tools.contains("/run-0/session.jsonl  \"Summarize README.md in one line.\"\n"),
        "{tools}"
    );
    let document = json(&["show", &file(TOOLS), "--json"]);
    assert_eq!(document["runs"].as_array().expect("runs").len(), 3);
    let run_0 = stdout_of(&run(&["show", &file(RUN_0)]));
    assert!(
        run_0.contains(&format!("launched by: {}\n", file(TOOLS))),
        "{run_0}"
    );
    assert_eq!(
        json(&["show", &file(RUN_0), "--json"])["launchedBy"],
        file(TOOLS)
    );
}

/// Human-facing times are local, JSON is UTC.
#[test]
fn one_time_zone_local_in_text_utc_in_json() {
    let failures = file(FAILURES);
    let local = |args: &[&str]| {
        let output = binary()
            .env("TZ", "JST-9")
            .env("COLUMNS", "120")
            .args(args)
            .output()
            .expect("run");
        stdout_of(&output)
    };
    assert!(
        local(&["show", &failures])
            .contains("activity: 2026-12-01 04:15:37 to 2026-12-01 04:15:37\n")
    );
    assert!(
        local(&["entries", &failures, "--lines", "2"])
            .contains("  2026-12-01 04:15:37  model_change")
    );
    assert!(
        local(&["inspect", &failures, "overview"])
            .contains("651bff89  2026-12-01 04:15:37  active")
    );
    let document: Value =
        serde_json::from_str(&local(&["show", &failures, "--json"])).expect("json");
    assert_eq!(document["firstActivity"], "2026-11-30T19:15:37.104Z");
    assert_eq!(
        document["items"][0]["timestamp"],
        "2026-11-30T19:15:37.104Z"
    );
}

/// `show --tree` stays readable with 30 branch points: the active path flush left,
/// each side branch right under its branch point, or folded to one line; rows fit the width.
#[test]
fn the_tree_stays_readable_with_thirty_branch_points() {
    let branches = file(BRANCHES);
    let tree = stdout_of(&run(&["show", &branches, "--tree"]));
    let rows: Vec<&str> = tree
        .lines()
        .skip_while(|line| !line.starts_with("tree:"))
        .skip(2)
        .collect();
    assert_eq!(rows.len(), 126);
    assert_eq!(
        rows.iter()
            .filter(|row| row.starts_with("* ") || row.starts_with("@ "))
            .count(),
        66
    );
    assert_eq!(
        rows.iter().filter(|row| row.starts_with("| + ")).count(),
        30
    );
    for (idx, row) in rows.iter().enumerate() {
        if row.starts_with("| + ") {
            assert!(
                rows[idx - 1].ends_with("(2 branches)"),
                "{row} is under its branch point"
            );
        }
    }
    let folded = stdout_of(&run(&["show", &branches, "--tree", "--fold"]));
    assert!(folded.contains("* cac516c1 assistant  Step 0 done.  (2 branches)\n| + abandoned branch, 2 entries: e4090379 user  Try alternative 1.\n* 8c89ecbf user  Continue: step 1.\n"), "{folded}");
    assert_eq!(folded.lines().count(), tree.lines().count() - 30);
    let narrow = binary()
        .env("COLUMNS", "60")
        .args(["show", &branches, "--tree"])
        .output()
        .expect("run");
    for line in stdout_of(&narrow)
        .lines()
        .skip_while(|line| !line.starts_with("tree:"))
        .skip(1)
    {
        assert!(line.chars().count() <= 60 + 20, "{line}");
    }
}

/// Nested side branches no longer indent without bound: the tree's text grows
/// linearly with the number of entries.
#[test]
fn tree_output_is_linear_in_the_entries() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut lines = vec![header("deep", "/w"), message("r", None, 0, "user", "root")];
    let n_levels = 2000;
    for level in 0..n_levels {
        let parent = if level == 0 {
            "r".to_owned()
        } else {
            format!("s{}", level - 1)
        };
        // The first child goes one level deeper; the last one stays at its parent's depth.
        lines.push(message(
            &format!("s{level}"),
            Some(&parent),
            1,
            "user",
            "deeper",
        ));
        lines.push(message(
            &format!("l{level}"),
            Some(&parent),
            1,
            "user",
            "leaf",
        ));
    }
    lines.push(message("leaf", Some("r"), 2, "user", "active leaf"));
    let path = write_file(dir.path(), "deep.jsonl", &lines);
    let document = json(&["show", &path, "--tree", "--json"]);
    let max_depth = document["tree"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| row["depth"].as_u64().unwrap_or(0))
        .max();
    assert_eq!(
        max_depth,
        Some(n_levels as u64),
        "the depth is reported whole"
    );
    let text = stdout_of(&run(&["show", &path, "--tree"]));
    let n_rows = text.lines().count();
    assert!(n_rows >= 2 * n_levels, "{n_rows}");
    let widest = text
        .lines()
        .map(|line| line.chars().count())
        .max()
        .unwrap_or(0);
    assert!(widest <= 160, "a row is bounded by a constant: {widest}");
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
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr_of(&output).contains("\"ffff\""),
        "{}",
        stderr_of(&output)
    );

    // A path that names no file is a SESSION that names nothing: a usage error in every
    // reading command, as it is in `search --session` and `failures --session`.
    for args in [
        &["inspect", "/nonexistent/s.jsonl", "overview"][..],
        &["entries", "/nonexistent/s.jsonl"],
        &["show", "/nonexistent/s.jsonl"],
    ] {
        let output = run(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
    let output = run(&["inspect", "/nonexistent/s.jsonl", "overview"]);
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
        let header = Header::new(id).timestamp(timestamp).cwd(cwd).to_string();
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
    // Where no session ran (here or above), the newest of the whole store, with a note.
    let output = latest(dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let rows: Vec<Value> = stdout_of(&output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("row"))
        .collect();
    assert_eq!(rows[0]["text"], "newest-elsewhere");
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("latest: no session ran in")
            && stderr.contains("most recently active session of the stores")
            && stderr.contains("/elsewhere"),
        "{stderr}"
    );

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
        ids(&["--grep", "approach b", "--grep", "the test passes"]),
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
            Header::new("v1")
                .version(None)
                .timestamp("2025-01-01T00:00:00.000Z")
                .cwd("/w")
                .to_string(),
            Entry::message(Message::user("hello"))
                .at("2025-01-01T00:00:01.000Z")
                .to_string(),
            Entry::message(Message::assistant(&[Block::text("hi")]))
                .at("2025-01-01T00:00:02.000Z")
                .to_string(),
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
    // A label is found in the label entry that holds it (its targetId names the entry it
    // labels), as `search` and `entries --grep` find it.
    let hits = json(&["inspect", &tree, "search", "abandoned-a", "--json"]);
    assert_eq!(field(&hits["hits"], "field"), ["label"]);
    assert_eq!(field(&hits["hits"], "entryId"), ["eec62c1f"]);

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
    assert_eq!(output.status.code(), Some(2));
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

/// Returns the words of a shell command line: spaces split, quotes group, `\"` in double
/// quotes is a quote.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut has_word = false;
    let mut chars = line.chars();
    while let Some(character) = chars.next() {
        match (quote, character) {
            (None, ' ') => {
                if has_word {
                    words.push(std::mem::take(&mut word));
                    has_word = false;
                }
            }
            (None, '\'' | '"') => {
                quote = Some(character);
                has_word = true;
            }
            (Some('"'), '\\') => word.extend(chars.next()),
            (Some(open), close) if open == close => quote = None,
            (_, other) => {
                word.push(other);
                has_word = true;
            }
        }
    }
    if has_word {
        words.push(word);
    }
    words
}

/// Every example in `--help` runs on the committed fixtures from the repository root (a
/// pipe into `jq` is left out).
#[test]
fn help_examples_run_on_the_committed_fixtures() {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for command in ["show", "inspect", "entries"] {
        let help = stdout_of(&run(&[command, "--help"]));
        assert!(help.contains("latest"), "{command}");
        let block: Vec<&str> = help
            .lines()
            .skip_while(|line| !line.starts_with("Examples"))
            .skip(1)
            .take_while(|line| !line.is_empty())
            .collect();
        let examples: Vec<&str> = block
            .iter()
            .filter_map(|line| line.strip_prefix("  pi-retrospect "))
            .collect();
        assert!(examples.len() >= 4, "{command}: {help}");
        assert_eq!(
            examples.len(),
            block.len(),
            "one example per line: {block:#?}"
        );
        for example in examples {
            let command_line = example.split(" | ").next().unwrap_or(example);
            let command_line = command_line.replace("$R", "fixtures/pi-real/sessions");
            let output = binary()
                .args(shell_words(&command_line))
                .current_dir(&repository)
                .output()
                .expect("run example");
            assert!(
                output.status.success() && !output.stdout.is_empty(),
                "{example}: {}",
                stderr_of(&output)
            );
        }
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
    assert!(text.contains("  [… 199 lines, 4.5 KB omitted]\n"), "{text}");
    assert_eq!(text.matches("extension context line").count(), 1, "{text}");
    let document = json(&["show", &path, "--json"]);
    assert!(
        document
            .to_string()
            .matches("extension context line")
            .count()
            >= 200
    );
}

/// A file whose first line is not a session header is an error naming the path and
/// the reason `list` gives, exit 1, never an empty session.
#[test]
fn a_file_that_is_not_a_session_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases: [(&str, &[u8], &str); 4] = [
        ("empty.jsonl", b"", "file is empty"),
        (
            "notes.jsonl",
            b"just some text\nmore\n",
            "first line is not valid JSON",
        ),
        (
            "other.jsonl",
            b"{\"type\":\"message\",\"id\":\"x\"}\n",
            "first line is not a session header (type: message)",
        ),
        (
            "binary.jsonl",
            b"\x7fELF\x02\x01\x01\x00\x00\x00\n\x00\x00",
            "first line is not valid JSON",
        ),
    ];
    for (name, bytes, reason) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        let path = path.display().to_string();
        for args in [
            vec!["show", path.as_str()],
            vec!["show", path.as_str(), "--json"],
            vec!["inspect", path.as_str(), "overview"],
            vec!["entries", path.as_str(), "--jsonl"],
        ] {
            let output = run(&args);
            assert_eq!(output.status.code(), Some(1), "{args:?}");
            assert!(output.stdout.is_empty(), "{args:?}");
            let stderr = stderr_of(&output);
            assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
            assert!(
                stderr.contains(&path) && stderr.contains(reason),
                "{args:?}: {stderr}"
            );
        }
    }
}

/// Warnings are capped in text (the first 20, then a count);
/// `--json` lists every one of them, streamed, in the order found.
#[test]
fn warnings_are_capped_in_text_and_listed_in_json() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut lines = vec![header("junk", "/w"), message("u0", None, 0, "user", "hi")];
    lines.extend((0..1000).map(|n| format!("junk line {n}")));
    let path = write_file(dir.path(), "junk.jsonl", &lines);
    for command in ["show", "entries"] {
        let output = run(&[command, &path]);
        let stderr = stderr_of(&output);
        assert_eq!(stderr.lines().count(), 21, "{command}: {stderr}");
        assert!(
            stderr.ends_with(
                ": … and 980 more warnings (980 malformed_line; --json lists them all)\n"
            ),
            "{stderr}"
        );
    }
    for command in [
        vec!["show", &path, "--json"],
        vec!["entries", &path, "--json"],
        vec!["inspect", &path, "overview", "--json"],
    ] {
        let document = json(&command);
        let warnings = document["warnings"].as_array().expect("warnings");
        assert_eq!(warnings.len(), 1000, "{command:?}");
        for (idx, warning) in warnings.iter().enumerate() {
            assert_eq!(warning["kind"], "malformed_line", "{command:?}");
            assert_eq!(warning["lineNo"], idx + 3, "{command:?}");
        }
    }
}

/// No one-line field read from a file (an id, a type, a role, the cwd, a warning, the
/// path) can print a line of its own or drive the terminal, in any text view.
#[test]
fn one_line_fields_cannot_forge_output() {
    let dir = tempfile::tempdir().expect("temp dir");
    let forged = "x\n[fake] assistant\n  owned\u{1b}[31m\npi-retrospect: warning: fake";
    let escaped = serde_json::to_string(forged).expect("json");
    let lines = vec![
        format!(
            r#"{{"type":"session","version":3,"id":{escaped},"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}}"#
        ),
        format!(
            r#"{{"type":"message","id":{escaped},"parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":{escaped},"content":"hi"}}}}"#
        ),
        format!(
            r#"{{"type":{escaped},"id":"b","parentId":{escaped},"timestamp":"2026-01-01T00:00:01.000Z"}}"#
        ),
        format!(
            r#"{{"type":"message","id":"c","parentId":"gone {forged_id}","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"user","content":"x"}}}}"#,
            forged_id = forged.replace('\n', "\\n").replace('\u{1b}', "\\u001b")
        ),
        format!(
            r#"{{"type":"message","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolName":{escaped},"content":"x","isError":true}}}}"#
        ),
    ];
    let path = write_file(dir.path(), "a\u{1b}]0;title\u{7}b.jsonl", &lines);
    for args in [
        vec!["show", path.as_str()],
        vec!["show", path.as_str(), "--tree"],
        vec!["entries", path.as_str()],
        vec!["inspect", path.as_str(), "overview"],
        vec!["inspect", path.as_str(), "read", "d", "--before", "3"],
    ] {
        let output = run(&args);
        for (what, text) in [
            ("stdout", stdout_of(&output)),
            ("stderr", stderr_of(&output)),
        ] {
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{7}'),
                "{args:?} {what}: {text:?}"
            );
            for line in text.lines() {
                assert!(
                    !line.starts_with("[fake]")
                        && !line.starts_with("  owned")
                        && !line.starts_with("pi-retrospect: warning: fake"),
                    "{args:?} {what}: forged line {line:?} in\n{text}"
                );
            }
        }
        let stdout = stdout_of(&output);
        if args[0] == "show" || args[0] == "inspect" {
            assert!(
                stdout.contains("a\\u{1b}]0;title\\u{7}b.jsonl"),
                "the path is escaped as list does: {stdout}"
            );
        }
    }
}

/// `inspect read` pages a long entry with the cursor instead of cutting it.
#[test]
fn read_pages_a_long_entry() {
    let failures = file(FAILURES);
    let whole = json(&["show", &failures, "--json"])["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|item| item["entryId"] == "8b495b2c")
        .map(|item| item["text"].as_str().expect("text").to_owned())
        .expect("the long result");
    let mut read = String::new();
    let mut cursor: Option<String> = None;
    let mut n_pages = 0;
    loop {
        let mut args = vec![
            "inspect",
            failures.as_str(),
            "read",
            "8b495b2c",
            "--tool-results",
            "--json",
        ];
        if let Some(cursor) = &cursor {
            args.extend(["--cursor", cursor.as_str()]);
        }
        let page = json(&args);
        let entry = &page["read"]["entry"];
        assert_eq!(entry["textOffset"], read.chars().count());
        read.push_str(entry["text"].as_str().expect("text"));
        n_pages += 1;
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(n_pages, 2);
    assert_eq!(read, whole);
    let text = stdout_of(&run(&[
        "inspect",
        &failures,
        "read",
        "8b495b2c",
        "--tool-results",
    ]));
    assert!(
        text.contains("    [… 2,102 more characters of 10,102: continue with the cursor below]\n"),
        "{text}"
    );
}

/// Returns every session file under `dir`, recursively, sorted.
fn session_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path
                .extension()
                .is_some_and(|extension| extension == "jsonl")
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn validator(document: &str) -> jsonschema::Validator {
    let schema: Value =
        serde_json::from_str(&stdout_of(&run(&["schema", document]))).expect("schema");
    jsonschema::validator_for(&schema).expect("a valid schema")
}

fn assert_valid(validator: &jsonschema::Validator, document: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(document)
        .map(|error| format!("{error} at {}", error.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

/// Every reading command's `--json` output on every fixture is valid against the
/// schema `pi-retrospect schema` prints.
#[test]
fn every_fixture_output_matches_its_schema() {
    let show = validator("show");
    let inspect = validator("inspect");
    let entries = validator("entries");
    let list = validator("list");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut lines = vec![
        header("damaged", "/w"),
        message("u0", None, 0, "user", "hi"),
        "{ not json".to_owned(),
    ];
    lines.push(message("u1", Some("gone"), 1, "user", "orphan"));
    let damaged = PathBuf::from(write_file(dir.path(), "damaged.jsonl", &lines));
    let mut n_checked = 0;
    for path in session_files(&fixtures).into_iter().chain([damaged]) {
        let path = path.display().to_string();
        if run(&["entries", &path, "--json"]).status.code() != Some(0) {
            continue;
        }
        let leaf = json(&["show", &path, "--json"])["leafId"]
            .as_str()
            .map(str::to_owned);
        let mut cases: Vec<(&jsonschema::Validator, Vec<&str>)> = vec![
            (&show, vec!["show", &path, "--json"]),
            (&show, vec!["show", &path, "--json", "--thinking"]),
            (&show, vec!["show", &path, "--tree", "--json"]),
            (
                &inspect,
                vec!["inspect", &path, "overview", "--json", "--tool-results"],
            ),
            (
                &inspect,
                vec![
                    "inspect",
                    &path,
                    "search",
                    "e",
                    "--json",
                    "--tool-results",
                    "--tool-args",
                    "--thinking",
                    "--system",
                ],
            ),
            (&inspect, vec!["inspect", &path, "search", "e", "--json"]),
            (&entries, vec!["entries", &path, "--json", "--raw"]),
        ];
        if let Some(leaf) = &leaf {
            cases.push((
                &inspect,
                vec!["inspect", &path, "read", leaf, "--before", "10", "--json"],
            ));
        }
        for (validator, args) in cases {
            let document = json(&args);
            assert_valid(validator, &document, &format!("{args:?}"));
            n_checked += 1;
        }
    }
    assert!(n_checked > 50, "{n_checked}");
    for root in ["sessions", "beyond/sessions", "pi-real/sessions"] {
        let root = fixtures.join(root).display().to_string();
        assert_valid(
            &list,
            &json(&["list", "--sessions-root", &root, "--json"]),
            &root,
        );
    }
}

/// Returns a validator of one `show --jsonl` row: the `show` schema with `$defs/JsonlRow` as
/// its root.
fn show_row_validator() -> jsonschema::Validator {
    let mut schema: Value =
        serde_json::from_str(&stdout_of(&run(&["schema", "show"]))).expect("schema");
    let root = schema.as_object_mut().expect("an object");
    for key in ["type", "required", "oneOf", "additionalProperties"] {
        root.remove(key);
    }
    root.insert("$ref".to_owned(), Value::from("#/$defs/JsonlRow"));
    jsonschema::validator_for(&schema).expect("a valid schema")
}

/// `show --jsonl`: a session row with the heading fields of `show --json`, then its items (or
/// tree rows), then every warning, each row valid against `$defs/JsonlRow`.
#[test]
fn show_jsonl_rows_are_the_document_one_per_line() {
    let validator = show_row_validator();
    let dir = tempfile::tempdir().expect("temp dir");
    let mut lines = vec![header("junk", "/w"), message("u0", None, 0, "user", "hi")];
    lines.extend((0..30).map(|n| format!("junk line {n}")));
    let junk = write_file(dir.path(), "junk.jsonl", &lines);
    for path in [file(FAILURES), file(BRANCHES), file(TOOLS), junk] {
        for tree in [false, true] {
            let mut args = vec!["show", path.as_str(), "--json"];
            if tree {
                args.push("--tree");
            }
            let mut document = json(&args);
            args[2] = "--jsonl";
            let output = run(&args);
            assert_eq!(stderr_of(&output), "", "{args:?}");
            let rows: Vec<Value> = stdout_of(&output)
                .lines()
                .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
                .collect();
            for row in &rows {
                assert_valid(&validator, row, &format!("{args:?}: {row}"));
            }
            let (array, element) = if tree {
                ("tree", Some("row"))
            } else {
                ("items", None)
            };
            let expected_elements = document[array].as_array().expect("elements").clone();
            let expected_warnings = document["warnings"].as_array().expect("warnings").clone();
            let heading = document.as_object_mut().expect("an object");
            for key in [array, "warnings"] {
                heading.remove(key);
            }
            heading.insert("kind".to_owned(), Value::from("session"));
            assert_eq!(rows[0], Value::Object(heading.clone()), "{args:?}");
            let n_elements = expected_elements.len();
            let elements: Vec<Value> = rows[1..=n_elements]
                .iter()
                .map(|row| match element {
                    Some(key) => {
                        assert_eq!(row["kind"], "treeRow");
                        row[key].clone()
                    }
                    None => row.clone(),
                })
                .collect();
            assert_eq!(elements, expected_elements, "{args:?}");
            let warnings: Vec<Value> = rows[1 + n_elements..]
                .iter()
                .map(|row| {
                    assert_eq!(row["kind"], "warning");
                    row["warning"].clone()
                })
                .collect();
            assert_eq!(warnings, expected_warnings, "{args:?}");
        }
    }
}

/// SESSION may be a session's name or a prefix of it (set anywhere in the file, any case): a
/// unique one reads that session, an ambiguous one is an error listing the candidates, and a
/// whole name wins over the start of an id.
#[test]
fn a_session_is_found_by_its_name_or_name_prefix() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = dir.path().join("store");
    let named = |file: &str, id: &str, name: &str| {
        let info = Entry::session_info(name)
            .id(&format!("n-{id}"))
            .parent(Some("u0"))
            .at("2026-01-01T00:00:02.000Z")
            .to_string();
        write_file(
            &store,
            &format!("--w--/{file}.jsonl"),
            &[header(id, "/w"), message("u0", None, 0, "user", id), info],
        )
    };
    named("a", "webhook-session", "Debug flaky webhook");
    named("b", "login-session", "Debug login page");
    named("c", "other-session", "Write the docs");
    let store_text = store.display().to_string();
    let first_text = |session: &str| -> Output {
        binary()
            .args([
                "entries",
                session,
                "--jsonl",
                "--sessions-root",
                &store_text,
            ])
            .current_dir(dir.path())
            .output()
            .expect("run")
    };
    for (session, expected) in [
        ("Debug flaky webhook", "webhook-session"),
        ("debug FLAKY", "webhook-session"),
        ("Write", "other-session"),
    ] {
        let output = first_text(session);
        let rows: Vec<Value> = stdout_of(&output)
            .lines()
            .map(|line| serde_json::from_str(line).expect("row"))
            .collect();
        assert_eq!(rows[0]["text"], expected, "{session}");
    }
    let output = first_text("Debug");
    assert_eq!(output.status.code(), Some(2));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("matches 2 sessions")
            && stderr.contains("Debug flaky webhook")
            && stderr.contains("Debug login page")
            && !stderr.contains("Write the docs"),
        "{stderr}"
    );
    // A name that names nothing is an error in the argument.
    assert_eq!(first_text("Nothing like it").status.code(), Some(2));
    // A word that starts one session's id and is another's whole name reads the named one;
    // a word that starts both an id and a name is asked back.
    named("d", "facade-session", "Refactor");
    named("e", "x-session", "face");
    let output = first_text("face");
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let first: Value =
        serde_json::from_str(stdout_of(&output).lines().next().expect("a row")).expect("row");
    assert_eq!(first["text"], "x-session");
    let output = first_text("fac");
    assert_eq!(output.status.code(), Some(2));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("\"fac\" starts the id of facade-session and the name of")
            && stderr.contains("e.jsonl"),
        "{stderr}"
    );
    assert_eq!(first_text("facade").status.code(), Some(0));
}

/// An entry named by `--entry` or `--parent` is a handle, as `inspect read`'s: one that names
/// nothing is a usage error (exit 2) naming the flag, never an empty table.
#[test]
fn an_entry_handle_that_names_nothing_is_a_usage_error() {
    let session = std::fs::read_dir(root())
        .expect("the fixture store")
        .flatten()
        .flat_map(|project| std::fs::read_dir(project.path()).into_iter().flatten())
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            path.extension()
                .is_some_and(|extension| extension == "jsonl")
        })
        .expect("a session file");
    let session = session.display().to_string();
    for (flag, expected) in [("--entry", "--entry: "), ("--parent", "--parent: ")] {
        let output = run(&["entries", &session, flag, "no-such-entry"]);
        assert_eq!(output.status.code(), Some(2), "{flag}");
        assert!(
            stderr_of(&output).contains(expected),
            "{}",
            stderr_of(&output)
        );
    }
    let output = run(&["entries", &session, "--entry", "line:2"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let output = run(&["inspect", &session, "read", "no-such-entry"]);
    assert_eq!(output.status.code(), Some(2));
}
