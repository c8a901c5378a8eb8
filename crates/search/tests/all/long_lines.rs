//! Lines over the line cap: skipped with one warning
//! naming the file and line, never held whole, and the active-branch flags bridged across
//! them.

use crate::common;

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use common::{HEADER, describe_all, file, materialise, searcher, user};
use pi_retrospect_search::{FileResult, Mode, Pattern, Scope, Searcher};

/// Writes `before` lines, then one line of `head` followed by `hole` zero bytes (a sparse
/// hole: nothing is written) and `tail`, then `after` lines; returns the file's size.
fn write_sparse(
    path: &Path,
    before: &[String],
    head: &str,
    hole: u64,
    tail: &str,
    after: &[String],
) -> u64 {
    let mut out = std::fs::File::create(path).expect("create");
    for line in before {
        writeln!(out, "{line}").expect("write");
    }
    out.write_all(head.as_bytes()).expect("write");
    let at = out.stream_position().expect("position") + hole;
    out.set_len(at).expect("extend");
    out.seek(SeekFrom::Start(at)).expect("seek");
    out.write_all(tail.as_bytes()).expect("write");
    for line in after {
        writeln!(out, "{line}").expect("write");
    }
    out.metadata().expect("metadata").len()
}

fn warnings(result: &FileResult) -> Vec<String> {
    result
        .warnings
        .iter()
        .map(|warning| format!("{:?}: {}", warning.line_no, warning.message))
        .collect()
}

fn needle() -> Searcher {
    searcher(Pattern::literal("needle"), Scope::default())
}

/// A 65 MiB line (the default cap is 64 MiB) and a NUL run with no newline are skipped
/// with one warning each; the lines around them are searched with the right numbers.
#[test]
fn over_long_lines_are_skipped_at_the_default_cap() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("s.jsonl");
    let hole = 65 * 1024 * 1024;
    let head = r#"{"type":"message","id":"u1","parentId":"u0","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"needle "#;
    let size = write_sparse(
        &path,
        &[HEADER.to_owned(), user("u0", None, "needle before")],
        head,
        hole,
        "\"}}\n",
        &[user("a1", Some("u1"), "needle after")],
    );
    let length = head.len() as u64 + hole + 3;
    for mode in [Mode::Hits, Mode::Count] {
        let result = needle().search_file(&file(&path), mode, None);
        assert_eq!(result.n_hits, 2, "{mode:?}");
        assert_eq!(result.n_bytes, size);
        assert_eq!(
            warnings(&result),
            [format!(
                "Some(3): line 3 is {length} bytes, longer than the 67108864 byte line limit; skipped"
            )]
        );
    }
    // The entry u0 is the parent of the skipped u1, whose child a1 is the leaf.
    let result = needle().search_file(&file(&path), Mode::Hits, None);
    assert_eq!(
        describe_all(&result),
        [
            "2:user:user*:[needle] before",
            "4:user:user*:[needle] after"
        ]
    );

    // A crash's zero-filled tail: no newline at all.
    let path = dir.path().join("nul.jsonl");
    write_sparse(
        &path,
        &[HEADER.to_owned(), user("u0", None, "needle before")],
        "",
        hole,
        "",
        &[],
    );
    let result = needle().search_file(&file(&path), Mode::Hits, None);
    assert_eq!(describe_all(&result), ["2:user:user*:[needle] before"]);
    assert_eq!(
        warnings(&result),
        [format!(
            "Some(3): line 3 is {hole} bytes, longer than the 67108864 byte line limit; skipped"
        )]
    );
}

/// The cap is the same whichever way a file is read and wherever the chunk boundaries
/// fall: a line of exactly the cap is searched, one byte more is skipped.
#[test]
fn the_cap_is_exact() {
    let short = user("u1", None, "needle");
    for cap in [short.len() - 1, short.len(), short.len() + 1, 4096] {
        for final_newline in [true, false] {
            let mut contents = format!("{HEADER}\n{short}\n{short}");
            if final_newline {
                contents.push('\n');
            }
            let searcher = needle().with_max_line_bytes(cap);
            let (_dir, path) = materialise("s.jsonl", contents.as_bytes());
            let on_disk = searcher.search_file(&file(&path), Mode::Count, None);
            let in_memory =
                searcher.search_bytes(&file(&path), contents.as_bytes(), Mode::Count, None);
            assert_eq!(on_disk, in_memory, "cap {cap}");
            let expected_hits = if cap >= short.len() { 2 } else { 0 };
            assert_eq!(on_disk.n_hits, expected_hits, "cap {cap}");
            let n_skipped = on_disk
                .warnings
                .iter()
                .filter(|warning| warning.message.contains("line limit; skipped"))
                .count();
            // The header is longer than the entries, so it is skipped too below its length.
            let expected_skipped =
                usize::from(cap < HEADER.len()) + 2 * usize::from(cap < short.len());
            assert_eq!(
                n_skipped,
                expected_skipped,
                "cap {cap}: {:?}",
                warnings(&on_disk)
            );
        }
    }
}

/// Returns a line over `cap` bytes holding entry `id` below `parent`.
fn long_entry(id: &str, parent: &str, cap: usize) -> String {
    user(id, Some(parent), &"x".repeat(cap))
}

/// The flags are bridged across a skipped line in the middle of the active branch and a
/// skipped leaf; a line whose start names no entry makes a warning; a NUL run does not.
#[test]
fn active_branch_across_skipped_lines() {
    let cap = 8192;
    let check = |lines: &[String], expected_hits: &[&str], expected_warnings: &[&str]| {
        let contents = pi_retrospect_testkit::jsonl(
            std::iter::once(HEADER).chain(lines.iter().map(String::as_str)),
        );
        let searcher = needle().with_max_line_bytes(cap);
        let (_dir, path) = materialise("s.jsonl", contents.as_bytes());
        let result = searcher.search_file(&file(&path), Mode::Hits, None);
        let in_memory = searcher.search_bytes(&file(&path), contents.as_bytes(), Mode::Hits, None);
        assert_eq!(result, in_memory);
        assert_eq!(describe_all(&result), expected_hits);
        // A search stopped by a limit flags its hits as the whole search does, skipped lines
        // after its last hit included.
        for n_hits in 1..expected_hits.len() {
            let limited = searcher.search_file(&file(&path), Mode::Hits, Some(n_hits as u64));
            assert_eq!(
                describe_all(&limited),
                expected_hits[..n_hits],
                "limit {n_hits}"
            );
        }
        let actual: Vec<String> = warnings(&result)
            .into_iter()
            .filter(|warning| !warning.contains("line limit; skipped"))
            .collect();
        assert_eq!(actual, expected_warnings);
    };
    // Skipped in the middle: u0 -> u1 (skipped) -> a1 (leaf); b1 is another branch of u0.
    check(
        &[
            user("u0", None, "needle root"),
            user("b1", Some("u0"), "needle other"),
            long_entry("u1", "u0", cap),
            user("a1", Some("u1"), "needle leaf"),
        ],
        &[
            "2:user:user*:[needle] root",
            "3:user:user:[needle] other",
            "5:user:user*:[needle] leaf",
        ],
        &[],
    );
    // The skipped line is the leaf, below a1; b1 is the last entry read.
    check(
        &[
            user("u0", None, "needle root"),
            user("a1", Some("u0"), "needle kept"),
            user("b1", Some("u0"), "needle other"),
            long_entry("u2", "a1", cap),
        ],
        &[
            "2:user:user*:[needle] root",
            "3:user:user*:[needle] kept",
            "4:user:user:[needle] other",
        ],
        &[],
    );
    // Two skipped lines in a row.
    check(
        &[
            user("u0", None, "needle root"),
            long_entry("u1", "u0", cap),
            long_entry("u2", "u1", cap),
            user("a1", Some("u2"), "needle leaf"),
        ],
        &["2:user:user*:[needle] root", "5:user:user*:[needle] leaf"],
        &[],
    );
    // A skipped line whose start shows no id: the flags may be wrong, and a warning says so.
    let mut no_id = format!(
        r#"{{"type":"message","message":{{"role":"user","content":"{}"#,
        "x".repeat(cap)
    );
    no_id.push_str(r#""}}"#);
    check(
        &[
            user("u0", None, "needle root"),
            no_id,
            user("a1", Some("u1"), "needle leaf"),
        ],
        &["2:user:user:[needle] root", "4:user:user*:[needle] leaf"],
        &[
            "Some(3): line 3 was skipped and its start does not show which entry it held, so the active-branch flags of this file's hits may be wrong",
        ],
    );
    // A run of NUL bytes is no entry, for Pi either: nothing to bridge, nothing to say.
    check(
        &[
            user("u0", None, "needle root"),
            "\0".repeat(cap + 1),
            user("a1", Some("u0"), "needle leaf"),
        ],
        &["2:user:user*:[needle] root", "4:user:user*:[needle] leaf"],
        &[],
    );
}
