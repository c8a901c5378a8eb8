//! Context building, turns and checkpoints, and the views: entries, inspect, show, facts.

mod common;

use common::{assistant, jsonl, other, parse, tool_result, user};
use pi_retrospect_transcript::{
    EntriesFilter, InspectRequest, InspectView, ShowOptions, Transcript, Turns,
    active_branch_items, entries, entry_tree, facts, inspect, inspect_path,
};

fn handles(session: &Transcript, indices: &[usize]) -> String {
    indices
        .iter()
        .map(|&idx| session.entry(idx).handle())
        .collect::<Vec<_>>()
        .join(",")
}

fn check_context(lines: &[&str], expected_entries: &str, expected_messages: &str) {
    let session = parse(&jsonl(lines));
    let context = session.context();
    assert_eq!(
        handles(&session, &context.entries),
        expected_entries,
        "selected entries"
    );
    let messages: Vec<String> = context
        .messages
        .iter()
        .map(|message| {
            let edited = if message.replaced_by.is_some() {
                "*"
            } else {
                ""
            };
            format!("{}{edited}", session.entry(message.entry).handle())
        })
        .collect();
    assert_eq!(
        messages.join(","),
        expected_messages,
        "model-visible messages"
    );
}

#[test]
fn builds_the_context() {
    let s0 = r#"{"type":"message","id":"s0","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"system","content":"p","timestamp":1}}"#;
    let u1 = user("u1", Some("s0"), "one");
    let a1 = assistant("a1", Some("u1"), "two", &[]);
    let u2 = user("u2", Some("a1"), "three");
    let a2 = assistant("a2", Some("u2"), "four", &[]);
    let compaction = |id: &str, parent: &str, kept: &str| {
        other(
            "compaction",
            id,
            Some(parent),
            &format!(r#""summary":"s","firstKeptEntryId":"{kept}","tokensBefore":1"#),
        )
    };
    // No compaction: the whole branch; metadata stays selected but sends no message.
    check_context(
        &[
            s0,
            &u1,
            &a1,
            &other("label", "l1", Some("a1"), r#""targetId":"u1","label":"x""#),
        ],
        "s0,u1,a1,l1",
        "s0,u1,a1",
    );
    // Compaction keeps from u1: system messages in the kept range are dropped.
    check_context(
        &[
            s0,
            &u1,
            &a1,
            &u2,
            &compaction("c1", "u2", "s0"),
            &a2.replace("\"u2\"", "\"c1\""),
        ],
        "c1,u1,a1,u2,a2",
        "c1,u1,a1,u2,a2",
    );
    check_context(
        &[
            s0,
            &u1,
            &a1,
            &u2,
            &compaction("c1", "u2", "u2"),
            &a2.replace("\"u2\"", "\"c1\""),
        ],
        "c1,u2,a2",
        "c1,u2,a2",
    );
    // Retain-none: the compaction names itself.
    check_context(&[s0, &u1, &compaction("c1", "u1", "c1")], "c1", "c1");
    // Two compactions: the latest wins.
    check_context(
        &[
            &u1,
            &a1,
            &compaction("c1", "a1", "a1"),
            &u2.replace("\"a1\"", "\"c1\""),
            &compaction("c2", "u2", "u2"),
        ],
        "c2,u2",
        "c2,u2",
    );
    // Context edits: latest per target on the branch; null omits, a replacement marks it.
    check_context(
        &[
            &u1,
            &a1,
            &other(
                "context_edit",
                "e1",
                Some("a1"),
                r#""targetId":"u1","replacement":"new""#,
            ),
            &other(
                "context_edit",
                "e2",
                Some("e1"),
                r#""targetId":"a1","replacement":"x""#,
            ),
            &other(
                "context_edit",
                "e3",
                Some("e2"),
                r#""targetId":"a1","replacement":null"#,
            ),
        ],
        "u1,a1,e1,e2,e3",
        "u1*",
    );
    // An edit on another branch does not apply.
    check_context(
        &[
            &u1,
            &a1,
            &other(
                "context_edit",
                "e1",
                Some("a1"),
                r#""targetId":"u1","replacement":null"#,
            ),
            &u2,
        ],
        "u1,a1,u2",
        "u1,a1,u2",
    );
}

#[test]
fn reports_model_and_thinking_level() {
    let session = parse(&jsonl(&[
        &user("u1", None, "x"),
        &assistant("a1", Some("u1"), "y", &[]),
        &other(
            "model_change",
            "m1",
            Some("a1"),
            r#""provider":"openai","modelId":"gpt-4o""#,
        ),
        &other(
            "thinking_level_change",
            "t1",
            Some("m1"),
            r#""thinkingLevel":"high""#,
        ),
    ]));
    let context = session.context();
    assert_eq!(
        context.model.map(|model| model.display()).as_deref(),
        Some("openai/gpt-4o")
    );
    assert_eq!(context.thinking_level, Some("high"));
}

fn tree_with_turns() -> String {
    jsonl(&[
        &user("u1", None, "please fix the bug"),
        &assistant("a1", Some("u1"), "looking", &["read", "bash"]),
        &tool_result("t1", Some("a1"), "read", "file body SECRET_OUTPUT"),
        &tool_result("t2", Some("t1"), "bash", "ok"),
        &assistant("a2", Some("t2"), "Fixed it", &[]),
        &other(
            "label",
            "l1",
            Some("a2"),
            r#""targetId":"a2","label":"fixed"#,
        ),
        &user("u2", Some("l1"), "now add tests"),
        &assistant("a3", Some("u2"), "tests added", &[]),
        &user("u3", Some("l1"), "alternative request"),
        &assistant("a4", Some("u3"), "alt answer", &["bash"]),
    ])
}

#[test]
fn finds_turns_and_checkpoints() {
    let session = parse(&tree_with_turns().replace(r#""label":"fixed"#, r#""label":"fixed""#));
    let turns = Turns::new(&session);
    let summary: Vec<String> = turns
        .all()
        .iter()
        .map(|turn| {
            format!(
                "{}->{}{}",
                session.entry(turn.assistant).handle(),
                session.entry(turn.last).handle(),
                if turn.is_complete { "" } else { "(open)" }
            )
        })
        .collect();
    assert_eq!(summary, ["a1->t2", "a2->a2", "a3->a3", "a4->a4(open)"]);
    assert_eq!(handles(&session, &turns.checkpoints()), "t2,a2,a3");
    let a2 = session.find("a2").expect("a2");
    assert_eq!(
        handles(&session, &turns.child_checkpoints(&session, a2)),
        "a3"
    );
    assert_eq!(
        turns
            .parent_checkpoint(&session, a2)
            .map(|idx| session.entry(idx).handle())
            .as_deref(),
        Some("t2")
    );
}

fn labelled_tree() -> String {
    tree_with_turns().replace(r#""label":"fixed"#, r#""label":"fixed""#)
}

fn page(
    session: &Transcript,
    view: InspectView,
    limit: Option<usize>,
    cursor: Option<String>,
    tools: bool,
) -> serde_json::Value {
    let request = InspectRequest {
        view,
        limit,
        cursor,
        include_tool_results: tools,
    };
    serde_json::to_value(inspect(session, &request).expect("inspect")).expect("json")
}

fn ids(value: &serde_json::Value, list: &str, field: &str) -> Vec<String> {
    value[list]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|item| item[field].as_str().unwrap_or("?").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn inspect_views() {
    let session = parse(&labelled_tree());
    let overview = page(&session, InspectView::Overview, None, None, false);
    assert_eq!(ids(&overview, "checkpoints", "entryId"), ["t2", "a2", "a3"]);
    assert_eq!(overview["sessionId"], "s1");
    assert_eq!(overview["activeEntryId"], "a4");
    let a2 = &overview["checkpoints"][1];
    assert_eq!(a2["labels"], serde_json::json!(["fixed"]));
    assert_eq!(a2["parentCheckpointId"], "t2");
    assert_eq!(a2["childCheckpointIds"], serde_json::json!(["a3"]));
    assert_eq!(
        overview["checkpoints"][0]["toolNames"],
        serde_json::json!(["read", "bash"])
    );
    assert_eq!(
        overview["checkpoints"][0]["requestPreview"],
        "please fix the bug"
    );
    assert!(
        overview["checkpoints"][0]["estimatedContextTokens"]
            .as_u64()
            .unwrap_or(0)
            > 0
    );
    let text = overview.to_string();
    for secret in ["secret thoughts", "secret_arg", "SECRET_OUTPUT"] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }

    let ancestors = page(
        &session,
        InspectView::Ancestors { entry: None },
        None,
        None,
        false,
    );
    assert_eq!(ids(&ancestors, "checkpoints", "entryId"), ["t2", "a2"]);
    let ancestors = page(
        &session,
        InspectView::Ancestors {
            entry: Some("a3".to_owned()),
        },
        None,
        None,
        false,
    );
    assert_eq!(
        ids(&ancestors, "checkpoints", "entryId"),
        ["t2", "a2", "a3"]
    );
    let children = page(
        &session,
        InspectView::Children {
            entry: "u1".to_owned(),
        },
        None,
        None,
        false,
    );
    assert_eq!(ids(&children, "checkpoints", "entryId"), ["t2"]);

    let search = page(
        &session,
        InspectView::Search {
            query: "FIX".to_owned(),
        },
        None,
        None,
        false,
    );
    assert_eq!(ids(&search, "hits", "entryId"), ["u1", "a2", "a2"]);
    assert_eq!(
        ids(&search, "hits", "field"),
        ["user", "label", "assistant"]
    );
    assert_eq!(search["hits"][0]["checkpointId"], "t2");
    let hidden = page(
        &session,
        InspectView::Search {
            query: "secret_output".to_owned(),
        },
        None,
        None,
        false,
    );
    assert_eq!(ids(&hidden, "hits", "entryId"), Vec::<String>::new());
    let shown = page(
        &session,
        InspectView::Search {
            query: "secret_output".to_owned(),
        },
        None,
        None,
        true,
    );
    assert_eq!(ids(&shown, "hits", "entryId"), ["t1"]);

    let read = page(
        &session,
        InspectView::Read {
            entry: "a2".to_owned(),
            before: 2,
            after: 2,
        },
        None,
        None,
        false,
    );
    let read = &read["read"];
    assert_eq!(read["entry"]["entryId"], "a2");
    assert_eq!(ids(read, "before", "entryId"), ["t1", "t2"]);
    assert_eq!(read["before"][0]["text"], serde_json::Value::Null);
    assert_eq!(read["before"][0]["isToolOutputHidden"], true);
    assert_eq!(ids(read, "after", "entryId"), ["l1"]);
    assert_eq!(read["branchPoint"]["entryId"], "l1");
    assert_eq!(
        read["branchPoint"]["childIds"],
        serde_json::json!(["u2", "u3"])
    );
    assert!(!read.to_string().contains("secret thoughts"));
}

#[test]
fn inspect_rejects_bad_requests() {
    let session = parse(&labelled_tree());
    for (view, limit, cursor) in [
        (InspectView::Overview, Some(0), None),
        (InspectView::Overview, Some(51), None),
        (InspectView::Overview, None, Some("garbage".to_owned())),
        (
            InspectView::Children {
                entry: "nope".to_owned(),
            },
            None,
            None,
        ),
        (
            InspectView::Search {
                query: String::new(),
            },
            None,
            None,
        ),
        (
            InspectView::Read {
                entry: "a2".to_owned(),
                before: 11,
                after: 0,
            },
            None,
            None,
        ),
    ] {
        let request = InspectRequest {
            view,
            limit,
            cursor,
            include_tool_results: false,
        };
        assert!(inspect(&session, &request).is_err(), "{request:?}");
    }
}

#[test]
fn cursor_continues_the_same_snapshot_after_the_file_grows() {
    let mut lines = vec![user("u0", None, "start")];
    let mut parent = "u0".to_owned();
    for n in 0..5 {
        let id = format!("a{n}");
        lines.push(assistant(&id, Some(&parent), "answer", &[]));
        parent = id;
    }
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let (_dir, path) = common::materialise(jsonl(&refs).as_bytes());
    let request = |cursor: Option<String>| InspectRequest {
        view: InspectView::Overview,
        limit: Some(2),
        cursor,
        include_tool_results: false,
    };
    let mut seen = Vec::new();
    let first = inspect_path(&path, &request(None)).expect("first page");
    seen.extend(first.checkpoints.iter().map(|item| item.entry_id.clone()));
    // Pi appends two more turns and starts writing a third.
    let mut grown = std::fs::read(&path).expect("read");
    grown.extend_from_slice(
        format!(
            "{}\n{}\n{{\"type\":\"mess",
            assistant("x1", Some("a4"), "late", &[]),
            assistant("x2", Some("x1"), "later", &[])
        )
        .as_bytes(),
    );
    std::fs::write(&path, grown).expect("grow");
    let mut cursor = first.next_cursor;
    while let Some(next) = cursor {
        let page = inspect_path(&path, &request(Some(next))).expect("next page");
        assert_eq!(page.n_total, 5);
        seen.extend(page.checkpoints.iter().map(|item| item.entry_id.clone()));
        cursor = page.next_cursor;
    }
    assert_eq!(seen, ["a0", "a1", "a2", "a3", "a4"]);
    // A fresh request sees the new turns.
    assert_eq!(
        inspect_path(&path, &request(None)).expect("fresh").n_total,
        7
    );
    // A cursor does not continue a different request.
    let other_request = InspectRequest {
        view: InspectView::Search {
            query: "answer".to_owned(),
        },
        limit: Some(2),
        cursor: first_cursor(&path),
        include_tool_results: false,
    };
    assert!(inspect_path(&path, &other_request).is_err());
}

fn first_cursor(path: &std::path::Path) -> Option<String> {
    let request = InspectRequest {
        view: InspectView::Overview,
        limit: Some(1),
        cursor: None,
        include_tool_results: false,
    };
    inspect_path(path, &request).expect("page").next_cursor
}

fn check_entries(filter: EntriesFilter, expected: &[&str]) {
    let session = parse(&labelled_tree());
    let rows = entries(&session, &filter).expect("entries");
    let actual: Vec<String> = rows
        .iter()
        .map(|row| format!("{}:{}", row.line_no, row.id.as_deref().unwrap_or("-")))
        .collect();
    assert_eq!(actual, expected, "{filter:?}");
}

#[test]
fn entries_filters() {
    check_entries(
        EntriesFilter {
            limit: Some(2),
            ..Default::default()
        },
        &["2:u1", "3:a1"],
    );
    check_entries(
        EntriesFilter {
            first_line: Some(4),
            last_line: Some(5),
            ..Default::default()
        },
        &["4:t1", "5:t2"],
    );
    check_entries(
        EntriesFilter {
            id: Some("a2".to_owned()),
            ..Default::default()
        },
        &["6:a2"],
    );
    check_entries(
        EntriesFilter {
            parent_id: Some("l1".to_owned()),
            ..Default::default()
        },
        &["8:u2", "10:u3"],
    );
    check_entries(
        EntriesFilter {
            types: vec!["label".to_owned()],
            ..Default::default()
        },
        &["7:l1"],
    );
    check_entries(
        EntriesFilter {
            roles: vec!["user".to_owned(), "toolResult".to_owned()],
            ..Default::default()
        },
        &["2:u1", "4:t1", "5:t2", "8:u2", "10:u3"],
    );
    check_entries(
        EntriesFilter {
            grep: vec!["TESTS".to_owned(), "alt answer".to_owned()],
            ..Default::default()
        },
        &["8:u2", "9:a3", "11:a4"],
    );
    check_entries(
        EntriesFilter {
            grep: vec!["TESTS".to_owned()],
            is_case_sensitive: true,
            ..Default::default()
        },
        &[],
    );
    check_entries(
        EntriesFilter {
            grep: vec!["secret thoughts".to_owned()],
            ..Default::default()
        },
        &[],
    );
    check_entries(
        EntriesFilter {
            grep: vec!["secret_arg".to_owned()],
            ..Default::default()
        },
        &[],
    );
    let at = |text: &str| pi_retrospect_core::timestamp::parse(text);
    check_entries(
        EntriesFilter {
            since: at("2026-01-01T00:00:06.000Z"),
            until: at("2026-01-01T00:00:07.000Z"),
            ..Default::default()
        },
        &["4:t1", "5:t2", "7:l1"],
    );
}

#[test]
fn entries_rows_carry_text_and_raw() {
    let input = jsonl(&[
        r#"{"type":"message","id":"s0","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"system","content":"base","sections":{"tools":"<tools/>","old":null},"timestamp":1}}"#,
        r#"{"type":"message","id":"b1","parentId":"s0","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"bashExecution","command":"ls -la","output":"secret listing","exitCode":0,"timestamp":1}}"#,
        &other(
            "context_edit",
            "e1",
            Some("b1"),
            r#""targetId":"s0","replacement":[{"type":"text","text":"replaced"}]"#,
        ),
        &other("session_info", "n1", Some("e1"), r#""name":"Named""#),
        &other(
            "compaction",
            "c1",
            Some("n1"),
            r#""summary":"the summary","firstKeptEntryId":"c1""#,
        ),
        &other(
            "custom_message",
            "m1",
            Some("c1"),
            r#""customType":"x","content":[{"type":"text","text":"ext says"},{"type":"image","data":"AAAA","mimeType":"image/png"}]"#,
        ),
        &other("custom", "x1", Some("m1"), r#""customType":"x","data":{}"#),
    ]);
    let session = parse(&input);
    let rows = entries(
        &session,
        &EntriesFilter {
            include_raw: true,
            ..Default::default()
        },
    )
    .expect("rows");
    let texts: Vec<Option<&str>> = rows.iter().map(|row| row.text.as_deref()).collect();
    assert_eq!(
        texts,
        [
            Some("base\n[section old removed]\n[section tools]\n<tools/>"),
            Some("!ls -la"),
            Some("replaced"),
            Some("Named"),
            Some("the summary"),
            Some("ext says"),
            None,
        ]
    );
    let json = serde_json::to_value(&rows[1]).expect("json");
    assert_eq!(json["lineNo"], 3);
    assert_eq!(json["messageRole"], "bashExecution");
    assert_eq!(json["type"], "message");
    assert_eq!(
        serde_json::to_string(&rows[3].raw).expect("raw"),
        format!(
            "{}",
            other("session_info", "n1", Some("e1"), r#""name":"Named""#)
        )
    );
}

#[test]
fn version_1_rows_have_null_ids() {
    let v1 = concat!(
        r#"{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        "\n",
        r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"one","timestamp":1}}"#,
        "\n",
    );
    let session = parse(v1);
    let rows = entries(&session, &EntriesFilter::default()).expect("rows");
    let json = serde_json::to_value(&rows).expect("json");
    assert_eq!(
        json,
        serde_json::json!([{"lineNo": 2, "id": null, "parentId": null, "timestamp": "2025-01-01T00:00:01.000Z", "type": "message", "messageRole": "user", "text": "one"}])
    );
}

#[test]
fn derives_facts() {
    let input = jsonl(&[
        &user("u1", None, "first   request\nwith lines"),
        &assistant("a1", Some("u1"), "y", &[]),
        &other("session_info", "n1", Some("a1"), r#""name":"Old name""#),
        &other(
            "model_change",
            "m1",
            Some("n1"),
            r#""provider":"openai","modelId":"gpt-4o""#,
        ),
        &other(
            "label",
            "l1",
            Some("m1"),
            r#""targetId":"u1","label":"start""#,
        ),
        &other(
            "label",
            "l2",
            Some("l1"),
            r#""targetId":"a1","label":"gone""#,
        ),
        &other("label", "l3", Some("l2"), r#""targetId":"a1""#),
        &other("session_info", "n2", Some("l3"), r#""name":"New name""#),
    ]);
    let facts = facts(&parse(&input)).expect("facts");
    assert_eq!(facts.name.as_deref(), Some("New name"));
    assert_eq!(
        facts.first_user_message.as_deref(),
        Some("first request with lines")
    );
    assert_eq!(facts.models, ["anthropic/claude-x", "openai/gpt-4o"]);
    assert_eq!(facts.labels.len(), 1);
    assert_eq!(facts.labels[0].label, "start");
    assert_eq!(facts.messages_by_role.get("user"), Some(&1));
    assert_eq!(facts.entries_by_type.get("label"), Some(&3));
    assert_eq!(
        facts.first_activity.as_deref(),
        Some("2026-01-01T00:00:02.000Z")
    );
    assert_eq!(
        facts.last_activity.as_deref(),
        Some("2026-01-01T00:00:07.000Z")
    );
}

#[test]
fn show_items_and_tree() {
    let session = parse(&labelled_tree());
    let items = active_branch_items(
        &session,
        ShowOptions {
            tool_output_chars: 4,
        },
    )
    .expect("items");
    let kinds: Vec<String> = items
        .iter()
        .map(|item| {
            serde_json::to_value(item).expect("json")["kind"]
                .as_str()
                .unwrap_or("?")
                .to_owned()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "user",
            "thinking",
            "assistant",
            "toolCall",
            "toolCall",
            "toolResult",
            "toolResult",
            "thinking",
            "assistant",
            "note",
            "user",
            "thinking",
            "assistant",
            "toolCall",
        ]
    );
    let json = serde_json::to_value(&items).expect("json");
    assert_eq!(
        json[3]["argumentSummary"],
        r#"limit=5, path="src/secret_arg.rs""#
    );
    assert_eq!(json[5]["text"], "file");
    assert_eq!(json[5]["isTruncated"], true);

    let rows = entry_tree(&session, true).expect("tree");
    let outline: Vec<String> = rows
        .iter()
        .map(|row| {
            format!(
                "{}{}{}{}",
                "  ".repeat(row.indent),
                row.entry_id,
                if row.is_on_active_path { "*" } else { "" },
                row.label
                    .as_deref()
                    .map(|label| format!("[{label}]"))
                    .unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        outline,
        [
            "u1*",
            "a1*",
            "t1*",
            "t2*",
            "a2*[fixed]",
            "l1*",
            "  u2",
            "  a3",
            "  u3*",
            "  a4*"
        ]
    );
    assert!(
        rows.iter()
            .any(|row| row.is_branch_point && row.entry_id == "l1")
    );
    assert_eq!(rows[0].preview.as_deref(), Some("please fix the bug"));
}
