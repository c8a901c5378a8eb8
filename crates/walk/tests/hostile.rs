//! The walk never dies and never changes its answer on hostile trees. Trees are
//! built in temp dirs relative to directory descriptors, since their paths outgrow
//! `PATH_MAX`. Every walk runs with one thread and with several, and the two must agree.

use std::os::fd::OwnedFd;
use std::path::Path;

use pi_retrospect_core::{Listing, Session};
use pi_retrospect_walk::{Layout, Store, WalkOptions, list};
use rustix::fs::{Mode, OFlags};

const GOOD: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}"#;

fn mkdir(dir: &OwnedFd, name: &str) -> OwnedFd {
    rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o755)).expect("mkdirat");
    rustix::fs::openat(dir, name, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
        .expect("openat")
}

fn write(dir: &OwnedFd, name: &str, contents: &str) {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC,
        Mode::from_raw_mode(0o644),
    )
    .expect("create");
    let mut file = std::fs::File::from(fd);
    std::io::Write::write_all(&mut file, contents.as_bytes()).expect("write");
}

fn list_both(root: &Path) -> Listing {
    let store = Store::resolve(root, Path::new("/"), Layout::Projects).expect("utf-8 root");
    let serial = list(&store, &WalkOptions { threads: 1 }).expect("descriptors to spare");
    let parallel = list(&store, &WalkOptions { threads: 4 }).expect("descriptors to spare");
    assert_eq!(serial, parallel, "1 thread and 4 threads must agree");
    serial
}

fn count(sessions: &[Session]) -> usize {
    sessions
        .iter()
        .map(|session| 1 + count(&session.subagent_sessions))
        .sum()
}

/// Run directories nested 3,000 deep (`thread 'main' has overflowed its stack` once,
/// on a rayon worker with 64 siblings per level), under a launch directory wide enough to be
/// read in parallel, list every run that fits in `PATH_MAX` and warn once about each
/// directory beyond it, with the same answer on any number of threads.
#[test]
fn directories_nested_thousands_deep_list_every_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = rustix::fs::open(
        dir.path(),
        OFlags::RDONLY | OFlags::DIRECTORY,
        Mode::empty(),
    )
    .expect("open root");
    let project = mkdir(&root, "--p--");
    write(&project, "s.jsonl", GOOD);
    let container = mkdir(&project, "s");
    // A wide launch directory: 70 runs, and one chain 3,000 directories deep with two
    // siblings per level and a run every 100 levels.
    let launch = mkdir(&container, "L");
    for run in 0..70 {
        let run_dir = mkdir(&launch, &format!("run-{run}"));
        write(&run_dir, "session.jsonl", GOOD);
    }
    let container_path = format!("{}/--p--/s", dir.path().to_str().expect("utf-8"));
    let mut expected_warnings = Vec::new();
    let mut current = mkdir(&launch, "deep");
    let mut current_path = format!("{container_path}/L/deep");
    let mut n_runs = 70;
    for level in 0..3000 {
        if !fits(&current_path) {
            break;
        }
        for name in ["a", "b", "run-0", "d"] {
            if !fits(&format!("{current_path}/{name}")) && (name != "run-0" || level % 100 == 0) {
                expected_warnings.push(format!("{current_path}/{name}"));
            }
        }
        mkdir(&current, "a");
        mkdir(&current, "b");
        if level % 100 == 0 {
            let run_dir = mkdir(&current, "run-0");
            write(&run_dir, "session.jsonl", GOOD);
            n_runs += usize::from(fits(&format!("{current_path}/run-0")));
        }
        current = mkdir(&current, "d");
        current_path.push_str("/d");
    }
    // The same chain directly in the container, which is not read in parallel.
    let mut current = mkdir(&container, "chain");
    let mut current_path = format!("{container_path}/chain");
    for level in 0..3000 {
        if !fits(&current_path) {
            break;
        }
        for name in ["run-1", "dd"] {
            if !fits(&format!("{current_path}/{name}")) && (name != "run-1" || level % 1000 == 999)
            {
                expected_warnings.push(format!("{current_path}/{name}"));
            }
        }
        if level % 1000 == 999 {
            let run_dir = mkdir(&current, "run-1");
            write(&run_dir, "session.jsonl", GOOD);
            n_runs += usize::from(fits(&format!("{current_path}/run-1")));
        }
        current = mkdir(&current, "dd");
        current_path.push_str("/dd");
    }
    let listing = list_both(dir.path());
    // Each chain is cut where a run inside would outgrow `PATH_MAX`: one warning per directory
    // not entered, which the same rule, applied here to the paths built, predicts.
    assert_eq!(listing.sessions.len(), 1);
    assert_eq!(count(&listing.sessions), 1 + n_runs);
    let mut warned: Vec<&str> = listing
        .warnings
        .iter()
        .map(|warning| warning.path.as_str())
        .collect();
    warned.sort_unstable();
    expected_warnings.sort_unstable();
    assert_eq!(warned, expected_warnings);
}

/// The walk enters a directory only while a run inside it fits in `PATH_MAX`.
fn fits(dir: &str) -> bool {
    dir.len() + "/session.jsonl".len() < 4096
}

fn depth(sessions: &[Session]) -> usize {
    // Iterative, so the test itself cannot overflow its stack.
    let mut deepest = 0;
    let mut pending: Vec<(&Session, usize)> = sessions.iter().map(|session| (session, 1)).collect();
    while let Some((session, level)) = pending.pop() {
        deepest = deepest.max(level);
        pending.extend(
            session
                .subagent_sessions
                .iter()
                .map(|child| (child, level + 1)),
        );
    }
    deepest
}

/// Sessions nested 3,000 deep (each run's container holding the next run) list
/// whole down to `PATH_MAX`, with one warning where the walk stops; nesting them once
/// overflowed a walk worker's stack.
#[test]
fn sessions_nested_thousands_deep_list_whole() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = rustix::fs::open(
        dir.path(),
        OFlags::RDONLY | OFlags::DIRECTORY,
        Mode::empty(),
    )
    .expect("open root");
    let project = mkdir(&root, "--p--");
    write(&project, "s.jsonl", GOOD);
    let mut current = mkdir(&project, "s");
    let mut current_path = format!("{}/--p--/s", dir.path().to_str().expect("utf-8"));
    let mut levels = 1;
    let mut first_not_entered = None;
    for _ in 0..3000 {
        let run = mkdir(&current, "r");
        write(&run, "session.jsonl", GOOD);
        current = mkdir(&run, "session");
        for name in ["r", "session"] {
            current_path.push('/');
            current_path.push_str(name);
            if first_not_entered.is_some() {
                continue;
            }
            if !fits(&current_path) {
                first_not_entered = Some(current_path.clone());
            } else if name == "r" {
                levels += 1;
            }
        }
    }
    let listing = list_both(dir.path());
    let warned: Vec<&str> = listing
        .warnings
        .iter()
        .map(|warning| warning.path.as_str())
        .collect();
    assert_eq!(
        warned,
        [first_not_entered
            .as_deref()
            .expect("the chain outgrows PATH_MAX")]
    );
    assert_eq!(depth(&listing.sessions), levels);
}

/// A run directory whose runs would be longer than `PATH_MAX`
/// (4096 bytes) is not entered, with one warning naming it and saying why; every path listed
/// can be opened by name.
#[test]
fn a_run_directory_beyond_path_max_is_not_entered_and_reported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = rustix::fs::open(
        dir.path(),
        OFlags::RDONLY | OFlags::DIRECTORY,
        Mode::empty(),
    )
    .expect("open root");
    let project = mkdir(&root, "--p--");
    write(&project, "s.jsonl", GOOD);
    let mut current = mkdir(&project, "s");
    let mut current_path = format!("{}/--p--/s", dir.path().to_str().expect("utf-8"));
    let name = "n".repeat(200);
    let mut n_listed = 1;
    let mut not_entered = None;
    for _ in 0..30 {
        current = mkdir(&current, &name);
        current_path = format!("{current_path}/{name}");
        let run = mkdir(&current, "run-0");
        write(&run, "session.jsonl", GOOD);
        if not_entered.is_none() {
            if fits(&current_path) && fits(&format!("{current_path}/run-0")) {
                n_listed += 1;
            } else if fits(&current_path) {
                not_entered = Some(format!("{current_path}/run-0"));
            } else {
                not_entered = Some(current_path.clone());
            }
        }
    }
    let listing = list_both(dir.path());
    let not_entered = not_entered.expect("the chain outgrows PATH_MAX");
    assert_eq!(listing.warnings.len(), 1, "{:?}", listing.warnings);
    assert_eq!(listing.warnings[0].path, not_entered);
    assert!(
        listing.warnings[0]
            .reason
            .contains("longer than PATH_MAX (4096 bytes)")
            && listing.warnings[0].reason.ends_with("not entered"),
        "{}",
        listing.warnings[0].reason
    );
    assert_eq!(count(&listing.sessions), n_listed);
    let mut pending: Vec<&Session> = listing.sessions.iter().collect();
    while let Some(session) = pending.pop() {
        assert!(session.path.len() < 4096, "{}", session.path.len());
        pending.extend(&session.subagent_sessions);
    }
}
