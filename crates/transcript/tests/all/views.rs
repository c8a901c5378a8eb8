//! Context building, turns and checkpoints, and the views: entries, inspect, show, facts.

use crate::common;

use common::{assistant, jsonl, other, parse, tool_result, user};
use pi_retrospect_testkit::Header;
use pi_retrospect_transcript::{
    CaseMode, EntriesFilter, InspectPageRequest, InspectView, OutputLimit, SearchScope,
    ShowOptions, Transcript, Turns, active_branch_items, entries, entry_tree, facts, inspect,
    inspect_path,
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
    let request = InspectPageRequest {
        view,
        limit,
        cursor,
        scope: SearchScope {
            tool_results: tools,
            ..SearchScope::default()
        },
        case: CaseMode::default(),
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
            query: "fix".to_owned(),
        },
        None,
        None,
        false,
    );
    // Smart case: a pattern without an upper-case letter ignores case. A label is a hit on
    // the label entry that holds it, as in `search`.
    assert_eq!(ids(&search, "hits", "entryId"), ["u1", "a2", "l1"]);
    assert_eq!(
        ids(&search, "hits", "field"),
        ["user", "assistant", "label"]
    );
    let sensitive = page(
        &session,
        InspectView::Search {
            query: "Fix".to_owned(),
        },
        None,
        None,
        false,
    );
    assert_eq!(ids(&sensitive, "hits", "entryId"), ["a2"]);
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
        let request = InspectPageRequest {
            view,
            limit,
            cursor,
            scope: SearchScope::default(),
            case: CaseMode::default(),
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
    let request = |cursor: Option<String>| InspectPageRequest {
        view: InspectView::Overview,
        limit: Some(2),
        cursor,
        scope: SearchScope::default(),
        case: CaseMode::default(),
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
    let other_request = InspectPageRequest {
        view: InspectView::Search {
            query: "answer".to_owned(),
        },
        limit: Some(2),
        cursor: first_cursor(&path),
        scope: SearchScope::default(),
        case: CaseMode::default(),
    };
    assert!(inspect_path(&path, &other_request).is_err());
}

fn first_cursor(path: &std::path::Path) -> Option<String> {
    let request = InspectPageRequest {
        view: InspectView::Overview,
        limit: Some(1),
        cursor: None,
        scope: SearchScope::default(),
        case: CaseMode::default(),
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
            grep: vec!["tests".to_owned(), "alt answer".to_owned()],
            ..Default::default()
        },
        &["8:u2", "9:a3", "11:a4"],
    );
    check_entries(
        EntriesFilter {
            grep: vec!["TESTS".to_owned()],
            case: CaseMode::Insensitive,
            ..Default::default()
        },
        &["8:u2", "9:a3"],
    );
    check_entries(
        EntriesFilter {
            grep: vec!["TESTS".to_owned()],
            ..Default::default()
        },
        &[],
    );
    check_entries(
        EntriesFilter {
            grep: vec!["TESTS".to_owned()],
            case: CaseMode::Sensitive,
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
            output_limit: Some(OutputLimit::chars(4)),
            include_thinking: true,
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
            "label",
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
    assert_eq!(json[3]["arguments"]["path"], "src/secret_arg.rs");
    assert_eq!(json[5]["text"], "fPUT", "head and tail");
    assert_eq!(json[5]["omitted"]["nBytes"], 19);
    assert_eq!(json[5]["isError"], false);

    let rows = entry_tree(&session, true).expect("tree");
    let outline: Vec<String> = rows
        .iter()
        .map(|row| {
            format!(
                "{}{}{}{}",
                "  ".repeat(row.depth),
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
            "u3*",
            "a4*"
        ]
    );
    assert!(
        rows.iter()
            .any(|row| row.is_branch_point && row.entry_id == "l1")
    );
    assert_eq!(rows[0].preview.as_deref(), Some("please fix the bug"));
}

/// Returns a message entry with `message` (a JSON object body without braces).
fn raw_message(id: &str, parent_id: Option<&str>, message: &str) -> String {
    let parent = parent_id.map_or("null".to_owned(), |parent| format!("\"{parent}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:09.000Z","message":{{{message}}}}}"#
    )
}

/// Returns each item of the active branch as `kind:entry` plus the facts that matter here.
fn item_outline(session: &Transcript, options: ShowOptions) -> Vec<String> {
    let items = active_branch_items(session, options).expect("items");
    serde_json::to_value(&items)
        .expect("json")
        .as_array()
        .expect("items")
        .iter()
        .map(|item| {
            let mut line = format!(
                "{}:{}",
                item["kind"].as_str().unwrap_or("?"),
                item["entryId"].as_str().unwrap_or("?")
            );
            for key in [
                "stopReason",
                "errorMessage",
                "isError",
                "exitCode",
                "cancelled",
                "truncated",
                "excludeFromContext",
                "nHiddenThinking",
                "nImages",
                "toolCallId",
                "omits",
                "label",
                "targetId",
                "fromId",
                "firstKeptEntryId",
                "tokensBefore",
            ] {
                match &item[key] {
                    serde_json::Value::Null => {}
                    serde_json::Value::Number(n) if n.as_u64() == Some(0) => {}
                    value => line.push_str(&format!(" {key}={value}")),
                }
            }
            line
        })
        .collect()
}

fn check_items(lines: &[&str], include_thinking: bool, expected: &[&str]) {
    let session = parse(&jsonl(lines));
    let options = ShowOptions {
        output_limit: None,
        include_thinking,
    };
    assert_eq!(item_outline(&session, options), expected, "{lines:#?}");
}

/// A failed, aborted or cut-off response keeps its row and says how it ended; a
/// thinking-only turn says thinking was hidden; a tool-only turn is its calls; `!` commands
/// carry exit code and state; images are counted.
#[test]
fn items_say_how_each_message_ended() {
    let assistant_with = |id: &str, parent: &str, content: &str, rest: &str| {
        raw_message(
            id,
            Some(parent),
            &format!(
                r#""role":"assistant","content":[{content}],"provider":"p","model":"m"{rest}"#
            ),
        )
    };
    let u0 = user("u0", None, "go");
    check_items(
        &[
            &u0,
            &assistant_with(
                "a1",
                "u0",
                "",
                r#","stopReason":"error","errorMessage":"429""#,
            ),
            &assistant_with("a2", "a1", "", r#","stopReason":"aborted""#),
            &assistant_with(
                "a3",
                "a2",
                r#"{"type":"text","text":"half"}"#,
                r#","stopReason":"length""#,
            ),
        ],
        false,
        &[
            "user:u0",
            r#"assistant:a1 stopReason="error" errorMessage="429""#,
            r#"assistant:a2 stopReason="aborted""#,
            r#"assistant:a3 stopReason="length""#,
        ],
    );
    let thinking = r#"{"type":"thinking","thinking":"hmm"}"#;
    let call = r#"{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}"#;
    let only_thinking = assistant_with("a1", "u0", thinking, r#","stopReason":"stop""#);
    check_items(
        &[&u0, &only_thinking],
        false,
        &[
            "user:u0",
            r#"assistant:a1 stopReason="stop" nHiddenThinking=1"#,
        ],
    );
    check_items(&[&u0, &only_thinking], true, &["user:u0", "thinking:a1"]);
    check_items(
        &[
            &u0,
            &assistant_with("a1", "u0", call, r#","stopReason":"toolUse""#),
            &raw_message(
                "t1",
                Some("a1"),
                r#""role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x"},{"type":"image","data":"AAAA","mimeType":"image/png"}],"isError":true"#,
            ),
        ],
        false,
        &[
            "user:u0",
            r#"toolCall:a1 toolCallId="c1""#,
            r#"toolResult:t1 isError=true nImages=1 toolCallId="c1""#,
        ],
    );
    check_items(
        &[
            &u0,
            &raw_message(
                "b1",
                Some("u0"),
                r#""role":"bashExecution","command":"false","output":"","exitCode":1,"cancelled":false,"truncated":true,"fullOutputPath":"/tmp/x.log""#,
            ),
            &raw_message(
                "b2",
                Some("b1"),
                r#""role":"bashExecution","command":"sleep 9","output":"","cancelled":true,"truncated":false,"excludeFromContext":true"#,
            ),
        ],
        false,
        &[
            "user:u0",
            "bash:b1 exitCode=1 truncated=true",
            "bash:b2 cancelled=true excludeFromContext=true",
        ],
    );
    // A reply of tool calls only that carries the provider's error text keeps its row, so
    // that the text search finds is shown.
    check_items(
        &[
            &u0,
            &assistant_with(
                "a1",
                "u0",
                call,
                r#","stopReason":"toolUse","errorMessage":"stream reset""#,
            ),
        ],
        false,
        &[
            "user:u0",
            r#"assistant:a1 stopReason="toolUse" errorMessage="stream reset""#,
            r#"toolCall:a1 toolCallId="c1""#,
        ],
    );
}

/// Notes say what they do: the entry a label marks or a context edit changes, the
/// tokens a compaction replaced and where its kept part starts, the branch a summary covers.
#[test]
fn notes_carry_what_they_act_on() {
    let lines = [
        user("u0", None, "go"),
        assistant("a0", Some("u0"), "done", &[]),
        other(
            "label",
            "l1",
            Some("a0"),
            r#""targetId":"u0","label":"start""#,
        ),
        other("label", "l2", Some("l1"), r#""targetId":"u0""#),
        other(
            "context_edit",
            "e1",
            Some("l2"),
            r#""targetId":"a0","replacement":null"#,
        ),
        other(
            "compaction",
            "c1",
            Some("e1"),
            r#""summary":"s","firstKeptEntryId":"a0","tokensBefore":1234"#,
        ),
        other(
            "branch_summary",
            "s1",
            Some("c1"),
            r#""fromId":"zz","summary":"The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\nTried X.""#,
        ),
    ];
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    check_items(
        &refs,
        false,
        &[
            "user:u0",
            r#"assistant:a0 stopReason="stop" nHiddenThinking=1"#,
            r#"label:l1 label="start" targetId="u0""#,
            r#"label:l2 targetId="u0""#,
            r#"contextEdit:e1 omits=true targetId="a0""#,
            r#"compaction:c1 firstKeptEntryId="a0" tokensBefore=1234"#,
            r#"branchSummary:s1 fromId="zz""#,
        ],
    );
    let session = parse(&jsonl(&refs));
    let items = active_branch_items(&session, ShowOptions::default()).expect("items");
    let summary = serde_json::to_value(&items[6]).expect("json");
    assert_eq!(
        summary["summary"], "Tried X.",
        "Pi's fixed opening is dropped"
    );
}

fn tree_outline(lines: &[&str]) -> Vec<String> {
    let session = parse(&jsonl(lines));
    entry_tree(&session, false)
        .expect("tree")
        .iter()
        .map(|row| {
            let start = match row.branch_size {
                Some(size) => format!("+{size} "),
                None => String::new(),
            };
            format!("{}{start}{}", "  ".repeat(row.depth), row.entry_id)
        })
        .collect()
}

/// The active path stays at depth 0, each side branch sits right under its branch
/// point, one level deeper, with its size for folding; a separate root is a side branch too.
#[test]
fn the_tree_keeps_the_active_path_at_depth_zero() {
    let check = |lines: &[String], expected: &[&str]| {
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        assert_eq!(tree_outline(&refs), expected);
    };
    check(
        &[
            user("r", None, "root"),
            user("side1", Some("r"), "a"),
            user("side1b", Some("side1"), "b"),
            user("main", Some("r"), "c"),
            user("side2", Some("r"), "d"),
            user("next", Some("main"), "e"),
        ],
        &["r", "  +2 side1", "  side1b", "  +1 side2", "main", "next"],
    );
    // Inside a side branch the last child goes on at the same depth.
    check(
        &[
            user("r", None, "root"),
            user("s", Some("r"), "a"),
            user("s1", Some("s"), "b"),
            user("s2", Some("s"), "c"),
            user("main", Some("r"), "d"),
        ],
        &["r", "  +3 s", "    +1 s1", "  s2", "main"],
    );
    // An orphan is drawn as a side branch of its own.
    check(
        &[
            user("r", None, "root"),
            user("o", Some("missing"), "orphan"),
            user("main", Some("r"), "c"),
        ],
        &["r", "main", "  +1 o"],
    );
}

/// `search` looks in `!` commands and their output always, in tool-call arguments,
/// thinking, tool results and system prompts only when asked, and names what it left out.
#[test]
fn search_scope_is_opt_in() {
    let lines = [
        r#"{"type":"message","id":"s0","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"system","content":"never push","timestamp":1}}"#.to_owned(),
        user("u1", Some("s0"), "deploy it"),
        raw_message(
            "a1",
            Some("u1"),
            r#""role":"assistant","content":[{"type":"thinking","thinking":"I will push"},{"type":"toolCall","id":"c","name":"bash","arguments":{"command":"git push origin main"}}],"stopReason":"toolUse""#,
        ),
        raw_message(
            "t1",
            Some("a1"),
            r#""role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"pushed"}],"isError":false"#,
        ),
        raw_message(
            "b1",
            Some("t1"),
            r#""role":"bashExecution","command":"git push --tags","output":"pushed tags","exitCode":0,"cancelled":false,"truncated":false"#,
        ),
    ];
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let session = parse(&jsonl(&refs));
    let check = |scope: SearchScope, expected: &[&str], not_searched: &[&str]| {
        let request = InspectPageRequest {
            scope,
            ..InspectPageRequest::new(InspectView::Search {
                query: "push".to_owned(),
            })
        };
        let page = inspect(&session, &request).expect("search");
        let hits: Vec<String> = page
            .hits
            .iter()
            .flatten()
            .map(|hit| {
                let field = serde_json::to_value(hit.field).expect("field");
                format!("{}:{}", hit.entry_id, field.as_str().unwrap_or("?"))
            })
            .collect();
        assert_eq!(hits, expected, "{scope:?}");
        assert_eq!(page.not_searched, not_searched, "{scope:?}");
    };
    let all = ["toolResults", "toolArgs", "thinking", "system"];
    check(
        SearchScope::default(),
        &["b1:bashCommand", "b1:bashOutput"],
        &all,
    );
    check(
        SearchScope {
            tool_args: true,
            ..SearchScope::default()
        },
        &["a1:toolArgs", "b1:bashCommand", "b1:bashOutput"],
        &["toolResults", "thinking", "system"],
    );
    check(
        SearchScope {
            tool_results: true,
            tool_args: true,
            thinking: true,
            system: true,
        },
        &[
            "s0:system",
            "a1:thinking",
            "a1:toolArgs",
            "t1:toolResult",
            "b1:bashCommand",
            "b1:bashOutput",
        ],
        &[],
    );
    // A search page always carries its hits, none included; other views leave them out.
    let request = InspectPageRequest::new(InspectView::Search {
        query: "nothing like it".to_owned(),
    });
    let page = serde_json::to_value(inspect(&session, &request).expect("search")).expect("json");
    assert_eq!(page["hits"], serde_json::json!([]), "{page}");
    let overview =
        inspect(&session, &InspectPageRequest::new(InspectView::Overview)).expect("overview");
    assert!(
        serde_json::to_value(overview)
            .expect("json")
            .get("hits")
            .is_none()
    );
    // entries --grep: text, and with the scope, tool-call arguments and thinking.
    let grep = |scope: SearchScope| -> Vec<String> {
        let filter = EntriesFilter {
            grep: vec!["git push origin".to_owned(), "i will".to_owned()],
            grep_scope: scope,
            ..EntriesFilter::default()
        };
        entries(&session, &filter)
            .expect("rows")
            .iter()
            .map(|row| row.id.clone().unwrap_or_default())
            .collect()
    };
    assert_eq!(grep(SearchScope::default()), Vec::<String>::new());
    let with_args = SearchScope {
        tool_args: true,
        ..SearchScope::default()
    };
    assert_eq!(grep(with_args), ["a1"]);
    let with_thinking = SearchScope {
        thinking: true,
        ..SearchScope::default()
    };
    assert_eq!(grep(with_thinking), ["a1"]);
}

/// `read` pages a long entry instead of cutting it; later pages carry the rest.
#[test]
fn read_pages_long_text() {
    let long: String = (0..3000).map(|n| format!("{n:05}\n")).collect();
    let lines = [user("u0", None, &long)];
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let session = parse(&jsonl(&refs));
    let mut cursor = None;
    let mut text = String::new();
    let mut offsets = Vec::new();
    loop {
        let request = InspectPageRequest {
            cursor: cursor.clone(),
            ..InspectPageRequest::new(InspectView::Read {
                entry: "u0".to_owned(),
                before: 0,
                after: 0,
            })
        };
        let page = inspect(&session, &request).expect("read");
        let read = page.read.expect("read result");
        offsets.push(read.entry.text_offset);
        text.push_str(read.entry.text.as_deref().unwrap_or(""));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(offsets, [0, 8000, 16000]);
    assert_eq!(text, long);
}

/// A fork's copied entries end where its own begin: the last one written before
/// the fork's header timestamp.
#[test]
fn a_fork_knows_where_its_copies_end() {
    let check = |header: &str, expected: Option<(usize, Option<&str>)>| {
        let text = format!(
            "{header}\n{}\n{}\n{}\n",
            user("a", None, "copied"),
            user("b", Some("a"), "copied"),
            other("label", "new", Some("b"), r#""targetId":"a","label":"x""#)
        );
        let copy = pi_retrospect_transcript::fork_copy(&parse(&text));
        assert_eq!(
            copy.map(|copy| (copy.n_entries, copy.last_entry_id)),
            expected.map(|(n, last)| (n, last.map(str::to_owned))),
            "{header}"
        );
    };
    // `user(..)` entries are stamped 00:00:01; `other(..)` 00:00:07.
    let fork = Header::new("f").parent_session("/s/p.jsonl");
    check(
        &fork
            .clone()
            .timestamp("2026-01-01T00:00:05.000Z")
            .to_string(),
        Some((2, Some("b"))),
    );
    check(
        &fork.timestamp("2026-01-01T00:00:00.000Z").to_string(),
        Some((0, None)),
    );
    check(
        &Header::new("f")
            .timestamp("2026-01-01T00:00:05.000Z")
            .to_string(),
        None,
    );
}
