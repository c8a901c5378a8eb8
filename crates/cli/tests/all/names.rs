//! A session's name set anywhere in its file (right after the first exchange, or once in the
//! middle of a long file) is what `list --long`, `list --jsonl` and `stats --by session` show,
//! through the summary cache kept under the (temporary) home; `--no-cache` reads file ends
//! only and leaves the cache alone.

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::{binary, stdout_of};
use pi_retrospect_testkit::{Block, Entry, Header, Message};

/// Returns `n` assistant lines of about a kilobyte each.
fn filler(n: usize) -> String {
    let line = Entry::message(Message::assistant(&[Block::text(&"x".repeat(1000))]))
        .at("2026-01-01T00:01:00.000Z");
    format!("{line}\n").repeat(n)
}

/// A temporary home with a store holding one session of about 4 MiB named once, in its
/// middle, and one named right after its first exchange.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().expect("temp dir");
        let project = dir.path().join("sessions/--w--");
        std::fs::create_dir_all(&project).expect("mkdir");
        let header = |id: &str| Header::new(id).cwd("/w");
        let user = Entry::message(Message::user("first question")).at("2026-01-01T00:00:01.000Z");
        let name = |name: &str| Entry::session_info(name).at("2026-01-01T00:00:02.000Z");
        std::fs::write(
            project.join("big.jsonl"),
            format!(
                "{}\n{user}\n{}{}\n{}",
                header("big-session"),
                filler(2000),
                name("Debug flaky webhook"),
                filler(2000)
            ),
        )
        .expect("write");
        let early = header("early-session");
        std::fs::write(
            project.join("early.jsonl"),
            format!("{early}\n{user}\n{}\n{}", name("Named early"), filler(3000)),
        )
        .expect("write");
        Home { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("sessions")
    }

    fn cache_file(&self) -> PathBuf {
        self.dir
            .path()
            .join(".cache/pi-retrospect/summaries-v1.json")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = binary();
        command
            .env("HOME", self.dir.path())
            .env("COLUMNS", "200")
            .args(args)
            .arg("--sessions-root")
            .arg(self.root());
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run binary")
    }
}

fn assert_names(text: &str, what: &str) {
    for name in ["Debug flaky webhook", "Named early"] {
        assert!(text.contains(name), "{what} lacks {name:?}:\n{text}");
    }
}

#[test]
fn names_set_anywhere_are_shown() {
    let home = Home::new();
    for _ in 0..2 {
        // Once building the cache, once from it.
        let long = stdout_of(&home.run(&["list", "-l"]));
        assert_names(&long, "list -l");
        let jsonl = stdout_of(&home.run(&["list", "--jsonl"]));
        assert!(jsonl.contains(r#""name":"Debug flaky webhook""#), "{jsonl}");
        assert_names(&jsonl, "list --jsonl");
        let unordered = stdout_of(&home.run(&["list", "--jsonl", "--unordered"]));
        assert_names(&unordered, "list --jsonl --unordered");
        let stats = stdout_of(&home.run(&["stats", "--by", "session"]));
        assert_names(&stats, "stats --by session");
        let named = stdout_of(&home.run(&["list", "--name", "flaky"]));
        assert!(named.contains("big.jsonl"), "{named}");
    }
    let cache = std::fs::read_to_string(home.cache_file()).expect("cache written");
    assert!(cache.contains("Debug flaky webhook"));
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(home.cache_file().parent().expect("dir"))
            .expect("stat")
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o700);
}

#[test]
fn no_cache_reads_file_ends_and_leaves_the_cache_alone() {
    let home = Home::new();
    let output = home.run(&["list", "-l", "--no-cache"]);
    let long = stdout_of(&output);
    // The bounded read stops at the first user message and reads the end: neither a name
    // set just after the first exchange nor one in the middle is seen.
    assert!(
        !long.contains("Named early") && !long.contains("Debug flaky webhook"),
        "{long}"
    );
    assert!(!home.dir.path().join(".cache").exists());
    stdout_of(&home.run(&["list", "-l"]));
    let before = std::fs::read(home.cache_file()).expect("cache");
    let planted = String::from_utf8(before.clone())
        .expect("utf-8")
        .replace("Debug flaky webhook", "Planted in the cache");
    std::fs::write(home.cache_file(), &planted).expect("write");
    let long = stdout_of(&home.run(&["list", "-l", "--no-cache"]));
    assert!(!long.contains("Planted"), "{long}");
    let long = stdout_of(
        home.command(&["list", "-l"])
            .env("PI_RETROSPECT_NO_CACHE", "1")
            .output()
            .as_ref()
            .expect("run"),
    );
    assert!(!long.contains("Planted"), "{long}");
    assert_eq!(
        std::fs::read_to_string(home.cache_file()).expect("cache"),
        planted
    );
    // Without the flag the (planted) cache is what is shown: the flag made the difference.
    let long = stdout_of(&home.run(&["list", "-l"]));
    assert!(long.contains("Planted in the cache"), "{long}");
}

#[test]
fn a_corrupt_cache_is_one_note_and_the_right_output() {
    let home = Home::new();
    stdout_of(&home.run(&["list", "-l"]));
    std::fs::write(home.cache_file(), "{\"version\":1,\"entr").expect("write");
    let output = home.run(&["list", "--jsonl"]);
    assert_names(&stdout_of(&output), "list --jsonl");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("note: summary cache") && stderr.contains("rebuilt"),
        "{stderr}"
    );
    let output = home.run(&["list", "--jsonl"]);
    assert_names(&stdout_of(&output), "list --jsonl");
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn concurrent_runs_leave_a_valid_cache() {
    let home = Home::new();
    let children: Vec<_> = (0..4)
        .map(|_| {
            home.command(&["list", "--jsonl"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().expect("wait");
        assert_names(&stdout_of(&output), "list --jsonl");
        assert!(
            output.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let cache: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.cache_file()).expect("cache")).expect("json");
    let entries = cache["entries"].as_object().expect("entries");
    assert_eq!(entries.len(), 2, "{cache}");
    let files: Vec<_> = std::fs::read_dir(home.cache_file().parent().expect("dir"))
        .expect("read dir")
        .collect();
    assert_eq!(files.len(), 1, "a temporary file was left behind");
}
