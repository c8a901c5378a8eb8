//! End to end: hostile and damaged session files read by `show`, `inspect` and
//! `entries` in bounded memory, with bounded warnings and strict JSON output. Files are
//! generated in temp dirs; the large one is sparse.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common;
use common::{binary, stdout_of};
use pi_retrospect_testkit::{Entry, HEADER, Header, Message, timestamp_in_month};

/// The first entry of the damaged files.
fn user() -> String {
    Entry::message(Message::user("before the hole"))
        .id("u1")
        .parent(None)
        .at("2026-01-01T00:00:01.000Z")
        .to_string()
}

fn write(dir: &Path, contents: &[u8]) -> PathBuf {
    let path = dir.join("s.jsonl");
    std::fs::write(&path, contents).expect("write");
    path
}

/// Runs the binary with at most `kib` KiB of address space, as `ulimit -v` sets it.
fn run_limited(kib: u64, args: &[&str]) -> Output {
    let program = binary().get_program().to_owned();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(program)
        .args(args);
    for (key, value) in binary().get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    command.output().expect("run sh")
}

/// `show` on a file whose tail is 1 GiB of zeros (sparse here; what a crash can leave)
/// runs in a quarter of that address space and says once that the line was skipped (it once
/// aborted with "memory allocation of 4294967296 bytes failed" on a 4 GiB one).
#[test]
fn show_reads_a_zero_filled_tail_in_bounded_memory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write(dir.path(), format!("{HEADER}\n{}\n", user()).as_bytes());
    let file = std::fs::File::options()
        .write(true)
        .open(&path)
        .expect("open");
    file.set_len(1 << 30).expect("set_len");
    let path = path.display().to_string();
    let output = run_limited(256 * 1024, &["show", &path]);
    let stdout = stdout_of(&output);
    assert!(stdout.contains("before the hole"), "{stdout}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let warnings: Vec<&str> = stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("line 3 is 1073741") && warnings[0].contains("skipped"),
        "{stderr}"
    );
}

/// A file of many bad lines prints 20 warnings and one line counting the rest by kind
/// (10 MiB of junk once printed 555 MB of warnings); `--json` lists every warning, streamed
/// from a second read, in the order found.
#[test]
fn warnings_on_stderr_are_bounded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut text = format!("{HEADER}\n");
    let n_junk = 5_000;
    for idx in 0..n_junk {
        text.push_str(&format!("junk {idx}\n"));
    }
    text.push_str(&user());
    text.push('\n');
    text.push_str(r#"{"type":"label","id":"l1","parentId":"gone","targetId":"u1","label":"x"}"#);
    text.push('\n');
    let path = write(dir.path(), text.as_bytes()).display().to_string();
    for command in [
        vec!["show", path.as_str()],
        vec!["inspect", path.as_str(), "overview"],
        vec!["entries", path.as_str(), "--jsonl"],
    ] {
        let output = binary().args(&command).output().expect("run");
        stdout_of(&output);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 21, "{command:?}: {stderr}");
        assert!(
            lines[0].contains("line 2 is not valid JSON"),
            "{}",
            lines[0]
        );
        assert!(
            lines[20]
                .contains("… and 4,981 more warnings (4,980 malformed_line, 1 missing_parent;"),
            "{command:?}: {}",
            lines[20]
        );
    }
    // Every reading command's document lists every warning and is valid against its schema.
    for (command, schema) in [
        (vec!["show", path.as_str(), "--json"], "show"),
        (vec!["show", path.as_str(), "--tree", "--json"], "show"),
        (
            vec!["inspect", path.as_str(), "overview", "--json"],
            "inspect",
        ),
        (vec!["entries", path.as_str(), "--json"], "entries"),
    ] {
        let output = binary().args(&command).output().expect("run");
        assert_eq!(output.stderr, b"", "{command:?}");
        let document: Value = serde_json::from_str(&stdout_of(&output)).expect("JSON");
        let schema_output = binary().args(["schema", schema]).output().expect("run");
        let schema: Value = serde_json::from_str(&stdout_of(&schema_output)).expect("schema");
        let validator = jsonschema::validator_for(&schema).expect("a valid schema");
        let errors: Vec<String> = validator
            .iter_errors(&document)
            .map(|error| format!("{error} at {}", error.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{command:?}: {errors:#?}");
        let warnings = document["warnings"].as_array().expect("warnings");
        assert_eq!(warnings.len(), n_junk + 1, "{command:?}");
        for (idx, warning) in warnings[..n_junk].iter().enumerate() {
            assert_eq!(warning["kind"], "malformed_line", "{command:?}");
            assert_eq!(warning["lineNo"], idx + 2, "{command:?}");
        }
        assert_eq!(warnings[n_junk]["kind"], "missing_parent", "{command:?}");
    }
    let output = binary()
        .args(["entries", path.as_str(), "--json"])
        .output()
        .expect("run");
    let document: Value = serde_json::from_str(&stdout_of(&output)).expect("JSON");
    assert_eq!(document["entries"].as_array().expect("rows").len(), 2);
}

/// `entries --jsonl --raw` writes one strict JSON row per line, whatever the stored
/// line held between its tokens or in its strings.
#[test]
fn raw_rows_are_one_strict_json_object_per_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut text = format!("{HEADER}\n").into_bytes();
    text.extend_from_slice(
        b"{\"type\":\"x\",\r\"id\":\"a\",\"parentId\":null,\"t\":\"\\ud83d cut\"}\n",
    );
    text.extend_from_slice(b"{\"type\":\"x\",\"id\":\"b\",\"parentId\":\"a\",\"t\":\"\xfe\"}\r\n");
    text.extend_from_slice(
        b"{\"type\":\"x\",\"id\":\"c\",\"parentId\":\"b\",\"t\":\"tab\there\"}\n",
    );
    let path = write(dir.path(), &text).display().to_string();
    let output = binary()
        .args(["entries", path.as_str(), "--jsonl", "--raw"])
        .output()
        .expect("run");
    let stdout = stdout_of(&output);
    assert!(!stdout.contains('\r'));
    let rows: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("strict JSON row"))
        .collect();
    assert_eq!(
        rows.len(),
        2,
        "the line with a raw TAB is skipped, as Pi skips it"
    );
    assert_eq!(rows[0]["raw"]["t"], "\u{fffd} cut");
    assert_eq!(rows[1]["raw"]["t"], "\u{fffd}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 4 is not valid JSON"), "{stderr}");
}

/// Runs the binary with at most `n` open file descriptors, as `ulimit -n` sets it.
fn run_with_descriptors(n: u64, args: &[&str]) -> Output {
    let program = binary().get_program().to_owned();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -n {n} && exec \"$0\" \"$@\""))
        .arg(program)
        .args(args);
    for (key, value) in binary().get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    command.output().expect("run sh")
}

/// Out of file descriptors, `list` once returned a different listing on each run
/// (1563, 2559, 2035, 2562 rows). Now each run, whatever the limit, either gives the whole
/// listing or fails with a clear error.
#[test]
fn list_out_of_descriptors_fails_or_lists_everything() {
    let dir = tempfile::tempdir().expect("temp dir");
    let header = |n: usize| {
        Header::new(&format!("s{n}"))
            .timestamp(&timestamp_in_month("2026-01", n as u64 % 3600))
            .to_string()
    };
    let mut n = 0;
    for project in 0..3 {
        for session in 0..4 {
            let stem = format!("{}/--p{project}--/s{session}", dir.path().display());
            std::fs::create_dir_all(format!("{stem}/L")).expect("mkdir");
            std::fs::write(format!("{stem}.jsonl"), header(n)).expect("write");
            n += 1;
            // A nested launch 30 levels deep and a wide one.
            let mut deep = format!("{stem}/L");
            for level in 0..30 {
                deep.push_str(&format!("/d{level}"));
                std::fs::create_dir_all(format!("{deep}/run-0")).expect("mkdir");
                std::fs::write(format!("{deep}/run-0/session.jsonl"), header(n)).expect("write");
                n += 1;
            }
            for run in 0..(20 * session) {
                std::fs::create_dir_all(format!("{stem}/W/run-{run}")).expect("mkdir");
                std::fs::write(format!("{stem}/W/run-{run}/session.jsonl"), header(n))
                    .expect("write");
                n += 1;
            }
        }
    }
    let root = dir.path().display().to_string();
    let args = ["list", "--json", "--threads", "4", "--sessions-root", &root];
    let whole = stdout_of(&binary().args(args).output().expect("run"));
    let document: Value = serde_json::from_str(&whole).expect("JSON");
    assert_eq!(document["warnings"], Value::Array(Vec::new()));
    let (mut n_failed, mut n_whole) = (0, 0);
    for limit in (6..=40).chain([64, 256]) {
        let output = run_with_descriptors(limit, &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if output.status.success() {
            assert_eq!(
                String::from_utf8_lossy(&output.stdout),
                whole,
                "limit {limit}"
            );
            n_whole += 1;
        } else {
            assert_eq!(output.status.code(), Some(1), "limit {limit}: {stderr}");
            assert!(
                stderr.contains("too many open files"),
                "limit {limit}: {stderr}"
            );
            assert!(output.stdout.is_empty(), "limit {limit}");
            n_failed += 1;
        }
    }
    assert!(
        n_failed > 0 && n_whole > 0,
        "{n_failed} failed, {n_whole} whole"
    );
}
