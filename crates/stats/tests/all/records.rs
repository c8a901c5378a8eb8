//! What one file's lines count for: periods in a time zone across DST changes, the time
//! range, unknown cost, every kind of usage record Pi counts, and damaged lines (warnings
//! with their line numbers, never an abort, never hiding the good lines).

use crate::common;

use common::{assistant, header, listing, materialize, options, report, usage, user};
use jiff::tz::TimeZone;
use pi_retrospect_stats::{GroupKey, StatsOptions, StatsReport, Usage};

const FILE: &str = "--work-app--/2026-01-01T00-00-00-000Z_s.jsonl";

/// Returns the report over one session whose body is `lines`.
fn report_on(lines: Vec<String>, options: &StatsOptions) -> StatsReport {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut file = vec![header("s", "2026-01-01T00:00:00.000Z", None)];
    file.extend(lines);
    materialize(dir.path(), &[(FILE, file)]);
    report(&listing(dir.path()), options)
}

/// An assistant message at `timestamp` with `tokens` input tokens and a known cost.
fn call_at(id: &str, timestamp: &str, tokens: u64) -> String {
    assistant(id, None, timestamp, "m", tokens, Some(0.5))
}

/// Berlin's rules as a POSIX TZ string: no time zone database needed.
fn berlin() -> TimeZone {
    TimeZone::posix("CET-1CEST,M3.5.0,M10.5.0/3").expect("valid POSIX TZ")
}

/// Returns `(period label, input tokens)` per row.
fn rows(report: &StatsReport, key: GroupKey) -> Vec<(String, u64)> {
    report
        .rows
        .iter()
        .map(|row| {
            let label = row.key_text(key).expect("the period").to_owned();
            (label, row.figures.counted().input)
        })
        .collect()
}

#[test]
fn periods_follow_the_time_zone_across_dst_changes() {
    // Spring forward on Sunday 2026-03-29 (02:00 CET -> 03:00 CEST, 01:00 UTC); fall back on
    // Sunday 2026-10-25 (03:00 CEST -> 02:00 CET, 01:00 UTC).
    let calls = vec![
        call_at("a", "2026-03-28T22:59:59.000Z", 1), // 23:59:59 CET, Saturday 28th
        call_at("b", "2026-03-28T23:30:00.000Z", 2), // 00:30 CET, Sunday 29th
        call_at("c", "2026-03-29T21:59:59.000Z", 4), // 23:59:59 CEST, still the 29th
        call_at("d", "2026-03-29T22:00:00.000Z", 8), // 00:00 CEST, Monday 30th
        call_at("e", "2026-03-31T22:30:00.000Z", 16), // 00:30 CEST, April 1st
        call_at("f", "2026-10-24T22:30:00.000Z", 32), // 00:30 CEST, Sunday 25th
        call_at("g", "2026-10-25T22:59:59.000Z", 64), // 23:59:59 CET: the 25-hour day
        call_at("h", "2026-10-25T23:00:00.000Z", 128), // 00:00 CET, Monday 26th
    ];
    let check = |time_zone: TimeZone, key: GroupKey, expected: &[(&str, u64)]| {
        let mut options = StatsOptions::new(time_zone);
        options.group_by = vec![key];
        let report = report_on(calls.clone(), &options);
        let expected: Vec<(String, u64)> = expected
            .iter()
            .map(|(label, n)| ((*label).to_owned(), *n))
            .collect();
        assert_eq!(
            rows(&report, key),
            expected,
            "{key:?} in {}",
            options.time_zone_name
        );
        assert_eq!(report.total.input, 255);
    };
    check(
        berlin(),
        GroupKey::Day,
        &[
            ("2026-03-28", 1),
            ("2026-03-29", 2 + 4),
            ("2026-03-30", 8),
            ("2026-04-01", 16),
            ("2026-10-25", 32 + 64),
            ("2026-10-26", 128),
        ],
    );
    check(
        TimeZone::UTC,
        GroupKey::Day,
        &[
            ("2026-03-28", 1 + 2),
            ("2026-03-29", 4 + 8),
            ("2026-03-31", 16),
            ("2026-10-24", 32),
            ("2026-10-25", 64 + 128),
        ],
    );
    // Weeks start on Monday and are named by it.
    check(
        berlin(),
        GroupKey::Week,
        &[
            ("2026-03-23", 1 + 2 + 4),
            ("2026-03-30", 8 + 16),
            ("2026-10-19", 32 + 64),
            ("2026-10-26", 128),
        ],
    );
    check(
        berlin(),
        GroupKey::Month,
        &[
            ("2026-03", 1 + 2 + 4 + 8),
            ("2026-04", 16),
            ("2026-10", 32 + 64 + 128),
        ],
    );
    check(
        TimeZone::UTC,
        GroupKey::Month,
        &[("2026-03", 1 + 2 + 4 + 8 + 16), ("2026-10", 32 + 64 + 128)],
    );
}

#[test]
fn since_and_until_bound_each_records_own_timestamp() {
    let calls = vec![
        call_at("a", "2026-03-01T00:00:00.000Z", 1),
        call_at("b", "2026-03-02T00:00:00.000Z", 2),
        call_at("c", "2026-03-03T00:00:00.000Z", 4),
        // No entry timestamp: the message's own (milliseconds) does not place it either, as
        // in `failures` (a forged 0 would put it on 1970-01-01, inside every `--until`).
        r#"{"type":"message","id":"d","parentId":null,"message":{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":8,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.5}},"stopReason":"stop","timestamp":1772409600000}}"#.to_owned(),
        // No timestamp at all: left out of a bounded range, with a warning.
        r#"{"type":"message","id":"e","parentId":null,"message":{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":16,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.5}},"stopReason":"stop"}}"#.to_owned(),
    ];
    let check = |since: Option<&str>, until: Option<&str>, expected: u64| {
        let mut options = options(&[]);
        options.since = since.map(|text| text.parse().expect("instant"));
        options.until = until.map(|text| text.parse().expect("instant"));
        let report = report_on(calls.clone(), &options);
        assert_eq!(report.total.input, expected, "{since:?}..{until:?}");
        report
    };
    // Unbounded: everything, and no warning (time does not matter).
    assert!(check(None, None, 31).warnings.is_empty());
    let bounded = check(Some("2026-03-02T00:00:00Z"), None, 2 + 4);
    assert_eq!(bounded.since.as_deref(), Some("2026-03-02T00:00:00Z"));
    assert_eq!(bounded.warnings.len(), 1);
    assert_eq!(
        bounded.warnings[0].reason,
        "2 usage records have no valid timestamp: left out of the time range"
    );
    check(None, Some("2026-03-02T00:00:00Z"), 1 + 2);
    check(
        Some("2026-03-02T00:00:00Z"),
        Some("2026-03-02T00:00:00Z"),
        2,
    );
    check(Some("2026-03-04T00:00:00Z"), None, 0);
    // By day, a record without a valid time of its own is in the period `unknown`.
    let report = report_on(calls.clone(), &options(&[GroupKey::Day]));
    let days: Vec<(Option<String>, u64)> = report
        .rows
        .iter()
        .map(|row| (row.day.clone(), row.figures.counted().input))
        .collect();
    assert_eq!(
        days,
        [
            (Some("2026-03-01".to_owned()), 1),
            (Some("2026-03-02".to_owned()), 2),
            (Some("2026-03-03".to_owned()), 4),
            (Some("unknown".to_owned()), 8 + 16),
        ]
    );
    assert_eq!(
        report.warnings[0].reason,
        "2 usage records have no valid timestamp: counted under the period `unknown`"
    );
}

#[test]
fn tokens_always_count_and_a_missing_cost_is_unknown() {
    let check = |usage_json: &str, expected: Usage| {
        let line = format!(
            r#"{{"type":"usage","id":"x","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","kind":"cache_warm","provider":"p","model":"m","usage":{usage_json}}}"#
        );
        let report = report_on(vec![line], &options(&[]));
        assert_eq!(report.total, expected, "{usage_json}");
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    };
    let counted = |input, cost, n_cost_unknown| Usage {
        input,
        total: input,
        cost,
        n_entries: 1,
        n_cost_unknown,
        ..Usage::default()
    };
    check(&usage(10, 0, Some(0.25)), counted(10, 0.25, 0));
    // No cost recorded at all.
    check(&usage(10, 0, None), counted(10, 0.0, 1));
    // A zero cost for spent tokens (a free or local provider): what Pi recorded and shows,
    // a known zero.
    check(&usage(10, 0, Some(0.0)), counted(10, 0.0, 0));
    // A zero cost for zero tokens is simply zero.
    check(&usage(0, 0, Some(0.0)), counted(0, 0.0, 0));
    check(
        r#"{"input":10,"output":0,"cacheRead":0,"cacheWrite":0,"cost":null}"#,
        counted(10, 0.0, 1),
    );
    // Pi's total is the sum of the four counts; `totalTokens` is not read.
    check(
        r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":999,"cost":{"total":1}}"#,
        Usage {
            input: 1,
            output: 2,
            cache_read: 3,
            cache_write: 4,
            total: 10,
            cost: 1.0,
            n_entries: 1,
            n_cost_unknown: 0,
        },
    );
}

#[test]
fn counts_what_pi_counts_and_nothing_else() {
    let line = |json: &str| json.to_owned();
    let u = usage(1, 0, Some(1.0));
    let lines = vec![
        // Counted: assistant, usage entry of any kind, compaction and branch summary with
        // usage, a tool result with nested usage.
        assistant("a", None, "2026-01-01T00:00:01.000Z", "m", 1, Some(1.0)),
        line(&format!(
            r#"{{"type":"usage","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","kind":"something_new","provider":"p","model":"m","usage":{u}}}"#
        )),
        line(&format!(
            r#"{{"type":"compaction","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","summary":"s","firstKeptEntryId":"c","tokensBefore":9,"usage":{u}}}"#
        )),
        line(&format!(
            r#"{{"type":"branch_summary","id":"d","parentId":"a","timestamp":"2026-01-01T00:00:04.000Z","fromId":"c","summary":"s","usage":{u}}}"#
        )),
        line(&format!(
            r#"{{"type":"message","id":"e","parentId":"d","timestamp":"2026-01-01T00:00:05.000Z","message":{{"role":"toolResult","toolCallId":"t","toolName":"subagent","content":[],"isError":false,"usage":{u},"timestamp":5}}}}"#
        )),
        // Not counted: a tool result with `usage: null`, a compaction without usage, usage
        // under other roles and entry types, a key named usage inside tool-call arguments, and
        // the word in text.
        line(
            r#"{"type":"message","id":"f","parentId":"e","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"toolResult","toolCallId":"t","toolName":"read","content":[],"isError":false,"usage":null,"timestamp":6}}"#,
        ),
        line(
            r#"{"type":"compaction","id":"g","parentId":"f","timestamp":"2026-01-01T00:00:07.000Z","summary":"the \"usage\" was high","firstKeptEntryId":"g","tokensBefore":9}"#,
        ),
        line(&format!(
            r#"{{"type":"message","id":"h","parentId":"g","timestamp":"2026-01-01T00:00:08.000Z","message":{{"role":"user","content":"x","usage":{u},"timestamp":8}}}}"#
        )),
        line(&format!(
            r#"{{"type":"custom","id":"i","parentId":"h","timestamp":"2026-01-01T00:00:09.000Z","customType":"ext","data":{{"usage":{u}}}}}"#
        )),
        line(
            r#"{"type":"message","id":"j","parentId":"i","timestamp":"2026-01-01T00:00:10.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t2","name":"set","arguments":{"usage":{"input":1000}}}],"provider":"p","model":"m","usage":{"input":0,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":1}},"stopReason":"toolUse","timestamp":10}}"#,
        ),
        user("k", Some("j"), "2026-01-01T00:00:11.000Z"),
    ];
    let report = report_on(lines, &options(&[GroupKey::Model]));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.total.input, 5);
    assert_eq!(report.total.output, 1 + 1, "a's one output token and j's");
    assert_eq!(report.total.n_entries, 6);
    assert_eq!(report.total.cost, 6.0);
    let models: Vec<(&str, u64)> = report
        .rows
        .iter()
        .map(|row| {
            (
                row.model.as_deref().expect("model"),
                row.figures.counted().n_entries,
            )
        })
        .collect();
    // The summaries go to the model in effect: the latest assistant message's.
    assert_eq!(
        models,
        [("anthropic/m", 3), ("p/m", 2), ("tool:subagent", 1)]
    );
}

#[test]
fn a_model_change_names_the_model_of_later_summaries() {
    let u = usage(1, 0, Some(1.0));
    let lines = vec![
        assistant("a", None, "2026-01-01T00:00:01.000Z", "old", 1, Some(1.0)),
        r#"{"type":"model_change","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","provider":"openai","modelId":"new"}"#.to_owned(),
        format!(r#"{{"type":"compaction","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","summary":"s","firstKeptEntryId":"c","tokensBefore":9,"usage":{u}}}"#),
    ];
    let report = report_on(lines, &options(&[GroupKey::Model]));
    let models: Vec<&str> = report
        .rows
        .iter()
        .filter_map(|row| row.model.as_deref())
        .collect();
    assert_eq!(models, ["anthropic/old", "openai/new"]);
}

#[test]
fn damaged_lines_are_warnings_with_their_line_numbers() {
    let lines = vec![
        call_at("a", "2026-01-01T00:00:01.000Z", 1), // line 2
        r#"{"type":"message","id":"b","message":{"role":"assistant","usage":"#.to_owned(), // line 3: cut off
        String::new(),                                                                        // line 4: blank
        // Line 5: Pi's code would fail on it. (An assistant message with no `usage` key at
        // all is passed over unread: the search for usage never finds it.)
        r#"{"type":"message","id":"c","parentId":null,"timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"usage":null,"stopReason":"stop"}}"#.to_owned(),
        r#"{"type":"usage","id":"d","parentId":null,"timestamp":"2026-01-01T00:00:03.000Z","kind":"k","usage":"lots"}"#.to_owned(), // 6
        r#"{"type":"usage","id":"e","parentId":null,"timestamp":"2026-01-01T00:00:04.000Z","kind":"k","usage":{"input":-3}}"#.to_owned(), // 7
        r#"["usage"]"#.to_owned(), // 8: JSON but not an entry
        call_at("f", "2026-01-01T00:00:05.000Z", 2), // 9
    ];
    let report = report_on(lines, &options(&[]));
    assert_eq!(report.total.input, 3, "the good lines still count");
    let reasons: Vec<&str> = report.warnings.iter().map(|w| w.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "line 3: not valid JSON: unexpected end of line",
            "line 5: assistant message without usage",
            "line 6: usage is not an object",
            "line 7: usage.input is not a token count: -3",
        ]
    );
    assert!(report.warnings.iter().all(|w| w.path.ends_with(FILE)));
}

#[test]
fn long_lines_are_read_whole_only_when_they_carry_usage() {
    // Lines far longer than the 1 MiB read buffer: a tool result without usage (passed over),
    // an assistant message with usage after its long text, then a normal line.
    let long_text = "x".repeat(3 * 1024 * 1024 + 17);
    let lines = vec![
        call_at("a", "2026-01-01T00:00:01.000Z", 1),
        format!(r#"{{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"toolResult","toolCallId":"t","toolName":"read","content":[{{"type":"text","text":"{long_text}"}}],"isError":false,"timestamp":2}}}}"#),
        format!(r#"{{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{long_text}"}}],"provider":"p","model":"m","usage":{},"stopReason":"stop","timestamp":3}}}}"#, usage(2, 0, Some(1.0))),
        call_at("d", "2026-01-01T00:00:04.000Z", 4),
        r#"{"type":"usage","id":"e","parentId":null,"timestamp":"2026-01-01T00:00:05.000Z","kind":"k","usage":{"input":-1}}"#.to_owned(),
    ];
    let report = report_on(lines, &options(&[]));
    assert_eq!(report.total.input, 7);
    assert_eq!(report.total.n_entries, 3);
    // Line numbers stay right after the long lines.
    let reasons: Vec<&str> = report.warnings.iter().map(|w| w.reason.as_str()).collect();
    assert_eq!(reasons, ["line 6: usage.input is not a token count: -1"]);
}

#[test]
fn a_line_over_the_line_cap_is_skipped_with_a_warning_and_the_rest_counts() {
    // A crash's zero-filled tail, longer than the 64 MiB line cap (sparse here): it is never
    // held, it is one line warning, and the lines before it still count.
    let dir = tempfile::tempdir().expect("temp dir");
    materialize(
        dir.path(),
        &[(
            FILE,
            vec![
                header("s", "2026-01-01T00:00:00.000Z", None),
                call_at("a", "2026-01-01T00:00:01.000Z", 3),
            ],
        )],
    );
    let path = dir.path().join(FILE);
    let start = std::fs::metadata(&path).expect("metadata").len();
    let tail = 65 * 1024 * 1024;
    let file = std::fs::File::options()
        .write(true)
        .open(&path)
        .expect("open");
    file.set_len(start + tail).expect("set_len");
    let report = report(&listing(dir.path()), &options(&[]));
    assert_eq!(report.total.input, 3);
    let reasons: Vec<&str> = report.warnings.iter().map(|w| w.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [format!(
            "line 3: {tail} bytes, longer than the 67108864 byte line limit; skipped"
        )]
    );
}

#[test]
fn a_file_that_is_no_session_is_one_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    materialize(
        dir.path(),
        &[(
            FILE,
            vec![
                header("s", "2026-01-01T00:00:00.000Z", None),
                call_at("a", "2026-01-01T00:00:01.000Z", 1),
            ],
        )],
    );
    let listed = listing(dir.path());
    // Replaced after it was listed: now it is no session.
    std::fs::write(dir.path().join(FILE), "not json\n").expect("write");
    let report = report(&listed, &options(&[GroupKey::Session]));
    assert!(report.rows.is_empty());
    assert_eq!(report.total, Usage::default());
    let reasons: Vec<&str> = report.warnings.iter().map(|w| w.reason.as_str()).collect();
    assert_eq!(reasons.len(), 1);
    assert!(
        reasons[0].starts_with("first line is not valid JSON"),
        "{reasons:?}"
    );
}

#[test]
fn the_last_line_needs_no_newline() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = format!(
        "{}\n{}",
        header("s", "2026-01-01T00:00:00.000Z", None),
        call_at("a", "2026-01-01T00:00:01.000Z", 5)
    );
    std::fs::create_dir_all(dir.path().join("--work-app--")).expect("mkdir");
    std::fs::write(dir.path().join(FILE), text).expect("write");
    let report = report(&listing(dir.path()), &options(&[]));
    assert_eq!(report.total.input, 5);
}

#[test]
fn a_session_with_nothing_in_the_time_range_has_no_row() {
    let calls = vec![call_at("a", "2026-03-01T00:00:00.000Z", 1)];
    let mut options = options(&[GroupKey::Session]);
    // Without a range, every session read has its row, also one without usage.
    assert_eq!(report_on(Vec::new(), &options).rows.len(), 1);
    assert_eq!(report_on(calls.clone(), &options).rows.len(), 1);
    options.since = Some("2026-03-02T00:00:00Z".parse().expect("instant"));
    let report = report_on(calls.clone(), &options);
    assert!(report.rows.is_empty(), "{:?}", report.rows);
    options.since = Some("2026-03-01T00:00:00Z".parse().expect("instant"));
    assert_eq!(report_on(calls, &options).rows.len(), 1);
}

#[test]
fn a_line_over_the_cap_asked_for_is_skipped_with_a_warning() {
    let long = assistant(
        "a",
        None,
        "2026-03-01T00:00:00.000Z",
        &"m".repeat(2048),
        5,
        Some(0.5),
    );
    let mut options = options(&[]);
    assert_eq!(report_on(vec![long.clone()], &options).total.input, 5);
    options.max_line_bytes = 1024;
    let report = report_on(vec![long], &options);
    assert_eq!(report.total.input, 0);
    assert!(
        report.warnings[0]
            .reason
            .contains("longer than the 1024 byte line limit"),
        "{:?}",
        report.warnings
    );
}

#[test]
fn a_cost_that_is_no_number_is_unknown_and_said() {
    // Counted (its tokens are real), its cost unknown, with a line warning.
    let line = r#"{"type":"usage","id":"x","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","kind":"cache_warm","provider":"p","model":"m","usage":{"input":3,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":"NaN"}}}"#;
    let report = report_on(vec![line.to_owned()], &options(&[]));
    assert_eq!((report.total.input, report.total.n_cost_unknown), (3, 1));
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert!(
        report.warnings[0]
            .reason
            .contains("usage.cost.total is not a number")
    );
}
