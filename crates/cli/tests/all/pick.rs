//! End-to-end tests of `pi-retrospect pick`: the real binary driven in a pseudo-terminal
//! (util-linux `script`), keys typed into it, the chosen path read back from its redirected
//! standard output (as inside `$( )`), and a stand-in `pi` that records how it was resumed.
//! Plus the polite refusal without a terminal.

use crate::common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::binary;
use pi_retrospect_testkit::{Block, Entry, Header, Message, Store};

/// How long to wait for the picker before failing the test (a fail-safe against a hang, not
/// a measure of speed: nothing here asserts how fast anything is).
const PATIENCE: Duration = Duration::from_secs(120);

/// Writes one session file in Pi's layout under `root` for `cwd`, with a first user message
/// and an answer, and returns its path.
fn write_session(
    root: &Path,
    cwd: &Path,
    id: &str,
    second: u32,
    text: &str,
    answer: &str,
) -> PathBuf {
    let at = |fraction: &str| format!("2026-11-30T10:00:{second:02}.{fraction}Z");
    let header = Header::new(id)
        .timestamp(&at("000"))
        .cwd(cwd.to_str().expect("UTF-8 temp path"));
    let answer = Message::assistant(&[Block::text(answer)])
        .provider("p")
        .model("m");
    Store::at(root).write_session(
        &header,
        [
            Entry::message(Message::user(text))
                .id("m1")
                .parent(None)
                .at(&at("500")),
            Entry::message(answer)
                .id("m2")
                .parent(Some("m1"))
                .at(&at("900")),
        ],
    )
}

/// A picker running in a pseudo-terminal, and everything it has drawn so far.
struct Pty {
    child: Child,
    screen: Arc<Mutex<Vec<u8>>>,
}

impl Pty {
    /// Starts `pi-retrospect pick ARGS > OUT` in an 80x24 pseudo-terminal, in `cwd`, with
    /// `path_dir` first on `PATH`.
    fn start(cwd: &Path, args: &str, out: &Path, path_dir: &Path) -> Pty {
        let program = binary().get_program().to_owned();
        let inner = format!("stty rows 24 cols 80; exec \"$PICK_BIN\" pick {args} > \"$PICK_OUT\"");
        let path = format!(
            "{}:{}",
            path_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut command = Command::new("script");
        command
            .args(["--quiet", "--return", "--command", &inner, "/dev/null"])
            .current_dir(cwd)
            .env("PICK_BIN", program)
            .env("PICK_OUT", out)
            .env("PATH", path)
            .env("SHELL", "/bin/sh")
            .env("TERM", "xterm-256color")
            .env("HOME", "/nonexistent-home-for-tests")
            .env("NO_COLOR", "1")
            .env("TZ", "UTC")
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .env_remove("PI_SESSION_FILE")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("PAGER")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("util-linux `script` runs");
        let screen = Arc::new(Mutex::new(Vec::new()));
        let mut stdout = child.stdout.take().expect("piped stdout");
        let sink = Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .expect("screen lock")
                    .extend_from_slice(&chunk[..n]);
            }
        });
        Pty { child, screen }
    }

    /// Returns how many bytes the picker has drawn so far.
    fn n_drawn(&self) -> usize {
        self.screen.lock().expect("screen lock").len()
    }

    /// Waits until the picker has drawn `text`.
    fn wait_for(&mut self, text: &str) {
        self.wait_for_after(text, 0);
    }

    /// Waits until the picker has drawn `text` in what it drew after the first `from` bytes.
    fn wait_for_after(&mut self, text: &str, from: usize) {
        let start = Instant::now();
        loop {
            let screen = String::from_utf8_lossy(&self.screen.lock().expect("screen lock")[from..])
                .into_owned();
            if screen.contains(text) {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("picker exited ({status}) before drawing {text:?}; drew:\n{screen}");
            }
            assert!(
                start.elapsed() < PATIENCE,
                "no {text:?} on screen; drew:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `keys` into the terminal.
    fn type_keys(&mut self, keys: &str) {
        let stdin = self.child.stdin.as_mut().expect("piped stdin");
        stdin.write_all(keys.as_bytes()).expect("keys typed");
        stdin.flush().expect("keys sent");
    }

    /// Waits for the picker to exit and returns its exit code.
    fn wait(mut self) -> Option<i32> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            if start.elapsed() > PATIENCE {
                let _ = self.child.kill();
                let screen = self.screen.lock().expect("screen lock");
                let tail = &screen[screen.len().saturating_sub(3000)..];
                panic!(
                    "the picker did not exit; drew last:\n{}",
                    String::from_utf8_lossy(tail)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Type a filter, select, print the path; and Enter resuming in a stand-in `pi`,
/// here, (after asking) in the session's own directory, or forked into here.
#[test]
fn picks_in_a_pseudo_terminal() {
    let temp = tempfile::tempdir().expect("temp dir");
    let temp = temp.path().canonicalize().expect("canonical temp dir");
    let here = temp.join("work/app");
    let elsewhere = temp.join("work/lib");
    std::fs::create_dir_all(&here).expect("here");
    std::fs::create_dir_all(&elsewhere).expect("elsewhere");
    let root = temp.join("sessions");
    let first = write_session(
        &root,
        &here,
        "0199aaaa-0000-7000-8000-000000000001",
        1,
        "fix the parser",
        "it trips on the zebra token",
    );
    let second = write_session(
        &root,
        &here,
        "0199bbbb-0000-7000-8000-000000000002",
        2,
        "write release notes",
        "done",
    );
    let other = write_session(
        &root,
        &elsewhere,
        "0199cccc-0000-7000-8000-000000000003",
        3,
        "library docs",
        "done",
    );
    // A stand-in `pi` that records its arguments and the directory it ran in.
    let bin = temp.join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let record = temp.join("pi-record");
    let pi = bin.join("pi");
    std::fs::write(
        &pi,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" \"$(pwd)\" > '{}'\n",
            record.display()
        ),
    )
    .expect("stand-in pi");
    std::process::Command::new("chmod")
        .args(["+x", pi.to_str().expect("UTF-8 path")])
        .status()
        .expect("chmod");
    let root_arg = format!("--sessions-root '{}'", root.display());
    // (arguments, text on screen before typing, keys, exit code, stdout, pi's record): the
    // first screen holds this directory's sessions; another project's come from the
    // background listing, so a case that needs one waits for it to be drawn.
    type Case<'a> = (String, &'a str, &'a str, i32, String, Option<String>);
    let cases: Vec<Case<'_>> = vec![
        // The id is in the header, so the filter works before any name is read.
        (
            format!("-p {root_arg}"),
            "Pi sessions",
            "'99aaaa\r",
            0,
            format!("{}\n", first.display()),
            None,
        ),
        (
            format!("--print {root_arg}"),
            "Pi sessions",
            "\x1b[B\r",
            0,
            format!("{}\n", first.display()),
            None,
        ),
        (
            format!("-p {root_arg}"),
            "Pi sessions",
            "\x1b",
            130,
            String::new(),
            None,
        ),
        (
            root_arg.clone(),
            "Pi sessions",
            "\r",
            0,
            String::new(),
            Some(format!(
                "--session {}\n{}\n",
                second.display(),
                here.display()
            )),
        ),
        (
            format!("--all {root_arg}"),
            "0199cccc",
            "'99cccc\ry",
            0,
            String::new(),
            Some(format!(
                "--session {}\n{}\n",
                other.display(),
                elsewhere.display()
            )),
        ),
        (
            format!("--all {root_arg}"),
            "0199cccc",
            "'99cccc\rf",
            0,
            String::new(),
            Some(format!("--fork {}\n{}\n", other.display(), here.display())),
        ),
    ];
    for (args, drawn, keys, code, stdout, pi_record) in cases {
        let out = temp.join("out");
        let _ = std::fs::remove_file(&record);
        let mut pty = Pty::start(&here, &args, &out, &bin);
        pty.wait_for(drawn);
        pty.type_keys(keys);
        let exit = pty.wait();
        assert_eq!(exit, Some(code), "{args} {keys:?}");
        let printed = std::fs::read_to_string(&out).expect("stdout file");
        assert_eq!(printed, stdout, "{args} {keys:?}");
        let recorded = std::fs::read_to_string(&record).ok();
        assert_eq!(recorded, pi_record, "{args} {keys:?}");
    }
    // Ctrl-F finds "zebra" in an answer, where the fuzzy filter (names, first messages, cwd,
    // id) finds nothing. The filter clears the list first, so the session's id drawn after
    // that is the search's result.
    let out = temp.join("out");
    let mut pty = Pty::start(&here, &format!("-p {root_arg}"), &out, &bin);
    // The key line is the last line of a frame: the first screen is whole.
    pty.wait_for("quit");
    let mark = pty.n_drawn();
    pty.type_keys("zebra\x06");
    // The terminal is drawn by differences: when the filter's empty list and the search's
    // result fall in one frame, only the cells that changed are written, and the ids shown
    // before (0199bbbb…, 0199cccc…) share "0199" with it. "aaaa" is written either way.
    pty.wait_for_after("aaaa", mark);
    pty.type_keys("\r");
    assert_eq!(pty.wait(), Some(0));
    let printed = std::fs::read_to_string(&out).expect("stdout file");
    assert_eq!(printed, format!("{}\n", first.display()));
}

/// Without a terminal the picker refuses, with a reason, and exits 1.
#[test]
fn refuses_without_a_terminal() {
    let output = Command::new("setsid")
        .arg("--wait")
        .arg(binary().get_program())
        .args(["pick", "--print", "--sessions-root", "/nonexistent-store"])
        .env("HOME", "/nonexistent-home-for-tests")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("setsid runs");
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("pick needs a terminal to draw on"),
        "stderr: {stderr}"
    );
}
