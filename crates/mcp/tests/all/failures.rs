//! `session_failures` over a generated store, called in process: a page walk returns every
//! failure exactly once while sessions are written between pages, each page inside its
//! budget with its cursor; the rows are `failures --json`'s; forged and foreign cursors are
//! refused; grouped pages hold every group once with counts that add up.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use pi_retrospect_app::{Environment, FailuresRequest, ListRequest, StoreFlags};
use pi_retrospect_mcp::{Server, ServerOptions};
use pi_retrospect_testkit::{Block, Entry, Header, Message, Store, timestamp_in_month};
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::{Value, json};

/// The default page budget the tools document.
const DEFAULT_PAGE_BYTES: u64 = 32 * 1024;

/// The minute after 2026-11-01T00:00:00Z at which the first sessions start (1000 + idx),
/// with room before it for older sessions and after it for newer ones.
const BASE_MINUTE: u64 = 1000;

/// Writes session `idx` under `root`, starting `minute` minutes after November 1st: a failed
/// `read` (every session; a long message in every third), a failed `!` command (every
/// fourth) and a provider error (every sixth). Returns the path and its failures' entry ids.
fn write_session(root: &Path, idx: u64, minute: u64) -> (String, Vec<String>) {
    write_session_in(root, idx, "2026-11", minute)
}

/// Writes session `idx` as [`write_session`] does, `minute` minutes into `month`.
fn write_session_in(root: &Path, idx: u64, month: &str, minute: u64) -> (String, Vec<String>) {
    let at = |second: u64| timestamp_in_month(month, minute * 60 + second);
    let header = Header::new(&format!("00000000-0000-7000-8000-{idx:012}"))
        .timestamp(&at(0))
        .cwd(&format!("/tmp/project-{}", idx % 5));
    let read = Block::tool_call("c1", "read", &format!(r#"{{"path":"/tmp/p/{idx}.txt"}}"#));
    let mut lines = vec![
        Entry::message(Message::user(&format!("task {idx}")))
            .id("u1")
            .parent(None)
            .at(&at(1)),
        Entry::message(Message::assistant(&[read]).stop_reason("toolUse"))
            .id("a1")
            .parent(Some("u1"))
            .at(&at(2)),
    ];
    let padding = if idx.is_multiple_of(3) {
        format!("\n{}\nlast line {idx}", "trace line\n".repeat(300))
    } else {
        String::new()
    };
    let error = format!("ENOENT: no such file or directory, open '/tmp/p/{idx}.txt'{padding}");
    lines.push(
        Entry::message(Message::tool_result("c1", "read", &error).is_error(true))
            .id("r1")
            .parent(Some("a1"))
            .at(&at(3)),
    );
    let mut failures = vec!["r1".to_owned()];
    if idx.is_multiple_of(4) {
        let output = format!("{idx} tests failed");
        lines.push(
            Entry::message(Message::bash_execution("make test", &output, Some(2)))
                .id("b1")
                .parent(Some("r1"))
                .at(&at(4)),
        );
        failures.push("b1".to_owned());
    }
    if idx.is_multiple_of(6) {
        let message = Message::assistant(&[])
            .stop_reason("error")
            .error_message(&format!("429 rate limited, retry in {idx} s"));
        lines.push(
            Entry::message(message)
                .id("e1")
                .parent(Some("r1"))
                .at(&at(5)),
        );
        failures.push("e1".to_owned());
    }
    let path = Store::at(root).write_session(&header, lines);
    (path.display().to_string(), failures)
}

fn environment() -> Environment {
    Environment {
        cwd: std::env::temp_dir(),
        now: "2026-12-01T00:00:00Z".parse().expect("instant"),
        ..Environment::default()
    }
}

fn server(root: &Path) -> Server {
    Server::new(ServerOptions {
        stores: StoreFlags {
            sessions_root: Some(root.to_owned()),
            ..StoreFlags::default()
        },
        env: environment(),
        is_clock_live: false,
    })
}

fn call(server: &Server, arguments: &Value) -> CallToolResult {
    let Value::Object(arguments) = arguments.clone() else {
        panic!("arguments must be an object")
    };
    server
        .call("session_failures", JsonObject::from(arguments))
        .expect("the tool")
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|block| block.as_text().map(|text| text.text.clone()))
        .unwrap_or_default()
}

/// Calls the tool and returns its page, checked against the declared output schema and
/// its stated size.
fn call_ok(server: &Server, arguments: &Value) -> Value {
    let result = call(server, arguments);
    let text = text_of(&result);
    assert_ne!(result.is_error, Some(true), "{arguments}: {text}");
    assert!(!text.is_empty());
    let page = result.structured_content.expect("structuredContent");
    assert_eq!(page["bytes"], json!(page.to_string().len()));
    let tool = server
        .tools()
        .into_iter()
        .find(|tool| tool.name == "session_failures")
        .expect("listed");
    let schema = Value::Object((*tool.output_schema.expect("output schema")).clone());
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    if let Some(error) = validator.iter_errors(&page).next() {
        panic!("{arguments}: not valid against the output schema: {error}");
    }
    page
}

fn call_err(server: &Server, arguments: &Value) -> String {
    let result = call(server, arguments);
    assert_eq!(result.is_error, Some(true), "{arguments} succeeded");
    text_of(&result)
}

/// Walks the pages of `arguments`, calling `between` after each page that continues;
/// returns every row of `rows_key` and the pages.
fn walk(
    server: &Server,
    arguments: &Value,
    rows_key: &str,
    between: &mut dyn FnMut(usize),
) -> (Vec<Value>, Vec<Value>) {
    let (mut rows, mut pages) = (Vec::new(), Vec::new());
    let mut cursor: Option<String> = None;
    loop {
        let mut page_arguments = arguments.clone();
        if let Some(cursor) = &cursor {
            page_arguments["cursor"] = json!(cursor);
        }
        let page = call_ok(server, &page_arguments);
        if arguments.get("limit").is_none() {
            assert!(
                page["bytes"]
                    .as_u64()
                    .is_some_and(|n| n <= DEFAULT_PAGE_BYTES),
                "page {} is over the default budget: {}",
                pages.len(),
                page["bytes"]
            );
        }
        rows.extend(page[rows_key].as_array().expect("rows").iter().cloned());
        cursor = page["nextCursor"].as_str().map(str::to_owned);
        pages.push(page);
        if cursor.is_none() {
            return (rows, pages);
        }
        assert!(pages.len() < 1000, "the walk does not end");
        between(pages.len());
    }
}

fn handle(row: &Value) -> (String, String) {
    (
        row["path"].as_str().expect("path").to_owned(),
        row["entryId"].as_str().expect("entryId").to_owned(),
    )
}

/// Every failure of the store comes exactly once in a walk of default pages and of small
/// `limit` pages, while sessions are written between pages (newer ones, which sort before
/// the cursor, and older ones, which sort after it and are walked into).
#[test]
fn a_page_walk_returns_every_failure_once_while_sessions_are_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("sessions");
    let mut expected: BTreeSet<(String, String)> = BTreeSet::new();
    for idx in 0..120 {
        let (path, ids) = write_session(&root, idx, BASE_MINUTE + idx);
        expected.extend(ids.into_iter().map(|id| (path.clone(), id)));
    }
    let root = std::fs::canonicalize(&root).expect("canonical");
    let expected: BTreeSet<(String, String)> = expected
        .into_iter()
        .map(|(path, id)| {
            let path = std::fs::canonicalize(&path).expect("canonical");
            (path.display().to_string(), id)
        })
        .collect();
    let server = server(&root);

    // Unchanged store: the rows of the pages are the rows of `failures --json`, in order.
    let (rows, pages) = walk(&server, &json!({}), "failures", &mut |_| {});
    assert!(pages.len() > 2, "the default budget ends pages early");
    assert!(pages.iter().all(|page| page["nFailures"] == expected.len()));
    let request = FailuresRequest {
        sessions: ListRequest {
            stores: StoreFlags {
                sessions_root: Some(root.clone()),
                ..StoreFlags::default()
            },
            ..ListRequest::default()
        },
        ..FailuresRequest::default()
    };
    let result = pi_retrospect_app::failures(&request, &environment()).expect("failures");
    let mut document = Vec::new();
    pi_retrospect_render::failures::write_json(&mut document, &result.report, None).expect("write");
    let document: Value = serde_json::from_slice(&document).expect("JSON");
    assert_eq!(Value::Array(rows.clone()), document["failures"]);
    let long = rows
        .iter()
        .find(|row| row["nMessageBytesCut"].as_u64().is_some_and(|n| n > 0))
        .expect("a long message is cut");
    assert!(
        long["message"]
            .as_str()
            .is_some_and(|m| m.contains("last line"))
    );

    let mut next_idx = 1000;
    // Every failure in the store when a walk starts.
    let mut present = expected.clone();
    for arguments in [json!({}), json!({ "limit": 7 }), json!({ "limit": "13" })] {
        let (mut newer, mut older) = (BTreeSet::new(), BTreeSet::new());
        let (rows, _) = walk(&server, &arguments, "failures", &mut |_| {
            // A newer session (sorting before every cursor) and an older one than any
            // before it (sorting after every row returned so far).
            let (path, ids) = write_session(&root, next_idx, 5 * BASE_MINUTE + next_idx);
            newer.extend(ids.into_iter().map(|id| (path.clone(), id)));
            let (path, ids) = write_session(&root, next_idx + 1, 2 * BASE_MINUTE - next_idx);
            older.extend(ids.into_iter().map(|id| (path.clone(), id)));
            next_idx += 2;
        });
        assert!(
            !older.is_empty(),
            "{arguments}: the walk has more than one page"
        );
        let seen: Vec<(String, String)> = rows.iter().map(handle).collect();
        let unique: BTreeSet<(String, String)> = seen.iter().cloned().collect();
        assert_eq!(
            unique.len(),
            seen.len(),
            "{arguments}: a failure came twice"
        );
        // The walk keeps the store as of its first page: sessions made since are left out
        // (on a file system that records creation times; elsewhere an older one sorts
        // after the rows returned so far and comes too).
        let has_creation_times = std::fs::metadata(&root)
            .and_then(|metadata| metadata.created())
            .is_ok();
        let added: &BTreeSet<(String, String)> = if has_creation_times {
            &BTreeSet::new()
        } else {
            &older
        };
        for failure in present.iter().chain(added) {
            assert!(
                unique.contains(failure),
                "{arguments}: {failure:?} is missing"
            );
        }
        for failure in newer
            .iter()
            .chain(if has_creation_times { &older } else { &newer })
        {
            assert!(
                !unique.contains(failure),
                "{arguments}: {failure:?} was written after the walk began"
            );
        }
        assert_eq!(unique.len(), present.len() + added.len(), "{arguments}");
        present.extend(newer);
        present.extend(older);
        // Every row is newer than or as new as the next: the walk is in sort order.
        let stamps: Vec<&str> = rows
            .iter()
            .map(|row| row["timestamp"].as_str().unwrap_or(""))
            .collect();
        assert!(
            stamps.windows(2).all(|pair| pair[0] >= pair[1]),
            "{arguments}"
        );
    }
}

/// A damaged or made-up cursor, one of another tool and one of other arguments are refused,
/// each naming `cursor`.
#[test]
fn forged_and_foreign_cursors_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("sessions");
    for idx in 0..30 {
        write_session(&root, idx, BASE_MINUTE + idx);
    }
    let server = server(&root);
    let page = call_ok(&server, &json!({ "limit": 5 }));
    let cursor = page["nextCursor"].as_str().expect("a cursor").to_owned();
    let mut damaged = cursor.clone().into_bytes();
    let at = 10;
    damaged[at] = if damaged[at] == b'0' { b'1' } else { b'0' };
    let damaged = String::from_utf8(damaged).expect("ASCII");
    for bad in [damaged.as_str(), "c1.00.00", "failures:5", ""] {
        let error = call_err(&server, &json!({ "limit": 5, "cursor": bad }));
        assert!(error.starts_with("cursor: "), "{bad}: {error}");
        assert!(error.contains("made up"), "{bad}: {error}");
    }
    let error = call_err(
        &server,
        &json!({ "limit": 5, "cursor": cursor, "kind": "tool_error" }),
    );
    assert!(error.contains("other arguments"), "{error}");
    let list = server
        .call(
            "list_sessions",
            JsonObject::from(
                json!({ "limit": 1 })
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .expect("list_sessions");
    let list_cursor = list
        .structured_content
        .as_ref()
        .and_then(|page| page["nextCursor"].as_str())
        .expect("a list cursor")
        .to_owned();
    let error = call_err(&server, &json!({ "cursor": list_cursor }));
    assert!(error.contains("not of session_failures"), "{error}");
    // The same cursor with only the limit changed continues.
    call_ok(&server, &json!({ "limit": 50, "cursor": cursor }));
}

/// Grouped pages hold every group once, largest first, whose counts add up to nFailures;
/// one `read` failure in every session is one signature; with by session and repeats,
/// the repeats follow the groups.
#[test]
fn grouped_output_holds_every_group_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("sessions");
    let n_sessions = 48;
    for idx in 0..n_sessions {
        write_session(&root, idx, BASE_MINUTE + idx);
    }
    let server = server(&root);
    let first = call_ok(&server, &json!({ "by": "signature" }));
    let n_failures = first["nFailures"].as_u64().expect("nFailures");
    assert_eq!(n_failures, n_sessions + n_sessions / 4 + n_sessions / 6);
    assert_eq!(first["failures"], json!([]));
    let groups = first["groups"].as_array().expect("groups");
    assert_eq!(first["nGroups"], groups.len());
    let read = groups
        .iter()
        .find(|group| group["key"] == "read: ENOENT: no such file or directory, open <path>")
        .unwrap_or_else(|| panic!("the read signature: {first}"));
    // Every third session's message has more lines: its last line is in its signature.
    let n_long = n_sessions.div_ceil(3);
    assert_eq!(read["count"], n_sessions - n_long);
    assert_eq!(read["nSessions"], n_sessions - n_long);
    let long = groups
        .iter()
        .find(|group| {
            group["key"] == "read: ENOENT: no such file or directory, open <path> … last line <pos>"
        })
        .unwrap_or_else(|| panic!("the long read signature: {first}"));
    assert_eq!(long["count"], n_long);
    assert!(
        read["examplePath"]
            .as_str()
            .is_some_and(|path| path.ends_with(".jsonl"))
    );
    let counts: u64 = groups
        .iter()
        .filter_map(|group| group["count"].as_u64())
        .sum();
    assert_eq!(counts, n_failures);

    for by in ["signature", "tool", "session", "project", "day"] {
        let whole = call_ok(&server, &json!({ "by": by, "limit": 500 }));
        let (rows, _) = walk(
            &server,
            &json!({ "by": by, "limit": 2 }),
            "groups",
            &mut |_| {},
        );
        assert_eq!(Value::Array(rows.clone()), whole["groups"], "by {by}");
        let keys: BTreeMap<String, u64> = rows
            .iter()
            .map(|group| {
                (
                    group["key"].as_str().unwrap_or("").to_owned(),
                    group["count"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        assert_eq!(keys.len(), rows.len(), "by {by}: a group came twice");
        assert_eq!(keys.values().sum::<u64>(), n_failures, "by {by}");
        let counts: Vec<u64> = rows
            .iter()
            .filter_map(|group| group["count"].as_u64())
            .collect();
        assert!(counts.windows(2).all(|pair| pair[0] >= pair[1]), "by {by}");
    }
    let sessions = call_ok(&server, &json!({ "by": "session", "limit": 500 }));
    assert!(
        sessions["groups"]
            .as_array()
            .is_some_and(|groups| groups.len() as u64 == n_sessions
                && groups.iter().all(|group| group["repeatedCalls"] == 0))
    );

    // A session that calls the same tool with the same arguments three times: its repeat
    // comes after the groups, on a page of its own.
    let header = Header::new("00000000-0000-7000-8000-loop00000000")
        .timestamp("2026-11-03T00:00:00.000Z")
        .cwd("/tmp/loop");
    let mut lines = Vec::new();
    let mut parent: Option<String> = None;
    for n in 0..3 {
        let call_id = format!("a{n}");
        let call = Block::tool_call(&format!("c{n}"), "bash", r#"{"command":"cargo build"}"#);
        lines.push(
            Entry::message(Message::assistant(&[call]).stop_reason("toolUse"))
                .id(&call_id)
                .parent(parent.as_deref())
                .at(&format!("2026-11-03T00:00:0{}.000Z", 2 * n + 1)),
        );
        let result_id = format!("r{n}");
        let result =
            Message::tool_result(&format!("c{n}"), "bash", "error: linker failed").is_error(true);
        lines.push(
            Entry::message(result)
                .id(&result_id)
                .parent(Some(&call_id))
                .at(&format!("2026-11-03T00:00:0{}.000Z", 2 * n + 2)),
        );
        parent = Some(result_id);
    }
    Store::at(&root).write_session(&header, lines);
    let arguments = json!({ "by": "session", "repeats": true, "limit": 20 });
    let (groups, pages) = walk(&server, &arguments, "groups", &mut |_| {});
    let repeats: Vec<&Value> = pages
        .iter()
        .flat_map(|page| page["repeats"].as_array().into_iter().flatten())
        .collect();
    assert_eq!(repeats.len(), 1, "{pages:?}");
    assert_eq!(repeats[0]["nCalls"], 3);
    assert_eq!(repeats[0]["nFailed"], 3);
    assert!(pages.iter().all(|page| page["nRepeats"] == 1));
    let looped = groups
        .iter()
        .find(|group| {
            group["key"]
                .as_str()
                .is_some_and(|key| key.contains("loop"))
        })
        .expect("the loop's session");
    assert_eq!(looped["repeatedCalls"], 3);
    assert_eq!(looped["count"], 3);
    // The last page holds the repeats and no groups.
    let last = pages.last().expect("pages");
    assert_eq!(last["groups"], json!([]));
    assert_eq!(last["nextCursor"], Value::Null);
}

/// Lenient and wrong arguments: strings for numbers and lists, an empty kind refused.
#[test]
fn arguments_are_read_leniently_and_wrong_ones_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("sessions");
    for idx in 0..12 {
        write_session(&root, idx, BASE_MINUTE + idx);
    }
    let server = server(&root);
    let page = call_ok(
        &server,
        &json!({ "kind": "command_exit,api_error", "limit": "50", "repeats": "false" }),
    );
    let kinds: BTreeSet<&str> = page["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .filter_map(|row| row["failureKind"].as_str())
        .collect();
    assert_eq!(kinds, BTreeSet::from(["api_error", "command_exit"]));
    let one = call_ok(&server, &json!({ "kind": ["api_error"] }));
    assert_eq!(one["nFailures"], 2);
    for (arguments, name) in [
        (json!({ "kind": "" }), "kind"),
        (json!({ "kind": "oops" }), "kind"),
        (json!({ "by": "model" }), "by"),
        (json!({ "limit": 0 }), "limit"),
        (
            json!({ "startTimestamp": "yesterday-ish" }),
            "startTimestamp",
        ),
        (json!({ "cwds": "relative/dir" }), "cwds"),
    ] {
        let error = call_err(&server, &arguments);
        assert!(
            error.starts_with(&format!("{name}: ")),
            "{arguments}: {error}"
        );
    }
    // The time bounds select failures by their own time, not sessions by their start.
    let late = call_ok(
        &server,
        &json!({ "startTimestamp": "2026-11-01T16:45:00Z", "endTimestamp": "2026-11-01T16:46:59Z" }),
    );
    assert_eq!(late["nFailures"], 3, "{late}");
}

/// Rows that share their key (one time, one path, one entry id repeated in a file) are each
/// returned once: a page that ends among them resumes after the ones it returned.
#[test]
fn rows_sharing_a_key_are_each_paged_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let at = timestamp_in_month("2026-11", 60);
    let header = Header::new("00000000-0000-7000-8000-000000000001")
        .timestamp(&at)
        .cwd("/tmp/project");
    let lines: Vec<Entry> = (0..10)
        .map(|n| {
            let text = format!("failure {n}");
            Entry::message(Message::tool_result("c", "bash", &text).is_error(true))
                .id("dup")
                .parent(None)
                .at(&at)
        })
        .collect();
    Store::at(dir.path()).write_session(&header, lines);
    let server = server(dir.path());
    let mut messages = Vec::new();
    let mut arguments = json!({ "limit": 3 });
    loop {
        let page = call_ok(&server, &arguments);
        for row in page["failures"].as_array().expect("failures") {
            messages.push(row["message"].as_str().expect("message").to_owned());
        }
        match page["nextCursor"].as_str() {
            Some(cursor) => arguments = json!({ "limit": 3, "cursor": cursor }),
            None => break,
        }
    }
    messages.sort();
    let expected: Vec<String> = (0..10).map(|n| format!("failure {n}")).collect();
    assert_eq!(messages, expected);
}

/// A grouped walk is a snapshot of its first page: failures written after it (here, of the
/// signature of the smallest groups, which would move them ahead of the cursor) stay out of
/// every page, so every group of the first page's store comes once, with its count.
#[test]
fn a_grouped_walk_keeps_every_group_while_failures_are_written() {
    for by in ["signature", "tool", "session", "project"] {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("sessions");
        for idx in 0..24 {
            write_session(&root, idx, BASE_MINUTE + idx);
        }
        let root = std::fs::canonicalize(&root).expect("canonical");
        let server = server(&root);
        let arguments = json!({ "by": by, "limit": 1 });
        let (before, _) = walk(&server, &arguments, "groups", &mut |_| {});
        assert!(before.len() > 2, "{by}: a walk of several pages");
        let mut next_idx = 5000;
        // A file system that records creation times also keeps out sessions made since the
        // walk began with older failures in them (a fork, a copy, a restored session).
        let has_creation_times = std::fs::metadata(&root)
            .and_then(|metadata| metadata.created())
            .is_ok();
        let (during, _) = walk(&server, &arguments, "groups", &mut |_| {
            // After the server's now (2026-12-01): written since the walk began.
            for _ in 0..3 {
                write_session_in(&root, next_idx, "2026-12", 1440 + next_idx % 100);
                next_idx += 1;
            }
            if has_creation_times {
                write_session(&root, next_idx, BASE_MINUTE + next_idx % 20);
                next_idx += 1;
            }
        });
        assert!(next_idx > 5000, "{by}: sessions were written between pages");
        assert_eq!(during, before, "{by}");
    }
}
