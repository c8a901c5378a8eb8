//! The store total is the deduplicated sum over files, for any store: sessions with calls,
//! forks that copy a prefix of their parent, and subagent runs whose launching tool result
//! carries their nested usage, with or without the run's file.

use crate::common;

use common::{assistant, header, listing, materialize, options, report, usage};
use pi_retrospect_stats::GroupKey;
use pi_retrospect_testkit::{Entry, Message};
use proptest::prelude::*;

/// One top-level session: its calls' input tokens, where its subagent tool result sits
/// among them, its runs (calls, whether the file exists) and an optional fork (how many of
/// the parent's entries it copies, and its own calls).
#[derive(Debug, Clone)]
struct Plan {
    calls: Vec<u64>,
    launch_at: usize,
    runs: Vec<(Vec<u64>, bool)>,
    fork: Option<(usize, Vec<u64>)>,
}

fn plan() -> impl Strategy<Value = Plan> {
    (
        prop::collection::vec(1u64..1000, 0..5),
        0usize..6,
        prop::collection::vec(
            (prop::collection::vec(1u64..1000, 1..3), any::<bool>()),
            0..3,
        ),
        prop::option::of((0usize..8, prop::collection::vec(1u64..1000, 0..3))),
    )
        .prop_map(|(calls, launch_at, runs, fork)| Plan {
            launch_at: launch_at.min(calls.len()),
            calls,
            runs,
            fork,
        })
}

fn stamp(minute: usize, second: usize) -> String {
    format!(
        "2026-05-01T{:02}:{:02}:{:02}.000Z",
        minute / 60,
        minute % 60,
        second % 60
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn the_store_total_is_the_deduplicated_sum_over_files(plans in prop::collection::vec(plan(), 1..4)) {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().to_str().expect("UTF-8").to_owned();
        let mut files: Vec<(String, Vec<String>)> = Vec::new();
        let mut expected: u64 = 0;
        for (p, plan) in plans.iter().enumerate() {
            let stem = format!("2026-05-01T00-{p:02}-00-000Z_p{p}");
            let parent_path = format!("--work-app--/{stem}.jsonl");
            let mut entries = Vec::new();
            for (c, input) in plan.calls.iter().enumerate() {
                if c == plan.launch_at && !plan.runs.is_empty() {
                    entries.push(launch(&root, &stem, p, &plan.runs));
                }
                entries.push(assistant(&format!("p{p}c{c}"), None, &stamp(p * 10, c + 1), "m", *input, Some(0.5)));
                expected += input;
            }
            if plan.launch_at >= plan.calls.len() && !plan.runs.is_empty() {
                entries.push(launch(&root, &stem, p, &plan.runs));
            }
            for (r, (calls, exists)) in plan.runs.iter().enumerate() {
                expected += calls.iter().sum::<u64>();
                if *exists {
                    let mut run = vec![header(&format!("p{p}r{r}"), &stamp(p * 10 + 1, r), None)];
                    run.extend(calls.iter().enumerate().map(|(c, input)| {
                        assistant(&format!("p{p}r{r}c{c}"), None, &stamp(p * 10 + 1, r + c + 1), "m", *input, Some(0.25))
                    }));
                    files.push((format!("--work-app--/{stem}/l{p}/run-{r}/session.jsonl"), run));
                }
            }
            if let Some((n_copied, own)) = &plan.fork {
                let mut fork = vec![header(&format!("f{p}"), &stamp(p * 10 + 5, 0), Some(&format!("{root}/{parent_path}")))];
                fork.extend(entries.iter().take(*n_copied).cloned());
                for (c, input) in own.iter().enumerate() {
                    fork.push(assistant(&format!("f{p}c{c}"), None, &stamp(p * 10 + 5, c + 1), "m", *input, Some(1.0)));
                    expected += input;
                }
                files.push((format!("--work-app--/2026-05-01T00-{p:02}-30-000Z_f{p}.jsonl"), fork));
            }
            let mut parent = vec![header(&format!("p{p}"), &stamp(p * 10, 0), None)];
            parent.extend(entries);
            files.push((parent_path, parent));
        }
        let borrowed: Vec<(&str, Vec<String>)> =
            files.iter().map(|(path, lines)| (path.as_str(), lines.clone())).collect();
        materialize(dir.path(), &borrowed);
        let listing = listing(dir.path());
        prop_assert!(listing.warnings.is_empty(), "{:?}", listing.warnings);
        let mut in_store = options(&[]);
        in_store.store_roots = vec![std::fs::canonicalize(dir.path()).expect("root").display().to_string()];
        for group_by in [vec![], vec![GroupKey::Session], vec![GroupKey::Project, GroupKey::Day], vec![GroupKey::Model]] {
            let mut grouped = in_store.clone();
            grouped.group_by = group_by.clone();
            let report = report(&listing, &grouped);
            prop_assert_eq!(report.total.input, expected, "{:?}", group_by);
            if !group_by.is_empty() {
                let sum: u64 = report.rows.iter().map(|row| row.figures.counted().input).sum();
                prop_assert_eq!(sum, expected, "{:?}", group_by);
            }
        }
    }
}

/// The `subagent` tool result of session `p` launching `runs`: nested usage the sum of all
/// of them, and each run's `sessionFile` (whether or not the file exists).
fn launch(root: &str, stem: &str, p: usize, runs: &[(Vec<u64>, bool)]) -> String {
    let results: Vec<String> = runs
        .iter()
        .enumerate()
        .map(|(r, (calls, _))| {
            format!(
                r#"{{"agent":"w","exitCode":0,"usage":{{"input":{},"output":0,"cacheRead":0,"cacheWrite":0,"cost":0.25,"turns":1}},"sessionFile":"{root}/--work-app--/{stem}/l{p}/run-{r}/session.jsonl"}}"#,
                calls.iter().sum::<u64>()
            )
        })
        .collect();
    let nested: u64 = runs
        .iter()
        .map(|(calls, _)| calls.iter().sum::<u64>())
        .sum();
    let message = Message::with_role("toolResult")
        .text_member("toolCallId", "c")
        .text_member("toolName", "subagent")
        .content(&[])
        .details(&format!(
            r#"{{"mode":"parallel","results":[{}]}}"#,
            results.join(",")
        ))
        .is_error(false)
        .timestamp(1)
        .member("usage", &usage(nested, 0, Some(0.25)));
    Entry::message(message)
        .id(&format!("p{p}t"))
        .parent(None)
        .at(&stamp(p * 10, 59))
        .to_string()
}
