//! The work a handoff carries on sessions shaped as Pi 1.6 writes them: the original task,
//! the latest compaction summary, the files `edit` and `write` calls touched, and the
//! failures of the last turns with their error text, each redacted and bounded.

use std::path::Path;

use pi_retrospect_handoff::{
    FailureKind, Handoff, HandoffOptions, MAX_FAILURE_BYTES, MAX_FAILURES, MAX_FILES,
    MAX_SUMMARY_BYTES, MAX_TASK_BYTES, handoff,
};
use pi_retrospect_testkit::{Block, Entry, Header, Message, Usage, jsonl};
use pi_retrospect_transcript::Transcript;

/// Builds the lines of a session, each entry the child of the one before.
struct Session {
    lines: Vec<String>,
    n_entries: u32,
}

impl Session {
    fn new() -> Session {
        let header = Header::new("01a22de2-540d-7602-8b63-cd7f53f64b36")
            .timestamp("2026-11-30T19:15:37.102Z")
            .cwd("/tmp/project");
        Session {
            lines: vec![header.to_string()],
            n_entries: 0,
        }
    }

    fn push(&mut self, entry: Entry) -> String {
        let parent = (self.n_entries > 0).then(|| format!("e{:04}", self.n_entries));
        self.n_entries += 1;
        let id = format!("e{:04}", self.n_entries);
        let entry = entry
            .id(&id)
            .parent(parent.as_deref())
            .at(&format!("2026-11-30T19:{:02}:00.000Z", self.n_entries % 60));
        self.lines.push(entry.to_string());
        id
    }

    fn message(&mut self, message: Message) -> String {
        self.push(Entry::message(message))
    }

    fn user(&mut self, text: &str) -> String {
        self.message(Message::user_blocks(&[Block::text(text)]).timestamp(1796066137123))
    }

    /// An assistant message as Pi writes it, with `content` blocks and a stop reason.
    fn assistant(&mut self, content: &[Block], stop_reason: &str, error: Option<&str>) -> String {
        let message = Message::assistant(content)
            .api("anthropic-messages")
            .provider("anthropic")
            .model("claude-sonnet-4-5")
            .usage(Usage::tokens(10, 5).cost(0.0))
            .stop_reason(stop_reason);
        let message = match error {
            Some(error) => message.error_message(error),
            None => message,
        };
        self.message(message.timestamp(1796066137200))
    }

    /// A call `id` of tool `name` with `arguments` (JSON text).
    fn tool_call(&mut self, id: &str, name: &str, arguments: &str) -> String {
        self.assistant(&[Block::tool_call(id, name, arguments)], "toolUse", None)
    }

    fn tool_result(&mut self, call_id: &str, name: &str, text: &str, is_error: bool) -> String {
        self.message(
            Message::tool_result(call_id, name, text)
                .details("{}")
                .is_error(is_error)
                .timestamp(1796066137300),
        )
    }

    fn command(&mut self, command: &str, output: &str, exit_code: Option<i64>) -> String {
        self.message(
            Message::bash_execution(command, output, exit_code)
                .truncated(false)
                .timestamp(1796066137400),
        )
    }

    fn compaction(&mut self, summary: &str, first_kept: &str) -> String {
        self.push(Entry::compaction(summary, first_kept, 50000).member(
            "details",
            r#"{"readFiles":["Cargo.toml"],"modifiedFiles":["src/webhook.rs"]}"#,
        ))
    }

    fn handoff(&self, options: &HandoffOptions) -> Handoff {
        let contents = jsonl(&self.lines);
        let transcript = Transcript::from_bytes(contents.into_bytes());
        handoff(&transcript, Path::new("/s/--p--/s.jsonl"), options).expect("handoff")
    }
}

/// A session of real work: edits, a failing test run, a compaction, a failed `!` command, a
/// provider error and an aborted reply.
fn work_session() -> Session {
    let mut session = Session::new();
    let task = session.user("Fix the flaky webhook test; the staging password is Tr0ub4dor&3");
    session.assistant(
        &[
            Block::thinking("Look at the handler first."),
            Block::text("I will fix the handler and add a test."),
            Block::tool_call(
                "call_edit_1",
                "edit",
                r#"{"path":"src/webhook.rs","edits":[{"oldText":"a","newText":"b"}]}"#,
            ),
            Block::tool_call(
                "call_write_1",
                "write",
                r##"{"path":"tests/webhook.rs","content":"#[test] fn t() {}"}"##,
            ),
            Block::tool_call("call_read_1", "read", r#"{"path":"Cargo.toml"}"#),
        ],
        "toolUse",
        None,
    );
    session.tool_result("call_edit_1", "edit", "Edited src/webhook.rs", false);
    session.tool_result("call_write_1", "write", "Wrote tests/webhook.rs", false);
    session.tool_result(
        "call_read_1",
        "read",
        "ENOENT: no such file or directory, access 'Cargo.toml'",
        true,
    );
    session.compaction(
        "## Goal\nFix the flaky webhook test.\n## Progress\nHandler edited; token ghp_0123456789abcdefghijABCDEFGHIJ012345 used.",
        &task,
    );
    session.user("Run the tests.");
    session.tool_call("call_bash_1", "bash", r#"{"command":"cargo test webhook"}"#);
    session.tool_result(
        "call_bash_1",
        "bash",
        "running 1 test\ntest webhook ... FAILED\n\nCommand exited with code 101",
        true,
    );
    session.tool_call(
        "call_edit_2",
        "edit",
        r#"{"path":"src/webhook.rs","oldText":"b","newText":"c"}"#,
    );
    session.tool_result("call_edit_2", "edit", "Edited src/webhook.rs", false);
    session.command(
        "cargo test",
        "error: test failed, to rerun pass `--lib`\n",
        Some(101),
    );
    session.user("Why does it fail?");
    session.assistant(
        &[],
        "error",
        Some("overloaded_error: Overloaded (key sk-ant-api03-AbCdEf0123456789_-AbCdEf0123456789AbCdEf-xyzAA)"),
    );
    session.user("Go on.");
    session.assistant(&[Block::text("Looking at the")], "aborted", None);
    session
}

/// A failure's kind, tool, call, exit code and text.
type FailureRow<'a> = (
    FailureKind,
    Option<&'a str>,
    Option<&'a str>,
    Option<i64>,
    &'a str,
);

#[test]
fn the_work_is_carried() {
    let handoff = work_session().handoff(&HandoffOptions::default());

    let task = handoff.task.as_ref().expect("task");
    assert_eq!(task.entry_id, "e0001");
    assert_eq!(
        task.text,
        "Fix the flaky webhook test; the staging password is [redacted: prose-password]"
    );

    let summary = handoff.compaction.as_ref().expect("compaction");
    assert_eq!(summary.entry_id, "e0006");
    assert_eq!(
        summary.text,
        "## Goal\nFix the flaky webhook test.\n## Progress\nHandler edited; token [redacted: github-token] used."
    );

    let files: Vec<(&str, Vec<&str>, usize)> = handoff
        .files_touched
        .iter()
        .map(|file| {
            (
                file.path.as_str(),
                file.tools.iter().map(String::as_str).collect(),
                file.n_calls,
            )
        })
        .collect();
    assert_eq!(
        files,
        [
            ("tests/webhook.rs", vec!["write"], 1),
            ("src/webhook.rs", vec!["edit"], 2),
        ]
    );
    assert_eq!(handoff.n_files_touched, 2);

    // Since the third-last user message ("Run the tests."): the failed read before it is out.
    let failures: Vec<FailureRow<'_>> = handoff
        .failures
        .iter()
        .map(|failure| {
            (
                failure.kind,
                failure.tool.as_deref(),
                failure.call.as_deref(),
                failure.exit_code,
                failure.text.as_str(),
            )
        })
        .collect();
    assert_eq!(
        failures,
        [
            (
                FailureKind::ToolError,
                Some("bash"),
                Some("bash command=\"cargo test webhook\""),
                None,
                "running 1 test\ntest webhook ... FAILED\n\nCommand exited with code 101",
            ),
            (
                FailureKind::CommandFailed,
                None,
                Some("!cargo test"),
                Some(101),
                "error: test failed, to rerun pass `--lib`\n",
            ),
            (
                FailureKind::ReplyError,
                None,
                None,
                None,
                "overloaded_error: Overloaded (key [redacted: anthropic-api-key])",
            ),
            (FailureKind::ReplyAborted, None, None, None, ""),
        ]
    );
    assert_eq!(handoff.n_failures, 4);

    // Every marker the document shows is counted: the task's (twice, as the task and in the
    // excerpt), the summary's and the reply error's.
    let document = serde_json::to_string(&handoff).expect("serialize");
    assert_eq!(
        u64::try_from(document.matches("[redacted: ").count()).expect("count"),
        handoff.redactions.total
    );
    assert_eq!(handoff.redactions.by_kind.get("prose-password"), Some(&2));
    assert_eq!(handoff.redactions.by_kind.get("github-token"), Some(&1));
    assert_eq!(
        handoff.redactions.by_kind.get("anthropic-api-key"),
        Some(&1)
    );
    for secret in [
        "Tr0ub4dor",
        "ghp_0123",
        "sk-ant-api03",
        "Look at the handler",
    ] {
        assert!(!document.contains(secret), "{secret} in {document}");
    }
    // The aborted reply's partial text is still the newest message of the excerpt.
    assert_eq!(
        handoff
            .excerpt
            .messages
            .last()
            .map(|message| message.text.as_str()),
        Some("Looking at the")
    );
}

#[test]
fn a_message_a_context_edit_omits_is_left_out_of_the_work_too() {
    let mut session = Session::new();
    let task = session.user("my password is hunter2, fix the login");
    session.push(
        Entry::of_type("context_edit")
            .text_member("targetId", &task)
            .member("replacement", "null"),
    );
    session.user("Fix the login page.");
    let handoff = session.handoff(&HandoffOptions::default());
    assert_eq!(
        handoff.task.as_ref().map(|task| task.text.as_str()),
        Some("Fix the login page.")
    );
}

/// A failed `!!` command (kept out of the model's context) keeps its `!!` mark, and a failed
/// `!` command its `!`.
#[test]
fn a_failed_command_keeps_its_bang_mark() {
    let mut session = Session::new();
    session.user("Build it.");
    session.command("make", "make: *** [all] Error 2\n", Some(2));
    session.message(
        Message::bash_execution("ls /nope", "ls: cannot access '/nope'\n", Some(2))
            .truncated(false)
            .member("excludeFromContext", "true")
            .timestamp(1796066137500),
    );
    let handoff = session.handoff(&HandoffOptions::default());
    let calls: Vec<Option<&str>> = handoff
        .failures
        .iter()
        .map(|failure| failure.call.as_deref())
        .collect();
    assert_eq!(calls, [Some("!make"), Some("!!ls /nope")]);
}

#[test]
fn each_part_of_the_work_is_bounded() {
    let mut session = Session::new();
    session.user(&format!("task {}", "t".repeat(10 * MAX_TASK_BYTES)));
    session.compaction(&"s".repeat(10 * MAX_SUMMARY_BYTES), "e0001");
    for number in 0..MAX_FILES + 10 {
        session.tool_call(
            &format!("call_{number}"),
            "write",
            &format!(r#"{{"path":"src/file_{number}.rs","content":"x"}}"#),
        );
    }
    session.user("one");
    session.user("two");
    session.user("three");
    for number in 0..MAX_FAILURES + 12 {
        let output = format!(
            "{}\nerror {number}: the end",
            "o".repeat(4 * MAX_FAILURE_BYTES)
        );
        session.command("make", &output, Some(2));
    }
    let handoff = session.handoff(&HandoffOptions::default());

    let task = handoff.task.as_ref().expect("task");
    assert!(task.is_cut && task.text.len() <= MAX_TASK_BYTES && task.text.starts_with("task "));
    let summary = handoff.compaction.as_ref().expect("summary");
    assert!(summary.is_cut && summary.text.len() <= MAX_SUMMARY_BYTES);
    assert_eq!(summary.n_bytes, 10 * MAX_SUMMARY_BYTES);

    assert_eq!(handoff.files_touched.len(), MAX_FILES);
    assert_eq!(handoff.n_files_touched, MAX_FILES + 10);
    // The most recently touched are kept, least recent first.
    assert_eq!(
        handoff.files_touched.last().map(|file| file.path.as_str()),
        Some(format!("src/file_{}.rs", MAX_FILES + 9).as_str())
    );

    assert_eq!(handoff.failures.len(), MAX_FAILURES);
    assert_eq!(handoff.n_failures, MAX_FAILURES + 12);
    for failure in &handoff.failures {
        // Output keeps its end, where the error is.
        assert!(failure.is_cut && failure.text.len() <= MAX_FAILURE_BYTES);
        assert!(failure.text.ends_with(": the end"), "{}", failure.text);
    }
    assert_eq!(
        handoff.failures.last().map(|failure| failure.text.as_str()),
        Some(
            format!(
                "{}\nerror {}: the end",
                "o".repeat(
                    MAX_FAILURE_BYTES - format!("\nerror {}: the end", MAX_FAILURES + 11).len()
                ),
                MAX_FAILURES + 11
            )
            .as_str()
        )
    );

    // A tight document bound drops files first, then messages, then failures.
    let tight = HandoffOptions {
        max_document_bytes: 16 * 1024,
        ..HandoffOptions::default()
    };
    let handoff = session.handoff(&tight);
    let n_bytes = serde_json::to_vec(&handoff).expect("serialize").len();
    assert!(n_bytes <= 16 * 1024, "{n_bytes}");
    assert!(handoff.files_touched.is_empty());
    assert!(!handoff.failures.is_empty());
    let document = serde_json::to_string(&handoff).expect("serialize");
    assert_eq!(
        u64::try_from(document.matches("[redacted: ").count()).expect("count"),
        handoff.redactions.total
    );
}

#[test]
fn a_token_split_across_two_text_blocks_is_redacted_in_the_excerpt() {
    let mut session = Session::new();
    session.user("Push it.");
    session.assistant(
        &[
            Block::text("Pushing with ghp_0123456789abcdefghij"),
            Block::text("ABCDEFGHIJ012345 now."),
        ],
        "stop",
        None,
    );
    let handoff = session.handoff(&HandoffOptions::default());
    assert_eq!(
        handoff
            .excerpt
            .messages
            .last()
            .map(|message| message.text.as_str()),
        Some("Pushing with [redacted: github-token] now.")
    );
}
