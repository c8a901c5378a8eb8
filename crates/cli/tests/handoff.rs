//! `pi-retrospect handoff` end to end: the Markdown and JSON documents, redaction, the
//! schema, and `--out` that never replaces a file unless forced and never writes anything but
//! the regular file asked for.

mod common;

use common::{binary, stdout_of};
use serde_json::Value;

const SECRET: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

fn session(dir: &std::path::Path) -> String {
    let path = dir.join("s.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"0199aaaa-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#.to_owned(),
        format!(
            r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"push with token {SECRET} please"}}}}"#
        ),
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"SECRET-THOUGHT"},{"type":"text","text":"Done."}],"provider":"p","model":"m"}}"#.to_owned(),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    path.display().to_string()
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

#[test]
fn out_never_replaces_a_file_unless_forced() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = session(dir.path());
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
    let path = session(dir.path());
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
