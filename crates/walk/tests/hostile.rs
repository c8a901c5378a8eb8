//! Issue 9: the walk never dies and never changes its answer on hostile trees. Trees are
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

/// Issue 9: run directories nested 3,000 deep (`thread 'main' has overflowed its stack` once,
/// on a rayon worker with 64 siblings per level), under a launch directory wide enough to be
/// read in parallel, list every run, with the same answer on any number of threads.
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
    let mut current = mkdir(&launch, "deep");
    let mut n_runs = 70;
    for level in 0..3000 {
        mkdir(&current, "a");
        mkdir(&current, "b");
        if level % 100 == 0 {
            let run_dir = mkdir(&current, "run-0");
            write(&run_dir, "session.jsonl", GOOD);
            n_runs += 1;
        }
        current = mkdir(&current, "d");
    }
    // The same chain directly in the container, which is not read in parallel.
    let mut current = mkdir(&container, "chain");
    for level in 0..3000 {
        if level % 1000 == 999 {
            let run_dir = mkdir(&current, "run-1");
            write(&run_dir, "session.jsonl", GOOD);
            n_runs += 1;
        }
        current = mkdir(&current, "dd");
    }
    let listing = list_both(dir.path());
    assert_eq!(listing.warnings, Vec::new());
    assert_eq!(listing.sessions.len(), 1);
    assert_eq!(count(&listing.sessions), 1 + n_runs);
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

/// Issue 9: sessions nested 3,000 deep (each run's container holding the next run) list
/// whole; nesting them once overflowed a walk worker's stack.
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
    for _ in 0..3000 {
        let run = mkdir(&current, "r");
        write(&run, "session.jsonl", GOOD);
        current = mkdir(&run, "session");
    }
    let listing = list_both(dir.path());
    assert_eq!(listing.warnings, Vec::new());
    assert_eq!(depth(&listing.sessions), 3001);
}
