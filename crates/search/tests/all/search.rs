//! Searching one session file: every kind of text, escapes, Unicode, case and word rules,
//! filters, what never matches, the active-branch flag, snippets and warnings.

use crate::common;

use common::{
    describe_all, entry, file, jsonl, jsonl_with, materialise, message, search, searcher, user,
};
use pi_retrospect_search::{
    CaseMode, FieldKind, FieldKinds, Mode, Pattern, Query, Scope, Searcher,
};
use pi_retrospect_testkit::Header;

/// One session with every kind of text, each holding `needle`, chained into one branch.
fn every_kind() -> String {
    let lines = [
        message(
            "e1",
            None,
            r#"{"role":"system","content":"needle sys","sections":{"preamble":"needle pre"},"toolsAdded":[{"name":"read","description":"reads"}]}"#,
        ),
        user("e2", Some("e1"), "needle user"),
        message(
            "e3",
            Some("e2"),
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"needle think","thinkingSignature":"sig"},{"type":"text","text":"needle said"},{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"needle.rs"}}],"provider":"p1","model":"m1"}"#,
        ),
        message(
            "e4",
            Some("e3"),
            r#"{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"needle out"}],"isError":false}"#,
        ),
        message(
            "e5",
            Some("e4"),
            r#"{"role":"bashExecution","command":"grep needle","output":"needle found","exitCode":0}"#,
        ),
        entry(
            "e6",
            Some("e5"),
            r#""type":"compaction","summary":"needle compact","firstKeptEntryId":"e5","tokensBefore":9,"systemMessage":{"role":"system","content":"needle ck"}"#,
        ),
        entry(
            "e7",
            Some("e6"),
            r#""type":"branch_summary","fromId":"e5","summary":"needle branch""#,
        ),
        entry(
            "e8",
            Some("e7"),
            r#""type":"custom_message","customType":"ext","content":"needle ext","display":true"#,
        ),
        entry(
            "e9",
            Some("e8"),
            r#""type":"label","targetId":"e2","label":"needle-label""#,
        ),
        entry(
            "e10",
            Some("e9"),
            r#""type":"session_info","name":"needle name""#,
        ),
        message(
            "e11",
            Some("e10"),
            r#"{"role":"custom","customType":"x","content":"needle custom"}"#,
        ),
        message(
            "e12",
            Some("e11"),
            r#"{"role":"compactionSummary","summary":"needle cs"}"#,
        ),
        entry(
            "e13",
            Some("e12"),
            r#""type":"custom","customType":"ext","data":{"note":"needle state"}"#,
        ),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    jsonl(&lines)
}

/// Checks the hits of `pattern` over `kinds` in `contents`.
fn check(contents: &str, pattern: Pattern, scope: Scope, expected: &[&str]) {
    let searcher = searcher(pattern.clone(), scope.clone());
    let result = search(&searcher, contents.as_bytes());
    assert_eq!(describe_all(&result), expected, "{pattern:?} {scope:?}");
    assert_eq!(result.n_hits, expected.len() as u64);
}

fn kinds(kinds: FieldKinds) -> Scope {
    Scope {
        kinds,
        ..Scope::default()
    }
}

#[test]
fn every_kind_is_found_in_its_field() {
    let session = every_kind();
    check(
        &session,
        Pattern::literal("needle"),
        kinds(FieldKinds::all()),
        &[
            "2:system:system*:[needle] sys",
            "2:system:system*:[needle] pre",
            "3:user:user*:[needle] user",
            "4:thinking:assistant*:[needle] think",
            "4:assistant:assistant*:[needle] said",
            "4:toolArgs:assistant@read*:[needle].rs",
            "5:toolResult:toolResult@read*:[needle] out",
            "6:bashCommand:bashExecution*:grep [needle]",
            "6:bashOutput:bashExecution*:[needle] found",
            "7:compactionSummary*:[needle] compact",
            "7:system*:[needle] ck",
            "8:branchSummary*:[needle] branch",
            "9:custom*:[needle] ext",
            "10:label*:[needle]-label",
            "11:sessionName*:[needle] name",
            "12:custom:custom*:[needle] custom",
            "13:compactionSummary:compactionSummary*:[needle] cs",
        ],
    );
    check(
        &session,
        Pattern::literal("needle"),
        Scope::default(),
        &[
            "3:user:user*:[needle] user",
            "4:assistant:assistant*:[needle] said",
            "6:bashCommand:bashExecution*:grep [needle]",
            "6:bashOutput:bashExecution*:[needle] found",
            "7:compactionSummary*:[needle] compact",
            "8:branchSummary*:[needle] branch",
            "9:custom*:[needle] ext",
            "10:label*:[needle]-label",
            "11:sessionName*:[needle] name",
            "12:custom:custom*:[needle] custom",
            "13:compactionSummary:compactionSummary*:[needle] cs",
        ],
    );
    for (kind, line) in [
        (FieldKind::Thinking, "4:thinking:assistant*:[needle] think"),
        (
            FieldKind::ToolArgs,
            "4:toolArgs:assistant@read*:[needle].rs",
        ),
        (
            FieldKind::ToolResult,
            "5:toolResult:toolResult@read*:[needle] out",
        ),
        (FieldKind::Label, "10:label*:[needle]-label"),
    ] {
        check(
            &session,
            Pattern::literal("needle"),
            kinds(FieldKinds::NONE.with(kind)),
            &[line],
        );
    }
}

#[test]
fn long_lines_give_the_same_hits() {
    // Lines of 4 KiB and more are peeked at (type and role) before they are decoded: the
    // peek may skip only lines that hold no searched text.
    let padding = format!(r#","pad":"{}"}}"#, "x".repeat(5000));
    let session = every_kind();
    let long: String = session
        .lines()
        .map(|line| format!("{}{padding}\n", &line[..line.len() - 1]))
        .collect();
    for scope in [
        Scope::default(),
        kinds(FieldKinds::all()),
        kinds(FieldKinds::NONE),
    ] {
        let searcher = searcher(Pattern::literal("needle"), scope.clone());
        let short = describe_all(&search(&searcher, session.as_bytes()));
        assert_eq!(
            describe_all(&search(&searcher, long.as_bytes())),
            short,
            "{scope:?}"
        );
    }
}

#[test]
fn field_names_ids_image_data_and_signatures_never_match() {
    let image = message(
        "e14",
        Some("e13"),
        r#"{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","data":"bmVlZGxlaW1hZ2U=","mimeType":"image/png"}]}"#,
    );
    let mut session = every_kind();
    session.push_str(&image);
    session.push('\n');
    for pattern in [
        "thinkingSignature",
        "sig",
        "toolCallId",
        "call_1",
        "mimeType",
        "image/png",
        "bmVlZGxlaW1hZ2U",
        "firstKeptEntryId",
        "customType",
        "needle state",
        "reads",
        "preamble",
        "2026-01-01",
        "e13",
        "p1",
        "m1",
        "isError",
        "session",
        "/p",
    ] {
        check(
            &session,
            Pattern::literal(pattern),
            kinds(FieldKinds::all()),
            &[],
        );
    }
}

#[test]
fn matches_across_json_escapes_are_found() {
    let texts = [
        "say \"hi\" to C:\\dir",
        "first line\nsecond\tcell",
        "\u{1b}[31mred\u{1b}[0m alert",
        "naïve café 日本語 😀 end",
        "a/b path",
    ];
    let lines: Vec<String> = texts
        .iter()
        .enumerate()
        .map(|(idx, text)| user(&format!("u{idx}"), None, text))
        .collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let session = jsonl(&lines);
    for (pattern, expected) in [
        (
            Pattern::literal("\"hi\" to C:\\d"),
            &["2:user:user:say [\"hi\" to C:\\d]ir"][..],
        ),
        (
            Pattern::literal("line\nsec"),
            &["3:user:user:first [line sec]ond cell"],
        ),
        (
            Pattern::literal("second\tc"),
            &["3:user:user:first line [second c]ell"],
        ),
        (
            Pattern::regex(r"^second"),
            &["3:user:user:first line [second] cell"],
        ),
        (
            Pattern::regex(r"line\s+second"),
            &["3:user:user:first [line second] cell"],
        ),
        (Pattern::literal("line second"), &[]),
        (
            Pattern::literal("\u{1b}[31mred"),
            &["4:user:user:[red] alert"],
        ),
        (
            Pattern::literal("café 日本"),
            &["5:user:user:naïve [café 日本]語 😀 end"],
        ),
        (
            Pattern::literal("😀"),
            &["5:user:user:naïve café 日本語 [😀] end"],
        ),
        (
            Pattern::regex(r"日.語"),
            &["5:user:user:naïve café [日本語] 😀 end"],
        ),
        (Pattern::literal("a/b"), &["6:user:user*:[a/b] path"]),
        (
            Pattern::literal("\\"),
            &["2:user:user:say \"hi\" to C:[\\]dir"],
        ),
    ] {
        check(&session, pattern, Scope::default(), expected);
    }
}

#[test]
fn escapes_other_writers_use_are_decoded_before_matching() {
    // What a writer other than Pi may store: `\u` escapes for plain characters, `\/`, a
    // lone surrogate, and a byte that is not UTF-8.
    let mut raw = jsonl(&[
        r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"caf\u00e9 \u0041BC a\/b \u006eeedle"}}"#,
        r#"{"type":"message","id":"b","parentId":"a","message":{"role":"user","content":"cut \ud83d here"}}"#,
    ])
    .into_bytes();
    raw.extend_from_slice(
        b"{\"type\":\"message\",\"id\":\"c\",\"parentId\":\"b\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff byte\"}}\n",
    );
    for (pattern, expected) in [
        ("café", "2:user:user*:[café] ABC a/b needle"),
        ("ABC", "2:user:user*:café [ABC] a/b needle"),
        ("a/b", "2:user:user*:café ABC [a/b] needle"),
        ("needle", "2:user:user*:café ABC a/b [needle]"),
        ("cut \u{FFFD}", "3:user:user*:[cut \u{FFFD}] here"),
        ("bad \u{FFFD} byte", "4:user:user*:[bad \u{FFFD} byte]"),
    ] {
        let searcher = searcher(Pattern::literal(pattern), Scope::default());
        let result = search(&searcher, &raw);
        assert_eq!(describe_all(&result), [expected], "{pattern}");
    }
}

#[test]
fn case_rules_and_whole_words() {
    let session = jsonl(&[
        &user("a", None, "Error: disk full"),
        &user("b", Some("a"), "an error occurred; errors pile up"),
        &user("c", Some("b"), "STRASSE und Straße, Émile"),
    ]);
    let smart = |text: &str| Pattern::literal(text).with_case(CaseMode::Smart);
    for (pattern, expected) in [
        (
            Pattern::literal("error").with_case(CaseMode::Sensitive),
            &["3:user:user*:an [error] occurred; errors pile up"][..],
        ),
        // Smart case is the default.
        (
            Pattern::literal("error"),
            &[
                "2:user:user*:[Error]: disk full",
                "3:user:user*:an [error] occurred; errors pile up",
            ],
        ),
        (
            Pattern::literal("error").with_case(CaseMode::Insensitive),
            &[
                "2:user:user*:[Error]: disk full",
                "3:user:user*:an [error] occurred; errors pile up",
            ],
        ),
        (
            smart("error"),
            &[
                "2:user:user*:[Error]: disk full",
                "3:user:user*:an [error] occurred; errors pile up",
            ],
        ),
        (smart("Error"), &["2:user:user*:[Error]: disk full"]),
        (
            smart("émile"),
            &["4:user:user*:STRASSE und Straße, [Émile]"],
        ),
        (
            smart("straße"),
            &["4:user:user*:STRASSE und [Straße], Émile"],
        ),
        (
            Pattern::literal("errors").whole_word(),
            &["3:user:user*:an error occurred; [errors] pile up"],
        ),
        (Pattern::literal("rror").whole_word(), &[]),
        (
            Pattern::literal("error")
                .with_case(CaseMode::Sensitive)
                .whole_word(),
            &["3:user:user*:an [error] occurred; errors pile up"],
        ),
        (
            Pattern::regex(r"err\w+").with_case(CaseMode::Insensitive),
            &[
                "2:user:user*:[Error]: disk full",
                "3:user:user*:an [error] occurred; errors pile up",
            ],
        ),
    ] {
        check(&session, pattern, Scope::default(), expected);
    }
}

#[test]
fn roles_tools_and_models_narrow_the_search() {
    let session = jsonl(&[
        &user("u1", None, "find the needle"),
        &message(
            "a1",
            Some("u1"),
            r#"{"role":"assistant","content":[{"type":"text","text":"needle by m1"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"needle.txt"}},{"type":"toolCall","id":"c2","name":"bash","arguments":{"command":"grep needle"}}],"provider":"p1","model":"m1"}"#,
        ),
        &message(
            "r1",
            Some("a1"),
            r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"needle in file"}]}"#,
        ),
        &message(
            "r2",
            Some("r1"),
            r#"{"role":"toolResult","toolCallId":"c2","toolName":"bash","content":[{"type":"text","text":"needle in output"}]}"#,
        ),
        &message(
            "a2",
            Some("r2"),
            r#"{"role":"assistant","content":[{"type":"text","text":"needle by m2"}],"provider":"p2","model":"m2"}"#,
        ),
    ]);
    let scope = |roles: &[&str], tools: &[&str], models: &[&str]| Scope {
        roles: roles.iter().map(|name| (*name).to_owned()).collect(),
        tools: tools.iter().map(|name| (*name).to_owned()).collect(),
        models: models.iter().map(|name| (*name).to_owned()).collect(),
        ..Scope::default()
    };
    let needle = Pattern::literal("needle");
    for (scope, expected) in [
        (
            scope(&[], &[], &[]),
            &[
                "2:user:user*:find the [needle]",
                "3:assistant:assistant*:[needle] by m1",
                "6:assistant:assistant*:[needle] by m2",
            ][..],
        ),
        (
            scope(&["user"], &[], &[]),
            &["2:user:user*:find the [needle]"],
        ),
        (
            scope(&["toolResult"], &[], &[]),
            &[
                "4:toolResult:toolResult@read*:[needle] in file",
                "5:toolResult:toolResult@bash*:[needle] in output",
            ],
        ),
        (
            scope(&[], &["bash"], &[]),
            &[
                "3:toolArgs:assistant@bash*:grep [needle]",
                "5:toolResult:toolResult@bash*:[needle] in output",
            ],
        ),
        (
            scope(&["assistant"], &["read"], &[]),
            &["3:toolArgs:assistant@read*:[needle].txt"],
        ),
        (
            scope(&[], &[], &["m2"]),
            &["6:assistant:assistant*:[needle] by m2"],
        ),
        (
            scope(&[], &[], &["p1/m1"]),
            &["3:assistant:assistant*:[needle] by m1"],
        ),
        (scope(&[], &[], &["p2/m1"]), &[]),
        (scope(&["user"], &[], &["m1"]), &[]),
    ] {
        check(&session, needle.clone(), scope, expected);
    }
}

#[test]
fn hits_report_the_entry_and_the_model() {
    let session = jsonl(&[&message(
        "a1",
        None,
        r#"{"role":"assistant","content":[{"type":"text","text":"needle needle and needle"}],"provider":"p1","model":"m1"}"#,
    )]);
    let searcher = searcher(Pattern::literal("needle"), Scope::default());
    let result = search(&searcher, session.as_bytes());
    let hit = &result.hits[0];
    assert_eq!(hit.entry_id.as_deref(), Some("a1"));
    assert_eq!(hit.timestamp.as_deref(), Some("2026-01-01T00:00:01.000Z"));
    assert_eq!(hit.entry_type, "message");
    assert_eq!(hit.model.as_deref(), Some("m1"));
    assert_eq!(hit.n_matches, 3);
    assert_eq!(hit.depth, 0);
    let json = serde_json::to_value(hit).expect("serialise");
    let mut keys: Vec<&str> = json
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "depth",
            "entryId",
            "entryType",
            "field",
            "isOnActiveBranch",
            "lineNo",
            "matchRange",
            "model",
            "nMatches",
            "path",
            "role",
            "snippet",
            "timestamp",
            "toolName"
        ]
    );
}

#[test]
fn the_active_branch_flag_follows_the_entry_tree() {
    // The committed tree session written by the real Pi: approach A was abandoned, and the
    // branch summary and approach B are on the active branch.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/pi-real/sessions/--tmp-pi-real-fixture-home-user-project--/2026-11-30T07-00-59-489Z_01a22b41-c1e1-73ac-b3e0-09602166f4c8.jsonl"
    );
    let searcher = searcher(
        Pattern::literal("approach").with_case(CaseMode::Insensitive),
        Scope::default(),
    );
    let result = searcher.search_file(&file(std::path::Path::new(path)), Mode::Hits, None);
    let flags: Vec<(String, bool)> = result
        .hits
        .iter()
        .map(|hit| {
            (
                hit.entry_id.clone().unwrap_or_default(),
                hit.is_on_active_branch,
            )
        })
        .collect();
    let expected = [
        ("fda52c88", false),
        ("05e0be47", false),
        ("474589f5", true),
        ("843f2b6a", true),
        ("e46c151b", true),
        ("046fe6a4", true),
        ("12a50b94", true),
    ];
    let expected: Vec<(String, bool)> = expected
        .iter()
        .map(|(id, flag)| ((*id).to_owned(), *flag))
        .collect();
    assert_eq!(flags, expected);
    assert!(result.warnings.is_empty(), "{:?}", result.warnings);
}

#[test]
fn old_formats_crlf_and_a_byte_order_mark() {
    // Version 2: `hookMessage` is `custom`. Version 1: no ids, one linear branch.
    let v2 = jsonl_with(
        &Header::new("s").version(Some(2)).to_string(),
        &[&message(
            "h",
            None,
            r#"{"role":"hookMessage","content":"needle hook"}"#,
        )],
    );
    check(
        &v2,
        Pattern::literal("needle"),
        Scope::default(),
        &["2:custom:custom*:[needle] hook"],
    );
    let v1 = jsonl_with(
        &Header::new("s").version(None).to_string(),
        &[
            r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"needle one"}}"#,
            r#"{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"hookMessage","content":"needle two"}}"#,
        ],
    );
    check(
        &v1,
        Pattern::literal("needle"),
        Scope::default(),
        &["2:user:user*:[needle] one", "3:custom:custom*:[needle] two"],
    );
    let searcher = searcher(Pattern::literal("needle"), Scope::default());
    assert_eq!(search(&searcher, v1.as_bytes()).hits[0].entry_id, None);

    let crlf = format!(
        "\u{feff}{}",
        jsonl(&[&user("a", None, "needle crlf")]).replace('\n', "\r\n")
    );
    check(
        &crlf,
        Pattern::literal("needle"),
        Scope::default(),
        &["2:user:user*:[needle] crlf"],
    );
    check(
        &crlf,
        Pattern::regex("crlf$"),
        Scope::default(),
        &["2:user:user*:needle [crlf]"],
    );
}

#[test]
fn snippets_have_settable_context() {
    let long = format!("{} needle {}", "a".repeat(100), "b".repeat(100));
    let session = jsonl(&[&user("a", None, &long)]);
    for (context, expected) in [
        (3, "2:user:user*:…aa [needle] bb…"),
        (0, "2:user:user*:…[needle]…"),
        (
            200,
            &*format!(
                "2:user:user*:{} [needle] {}",
                "a".repeat(100),
                "b".repeat(100)
            ),
        ),
    ] {
        let mut query = Query::new(Pattern::literal("needle"));
        query.context_chars = context;
        let searcher = Searcher::new(&query).expect("compiles");
        let result = search(&searcher, session.as_bytes());
        assert_eq!(describe_all(&result), [expected], "context {context}");
    }
}

#[test]
fn damaged_lines_that_could_match_are_warnings() {
    let contents = format!(
        "{}{}\n{}\n{}\n{}",
        jsonl(&[]),
        r#"{"type":"message","id":"a","message":{"role":"user","content":"needle cut"#,
        r#"{"type":"message","id":"b","message":{"role":"user","content":"no match here"#,
        user("c", None, "needle fine"),
        r#"{"type":"message","id":"d","message":{"role":"user","content":"needle being wri"#,
    );
    let searcher = searcher(Pattern::literal("needle"), Scope::default());
    let result = search(&searcher, contents.as_bytes());
    // The partial final line is no entry, so the entry on line 4 is the leaf.
    assert_eq!(describe_all(&result), ["4:user:user*:[needle] fine"]);
    let warnings: Vec<(Option<u64>, &str)> = result
        .warnings
        .iter()
        .map(|warning| (warning.line_no, warning.message.as_str()))
        .collect();
    assert_eq!(
        warnings,
        [
            (
                Some(2),
                "line 2 is not valid JSON; a match in it was not checked"
            ),
            (
                Some(5),
                "the final line 5 has no newline and is not valid JSON (probably being written); a match in it was not checked"
            ),
        ]
    );
}

#[test]
fn files_that_cannot_be_read_are_warnings() {
    let (dir, path) = materialise(
        "real.jsonl",
        jsonl(&[&user("a", None, "needle")]).as_bytes(),
    );
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&path, &link).expect("symlink");
    let fifo = dir.path().join("fifo.jsonl");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    let searcher = searcher(Pattern::literal("needle"), Scope::default());
    for (target, reason) in [
        (dir.path().join("missing.jsonl"), "cannot open: "),
        (link, "cannot open: is a symbolic link (not followed)"),
        (fifo, "cannot open: is a FIFO, not a regular file"),
        (
            dir.path().to_owned(),
            "cannot open: is a directory, not a regular file",
        ),
    ] {
        let result = searcher.search_file(&file(&target), Mode::Hits, None);
        assert_eq!(result.hits, []);
        assert_eq!(result.warnings.len(), 1, "{target:?}");
        let warning = &result.warnings[0];
        assert_eq!(warning.path, target.to_str().expect("utf-8"));
        assert!(warning.message.starts_with(reason), "{}", warning.message);
    }
}

#[test]
fn limits_stop_a_file_early_and_modes_count_alike() {
    let lines: Vec<String> = (0..10)
        .map(|idx| user(&format!("u{idx}"), None, "needle"))
        .collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let session = jsonl(&lines);
    let (_dir, path) = materialise("s.jsonl", session.as_bytes());
    let searcher = searcher(Pattern::literal("needle"), Scope::default());
    let target = file(&path);
    for (mode, max_hits, n_hits, n_listed) in [
        (Mode::Hits, None, 10, 10),
        (Mode::Hits, Some(3), 3, 3),
        (Mode::Count, None, 10, 0),
        (Mode::Count, Some(4), 4, 0),
        (Mode::FilesWithMatches, None, 1, 0),
    ] {
        let result = searcher.search_file(&target, mode, max_hits);
        assert_eq!(
            (result.n_hits, result.hits.len()),
            (n_hits, n_listed),
            "{mode:?} {max_hits:?}"
        );
    }
}

/// A long literal (a pasted stack trace) is searched, not refused for its compiled size;
/// a regex of the same size still is, and the refusal quotes the pattern cut short.
#[test]
fn a_long_literal_is_searched_and_a_huge_regex_refused_briefly() {
    let text: String = (0..30_000)
        .map(|idx| char::from(b'a' + (idx * 7 % 26) as u8))
        .collect();
    let contents = common::jsonl(&[&common::user("a", None, &format!("x{text}y"))]);
    let searcher = common::searcher(
        pi_retrospect_search::Pattern::literal(text.clone()),
        pi_retrospect_search::Scope::default(),
    );
    assert!(searcher.has_prefilter());
    let file = pi_retrospect_search::SearchFile {
        path: "s.jsonl".to_owned(),
        depth: 0,
    };
    let result = searcher.search_bytes(
        &file,
        contents.as_bytes(),
        pi_retrospect_search::Mode::Count,
        None,
    );
    assert_eq!(result.n_hits, 1);
    let mut query = pi_retrospect_search::Query::new(pi_retrospect_search::Pattern::regex(
        format!("{text}[a-z]{{0,3000}}[a-z]{{0,3000}}"),
    ));
    query.scope = pi_retrospect_search::Scope::default();
    let error = pi_retrospect_search::Searcher::new(&query)
        .expect_err("too large")
        .to_string();
    assert!(error.contains("size limit"), "{error}");
    assert!(error.len() < 1_000, "{}", error.len());
}
