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

/// The runs of a session whose file was deleted (pi-subagents' container is left behind) are
/// listed under no session: the container is said, out of the contract's scope, once.
#[test]
fn a_container_without_its_session_file_is_said() {
    let root = tempfile::tempdir().expect("temp dir");
    let project = root.path().join("--w--");
    let kept = "2026-01-01T00-00-00-000Z_aaaa";
    let gone = "2026-01-02T00-00-00-000Z_bbbb";
    for (stem, id) in [(kept, "aaaa"), (gone, "bbbb")] {
        let run = project.join(stem).join("e5f6").join("run-0");
        std::fs::create_dir_all(&run).expect("mkdir");
        std::fs::write(
            run.join("session.jsonl"),
            format!("{{\"type\":\"session\",\"id\":\"r-{id}\",\"timestamp\":\"2026-01-01T00:00:01Z\",\"cwd\":\"/w\"}}\n"),
        )
        .expect("write run");
    }
    std::fs::write(
        project.join(format!("{kept}.jsonl")),
        "{\"type\":\"session\",\"id\":\"aaaa\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"cwd\":\"/w\"}\n",
    )
    .expect("write session");
    // A directory not named like a session's container is nobody's business.
    std::fs::create_dir(project.join("notes")).expect("mkdir");
    let store = Store::resolve(root.path(), Path::new("/"), Layout::Projects).expect("utf-8");
    let listing = list(&store, &WalkOptions { threads: 1 }).expect("walk");
    assert_eq!(listing.sessions.len(), 1);
    assert_eq!(listing.sessions[0].subagent_sessions.len(), 1);
    let warned: Vec<(&str, bool)> = listing
        .warnings
        .iter()
        .map(|warning| {
            (
                warning.path.rsplit_once('/').expect("under the root").1,
                warning.is_out_of_scope,
            )
        })
        .collect();
    assert_eq!(warned, [(gone, true)], "{:?}", listing.warnings);
    assert!(listing.warnings[0].reason.contains("not counted"));
}
