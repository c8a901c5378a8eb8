//! Bad input is counted, not held: a file of many assistant lines with a forged `usage`
//! costs a few warnings and a count, sums that pass the largest value stop there with a
//! warning, and the JSON report says the same as the text.

use crate::common;

use common::{assistant, header, listing, materialize, options, report, user};
use pi_retrospect_stats::GroupKey;
use pi_retrospect_testkit::{Entry, Message};

const F: &str = "--work-app--/2026-04-01T00-00-00-000Z_f.jsonl";

/// An assistant line whose usage is `usage`, written where Pi writes it.
fn forged(idx: usize, usage: &str) -> String {
    let message = Message::assistant(&[])
        .provider("p")
        .model("m")
        .member("usage", usage)
        .stop_reason("stop")
        .timestamp(1);
    Entry::message(message)
        .id(&format!("x{idx}"))
        .parent(None)
        .at("2026-04-01T00:00:01.000Z")
        .to_string()
}

#[test]
fn a_file_of_forged_usage_costs_a_count_not_a_warning_each() {
    const N_FORGED: usize = 20_000;
    let forms = [
        r#"{"input":0,"output":0,"cacheRead":-1e308}"#,
        r#"{"input":0,"output":0,"cacheWrite":2e300}"#,
        r#"{"input":-1,"output":0}"#,
        r#"{"input":"12","output":0}"#,
        r#"{"input":0,"output":true}"#,
        r#"{"input":1e400,"output":0}"#,
        r#"{"input":1.5,"output":0}"#,
    ];
    let mut lines = vec![
        header("f", "2026-04-01T00:00:00.000Z", None),
        user("u", None, "2026-04-01T00:00:00.500Z"),
        assistant(
            "good",
            Some("u"),
            "2026-04-01T00:00:02.000Z",
            "m",
            7,
            Some(0.5),
        ),
    ];
    lines.extend((0..N_FORGED).map(|idx| forged(idx, forms[idx % forms.len()])));
    let dir = tempfile::tempdir().expect("temp dir");
    materialize(dir.path(), &[(F, lines)]);
    let listing = listing(dir.path());
    let report = report(&listing, &options(&[GroupKey::Session]));

    assert_eq!(report.total.input, 7, "only the good line counts");
    assert_eq!(report.total.n_entries, 1);
    let reasons: Vec<&str> = report
        .warnings
        .iter()
        .map(|warning| warning.reason.as_str())
        .collect();
    assert_eq!(reasons.len(), 6, "{reasons:#?}");
    // The first five name their lines (line 4 is the first forged one) and the value.
    assert!(reasons[0].starts_with("line 4: "), "{}", reasons[0]);
    assert!(reasons[0].contains("-1e308"), "{}", reasons[0]);
    assert_eq!(
        reasons[5],
        format!(
            "… and {} more lines that could not be counted",
            N_FORGED - 5
        )
    );
    assert_eq!(report.n_warnings, N_FORGED as u64);
    assert!(
        reasons.iter().all(|reason| reason.len() < 200),
        "{reasons:#?}"
    );

    // The JSON document holds the same bounded warnings and the same count.
    let mut json = Vec::new();
    pi_retrospect_render::stats::write_json(&mut json, &report).expect("JSON");
    let document: serde_json::Value = serde_json::from_slice(&json).expect("valid JSON");
    assert_eq!(document["nWarnings"], N_FORGED as u64);
    assert_eq!(document["warnings"].as_array().map(Vec::len), Some(6));
    assert!(json.len() < 64 * 1024, "{} bytes", json.len());
}

#[test]
fn token_sums_stop_at_their_bound_with_a_warning() {
    let huge = u64::MAX / 2 + 1;
    let lines = vec![
        header("f", "2026-04-01T00:00:00.000Z", None),
        forged(1, &format!(r#"{{"input":{huge},"output":0}}"#)),
        forged(2, &format!(r#"{{"input":{huge},"output":0}}"#)),
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    materialize(dir.path(), &[(F, lines)]);
    let listing = listing(dir.path());
    for group_by in [vec![], vec![GroupKey::Session], vec![GroupKey::Day]] {
        let report = report(&listing, &options(&group_by));
        assert_eq!(report.total.input, u64::MAX, "{group_by:?}");
        let saturated: Vec<&str> = report
            .warnings
            .iter()
            .map(|warning| warning.reason.as_str())
            .filter(|reason| reason.contains("largest value"))
            .collect();
        assert!(!saturated.is_empty(), "{group_by:?}: {:?}", report.warnings);
        assert_eq!(report.n_warnings, report.warnings.len() as u64);
    }
}

#[test]
fn one_record_whose_tokens_add_up_past_the_bound_stops_there_with_a_warning() {
    let lines = vec![
        header("f", "2026-04-01T00:00:00.000Z", None),
        forged(1, &format!(r#"{{"input":{},"output":1}}"#, u64::MAX)),
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    materialize(dir.path(), &[(F, lines)]);
    let report = report(&listing(dir.path()), &options(&[]));
    assert_eq!(report.total.total, u64::MAX);
    assert_eq!(report.total.output, 1);
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert!(
        report.warnings[0].reason.contains("largest value"),
        "{}",
        report.warnings[0].reason
    );
}

#[test]
fn the_report_holds_a_bounded_number_of_warnings() {
    const N_FILES: usize = 200;
    let dir = tempfile::tempdir().expect("temp dir");
    let files: Vec<(String, Vec<String>)> = (0..N_FILES)
        .map(|file| {
            let mut lines = vec![header(
                &format!("f{file}"),
                "2026-04-01T00:00:00.000Z",
                None,
            )];
            lines.extend((0..10).map(|idx| forged(idx, r#"{"input":-1}"#)));
            (
                format!("--work-app--/2026-04-01T00-00-00-000Z_f{file:03}.jsonl"),
                lines,
            )
        })
        .collect();
    let borrowed: Vec<(&str, Vec<String>)> = files
        .iter()
        .map(|(path, lines)| (path.as_str(), lines.clone()))
        .collect();
    materialize(dir.path(), &borrowed);
    let report = report(&listing(dir.path()), &options(&[]));
    // Each file: 5 line warnings and one `… and 5 more`, 1,200 in all, held to 1,000.
    assert_eq!(report.n_warnings, (N_FILES * 10) as u64);
    assert_eq!(
        report.warnings.len(),
        pi_retrospect_core::stats::MAX_REPORT_WARNINGS
    );
    let last = report.warnings.last().expect("a last warning");
    assert_eq!(last.reason, "… and 201 more warnings in this report");
}

#[test]
fn a_negative_cost_is_a_warning_and_lowers_no_sum() {
    let cases = [
        (
            r#"{"input":5,"output":0,"cost":{"total":-0.5}}"#,
            "usage.cost.total is negative: -0.5",
        ),
        (
            r#"{"input":5,"output":0,"cost":{"input":-1,"output":0,"total":0.25}}"#,
            "usage.cost.input is negative",
        ),
        (
            r#"{"input":5,"output":0,"cost":{"cacheWrite":-1e-9,"total":0}}"#,
            "usage.cost.cacheWrite is negative",
        ),
    ];
    for (usage, reason) in cases {
        let lines = vec![
            header("f", "2026-04-01T00:00:00.000Z", None),
            assistant("good", None, "2026-04-01T00:00:02.000Z", "m", 7, Some(0.5)),
            forged(1, usage),
        ];
        let dir = tempfile::tempdir().expect("temp dir");
        materialize(dir.path(), &[(F, lines)]);
        let report = report(&listing(dir.path()), &options(&[GroupKey::Session]));
        assert_eq!(report.total.input, 7, "{usage}: only the good line counts");
        assert_eq!(report.total.cost, 0.5, "{usage}");
        assert_eq!(report.n_warnings, 1, "{usage}: {:?}", report.warnings);
        assert_eq!(report.warnings[0].reason, format!("line 3: {reason}"));
    }
    // A negative zero is zero, not a negative cost.
    let lines = vec![
        header("f", "2026-04-01T00:00:00.000Z", None),
        forged(
            1,
            r#"{"input":5,"output":0,"cost":{"input":-0,"total":-0.0}}"#,
        ),
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    materialize(dir.path(), &[(F, lines)]);
    let report = report(&listing(dir.path()), &options(&[]));
    assert_eq!(report.total.input, 5);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}
