//! What the application layer guarantees every front end, checked through the binary:
//! error text that can never drive the terminal, and the one safe open (a FIFO or a symlink
//! where a session file should be is refused at once, never read and never waited on).

use crate::common;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::binary;

fn fixtures_root() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/sessions")
        .display()
        .to_string()
}

/// Runs the binary with `args`, killing it (and failing) if it has not exited in 20 s.
fn run_with_deadline(args: &[&str]) -> Output {
    let mut child = binary()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("pi-retrospect {args:?} blocked");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// An id holding `ESC ] 0 ; … BEL` reaches stderr escaped, not raw.
#[test]
fn error_messages_are_escaped() {
    let root = fixtures_root();
    let hostile = "\u{1b}]0;pwned\u{7}\u{202e}x";
    for command in ["show", "entries"] {
        let output = run_with_deadline(&[command, hostile, "--sessions-root", &root]);
        assert_eq!(output.status.code(), Some(2), "{command}");
        let stderr = String::from_utf8(output.stderr).expect("utf-8");
        assert!(
            !stderr.contains('\u{1b}') && !stderr.contains('\u{7}') && !stderr.contains('\u{202e}'),
            "{command}: raw control characters on stderr: {stderr:?}"
        );
        assert!(
            stderr.contains("\\u{1b}]0;pwned\\u{7}\\u{202e}x"),
            "{command}: {stderr:?}"
        );
        assert!(stderr.contains("no session has the id"), "{stderr}");
    }
}

/// A FIFO named like a session file is refused at once with its path and what it
/// is; the open itself can never block (no stat-then-open).
#[test]
fn a_fifo_session_path_is_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("s.jsonl");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(status.success());
    let path = fifo.display().to_string();
    for args in [
        vec!["show", path.as_str()],
        vec!["inspect", path.as_str(), "overview"],
        vec!["entries", path.as_str(), "--json"],
    ] {
        let output = run_with_deadline(&args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&path) && stderr.contains("is a FIFO, not a regular file"),
            "{args:?}: {stderr}"
        );
    }
}

/// A symlink where a session file should be is not followed.
#[test]
fn a_symlinked_session_path_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("real.jsonl");
    std::fs::write(
        &target,
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"cwd\":\"/w\"}\n",
    )
    .expect("write");
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let output = run_with_deadline(&["show", &link.display().to_string()]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is a symbolic link"), "{stderr}");
    let output = run_with_deadline(&["show", &target.display().to_string()]);
    assert_eq!(output.status.code(), Some(0), "{:?}", output);
}

/// `-` reads a session from standard input for the reading commands; a text that
/// is not a session is an error; `handoff` and `stats` need a file.
#[test]
fn a_session_on_standard_input() {
    use std::io::Write;
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../fixtures/pi-real/sessions/--tmp-pi-real-fixture-home-user-project--/2026-11-30T07-00-59-489Z_01a22b41-c1e1-73ac-b3e0-09602166f4c8.jsonl",
    );
    let bytes = std::fs::read(&file).expect("fixture");
    let piped = |args: &[&str], input: &[u8]| {
        let mut child = binary()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input)
            .expect("write");
        child.wait_with_output().expect("output")
    };
    let from_stdin = piped(&["entries", "-", "--json"], &bytes);
    assert_eq!(from_stdin.status.code(), Some(0));
    let from_file = binary()
        .args(["entries", &file.display().to_string(), "--json"])
        .output()
        .expect("run");
    let rows = |output: &Output| -> serde_json::Value {
        let document: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
        document["entries"].clone()
    };
    assert_eq!(rows(&from_stdin), rows(&from_file));
    let show = piped(&["show", "-"], &bytes);
    assert!(String::from_utf8_lossy(&show.stdout).contains("path: -"));
    let text = piped(&["show", "-"], b"hello\n");
    assert_eq!(text.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&text.stderr).contains("not a session file"));
    assert_eq!(piped(&["handoff", "-"], &bytes).status.code(), Some(2));
}
