//! Issue 13: `pi-retrospect stats` end to end on the files the real Pi wrote: per-session
//! `pi` totals equal to Pi's own session statistics, a store total that counts each record
//! once, the schema, and usage errors.

mod common;

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

/// Issue 11: `stats` takes `--color` like every command that prints documents: `always`
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
