//! The handoff of whole sessions: what the excerpt holds and leaves out, on the files the real
//! Pi wrote (`fixtures/pi-real`, read-only) and on sessions written to temporary directories,
//! and the byte bounds at their exact limits.

use std::path::{Path, PathBuf};

use pi_retrospect_handoff::{
    FailureKind, Handoff, HandoffError, HandoffOptions, HandoffRole, handoff, handoff_file,
};
use pi_retrospect_render::handoff::{MarkdownOptions, write_json, write_markdown};
use pi_retrospect_testkit::{Block, Entry, HEADER, Header, Message};
use pi_retrospect_transcript::Transcript;
use serde_json::{Value, json};

const ESCAPE: char = '\u{1b}';

/// Returns the fixture store of sessions written by Pi 1.6.0, as an absolute path.
fn pi_real_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/pi-real");
    std::fs::canonicalize(&root).unwrap_or(root)
}

/// Returns every `.jsonl` file below `dir`, sorted.
fn session_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("read fixture dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path
                .extension()
                .is_some_and(|extension| extension == "jsonl")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Returns the text of a message's content as Pi's text blocks give it.
fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|block| block["type"] == "text")
                .filter_map(|block| block["text"].as_str())
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// Returns every string inside `value`, recursively.
fn strings_in(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| strings_in(item, out)),
        Value::Object(map) => map.values().for_each(|item| strings_in(item, out)),
        _ => {}
    }
}

/// Returns the strings of a session file that a handoff must never show: thinking, tool-call
/// arguments, tool results, image data, system, custom and bash messages, custom entries,
/// and summaries.
fn forbidden_strings(lines: &[Value]) -> Vec<String> {
    let mut forbidden = Vec::new();
    for line in lines {
        match line["type"].as_str() {
            Some("message") => {
                let message = &line["message"];
                match message["role"].as_str() {
                    Some("user" | "assistant") => {
                        for block in message["content"].as_array().into_iter().flatten() {
                            match block["type"].as_str() {
                                Some("thinking") => strings_in(&block["thinking"], &mut forbidden),
                                Some("toolCall") => strings_in(&block["arguments"], &mut forbidden),
                                Some("image") => strings_in(&block["data"], &mut forbidden),
                                _ => {}
                            }
                        }
                    }
                    _ => strings_in(message, &mut forbidden),
                }
            }
            Some("compaction" | "branch_summary") => strings_in(&line["summary"], &mut forbidden),
            Some("custom") => strings_in(&line["data"], &mut forbidden),
            Some("custom_message") => strings_in(&line["content"], &mut forbidden),
            _ => {}
        }
    }
    // Short strings (`ls`, a role name) can occur in any prose; the ones worth checking are
    // the sentences and blobs.
    forbidden.retain(|text| text.trim().len() >= 12);
    forbidden
}

/// Asserts that nothing in the handoff's JSON holds a forbidden string, outside the parts
/// that carry the work on purpose: the latest compaction summary and the failures (whose
/// output and call are tool results and arguments), checked by their own tests.
fn assert_excludes(handoff: &Handoff, forbidden: &[String], about: &str) {
    let mut without_work = handoff.clone();
    without_work.compaction = None;
    without_work.failures.clear();
    let document = serde_json::to_string(&without_work).expect("serialize");
    let texts: Vec<&str> = handoff
        .excerpt
        .messages
        .iter()
        .map(|message| message.text.as_str())
        .collect();
    for text in forbidden {
        let escaped = serde_json::to_string(text).expect("string");
        let escaped = &escaped[1..escaped.len() - 1];
        assert!(
            !texts.iter().any(|shown| shown.contains(text.trim())) && !document.contains(escaped),
            "{about}: the handoff shows {text:?}"
        );
    }
}

#[test]
fn real_pi_sessions_show_only_user_and_assistant_text_of_the_active_branch() {
    let root = pi_real_root();
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("expected.json")).expect("read expected.json"),
    )
    .expect("expected.json is JSON");
    let files = session_files(&root.join("sessions"));
    let n_expected = expected["files"].as_object().expect("files").len();
    assert_eq!(files.len(), n_expected, "{files:?}");
    for path in files {
        let key = path
            .strip_prefix(root.join("sessions"))
            .expect("under the store")
            .to_str()
            .expect("utf-8");
        let facts = &expected["files"][key];
        let text = std::fs::read_to_string(&path).expect("read session");
        let lines: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).expect("Pi writes JSON lines"))
            .collect();
        // What Pi's own active branch holds, computed from expected.json and the raw lines.
        let mut on_branch = Vec::new();
        for id in facts["activeBranchIds"].as_array().expect("ids") {
            let line = lines
                .iter()
                .find(|line| line["id"] == *id)
                .expect("branch id in file");
            let role = line["message"]["role"].as_str();
            if line["type"] == "message"
                && matches!(role, Some("user" | "assistant"))
                && let Some(text) = content_text(&line["message"]["content"])
            {
                on_branch.push((id.as_str().expect("id").to_owned(), text));
            }
        }
        let handoff = handoff_file(&path, &HandoffOptions::default()).expect("handoff");
        let shown: Vec<(String, String)> = handoff
            .excerpt
            .messages
            .iter()
            .map(|message| (message.entry_id.clone(), message.text.clone()))
            .collect();
        let newest = on_branch.len().saturating_sub(12);
        assert_eq!(shown, on_branch[newest..].to_vec(), "{key}");
        assert_eq!(handoff.excerpt.n_available, on_branch.len(), "{key}");
        assert!(!shown.is_empty(), "{key}");
        assert_excludes(&handoff, &forbidden_strings(&lines), key);

        let source = &handoff.source;
        assert_eq!(source.path, path.to_str().expect("utf-8"), "{key}");
        assert_eq!(
            handoff.resume_command,
            format!("pi --session {}", source.path)
        );
        assert_eq!(source.session_id.as_deref(), facts["headerId"].as_str());
        assert_eq!(source.cwd.as_deref(), facts["cwd"].as_str());
        assert_eq!(
            source.name.as_deref(),
            facts["sessionName"].as_str(),
            "{key}"
        );
        let mut models: Vec<String> = Vec::new();
        for line in &lines {
            let model = match (line["type"].as_str(), line["message"]["role"].as_str()) {
                (Some("model_change"), _) => format!(
                    "{}/{}",
                    line["provider"].as_str().unwrap_or(""),
                    line["modelId"].as_str().unwrap_or("")
                ),
                (Some("message"), Some("assistant")) => format!(
                    "{}/{}",
                    line["message"]["provider"].as_str().unwrap_or(""),
                    line["message"]["model"].as_str().unwrap_or("")
                ),
                _ => continue,
            };
            if !models.contains(&model) {
                models.push(model);
            }
        }
        assert_eq!(source.models, models, "{key}");
        assert!(source.first_activity <= source.last_activity, "{key}");
        assert_eq!(handoff.redactions.total, 0, "{key}");
        assert!(handoff.goal.is_none());

        // The task is the first user message of Pi's active branch.
        let first_user = facts["activeBranchIds"]
            .as_array()
            .expect("ids")
            .iter()
            .filter_map(|id| lines.iter().find(|line| line["id"] == *id))
            .find(|line| {
                line["message"]["role"] == "user"
                    && content_text(&line["message"]["content"]).is_some()
            });
        assert_eq!(
            handoff.task.as_ref().map(|task| task.entry_id.as_str()),
            first_user.and_then(|line| line["id"].as_str()),
            "{key}"
        );
        // The compaction summary is the latest compaction's on Pi's active branch.
        let latest_compaction = facts["activeBranchIds"]
            .as_array()
            .expect("ids")
            .iter()
            .filter_map(|id| lines.iter().find(|line| line["id"] == *id))
            .rfind(|line| line["type"] == "compaction");
        assert_eq!(
            handoff
                .compaction
                .as_ref()
                .map(|summary| (summary.entry_id.as_str(), summary.text.as_str())),
            latest_compaction.map(|line| (
                line["id"].as_str().unwrap_or(""),
                line["summary"].as_str().unwrap_or("")
            )),
            "{key}"
        );
        // Every failure listed is an entry of the file that failed.
        for failure in &handoff.failures {
            let line = lines
                .iter()
                .find(|line| line["id"] == failure.entry_id.as_str())
                .expect("failure entry in file");
            let message = &line["message"];
            let is_failed = matches!(
                message["stopReason"].as_str(),
                Some("error" | "aborted" | "length")
            ) || message["isError"] == true
                || message["exitCode"].as_i64().is_some_and(|code| code != 0)
                || message["cancelled"] == true;
            assert!(is_failed, "{key}: {line}");
        }
    }
}

/// Pi's own session whose last three replies failed (a provider error, an abort, a reply cut
/// off at the output limit): the handoff lists all three with the error text, where the
/// excerpt, which holds text only, shows none of them.
#[test]
fn the_failed_last_replies_of_a_real_session_are_carried() {
    let path = pi_real_root().join(
        "sessions/--tmp-pi-real-fixture-home-user-project--/2026-11-30T19-15-37-102Z_01a22de2-540d-7602-8b63-cd7f53f64b36.jsonl",
    );
    let handoff = handoff_file(&path, &HandoffOptions::default()).expect("handoff");
    let failures: Vec<(&str, FailureKind, &str)> = handoff
        .failures
        .iter()
        .map(|failure| {
            (
                failure.entry_id.as_str(),
                failure.kind,
                failure.text.as_str(),
            )
        })
        .collect();
    assert_eq!(
        failures,
        [
            (
                "d3f326d9",
                FailureKind::ReplyError,
                "429 Too Many Requests: rate limit exceeded, retry after 30s"
            ),
            ("d6004df0", FailureKind::ReplyAborted, ""),
            ("afb68071", FailureKind::ReplyCutOff, ""),
        ]
    );
    assert_eq!(handoff.n_failures, 3);
    // The earlier tool errors and the failed `!ls no-such-dir` are more than three turns back.
    assert!(
        handoff
            .failures
            .iter()
            .all(|failure| failure.kind != FailureKind::ToolError)
    );
    let options = MarkdownOptions {
        zone: jiff::tz::TimeZone::UTC,
    };
    let mut out = Vec::new();
    write_markdown(&mut out, &handoff, &options).expect("render");
    let text = String::from_utf8(out).expect("utf-8");
    assert!(
        text.contains("### reply failed, ")
            && text.contains("> 429 Too Many Requests")
            && text.contains("### reply aborted, ")
            && text.contains("### reply cut off at the output limit, "),
        "{text}"
    );
    assert_eq!(
        handoff.task.as_ref().map(|task| task.text.as_str()),
        Some("Show me config.toml.")
    );
}

#[test]
fn the_tree_session_leaves_out_the_abandoned_branch_and_the_summaries() {
    let root = pi_real_root().join("sessions/--tmp-pi-real-fixture-home-user-project--");
    let path = root.join("2026-11-30T07-00-59-489Z_01a22b41-c1e1-73ac-b3e0-09602166f4c8.jsonl");
    let options = HandoffOptions {
        goal: Some("  Add a second test  ".into()),
        ..HandoffOptions::default()
    };
    let handoff = handoff_file(&path, &options).expect("handoff");
    let shown: Vec<(HandoffRole, &str, Option<&str>)> = handoff
        .excerpt
        .messages
        .iter()
        .map(|message| {
            (
                message.role,
                message.text.as_str(),
                message.model.as_deref(),
            )
        })
        .collect();
    let model = Some("faux/faux-reasoner");
    assert_eq!(
        shown,
        [
            (HandoffRole::User, "Plan a change to main.rs.", None),
            (
                HandoffRole::Assistant,
                "Two options: A rewrites main.rs, B adds a test.",
                model
            ),
            (HandoffRole::User, "Do approach B instead.", None),
            (
                HandoffRole::Assistant,
                "Approach B: added a test for main.rs.",
                model
            ),
            (HandoffRole::User, "Run the test.", None),
            (HandoffRole::Assistant, "The test passes.", model),
            (HandoffRole::User, "Summarize where we are.", None),
            (
                HandoffRole::Assistant,
                "Done: approach B is in place and the test passes.",
                model
            ),
        ]
    );
    let goal = handoff.goal.as_ref().expect("goal");
    assert_eq!(
        (goal.text.as_str(), goal.is_cut),
        ("Add a second test", false)
    );

    // The Markdown document, with the checkout's path replaced.
    let mut out = Vec::new();
    let markdown = MarkdownOptions {
        zone: jiff::tz::TimeZone::UTC,
    };
    write_markdown(&mut out, &handoff, &markdown).expect("write");
    let document = String::from_utf8(out)
        .expect("utf-8")
        .replace(root.to_str().expect("utf-8"), "[ROOT]");
    let expected = "# Pi session handoff

- Source: `[ROOT]/2026-11-30T07-00-59-489Z_01a22b41-c1e1-73ac-b3e0-09602166f4c8.jsonl`
- Session id: `01a22b41-c1e1-73ac-b3e0-09602166f4c8`
- Working directory: `/tmp/pi-real-fixture/home/user/project`
- Name: Branch, summarize, compact
- Models: `faux/faux-reasoner`
- First activity: 2026-11-30 07:00:59 +00:00
- Last activity: 2026-11-30 07:00:59 +00:00
- Redactions: 0

## Goal

> Add a second test

## Original task

The first user message, 2026-11-30 07:00:59 +00:00:

> Plan a change to main.rs.

## Resume

```sh
pi --session [ROOT]/2026-11-30T07-00-59-489Z_01a22b41-c1e1-73ac-b3e0-09602166f4c8.jsonl
```

## Latest compaction summary

What the model was told of the work before the compaction of 2026-11-30 07:00:59 +00:00:

> ## Goal
> Change main.rs.
> ## Progress
> Approach B (a test) done; A abandoned.

## Recent messages

The last 8 of 8 user and assistant text messages on the active branch, newest last (232 bytes of text).

### user, 2026-11-30 07:00:59 +00:00

> Plan a change to main.rs.

### assistant (faux/faux-reasoner), 2026-11-30 07:00:59 +00:00

> Two options: A rewrites main.rs, B adds a test.

### user, 2026-11-30 07:00:59 +00:00

> Do approach B instead.

### assistant (faux/faux-reasoner), 2026-11-30 07:00:59 +00:00

> Approach B: added a test for main.rs.

### user, 2026-11-30 07:00:59 +00:00

> Run the test.

### assistant (faux/faux-reasoner), 2026-11-30 07:00:59 +00:00

> The test passes.

### user, 2026-11-30 07:00:59 +00:00

> Summarize where we are.

### assistant (faux/faux-reasoner), 2026-11-30 07:00:59 +00:00

> Done: approach B is in place and the test passes.
";
    assert_eq!(document, expected);
}

/// Returns JSONL text: the header, then `lines`.
fn jsonl(lines: &[String]) -> String {
    pi_retrospect_testkit::jsonl(std::iter::once(HEADER).chain(lines.iter().map(String::as_str)))
}

/// Returns the entry `id` below `parent` written at `second`, with no type yet.
fn entry(entry: Entry, id: &str, parent: Option<&str>, second: u32) -> String {
    entry
        .id(id)
        .parent(parent)
        .at(&format!("2026-01-01T00:00:{:02}.000Z", second % 60))
        .to_string()
}

/// Returns a message entry `id` below `parent` with the given message object.
fn message(id: &str, parent: Option<&str>, second: u32, message: Message) -> String {
    entry(Entry::message(message), id, parent, second)
}

fn user(id: &str, parent: Option<&str>, text: &str) -> String {
    message(
        id,
        parent,
        id.len() as u32,
        Message::user(text).timestamp(1),
    )
}

fn assistant(id: &str, parent: Option<&str>, text: &str) -> String {
    message(
        id,
        parent,
        id.len() as u32,
        Message::assistant(&[Block::text(text)])
            .provider("anthropic")
            .model("claude-x")
            .stop_reason("stop")
            .timestamp(2),
    )
}

/// Returns the handoff of the session `contents`, written to a temporary file.
fn handoff_of(contents: &str, options: &HandoffOptions) -> Handoff {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, contents).expect("write session");
    let handoff = handoff_file(&path, options).expect("handoff");
    assert_eq!(handoff.source.path, path.to_str().expect("utf-8"));
    handoff
}

/// Returns the handoff of the session `contents`, parsed in memory.
fn handoff_in_memory(contents: &str, options: &HandoffOptions) -> Handoff {
    let transcript = Transcript::from_bytes(contents.as_bytes().to_vec());
    handoff(&transcript, Path::new("/virtual/session.jsonl"), options).expect("handoff")
}

#[test]
fn excluded_content_never_appears() {
    let lines = vec![
        message(
            "sys",
            None,
            1,
            Message::with_role("system")
                .text_member("content", "SYSTEM-PROMPT-TEXT")
                .member("sections", r#"{"a":"SYSTEM-SECTION-TEXT"}"#)
                .timestamp(0),
        ),
        message(
            "u1",
            Some("sys"),
            2,
            Message::user_blocks(&[
                Block::text("look at this"),
                Block::image("image/png", "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAE-IMAGE-DATA"),
            ])
            .timestamp(1),
        ),
        message(
            "a1",
            Some("u1"),
            3,
            Message::assistant(&[
                Block::thinking("THINKING-TEXT-HERE")
                    .text_member("thinkingSignature", "THINKING-SIGNATURE"),
                Block::text("I will read it."),
                Block::tool_call("c1", "read", r#"{"path":"TOOL-ARGUMENT-PATH"}"#),
            ])
            .provider("p")
            .model("m")
            .timestamp(2),
        ),
        message(
            "t1",
            Some("a1"),
            4,
            Message::tool_result(
                "c1",
                "read",
                "TOOL-RESULT-TEXT ghp_0123456789abcdefghijABCDEFGHIJ012345",
            )
            .timestamp(3),
        ),
        message(
            "b1",
            Some("t1"),
            5,
            Message::with_role("bashExecution")
                .text_member("command", "BASH-COMMAND-TEXT")
                .text_member("output", "BASH-OUTPUT-TEXT")
                .timestamp(4),
        ),
        message(
            "c1",
            Some("b1"),
            6,
            Message::with_role("custom")
                .text_member("customType", "x")
                .text_member("content", "CUSTOM-ROLE-TEXT")
                .member("display", "true")
                .timestamp(5),
        ),
        entry(
            Entry::of_type("custom")
                .text_member("customType", "x")
                .member("data", r#"{"k":"CUSTOM-ENTRY-DATA"}"#),
            "e1",
            Some("c1"),
            7,
        ),
        entry(
            Entry::custom_message("x", "CUSTOM-MESSAGE-TEXT", true),
            "m1",
            Some("e1"),
            8,
        ),
        entry(
            Entry::compaction("COMPACTION-SUMMARY-TEXT", "u1", 10),
            "k1",
            Some("m1"),
            9,
        ),
        entry(
            Entry::branch_summary("u1", "BRANCH-SUMMARY-TEXT"),
            "s1",
            Some("k1"),
            10,
        ),
        message(
            "cs",
            Some("s1"),
            11,
            Message::with_role("compactionSummary")
                .text_member("summary", "COMPACTION-MESSAGE-TEXT")
                .member("tokensBefore", "1")
                .timestamp(6),
        ),
        assistant("a2", Some("cs"), "Read it; all good."),
        // A thinking-only and a tool-call-only assistant message add nothing.
        message(
            "a3",
            Some("a2"),
            12,
            Message::assistant(&[Block::thinking("ONLY-THINKING-TEXT")]).timestamp(7),
        ),
    ];
    let contents = jsonl(&lines);
    let handoff = handoff_of(&contents, &HandoffOptions::default());
    let shown: Vec<&str> = handoff
        .excerpt
        .messages
        .iter()
        .map(|message| message.text.as_str())
        .collect();
    assert_eq!(
        shown,
        ["look at this", "I will read it.", "Read it; all good."]
    );
    let document = serde_json::to_string(&handoff).expect("serialize");
    for marker in [
        "SYSTEM-PROMPT",
        "SYSTEM-SECTION",
        "IMAGE-DATA",
        "THINKING-",
        "TOOL-ARGUMENT",
        "TOOL-RESULT",
        "ghp_",
        "BASH-",
        "CUSTOM-",
        "COMPACTION-MESSAGE",
        "BRANCH-SUMMARY",
        "ONLY-THINKING",
    ] {
        assert!(!document.contains(marker), "{marker} in {document}");
    }
    assert_eq!(handoff.redactions.total, 0);
    // The latest compaction's summary is carried apart from the messages.
    assert_eq!(
        handoff
            .compaction
            .as_ref()
            .map(|summary| summary.text.as_str()),
        Some("COMPACTION-SUMMARY-TEXT")
    );
    assert!(handoff.failures.is_empty() && handoff.files_touched.is_empty());
}

#[test]
fn secrets_are_redacted_and_counted() {
    let lines = vec![
        user(
            "u1",
            None,
            "deploy with GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345 please",
        ),
        assistant(
            "a1",
            Some("u1"),
            "Using postgres://app:hunter2@db/app and AKIAIOSFODNN7EXAMPLE.",
        ),
        entry(Entry::session_info("token=abc123xyz"), "n1", Some("a1"), 9),
    ];
    let options = HandoffOptions {
        goal: Some("finish it\npassword: hunter22\nthen ship".into()),
        ..HandoffOptions::default()
    };
    let handoff = handoff_of(&jsonl(&lines), &options);
    let shown: Vec<&str> = handoff
        .excerpt
        .messages
        .iter()
        .map(|message| message.text.as_str())
        .collect();
    assert_eq!(
        shown,
        [
            "deploy with GITHUB_TOKEN=[redacted: github-token] please",
            "Using postgres://app:[redacted: url-password]@db/app and [redacted: aws-access-key-id].",
        ]
    );
    assert_eq!(
        handoff.source.name.as_deref(),
        Some("token=[redacted: secret-assignment]")
    );
    assert_eq!(
        handoff.goal.as_ref().map(|goal| goal.text.as_str()),
        Some("finish it\npassword: [redacted: secret-assignment]\nthen ship")
    );
    let counts = serde_json::to_value(&handoff.redactions).expect("counts");
    assert_eq!(
        counts,
        // The first message is shown twice, as the task and in the excerpt: the counts are
        // of the markers the document holds.
        json!({ "total": 6, "byKind": {
            "aws-access-key-id": 1, "github-token": 2, "secret-assignment": 2, "url-password": 1,
        }})
    );
}

#[test]
fn terminal_controls_and_bidi_are_stripped() {
    let lines = vec![
        user(
            "u1",
            None,
            "clear\u{1b}[2J\u{1b}]0;title\u{7} this \u{202e}txet\r\n",
        ),
        assistant("a1", Some("u1"), "\u{9b}31mred\u{85}"),
    ];
    let handoff = handoff_in_memory(&jsonl(&lines), &HandoffOptions::default());
    let shown: Vec<&str> = handoff
        .excerpt
        .messages
        .iter()
        .map(|message| message.text.as_str())
        .collect();
    assert_eq!(shown, ["clear this txet\n", "red"]);
}

/// Returns the kept text, whether it was cut and the full length of a single user message
/// `text` handed off with `max_message_bytes`.
fn cut_one(text: &str, max_message_bytes: usize) -> (String, bool, usize) {
    let options = HandoffOptions {
        max_message_bytes,
        ..HandoffOptions::default()
    };
    let handoff = handoff_in_memory(&jsonl(&[user("u1", None, text)]), &options);
    let message = &handoff.excerpt.messages[0];
    (message.text.clone(), message.is_cut, message.n_bytes)
}

#[test]
fn each_message_is_cut_at_its_byte_limit() {
    let a = |n: usize| "a".repeat(n);
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    for (text, max_message_bytes, expected, is_cut) in [
        // Exactly at the limit, one byte over, far over.
        (a(2048), 2048, a(2048), false),
        (a(2049), 2048, a(2048), true),
        (a(5000), 2048, a(2048), true),
        // A two-byte character ending at the limit, or straddling it (left out whole).
        (a(2046) + "é", 2048, a(2046) + "é", false),
        (a(2047) + "é", 2048, a(2047), true),
        (a(2047) + "éa", 2048, a(2047), true),
        (a(2046) + "é" + "a", 2048, a(2046) + "é", true),
        // A three- and a four-byte character straddling the limit.
        (a(2046) + "日本", 2048, a(2046), true),
        (a(2047) + "😀", 2048, a(2047), true),
        (a(2044) + "😀", 2048, a(2044) + "😀", false),
        // A secret across the limit is redacted first; the marker is never split.
        (a(2030) + " " + secret, 2048, a(2030) + " ", true),
        (
            a(2000) + " " + secret,
            2048,
            a(2000) + " [redacted: github-token]",
            false,
        ),
        // Limits are settable.
        ("héllo wörld".to_owned(), 3, "hé".to_owned(), true),
        ("héllo".to_owned(), 2, "h".to_owned(), true),
    ] {
        let (kept, was_cut, n_bytes) = cut_one(&text, max_message_bytes);
        assert_eq!(
            (kept.as_str(), was_cut),
            (expected.as_str(), is_cut),
            "{} bytes cut to {max_message_bytes}",
            text.len()
        );
        assert!(kept.len() <= max_message_bytes);
        assert!(n_bytes >= kept.len());
        assert!(!kept.contains("ghp_"));
    }
}

#[test]
fn the_excerpt_is_bounded_in_messages_and_bytes() {
    /// Returns a linear session of `n` user messages, message `k` being `text(k)`.
    fn session(n: usize, text: &dyn Fn(usize) -> String) -> String {
        let lines: Vec<String> = (0..n)
            .map(|k| {
                let parent = (k > 0).then(|| format!("m{}", k - 1));
                user(&format!("m{k}"), parent.as_deref(), &text(k))
            })
            .collect();
        jsonl(&lines)
    }
    let defaults = HandoffOptions::default();
    // (messages, their text, options) -> (ids shown, bytes of each shown text).
    let check = |n: usize,
                 text: &dyn Fn(usize) -> String,
                 options: &HandoffOptions,
                 ids: &[usize],
                 sizes: &[usize]| {
        let handoff = handoff_in_memory(&session(n, text), options);
        let shown_ids: Vec<String> = handoff
            .excerpt
            .messages
            .iter()
            .map(|message| message.entry_id.clone())
            .collect();
        let expected_ids: Vec<String> = ids.iter().map(|k| format!("m{k}")).collect();
        assert_eq!(shown_ids, expected_ids, "n={n} {options:?}");
        let shown_sizes: Vec<usize> = handoff
            .excerpt
            .messages
            .iter()
            .map(|message| message.text.len())
            .collect();
        assert_eq!(shown_sizes, sizes, "n={n} {options:?}");
        assert_eq!(handoff.excerpt.n_bytes, sizes.iter().sum::<usize>());
        assert_eq!(handoff.excerpt.n_available, n);
        assert!(handoff.excerpt.n_bytes <= options.max_excerpt_bytes);
    };
    let short = |k: usize| format!("message {k}");
    // At most 12, newest last.
    check(
        20,
        &short,
        &defaults,
        &(8..20).collect::<Vec<_>>(),
        &[9, 9, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10],
    );
    check(3, &short, &defaults, &[0, 1, 2], &[9, 9, 9]);
    // 12 full messages of 2 KiB are 24 KiB: the newest 8 fill the 16 KiB exactly.
    let full = |_: usize| "x".repeat(2048);
    check(
        12,
        &full,
        &defaults,
        &(4..12).collect::<Vec<_>>(),
        &[2048; 8],
    );
    // 2000-byte messages: 8 whole ones leave 384 bytes for a cut ninth.
    let almost = |_: usize| "y".repeat(2000);
    check(
        12,
        &almost,
        &defaults,
        &(3..12).collect::<Vec<_>>(),
        &[384, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000],
    );
    // A budget that ends inside a multibyte character: the ninth keeps 383 bytes.
    let wide = |k: usize| {
        if k == 3 {
            "y".repeat(383) + "é" + &"y".repeat(1614)
        } else {
            "y".repeat(2000)
        }
    };
    check(
        12,
        &wide,
        &defaults,
        &(3..12).collect::<Vec<_>>(),
        &[383, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000],
    );
    // A budget too small for the start of the next message stops the excerpt.
    let emoji = |k: usize| {
        if k == 3 {
            "😀".repeat(10)
        } else {
            "y".repeat(2000)
        }
    };
    let tight = HandoffOptions {
        max_excerpt_bytes: 8 * 2000 + 3,
        ..HandoffOptions::default()
    };
    check(12, &emoji, &tight, &(4..12).collect::<Vec<_>>(), &[2000; 8]);
    // Settable limits, and zero.
    let few = HandoffOptions {
        max_messages: 2,
        max_message_bytes: 4,
        max_excerpt_bytes: 100,
        ..HandoffOptions::default()
    };
    check(5, &short, &few, &[3, 4], &[4, 4]);
    let none = HandoffOptions {
        max_messages: 0,
        ..HandoffOptions::default()
    };
    check(5, &short, &none, &[], &[]);
    let no_bytes = HandoffOptions {
        max_excerpt_bytes: 0,
        ..HandoffOptions::default()
    };
    check(5, &short, &no_bytes, &[], &[]);
}

#[test]
fn only_the_active_branch_counts() {
    let lines = vec![
        user("u1", None, "root question"),
        assistant("a1", Some("u1"), "first answer"),
        user("u2", Some("a1"), "abandoned follow-up"),
        assistant("a2", Some("u2"), "abandoned answer"),
        user("u3", Some("a1"), "the follow-up kept"),
    ];
    let handoff = handoff_in_memory(&jsonl(&lines), &HandoffOptions::default());
    let shown: Vec<&str> = handoff
        .excerpt
        .messages
        .iter()
        .map(|message| message.text.as_str())
        .collect();
    assert_eq!(
        shown,
        ["root question", "first answer", "the follow-up kept"]
    );
}

#[test]
fn damage_is_a_warning_and_version_1_files_use_line_handles() {
    let contents = format!(
        "{}\n{}\nnot json\n{}\n",
        Header::new("v1").version(None),
        Entry::message(Message::user("hello")).at("2026-01-01T00:00:01.000Z"),
        Entry::message(Message::assistant(&[Block::text("hi")])).at("2026-01-01T00:00:02.000Z"),
    );
    let handoff = handoff_of(&contents, &HandoffOptions::default());
    let shown: Vec<(&str, &str)> = handoff
        .excerpt
        .messages
        .iter()
        .map(|message| (message.entry_id.as_str(), message.text.as_str()))
        .collect();
    assert_eq!(shown, [("line:2", "hello"), ("line:4", "hi")]);
    let lines: Vec<Option<u64>> = handoff
        .warnings
        .iter()
        .map(|warning| warning.line_no)
        .collect();
    assert!(lines.contains(&Some(3)), "{:?}", handoff.warnings);
    let mut out = Vec::new();
    write_json(&mut out, &handoff).expect("write");
    assert!(
        String::from_utf8(out)
            .expect("utf-8")
            .contains("\"lineNo\": 3")
    );
}

#[test]
fn a_blank_goal_is_none_and_a_long_goal_is_cut() {
    let contents = jsonl(&[user("u1", None, "hi")]);
    let blank = HandoffOptions {
        goal: Some(" \n ".into()),
        ..HandoffOptions::default()
    };
    assert_eq!(handoff_in_memory(&contents, &blank).goal, None);
    let long = HandoffOptions {
        goal: Some("g".repeat(2047) + "日"),
        ..HandoffOptions::default()
    };
    let goal = handoff_in_memory(&contents, &long).goal.expect("goal");
    assert_eq!(
        (goal.text.len(), goal.is_cut, goal.n_bytes),
        (2047, true, 2050)
    );
}

#[test]
fn paths_with_special_characters_are_quoted_in_the_resume_command() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("it's a session.jsonl");
    std::fs::write(&path, jsonl(&[user("u1", None, "hi")])).expect("write");
    let handoff = handoff_file(&path, &HandoffOptions::default()).expect("handoff");
    let quoted = path.to_str().expect("utf-8").replace('\'', r"'\''");
    assert_eq!(handoff.resume_command, format!("pi --session '{quoted}'"));
}

#[cfg(unix)]
#[test]
fn a_path_that_is_not_utf8_is_an_error() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"bad\xff.jsonl"));
    std::fs::write(&path, jsonl(&[user("u1", None, "hi")])).expect("write");
    let result = handoff_file(&path, &HandoffOptions::default());
    assert!(
        matches!(result, Err(HandoffError::NonUtf8Path { .. })),
        "{result:?}"
    );
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("gone.jsonl");
    let error = handoff_file(&path, &HandoffOptions::default()).expect_err("missing");
    let mut message = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    assert!(message.contains("gone.jsonl"), "{message}");
}

proptest::proptest! {
    /// Whatever the messages and limits, the excerpt holds at most `max_messages` messages,
    /// each at most `max_message_bytes`, together at most `max_excerpt_bytes`; every text is
    /// a prefix of the cleaned message; and no message is shown cut unless a limit cut it.
    #[test]
    fn bounds_hold(
        texts in proptest::collection::vec("( ghp_0123456789abcdefghijABCDEFGHIJ012345 |[a-zé日😀 \n]|\u{1b}\\[0m){0,60}", 0..20),
        max_messages in 0usize..15,
        max_message_bytes in 0usize..64,
        max_excerpt_bytes in 0usize..256,
    ) {
        let lines: Vec<String> = texts
            .iter()
            .enumerate()
            .map(|(k, text)| {
                let parent = (k > 0).then(|| format!("m{}", k - 1));
                if k % 2 == 0 {
                    user(&format!("m{k}"), parent.as_deref(), text)
                } else {
                    assistant(&format!("m{k}"), parent.as_deref(), text)
                }
            })
            .collect();
        let options = HandoffOptions { goal: None, max_messages, max_message_bytes, max_excerpt_bytes, max_goal_bytes: 0, max_document_bytes: usize::MAX };
        let handoff = handoff_in_memory(&jsonl(&lines), &options);
        let messages = &handoff.excerpt.messages;
        proptest::prop_assert!(messages.len() <= max_messages);
        let total: usize = messages.iter().map(|message| message.text.len()).sum();
        proptest::prop_assert!(total <= max_excerpt_bytes);
        proptest::prop_assert_eq!(total, handoff.excerpt.n_bytes);
        for message in messages {
            proptest::prop_assert!(message.text.len() <= max_message_bytes);
            proptest::prop_assert!(message.text.len() <= message.n_bytes);
            proptest::prop_assert_eq!(message.is_cut, message.text.len() < message.n_bytes);
            proptest::prop_assert!(!message.text.contains("ghp_"));
            proptest::prop_assert!(!message.text.contains(ESCAPE));
            proptest::prop_assert_eq!(message.text.matches('[').count(), message.text.matches(']').count());
        }
        // Newest last: the ids shown are the last ones of the session, in order.
        let ids: Vec<usize> = messages.iter().map(|message| message.entry_id[1..].parse().unwrap_or(usize::MAX)).collect();
        proptest::prop_assert!(ids.windows(2).all(|pair| pair[0] < pair[1]));
    }
}
