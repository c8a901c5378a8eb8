//! Issue 8: what the application layer guarantees every front end, checked through the binary:
//! error text that can never drive the terminal, and the one safe open (a FIFO or a symlink
//! where a session file should be is refused at once, never read and never waited on).

mod common;

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

/// Issue 8: an id holding `ESC ] 0 ; … BEL` reaches stderr escaped, not raw.
#[test]
fn error_messages_are_escaped() {
    let root = fixtures_root();
    let hostile = "\u{1b}]0;pwned\u{7}\u{202e}x";
    for command in ["show", "entries"] {
        let output = run_with_deadline(&[command, hostile, "--sessions-root", &root]);
        assert_eq!(output.status.code(), Some(1), "{command}");
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

/// Issue 8: a FIFO named like a session file is refused at once with its path and what it
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

/// Issue 8: a symlink where a session file should be is not followed.
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
