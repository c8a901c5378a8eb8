//! `pi-retrospect handoff` end to end: the Markdown and JSON documents, redaction, the
//! schema, and `--out` that never replaces a file unless forced and never writes anything but
//! the regular file asked for.

use crate::common;

use common::{binary, stdout_of};
use pi_retrospect_testkit::{Block, Entry, Header, Message, Usage, write_session_file};
use serde_json::Value;

const SECRET: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

fn session(dir: &std::path::Path) -> String {
    let header = Header::new("0199aaaa-0000-7000-8000-000000000001").cwd("/w");
    let answer = Message::assistant(&[Block::thinking("SECRET-THOUGHT"), Block::text("Done.")])
        .provider("p")
        .model("m");
    let lines = [
        Entry::message(Message::user(&format!("push with token {SECRET} please")))
            .id("a1")
            .parent(None)
            .at("2026-01-01T00:00:01.000Z"),
        Entry::message(answer)
            .id("a2")
            .parent(Some("a1"))
            .at("2026-01-01T00:00:02.000Z"),
    ];
    write_session_file(&dir.join("s.jsonl"), &header, lines)
        .display()
        .to_string()
}

#[test]
fn markdown_and_json_are_redacted_and_bounded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = session(dir.path());
    let text = stdout_of(
        &binary()
            .args(["handoff", &path, "--goal", "ship it"])
            .output()
            .expect("run"),
    );
    assert!(
        !text.contains(SECRET) && !text.contains("SECRET-THOUGHT"),
        "{text}"
    );
    assert!(text.contains("[redacted: github-token]"), "{text}");
    assert!(
        text.contains("ship it") && text.contains("pi --session"),
        "{text}"
    );

    let json = stdout_of(
        &binary()
            .args(["handoff", &path, "--json"])
            .output()
            .expect("run"),
    );
    let document: Value = serde_json::from_str(&json).expect("JSON");
    let schema: Value = serde_json::from_str(&stdout_of(
        &binary().args(["schema", "handoff"]).output().expect("run"),
    ))
    .expect("schema JSON");
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    assert!(validator.is_valid(&document), "{json}");
    assert!(!json.contains(SECRET), "{json}");

    let one = stdout_of(
        &binary()
            .args(["handoff", &path, "--json", "--max-messages", "1"])
            .output()
            .expect("run"),
    );
    let one: Value = serde_json::from_str(&one).expect("JSON");
    assert_eq!(one["excerpt"]["messages"].as_array().map(Vec::len), Some(1));
}

/// Returns a new directory `loose` in `dir`, for a session file outside every store (whose
/// own directory `--out` refuses).
fn loose(dir: &std::path::Path) -> std::path::PathBuf {
    let loose = dir.join("loose");
    std::fs::create_dir_all(&loose).expect("mkdir");
    loose
}

/// A loose session file's own directory is refused by `--out`, whatever the flags.
#[test]
fn out_never_writes_beside_a_loose_session() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = session(dir.path());
    let out = dir.path().join("handoff.md");
    let output = binary()
        .args([
            "handoff",
            &path,
            "--out",
            &out.display().to_string(),
            "--force",
        ])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("beside the session file"), "{stderr}");
    assert!(!out.exists());
}

/// `--out NAME/` asks for a directory: over a regular file it is refused, not written.
#[test]
fn out_with_a_trailing_slash_never_writes_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = session(&loose(dir.path()));
    let out = dir.path().join("e2.md");
    std::fs::write(&out, "keep me").expect("write");
    let output = binary()
        .args([
            "handoff",
            &path,
            "--out",
            &format!("{}/", out.display()),
            "--force",
        ])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("e2.md/"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&out).expect("read"), "keep me");
}

#[test]
fn out_never_replaces_a_file_unless_forced() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = session(&loose(dir.path()));
    let out = dir.path().join("handoff.md");
    std::fs::write(&out, "keep me").expect("write");
    let output = binary()
        .args(["handoff", &path, "--out", &out.display().to_string()])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("already exists"));
    assert_eq!(std::fs::read_to_string(&out).expect("read"), "keep me");
    stdout_of(
        &binary()
            .args([
                "handoff",
                &path,
                "--out",
                &out.display().to_string(),
                "--force",
            ])
            .output()
            .expect("run"),
    );
    assert!(
        std::fs::read_to_string(&out)
            .expect("read")
            .starts_with("# Pi session handoff")
    );
}

/// `--out --force` never writes into a session store or over a session file, so a typo
/// cannot destroy a session's history.
#[test]
fn out_never_writes_into_the_store_or_over_a_session() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("store");
    let project = root.join("--w--");
    std::fs::create_dir_all(&project).expect("mkdir");
    let path = session(&project);
    let original = std::fs::read(&path).expect("read");
    let outside = dir.path().join("copy.jsonl");
    std::fs::write(&outside, &original).expect("write");
    let root_text = root.display().to_string();
    let new_in_store = project.join("handoff.md").display().to_string();
    let outside_text = outside.display().to_string();
    let link = dir.path().join("link.md");
    std::os::unix::fs::symlink(&path, &link).expect("symlink");
    let link_text = link.display().to_string();
    for (out, reason) in [
        (path.as_str(), "inside the session store"),
        (new_in_store.as_str(), "inside the session store"),
        (outside_text.as_str(), "is a Pi session file"),
        (link_text.as_str(), "symbolic link"),
    ] {
        let output = binary()
            .args([
                "handoff",
                "--sessions-root",
                &root_text,
                &path,
                "--out",
                out,
                "--force",
            ])
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{out}: {stderr}");
        assert!(
            stderr.contains(out) && stderr.contains(reason),
            "{out}: {stderr}"
        );
    }
    assert_eq!(std::fs::read(&path).expect("read"), original);
    assert_eq!(std::fs::read(&outside).expect("read"), original);
    assert!(!project.join("handoff.md").exists());

    // `--out -` is standard output, not a file named `-`.
    let output = binary()
        .current_dir(dir.path())
        .args(["handoff", &path, "--out", "-"])
        .output()
        .expect("run");
    assert!(stdout_of(&output).starts_with("# Pi session handoff"));
    assert!(!dir.path().join("-").exists());
}

/// The store (in Pi's layout) a session path is read from is protected even when no store flag
/// names it, and
/// so is the archive beside a store, whether or not `--include-archive` was given.
#[test]
fn out_never_writes_into_the_store_of_the_session_read_or_an_archive() {
    let dir = tempfile::tempdir().expect("temp dir");
    let elsewhere = dir.path().join("elsewhere");
    let project = elsewhere.join("--w--");
    std::fs::create_dir_all(&project).expect("mkdir");
    let path = session(&project);
    let root = dir.path().join("store");
    std::fs::create_dir_all(root.join("--w--")).expect("mkdir");
    let archive = dir.path().join("sessions-archive");
    std::fs::create_dir_all(&archive).expect("mkdir");
    let root_text = root.display().to_string();
    let targets = [
        project.join("evil.jsonl"),
        elsewhere.join("beside.md"),
        archive.join("archived.md"),
    ];
    for target in &targets {
        let target_text = target.display().to_string();
        let output = binary()
            .env("HOME", dir.path())
            .args(["handoff", "-q", "--sessions-root", &root_text, &path])
            .args(["--out", &target_text])
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{target_text}: {stderr}");
        assert!(
            stderr.contains("inside the session store"),
            "{target_text}: {stderr}"
        );
        assert!(!target.exists(), "{target_text}");
    }
    // Beside the stores is still fine.
    let fine = dir.path().join("handoff.md");
    let output = binary()
        .env("HOME", dir.path())
        .args(["handoff", "-q", "--sessions-root", &root_text, &path])
        .args(["--out", &fine.display().to_string()])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(fine.exists());
}

/// A file that is not a session is refused as `show` refuses it (exit 1,
/// "not a session file"), and `--max-messages 0` is refused as MCP's `maxMessages: 0` is.
#[test]
fn not_a_session_and_zero_limits_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("notsession.jsonl");
    std::fs::write(&path, "root:x:0:0:root:/root:/bin/bash\n").expect("write");
    let path = path.display().to_string();
    let show = binary().args(["show", &path]).output().expect("run");
    let handoff = binary().args(["handoff", &path]).output().expect("run");
    assert_eq!(handoff.status.code(), Some(1));
    assert_eq!(show.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&handoff.stderr),
        String::from_utf8_lossy(&show.stderr)
    );
    assert!(String::from_utf8_lossy(&handoff.stderr).contains("not a session file"));
    assert!(handoff.stdout.is_empty());

    let session = session(dir.path());
    for flag in ["--max-messages", "--max-message-bytes", "--max-bytes"] {
        let output = binary()
            .args(["handoff", &session, flag, "0"])
            .output()
            .expect("run");
        assert_eq!(output.status.code(), Some(2), "{flag}");
    }
}

/// `--out FIFO --force` is refused at once (opening a FIFO for writing would wait for a
/// reader forever), as are a socket and a device.
#[test]
fn out_refuses_a_fifo_or_device_without_blocking() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = session(&loose(dir.path()));
    let fifo = dir.path().join("fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(status.success());
    for (out, words) in [
        (fifo.display().to_string(), "a FIFO"),
        ("/dev/null".to_owned(), "a character device"),
    ] {
        let output = binary()
            .args(["handoff", &path, "--out", &out, "--force"])
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{out}: {stderr}");
        assert!(stderr.contains(&out) && stderr.contains(words), "{stderr}");
    }
}

/// While another process flips `--out`'s target between a regular file and a symbolic link to
/// a session file, `handoff --out --force` runs again and again: the session is never changed.
#[test]
fn out_flipped_to_a_symlink_never_reaches_the_session() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let dir = tempfile::tempdir().expect("temp dir");
    let store = dir.path().join("store");
    let project = store.join("--w--");
    std::fs::create_dir_all(&project).expect("mkdir");
    let path = session(&project);
    let original = std::fs::read(&path).expect("read");
    let target = dir.path().join("handoff.md");
    let is_done = Arc::new(AtomicBool::new(false));
    let flipper = {
        let is_done = Arc::clone(&is_done);
        let target = target.clone();
        let session = std::path::PathBuf::from(&path);
        std::thread::spawn(move || {
            while !is_done.load(Ordering::Relaxed) {
                let _ = std::fs::remove_file(&target);
                let _ = std::os::unix::fs::symlink(&session, &target);
                let _ = std::fs::remove_file(&target);
                let _ = std::fs::write(&target, "plain");
            }
        })
    };
    let target_text = target.display().to_string();
    let root_text = store.display().to_string();
    for _ in 0..60 {
        let output = binary()
            .args([
                "handoff",
                "--sessions-root",
                &root_text,
                &path,
                "--out",
                &target_text,
                "--force",
            ])
            .output()
            .expect("run");
        // Written over the plain file, or refused at the link: never anything else.
        assert!(
            matches!(output.status.code(), Some(0 | 2)),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(std::fs::read(&path).expect("read"), original);
    }
    is_done.store(true, Ordering::Relaxed);
    flipper.join().expect("flipper");
    assert_eq!(std::fs::read(&path).expect("read"), original);
    assert_eq!(std::fs::read_dir(&project).expect("list").count(), 1);
}

/// A session of work as Pi writes it: a task, an edit, a compaction, a failing tool call, a
/// failed `!` command and a failed last reply.
fn work_session(project: &std::path::Path) -> String {
    let at = |second: u32| format!("2026-11-30T19:15:{second:02}.000Z");
    let millis = |second: u32| 1796066100000 + u64::from(second) * 1000;
    let entry = |message: Message, id: &str, parent: Option<&str>, second: u32| {
        Entry::message(message.timestamp(millis(second)))
            .id(id)
            .parent(parent)
            .at(&at(second))
    };
    let assistant = |content: &[Block], stop_reason: &str| {
        Message::assistant(content)
            .api("anthropic-messages")
            .provider("anthropic")
            .model("claude-sonnet-4-5")
            .usage(Usage::tokens(1, 1).cost(0.0))
            .stop_reason(stop_reason)
    };
    let result = |call_id: &str, tool: &str, text: &str, is_error: bool| {
        Message::tool_result(call_id, tool, text)
            .details("{}")
            .is_error(is_error)
    };
    let header = Header::new("01a22de2-540d-7602-8b63-cd7f53f64b36")
        .timestamp("2026-11-30T19:15:37.102Z")
        .cwd("/w");
    let edit = Block::tool_call(
        "c1",
        "edit",
        r#"{"path":"src/hook.rs","edits":[{"oldText":"a","newText":"b"}]}"#,
    );
    let test = Block::tool_call("c2", "bash", r#"{"command":"cargo test"}"#);
    let lines = [
        entry(
            Message::user_blocks(&[Block::text("Fix the webhook; X-API-Key: 7f3a9c2e1b4d")]),
            "u1",
            None,
            38,
        ),
        entry(assistant(&[edit], "toolUse"), "a1", Some("u1"), 39),
        entry(result("c1", "edit", "Edited", false), "t1", Some("a1"), 40),
        Entry::compaction("## Goal\nFix the webhook.", "u1", 9000)
            .id("k1")
            .parent(Some("t1"))
            .at(&at(41)),
        entry(Message::user("Test it."), "u2", Some("k1"), 42),
        entry(assistant(&[test], "toolUse"), "a2", Some("u2"), 43),
        entry(
            result(
                "c2",
                "bash",
                "test hook ... FAILED\n\nCommand exited with code 101",
                true,
            ),
            "t2",
            Some("a2"),
            44,
        ),
        entry(
            Message::bash_execution(
                "mysql -uroot -pS3cr3tPass -e 'select 1'",
                "ERROR 2002 (HY000): Can't connect\n",
                Some(1),
            )
            .truncated(false),
            "b1",
            Some("t2"),
            45,
        ),
        entry(
            assistant(&[], "error").error_message("529 overloaded_error"),
            "a3",
            Some("b1"),
            46,
        ),
    ];
    let path = project.join("2026-11-30T19-15-37-102Z_01a22de2-540d-7602-8b63-cd7f53f64b36.jsonl");
    write_session_file(&path, &header, lines)
        .display()
        .to_string()
}

/// The text, `--json` and MCP `session_handoff` carry the same work: the task, the compaction
/// summary, the files touched and the failures with their error text, redacted alike.
#[test]
fn text_json_and_mcp_carry_the_same_work() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;

    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("sessions");
    let project = root.join("--w--");
    std::fs::create_dir_all(&project).expect("mkdir");
    let path = work_session(&project);
    let root_text = root.display().to_string();
    let json = stdout_of(
        &binary()
            .args(["handoff", "--sessions-root", &root_text, &path, "--json"])
            .output()
            .expect("run"),
    );
    let document: Value = serde_json::from_str(&json).expect("JSON");
    let schema: Value = serde_json::from_str(&stdout_of(
        &binary().args(["schema", "handoff"]).output().expect("run"),
    ))
    .expect("schema JSON");
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    assert!(validator.is_valid(&document), "{json}");
    assert_eq!(
        document["task"]["text"],
        "Fix the webhook; X-API-Key: [redacted: api-key-header]"
    );
    assert_eq!(document["compaction"]["text"], "## Goal\nFix the webhook.");
    assert_eq!(document["filesTouched"][0]["path"], "src/hook.rs");
    let failures: Vec<(&str, &str)> = document["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .map(|failure| {
            (
                failure["kind"].as_str().unwrap_or(""),
                failure["text"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        failures,
        [
            (
                "toolError",
                "test hook ... FAILED\n\nCommand exited with code 101"
            ),
            ("commandFailed", "ERROR 2002 (HY000): Can't connect\n"),
            ("replyError", "529 overloaded_error"),
        ]
    );
    assert_eq!(
        document["failures"][1]["call"],
        "!mysql -uroot -p[redacted: command-line-password] -e 'select 1'"
    );
    assert!(!json.contains("S3cr3tPass") && !json.contains("7f3a9c2e1b4d"));

    let text = stdout_of(
        &binary()
            .args(["handoff", "--sessions-root", &root_text, &path])
            .output()
            .expect("run"),
    );
    for expected in [
        "## Original task\n",
        "> Fix the webhook; X-API-Key: [redacted: api-key-header]\n",
        "## Latest compaction summary\n",
        "- `src/hook.rs` (edit)\n",
        "### tool error (bash), ",
        "- Call: `bash command=\"cargo test\"`\n",
        "### command failed, ",
        "- Exit code: 1\n",
        "### reply failed, ",
        "> 529 overloaded_error\n",
    ] {
        assert!(text.contains(expected), "{expected:?} not in {text}");
    }
    assert!(!text.contains("S3cr3tPass") && !text.contains("7f3a9c2e1b4d"));

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let structured = runtime.block_on(async {
        let mut command = common::binary();
        command.arg("mcp").arg("--sessions-root").arg(&root);
        let transport =
            rmcp::transport::TokioChildProcess::new(tokio::process::Command::from(command))
                .expect("spawn the server");
        let client = ().serve(transport).await.expect("MCP handshake");
        let arguments = match serde_json::json!({ "sessionPath": path }) {
            Value::Object(object) => object,
            _ => unreachable!("a JSON object literal"),
        };
        let result = client
            .call_tool(
                CallToolRequestParams::new("session_handoff".to_owned()).with_arguments(arguments),
            )
            .await
            .expect("session_handoff");
        let _ = client.cancel().await;
        result.structured_content.expect("structured content")
    });
    // Every MCP result states its own size; the command's document does not.
    let mut structured = structured;
    if let Some(object) = structured.as_object_mut() {
        let n_bytes = object.remove("bytes");
        assert!(
            n_bytes.is_some_and(|n| n.is_u64()),
            "the page states its size"
        );
        assert!(
            object
                .remove("sizeClass")
                .is_some_and(|class| class.is_string())
        );
    }
    assert_eq!(structured, document);
}
