//! End-to-end tests of the `pi-retrospect` binary: golden text and JSON output on the committed
//! fixture stores (the absolute root redacted to `[ROOT]`; re-bless with `BLESS=1`), store
//! resolution from the environment, and exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common;
use common::{binary, golden, stdout_of};
use pi_retrospect_testkit::Header;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .canonicalize()
        .expect("fixtures exist")
}

fn run(args: &[&str]) -> Output {
    binary().args(args).output().expect("run binary")
}

fn redacted(text: &str, root: &Path) -> String {
    text.replace(&root.display().to_string(), "[ROOT]")
}

#[test]
fn golden_list_outputs() {
    for (store, stem) in [("sessions", "list"), ("beyond/sessions", "list-beyond")] {
        let root = fixtures().join(store);
        let root_arg = root.display().to_string();
        let text = stdout_of(&run(&["list", "--sessions-root", &root_arg]));
        golden(&format!("{stem}.txt"), &redacted(&text, &root));
        let json = stdout_of(&run(&["list", "--json", "--sessions-root", &root_arg]));
        serde_json::from_str::<serde_json::Value>(&json).expect("valid JSON");
        golden(&format!("{stem}.json"), &redacted(&json, &root));
    }
}

/// A symlinked session file and a FIFO named like one are never
/// opened, and each is one warning naming its path and what it is: on stderr beside the
/// contract's documents (`--json`, the text output), which do not list them, as they never
/// did; in `--jsonl`'s warning rows; with the other warnings after `--long`; `-q` silences.
#[test]
fn symlinks_and_fifos_are_skipped_with_a_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("--p--");
    std::fs::create_dir(&project).expect("mkdir");
    let header = Header::new("s")
        .version(None)
        .timestamp("2026-01-01T00:00:00Z")
        .cwd("/w");
    std::fs::write(project.join("a.jsonl"), format!("{header}\n")).expect("write");
    std::os::unix::fs::symlink(project.join("a.jsonl"), project.join("link.jsonl"))
        .expect("symlink");
    let status = Command::new("mkfifo")
        .arg(project.join("pipe.jsonl"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    let root = dir.path().display().to_string();
    let link = format!("{root}/--p--/link.jsonl: is a symbolic link (not followed)");
    let pipe = format!("{root}/--p--/pipe.jsonl: not a regular file: FIFO");
    let expected_stderr =
        format!("pi-retrospect: warning: {link}\npi-retrospect: warning: {pipe}\n");

    for format in ["--json", "--text-is-the-default"] {
        let mut args = vec!["list", "--sessions-root", &root];
        if format == "--json" {
            args.push(format);
        }
        let output = run(&args);
        let stdout = stdout_of(&output);
        assert!(!stdout.contains("link.jsonl"), "{stdout}");
        assert!(!stdout.contains("pipe.jsonl"), "{stdout}");
        assert!(stdout.contains("a.jsonl"), "{stdout}");
        assert_eq!(String::from_utf8_lossy(&output.stderr), expected_stderr);
    }

    let output = run(&["list", "--sessions-root", &root, "--jsonl"]);
    let warnings: Vec<String> = stdout_of(&output)
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("JSON line"))
        .filter(|row| row["kind"] == "warning")
        .map(|row| {
            format!(
                "{}: {}",
                row["path"].as_str().expect("path"),
                row["reason"].as_str().expect("reason")
            )
        })
        .collect();
    assert_eq!(warnings, [link.clone(), pipe.clone()]);

    let output = run(&["list", "--sessions-root", &root, "-l"]);
    assert!(stdout_of(&output).contains(" s "), "one row");
    assert_eq!(String::from_utf8_lossy(&output.stderr), expected_stderr);

    let output = run(&["list", "--sessions-root", &root, "--json", "-q"]);
    stdout_of(&output);
    assert!(output.stderr.is_empty(), "{:?}", output.stderr);
}

#[test]
fn threads_do_not_change_the_output() {
    let root = fixtures().join("sessions").display().to_string();
    let one = stdout_of(&run(&[
        "list",
        "--json",
        "--threads",
        "1",
        "--sessions-root",
        &root,
    ]));
    let many = stdout_of(&run(&[
        "list",
        "--json",
        "--threads",
        "8",
        "--sessions-root",
        &root,
    ]));
    assert_eq!(one, many);
}

#[test]
fn default_root_comes_from_the_agent_dir_or_home() {
    let home = tempfile::tempdir().expect("temp dir");
    let agent = home.path().join("agent");
    let session = "--w--/a.jsonl";
    let header = Header::new("s")
        .version(None)
        .timestamp("2026-01-01T00:00:00Z")
        .cwd("/w")
        .to_string();
    for root in [
        agent.join("sessions"),
        home.path().join(".pi/agent/sessions"),
    ] {
        std::fs::create_dir_all(root.join("--w--")).expect("mkdir");
        std::fs::write(root.join(session), &header).expect("write");
    }
    let with_agent_dir = binary()
        .env("PI_CODING_AGENT_DIR", &agent)
        .args(["list"])
        .output()
        .expect("run");
    assert_eq!(
        stdout_of(&with_agent_dir),
        format!(
            "Sessions (1)\n- {}\n",
            agent.join("sessions").join(session).display()
        )
    );
    let with_home = binary()
        .env("HOME", home.path())
        .args(["list"])
        .output()
        .expect("run");
    assert_eq!(
        stdout_of(&with_home),
        format!(
            "Sessions (1)\n- {}\n",
            home.path()
                .join(".pi/agent/sessions")
                .join(session)
                .display()
        )
    );
    let with_tilde = binary()
        .env("HOME", home.path())
        .env("PI_CODING_AGENT_DIR", "~/agent")
        .args(["list"])
        .output()
        .expect("run");
    assert_eq!(stdout_of(&with_agent_dir), stdout_of(&with_tilde));
}

#[test]
fn missing_root_is_a_warning_not_an_error() {
    let output = run(&["list", "--sessions-root", "/nonexistent/sessions"]);
    assert_eq!(
        stdout_of(&output),
        "Sessions (0)\n\nWarnings (1)\n- /nonexistent/sessions: sessions root not readable: No such file or directory\n"
    );
}

#[test]
fn usage_errors_exit_2_with_one_message() {
    let output = run(&["list", "--no-such-flag"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--no-such-flag"), "{stderr}");
    let output = run(&["list", "--threads", "many"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn unwritable_stdout_exits_1_with_one_line() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let root = fixtures().join("sessions").display().to_string();
    let output = binary()
        .args(["list", "--sessions-root", &root])
        .stdout(Stdio::from(full))
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("pi-retrospect: "), "{stderr}");
}

#[test]
fn broken_pipe_exits_0_quietly() {
    // Enough sessions that the output cannot fit in a pipe buffer.
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("--w--");
    std::fs::create_dir_all(&project).expect("mkdir");
    for n in 0..3000 {
        let header = Header::new(&format!("s{n}"))
            .version(None)
            .timestamp("2026-01-01T00:00:00Z")
            .cwd("/w")
            .to_string();
        std::fs::write(
            project.join(format!("{n:05}-a-long-name-to-fill-the-pipe-quickly.jsonl")),
            header,
        )
        .expect("write");
    }
    common::assert_quiet_on_a_closed_pipe(
        binary().args(["list", "--sessions-root"]).arg(dir.path()),
        "list",
    );
}

#[test]
fn a_settings_fifo_never_blocks() {
    let agent = tempfile::tempdir().expect("temp dir");
    let status = Command::new("mkfifo")
        .arg(agent.path().join("settings.json"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    let mut child = binary()
        .env("PI_CODING_AGENT_DIR", agent.path())
        .args(["list"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("list blocked on a FIFO settings.json");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("output");
    let text = stdout_of(&output);
    assert!(text.contains("settings.json: settings file not readable, its sessionDir is ignored: is a FIFO, not a regular file"), "{text}");
}

#[test]
fn text_output_escapes_control_characters_from_headers() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("--p--")).expect("mkdir");
    let header = serde_json::json!({
        "type": "sess\u{1b}]0;pwned\u{7}ion", "id": "x",
        "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"
    });
    std::fs::write(dir.path().join("--p--/a.jsonl"), header.to_string()).expect("write");
    let text = stdout_of(
        &binary()
            .args(["list", "--sessions-root"])
            .arg(dir.path())
            .output()
            .expect("run"),
    );
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert!(
        text.contains("(type: sess\\u{1b}]0;pwned\\u{7}ion)"),
        "{text}"
    );
    // JSON keeps the exact text.
    let json = stdout_of(
        &binary()
            .args(["list", "--json", "--sessions-root"])
            .arg(dir.path())
            .output()
            .expect("run"),
    );
    assert!(json.contains("sess\\u001b]0;pwned\\u0007ion"), "{json}");
}
