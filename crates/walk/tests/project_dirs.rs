//! Which root entries are project directories: every name that starts and ends with `--`,
//! line breaks included. Each walk runs with one thread and with several.

use std::path::Path;

use pi_retrospect_walk::{Layout, Store, WalkOptions, list};

/// Lists a temporary store holding one session in a directory named `name`, and returns the
/// directory part of each listed path relative to the root (serial and parallel agree).
fn check(names: &[&str], expected: &[&str]) {
    let root = tempfile::tempdir().expect("temp dir");
    for (idx, name) in names.iter().enumerate() {
        let dir = root.path().join(name);
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::write(
            dir.join(format!("s{idx}.jsonl")),
            format!(
                "{{\"type\":\"session\",\"id\":\"s{idx}\",\"timestamp\":\"2026-01-01T00:00:0{idx}Z\",\"cwd\":\"/w\"}}\n"
            ),
        )
        .expect("write");
    }
    let store = Store::resolve(root.path(), Path::new("/"), Layout::Projects).expect("utf-8");
    let serial = list(&store, &WalkOptions { threads: 1 }).expect("walk");
    let parallel = list(&store, &WalkOptions { threads: 4 }).expect("walk");
    assert_eq!(serial, parallel);
    // Only the near misses `--` and `---` (their two `--` overlap) are worth a word.
    let warned: Vec<&str> = serial
        .warnings
        .iter()
        .map(|warning| {
            assert!(warning.is_out_of_scope, "{warning:?}");
            warning.path.rsplit_once('/').expect("under the root").1
        })
        .collect();
    let mut near_misses: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| matches!(*name, "--" | "---"))
        .collect();
    near_misses.sort_unstable();
    assert_eq!(warned, near_misses, "{:?}", serial.warnings);
    let prefix = format!("{}/", store.root);
    let dirs: Vec<String> = serial
        .sessions
        .iter()
        .map(|session| {
            let relative = session.path.strip_prefix(&prefix).expect("under the root");
            relative
                .rsplit_once('/')
                .expect("in a directory")
                .0
                .to_owned()
        })
        .collect();
    assert_eq!(dirs, expected, "{names:?}");
}

/// A project directory whose name holds a newline (`--a<LF>b--/`) is a project
/// directory, as the contract's rule "starts and ends with `--`" says.
#[test]
fn line_breaks_in_a_project_name() {
    check(
        &["--a\nb--", "--c\r\nd--", "--e\u{2028}f--", "--plain--"],
        &["--a\nb--", "--c\r\nd--", "--e\u{2028}f--", "--plain--"],
    );
    check(&["---", "-x--", "--x-", "permission-forwarding"], &[]);
    check(&["----"], &["----"]);
}

/// `---` and `--` start and end with `--`, but their two `--`
/// overlap, so they are not `--<slug>--` (the reference skips them too): not listed, and not
/// skipped silently either.
#[test]
fn overlapping_dashes_are_not_project_directories_and_say_so() {
    check(&["---", "--", "--ok--"], &["--ok--"]);
}
