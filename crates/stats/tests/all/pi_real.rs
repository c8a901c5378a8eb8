//! Agreement with the real Pi: for every file of `fixtures/pi-real/sessions/` (written by Pi
//! 1.6.0), `expected.json` holds the totals Pi's own session statistics report for it
//! (`AgentSession.getSessionStats()`, run by `generate.mjs`). Our `pi` figure must equal them:
//! every token count exactly, and the cost to the last bit, since both add the same numbers
//! in the same order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jiff::tz::TimeZone;
use pi_retrospect_stats::{Figures, GroupKey, StatsOptions, StatsReport, Usage, stats};
use pi_retrospect_walk::{Layout, Store, WalkOptions, list_stores};
use serde_json::Value;

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/pi-real")
        .canonicalize()
        .expect("fixtures/pi-real exists")
}

fn expected() -> Value {
    let text = std::fs::read_to_string(fixture_root().join("expected.json")).expect("read");
    serde_json::from_str(&text).expect("expected.json is JSON")
}

fn report(group_by: &[GroupKey]) -> (StatsReport, String) {
    let root = fixture_root().join("sessions");
    let root_text = root.to_str().expect("UTF-8 path").to_owned();
    let store = Store::resolve(&root, Path::new("/"), Layout::Projects).expect("store");
    let listing = list_stores(&[store], &WalkOptions { threads: 1 }).expect("walk");
    assert!(listing.warnings.is_empty(), "{:?}", listing.warnings);
    let mut options = StatsOptions::new(TimeZone::UTC);
    options.group_by = group_by.to_vec();
    (stats(&listing, options), root_text)
}

/// Returns `(key relative to sessions/, figures)` for every session row.
fn session_rows(report: &StatsReport, root: &str) -> BTreeMap<String, (Usage, Usage, Usage)> {
    report
        .rows
        .iter()
        .map(|row| {
            let session = row.session.as_ref().expect("grouped by session");
            let key = session
                .path
                .strip_prefix(root)
                .and_then(|rest| rest.strip_prefix('/'))
                .expect("under the root")
                .to_owned();
            let Figures::Session { pi, own, with_runs } = row.figures.clone() else {
                panic!("a session row has session figures");
            };
            (key, (pi, own, with_runs))
        })
        .collect()
}

#[test]
fn pi_figure_equals_pi_session_statistics_on_every_real_file() {
    let expected = expected();
    let files = expected["files"].as_object().expect("files");
    let (report, root) = report(&[GroupKey::Session]);
    assert!(report.warnings.is_empty(), "{:#?}", report.warnings);
    let rows = session_rows(&report, &root);
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        files.keys().collect::<Vec<_>>(),
        "one row per session file"
    );
    let mut mismatches = Vec::new();
    for (key, file) in files {
        let pi_stats = &file["sessionStats"];
        let (pi, _, _) = &rows[key];
        let ours = serde_json::json!({
            "input": pi.input,
            "output": pi.output,
            "cacheRead": pi.cache_read,
            "cacheWrite": pi.cache_write,
            "total": pi.total,
        });
        if ours != pi_stats["tokens"] {
            mismatches.push(format!(
                "{key}: tokens ours {ours} pi {}",
                pi_stats["tokens"]
            ));
        }
        // Pi's cost counts a zero cost as zero; ours leaves such records out of `cost` and
        // counts them as unknown, so the sums agree.
        let pi_cost = pi_stats["cost"].as_f64().expect("cost");
        if pi.cost.to_bits() != pi_cost.to_bits() {
            mismatches.push(format!("{key}: cost ours {} pi {pi_cost}", pi.cost));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn the_corpus_reaches_every_kind_of_usage_record() {
    // What the equality above covers, so that a regenerated corpus cannot quietly lose it.
    let expected = expected();
    let usage = expected["files"]
        .as_object()
        .expect("files")
        .values()
        .find(|file| file["scenario"] == "usage")
        .expect("the usage scenario");
    let types = usage["entryTypes"].as_array().expect("types");
    for kind in ["usage", "compaction", "branch_summary", "model_change"] {
        assert!(types.iter().any(|t| t == kind), "{kind}");
    }
    assert!(usage["sessionStats"]["cost"].as_f64().expect("cost") > 0.0);
    assert_eq!(usage["sessionStats"]["toolResults"], 1);
}

#[test]
fn forks_and_runs_are_counted_once_in_the_store_total() {
    let expected = expected();
    let files = expected["files"].as_object().expect("files");
    let (report, root) = report(&[GroupKey::Session]);
    let rows = session_rows(&report, &root);

    let mut own_sum = Usage::default();
    for (key, (pi, own, _)) in &rows {
        own_sum.add(own);
        let file = &files[key];
        let is_fork = file["parentSession"].is_string();
        if is_fork {
            // Pi counts the copies again; our own figure does not.
            assert!(own.total < pi.total, "{key}: {own:?} {pi:?}");
            assert!(own.n_entries < pi.n_entries, "{key}");
        } else {
            assert_eq!(own, pi, "{key}");
        }
    }
    assert_eq!(report.total, own_sum);

    // The fork and the fork-context run copied the tools session's first turns: what Pi
    // reports for all files together exceeds the store total by exactly those copies.
    let pi_sum: u64 = files
        .values()
        .map(|file| {
            file["sessionStats"]["tokens"]["total"]
                .as_u64()
                .expect("total")
        })
        .sum();
    let copied: u64 = rows.values().map(|(pi, own, _)| pi.total - own.total).sum();
    assert!(copied > 0);
    assert_eq!(report.total.total + copied, pi_sum);

    // The tools session's `withRuns` holds its two runs and its fork-context run (own only).
    let tools = files
        .iter()
        .find(|(_, file)| {
            file["role"]
                .as_str()
                .is_some_and(|role| role.starts_with("tools:"))
        })
        .map(|(key, _)| key.clone())
        .expect("tools session");
    let (_, tools_own, tools_with_runs) = &rows[&tools];
    let runs_own: u64 = rows
        .iter()
        .filter(|(key, _)| *key != &tools && key.starts_with(tools.trim_end_matches(".jsonl")))
        .map(|(_, (_, own, _))| own.total)
        .sum();
    assert_eq!(tools_with_runs.total, tools_own.total + runs_own);
}

#[test]
fn every_grouping_adds_up_to_the_same_total() {
    let (base, _) = report(&[]);
    assert!(base.rows.is_empty());
    for group_by in [
        vec![GroupKey::Session],
        vec![GroupKey::Project],
        vec![GroupKey::Model],
        vec![GroupKey::Day],
        vec![GroupKey::Week, GroupKey::Model],
        vec![GroupKey::Month, GroupKey::Session],
        vec![GroupKey::Model, GroupKey::Day, GroupKey::Session],
    ] {
        let (report, _) = report(&group_by);
        let mut sum = Usage::default();
        for row in &report.rows {
            sum.add(row.figures.counted());
        }
        assert_eq!(sum.total, base.total.total, "{group_by:?}");
        assert_eq!(sum.n_entries, base.total.n_entries, "{group_by:?}");
        assert_eq!(report.total, base.total, "{group_by:?}");
    }
}

#[test]
fn models_are_named_and_unpriced_ones_say_so() {
    let (report, _) = report(&[GroupKey::Model]);
    let by_model: BTreeMap<&str, &Usage> = report
        .rows
        .iter()
        .map(|row| (row.model.as_deref().expect("model"), row.figures.counted()))
        .collect();
    assert_eq!(
        by_model.keys().copied().collect::<Vec<_>>(),
        [
            "faux-priced/faux-priced-pro",
            "faux/faux-1",
            "faux/faux-reasoner",
            "tool:delegate"
        ]
    );
    // Priced by the provider: every record has a cost.
    let priced = by_model["faux-priced/faux-priced-pro"];
    assert!(priced.cost > 0.0 && priced.is_cost_known(), "{priced:?}");
    // The faux provider records a zero cost for the tokens it spends: a known zero, as Pi's
    // `/session` shows it.
    let unpriced = by_model["faux/faux-reasoner"];
    assert!(unpriced.total > 0);
    assert_eq!((unpriced.cost, unpriced.n_cost_unknown), (0.0, 0));
    // The `api` session's hand-appended replies record zero tokens at zero cost: a known zero.
    let empty = by_model["faux/faux-1"];
    assert_eq!(
        (empty.total, empty.n_entries, empty.n_cost_unknown),
        (0, 3, 0)
    );
    // A tool result's nested usage, priced by the tool.
    let nested = by_model["tool:delegate"];
    assert_eq!(
        (nested.input, nested.output, nested.n_entries),
        (1200, 300, 1)
    );
    assert!(nested.is_cost_known());
}
