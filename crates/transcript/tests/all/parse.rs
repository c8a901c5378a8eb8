//! Parsing and tree repair: every entry type, versions 1-3, and real-world damage reported as
//! warnings with line numbers.

use crate::common;

use common::{HEADER, assistant, describe, jsonl, other, parse, parse_bytes, tool_result, user};
use pi_retrospect_transcript::{EntryKind, Role, Transcript};

fn check(input: &str, expected: &str) {
    let session = parse(input);
    assert_eq!(describe(&session), expected, "input:\n{input}");
}

#[test]
fn builds_the_tree_and_repairs_damage() {
    let u1 = user("u1", None, "hi");
    let a1 = assistant("a1", Some("u1"), "hello", &[]);
    let u2 = user("u2", Some("a1"), "again");
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "linear",
            jsonl(&[&u1, &a1, &u2]),
            "roots=[u1] leaf=u2 branch=[u1,a1,u2] warnings=[]",
        ),
        (
            "branch: the leaf is the last entry appended",
            jsonl(&[&u1, &a1, &u2, &user("u3", Some("a1"), "alt")]),
            "roots=[u1] leaf=u3 branch=[u1,a1,u3] warnings=[]",
        ),
        (
            "malformed line orphans its child, kept as an extra root",
            jsonl(&[
                &u1,
                r#"{"type":"message","id":"bad1","parentId":"u1","#,
                &u2.replace("\"a1\"", "\"bad1\""),
            ]),
            "roots=[u1,u2] leaf=u2 branch=[u2] warnings=[malformed_line@3,missing_parent@4]",
        ),
        (
            "final line without newline and incomplete: a write in progress",
            format!(
                "{}{}",
                jsonl(&[&u1, &a1]),
                r#"{"type":"message","id":"u2","par"#
            ),
            "roots=[u1] leaf=a1 branch=[u1,a1] warnings=[partial_final_line@4]",
        ),
        (
            "final line without newline but complete JSON is kept",
            jsonl(&[&u1, &a1]).trim_end().to_owned(),
            "roots=[u1] leaf=a1 branch=[u1,a1] warnings=[missing_final_newline@3]",
        ),
        (
            "missing parent",
            jsonl(&[&u1, &user("u2", Some("nope"), "x")]),
            "roots=[u1,u2] leaf=u2 branch=[u2] warnings=[missing_parent@3]",
        ),
        (
            "an entry that is its own parent",
            jsonl(&[&u1, &user("u2", Some("u2"), "loop")]),
            "roots=[u1,u2] leaf=u2 branch=[u2] warnings=[cycle@3]",
        ),
        (
            "a two-entry cycle is cut at its first entry in the file",
            jsonl(&[&user("x", Some("y"), "x"), &user("y", Some("x"), "y")]),
            "roots=[x] leaf=y branch=[x,y] warnings=[cycle@2]",
        ),
        (
            "duplicate ids: the later entry wins lookups",
            jsonl(&[&u1, &user("u1", None, "again"), &a1]),
            "roots=[u1,u1] leaf=a1 branch=[u1,a1] warnings=[duplicate_id@3]",
        ),
        (
            "second session header",
            jsonl(&[&u1, HEADER, &a1]),
            "roots=[u1] leaf=a1 branch=[u1,a1] warnings=[extra_header@3]",
        ),
        (
            "not an object, no type, blank lines",
            jsonl(&[&u1, "[1,2]", r#"{"id":"x"}"#, "", "   ", &a1]),
            "roots=[u1] leaf=a1 branch=[u1,a1] warnings=[not_an_entry@3,not_an_entry@4]",
        ),
        (
            "no header",
            format!("{u1}\n{a1}\n"),
            "roots=[u1] leaf=a1 branch=[u1,a1] warnings=[missing_header@1]",
        ),
        (
            "empty file",
            String::new(),
            "roots=[] leaf= branch=[] warnings=[missing_header]",
        ),
        (
            "entry without id in a version 3 file",
            jsonl(&[
                &u1,
                r#"{"type":"label","parentId":"u1","targetId":"u1","label":"x"}"#,
            ]),
            "roots=[u1] leaf=line:3 branch=[u1,line:3] warnings=[missing_id@3]",
        ),
        (
            "unknown version is read as 3",
            format!(
                "{}\n{u1}\n",
                HEADER.replace("\"version\":3", "\"version\":9")
            ),
            "roots=[u1] leaf=u1 branch=[u1] warnings=[unknown_version@1]",
        ),
    ];
    for (name, input, expected) in cases {
        let session = parse(&input);
        assert_eq!(describe(&session), expected, "case {name}:\n{input}");
    }
}

#[test]
fn reads_bom_crlf_and_line_separators() {
    let u1 = user("u1", None, "a\u{2028}b\u{2029}c");
    let a1 = assistant("a1", Some("u1"), "ok", &[]);
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(jsonl(&[&u1, &a1]).replace('\n', "\r\n").as_bytes());
    let session = parse_bytes(&bytes);
    assert_eq!(
        describe(&session),
        "roots=[u1] leaf=a1 branch=[u1,a1] warnings=[byte_order_mark@1,crlf_line_endings@1]"
    );
    let value = session.decode(0).expect("decode");
    assert_eq!(value["message"]["content"], "a\u{2028}b\u{2029}c");
    assert_eq!(
        session.header().and_then(|header| header.id.as_deref()),
        Some("s1")
    );
}

#[test]
fn reads_a_multi_megabyte_line() {
    let big = "x".repeat(5 << 20);
    let input = jsonl(&[
        &user("u1", None, "hi"),
        &tool_result("t1", Some("u1"), "read", &big),
        &user("u2", Some("t1"), "next"),
    ]);
    check(&input, "roots=[u1] leaf=u2 branch=[u1,t1,u2] warnings=[]");
    let session = parse(&input);
    assert_eq!(session.entry(1).byte_len, session.entry(1).byte_len);
    let value = session.decode(1).expect("decode");
    assert_eq!(
        value["message"]["content"][0]["text"]
            .as_str()
            .map(str::len),
        Some(5 << 20)
    );
}

#[test]
fn malformed_line_warning_names_the_salvaged_parent() {
    let input = jsonl(&[
        &user("u1", None, "hi"),
        r#"{"type":"message","id":"gone1","parentId":"u1","message":{"role":"assist"#,
        &user("u2", Some("gone1"), "after"),
    ]);
    let session = parse(&input);
    let warning = &session.warnings()[1];
    assert!(
        warning.message.contains("gone1") && warning.message.contains("malformed line 3"),
        "{warning:?}"
    );
}

#[test]
fn decodes_every_entry_type() {
    let input = jsonl(&[
        r#"{"type":"message","id":"s0","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"system","content":"","sections":{"preamble":"You are"},"toolsAdded":[{"name":"read","description":"d","parameters":{}}],"timestamp":1}}"#,
        &user("u1", Some("s0"), "hi"),
        &assistant("a1", Some("u1"), "calling", &["bash", "read"]),
        &tool_result("t1", Some("a1"), "bash", "out"),
        r#"{"type":"message","id":"b1","parentId":"t1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"bashExecution","command":"ls","output":"a","exitCode":0,"cancelled":false,"truncated":false,"excludeFromContext":true,"timestamp":1}}"#,
        r#"{"type":"message","id":"c1","parentId":"b1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"custom","customType":"ext","content":"injected","display":true,"timestamp":1}}"#,
        r#"{"type":"message","id":"bs","parentId":"c1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"branchSummary","summary":"s","fromId":null,"timestamp":1}}"#,
        r#"{"type":"message","id":"cs","parentId":"bs","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"compactionSummary","summary":"s","tokensBefore":5,"timestamp":1}}"#,
        r#"{"type":"message","id":"wx","parentId":"cs","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"weird","timestamp":1}}"#,
        &other(
            "model_change",
            "m1",
            Some("wx"),
            r#""provider":"openai","modelId":"gpt-4o""#,
        ),
        &other(
            "thinking_level_change",
            "th",
            Some("m1"),
            r#""thinkingLevel":"high""#,
        ),
        &other(
            "usage",
            "us",
            Some("th"),
            r#""kind":"cache_warm","provider":"anthropic","model":"m","usage":{}"#,
        ),
        &other(
            "compaction",
            "cp",
            Some("us"),
            r#""summary":"sum","firstKeptEntryId":"u1","tokensBefore":9,"systemMessage":{"role":"system","content":"x","timestamp":1}"#,
        ),
        &other(
            "context_edit",
            "ce",
            Some("cp"),
            r#""targetId":"t1","replacement":null"#,
        ),
        &other(
            "branch_summary",
            "br",
            Some("ce"),
            r#""fromId":"a1","summary":"left""#,
        ),
        &other(
            "custom",
            "cu",
            Some("br"),
            r#""customType":"ext","data":{"n":1}"#,
        ),
        &other(
            "custom_message",
            "cm",
            Some("cu"),
            r#""customType":"ext","content":"ctx","display":false"#,
        ),
        &other(
            "label",
            "lb",
            Some("cm"),
            r#""targetId":"a1","label":"here""#,
        ),
        &other("session_info", "si", Some("lb"), r#""name":"My session""#),
        &other("future_type", "fu", Some("si"), r#""whatever":[1,{"a":2}]"#),
    ]);
    let session = parse(&input);
    assert_eq!(session.warnings(), &[]);
    let kinds: Vec<String> = session
        .entries()
        .iter()
        .map(|entry| match &entry.kind {
            EntryKind::Message(meta) => format!("message:{}", meta.role.as_str()),
            _ => entry.entry_type.to_owned(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "message:system",
            "message:user",
            "message:assistant",
            "message:toolResult",
            "message:bashExecution",
            "message:custom",
            "message:branchSummary",
            "message:compactionSummary",
            "message:weird",
            "model_change",
            "thinking_level_change",
            "usage",
            "compaction",
            "context_edit",
            "branch_summary",
            "custom",
            "custom_message",
            "label",
            "session_info",
            "future_type",
        ]
    );
    let assistant = session.entry(2).message().expect("message");
    assert_eq!(
        (
            assistant.shape.n_tool_calls,
            assistant.shape.n_thinking,
            assistant.shape.n_text
        ),
        (2, 1, 1)
    );
    assert_eq!(assistant.model, Some("claude-x"));
    assert!(
        session
            .entry(4)
            .message()
            .expect("bash")
            .exclude_from_context
    );
    assert_eq!(session.entry(8).role(), Some(Role::Unknown("weird")));
    assert!(matches!(session.entry(19).kind, EntryKind::Unknown));
    assert!(matches!(
        session.entry(12).kind,
        EntryKind::Compaction { first_kept_entry_id: Some(id), has_system_message: true, .. } if id == "u1"
    ));
    assert!(matches!(
        session.entry(13).kind,
        EntryKind::ContextEdit { omits: true, .. }
    ));
}

#[test]
fn reads_version_1_and_version_2_files() {
    // Version 1: no ids, linear, compaction by index (record 0 is the header).
    let v1 = concat!(
        r#"{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        "\n",
        r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"one","timestamp":1}}"#,
        "\n",
        r#"{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"two"}],"timestamp":2}}"#,
        "\n",
        r#"{"type":"message","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"three","timestamp":3}}"#,
        "\n",
        r#"{"type":"compaction","timestamp":"2025-01-01T00:00:04.000Z","summary":"sum","firstKeptEntryIndex":3,"tokensBefore":1}"#,
        "\n",
        r#"{"type":"message","timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"hookMessage","customType":"x","content":"h","display":true,"timestamp":5}}"#,
        "\n",
    );
    let session = parse(v1);
    assert_eq!(session.version(), 1);
    assert_eq!(
        describe(&session),
        "roots=[line:2] leaf=line:6 branch=[line:2,line:3,line:4,line:5,line:6] warnings=[version1_ids@1]"
    );
    let context = session.context();
    let lines: Vec<u64> = context
        .entries
        .iter()
        .map(|&idx| session.entry(idx).line_no)
        .collect();
    assert_eq!(
        lines,
        [5, 4, 6],
        "compaction first, then kept line 4, then the rest"
    );
    // `hookMessage` is only a legacy spelling of `custom` before version 3.
    assert_eq!(session.entry(4).role(), Some(Role::Custom));
    assert_eq!(session.find("line:3"), Some(1));

    let v2 = format!(
        "{}\n{}\n",
        HEADER.replace("\"version\":3", "\"version\":2"),
        r#"{"type":"message","id":"h1","parentId":null,"timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"hookMessage","customType":"x","content":"h","display":true,"timestamp":5}}"#
    );
    let session = parse(&v2);
    assert_eq!(session.entry(0).role(), Some(Role::Custom));
    let v3 = jsonl(&[
        r#"{"type":"message","id":"h1","parentId":null,"timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"hookMessage","timestamp":5}}"#,
    ]);
    assert_eq!(
        parse(&v3).entry(0).role(),
        Some(Role::Unknown("hookMessage"))
    );
}

#[test]
fn refuses_non_regular_files_without_blocking() {
    let dir = tempfile::tempdir().expect("temp dir");
    let error = Transcript::open(dir.path()).expect_err("a directory is not a session");
    assert!(error.to_string().contains("not a regular file"), "{error}");
    #[cfg(unix)]
    {
        let fifo = dir.path().join("fifo.jsonl");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("run mkfifo");
        assert!(status.success());
        let error = Transcript::open(&fifo).expect_err("a FIFO is not a session");
        assert!(error.to_string().contains("not a regular file"), "{error}");
    }
}

#[test]
fn reads_only_the_snapshot_of_a_growing_file() {
    let first = jsonl(&[&user("u1", None, "hi")]);
    let (_dir, path) = common::materialise(first.as_bytes());
    let snapshot = first.len() as u64;
    std::fs::write(
        &path,
        jsonl(&[&user("u1", None, "hi"), &user("u2", Some("u1"), "more")]),
    )
    .expect("grow");
    let session = Transcript::open_snapshot(&path, Some(snapshot)).expect("open");
    assert_eq!(
        describe(&session),
        "roots=[u1] leaf=u1 branch=[u1] warnings=[]"
    );
    assert_eq!(session.snapshot().bytes, snapshot);
    let error = Transcript::open_snapshot(&path, Some(1 << 40)).expect_err("past the end");
    assert!(error.to_string().contains("shrank"), "{error}");
}

use proptest::prelude::Strategy as _;

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    #[test]
    fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
        let session = Transcript::from_bytes(bytes);
        let _ = session.context();
        let _ = pi_retrospect_transcript::facts(&session);
        let _ = pi_retrospect_transcript::entry_tree(&session, true);
        let _ = pi_retrospect_transcript::active_branch_items(&session, Default::default());
    }

    #[test]
    fn never_panics_on_jsonish_lines(
        lines in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::prelude::Just(HEADER.to_owned()),
                "[a-c]{1,2}".prop_map(|id| user(&id, None, "x")),
                ("[a-c]{1,2}", "[a-c]{1,2}").prop_map(|(id, parent)| user(&id, Some(&parent), "y")),
                ("[a-c]{1,2}", "[a-c]{1,2}").prop_map(|(id, parent)| assistant(&id, Some(&parent), "z", &["bash"])),
                ("[a-c]{1,2}", "[a-c]{1,2}").prop_map(|(id, parent)| tool_result(&id, Some(&parent), "bash", "o")),
                ("[a-c]{1,2}", "[a-c]{1,2}", "[a-c]{1,2}").prop_map(|(id, parent, kept)| other("compaction", &id, Some(&parent), &format!(r#""summary":"s","firstKeptEntryId":"{kept}""#))),
                ("[a-c]{1,2}", "[a-c]{1,2}").prop_map(|(id, target)| other("context_edit", &id, None, &format!(r#""targetId":"{target}","replacement":null"#))),
                "\\PC{0,20}",
            ],
            0..12,
        )
    ) {
        let text = lines.join("\n");
        let session = Transcript::from_bytes(text.into_bytes());
        let context = session.context();
        proptest::prop_assert!(context.branch.len() <= session.entries().len());
        for request in [
            pi_retrospect_transcript::InspectView::Overview,
            pi_retrospect_transcript::InspectView::Search { query: "y".to_owned() },
            pi_retrospect_transcript::InspectView::Ancestors { entry: None },
        ] {
            let _ = pi_retrospect_transcript::inspect(&session, &pi_retrospect_transcript::InspectPageRequest::new(request));
        }
    }
}
