//! Helpers shared by the binary's end-to-end tests: a command that can never read the
//! developer's own store, output checks, and golden files (`BLESS=1` re-blesses).

#![allow(
    dead_code,
    reason = "each test binary uses its own subset of these helpers"
)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Returns a `pi-retrospect` command with Pi's environment cleared, a `$HOME` that does not
/// exist (so no summary cache: one is made only under a home that exists), no colour and UTC
/// as the local timezone.
pub fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pi-retrospect"));
    command
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .env_remove("PI_SESSION_FILE")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("PI_RETROSPECT_NO_CACHE")
        .env("HOME", "/nonexistent-home-for-tests")
        .env("NO_COLOR", "1")
        .env("TZ", "UTC");
    command
}

/// Returns the standard output of a successful run, or fails with its exit status and stderr.
pub fn stdout_of(output: &Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}, stderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).expect("utf-8 output")
}

/// Compares `actual` with the golden file `name`, or rewrites it when `BLESS` is set.
pub fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, actual).expect("bless golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error} (run with BLESS=1)", path.display()));
    assert_eq!(
        actual, expected,
        "golden file {name} differs (BLESS=1 re-blesses)"
    );
}

/// Runs `command` with its standard output closed before it writes, and checks that it exits
/// 0 without a word on standard error, as `| head` needs.
pub fn assert_quiet_on_a_closed_pipe(command: &mut Command, what: &str) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("wait");
    assert_eq!(output.status.code(), Some(0), "{what}");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "", "{what}");
}
