//! Page walks over a generated store of thousands of sessions, called in process: every
//! session is returned exactly once in both orders even when sessions are created between
//! pages, every page stays inside its budget with its continuation, and arguments sent as
//! strings (as many clients send them) are read where their meaning is unambiguous.

use std::collections::BTreeSet;
use std::path::Path;

use pi_retrospect_app::{Environment, StoreFlags};
use pi_retrospect_mcp::{Server, ServerOptions};
use pi_retrospect_testkit::{
    Block, Entry, Header, Message, Store, append_jsonl, timestamp_in_month,
};
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::{Value, json};

/// The default page budget the tools document.
const DEFAULT_PAGE_BYTES: u64 = 32 * 1024;

/// Writes session `idx` (a header and one user message) under `root`.
fn write_session(root: &Path, idx: u64) -> String {
    let stamp = timestamp_in_month("2026-11", idx);
    let header = Header::new(&format!("00000000-0000-7000-8000-{idx:012}"))
        .timestamp(&stamp)
        .cwd(&format!("/tmp/project-{}", idx % 7));
    let text = format!("needle {idx} {}", "x".repeat(200));
    let message = user("a1", None, &stamp, &text);
    Store::at(root)
        .write_session(&header, [message])
        .display()
        .to_string()
}

/// Returns a user message `text` below `parent`.
fn user(id: &str, parent: Option<&str>, timestamp: &str, text: &str) -> Entry {
    Entry::message(Message::user(text))
        .id(id)
        .parent(parent)
        .at(timestamp)
}

fn server(root: &Path) -> Server {
    let env = Environment {
        cwd: std::env::temp_dir(),
        now: "2026-12-01T00:00:00Z".parse().expect("instant"),
        ..Environment::default()
    };
    Server::new(ServerOptions {
        stores: StoreFlags {
            sessions_root: Some(root.to_owned()),
            ..StoreFlags::default()
        },
        env,
        is_clock_live: false,
    })
}

fn call(server: &Server, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    server
        .call(tool, JsonObject::from(arguments))
        .expect("a tool")
}

fn call_ok(server: &Server, tool: &str, arguments: Value) -> Value {
    let result = call(server, tool, arguments.clone());
    let text = result
        .content
        .first()
        .and_then(|block| block.as_text().map(|text| text.text.clone()))
        .unwrap_or_default();
    assert_ne!(result.is_error, Some(true), "{tool} {arguments}: {text}");
    assert!(!text.is_empty(), "{tool}: the text content is readable");
    let page = result.structured_content.expect("structuredContent");
    let n_bytes = page.to_string().len() as u64;
    assert_eq!(
        page["bytes"],
        json!(n_bytes),
        "{tool}: bytes states the size"
    );
    assert!(page["sizeClass"].is_string());
    page
}

fn call_err(server: &Server, tool: &str, arguments: Value) -> String {
    let result = call(server, tool, arguments.clone());
    assert_eq!(result.is_error, Some(true), "{tool} {arguments} succeeded");
    result
        .content
        .first()
        .and_then(|block| block.as_text().map(|text| text.text.clone()))
        .unwrap_or_default()
}

/// Walking `list_sessions` in both orders (and with maxDepth 0) returns each session once,
/// each default page under the default budget, while sessions are created between pages.
#[test]
fn list_pages_return_every_session_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("sessions");
    let n_sessions = 3_000;
    let mut expected: BTreeSet<String> = (0..n_sessions)
        .map(|idx| write_session(&root, idx))
        .collect();
    let root = std::fs::canonicalize(&root).expect("canonical");
    let server = server(&root);
    let mut next_idx = n_sessions;
    for arguments in [
        json!({}),
        json!({ "sortDirection": "desc" }),
        json!({ "maxDepth": 0 }),
    ] {
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        let mut n_pages = 0;
        loop {
            let mut page_arguments = arguments.clone();
            if let Some(cursor) = &cursor {
                page_arguments["cursor"] = json!(cursor);
            }
            let page = call_ok(&server, "list_sessions", page_arguments);
            n_pages += 1;
            assert!(
                page["bytes"]
                    .as_u64()
                    .is_some_and(|n| n <= DEFAULT_PAGE_BYTES)
            );
            for session in page["sessions"].as_array().expect("sessions") {
                seen.push(session["path"].as_str().expect("path").to_owned());
            }
            cursor = page["nextCursor"].as_str().map(str::to_owned);
            if cursor.is_none() {
                break;
            }
            assert!(n_pages < 1000, "the walk does not end");
            // A session written between pages must not shift what follows.
            let path = write_session(&root, next_idx);
            let path = std::fs::canonicalize(path)
                .expect("canonical")
                .display()
                .to_string();
            expected.insert(path);
            next_idx += 1;
        }
        assert!(n_pages > 1, "{arguments}: one page only");
        let unique: BTreeSet<&String> = seen.iter().collect();
        assert_eq!(
            unique.len(),
            seen.len(),
            "{arguments}: a session came twice"
        );
        // The sessions written before the walk are each seen (ids end in their index).
        let n_original = seen
            .iter()
            .filter(|path| {
                path.rsplit('-')
                    .next()
                    .and_then(|tail| tail.strip_suffix(".jsonl"))
                    .and_then(|tail| tail.parse::<u64>().ok())
                    .is_some_and(|idx| idx < n_sessions)
            })
            .count();
        assert_eq!(
            n_original, n_sessions as usize,
            "{arguments}: a session was skipped"
        );
        for path in &seen {
            assert!(expected.contains(path), "{path} was never written");
        }
    }
}

/// Integers, booleans and arrays sent as strings are read; garbage still names the argument.
#[test]
fn arguments_sent_as_strings_are_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("sessions");
    for idx in 0..5 {
        write_session(&root, idx);
    }
    let root = std::fs::canonicalize(&root).expect("canonical");
    let server = server(&root);
    let page = call_ok(
        &server,
        "list_sessions",
        json!({ "limit": "2", "withSubagents": "false" }),
    );
    assert_eq!(page["sessions"].as_array().map(Vec::len), Some(2));
    let stats = call_ok(
        &server,
        "session_stats",
        json!({ "by": "session,model", "limit": "3" }),
    );
    assert_eq!(stats["groupBy"], json!(["session", "model"]));
    let stats = call_ok(&server, "session_stats", json!({ "by": "[\"model\"]" }));
    assert_eq!(stats["groupBy"], json!(["model"]));
    let hits = call_ok(
        &server,
        "search_sessions",
        json!({ "pattern": "needle", "limit": "2", "wholeWord": "true" }),
    );
    assert_eq!(hits["hits"].as_array().map(Vec::len), Some(2));
    // A whole number written as a float, as models emit it.
    for limit in [json!(2.0), json!("2.0")] {
        let page = call_ok(&server, "list_sessions", json!({ "limit": limit }));
        assert_eq!(
            page["sessions"].as_array().map(Vec::len),
            Some(2),
            "{limit}"
        );
    }
    for (tool, arguments) in [
        ("list_sessions", json!({ "limit": "two" })),
        ("list_sessions", json!({ "limit": 2.5 })),
        ("list_sessions", json!({ "maxDepth": -1 })),
    ] {
        let message = call_err(&server, tool, arguments);
        assert!(
            message.contains("whole number") && !message.contains("u64"),
            "{tool}: the type is named as the schema says: {message}"
        );
    }
    for (tool, arguments, name) in [
        ("list_sessions", json!({ "limit": "two" }), "limit"),
        (
            "search_sessions",
            json!({ "pattern": "x", "regex": "yes" }),
            "regex",
        ),
        ("session_stats", json!({ "by": "session,year" }), "by"),
    ] {
        let message = call_err(&server, tool, arguments);
        assert!(message.starts_with(name), "{tool}: {message}");
    }
}

/// Returns the index a generated session's path ends in.
fn index_of(path: &str) -> Option<u64> {
    path.rsplit('-')
        .next()
        .and_then(|tail| tail.strip_suffix(".jsonl"))
        .and_then(|tail| tail.parse::<u64>().ok())
}

/// Walks the pages of `tool` with `arguments`, calling `between` after each page that
/// continues, and returns every item of `rows_key` in order.
fn walk(
    server: &Server,
    tool: &str,
    arguments: &Value,
    rows_key: &str,
    between: &mut dyn FnMut(&Value),
) -> (Vec<Value>, usize) {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut n_pages = 0;
    loop {
        let mut page_arguments = arguments.clone();
        if let Some(cursor) = &cursor {
            page_arguments["cursor"] = json!(cursor);
        }
        let page = call_ok(server, tool, page_arguments.clone());
        n_pages += 1;
        assert!(
            page["bytes"]
                .as_u64()
                .is_some_and(|n| n <= DEFAULT_PAGE_BYTES)
                || page_arguments.get("limit").is_some(),
            "{tool}: page {n_pages} is over the default budget"
        );
        items.extend(page[rows_key].as_array().expect("rows").iter().cloned());
        cursor = page["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            return (items, n_pages);
        }
        assert!(n_pages < 1000, "{tool}: the walk does not end");
        between(&page);
    }
}

/// search_sessions and session_stats pages return each session's item once in both orders
/// while sessions are created (and an already-returned one appended to) between pages.
#[test]
fn search_and_stats_pages_return_every_item_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("sessions");
    let n_sessions = 2_000;
    for idx in 0..n_sessions {
        write_session(&root, idx);
    }
    let root = std::fs::canonicalize(&root).expect("canonical");
    let server = server(&root);
    let mut next_idx = n_sessions;
    for order in ["newest", "oldest", "path"] {
        let arguments = json!({ "pattern": "needle", "order": order });
        let (hits, n_pages) = walk(&server, "search_sessions", &arguments, "hits", &mut |_| {
            write_session(&root, next_idx);
            next_idx += 1;
        });
        assert!(n_pages > 1, "{order}: one page only");
        let keys: Vec<(String, u64)> = hits
            .iter()
            .map(|hit| {
                (
                    hit["path"].as_str().unwrap_or("").to_owned(),
                    hit["lineNo"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        let unique: BTreeSet<&(String, u64)> = keys.iter().collect();
        assert_eq!(unique.len(), keys.len(), "{order}: a hit came twice");
        let originals: BTreeSet<u64> = keys
            .iter()
            .filter_map(|(path, _)| index_of(path))
            .filter(|idx| *idx < n_sessions)
            .collect();
        assert_eq!(
            originals.len() as u64,
            n_sessions,
            "{order}: a session's hit was skipped"
        );
    }
    // A hit appended to the session the page ended in comes on a later page, once.
    let arguments = json!({ "pattern": "needle", "order": "oldest", "limit": 7 });
    let mut appended = BTreeSet::new();
    let (hits, _) = walk(
        &server,
        "search_sessions",
        &arguments,
        "hits",
        &mut |page| {
            if let Some(path) = page["hits"]
                .as_array()
                .and_then(|hits| hits.last())
                .and_then(|hit| hit["path"].as_str())
                && appended.insert(path.to_owned())
            {
                let line = user("a2", Some("a1"), "2026-11-30T00:00:00.000Z", "needle again");
                append_jsonl(Path::new(path), [line]);
            }
        },
    );
    let n_appended_hits = hits
        .iter()
        .filter(|hit| {
            hit["lineNo"] == json!(3)
                && hit["path"]
                    .as_str()
                    .is_some_and(|path| appended.contains(path))
        })
        .count();
    assert!(!appended.is_empty());
    assert_eq!(n_appended_hits, appended.len(), "each appended hit once");

    let arguments = json!({ "by": "session" });
    let (rows, n_pages) = walk(&server, "session_stats", &arguments, "rows", &mut |_| {
        write_session(&root, next_idx);
        next_idx += 1;
    });
    assert!(n_pages > 1, "stats: one page only");
    let paths: Vec<&str> = rows.iter().filter_map(|row| row["path"].as_str()).collect();
    let unique: BTreeSet<&&str> = paths.iter().collect();
    assert_eq!(unique.len(), paths.len(), "stats: a row came twice");
    let originals = paths
        .iter()
        .filter_map(|path| index_of(path))
        .filter(|idx| *idx < n_sessions)
        .count();
    assert_eq!(
        originals as u64, n_sessions,
        "stats: a session's row was skipped"
    );
}

/// session_entries pages over one long session return each line once while Pi appends to
/// it between pages; a replaced file, a cursor of another query and a forged one are errors.
#[test]
fn entries_pages_survive_appends_and_refuse_other_cursors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("sessions");
    let path = write_session(&root, 1);
    let lines = (2..2000).map(|idx| {
        user(
            &format!("m{idx}"),
            Some(&format!("m{}", idx - 1)),
            "2026-11-01T00:00:00.000Z",
            &format!("line {idx} {}", "y".repeat(100)),
        )
    });
    append_jsonl(Path::new(&path), lines);
    // The whole file as first written, to replace it with later.
    let text = std::fs::read_to_string(&path).expect("read");
    let root = std::fs::canonicalize(&root).expect("canonical");
    let path = std::fs::canonicalize(&path)
        .expect("canonical")
        .display()
        .to_string();
    let server = server(&root);
    let mut n_appended = 0;
    let arguments = json!({ "sessionPath": path });
    let (rows, n_pages) = walk(
        &server,
        "session_entries",
        &arguments,
        "entries",
        &mut |_| {
            let id = format!("x{n_appended}");
            let line = user(&id, None, "2026-11-01T00:00:00.000Z", "appended");
            append_jsonl(Path::new(&path), [line]);
            n_appended += 1;
        },
    );
    assert!(n_pages > 1);
    let lines: Vec<u64> = rows
        .iter()
        .filter_map(|row| row["lineNo"].as_u64())
        .collect();
    let n_lines = 1 + 1999 + n_appended;
    assert_eq!(
        lines,
        (2..=n_lines as u64).collect::<Vec<_>>(),
        "every line once, in order"
    );

    let first = call_ok(&server, "session_entries", json!({ "sessionPath": path }));
    let cursor = first["nextCursor"].as_str().expect("a cursor").to_owned();
    let error = call_err(
        &server,
        "session_entries",
        json!({ "sessionPath": path, "types": "message", "cursor": cursor }),
    );
    assert!(
        error.contains("cursor") && error.contains("other arguments"),
        "{error}"
    );
    let error = call_err(&server, "list_sessions", json!({ "cursor": cursor }));
    assert!(error.contains("not of list_sessions"), "{error}");
    let mut forged = cursor.clone();
    forged.insert(5, 'f');
    let error = call_err(
        &server,
        "session_entries",
        json!({ "sessionPath": path, "cursor": forged }),
    );
    assert!(error.contains("made up"), "{error}");
    for (tool, arguments) in [
        (
            "search_sessions",
            json!({ "pattern": "needle", "cursor": "hits:3" }),
        ),
        (
            "session_stats",
            json!({ "cursor": "c1.00.0000000000000000" }),
        ),
        ("list_sessions", json!({ "cursor": "sessions:1" })),
    ] {
        let error = call_err(&server, tool, arguments);
        assert!(error.starts_with("cursor:"), "{tool}: {error}");
    }
    // The file replaced by another one (a new inode) is refused.
    // Written beside it first, so the old inode is still taken when the new one is made.
    let replacement = format!("{path}.new");
    std::fs::write(&replacement, &text).expect("write the replacement");
    std::fs::rename(&replacement, &path).expect("replace");
    let error = call_err(
        &server,
        "session_entries",
        json!({ "sessionPath": path, "cursor": cursor }),
    );
    assert!(error.contains("replaced"), "{error}");
}

/// inspect_session pages over one session return each checkpoint once while Pi appends
/// turns between pages; a replaced file and a forged cursor are errors naming `cursor`.
#[test]
fn inspect_pages_survive_appends_and_refuse_other_cursors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("sessions");
    let path = write_session(&root, 1);
    let turn = |path: &str, idx: usize, parent: &str| {
        let user_id = format!("u{idx}");
        let question = user(
            &user_id,
            Some(parent),
            "2026-11-01T00:00:00.000Z",
            &format!("ask {idx}"),
        );
        let answer =
            Message::assistant(&[Block::text(&format!("answer {idx}"))]).stop_reason("stop");
        let answer = Entry::message(answer)
            .id(&format!("r{idx}"))
            .parent(Some(&user_id))
            .at("2026-11-01T00:00:01.000Z");
        append_jsonl(Path::new(path), [question, answer]);
    };
    for idx in 0..120 {
        let parent = if idx == 0 {
            "a1".to_owned()
        } else {
            format!("r{}", idx - 1)
        };
        turn(&path, idx, &parent);
    }
    let root = std::fs::canonicalize(&root).expect("canonical");
    let path = std::fs::canonicalize(&path)
        .expect("canonical")
        .display()
        .to_string();
    let server = server(&root);
    let mut n_appended = 0;
    let arguments = json!({ "sessionPath": path, "view": "overview", "limit": 7 });
    let (checkpoints, n_pages) = walk(
        &server,
        "inspect_session",
        &arguments,
        "checkpoints",
        &mut |_| {
            let parent = format!("r{}", 119 + n_appended);
            turn(&path, 120 + n_appended, &parent);
            n_appended += 1;
        },
    );
    assert!(n_pages > 1 && n_appended > 0);
    let ids: Vec<String> = checkpoints
        .iter()
        .filter_map(|item| item["entryId"].as_str().map(str::to_owned))
        .collect();
    let expected: Vec<String> = (0..120).map(|idx| format!("r{idx}")).collect();
    assert_eq!(ids, expected, "every checkpoint of the first snapshot once");

    let first = call_ok(&server, "inspect_session", arguments.clone());
    let cursor = first["nextCursor"].as_str().expect("a cursor").to_owned();
    let mut forged = cursor.clone();
    forged.insert(5, 'f');
    for bad in [forged.as_str(), "c1.1.2.0000000000000000"] {
        let error = call_err(
            &server,
            "inspect_session",
            json!({ "sessionPath": path, "view": "overview", "limit": 7, "cursor": bad }),
        );
        assert!(error.starts_with("cursor:"), "{error}");
    }
    let error = call_err(
        &server,
        "inspect_session",
        json!({ "sessionPath": path, "view": "overview", "limit": 7, "includeToolResults": true, "cursor": cursor }),
    );
    assert!(error.contains("other arguments"), "{error}");
    let replacement = format!("{path}.new");
    std::fs::write(&replacement, std::fs::read(&path).expect("read")).expect("write");
    std::fs::rename(&replacement, &path).expect("replace");
    let error = call_err(
        &server,
        "inspect_session",
        json!({ "sessionPath": path, "view": "overview", "limit": 7, "cursor": cursor }),
    );
    assert!(
        error.starts_with("cursor:") && error.contains("replaced"),
        "{error}"
    );
}

/// A line larger than the default page (a pasted file) still comes in a default page under
/// 32 KiB, its raw JSON left out with its size; `limit` asks for the raw JSON.
#[test]
fn a_large_line_keeps_the_default_page_small() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("sessions");
    let path = write_session(&root, 1);
    let lines = [(2, 45_000), (3, 60_000)].map(|(idx, n_chars)| {
        user(
            &format!("big{idx}"),
            Some("a1"),
            "2026-11-01T00:00:00.000Z",
            &"p".repeat(n_chars),
        )
    });
    append_jsonl(Path::new(&path), lines);
    let root = std::fs::canonicalize(&root).expect("canonical");
    let path = std::fs::canonicalize(&path)
        .expect("canonical")
        .display()
        .to_string();
    let server = server(&root);
    let (rows, _) = walk(
        &server,
        "session_entries",
        &json!({ "sessionPath": path }),
        "entries",
        &mut |_| {},
    );
    let big: Vec<&Value> = rows
        .iter()
        .filter(|row| row["lineNo"].as_u64() > Some(2))
        .collect();
    assert_eq!(big.len(), 2);
    for row in big {
        assert!(
            row.get("raw").is_none() && row["rawBytes"].as_u64() > Some(40_000),
            "{row}"
        );
    }
    let page = call_ok(
        &server,
        "session_entries",
        json!({ "sessionPath": path, "startLineNo": 3, "limit": 1 }),
    );
    assert!(
        page["entries"][0]["raw"].is_object(),
        "limit keeps the raw JSON"
    );
}

/// A search page's cursor names a hit; a session rewritten shorter since (the hit gone) is
/// an error naming `cursor`, never a page that silently skips or repeats hits.
#[test]
fn a_search_cursor_into_a_session_rewritten_shorter_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("sessions");
    let path = write_session(&root, 1);
    let stamp = timestamp_in_month("2026-11", 1);
    let lines: Vec<Entry> = (2..10)
        .map(|idx| {
            user(
                &format!("a{idx}"),
                Some(&format!("a{}", idx - 1)),
                &stamp,
                &format!("needle again {idx}"),
            )
        })
        .collect();
    append_jsonl(Path::new(&path), lines);
    let root = std::fs::canonicalize(&root).expect("canonical");
    let server = server(&root);
    let arguments = json!({ "pattern": "needle", "limit": 4 });
    let first = call_ok(&server, "search_sessions", arguments.clone());
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let mut resumed = arguments.clone();
    resumed["cursor"] = json!(cursor);
    // Appended to, the session goes on from the hit after the cursor's.
    let second = call_ok(&server, "search_sessions", resumed.clone());
    assert_eq!(second["hits"][0]["lineNo"], json!(6));
    // Rewritten with three lines, the cursor's hit (line 5) is gone.
    let text = std::fs::read_to_string(&path).expect("read");
    let kept: String = text
        .lines()
        .take(3)
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(&path, kept).expect("rewrite");
    let error = call_err(&server, "search_sessions", resumed);
    assert!(
        error.contains("cursor") && error.contains("changed"),
        "{error}"
    );
}
