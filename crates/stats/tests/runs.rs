//! Each model call once where pi-subagents ran: the launching tool result's nested usage
//! (`message.usage`, the sum of its runs) is not added when the runs are listed as files, and
//! is counted only for a run whose file is missing, with one warning naming the launcher. Also:
//! a header's `parentSession` outside the stores is never opened, and a file of forged usage
//! costs a count of warnings, not a warning each.

mod common;

use std::collections::BTreeMap;

use common::{assistant, header, listing, materialize, options, report, user};
use pi_retrospect_stats::{Figures, GroupKey, StatsReport, Usage};
use proptest::prelude::*;

const P: &str = "--work-app--/2026-01-01T00-00-00-000Z_p.jsonl";
const FOREGROUND_RUN: &str = "--work-app--/2026-01-01T00-00-00-000Z_p/3f1c/run-0/session.jsonl";
const BACKGROUND_RUN: &str = "--work-app--/2026-01-01T00-00-00-000Z_p/9a2b/run-0/session.jsonl";
const MISSING_RUN: &str = "--work-app--/2026-01-01T00-00-00-000Z_p/77aa/run-0/session.jsonl";
const ARTIFACT: &str = "--work-app--/2026-01-01T00-00-00-000Z_p/subagent-artifacts/run-0.jsonl";

/// A run's usage as pi-subagents keeps it on `details.results[]` (cost a number).
fn run_usage(input: u64, cost: f64) -> String {
    format!(
        r#"{{"input":{input},"output":1,"cacheRead":0,"cacheWrite":0,"cost":{cost},"turns":1}}"#
    )
}

/// Pi's usage object that pi-subagents' `toAgentToolUsage` puts on the tool result.
fn tool_usage(input: u64, output: u64, cost: f64) -> String {
    format!(
        r#"{{"input":{input},"output":{output},"cacheRead":0,"cacheWrite":0,"totalTokens":{},"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":{cost}}}}}"#,
        input + output
    )
}

/// The foreground `subagent` tool result: two runs, one listed, one whose file is gone.
fn foreground_result(root: &str) -> String {
    format!(
        r#"{{"type":"message","id":"t1","parentId":"a1","timestamp":"2026-01-01T00:10:00.000Z","message":{{"role":"toolResult","toolCallId":"c1","toolName":"subagent","content":[{{"type":"text","text":"done"}}],"details":{{"mode":"parallel","runId":"3f1c","results":[{{"agent":"worker","runId":"3f1c-0","usage":{},"sessionFile":"{root}/{FOREGROUND_RUN}"}},{{"agent":"worker","runId":"77aa-0","usage":{},"sessionFile":"{root}/{MISSING_RUN}"}}]}},"usage":{},"isError":false,"timestamp":1767226200000}}}}"#,
        run_usage(50, 0.125),
        run_usage(70, 0.25),
        tool_usage(120, 2, 0.375)
    )
}

/// The background launch (no usage yet) and the wait that delivers its completion.
fn background_results(root: &str) -> [String; 2] {
    [
        r#"{"type":"message","id":"t2","parentId":"a2","timestamp":"2026-01-01T00:20:00.000Z","message":{"role":"toolResult","toolCallId":"c2","toolName":"subagent","content":[{"type":"text","text":"started"}],"details":{"mode":"single","runId":"9a2b","results":[],"asyncId":"9a2b","background":true},"isError":false,"timestamp":1767226800000}}"#.to_owned(),
        format!(
            r#"{{"type":"message","id":"t3","parentId":"a3","timestamp":"2026-01-01T00:40:00.000Z","message":{{"role":"toolResult","toolCallId":"c3","toolName":"subagent_wait","content":[{{"type":"text","text":"1 complete"}}],"usage":{},"details":{{"mode":"management","results":[],"completions":[{{"runId":"9a2b","state":"complete","results":[{{"agent":"worker","runId":"9a2b-0","usage":{},"sessionFile":"{root}/{BACKGROUND_RUN}"}}]}}]}},"isError":false,"timestamp":1767228000000}}}}"#,
            tool_usage(80, 1, 0.5),
            run_usage(80, 0.5)
        ),
    ]
}

/// A launcher with two calls of its own (100 and 200 input tokens), a foreground launch of
/// two runs (one file listed: 50; one missing: 70), a background run (80) completed by a
/// wait, and a copy of the foreground run in `subagent-artifacts/`.
fn store() -> (tempfile::TempDir, pi_retrospect_core::Listing) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_str().expect("UTF-8 temp dir").to_owned();
    let [background_launch, background_wait] = background_results(&root);
    let launcher = vec![
        header("p", "2026-01-01T00:00:00.000Z", None),
        user("u1", None, "2026-01-01T00:00:01.000Z"),
        assistant(
            "a1",
            Some("u1"),
            "2026-01-01T00:00:02.000Z",
            "m",
            100,
            Some(0.25),
        ),
        foreground_result(&root),
        assistant(
            "a2",
            Some("t1"),
            "2026-01-01T00:11:00.000Z",
            "m",
            200,
            Some(0.5),
        ),
        background_launch,
        assistant(
            "a3",
            Some("t2"),
            "2026-01-01T00:21:00.000Z",
            "m",
            0,
            Some(0.0),
        ),
        background_wait,
    ];
    let foreground_run = vec![
        header("r", "2026-01-01T00:05:00.000Z", None),
        assistant("r1", None, "2026-01-01T00:05:01.000Z", "x", 50, Some(0.125)),
    ];
    let background_run = vec![
        header("b", "2026-01-01T00:25:00.000Z", None),
        assistant("b1", None, "2026-01-01T00:25:01.000Z", "y", 80, Some(0.5)),
    ];
    materialize(
        dir.path(),
        &[
            (P, launcher),
            (FOREGROUND_RUN, foreground_run.clone()),
            (BACKGROUND_RUN, background_run),
            (ARTIFACT, foreground_run),
        ],
    );
    let listing = listing(dir.path());
    assert!(listing.warnings.is_empty(), "{:?}", listing.warnings);
    (dir, listing)
}

fn figures(report: &StatsReport) -> BTreeMap<String, (Usage, Usage, Usage)> {
    report
        .rows
        .iter()
        .map(|row| {
            let session = row.session.as_ref().expect("session row");
            let Figures::Session { pi, own, with_runs } = &row.figures else {
                panic!("session figures");
            };
            (session.session_id.clone(), (*pi, *own, *with_runs))
        })
        .collect()
}

#[test]
fn nested_usage_counts_only_runs_whose_files_are_missing() {
    let (_dir, listing) = store();
    let report = report(&listing, &options(&[GroupKey::Session]));
    let rows = figures(&report);
    let (pi, own, with_runs) = rows["p"];
    // Pi's figure: its own calls and both tool results' nested usage whole.
    assert_eq!(pi.input, 100 + 200 + 120 + 80);
    // Its own calls, and the missing run's share of the foreground result.
    assert_eq!(own.input, 100 + 200 + 70);
    assert_eq!(own.cost, 0.25 + 0.5 + 0.25);
    assert_eq!(with_runs.input, 100 + 200 + 70 + 50 + 80);
    assert_eq!(rows["r"].1.input, 50);
    assert_eq!(rows["b"].1.input, 80);
    assert_eq!(report.total.input, 100 + 200 + 70 + 50 + 80);
    assert_eq!(rows.len(), 3, "subagent-artifacts/ is never read");
    let reasons: Vec<(&str, &str)> = report
        .warnings
        .iter()
        .map(|warning| (warning.path.as_str(), warning.reason.as_str()))
        .collect();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].0.ends_with(P));
    assert!(
        reasons[0]
            .1
            .starts_with("1 subagent runs launched here have no session file")
            && reasons[0].1.contains(MISSING_RUN),
        "{reasons:?}"
    );

    // Every other grouping and the rollup count the same calls once.
    for group_by in [
        vec![],
        vec![GroupKey::Project],
        vec![GroupKey::Model],
        vec![GroupKey::Day],
        vec![GroupKey::Project, GroupKey::Week],
        vec![GroupKey::Model, GroupKey::Day],
    ] {
        let grouped = common::report(&listing, &options(&group_by));
        let sum: u64 = grouped
            .rows
            .iter()
            .map(|row| row.figures.counted().input)
            .sum();
        if !group_by.is_empty() {
            assert_eq!(sum, report.total.input, "{group_by:?}");
        }
        assert_eq!(grouped.total, report.total, "{group_by:?}");
    }
    let by_model = common::report(&listing, &options(&[GroupKey::Model]));
    let models: BTreeMap<&str, u64> = by_model
        .rows
        .iter()
        .map(|row| {
            (
                row.model.as_deref().unwrap_or(""),
                row.figures.counted().input,
            )
        })
        .collect();
    assert_eq!(
        models,
        BTreeMap::from([
            ("anthropic/m", 300),
            ("anthropic/x", 50),
            ("anthropic/y", 80),
            ("tool:subagent", 70),
        ])
    );
}

#[test]
fn session_rows_say_what_the_session_was() {
    let (_dir, listing) = store();
    let report = report(&listing, &options(&[GroupKey::Session]));
    let launcher = report
        .rows
        .iter()
        .filter_map(|row| row.session.as_ref())
        .find(|session| session.session_id == "p")
        .expect("launcher row");
    assert_eq!(launcher.cwd, "/work/app");
    assert_eq!(launcher.facts.first_user_message.as_deref(), Some("hello"));
    assert_eq!(launcher.facts.n_turns, 3);
    // From the first entry (00:00:01) to the last (00:40:00).
    assert_eq!(launcher.facts.duration_ms, Some(40 * 60 * 1000 - 1000));
}

#[test]
fn a_parent_session_outside_the_stores_is_never_opened() {
    let dir = tempfile::tempdir().expect("temp dir");
    let outside = tempfile::tempdir().expect("outside dir");
    let existing = outside.path().join("2026-01-01T00-00-00-000Z_x.jsonl");
    std::fs::write(&existing, "not a session\n").expect("write outside file");
    let existing = existing.to_str().expect("UTF-8").to_owned();
    let missing = outside.path().join("2026-01-01T00-00-00-000Z_y.jsonl");
    let missing = missing.to_str().expect("UTF-8").to_owned();
    let parents = [
        "/dev/zero",
        "/etc/hostname",
        existing.as_str(),
        missing.as_str(),
    ];
    for (idx, parent) in parents.iter().enumerate() {
        let fork = vec![
            header(&format!("f{idx}"), "2026-01-02T00:00:00.000Z", Some(parent)),
            assistant(
                &format!("a{idx}"),
                None,
                "2026-01-02T00:00:01.000Z",
                "m",
                10,
                Some(0.5),
            ),
        ];
        let relative = format!("--work-app--/2026-01-02T00-00-00-000Z_f{idx}.jsonl");
        materialize(dir.path(), &[(relative.as_str(), fork)]);
    }
    let listing = listing(dir.path());
    let mut options = options(&[GroupKey::Session]);
    options.store_roots = vec![
        std::fs::canonicalize(dir.path())
            .expect("canonical")
            .display()
            .to_string(),
    ];
    let report = report(&listing, &options);
    assert_eq!(report.total.input, 40, "every fork counted whole, once");
    let reasons: Vec<String> = report
        .warnings
        .iter()
        .map(|warning| warning.reason.clone())
        .collect();
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    for (reason, parent) in reasons.iter().zip(parents) {
        // The same words whether the path exists, is a device or is missing.
        assert_eq!(
            reason.replace(parent, "PARENT"),
            "fork parent PARENT is not a session file in the stores: it is not read, and entries are deduplicated only against other forks of it",
        );
    }
}

#[test]
fn forks_of_an_unusable_parent_count_its_copies_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let copied = assistant("a1", None, "2026-01-01T00:00:01.000Z", "m", 100, Some(0.5));
    for (id, own_tokens) in [("f", 10), ("g", 20)] {
        let fork = vec![
            header(id, "2026-01-02T00:00:00.000Z", Some("/elsewhere/p.jsonl")),
            copied.clone(),
            assistant(
                &format!("{id}1"),
                Some("a1"),
                "2026-01-02T00:00:01.000Z",
                "m",
                own_tokens,
                Some(0.5),
            ),
        ];
        let relative = format!("--work-app--/2026-01-02T00-00-00-000Z_{id}.jsonl");
        materialize(dir.path(), &[(relative.as_str(), fork)]);
    }
    let report = report(&listing(dir.path()), &options(&[GroupKey::Session]));
    assert_eq!(report.total.input, 100 + 10 + 20);
}

/// A forged file: every assistant line carries a usage no token count can hold.
#[test]
fn forged_usage_costs_a_count_of_warnings() {
    const N_LINES: usize = 20_000;
    let dir = tempfile::tempdir().expect("temp dir");
    let forged = [
        r#"{"input":-1}"#,
        r#"{"input":"12"}"#,
        r#"{"output":1e400}"#,
        r#"{"cacheRead":1.5}"#,
    ];
    let mut lines = vec![header("z", "2026-01-01T00:00:00.000Z", None)];
    lines.push(assistant(
        "ok",
        None,
        "2026-01-01T00:00:01.000Z",
        "m",
        7,
        Some(0.5),
    ));
    for idx in 0..N_LINES {
        lines.push(format!(
            r#"{{"type":"message","id":"x{idx}","parentId":null,"timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[],"provider":"p","model":"m","usage":{},"timestamp":1}}}}"#,
            forged[idx % forged.len()]
        ));
    }
    materialize(
        dir.path(),
        &[("--work-app--/2026-01-01T00-00-00-000Z_z.jsonl", lines)],
    );
    let report = report(&listing(dir.path()), &options(&[GroupKey::Day]));
    assert_eq!(report.total.input, 7, "the one good line is counted");
    assert_eq!(report.warnings.len(), 6, "{:?}", report.warnings);
    assert_eq!(report.n_warnings, N_LINES as u64);
    assert_eq!(
        report.warnings[5].reason,
        format!("… and {} more lines that could not be counted", N_LINES - 5)
    );
    assert!(
        report.warnings[0]
            .reason
            .starts_with("line 3: usage.input is not a token count")
    );
}

/// Records of a generated store: each file's own calls, forks' copies of a prefix of their
/// parent, and launches whose runs are listed or missing.
fn generated_store(
    n_calls: &[u64],
    fork_prefix: &[usize],
    missing: &[bool],
) -> (tempfile::TempDir, u64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_str().expect("UTF-8").to_owned();
    let parent_rel = "--work-app--/2026-01-01T00-00-00-000Z_p.jsonl";
    let mut parent = vec![header("p", "2026-01-01T00:00:00.000Z", None)];
    let mut expected = 0u64;
    let mut entries = Vec::new();
    for (idx, tokens) in n_calls.iter().enumerate() {
        entries.push(assistant(
            &format!("a{idx}"),
            None,
            &format!("2026-01-01T00:00:{:02}.000Z", idx % 60),
            "m",
            *tokens,
            Some(0.0),
        ));
        expected += tokens;
    }
    parent.extend(entries.iter().cloned());
    let mut files = Vec::new();
    for (idx, is_missing) in missing.iter().enumerate() {
        let run_rel = format!("--work-app--/2026-01-01T00-00-00-000Z_p/r{idx}/run-0/session.jsonl");
        let tokens = 10 + idx as u64;
        parent.push(format!(
            r#"{{"type":"message","id":"t{idx}","parentId":null,"timestamp":"2026-01-01T00:01:00.000Z","message":{{"role":"toolResult","toolCallId":"c{idx}","toolName":"subagent","content":[],"details":{{"mode":"single","results":[{{"agent":"w","usage":{},"sessionFile":"{root}/{run_rel}"}}]}},"usage":{},"isError":false,"timestamp":1}}}}"#,
            run_usage(tokens, 0.0),
            tool_usage(tokens, 1, 0.0)
        ));
        expected += tokens;
        if !is_missing {
            files.push((
                run_rel,
                vec![
                    header(&format!("r{idx}"), "2026-01-01T00:00:30.000Z", None),
                    assistant(
                        &format!("r{idx}"),
                        None,
                        "2026-01-01T00:00:31.000Z",
                        "m",
                        tokens,
                        Some(0.0),
                    ),
                ],
            ));
        } else {
            // A missing run's output token is counted from the tool result too.
            expected += 0;
        }
    }
    for (idx, prefix) in fork_prefix.iter().enumerate() {
        let mut fork = vec![header(
            &format!("f{idx}"),
            &format!("2026-01-02T00:00:{:02}.000Z", idx % 60),
            Some(&format!("{root}/{parent_rel}")),
        )];
        fork.extend(entries.iter().take(*prefix).cloned());
        fork.push(assistant(
            &format!("f{idx}x"),
            None,
            "2026-01-02T00:00:00.000Z",
            "m",
            3,
            Some(0.0),
        ));
        expected += 3;
        files.push((
            format!(
                "--work-app--/2026-01-02T00-00-{:02}-000Z_f{idx}.jsonl",
                idx % 60
            ),
            fork,
        ));
    }
    files.push((parent_rel.to_owned(), parent));
    let borrowed: Vec<(&str, Vec<String>)> = files
        .iter()
        .map(|(path, lines)| (path.as_str(), lines.clone()))
        .collect();
    materialize(dir.path(), &borrowed);
    (dir, expected)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The store total is every call once: each file's own calls, a fork's copies once, a
    /// run once whether its file is listed or only its launcher's tool result counts it.
    #[test]
    fn the_store_total_is_the_deduplicated_sum_over_files(
        n_calls in prop::collection::vec(1u64..1000, 1..6),
        fork_prefix in prop::collection::vec(0usize..6, 0..3),
        missing in prop::collection::vec(any::<bool>(), 0..4),
    ) {
        let fork_prefix: Vec<usize> = fork_prefix.iter().map(|prefix| prefix % (n_calls.len() + 1)).collect();
        let (dir, expected) = generated_store(&n_calls, &fork_prefix, &missing);
        let listing = listing(dir.path());
        let mut options = options(&[GroupKey::Session]);
        options.store_roots = vec![std::fs::canonicalize(dir.path()).expect("canonical").display().to_string()];
        let by_session = report(&listing, &options);
        prop_assert_eq!(by_session.total.input, expected);
        let own_sum: u64 = by_session.rows.iter().map(|row| row.figures.counted().input).sum();
        prop_assert_eq!(own_sum, expected);
        let rolled_up: u64 = by_session.rows.iter().filter(|row| row.session.as_ref().is_some_and(|session| session.depth == 0)).map(|row| match &row.figures { Figures::Session { with_runs, .. } => with_runs.input, Figures::Group { usage } => usage.input }).sum();
        prop_assert_eq!(rolled_up, expected);
        for group_by in [vec![], vec![GroupKey::Model, GroupKey::Day]] {
            let mut grouped_options = options.clone();
            grouped_options.group_by = group_by;
            prop_assert_eq!(report(&listing, &grouped_options).total.input, expected);
        }
    }
}
