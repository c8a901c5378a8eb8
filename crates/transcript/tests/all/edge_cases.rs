//! Edge cases: what JavaScript's parser reads that a strict one refuses,
//! token estimates outside ASCII, `line:N` handles in the entries filters, cursors bound to
//! their file, and context estimates that agree with the context itself.

use crate::common;

use common::{assistant, jsonl, other, parse, tool_result, user};
use pi_retrospect_transcript::{
    DisplayItem, EntriesFilter, InspectPageRequest, InspectView, ShowOptions, Transcript,
    active_branch_items, entries, inspect,
};

#[test]
fn a_lone_surrogate_escape_decodes_to_a_replacement_character() {
    // JavaScript writes `\ud83d` alone when a string is cut between the halves of an emoji,
    // and `JSON.parse` reads it back; the entry must keep its text.
    let session = parse(&jsonl(&[
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"cut \ud83d here, pair \ud83d\ude00 kept, escaped \\ud800 text"}}"#,
    ]));
    let rows = entries(&session, &EntriesFilter::default()).expect("entries");
    assert_eq!(
        rows[0].text.as_deref(),
        Some("cut \u{FFFD} here, pair \u{1F600} kept, escaped \\ud800 text")
    );
    assert!(session.warnings().is_empty(), "{:?}", session.warnings());
}

/// A number too large for a float (`1e400`), which `JSON.parse`
/// reads as Infinity, anywhere on an entry leaves the entry's text whole in `entries` and
/// `show`.
#[test]
fn a_number_too_large_for_a_float_keeps_the_entry_text() {
    let session = parse(&jsonl(&[
        r#"{"type":"message","id":"n1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"with 1e400"},"n":1e400}"#,
        r#"{"type":"message","id":"n2","parentId":"n1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"inside too"}],"timestamp":-1e400}}"#,
    ]));
    let rows = entries(&session, &EntriesFilter::default()).expect("entries");
    let texts: Vec<Option<&str>> = rows.iter().map(|row| row.text.as_deref()).collect();
    assert_eq!(texts, [Some("with 1e400"), Some("inside too")]);
    let items = active_branch_items(&session, ShowOptions::default()).expect("items");
    let texts: Vec<&str> = items
        .iter()
        .filter_map(|item| match item {
            DisplayItem::User { text, .. } | DisplayItem::Assistant { text, .. } => {
                Some(text.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["with 1e400", "inside too"]);
    assert!(session.warnings().is_empty(), "{:?}", session.warnings());
}

#[test]
fn token_estimates_count_characters_not_bytes() {
    let cjk = "漢".repeat(400);
    let ascii = "a".repeat(400);
    let session = parse(&jsonl(&[
        &user("u1", None, &cjk),
        &user("u2", Some("u1"), &ascii),
    ]));
    let cjk_tokens = session.entry(0).estimated_tokens();
    let ascii_tokens = session.entry(1).estimated_tokens();
    assert_eq!(
        cjk_tokens, ascii_tokens,
        "same number of characters, same estimate"
    );
    assert!(session.entry(0).byte_len > 2 * session.entry(1).byte_len);
}

#[test]
fn entries_filters_accept_line_handles() {
    let version_1 = "{\"type\":\"session\",\"id\":\"old\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n\
        {\"type\":\"message\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"one\"}}\n\
        {\"type\":\"message\",\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"two\"}]}}\n";
    for session in [
        parse(version_1),
        parse(&jsonl(&[
            &user("u1", None, "one"),
            &assistant("a1", Some("u1"), "two", &[]),
        ])),
    ] {
        let by_line = |id: Option<&str>, parent: Option<&str>| -> Vec<u64> {
            entries(
                &session,
                &EntriesFilter {
                    id: id.map(str::to_owned),
                    parent_id: parent.map(str::to_owned),
                    ..EntriesFilter::default()
                },
            )
            .expect("entries")
            .iter()
            .map(|row| row.line_no)
            .collect()
        };
        assert_eq!(by_line(Some("line:3"), None), [3]);
        assert_eq!(by_line(None, Some("line:2")), [3]);
        assert_eq!(by_line(Some("line:9"), None), Vec::<u64>::new());
    }
}

fn overview(session: &Transcript, cursor: Option<String>) -> Result<serde_json::Value, String> {
    let request = InspectPageRequest {
        view: InspectView::Overview,
        limit: Some(1),
        cursor,
        ..InspectPageRequest::new(InspectView::Overview)
    };
    inspect(session, &request)
        .map(|page| serde_json::to_value(page).expect("json"))
        .map_err(|error| error.to_string())
}

#[test]
fn a_cursor_only_continues_its_own_file() {
    let turns = |prefix: &str| {
        let mut lines = Vec::new();
        let mut parent: Option<String> = None;
        for n in 0..3 {
            let user_id = format!("{prefix}u{n}");
            let assistant_id = format!("{prefix}a{n}");
            lines.push(user(&user_id, parent.as_deref(), "question"));
            lines.push(assistant(&assistant_id, Some(&user_id), "answer", &[]));
            parent = Some(assistant_id);
        }
        lines
    };
    let first_lines = turns("x");
    let second_lines = turns("y");
    let first = parse(&jsonl(
        &first_lines.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    let second = parse(&jsonl(
        &second_lines.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    let page = overview(&first, None).expect("first page");
    let cursor = page["nextCursor"]
        .as_str()
        .expect("a next cursor")
        .to_owned();
    assert!(overview(&first, Some(cursor.clone())).is_ok());
    let error = overview(&second, Some(cursor)).expect_err("another file of the same size");
    assert!(error.contains("different file"), "{error}");
}

#[test]
fn checkpoint_context_estimates_agree_with_the_context() {
    // A compaction keeping from a1 (its system-free kept range), then a compaction whose
    // first kept entry is on another branch (nothing kept).
    let session = parse(&jsonl(&[
        &user("u1", None, &"q".repeat(100)),
        &assistant("a1", Some("u1"), &"r".repeat(200), &["read"]),
        &tool_result("t1", Some("a1"), "read", &"o".repeat(300)),
        &other(
            "compaction",
            "c1",
            Some("t1"),
            r#""summary":"sum","firstKeptEntryId":"a1","tokensBefore":10"#,
        ),
        &user("u2", Some("c1"), &"w".repeat(50)),
        &assistant("a2", Some("u2"), "done", &[]),
        &user("u9", None, "side branch"),
        &other(
            "compaction",
            "c2",
            Some("a2"),
            r#""summary":"again","firstKeptEntryId":"u9","tokensBefore":10"#,
        ),
        &user("u3", Some("c2"), "after"),
        &assistant("a3", Some("u3"), "ok", &[]),
    ]));
    let request = InspectPageRequest {
        view: InspectView::Overview,
        limit: Some(50),
        ..InspectPageRequest::new(InspectView::Overview)
    };
    let page = inspect(&session, &request).expect("overview");
    assert!(page.checkpoints.len() >= 3);
    for checkpoint in &page.checkpoints {
        let idx = session
            .entries()
            .iter()
            .position(|entry| entry.id == Some(checkpoint.entry_id.as_str()))
            .expect("checkpoint entry");
        assert_eq!(
            checkpoint.estimated_context_tokens,
            session.context_at(idx).estimated_tokens,
            "checkpoint {}",
            checkpoint.entry_id
        );
    }
}
