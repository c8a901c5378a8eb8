//! The failure scan over session files written the way Pi 1.6 writes them: every kind, a
//! fork that copies a failure, a subagent run's failure, a failure on an abandoned branch;
//! and the raw-byte recognition held to decoding every line.

use std::path::Path;

use pi_retrospect_failures::{
    FailureKind, GroupBy, Grouper, MAX_HELD_ROWS, ScanFile, ScanOptions, decoded_failure_kind,
    group, may_record_failure, scan, scan_one, scan_one_folded, scan_one_held, scan_one_streamed,
};
use pi_retrospect_testkit::{Block, Entry, Header, Message, write_session_file};
use proptest::prelude::*;

/// The header of the session [`body`] belongs to.
fn header() -> Header {
    Header::new("01a22de2-540d-7602-8b63-cd7f53f64b36")
        .timestamp("2026-11-30T19:15:37.102Z")
        .cwd("/home/user/project")
}

/// The header of a fork of the session at `parent`.
fn fork_header(parent: &str) -> Header {
    Header::new("01a22de2-6000-7602-8b63-cd7f53f64b36")
        .timestamp("2026-11-30T20:00:00.000Z")
        .cwd("/home/user/project")
        .parent_session(parent)
}

/// The body of a session with every kind of failure, in the shapes Pi 1.6 writes (taken from
/// `fixtures/pi-real`), and a branch that was left: `b1` and its failed result hang off `a1`
/// beside the active `a2`.
fn body() -> Vec<String> {
    [
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-11-30T19:15:37.110Z","message":{"role":"user","content":[{"type":"text","text":"Check the config"}],"timestamp":1796066137110}}"#,
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-11-30T19:15:37.139Z","message":{"role":"assistant","content":[{"type":"text","text":"Let me check."},{"type":"toolCall","id":"call_read","name":"read","arguments":{"path":"config.toml"}},{"type":"toolCall","id":"call_bash","name":"bash","arguments":{"command":"cat config.toml && echo read-ok"}}],"api":"faux","provider":"faux","model":"faux-reasoner","usage":{"input":0,"output":26,"cacheRead":0,"cacheWrite":0,"totalTokens":26,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1796066137109}}"#,
        r#"{"type":"message","id":"t1","parentId":"a1","timestamp":"2026-11-30T19:15:37.173Z","message":{"role":"toolResult","toolCallId":"call_read","toolName":"read","content":[{"type":"text","text":"ENOENT: no such file or directory, access '/home/user/project/config.toml'"}],"details":{},"isError":true,"timestamp":1796066137173}}"#,
        r#"{"type":"message","id":"t2","parentId":"t1","timestamp":"2026-11-30T19:15:37.174Z","message":{"role":"toolResult","toolCallId":"call_bash","toolName":"bash","content":[{"type":"text","text":"cat: config.toml: No such file or directory\n\nCommand exited with code 1"}],"isError":true,"timestamp":1796066137174}}"#,
        r#"{"type":"message","id":"b1","parentId":"u1","timestamp":"2026-11-30T19:15:37.175Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_ls","name":"bash","arguments":{"command":"ls /nope"}}],"api":"faux","provider":"faux","model":"faux-reasoner","usage":{"input":0,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":1,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1796066137175}}"#,
        r#"{"type":"message","id":"b2","parentId":"b1","timestamp":"2026-11-30T19:15:37.176Z","message":{"role":"toolResult","toolCallId":"call_ls","toolName":"bash","content":[{"type":"text","text":"ls: cannot access '/nope'"}],"isError":true,"timestamp":1796066137176}}"#,
        r#"{"type":"message","id":"x1","parentId":"t2","timestamp":"2026-11-30T19:15:37.183Z","message":{"role":"bashExecution","command":"ls no-such-dir","output":"ls: cannot access 'no-such-dir': No such file or directory\n","exitCode":2,"cancelled":false,"truncated":false,"timestamp":1796066137183}}"#,
        r#"{"type":"message","id":"x2","parentId":"x1","timestamp":"2026-11-30T19:15:37.184Z","message":{"role":"bashExecution","command":"true","output":"","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1796066137184}}"#,
        r#"{"type":"message","id":"e1","parentId":"x2","timestamp":"2026-11-30T19:15:37.602Z","message":{"role":"assistant","content":[],"api":"faux","provider":"faux","model":"faux-reasoner","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","errorMessage":"429 Too Many Requests: rate limit exceeded","timestamp":1796066137602}}"#,
        r#"{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-11-30T19:15:37.606Z","message":{"role":"assistant","content":[],"api":"faux","provider":"faux","model":"faux-reasoner","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"aborted","timestamp":1796066137606}}"#,
        r#"{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-11-30T19:15:37.608Z","message":{"role":"assistant","content":[{"type":"text","text":"The build starts with cargo, then"}],"api":"faux","provider":"faux","model":"faux-reasoner","usage":{"input":0,"output":9,"cacheRead":0,"cacheWrite":0,"totalTokens":9,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"length","timestamp":1796066137608}}"#,
    ]
    .into_iter()
    .map(str::to_owned)
    .collect()
}

fn write(dir: &Path, name: &str, header: &Header, lines: &[String]) -> String {
    write_session_file(&dir.join(name), header, lines)
        .display()
        .to_string()
}

fn file(path: &str, depth: u32) -> ScanFile {
    ScanFile {
        path: path.into(),
        cwd: "/home/user/project".into(),
        depth,
        copied_before: None,
    }
}

fn detailed() -> ScanOptions {
    ScanOptions {
        is_detailed: true,
        ..ScanOptions::default()
    }
}

#[test]
fn every_kind_is_found_newest_first_with_its_call_and_branch() {
    let dir = tempfile::tempdir().expect("test setup");
    let path = write(dir.path(), "s.jsonl", &header(), &body());
    let report = scan(&[file(&path, 0)], &detailed());
    let rows: Vec<(&str, FailureKind, bool)> = report
        .failures
        .iter()
        .map(|row| {
            (
                row.entry_id.as_str(),
                row.failure_kind,
                row.on_active_branch,
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("e3", FailureKind::CutOff, true),
            ("e2", FailureKind::Aborted, true),
            ("e1", FailureKind::ApiError, true),
            ("x1", FailureKind::CommandExit, true),
            ("b2", FailureKind::ToolError, false),
            ("t2", FailureKind::ToolError, true),
            ("t1", FailureKind::ToolError, true),
        ]
    );
    let by_id = |id: &str| {
        report
            .failures
            .iter()
            .find(|row| row.entry_id == id)
            .expect("test setup")
    };
    assert_eq!(
        by_id("t2").command.as_deref(),
        Some("cat config.toml && echo read-ok")
    );
    assert_eq!(
        by_id("t1").arguments.as_deref(),
        Some(r#"{"path":"config.toml"}"#)
    );
    assert_eq!(by_id("t1").tool_name.as_deref(), Some("read"));
    assert_eq!(by_id("b2").command.as_deref(), Some("ls /nope"));
    assert_eq!(by_id("x1").exit_code, Some(2));
    assert_eq!(by_id("x1").command.as_deref(), Some("ls no-such-dir"));
    assert_eq!(
        by_id("e1").message,
        "429 Too Many Requests: rate limit exceeded"
    );
    assert_eq!(by_id("t1").title.as_deref(), Some("Check the config"));
    assert_eq!(report.n_files_decoded, 1);
}

#[test]
fn kinds_and_time_bounds_select() {
    let dir = tempfile::tempdir().expect("test setup");
    let path = write(dir.path(), "s.jsonl", &header(), &body());
    let options = ScanOptions {
        kinds: vec![FailureKind::ToolError, FailureKind::CutOff],
        since: pi_retrospect_core::timestamp::parse("2026-11-30T19:15:37.174Z"),
        until: pi_retrospect_core::timestamp::parse("2026-11-30T19:15:37.607Z"),
        ..ScanOptions::default()
    };
    let ids: Vec<String> = scan(&[file(&path, 0)], &options)
        .failures
        .into_iter()
        .map(|row| row.entry_id)
        .collect();
    assert_eq!(ids, ["b2", "t2"]);
}

#[test]
fn a_file_without_candidate_bytes_is_never_decoded() {
    let dir = tempfile::tempdir().expect("test setup");
    let lines: Vec<String> = body().into_iter().take(2).collect();
    let path = write(dir.path(), "s.jsonl", &header(), &lines);
    let report = scan(&[file(&path, 0)], &detailed());
    assert!(report.failures.is_empty());
    assert_eq!((report.n_files, report.n_files_decoded), (1, 0));
}

#[test]
fn a_fork_counts_a_copied_failure_once_in_the_parent_and_a_run_keeps_its_depth() {
    let dir = tempfile::tempdir().expect("test setup");
    let parent = write(dir.path(), "parent.jsonl", &header(), &body());
    // The fork copies the parent's entries verbatim, then fails on its own after it started.
    let mut fork_lines = body();
    fork_lines.push(r#"{"type":"message","id":"f1","parentId":"e3","timestamp":"2026-11-30T20:00:01.000Z","message":{"role":"bashExecution","command":"make","output":"make: *** No targets.","exitCode":2,"cancelled":false,"truncated":false,"timestamp":1796068801000}}"#.to_owned());
    let fork = write(dir.path(), "fork.jsonl", &fork_header(&parent), &fork_lines);
    let run = write(dir.path(), "run.jsonl", &header(), &body()[..4]);
    let mut fork_file = file(&fork, 0);
    fork_file.copied_before = pi_retrospect_core::timestamp::parse("2026-11-30T20:00:00.000Z");
    let report = scan(
        &[file(&parent, 0), fork_file, file(&run, 1)],
        &ScanOptions::default(),
    );
    let in_file = |path: &str| {
        report
            .failures
            .iter()
            .filter(|row| *row.path == *path)
            .count()
    };
    assert_eq!(in_file(&parent), 7);
    assert_eq!(in_file(&fork), 1);
    assert_eq!(in_file(&run), 2);
    assert!(
        report
            .failures
            .iter()
            .filter(|row| *row.path == *run)
            .all(|row| row.depth == 1)
    );
}

#[test]
fn the_same_call_three_times_in_a_row_is_a_repeat() {
    let dir = tempfile::tempdir().expect("test setup");
    let call = |id: &str, n: u32| {
        let call = Block::tool_call(&format!("c{n}"), "bash", r#"{"command":"cargo test"}"#);
        Entry::message(
            Message::assistant(&[call])
                .stop_reason("toolUse")
                .timestamp(1),
        )
        .id(id)
        .parent(None)
        .at(&format!("2026-11-30T19:16:0{n}.000Z"))
        .to_string()
    };
    let result = |n: u32, is_error: bool| {
        Entry::message(
            Message::tool_result(&format!("c{n}"), "bash", "fail")
                .is_error(is_error)
                .timestamp(1),
        )
        .id(&format!("r{n}"))
        .parent(None)
        .at(&format!("2026-11-30T19:16:0{n}.500Z"))
        .to_string()
    };
    let lines = vec![
        call("a1", 1),
        result(1, true),
        call("a2", 2),
        result(2, true),
        call("a3", 3),
        result(3, false),
    ];
    let path = write(dir.path(), "s.jsonl", &header(), &lines);
    let options = ScanOptions {
        find_repeats: true,
        ..ScanOptions::default()
    };
    let report = scan(&[file(&path, 0)], &options);
    assert_eq!(report.repeats.len(), 1);
    assert_eq!(
        (report.repeats[0].n_calls, report.repeats[0].n_failed),
        (3, 2)
    );
    assert_eq!(report.repeats[0].entry_id, "a1");
    // Two calls in a row are not a loop.
    let short = write(dir.path(), "t.jsonl", &header(), &lines[..4]);
    assert!(scan(&[file(&short, 0)], &options).repeats.is_empty());
}

#[test]
fn parallel_calls_and_regenerated_replies_are_no_loop() {
    let dir = tempfile::tempdir().expect("test setup");
    let call = |n: u32| Block::tool_call(&format!("c{n}"), "bash", r#"{"command":"ls"}"#);
    let reply = |id: &str, parent: &str, calls: &[Block]| {
        Entry::message(
            Message::assistant(calls)
                .stop_reason("toolUse")
                .timestamp(1),
        )
        .id(id)
        .parent(Some(parent))
        .at("2026-11-30T19:16:00.000Z")
        .to_string()
    };
    let user = Entry::message(Message::user("list it"))
        .id("u1")
        .parent(None)
        .at("2026-11-30T19:15:59.000Z")
        .to_string();
    let options = ScanOptions {
        find_repeats: true,
        ..ScanOptions::default()
    };
    // Three identical calls made at once, in one reply.
    let parallel = vec![
        user.clone(),
        reply("a1", "u1", &[call(1), call(2), call(3)]),
    ];
    let path = write(dir.path(), "p.jsonl", &header(), &parallel);
    assert!(scan(&[file(&path, 0)], &options).repeats.is_empty());
    // The reply regenerated twice from the same user message: three sibling branches.
    let siblings = vec![
        user,
        reply("a1", "u1", &[call(1)]),
        reply("a2", "u1", &[call(2)]),
        reply("a3", "u1", &[call(3)]),
    ];
    let path = write(dir.path(), "s.jsonl", &header(), &siblings);
    assert!(scan(&[file(&path, 0)], &options).repeats.is_empty());
}

/// A session with many failures of a few signatures, tools and days, and runs of repeated
/// calls (some failing) between them.
fn many_failures() -> Vec<String> {
    let mut lines = Vec::new();
    for n in 0..3000u32 {
        let at = format!(
            "2026-11-{:02}T19:{:02}:{:02}.{:03}Z",
            1 + n % 3,
            n / 60 % 60,
            n % 60,
            n % 1000
        );
        let tool = ["bash", "read", "edit"][(n / 4) as usize % 3];
        let call_id = format!("c{n}");
        // Every fourth call repeats the one before it, so runs of three and more form.
        let arguments = format!(r#"{{"command":"make {}"}}"#, n / 4);
        let call = Block::tool_call(&call_id, tool, &arguments);
        lines.push(
            Entry::message(
                Message::assistant(&[call])
                    .stop_reason("toolUse")
                    .timestamp(1),
            )
            .id(&format!("a{n}"))
            .parent(None)
            .at(&at)
            .to_string(),
        );
        let text = match n % 5 {
            0 => format!("error {n} in '/tmp/x{n}.rs':{n}:5"),
            1 => "permission denied".to_owned(),
            _ => format!("exit code {}", n % 7),
        };
        lines.push(
            Entry::message(
                Message::tool_result(&call_id, tool, &text)
                    .is_error(n % 6 != 0)
                    .timestamp(1),
            )
            .id(&format!("r{n}"))
            .parent(None)
            .at(&at)
            .to_string(),
        );
    }
    lines
}

#[test]
fn counted_and_grouped_scans_agree_with_the_full_rows() {
    let dir = tempfile::tempdir().expect("test setup");
    let path = write(dir.path(), "s.jsonl", &header(), &many_failures());
    let file = file(&path, 0);
    for is_detailed in [false, true] {
        let options = ScanOptions {
            is_detailed,
            find_repeats: true,
            ..ScanOptions::default()
        };
        let whole = scan_one(&file, &options);
        assert_eq!(whole.n_failures, whole.failures.len() as u64);
        assert!(whole.n_failures > 2000, "{}", whole.n_failures);
        assert!(!whole.repeats.is_empty());
        let counted = scan_one_folded(&file, &options, None);
        assert!(counted.failures.is_empty());
        assert_eq!(counted.n_failures, whole.n_failures);
        assert_eq!(counted.repeats, whole.repeats);
        for by in [
            GroupBy::Signature,
            GroupBy::Tool,
            GroupBy::Session,
            GroupBy::Project,
            GroupBy::Day,
        ] {
            let mut grouper = Grouper::new(by);
            let folded = scan_one_folded(&file, &options, Some(&mut grouper));
            assert!(folded.failures.is_empty());
            assert_eq!(folded.n_failures, whole.n_failures);
            let groups = grouper.finish(&folded.repeats);
            assert_eq!(groups, group(&whole.failures, by, &whole.repeats), "{by:?}");
            assert_eq!(
                groups.iter().map(|group| group.count).sum::<u64>(),
                whole.n_failures
            );
        }
    }
}

/// One entry line of the kinds Pi writes, with values that make it a failure or not, and
/// text that holds the needles' words inside strings.
fn entry_line() -> impl Strategy<Value = String> {
    let text = prop::sample::select(vec![
        "ok",
        "\"isError\":true",
        "stopReason error",
        "{\"exitCode\":1}",
        "line\nbreak",
        "\u{2028}",
    ]);
    (0..4u8, any::<bool>(), 0..6u8, -2i64..3, text, 0..4u8).prop_map(
        |(role, is_error, stop, exit_code, text, spelling)| {
            let stop = ["stop", "toolUse", "error", "aborted", "length", "other"][stop as usize];
            let text = serde_json::to_string(text).expect("test setup");
            let message = match role {
                0 => format!(
                    r#"{{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{{"type":"text","text":{text}}}],"isError":{is_error}}}"#
                ),
                1 => format!(
                    r#"{{"role":"assistant","content":[{{"type":"text","text":{text}}}],"stopReason":"{stop}"}}"#
                ),
                2 => format!(
                    r#"{{"role":"bashExecution","command":{text},"output":"","exitCode":{exit_code},"cancelled":false}}"#
                ),
                _ => format!(r#"{{"role":"user","content":{text}}}"#),
            };
            let line = format!(
                r#"{{"type":"message","id":"x","parentId":null,"timestamp":"2026-11-30T19:15:37.110Z","message":{message}}}"#
            );
            // Other writers' spellings: spaces around the colon, keys and values escaped.
            match spelling {
                0 => line,
                1 => line.replace("\":", "\": "),
                2 => line.replace("\":", "\" :\t"),
                _ => line
                    .replace("\"isError\"", r#""\u0069sError""#)
                    .replace("\"stopReason\"", r#""\u0073topReason""#)
                    .replace("\"exitCode\"", r#""exit\u0043ode""#)
                    .replace("\"error\"", r#""\u0065rror""#)
                    .replace("\"length\"", r#""lengt\u0068""#),
            }
        },
    )
}

proptest! {
    /// The raw-byte recognition never says no to a line whose decoding is a failure.
    #[test]
    fn recognition_agrees_with_decoding_every_line(line in entry_line()) {
        if decoded_failure_kind(line.as_bytes()).is_some() {
            prop_assert!(may_record_failure(line.as_bytes()), "{}", line);
        }
    }

    /// The scan with its fast recognition finds what decoding every line finds.
    #[test]
    fn the_scan_finds_what_decoding_every_line_finds(lines in prop::collection::vec(entry_line(), 0..12)) {
        let dir = tempfile::tempdir().expect("test setup");
        let path = write(dir.path(), "s.jsonl", &header(), &lines);
        let mut found: Vec<FailureKind> = scan(&[file(&path, 0)], &ScanOptions::default())
            .failures
            .into_iter()
            .map(|row| row.failure_kind)
            .collect();
        let mut expected: Vec<FailureKind> = lines
            .iter()
            .filter_map(|line| decoded_failure_kind(line.as_bytes()))
            .collect();
        // Every generated line has the same time and id, so only the multiset is compared.
        found.sort();
        expected.sort();
        prop_assert_eq!(found, expected);
    }
}

#[test]
fn a_line_with_a_lone_surrogate_escape_is_read_as_pi_reads_it() {
    let dir = tempfile::tempdir().expect("test setup");
    // JavaScript writes half an emoji as a lone `\ud83d` when a string is cut between its
    // halves; JSON.parse reads it, so the failure on that line must not be lost.
    let mut lines: Vec<String> = body().into_iter().take(2).collect();
    lines.push(r#"{"type":"message","id":"s1","parentId":null,"timestamp":"2026-11-30T20:00:01.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"boom \ud83d"}],"isError":true,"timestamp":1796068801000}}"#.to_owned());
    let path = write(dir.path(), "s.jsonl", &header(), &lines);
    let report = scan(&[file(&path, 0)], &detailed());
    assert_eq!(report.failures.len(), 1, "{:?}", report.warnings);
    assert!(report.failures[0].message.contains("boom \u{fffd}"));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

/// A file with more failures than a batch holds: its rows built again from their lines, a
/// part at a time, are the rows of the whole scan, in order, with their branch flags, call
/// arguments and title; and the held scan declines it.
#[test]
fn a_file_streamed_in_parts_gives_the_rows_of_the_whole_scan() {
    let mut lines = vec![
        Entry::message(Message::user("fix the build"))
            .id("u")
            .parent(None)
            .at("2026-11-01T00:00:00.000Z")
            .to_string(),
    ];
    let mut parent = "u".to_owned();
    for n in 0..3000u32 {
        if n == 1500 {
            // The first half is left for a branch from the first reply.
            parent = "r0".to_owned();
        }
        // Days out of file order, and instants shared by several failures.
        let at = format!("2026-11-{:02}T10:00:{:02}.000Z", 1 + n % 3, n % 7);
        let call_id = format!("c{n}");
        let arguments = format!(r#"{{"command":"make {}"}}"#, n / 4);
        let call = Block::tool_call(&call_id, "bash", &arguments);
        let (id, result) = (format!("a{n}"), format!("r{n}"));
        lines.push(
            Entry::message(Message::assistant(&[call]).stop_reason("toolUse"))
                .id(&id)
                .parent(Some(&parent))
                .at(&at)
                .to_string(),
        );
        lines.push(
            Entry::message(
                Message::tool_result(&call_id, "bash", &format!("failed {n}")).is_error(n % 5 != 0),
            )
            .id(&result)
            .parent(Some(&id))
            .at(&at)
            .to_string(),
        );
        parent = result;
    }
    let dir = tempfile::tempdir().expect("test setup");
    let path = write(dir.path(), "s.jsonl", &header(), &lines);
    let file = file(&path, 1);
    let options = ScanOptions {
        is_detailed: true,
        find_repeats: true,
        ..ScanOptions::default()
    };
    let mut whole = scan_one(&file, &options);
    whole.sort();
    assert_eq!(whole.n_failures, 2400);
    assert!(whole.failures.iter().any(|row| row.on_active_branch));
    assert!(whole.failures.iter().any(|row| !row.on_active_branch));
    assert!(whole.failures.iter().all(|row| row.command.is_some()));
    assert!(
        whole
            .failures
            .iter()
            .all(|row| row.title.as_deref() == Some("fix the build"))
    );
    let mut held = scan_one_held(&file, &options, 5_000).expect("under the bound");
    held.sort();
    assert!(held.failures == whole.failures, "held rows differ");
    assert!(scan_one_held(&file, &options, MAX_HELD_ROWS).is_none());
    let mut parts = Vec::new();
    let flow = scan_one_streamed(&file, &options, &mut |part| {
        parts.push(part);
        std::ops::ControlFlow::Continue(())
    });
    assert!(flow.is_continue());
    assert!(parts.len() > 1, "{} parts", parts.len());
    assert_eq!(parts[0].n_failures, whole.n_failures);
    assert_eq!(parts.iter().map(|part| part.n_files).sum::<u64>(), 1);
    let rows: Vec<_> = parts
        .iter()
        .flat_map(|part| part.failures.clone())
        .collect();
    assert_eq!(rows.len(), whole.failures.len());
    assert!(rows == whole.failures, "streamed rows differ");
    let repeats: Vec<_> = parts.iter().flat_map(|part| part.repeats.clone()).collect();
    assert_eq!(repeats.len(), whole.repeats.len());
    for (left, right) in repeats.iter().zip(&whole.repeats) {
        assert_eq!(left, right);
    }
    // A consumer that stops ends the reading.
    let mut n_parts = 0;
    let flow = scan_one_streamed(&file, &options, &mut |_| {
        n_parts += 1;
        std::ops::ControlFlow::Break(())
    });
    assert!(flow.is_break());
    assert_eq!(n_parts, 1);
}
