//! Subagent runs counted once: pi-subagents records on the tool result that launched (or
//! waited for) runs a nested `usage`, the sum of the runs' usage, and in `details` each run's
//! `sessionFile` and `usage`. Pi's own per-file figure includes that nested usage; every
//! aggregate counts the run files instead, and the nested usage only of runs whose files are
//! missing. The lines are written the way pi-subagents writes them (`withAggregatedToolUsage`
//! for a foreground launch, `completionUsage` for a background run's wait).

use crate::common;

use std::collections::BTreeMap;

use common::{assistant, header, listing, materialize, options, report, usage, user};
use pi_retrospect_stats::{Figures, GroupKey, StatsReport};
use pi_retrospect_testkit::{Entry, Message};

const P: &str = "--work-app--/2026-03-01T00-00-00-000Z_p.jsonl";
const RUN_0: &str = "--work-app--/2026-03-01T00-00-00-000Z_p/7a1e/run-0/session.jsonl";
const RUN_1: &str = "--work-app--/2026-03-01T00-00-00-000Z_p/7a1e/run-1/session.jsonl";
const BG_RUN: &str = "--work-app--/2026-03-01T00-00-00-000Z_p/b9c2/run-0/session.jsonl";
/// A run whose file is gone (a deleted run directory): only the tool result tells its usage.
const GONE_RUN: &str = "--work-app--/2026-03-01T00-00-00-000Z_p/d4f0/run-0/session.jsonl";
const ARTIFACT: &str =
    "--work-app--/2026-03-01T00-00-00-000Z_p/subagent-artifacts/7a1e_run-0_session.jsonl";

/// pi-subagents' own usage record of a run (`cost` in dollars, `turns`).
fn run_usage(input: u64, cost: f64) -> String {
    format!(
        r#"{{"input":{input},"output":1,"cacheRead":0,"cacheWrite":0,"cost":{cost},"turns":1}}"#
    )
}

/// One `details.results[]` entry of a run: agent, run id, its session file and usage.
fn run_result(root: &str, run: &str, input: u64, cost: f64) -> String {
    format!(
        r#"{{"agent":"worker","task":"t","exitCode":0,"usage":{},"model":"anthropic/m","sessionFile":"{root}/{run}","messages":[{{"role":"assistant","usage":{}}}]}}"#,
        run_usage(input, cost),
        usage(input, 1, Some(cost)),
    )
}

/// A `subagent` tool result carrying `details` and, when the runs did model work, their sum
/// as the message's `usage` (Pi's shape: `totalTokens`, `cost.total`).
fn tool_result(
    id: &str,
    timestamp: &str,
    details: &str,
    nested: Option<(u64, u64, f64)>,
) -> String {
    let message = Message::tool_result(&format!("c-{id}"), "subagent", "done")
        .details(details)
        .is_error(false)
        .timestamp(1);
    let message = match nested {
        Some((input, output, cost)) => message.member("usage", &usage(input, output, Some(cost))),
        None => message,
    };
    Entry::message(message)
        .id(id)
        .parent(Some("a1"))
        .at(timestamp)
        .to_string()
}

fn run_file(id: &str, timestamp: &str, input: u64, cost: f64) -> Vec<String> {
    vec![
        header(id, timestamp, None),
        user(&format!("{id}-u"), None, timestamp),
        assistant(
            &format!("{id}-a"),
            Some(&format!("{id}-u")),
            timestamp,
            "m",
            input,
            Some(cost),
        ),
    ]
}

/// The launching session: one call of its own (100 tokens, $0.25); a foreground launch of
/// two runs (50 and 70 tokens); a background launch completed by a later wait (30 tokens);
/// and a foreground launch whose run file is missing (40 tokens, $0.5). Run 0 is also copied
/// into `subagent-artifacts/`.
fn store() -> (tempfile::TempDir, StatsReport) {
    store_recorded_under(None)
}

/// [`store`], with the runs' `sessionFile`s recorded under `recorded` instead of the store's
/// own path (a store copied, moved or reached through a link since pi-subagents wrote it).
fn store_recorded_under(recorded: Option<&str>) -> (tempfile::TempDir, StatsReport) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = match recorded {
        Some(recorded) => recorded.to_owned(),
        None => dir.path().to_str().expect("UTF-8 temp dir").to_owned(),
    };
    let parent = vec![
        header("p", "2026-03-01T00:00:00.000Z", None),
        user("u1", None, "2026-03-01T00:00:01.000Z"),
        assistant(
            "a1",
            Some("u1"),
            "2026-03-01T00:00:02.000Z",
            "m",
            100,
            Some(0.25),
        ),
        tool_result(
            "t1",
            "2026-03-01T00:10:00.000Z",
            &format!(
                r#"{{"mode":"parallel","runId":"7a1e","results":[{},{}]}}"#,
                run_result(&root, RUN_0, 50, 0.125),
                run_result(&root, RUN_1, 70, 0.25)
            ),
            Some((120, 2, 0.375)),
        ),
        tool_result(
            "t2",
            "2026-03-01T00:11:00.000Z",
            r#"{"mode":"single","runId":"b9c2","results":[],"asyncId":"b9c2","asyncDir":"/tmp/x"}"#,
            None,
        ),
        tool_result(
            "t3",
            "2026-03-01T00:20:00.000Z",
            &format!(
                r#"{{"mode":"management","results":[],"completions":[{{"runId":"b9c2","agent":"worker","state":"complete","results":[{}]}}]}}"#,
                run_result(&root, BG_RUN, 30, 0.0625)
            ),
            Some((30, 1, 0.0625)),
        ),
        tool_result(
            "t4",
            "2026-03-01T00:30:00.000Z",
            &format!(
                r#"{{"mode":"single","runId":"d4f0","results":[{}]}}"#,
                run_result(&root, GONE_RUN, 40, 0.5)
            ),
            Some((40, 1, 0.5)),
        ),
    ];
    let run_0 = run_file("r0", "2026-03-01T00:05:00.000Z", 50, 0.125);
    materialize(
        dir.path(),
        &[
            (P, parent),
            (RUN_0, run_0.clone()),
            (RUN_1, run_file("r1", "2026-03-01T00:06:00.000Z", 70, 0.25)),
            (
                BG_RUN,
                run_file("r2", "2026-03-01T00:12:00.000Z", 30, 0.0625),
            ),
            (ARTIFACT, run_0),
        ],
    );
    let listing = listing(dir.path());
    assert!(listing.warnings.is_empty(), "{:?}", listing.warnings);
    let report = report(&listing, &options(&[GroupKey::Session]));
    (dir, report)
}

/// `session id -> (pi, own, withRuns)` input tokens.
fn by_session(report: &StatsReport) -> BTreeMap<String, (u64, u64, u64)> {
    report
        .rows
        .iter()
        .map(|row| {
            let session = row.session.as_ref().expect("session row");
            let Figures::Session { pi, own, with_runs } = &row.figures else {
                panic!("session figures");
            };
            (
                session.session_id.clone(),
                (pi.input, own.input, with_runs.input),
            )
        })
        .collect()
}

#[test]
fn a_run_is_counted_from_its_file_and_the_tool_result_only_for_a_missing_one() {
    let (dir, report) = store();
    assert_eq!(
        by_session(&report),
        BTreeMap::from([
            // Pi's figure holds every nested usage; own only the missing run's.
            (
                "p".to_owned(),
                (100 + 120 + 30 + 40, 100 + 40, 100 + 40 + 50 + 70 + 30)
            ),
            ("r0".to_owned(), (50, 50, 50)),
            ("r1".to_owned(), (70, 70, 70)),
            ("r2".to_owned(), (30, 30, 30)),
        ])
    );
    // Each model call once: a1, the three run files' calls and the missing run's usage.
    assert_eq!(report.total.input, 100 + 50 + 70 + 30 + 40);
    assert_eq!(report.total.output, 1 + 1 + 1 + 1 + 1);
    assert_eq!(report.total.cost, 0.25 + 0.125 + 0.25 + 0.0625 + 0.5);
    let warnings: Vec<(&str, &str)> = report
        .warnings
        .iter()
        .map(|warning| (warning.path.as_str(), warning.reason.as_str()))
        .collect();
    let parent = format!("{}/{P}", dir.path().display());
    let gone = format!("{}/{GONE_RUN}", dir.path().display());
    assert_eq!(
        warnings,
        [(
            parent.as_str(),
            format!(
                "1 subagent runs launched here have no session file in the listing (the first named is {gone}): their usage is counted from this session's tool results"
            )
            .as_str()
        )]
    );
    assert_eq!(report.n_warnings, 1);
}

#[test]
fn every_grouping_counts_a_run_once() {
    let (dir, by_session_report) = store();
    let listing = listing(dir.path());
    for group_by in [
        vec![GroupKey::Project],
        vec![GroupKey::Model],
        vec![GroupKey::Day],
        vec![GroupKey::Project, GroupKey::Week],
        vec![GroupKey::Model, GroupKey::Day],
    ] {
        let grouped = report(&listing, &options(&group_by));
        let sum: u64 = grouped
            .rows
            .iter()
            .map(|row| row.figures.counted().input)
            .sum();
        assert_eq!(sum, 290, "{group_by:?}");
        assert_eq!(grouped.total, by_session_report.total, "{group_by:?}");
    }
    let by_model = report(&listing, &options(&[GroupKey::Model]));
    let models: BTreeMap<&str, u64> = by_model
        .rows
        .iter()
        .map(|row| {
            (
                row.model.as_deref().expect("model"),
                row.figures.counted().input,
            )
        })
        .collect();
    // The run files carry the model of each call, and the missing run's result records its
    // model too: nothing is left to the tool.
    assert_eq!(models, BTreeMap::from([("anthropic/m", 290)]));
    // By session and model, the launcher's tool cell (its nested usage all counted in run
    // files or under the runs' models) is no row of zeros.
    let pairs = report(&listing, &options(&[GroupKey::Session, GroupKey::Model]));
    let keys: Vec<(&str, &str)> = pairs
        .rows
        .iter()
        .map(|row| {
            (
                row.session.as_ref().expect("session").session_id.as_str(),
                row.model.as_deref().expect("model"),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("p", "anthropic/m"),
            ("r0", "anthropic/m"),
            ("r1", "anthropic/m"),
            ("r2", "anthropic/m")
        ]
    );
}

#[test]
fn a_run_recorded_under_another_path_of_the_store_is_still_its_file() {
    let (_dir, moved) = store_recorded_under(Some("/home/someone-else/.pi/agent/sessions"));
    let (_dir, here) = store();
    assert_eq!(by_session(&moved), by_session(&here));
    assert_eq!(moved.total, here.total);
    assert_eq!(moved.total.input, 100 + 50 + 70 + 30 + 40);
    // Only the run whose file is missing is warned about, as in place.
    assert_eq!(moved.n_warnings, 1);
}

/// A `details.results[]` entry with no `sessionFile`: its `index` and the launch's `runId`
/// say where pi-subagents wrote it.
fn unnamed_result(index: u64, input: u64, model: Option<&str>) -> String {
    let model = model.map_or(String::new(), |model| format!(r#","model":"{model}""#));
    format!(
        r#"{{"index":{index},"agent":"worker","task":"t","exitCode":0,"usage":{}{model}}}"#,
        run_usage(input, 0.125)
    )
}

#[test]
fn a_run_that_names_no_file_is_found_where_pi_subagents_writes_it() {
    const STEM: &str = "--work-app--/2026-03-01T00-00-00-000Z_p";
    let parent = vec![
        header("p", "2026-03-01T00:00:00.000Z", None),
        assistant("a1", None, "2026-03-01T00:00:02.000Z", "m", 100, Some(0.25)),
        // Runs 0 and 1 of launch e5f6; only run 0 has its file.
        tool_result(
            "t1",
            "2026-03-01T00:10:00.000Z",
            &format!(
                r#"{{"mode":"parallel","results":[{},{}],"runId":"e5f6"}}"#,
                unnamed_result(0, 50, Some("openai/x")),
                // pi-subagents records the model as given, here without its provider and
                // with a thinking level.
                unnamed_result(1, 20, Some("m:high"))
            ),
            Some((70, 2, 0.25)),
        ),
        // A background run's completion, delivered by a wait; its file exists.
        tool_result(
            "t2",
            "2026-03-01T00:20:00.000Z",
            &format!(
                r#"{{"mode":"management","results":[],"completions":[{{"runId":"c0c0","results":[{}]}}]}}"#,
                unnamed_result(0, 30, None)
            ),
            Some((30, 1, 0.125)),
        ),
        // Two runs whose files are gone, one with its model recorded: the other is the
        // tool's.
        tool_result(
            "t3",
            "2026-03-01T00:30:00.000Z",
            &format!(
                r#"{{"mode":"parallel","runId":"d4f0","results":[{},{}]}}"#,
                unnamed_result(0, 40, None),
                unnamed_result(1, 15, Some("openai/z"))
            ),
            Some((55, 2, 0.25)),
        ),
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    materialize(
        dir.path(),
        &[
            (P, parent),
            (
                &format!("{STEM}/e5f6/run-0/session.jsonl"),
                run_file("r0", "2026-03-01T00:05:00.000Z", 50, 0.125),
            ),
            (
                &format!("{STEM}/c0c0/run-0/session.jsonl"),
                run_file("r2", "2026-03-01T00:12:00.000Z", 30, 0.125),
            ),
        ],
    );
    let listing = listing(dir.path());
    assert!(listing.warnings.is_empty(), "{:?}", listing.warnings);
    let sessions = report(&listing, &options(&[GroupKey::Session]));
    // Own: the call and the two missing runs; the run files on their own rows.
    assert_eq!(
        by_session(&sessions),
        BTreeMap::from([
            (
                "p".to_owned(),
                (100 + 70 + 30 + 55, 100 + 20 + 55, 100 + 20 + 55 + 50 + 30)
            ),
            ("r0".to_owned(), (50, 50, 50)),
            ("r2".to_owned(), (30, 30, 30)),
        ])
    );
    assert_eq!(sessions.total.input, 100 + 50 + 20 + 30 + 55);
    assert_eq!(sessions.n_warnings, 1, "{:?}", sessions.warnings);
    assert!(
        sessions.warnings[0]
            .reason
            .starts_with("3 subagent runs launched here have no session file"),
        "{:?}",
        sessions.warnings
    );
    let by_model = report(&listing, &options(&[GroupKey::Model]));
    let models: BTreeMap<&str, (u64, u64)> = by_model
        .rows
        .iter()
        .map(|row| {
            let counted = row.figures.counted();
            (
                row.model.as_deref().expect("model"),
                (counted.input, counted.n_entries),
            )
        })
        .collect();
    // The missing run with a recorded model goes under it, with the launch's record (all of
    // the launch's own usage went with it); the other stays the tool's. `m:high` is
    // `anthropic/m`, the one model of that name the files name.
    assert_eq!(
        models,
        BTreeMap::from([
            ("anthropic/m", (100 + 50 + 30 + 20, 4)),
            // A share of a launch whose record stays with the tool's row.
            ("openai/z", (15, 0)),
            ("tool:subagent", (40, 1)),
        ])
    );
    assert_eq!(by_model.total, sessions.total);
    // With two keys, no row of nothing: every (session, model) row counts something.
    let pairs = report(&listing, &options(&[GroupKey::Session, GroupKey::Model]));
    for row in &pairs.rows {
        let Figures::Session { own, with_runs, .. } = &row.figures else {
            panic!("session figures");
        };
        assert!(
            own.total > 0 || with_runs.total > 0 || own.n_entries > 0 || with_runs.n_entries > 0,
            "{row:?}"
        );
    }
    let counted: u64 = pairs
        .rows
        .iter()
        .map(|row| row.figures.counted().input)
        .sum();
    assert_eq!(counted, pairs.total.input);
}

/// A fork copies its parent's entries, launches included: the warning about a copied launch's
/// missing run names the parent, which launched it, and the fork only for its own launches.
#[test]
fn a_missing_run_is_warned_about_on_its_real_launcher_not_on_a_fork() {
    const FORK: &str = "--work-app--/2026-03-01T01-00-00-000Z_f.jsonl";
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_str().expect("UTF-8 temp dir").to_owned();
    let launch = tool_result(
        "t4",
        "2026-03-01T00:30:00.000Z",
        &format!(
            r#"{{"mode":"single","runId":"d4f0","results":[{}]}}"#,
            run_result(&root, GONE_RUN, 40, 0.5)
        ),
        Some((40, 1, 0.5)),
    );
    let parent = vec![
        header("p", "2026-03-01T00:00:00.000Z", None),
        user("u1", None, "2026-03-01T00:00:01.000Z"),
        assistant(
            "a1",
            Some("u1"),
            "2026-03-01T00:00:02.000Z",
            "m",
            100,
            Some(0.25),
        ),
        launch.clone(),
    ];
    let own_gone = "--work-app--/2026-03-01T01-00-00-000Z_f/e7e7/run-0/session.jsonl";
    let mut fork = vec![header(
        "f",
        "2026-03-01T01:00:00.000Z",
        Some(&format!("{root}/{P}")),
    )];
    fork.extend(parent[1..].iter().cloned());
    let fork_only = |with_own_launch: bool| {
        let mut fork = fork.clone();
        if with_own_launch {
            fork.push(tool_result(
                "t9",
                "2026-03-01T01:10:00.000Z",
                &format!(
                    r#"{{"mode":"single","runId":"e7e7","results":[{}]}}"#,
                    run_result(&root, own_gone, 25, 0.125)
                ),
                Some((25, 1, 0.125)),
            ));
        }
        fork
    };
    for with_own_launch in [false, true] {
        materialize(
            dir.path(),
            &[(P, parent.clone()), (FORK, fork_only(with_own_launch))],
        );
        let listing = listing(dir.path());
        let mut in_store = options(&[GroupKey::Session]);
        in_store.store_roots = vec![
            std::fs::canonicalize(dir.path())
                .expect("root")
                .display()
                .to_string(),
        ];
        let report = report(&listing, &in_store);
        let warned: Vec<(String, &str)> = report
            .warnings
            .iter()
            .map(|warning| {
                let path = warning
                    .path
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                (path, warning.reason.as_str())
            })
            .collect();
        let gone_named = |run: &str| {
            format!(
                "1 subagent runs launched here have no session file in the listing (the first named is {root}/{run}): their usage is counted from this session's tool results"
            )
        };
        let mut expected = vec![(
            "2026-03-01T00-00-00-000Z_p.jsonl".to_owned(),
            gone_named(GONE_RUN),
        )];
        if with_own_launch {
            expected.push((
                "2026-03-01T01-00-00-000Z_f.jsonl".to_owned(),
                gone_named(own_gone),
            ));
        }
        let expected: Vec<(String, &str)> = expected
            .iter()
            .map(|(path, reason)| (path.clone(), reason.as_str()))
            .collect();
        assert_eq!(warned, expected, "with its own launch: {with_own_launch}");
        assert_eq!(report.n_warnings, expected.len() as u64);
        // The copied missing run counts once, in the parent.
        let own_launch = if with_own_launch { 25 } else { 0 };
        assert_eq!(report.total.input, 100 + 40 + own_launch);
    }
}

/// A result with neither `index` nor `sessionFile` (pi-subagents before it recorded an
/// index) is its launch's run at its place in `results`; one whose `sessionFile` is no longer
/// where it says is found where pi-subagents writes it. Either way the run file is counted
/// once, not again in the launching tool result.
#[test]
fn a_run_without_index_or_with_a_moved_file_is_still_its_file() {
    const STEM: &str = "--work-app--/2026-03-01T00-00-00-000Z_p";
    let result = |extra: &str, input: u64| {
        format!(
            r#"{{"agent":"worker","task":"t","exitCode":0,"usage":{}{extra}}}"#,
            run_usage(input, 0.125)
        )
    };
    for (first, second) in [
        (result("", 50), result("", 20)),
        (
            result(
                r#","index":0,"sessionFile":"/tmp/moved/run-0/session.jsonl""#,
                50,
            ),
            result(
                r#","index":1,"sessionFile":"/tmp/moved/run-1/session.jsonl""#,
                20,
            ),
        ),
    ] {
        let parent = vec![
            header("p", "2026-03-01T00:00:00.000Z", None),
            assistant("a1", None, "2026-03-01T00:00:02.000Z", "m", 100, Some(0.25)),
            tool_result(
                "t1",
                "2026-03-01T00:10:00.000Z",
                &format!(r#"{{"mode":"parallel","results":[{first},{second}],"runId":"e5f6"}}"#),
                Some((70, 2, 0.25)),
            ),
        ];
        let dir = tempfile::tempdir().expect("temp dir");
        materialize(
            dir.path(),
            &[
                (P, parent),
                (
                    &format!("{STEM}/e5f6/run-0/session.jsonl"),
                    run_file("r0", "2026-03-01T00:05:00.000Z", 50, 0.125),
                ),
                (
                    &format!("{STEM}/e5f6/run-1/session.jsonl"),
                    run_file("r1", "2026-03-01T00:06:00.000Z", 20, 0.125),
                ),
            ],
        );
        let listing = listing(dir.path());
        let report = report(&listing, &options(&[]));
        assert_eq!(report.total.input, 100 + 50 + 20, "{first}");
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    }
}

#[test]
fn a_launch_that_lists_no_results_is_counted_in_its_run_files() {
    // The result records only the launch's `runId` and the runs' summed usage; the runs'
    // files are where pi-subagents writes them.
    const STEM: &str = "--work-app--/2026-03-01T00-00-00-000Z_p";
    let parent = vec![
        header("p", "2026-03-01T00:00:00.000Z", None),
        assistant("a1", None, "2026-03-01T00:00:02.000Z", "m", 100, Some(0.25)),
        tool_result(
            "t1",
            "2026-03-01T00:10:00.000Z",
            r#"{"mode":"parallel","runId":"e5f6"}"#,
            Some((80, 2, 0.25)),
        ),
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    materialize(
        dir.path(),
        &[
            (P, parent),
            (
                &format!("{STEM}/e5f6/run-0/session.jsonl"),
                run_file("r0", "2026-03-01T00:05:00.000Z", 50, 0.125),
            ),
            (
                &format!("{STEM}/e5f6/run-1/session.jsonl"),
                run_file("r1", "2026-03-01T00:06:00.000Z", 30, 0.125),
            ),
        ],
    );
    let listing = listing(dir.path());
    let sessions = report(&listing, &options(&[GroupKey::Session]));
    assert_eq!(sessions.total.input, 100 + 50 + 30);
    assert_eq!(
        by_session(&sessions),
        BTreeMap::from([
            ("p".to_owned(), (100 + 80, 100, 100 + 50 + 30)),
            ("r0".to_owned(), (50, 50, 50)),
            ("r1".to_owned(), (30, 30, 30)),
        ])
    );
    assert!(sessions.warnings.is_empty(), "{:?}", sessions.warnings);
    for group_by in [vec![GroupKey::Model], vec![GroupKey::Day], vec![]] {
        assert_eq!(report(&listing, &options(&group_by)).total, sessions.total);
    }
}

/// One launcher (100 tokens) with two runs whose files pi-subagents wrote (50 and 30), and
/// one tool result standing for them with `details` (`None`: no details) and their sum (80)
/// as its nested usage.
fn launch_with(details: Option<&str>) -> (tempfile::TempDir, StatsReport) {
    let (dir, listing) = launch_store(details);
    let report = report(&listing, &options(&[GroupKey::Session]));
    (dir, report)
}

/// The store of [`launch_with`], listed.
fn launch_store(details: Option<&str>) -> (tempfile::TempDir, pi_retrospect_core::Listing) {
    const STEM: &str = "--work-app--/2026-03-01T00-00-00-000Z_p";
    let message = Message::tool_result("c-t1", "subagent", "done")
        .is_error(false)
        .timestamp(1)
        .member("usage", &usage(80, 2, Some(0.25)));
    let message = match details {
        Some(details) => message.details(details),
        None => message,
    };
    let parent = vec![
        header("p", "2026-03-01T00:00:00.000Z", None),
        assistant("a1", None, "2026-03-01T00:00:02.000Z", "m", 100, Some(0.25)),
        Entry::message(message)
            .id("t1")
            .parent(Some("a1"))
            .at("2026-03-01T00:10:00.000Z")
            .to_string(),
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    materialize(
        dir.path(),
        &[
            (P, parent),
            (
                &format!("{STEM}/e5f6/run-0/session.jsonl"),
                run_file("r0", "2026-03-01T00:05:00.000Z", 50, 0.125),
            ),
            (
                &format!("{STEM}/e5f6/run-1/session.jsonl"),
                run_file("r1", "2026-03-01T00:06:00.000Z", 30, 0.125),
            ),
        ],
    );
    let listing = listing(dir.path());
    (dir, listing)
}

#[test]
fn a_result_that_names_its_runs_no_usable_way_is_counted_in_their_files() {
    // Each result stands for the two runs but names them in no way that finds their files:
    // the launcher's runs that no result named are those runs.
    let bare = |index: u64, input: u64| unnamed_result(index, input, None);
    for details in [
        None,
        // No runId: the index alone does not say where the run is.
        Some(format!(
            r#"{{"results":[{},{}]}}"#,
            bare(0, 50),
            bare(1, 30)
        )),
        // A runId that is not the run directory's.
        Some(format!(
            r#"{{"runId":"0bad","results":[{},{}]}}"#,
            bare(0, 50),
            bare(1, 30)
        )),
    ] {
        let (_dir, report) = launch_with(details.as_deref());
        assert_eq!(report.total.input, 100 + 50 + 30, "{details:?}");
        assert_eq!(
            by_session(&report)["p"],
            (100 + 80, 100, 100 + 50 + 30),
            "{details:?}"
        );
        assert!(
            report.warnings.is_empty(),
            "{details:?}: {:?}",
            report.warnings
        );
    }
}

#[test]
fn a_result_naming_a_file_that_is_not_its_run_counts_the_run_from_the_result() {
    // The runs' files are gone; the results name the launcher itself and the same file
    // twice: the usage they record is all there is of those runs.
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().display().to_string();
    let named = |index: u64, input: u64, file: &str| {
        format!(
            r#"{{"index":{index},"agent":"worker","task":"t","exitCode":0,"usage":{},"sessionFile":"{root}/{file}"}}"#,
            run_usage(input, 0.125)
        )
    };
    let parent = vec![
        header("p", "2026-03-01T00:00:00.000Z", None),
        assistant("a1", None, "2026-03-01T00:00:02.000Z", "m", 100, Some(0.25)),
        tool_result(
            "t1",
            "2026-03-01T00:10:00.000Z",
            &format!(r#"{{"results":[{},{}]}}"#, named(0, 50, P), named(1, 30, P)),
            Some((80, 2, 0.25)),
        ),
        // Two results naming one run file: the second is another run, whose file is missing.
        tool_result(
            "t2",
            "2026-03-01T00:20:00.000Z",
            &format!(
                r#"{{"results":[{},{}]}}"#,
                named(0, 7, RUN_0),
                named(1, 3, RUN_0)
            ),
            Some((10, 2, 0.25)),
        ),
        // The same result twice is one run.
        tool_result(
            "t3",
            "2026-03-01T00:30:00.000Z",
            &format!(
                r#"{{"results":[{},{}]}}"#,
                named(0, 9, RUN_1),
                named(0, 9, RUN_1)
            ),
            Some((9, 1, 0.125)),
        ),
    ];
    materialize(
        dir.path(),
        &[
            (P, parent),
            (RUN_0, run_file("r0", "2026-03-01T00:15:00.000Z", 7, 0.125)),
            (RUN_1, run_file("r1", "2026-03-01T00:25:00.000Z", 9, 0.125)),
        ],
    );
    let report = report(&listing(dir.path()), &options(&[GroupKey::Session]));
    assert_eq!(report.total.input, 100 + 50 + 30 + 7 + 3 + 9);
    assert_eq!(by_session(&report)["p"].1, 100 + 50 + 30 + 3);
    assert_eq!(report.n_warnings, 1, "{:?}", report.warnings);
    assert!(
        report.warnings[0]
            .reason
            .starts_with("3 subagent runs launched here have no session file"),
        "{:?}",
        report.warnings
    );
}

#[test]
fn a_time_range_splits_the_calls_of_runs_no_result_names_usably() {
    // The runs' calls (00:05, 00:06) and the result standing for them (00:10) fall on either
    // side of the bound: each call is counted once, on its own side.
    let (_dir, listing) = launch_store(None);
    let bounded = |since: Option<&str>, until: Option<&str>| {
        let mut options = options(&[]);
        options.since = since.map(|text| text.parse().expect("instant"));
        options.until = until.map(|text| text.parse().expect("instant"));
        report(&listing, &options).total.input
    };
    let whole = bounded(None, None);
    assert_eq!(whole, 100 + 50 + 30);
    let before = bounded(None, Some("2026-03-01T00:07:00Z"));
    let after = bounded(Some("2026-03-01T00:07:00.001Z"), None);
    assert_eq!((before, after), (100 + 50 + 30, 0));
}
