//! Hostile and damaged files. Every test generates its worst case in a temp dir
//! (large inputs sparse, so they cost no disk and little time) and asserts what was kept and
//! the work done (counters, sizes), never time.

use crate::common;

use std::fs::File;

use common::{HEADER, assistant, jsonl, materialise, other, parse, parse_bytes, user};
use pi_retrospect_transcript::{
    DisplayItem, EntriesFilter, InspectPageRequest, InspectView, KEPT_PER_KIND, ReadLimits,
    ShowOptions, Transcript, TranscriptError, TranscriptWarning, WarningKind, entries, facts,
    for_each_item, for_each_tree_row, inspect, tree_counts,
};

/// Returns a temp dir holding `session.jsonl`: `head` followed by zeros up to `size` bytes,
/// made sparse with `set_len`, so a 4 GiB file costs nothing on disk.
fn sparse(head: &[u8], size: u64) -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, path) = materialise(head);
    let file = File::options().write(true).open(&path).expect("open");
    file.set_len(size).expect("set_len");
    (dir, path)
}

/// Returns the kinds of the warnings, in order, with their lines.
fn kinds(warnings: &[TranscriptWarning]) -> Vec<(WarningKind, Option<u64>)> {
    warnings
        .iter()
        .map(|warning| (warning.kind, warning.line_no))
        .collect()
}

/// A sparse 4 GiB file (a 4 KiB file whose tail is one 4 GiB "line" of zeros) is
/// read with the line cap: the entries before the zeros are kept and the zeros are one
/// over-long line, never held in memory (once: "memory allocation of 4294967296 bytes
/// failed").
#[test]
fn a_sparse_4_gib_file_is_one_over_long_line() {
    let head = jsonl(&[&user("u1", None, "before the hole")]);
    let size = 4u64 << 30;
    let (_dir, path) = sparse(head.as_bytes(), size);
    let session = Transcript::open(&path).expect("open");
    assert_eq!(session.entries().len(), 1);
    assert_eq!(session.snapshot().bytes, size);
    assert_eq!(
        kinds(session.warnings()),
        [(WarningKind::OverLongLine, Some(3))]
    );
    let message = &session.warnings()[0].message;
    let tail = size - head.len() as u64;
    assert!(message.contains(&tail.to_string()), "{message}");
}

/// The zero-filled tail a crash can leave after good entries, longer than the cap, is
/// one over-long line; with a small cap the read holds at most the cap.
#[test]
fn a_zero_filled_tail_is_one_over_long_line() {
    let head = jsonl(&[
        &user("u1", None, "one"),
        &assistant("a1", Some("u1"), "two", &[]),
    ]);
    for (cap, size) in [(1usize << 20, 8u64 << 20), (4096, 1 << 20)] {
        let (_dir, path) = sparse(head.as_bytes(), size);
        let limits = ReadLimits {
            max_line_bytes: cap,
            ..ReadLimits::default()
        };
        let session = Transcript::open_with(&path, &limits).expect("open");
        assert_eq!(session.entries().len(), 2, "cap {cap}");
        assert_eq!(
            kinds(session.warnings()),
            [(WarningKind::OverLongLine, Some(4))],
            "cap {cap}"
        );
    }
}

/// Returns `n` lines of junk of a few shapes, each ending in a newline.
fn junk_lines(n: usize) -> String {
    let shapes = [
        "x",
        "{",
        "{\"type\":\"message\",\"id\":\"j",
        "[1,2",
        "\u{7}\u{1b}[31m",
    ];
    let mut text = String::new();
    for idx in 0..n {
        text.push_str(shapes[idx % shapes.len()]);
        text.push_str(&idx.to_string());
        text.push('\n');
    }
    text
}

/// 10 MiB of junk lines (once 742 MB of memory and 555 MB of warnings) keeps the
/// first warnings of each kind with their lines and counts every one.
#[test]
fn warnings_are_counted_by_kind_and_the_first_kept() {
    let mut text = format!("{HEADER}\n");
    let mut n_junk = 0;
    while text.len() < 10 << 20 {
        text.push_str(&junk_lines(10_000));
        n_junk += 10_000;
    }
    text.push_str(&user("u1", None, "after the junk"));
    text.push('\n');
    let session = parse(&text);
    assert_eq!(session.entries().len(), 1);
    let counts = session.warning_counts();
    assert_eq!(counts.get(WarningKind::MalformedLine), n_junk as u64);
    let warnings = session.warnings();
    let kept: Vec<&TranscriptWarning> = warnings
        .iter()
        .filter(|warning| warning.kind == WarningKind::MalformedLine)
        .collect();
    assert_eq!(kept.len(), KEPT_PER_KIND);
    let kept_lines: Vec<Option<u64>> = kept.iter().map(|warning| warning.line_no).collect();
    let first_lines: Vec<Option<u64>> = (2..2 + KEPT_PER_KIND as u64).map(Some).collect();
    assert_eq!(kept_lines, first_lines);
    let omitted: Vec<_> = warnings
        .iter()
        .filter_map(|warning| warning.omitted)
        .collect();
    assert_eq!(omitted.len(), 1);
    assert_eq!(omitted[0].kind, WarningKind::MalformedLine);
    assert_eq!(omitted[0].count, n_junk as u64 - KEPT_PER_KIND as u64);
    assert_eq!(warnings.len(), KEPT_PER_KIND + 1);
    let kept_bytes: usize = warnings.iter().map(|warning| warning.message.len()).sum();
    assert!(
        kept_bytes < 64 * 1024,
        "{kept_bytes} bytes of messages kept"
    );
}

/// Malformed lines mixed with entries whose parents are missing (each explained by
/// the nearest malformed line or a salvaged id) once made the tree build quadratic (38 MB:
/// over 300 s). The build's work is now linear in the entries.
#[test]
fn orphans_among_malformed_lines_take_linear_work() {
    let n = 20_000;
    let mut text = format!("{HEADER}\n");
    for idx in 0..n {
        // A malformed line that looks like entry `m{idx}`, then an entry whose parent is
        // missing: half name the malformed line's id, half an id no line holds.
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"m{idx}\",\"parentId\n"
        ));
        let parent = if idx % 2 == 0 {
            format!("m{idx}")
        } else {
            format!("gone{idx}")
        };
        text.push_str(&user(&format!("e{idx}"), Some(&parent), "orphan"));
        text.push('\n');
    }
    let session = parse(&text);
    assert_eq!(session.entries().len(), n);
    assert_eq!(session.roots().len(), n);
    let counts = session.warning_counts();
    assert_eq!(counts.get(WarningKind::MissingParent), n as u64);
    assert_eq!(counts.get(WarningKind::MalformedLine), n as u64);
    let steps = session.n_build_steps();
    assert!(steps <= 8 * n as u64, "{steps} steps for {n} entries");
    let causes: Vec<&str> = session
        .warnings()
        .iter()
        .filter(|warning| warning.kind == WarningKind::MissingParent)
        .take(2)
        .map(|warning| warning.message.as_str())
        .collect();
    assert!(
        causes[0].contains("it was on malformed line 2"),
        "{}",
        causes[0]
    );
    assert!(
        causes[1].contains("it may have been on malformed line 4"),
        "{}",
        causes[1]
    );
}

/// A parent cycle through every entry is cut once, with a bounded message, in linear
/// work.
#[test]
fn one_long_cycle_takes_linear_work_and_a_short_message() {
    let n = 20_000;
    let mut lines = Vec::new();
    for idx in 0..n {
        let parent = format!("c{}", (idx + 1) % n);
        lines.push(other("label", &format!("c{idx}"), Some(&parent), ""));
    }
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let session = parse(&jsonl(&refs));
    assert_eq!(session.roots(), [0]);
    assert_eq!(session.warning_counts().get(WarningKind::Cycle), 1);
    let message = &session.warnings()[0].message;
    assert!(message.len() < 300, "{message}");
    assert!(session.n_build_steps() <= 8 * n as u64);
}

/// `inspect search` walked the tree once per hit to find its checkpoint (29 MB: 74 s
/// for `--limit 1`). A chain of matching user messages without a checkpoint below any of them
/// is the worst case: only the page's hits are built now, so the work stays linear.
#[test]
fn search_builds_only_the_page() {
    let n = 5_000;
    let mut lines = Vec::new();
    let mut parent: Option<String> = None;
    for idx in 0..n {
        let id = format!("u{idx}");
        lines.push(user(&id, parent.as_deref(), "needle in the chain"));
        parent = Some(id);
    }
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let session = parse(&jsonl(&refs));
    for limit in [1, 50] {
        let request = InspectPageRequest {
            limit: Some(limit),
            ..InspectPageRequest::new(InspectView::Search {
                query: "needle".to_owned(),
            })
        };
        let page = inspect(&session, &request).expect("search");
        assert_eq!(page.n_total, n);
        assert_eq!(page.hits.as_ref().map(Vec::len), Some(limit));
        let bound = (limit as u64 + 2) * n as u64;
        assert!(
            page.n_steps <= bound,
            "{} steps, limit {limit}",
            page.n_steps
        );
    }
}

/// What JavaScript's `JSON.parse` (Pi's line reader) accepts, line by line: `true` when the
/// line is an entry, `false` when Pi skips it as malformed.
#[test]
fn lines_are_read_as_json_parse_reads_them() {
    let check = |body: &str, is_entry: bool| {
        let line = format!(r#"{{"type":"x","id":"a","parentId":null,{body}}}"#);
        let session = parse_bytes(format!("{HEADER}\n{line}\n").as_bytes());
        let is_malformed = session.warning_counts().get(WarningKind::MalformedLine) == 1;
        assert_eq!(
            (session.entries().len() == 1, is_malformed),
            (is_entry, !is_entry),
            "{line:?}"
        );
    };
    check(r#""text":"plain""#, true);
    // A raw TAB or other control character inside a string: JSON.parse throws.
    check("\"text\":\"a\tb\"", false);
    check("\"text\":\"a\u{1}b\"", false);
    check("\"deep\":{\"k\":[\"\u{1f}\"]}", false);
    check("\"te\tx\":1", false);
    // Whitespace between tokens, a TAB and a CR included, is fine.
    check("\t\"text\" :\r\"a\" ", true);
    // DEL and characters beyond ASCII are not control characters to JSON.
    check("\"text\":\"a\u{7f}\u{85}\u{2028}b\"", true);
    // Invalid escapes, in any string (read or skipped): JSON.parse throws.
    check(r#""text":"\x41""#, false);
    check(r#""text":"\u12""#, false);
    check(r#""text":"\u12g4""#, false);
    check(r#""deep":[{"k":"\q"}]"#, false);
    check(r#""text":"\'""#, false);
    // Runs of backslashes: pairs are literal backslashes, an odd run escapes what follows.
    check(r#""text":"\\d \\\\s C:\\Users""#, true);
    check(r#""text":"\\\x""#, false);
    check(r#""deep":{"k":"\\\\\q"}"#, false);
    check(r#""text":"\\\"quoted\\\"""#, true);
    check(r#""text":"end\\""#, true);
    // Every valid escape, and a lone surrogate (which JSON.parse keeps as it is).
    check(r#""text":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\ud800""#, true);
}

/// `entries --raw` is strict single-line JSON whatever the line held: a lone
/// surrogate becomes U+FFFD (jq and serde_json reject it), whitespace between tokens (a raw CR
/// included) is dropped, invalid UTF-8 becomes U+FFFD; everything else is kept as stored.
#[test]
fn raw_rows_are_strict_json() {
    let lines: [&[u8]; 4] = [
        br#"{"type":"x","id":"a","parentId":null,"text":"cut \ud83d here","n":1.50}"#,
        b"{\"type\":\"x\",\r\"id\":\"b\",\t\"parentId\":\"a\" , \"text\" : \"keep  spaces\"}",
        b"{\"type\":\"x\",\"id\":\"c\",\"parentId\":\"b\",\"text\":\"bad \xff byte\"}",
        br#"{"type":"x","id":"d","parentId":"c","z":1,"a":2,"text":"\\ud800 is text"}"#,
    ];
    let mut text = format!("{HEADER}\n").into_bytes();
    for line in lines {
        text.extend_from_slice(line);
        text.push(b'\n');
    }
    let session = parse_bytes(&text);
    let filter = EntriesFilter {
        include_raw: true,
        ..EntriesFilter::default()
    };
    let raws: Vec<String> = entries(&session, &filter)
        .expect("rows")
        .iter()
        .map(|row| row.raw.as_ref().expect("raw").get().to_owned())
        .collect();
    assert_eq!(
        raws,
        [
            r#"{"type":"x","id":"a","parentId":null,"text":"cut \ufffd here","n":1.50}"#,
            r#"{"type":"x","id":"b","parentId":"a","text":"keep  spaces"}"#,
            "{\"type\":\"x\",\"id\":\"c\",\"parentId\":\"b\",\"text\":\"bad \u{fffd} byte\"}",
            r#"{"type":"x","id":"d","parentId":"c","z":1,"a":2,"text":"\\ud800 is text"}"#,
        ]
    );
    for raw in &raws {
        serde_json::from_str::<serde_json::Value>(raw).expect("strict JSON");
    }
}

/// A version 1 file written by Pi without ids, malformed lines in between, stays linear and
/// keeps its warnings bounded too.
#[test]
fn a_linear_file_with_junk_keeps_its_entries() {
    let mut text = "{\"type\":\"session\",\"id\":\"old\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n".to_owned();
    for idx in 0..100 {
        text.push_str("{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"q\"}}\n");
        text.push_str(&format!("junk {idx}\n"));
    }
    let session = parse(&text);
    assert_eq!(session.entries().len(), 100);
    assert_eq!(session.active_branch().len(), 100);
    assert_eq!(session.active_branch_len(), 100);
    assert_eq!(
        session.warning_counts().get(WarningKind::MalformedLine),
        100
    );
    // The first 20 malformed lines, one omitted group for the other 80, the version 1 note.
    assert_eq!(session.warnings().len(), 22);
}

/// Returns a session file of `n` user messages, each the child of the one before, opened, and
/// then cut after its first `n_kept` entries (if fewer than `n`): reading a later entry fails.
fn opened_then_cut(n: usize, n_kept: usize) -> (tempfile::TempDir, Transcript) {
    let ids: Vec<String> = (0..n).map(|idx| format!("u{idx}")).collect();
    let lines: Vec<String> = ids
        .iter()
        .enumerate()
        .map(|(idx, id)| {
            let parent = idx.checked_sub(1).map(|parent| ids[parent].as_str());
            user(id, parent, &format!("message {idx}"))
        })
        .collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let text = jsonl(&lines);
    let (dir, path) = materialise(text.as_bytes());
    let session = Transcript::open(&path).expect("open");
    assert_eq!(session.entries().len(), n);
    if n_kept >= n {
        return (dir, session);
    }
    let kept = session.entry(n_kept).byte_offset;
    File::options()
        .write(true)
        .open(&path)
        .expect("open for writing")
        .set_len(kept)
        .expect("cut");
    (dir, session)
}

/// `show` makes each active-branch item when it reaches its entry and hands it on
/// before decoding the next, so it never holds the transcript. The file is cut after it was
/// opened: items made one at a time reach the visitor up to the cut, then the read fails; a
/// view that built every item first would fail before handing on any.
#[test]
fn show_items_are_handed_on_as_they_are_made() {
    let (_dir, session) = opened_then_cut(1000, 10);
    let mut seen = Vec::new();
    let outcome = for_each_item(&session, ShowOptions::default(), |item| {
        let DisplayItem::User { entry_id, .. } = item else {
            panic!("only user messages: {item:?}");
        };
        seen.push(entry_id);
        Ok::<(), TranscriptError>(())
    });
    assert!(
        matches!(outcome, Err(TranscriptError::Read { .. })),
        "{outcome:?}"
    );
    let expected: Vec<String> = (0..10).map(|idx| format!("u{idx}")).collect();
    assert_eq!(seen, expected);
}

/// The tree view hands each row on as it is made too, previews included.
#[test]
fn tree_rows_are_handed_on_as_they_are_made() {
    let (_dir, session) = opened_then_cut(1000, 10);
    let counts = tree_counts(&session);
    assert_eq!((counts.n_rows, counts.n_branch_points), (1000, 0));
    let mut n_rows = 0;
    let outcome = for_each_tree_row(&session, true, |row| {
        assert_eq!(row.entry_id, format!("u{n_rows}"));
        n_rows += 1;
        Ok::<(), TranscriptError>(())
    });
    assert!(
        matches!(outcome, Err(TranscriptError::Read { .. })),
        "{outcome:?}"
    );
    assert_eq!(n_rows, 10);
    // Without previews nothing is read, so every row is made.
    let mut n_rows = 0;
    for_each_tree_row(&session, false, |_| {
        n_rows += 1;
        Ok::<(), TranscriptError>(())
    })
    .expect("envelopes only");
    assert_eq!(n_rows, 1000);
}

/// A visitor's error stops the walk at once: nothing after it is decoded or visited.
#[test]
fn a_visitor_error_stops_the_items() {
    let (_dir, session) = opened_then_cut(100, 100);
    let mut n_items = 0;
    let outcome = for_each_item(&session, ShowOptions::default(), |_| {
        n_items += 1;
        if n_items == 3 {
            return Err(TranscriptError::UnknownEntry {
                handle: "stop here".to_owned(),
            });
        }
        Ok(())
    });
    assert!(
        matches!(outcome, Err(TranscriptError::UnknownEntry { .. })),
        "{outcome:?}"
    );
    assert_eq!(n_items, 3);
}

/// A file naming a different model on every assistant message costs the facts work
/// linear in the file: the models seen are looked up in a table, not scanned for each entry
/// (20,000 distinct models made that 200 million comparisons). The order of first use stays.
#[test]
fn facts_are_linear_in_distinct_models() {
    let n = 20_000;
    let mut lines = Vec::with_capacity(n + 1);
    lines.push(user("u", None, "go"));
    for idx in 0..n {
        let parent = if idx == 0 {
            "u".to_owned()
        } else {
            format!("a{}", idx - 1)
        };
        // Every other message repeats the model before it, so a model is also found again.
        let model = idx - idx % 2;
        lines.push(format!(
            r#"{{"type":"message","id":"a{idx}","parentId":"{parent}","message":{{"role":"assistant","content":[],"provider":"p","model":"m{model}","stopReason":"stop"}}}}"#
        ));
    }
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let session = parse(&jsonl(&lines));
    let facts = facts(&session).expect("facts");
    assert_eq!(facts.models.len(), n / 2);
    assert_eq!(facts.models[..3], ["p/m0", "p/m2", "p/m4"]);
    assert_eq!(facts.models.last().map(String::as_str), Some("p/m19998"));
    let n_entries = session.entries().len() as u64;
    assert!(
        facts.n_steps <= 3 * n_entries,
        "{} steps for {n_entries} entries",
        facts.n_steps
    );
}
