//! `pi-retrospect stats` end to end on the files the real Pi wrote: per-session
//! `pi` totals equal to Pi's own session statistics, a store total that counts each record
//! once, the schema, and usage errors.

use crate::common;

use std::path::{Path, PathBuf};

use common::{binary, stdout_of};
use serde_json::Value;

fn pi_real() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/pi-real");
    std::fs::canonicalize(&root).unwrap_or(root)
}

fn json(args: &[&str]) -> Value {
    let output = binary().args(args).output().expect("run");
    serde_json::from_str(&stdout_of(&output)).expect("JSON")
}

#[test]
fn per_session_totals_are_pis_own() {
    let root = pi_real();
    let sessions = root.join("sessions").display().to_string();
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("expected.json")).expect("expected.json"),
    )
    .expect("JSON");
    let report = json(&[
        "stats",
        "--sessions-root",
        &sessions,
        "--by",
        "session",
        "--json",
    ]);
    let rows = report["rows"].as_array().expect("rows");
    let files = expected["files"].as_object().expect("files");
    assert_eq!(rows.len(), files.len());
    for row in rows {
        let path = row["path"].as_str().expect("path");
        let key = path
            .strip_prefix(&format!("{sessions}/"))
            .expect("inside the store");
        let pi = &files[key]["sessionStats"]["tokens"];
        for (ours, theirs) in [
            ("input", "input"),
            ("output", "output"),
            ("cacheRead", "cacheRead"),
            ("cacheWrite", "cacheWrite"),
            ("total", "total"),
        ] {
            assert_eq!(row["pi"][ours], pi[theirs], "{key} {ours}");
        }
    }
    // The store total never exceeds the sum of the sessions' own figures plus their runs:
    // every record once, copies out.
    let own: u64 = rows
        .iter()
        .map(|row| row["own"]["total"].as_u64().expect("total"))
        .sum();
    assert_eq!(report["total"]["total"].as_u64(), Some(own));

    let schema: Value = serde_json::from_str(&stdout_of(
        &binary().args(["schema", "stats"]).output().expect("run"),
    ))
    .expect("schema");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    assert!(validator.is_valid(&report));
}

#[test]
fn one_session_and_bad_values() {
    let sessions = pi_real().join("sessions").display().to_string();
    let all = json(&["stats", "--sessions-root", &sessions, "--json"]);
    let one = json(&[
        "stats",
        "--sessions-root",
        &sessions,
        "--session",
        "01a22de2-5685",
        "--json",
    ]);
    assert!(one["total"]["total"].as_u64() < all["total"]["total"].as_u64());
    for args in [
        vec!["stats", "--by", "dya"],
        vec!["stats", "--timezone", "Mars/Olympus"],
        vec!["stats", "--since", "tomorrowish"],
    ] {
        let output = binary()
            .args(&args)
            .args(["--sessions-root", &sessions])
            .output()
            .expect("run");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
}

/// `stats` takes `--color` like every command that prints documents: `always`
/// makes the header and total lines bold, `never`, `auto` into a pipe and `NO_COLOR` none.
#[test]
fn color_follows_the_flag_and_no_color() {
    let sessions = pi_real().join("sessions").display().to_string();
    let run = |color: &str, no_color: bool| {
        let mut command = binary();
        if no_color {
            command.env("CLICOLOR_FORCE", "1");
        } else {
            command.env_remove("NO_COLOR");
        }
        let output = command
            .args(["stats", "--sessions-root", &sessions, "--by", "day"])
            .args(["--color", color])
            .output()
            .expect("run");
        assert!(output.status.success(), "{color}: {output:?}");
        stdout_of(&output)
    };
    let always = run("always", false);
    assert!(always.starts_with("\u{1b}[1mDay"), "{always}");
    assert!(always.contains("\u{1b}[1mTotal"), "{always}");
    for (color, no_color) in [("never", false), ("auto", false), ("auto", true)] {
        let text = run(color, no_color);
        assert!(!text.contains('\u{1b}'), "{color} {no_color}: {text}");
        assert_eq!(
            text,
            always.replace("\u{1b}[1m", "").replace("\u{1b}[0m", "")
        );
    }
}

#[test]
fn two_keys_at_once_in_text_and_json() {
    let sessions = pi_real().join("sessions").display().to_string();
    for (by, keys, titles) in [
        ("project,week", ["project", "week"], ["Project", "Week"]),
        ("model,day", ["model", "day"], ["Model", "Day"]),
    ] {
        let report = json(&["stats", "--sessions-root", &sessions, "--by", by, "--json"]);
        assert_eq!(report["groupBy"], serde_json::json!(keys), "{by}");
        let rows = report["rows"].as_array().expect("rows");
        assert!(!rows.is_empty(), "{by}");
        let mut sum = 0;
        for row in rows {
            for key in keys {
                assert!(row[key].is_string(), "{by}: {row}");
            }
            sum += row["usage"]["total"].as_u64().expect("total");
        }
        assert_eq!(report["total"]["total"].as_u64(), Some(sum), "{by}");

        let output = binary()
            .args(["stats", "-q", "--sessions-root", &sessions, "--by", by])
            .output()
            .expect("run");
        let text = stdout_of(&output);
        let header = text.lines().next().expect("a header line");
        assert!(
            header.starts_with(titles[0]) && header.contains(titles[1]),
            "{by}: {header}"
        );
        // One line per JSON row, then the total line.
        let n_lines = text
            .lines()
            .skip(1)
            .take_while(|line| !line.starts_with("Total"))
            .count();
        assert_eq!(n_lines, rows.len(), "{by}:\n{text}");
    }
}

#[test]
fn session_rows_say_what_the_session_was() {
    let sessions = pi_real().join("sessions").display().to_string();
    let report = json(&[
        "stats",
        "--sessions-root",
        &sessions,
        "--by",
        "session",
        "--json",
    ]);
    let rows = report["rows"].as_array().expect("rows");
    let named = rows
        .iter()
        .find(|row| row["name"] == "Explore the demo project" && row["depth"] == 0)
        .expect("the named session");
    assert_eq!(named["cwd"], "/tmp/pi-real-fixture/home/user/project");
    assert_eq!(
        named["firstUserMessage"],
        "What is in this project? Read the README and list the files."
    );
    assert_eq!(named["nTurns"], 5);
    assert_eq!(
        named["toolCalls"],
        serde_json::json!({ "bash": 2, "read": 1 })
    );
    assert!(named["durationMs"].as_u64().is_some_and(|ms| ms > 0));
    // By project, the row is the project's cwd.
    let by_project = json(&[
        "stats",
        "--sessions-root",
        &sessions,
        "--by",
        "project",
        "--json",
    ]);
    assert_eq!(
        by_project["rows"][0]["project"],
        "/tmp/pi-real-fixture/home/user/project"
    );
}

/// `--rollup` adds runs into session rows, so without a session key it is a usage error that
/// names the flag and the key to add, not a flag silently ignored.
#[test]
fn rollup_without_a_session_key_is_a_usage_error() {
    let sessions = pi_real().join("sessions").display().to_string();
    for (by, hint) in [
        (None, "--by session"),
        (Some("model"), "--by session,model"),
        (Some("day,project"), "--by session,day,project"),
    ] {
        let mut command = binary();
        command.args(["stats", "--sessions-root", &sessions, "--rollup"]);
        if let Some(by) = by {
            command.args(["--by", by]);
        }
        let output = command.output().expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{by:?}: {stderr}");
        assert!(stderr.contains("--rollup"), "{by:?}: {stderr}");
        assert!(stderr.contains(hint), "{by:?}: {stderr}");
    }
    let output = binary()
        .args([
            "stats",
            "--sessions-root",
            &sessions,
            "--rollup",
            "--by",
            "project,session",
        ])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0));
}

/// With `--rollup`, the rows of runs are in their launcher's row only: every row's figure
/// (`withRuns`) adds up to the total, in `--json` as in text.
#[test]
fn rolled_up_rows_add_up_to_the_total() {
    let sessions = pi_real().join("sessions").display().to_string();
    let plain = json(&[
        "stats",
        "--sessions-root",
        &sessions,
        "--by",
        "session",
        "--json",
    ]);
    let rolled = json(&[
        "stats",
        "--sessions-root",
        &sessions,
        "--by",
        "session",
        "--rollup",
        "--json",
    ]);
    let rows = |report: &serde_json::Value| report["rows"].as_array().expect("rows").len();
    assert!(rows(&rolled) < rows(&plain), "the fixture has runs");
    let sum = |report: &serde_json::Value, figure: &str| -> u64 {
        report["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|row| row[figure]["total"].as_u64().expect("total"))
            .sum()
    };
    assert_eq!(
        sum(&rolled, "withRuns"),
        rolled["total"]["total"].as_u64().expect("total")
    );
    assert_eq!(
        sum(&plain, "own"),
        plain["total"]["total"].as_u64().expect("total")
    );
    assert_eq!(rolled["total"], plain["total"]);
}

/// A run picked by `--id` is counted alone, as `--session` counts it: the session that
/// launched it is only the way to it, and no warning says its file is missing.
#[test]
fn a_run_picked_by_id_is_counted_alone() {
    let sessions = pi_real().join("sessions").display().to_string();
    let by_id = json(&[
        "stats",
        "--sessions-root",
        &sessions,
        "--id",
        "01a22b41-c1c0",
        "--by",
        "session",
        "--json",
    ]);
    let by_session = json(&[
        "stats",
        "--sessions-root",
        &sessions,
        "--session",
        "01a22b41-c1c0",
        "--by",
        "session",
        "--json",
    ]);
    let ids = |report: &Value| -> Vec<String> {
        report["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|row| row["sessionId"].as_str().expect("id").to_owned())
            .collect()
    };
    assert_eq!(ids(&by_id), ["01a22b41-c1c0-73ac-b3e0-095a18adc7f9"]);
    assert_eq!(by_id["total"], by_session["total"]);
    assert_eq!(by_id["warnings"], serde_json::json!([]));
}

/// On a narrow terminal the cost stays: the columns that the total sums are given up first,
/// and a line says which.
#[test]
fn a_narrow_table_keeps_the_cost() {
    let sessions = pi_real().join("sessions").display().to_string();
    let wide = stdout_of(
        &binary()
            .args(["stats", "--sessions-root", &sessions, "--by", "model"])
            .output()
            .expect("run"),
    );
    assert!(wide.lines().next().expect("header").contains("Cache write"));
    let status = std::process::Command::new("script")
        .args(["-qc"])
        .arg(format!(
            "{} stats --sessions-root {sessions} --by model -q",
            binary().get_program().to_string_lossy()
        ))
        .arg("/dev/null")
        .env("COLUMNS", "60")
        .env("NO_COLOR", "1")
        .env("HOME", "/nonexistent-home-for-tests")
        .output();
    // `script` gives the command a terminal; without it there is nothing to check here.
    let Ok(output) = status else { return };
    let text = String::from_utf8_lossy(&output.stdout).replace('\r', "");
    let header = text.lines().next().unwrap_or_default();
    assert!(
        header.contains("Cost") && header.contains("Total"),
        "{text}"
    );
    assert!(!header.contains("Cache write"), "{text}");
    assert!(
        text.contains("not shown for the terminal's width: Cache write"),
        "{text}"
    );
    let mut table = text.lines().filter(|line| !line.starts_with("not shown"));
    assert!(table.all(|line| line.chars().count() <= 60), "{text}");

    // A project column gives up the middle of its cwd before the figures leave the line, and
    // the note naming the columns left out is wrapped, never cut.
    let narrow = std::process::Command::new("script")
        .args(["-qc"])
        .arg(format!(
            "{} stats --sessions-root {sessions} --by project -q",
            binary().get_program().to_string_lossy()
        ))
        .arg("/dev/null")
        .env("COLUMNS", "36")
        .env("NO_COLOR", "1")
        .env("HOME", "/nonexistent-home-for-tests")
        .output()
        .expect("script ran above");
    let text = String::from_utf8_lossy(&narrow.stdout).replace('\r', "");
    assert!(
        text.lines().all(|line| line.chars().count() <= 36),
        "{text}"
    );
    let project_row = text.lines().nth(1).expect("a project row");
    assert!(
        project_row.contains('…') && project_row.contains('$'),
        "{text}"
    );
    let note: String = text
        .lines()
        .skip_while(|line| !line.starts_with("not shown"))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        note.contains("Input") && note.ends_with("every column)"),
        "{text}"
    );
}
