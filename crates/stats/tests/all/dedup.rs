//! Every API call counted once: a fork and a pi-subagents fork-context run copy
//! their parent's entries verbatim, a run is counted on its own and rolled up, and a copy in
//! `subagent-artifacts/` is never counted. Also: a missing parent, a moved store, a parent
//! outside the listing, and parents that name each other.

use crate::common;

use std::collections::BTreeMap;

use common::{assistant, header, listing, materialize, options, report, user};
use pi_retrospect_core::{Listing, Warning};
use pi_retrospect_stats::{Figures, GroupKey, StatsReport};

const P: &str = "--work-app--/2026-01-01T00-00-00-000Z_p.jsonl";
const F: &str = "--work-app--/2026-01-02T00-00-00-000Z_f.jsonl";
const RUN: &str = "--work-app--/2026-01-01T00-00-00-000Z_p/3f1c/run-0/session.jsonl";
const FORK_RUN: &str =
    "--work-app--/2026-01-01T00-00-00-000Z_p/forks/2026-01-01T01-00-00-000Z_k.jsonl";
const ARTIFACT: &str = "--work-app--/2026-01-01T00-00-00-000Z_p/subagent-artifacts/run-0.jsonl";

/// The parent's entries: two API calls (100 and 200 input tokens, $0.25 and $0.5).
fn parent_entries() -> Vec<String> {
    vec![
        user("u1", None, "2026-01-01T00:00:01.000Z"),
        assistant(
            "a1",
            Some("u1"),
            "2026-01-01T00:00:02.000Z",
            "m",
            100,
            Some(0.25),
        ),
        user("u2", Some("a1"), "2026-01-01T00:00:03.000Z"),
        assistant(
            "a2",
            Some("u2"),
            "2026-01-01T00:00:04.000Z",
            "m",
            200,
            Some(0.5),
        ),
    ]
}

/// A store with the parent, a fork of it (header `parentSession`: `fork_parent` of the store's
/// root), a run, a fork-context run (no `parentSession`: the `forks/` directory says it) and a
/// copy of the run in `subagent-artifacts/`.
fn store(fork_parent: impl Fn(&str) -> String) -> (tempfile::TempDir, Listing) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let fork_parent = fork_parent(root.to_str().expect("UTF-8 temp dir"));
    let mut parent = vec![header("p", "2026-01-01T00:00:00.000Z", None)];
    parent.extend(parent_entries());
    let mut fork = vec![header("f", "2026-01-02T00:00:00.000Z", Some(&fork_parent))];
    // Pi's createBranchedSession: the path to the fork point, same ids and timestamps.
    fork.extend(parent_entries()[..2].iter().cloned());
    fork.push(assistant(
        "a3",
        Some("a1"),
        "2026-01-02T00:00:01.000Z",
        "m",
        300,
        Some(1.0),
    ));
    let run = vec![
        header("r", "2026-01-01T00:30:00.000Z", None),
        assistant("r1", None, "2026-01-01T00:30:01.000Z", "m", 50, Some(0.125)),
    ];
    let mut fork_run = vec![header("k", "2026-01-01T01:00:00.000Z", None)];
    fork_run.extend(parent_entries());
    fork_run.push(assistant(
        "a4",
        Some("a2"),
        "2026-01-01T01:00:01.000Z",
        "m",
        400,
        Some(2.0),
    ));
    materialize(
        root,
        &[
            (P, parent),
            (F, fork),
            (RUN, run.clone()),
            (FORK_RUN, fork_run),
            (ARTIFACT, run),
        ],
    );
    let listing = listing(root);
    assert!(listing.warnings.is_empty(), "{:?}", listing.warnings);
    (dir, listing)
}

/// Returns `file name -> (pi input, own input, withRuns input)` of a report by session.
fn by_session(report: &StatsReport) -> BTreeMap<String, (u64, u64, u64)> {
    report
        .rows
        .iter()
        .map(|row| {
            let session = row.session.as_ref().expect("session row");
            let name = session
                .path
                .rsplit('/')
                .nth(usize::from(session.path.ends_with("session.jsonl")));
            let Figures::Session { pi, own, with_runs } = &row.figures else {
                panic!("session figures");
            };
            (
                name.expect("a name").to_owned(),
                (pi.input, own.input, with_runs.input),
            )
        })
        .collect()
}

/// The parent's absolute path, as Pi writes it into a fork's header.
fn parent_path(root: &str) -> String {
    format!("{root}/{P}")
}

#[test]
fn each_api_call_is_counted_once_in_the_store_total() {
    let (dir, listing) = store(parent_path);
    let fork_parent = parent_path(dir.path().to_str().expect("UTF-8"));

    let report = report(&listing, &options(&[GroupKey::Session]));
    assert_eq!(report.warnings, Vec::<Warning>::new());
    // a1 + a2 + a3 + a4 + r1, each once; the artifact copy of r1 is not in the listing at all.
    assert_eq!(report.total.input, 100 + 200 + 300 + 400 + 50);
    assert_eq!(report.total.n_entries, 5);
    assert_eq!(report.total.cost, 0.25 + 0.5 + 1.0 + 2.0 + 0.125);
    assert_eq!(
        by_session(&report),
        BTreeMap::from([
            // pi, own, withRuns (own + the runs' own)
            (
                "2026-01-01T00-00-00-000Z_p.jsonl".to_owned(),
                (300, 300, 300 + 50 + 400)
            ),
            (
                "2026-01-02T00-00-00-000Z_f.jsonl".to_owned(),
                (400, 300, 300)
            ),
            ("run-0".to_owned(), (50, 50, 50)),
            (
                "2026-01-01T01-00-00-000Z_k.jsonl".to_owned(),
                (700, 400, 400)
            ),
        ])
    );
    let fork_of: BTreeMap<String, Option<String>> = report
        .rows
        .iter()
        .map(|row| {
            let session = row.session.as_ref().expect("session");
            (session.session_id.clone(), session.fork_of.clone())
        })
        .collect();
    assert_eq!(
        fork_of["f"],
        Some(fork_parent.clone()),
        "header parentSession"
    );
    assert_eq!(
        fork_of["k"],
        Some(fork_parent),
        "a run in forks/ forks its launcher"
    );
    assert_eq!(fork_of["p"], None);
    assert_eq!(fork_of["r"], None);

    // Every other grouping counts the same calls once.
    for group_by in [
        vec![GroupKey::Project],
        vec![GroupKey::Model],
        vec![GroupKey::Day],
        vec![GroupKey::Day, GroupKey::Session],
    ] {
        let grouped = report_of(&listing, &group_by);
        let sum: u64 = grouped
            .rows
            .iter()
            .map(|row| row.figures.counted().input)
            .sum();
        assert_eq!(sum, 1050, "{group_by:?}");
        assert_eq!(grouped.total, report.total, "{group_by:?}");
    }
}

fn report_of(listing: &Listing, group_by: &[GroupKey]) -> StatsReport {
    report(listing, &options(group_by))
}

#[test]
fn a_missing_parent_is_said_and_the_copies_still_count_once() {
    // The header names a file that is gone; the entries it passed on are still in the older
    // session beside the fork.
    let (_dir, listing) =
        store(|_| "/gone/--work-app--/2025-12-01T00-00-00-000Z_gone.jsonl".to_owned());
    let report = report_of(&listing, &[GroupKey::Session]);
    assert_eq!(report.total.input, 100 + 200 + 300 + 50 + 400);
    let input: BTreeMap<String, (u64, u64, u64)> = by_session(&report);
    assert_eq!(input["2026-01-02T00-00-00-000Z_f.jsonl"], (400, 300, 300));
    let reasons: Vec<&str> = report.warnings.iter().map(|w| w.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "fork parent /gone/--work-app--/2025-12-01T00-00-00-000Z_gone.jsonl is not a session file in the stores: it is not read, and entries are deduplicated against the older sessions in this directory and other forks whose parent cannot be used"
        ]
    );
    assert!(report.warnings[0].path.ends_with(F));
}

#[test]
fn a_moved_store_finds_the_parent_by_its_file_name() {
    // The header names where the store used to be; the file name still matches.
    let (_dir, listing) = store(|_| format!("/old/home/.pi/agent/sessions/{P}"));
    let report = report_of(&listing, &[GroupKey::Session]);
    assert_eq!(report.warnings, Vec::<Warning>::new());
    assert_eq!(report.total.input, 1050);
}

#[test]
fn a_parent_outside_the_listing_is_read_for_its_entries_only() {
    let (dir, full) = store(parent_path);
    // Only the fork is selected (as `--since` on the header or `--id` would select it).
    let only_fork = Listing {
        sessions: full
            .sessions
            .iter()
            .filter(|session| session.id == "f")
            .cloned()
            .collect(),
        warnings: Vec::new(),
    };
    let mut in_store = options(&[GroupKey::Session]);
    in_store.store_roots = vec![canonical_root(dir.path())];
    let report = report(&only_fork, &in_store);
    assert_eq!(report.warnings, Vec::<Warning>::new());
    assert_eq!(report.total.input, 300, "only the fork's own call");
    assert_eq!(by_session(&report).len(), 1);
}

#[test]
fn parents_that_name_each_other_still_count_every_call() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_str().expect("UTF-8").to_owned();
    let a = "--work-app--/2026-01-01T00-00-00-000Z_a.jsonl";
    let b = "--work-app--/2026-01-02T00-00-00-000Z_b.jsonl";
    let shared = assistant("s1", None, "2026-01-01T00:00:01.000Z", "m", 10, Some(0.5));
    materialize(
        dir.path(),
        &[
            (
                a,
                vec![
                    header(
                        "a",
                        "2026-01-01T00:00:00.000Z",
                        Some(&format!("{root}/{b}")),
                    ),
                    shared.clone(),
                ],
            ),
            (
                b,
                vec![
                    header(
                        "b",
                        "2026-01-02T00:00:00.000Z",
                        Some(&format!("{root}/{a}")),
                    ),
                    shared,
                    assistant(
                        "b1",
                        Some("s1"),
                        "2026-01-02T00:00:01.000Z",
                        "m",
                        20,
                        Some(0.5),
                    ),
                ],
            ),
        ],
    );
    let report = report_of(&listing(dir.path()), &[GroupKey::Session]);
    assert_eq!(report.total.input, 30);
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert!(report.warnings[0].path.ends_with(a));
    assert!(
        report.warnings[0]
            .reason
            .contains("is not older than this session")
    );
}

/// Returns a directory as the application passes a store root: canonical, as text.
fn canonical_root(dir: &std::path::Path) -> String {
    std::fs::canonicalize(dir)
        .expect("canonical temp dir")
        .display()
        .to_string()
}

/// A fork whose header names, as its parent, the file at `parent`; its entries are the two
/// calls of the parent (copied) and one of its own.
fn fork_naming(name: &str, parent: &str) -> (String, Vec<String>) {
    let mut lines = vec![header(name, "2026-01-02T00:00:00.000Z", Some(parent))];
    lines.extend(parent_entries());
    lines.push(assistant(
        &format!("{name}-own"),
        Some("a2"),
        "2026-01-02T00:00:01.000Z",
        "m",
        1000,
        Some(1.0),
    ));
    let relative = format!("--work-app--/2026-01-02T00-00-00-000Z_{name}.jsonl");
    (relative, lines)
}

#[test]
fn a_parent_outside_the_stores_is_never_opened_nor_told_apart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let outside = tempfile::tempdir().expect("temp dir");
    let fifo = outside.path().join("fifo.jsonl");
    // Opening a FIFO with no writer would block the scan forever: the test would hang.
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let real_outside = outside.path().join("real.jsonl");
    let mut parent = vec![header("p", "2026-01-01T00:00:00.000Z", None)];
    parent.extend(parent_entries());
    materialize(outside.path(), &[("real.jsonl", parent)]);
    let root = dir.path();
    let link = root.join("--work-app--/2025-01-01T00-00-00-000Z_link.jsonl");
    let named = [
        ("a", "/etc/hostname".to_owned()),
        ("b", "/dev/zero".to_owned()),
        ("c", fifo.display().to_string()),
        ("d", real_outside.display().to_string()),
        (
            "e",
            "/nonexistent/2026-01-01T00-00-00-000Z_p.jsonl".to_owned(),
        ),
        // Inside the store as written, outside once the link is resolved.
        ("g", link.display().to_string()),
        // Inside the store as written, outside once `..` is resolved.
        ("h", format!("{}/../real.jsonl", root.display())),
    ];
    let files: Vec<(String, Vec<String>)> = named
        .iter()
        .map(|(name, parent)| fork_naming(name, parent))
        .collect();
    let files: Vec<(&str, Vec<String>)> = files
        .iter()
        .map(|(path, lines)| (path.as_str(), lines.clone()))
        .collect();
    materialize(root, &files);
    std::os::unix::fs::symlink(&real_outside, &link).expect("symlink");
    let listing = listing(root);
    let mut in_store = options(&[GroupKey::Session]);
    in_store.store_roots = vec![canonical_root(root)];
    let report = report(&listing, &in_store);

    // Each warning says the same whether the path exists, is a device, a FIFO or a link.
    let mut reasons: Vec<String> = report
        .warnings
        .iter()
        .filter(|warning| warning.reason.starts_with("fork parent"))
        .map(|warning| {
            let (name, parent) = named
                .iter()
                .find(|(name, _)| warning.path.ends_with(&format!("_{name}.jsonl")))
                .expect("a fork's warning");
            let parent = pi_retrospect_core::path::normalize_absolute(parent);
            format!("{name}: {}", warning.reason.replace(&parent, "PARENT"))
        })
        .collect();
    reasons.sort();
    let expected: Vec<String> = named
        .iter()
        .map(|(name, _)| {
            format!("{name}: fork parent PARENT is not a session file in the stores: it is not read, and entries are deduplicated against the older sessions in this directory and other forks whose parent cannot be used")
        })
        .collect();
    assert_eq!(reasons, expected);
    // The forks hold copies of the same two calls: counted once, not once per fork.
    assert_eq!(report.total.input, 100 + 200 + 1000 * named.len() as u64);
}

#[test]
fn a_chain_of_forks_with_its_middle_deleted_counts_each_call_once() {
    // A, then B forked from A, then C forked from B; B is deleted. C still holds copies of
    // A's entries and of B's: A's call counts in A, B's only in C.
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let a = "--work-app--/2026-03-01T10-00-00-000Z_a.jsonl";
    let b = "--work-app--/2026-03-02T10-00-00-000Z_b.jsonl";
    let c = "--work-app--/2026-03-03T10-00-00-000Z_c.jsonl";
    let from_a = [
        user("a1", None, "2026-03-01T10:00:01.000Z"),
        assistant(
            "a2",
            Some("a1"),
            "2026-03-01T10:00:02.000Z",
            "m",
            100,
            Some(1.0),
        ),
    ];
    let from_b = [
        user("b1", Some("a2"), "2026-03-02T10:00:01.000Z"),
        assistant(
            "b2",
            Some("b1"),
            "2026-03-02T10:00:02.000Z",
            "m",
            20,
            Some(0.2),
        ),
    ];
    let mut file_a = vec![header("a", "2026-03-01T10:00:00.000Z", None)];
    file_a.extend(from_a.iter().cloned());
    let b_path = format!("{}/{b}", root.display());
    let mut file_c = vec![header("c", "2026-03-03T10:00:00.000Z", Some(&b_path))];
    file_c.extend(from_a.iter().cloned());
    file_c.extend(from_b.iter().cloned());
    file_c.push(assistant(
        "c2",
        Some("b2"),
        "2026-03-03T10:00:02.000Z",
        "m",
        3,
        Some(0.03),
    ));
    materialize(root, &[(a, file_a), (c, file_c)]);
    let listing = listing(root);
    let report = report_of(&listing, &[GroupKey::Session]);
    assert_eq!(report.total.input, 123);
    let input = by_session(&report);
    assert_eq!(input["2026-03-01T10-00-00-000Z_a.jsonl"], (100, 100, 100));
    assert_eq!(input["2026-03-03T10-00-00-000Z_c.jsonl"], (123, 23, 23));
    for group_by in [vec![GroupKey::Day], vec![GroupKey::Model], vec![]] {
        assert_eq!(
            report_of(&listing, &group_by).total.input,
            123,
            "{group_by:?}"
        );
    }
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert!(
        report.warnings[0]
            .reason
            .contains("is not a session file in the stores")
    );
}

#[test]
fn copies_of_one_session_count_once() {
    // A backup beside the session and a copy in another project directory: one session id,
    // one set of calls.
    let dir = tempfile::tempdir().expect("temp dir");
    let mut file = vec![header("p", "2026-01-01T00:00:00.000Z", None)];
    file.extend(parent_entries());
    materialize(
        dir.path(),
        &[
            (P, file.clone()),
            ("--a-backup--/backup.jsonl", file.clone()),
            ("--elsewhere--/2026-01-01T00-00-00-000Z_p.jsonl", file),
        ],
    );
    let listing = listing(dir.path());
    let report = report_of(&listing, &[GroupKey::Session]);
    assert_eq!(report.total.input, 100 + 200);
    assert_eq!(report.rows.len(), 3);
    // The file Pi named for the session holds the calls, not the backup beside it.
    assert_eq!(by_session(&report)["backup.jsonl"].1, 0);
    assert_eq!(report.warnings.len(), 2, "{:?}", report.warnings);
    assert!(
        report
            .warnings
            .iter()
            .all(|warning| warning.reason.contains("(the same session id)")),
        "{:?}",
        report.warnings
    );
    for group_by in [vec![GroupKey::Project], vec![GroupKey::Day], vec![]] {
        assert_eq!(
            report_of(&listing, &group_by).total.input,
            300,
            "{group_by:?}"
        );
    }
}

#[test]
fn a_fork_made_within_its_parents_millisecond_counts_its_copies_once() {
    // The fork's header has its parent's instant, and its path sorts before the parent's.
    let dir = tempfile::tempdir().expect("temp dir");
    let parent_name = "--work-app--/2026-01-01T00-00-00-000Z_z-parent.jsonl";
    let parent_path = format!("{}/{parent_name}", dir.path().display());
    let mut parent = vec![header("z", "2026-01-01T00:00:00.000Z", None)];
    parent.extend(parent_entries());
    let mut fork = vec![header("a", "2026-01-01T00:00:00.000Z", Some(&parent_path))];
    fork.extend(parent_entries());
    fork.push(assistant(
        "f1",
        Some("a2"),
        "2026-01-01T00:00:05.000Z",
        "m",
        7,
        Some(0.1),
    ));
    materialize(
        dir.path(),
        &[
            (parent_name, parent),
            ("--work-app--/2026-01-01T00-00-00-000Z_a-fork.jsonl", fork),
        ],
    );
    let report = report_of(&listing(dir.path()), &[GroupKey::Session]);
    assert_eq!(report.total.input, 100 + 200 + 7);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

#[test]
fn a_gone_parents_fork_keeps_its_runs_shares_in_every_grouping() {
    // The fork copied a launch whose run files are gone: the run's usage, counted from the
    // result under the model it recorded, is in the model rows as in the total.
    let dir = tempfile::tempdir().expect("temp dir");
    let results = r#"{"runId":"e5f6","results":[{"index":0,"agent":"w","usage":{"input":50,"output":1,"cacheRead":0,"cacheWrite":0,"cost":0.125},"model":"openai/x"},{"index":1,"agent":"w","usage":{"input":30,"output":1,"cacheRead":0,"cacheWrite":0,"cost":0.125}}]}"#;
    let launch = pi_retrospect_testkit::Entry::message(
        pi_retrospect_testkit::Message::tool_result("c1", "subagent", "done")
            .details(results)
            .is_error(false)
            .timestamp(1)
            .member("usage", &common::usage(80, 2, Some(0.25))),
    )
    .id("t1")
    .parent(Some("a1"))
    .at("2026-01-02T00:00:03.000Z")
    .to_string();
    let gone = format!(
        "{}/--work-app--/2026-01-01T00-00-00-000Z_gone.jsonl",
        dir.path().display()
    );
    let mut fork = vec![header("f", "2026-01-02T00:00:00.000Z", Some(&gone))];
    fork.extend(parent_entries());
    fork.push(launch);
    materialize(dir.path(), &[(F, fork)]);
    let listing = listing(dir.path());
    let total = report_of(&listing, &[]).total;
    assert_eq!(total.input, 100 + 200 + 80);
    for group_by in [
        vec![GroupKey::Model],
        vec![GroupKey::Project, GroupKey::Model],
    ] {
        let grouped = report_of(&listing, &group_by);
        assert_eq!(grouped.total, total, "{group_by:?}");
        let sum: u64 = grouped
            .rows
            .iter()
            .map(|row| row.figures.counted().input)
            .sum();
        assert_eq!(sum, total.input, "{group_by:?}");
    }
}
