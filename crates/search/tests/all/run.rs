//! Searching many files: results in the caller's order whatever the thread count, limits,
//! counts, files with matches, warnings as data, and a consumer that stops the run.

use crate::common;

use std::ops::ControlFlow;
use std::path::Path;

use common::{jsonl, searcher, user};
use pi_retrospect_search::{
    Event, Mode, Pattern, Progress, RunOptions, Scope, SearchFile, SearchTotals, search_files,
    search_files_with_progress,
};

/// Writes `n_files` sessions under `dir`; file `idx` holds `idx % 4` hits, and every fifth
/// file has a damaged line that could hold a match. Returns them in a scrambled order.
fn store(dir: &Path, n_files: usize) -> Vec<SearchFile> {
    let mut files = Vec::new();
    for idx in 0..n_files {
        let mut lines: Vec<String> = (0..idx % 4)
            .map(|hit| user(&format!("h{hit}"), None, &format!("needle {idx}.{hit}")))
            .collect();
        lines.push(user("x", None, "nothing here"));
        if idx % 5 == 0 {
            lines.push(
                r#"{"type":"message","message":{"role":"user","content":"needle cut"#.to_owned(),
            );
        }
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let path = dir.join(format!("{idx:03}.jsonl"));
        std::fs::write(&path, jsonl(&lines)).expect("write");
        files.push(SearchFile {
            path: path.to_str().expect("utf-8").to_owned(),
            depth: (idx % 3) as u32,
        });
    }
    // A deterministic shuffle: the order is the caller's, not the paths'.
    files.sort_by_key(|file| {
        let name = &file.path[file.path.len() - 9..];
        name.bytes().fold(7u64, |hash, byte| {
            hash.wrapping_mul(31).wrapping_add(u64::from(byte))
        })
    });
    files.push(SearchFile {
        path: dir
            .join("missing.jsonl")
            .to_str()
            .expect("utf-8")
            .to_owned(),
        depth: 0,
    });
    files
}

/// Returns every event of a run as text, plus the totals.
fn run(
    files: &[SearchFile],
    options: RunOptions,
    stop_after: Option<usize>,
) -> (Vec<String>, SearchTotals) {
    let searcher = searcher(Pattern::literal("needle"), Scope::default());
    run_with(&searcher, files, options, stop_after)
}

/// Returns every event of a run of `searcher` as text (see [`describe_event`]), plus the
/// totals; the consumer stops after `stop_after` events.
fn run_with(
    searcher: &pi_retrospect_search::Searcher,
    files: &[SearchFile],
    options: RunOptions,
    stop_after: Option<usize>,
) -> (Vec<String>, SearchTotals) {
    let mut events = Vec::new();
    let totals = search_files(searcher, files, &options, &mut |event| {
        events.push(describe_event(event));
        match stop_after {
            Some(n_events) if events.len() >= n_events => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        }
    });
    (events, totals)
}

/// Returns an event as one line: a hit with its place, flag and snippet, a warning, or a
/// file's end with its count.
fn describe_event(event: Event<'_>) -> String {
    match event {
        Event::Hit(hit) => format!(
            "hit {} {} {} {} {}",
            hit.path, hit.depth, hit.line_no, hit.is_on_active_branch, hit.snippet
        ),
        Event::Warning(warning) => format!(
            "warning {} {:?} {}",
            warning.path, warning.line_no, warning.message
        ),
        Event::FileDone(count) => format!("done {} {} {}", count.path, count.depth, count.n_hits),
    }
}

#[test]
fn results_come_in_the_callers_order_whatever_the_thread_count() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = store(dir.path(), 60);
    let options = |threads| RunOptions {
        mode: Mode::Hits,
        limit: None,
        max_per_file: None,
        threads,
    };
    let (serial, serial_totals) = run(&files, options(1), None);
    for threads in [2, 4, 0] {
        let (parallel, totals) = run(&files, options(threads), None);
        assert_eq!(parallel, serial, "{threads} threads");
        assert_eq!(totals, serial_totals);
    }
    // Every file ends with its `done`, in the order given.
    let done: Vec<&str> = serial
        .iter()
        .filter_map(|event| event.strip_prefix("done "))
        .map(|rest| rest.split(' ').next().unwrap_or_default())
        .collect();
    let expected: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
    assert_eq!(done, expected);
    let n_hits: u64 = (0..60).map(|idx| (idx % 4) as u64).sum();
    assert_eq!(
        serial_totals,
        SearchTotals {
            n_files_searched: 61,
            n_files_with_hits: 45,
            n_hits,
            n_bytes_searched: serial_totals.n_bytes_searched,
            is_limit_reached: false,
        }
    );
    // Twelve damaged lines and the missing file, each once, just before its file's `done`.
    assert_eq!(
        serial
            .iter()
            .filter(|event| event.starts_with("warning"))
            .count(),
        13
    );
    let missing = serial
        .iter()
        .position(|event| event.contains("missing.jsonl"))
        .expect("warned");
    assert!(
        serial[missing].contains("cannot open"),
        "{}",
        serial[missing]
    );
    assert!(serial[missing + 1].starts_with("done "));
}

/// Returns the hits of a run over `files` that delivers at most `limit` hits and at most
/// `max_per_file` of each file, as [`run`] writes them.
fn hits(
    files: &[SearchFile],
    limit: Option<u64>,
    max_per_file: Option<u64>,
    threads: usize,
) -> Vec<String> {
    let options = RunOptions {
        mode: Mode::Hits,
        limit,
        max_per_file,
        threads,
    };
    let (events, totals) = run(files, options, None);
    let hits: Vec<String> = events
        .into_iter()
        .filter(|event| event.starts_with("hit"))
        .collect();
    assert_eq!(totals.n_hits, hits.len() as u64);
    hits
}

/// `max_per_file` keeps each file's first hits in file order, and with a limit both hold.
#[test]
fn max_per_file_keeps_each_files_first_hits() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = store(dir.path(), 40);
    let everything = hits(&files, None, None, 1);
    let first_per_file = |n: usize| -> Vec<String> {
        let mut seen: std::collections::HashMap<&str, usize> = Default::default();
        everything
            .iter()
            .filter(|event| {
                let n_seen = seen
                    .entry(event.split(' ').nth(1).expect("path"))
                    .or_default();
                *n_seen += 1;
                *n_seen <= n
            })
            .cloned()
            .collect()
    };
    for threads in [1, 3] {
        for max in [1, 2] {
            let expected = first_per_file(max as usize);
            assert!(expected.len() < everything.len());
            assert_eq!(
                hits(&files, None, Some(max), threads),
                expected,
                "max {max}, {threads} threads"
            );
        }
        assert_eq!(
            hits(&files, Some(5), Some(1), threads),
            first_per_file(1)[..5].to_vec()
        );
    }
}

#[test]
fn a_limit_stops_the_run_after_that_many_hits() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = store(dir.path(), 60);
    let (everything, _) = run(
        &files,
        RunOptions {
            mode: Mode::Hits,
            limit: None,
            max_per_file: None,
            threads: 1,
        },
        None,
    );
    for threads in [1, 3] {
        for limit in [0, 1, 5, 17] {
            let (events, totals) = run(
                &files,
                RunOptions {
                    mode: Mode::Hits,
                    limit: Some(limit),
                    max_per_file: None,
                    threads,
                },
                None,
            );
            let hits: Vec<&String> = events
                .iter()
                .filter(|event| event.starts_with("hit"))
                .collect();
            let expected: Vec<&String> = everything
                .iter()
                .filter(|event| event.starts_with("hit"))
                .take(limit as usize)
                .collect();
            assert_eq!(hits, expected, "limit {limit}, {threads} threads");
            assert_eq!(totals.n_hits, limit);
            assert!(totals.is_limit_reached);
            // The run stops at the file that reached the limit.
            assert!(totals.n_files_searched < 61, "{totals:?}");
        }
    }
}

#[test]
fn counts_and_files_with_matches_agree_with_the_hits() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = store(dir.path(), 40);
    let done_lines = |mode| {
        let (events, totals) = run(
            &files,
            RunOptions {
                mode,
                limit: None,
                max_per_file: None,
                threads: 2,
            },
            None,
        );
        assert!(
            events
                .iter()
                .all(|event| !event.starts_with("hit") || mode == Mode::Hits)
        );
        let done: Vec<String> = events
            .into_iter()
            .filter(|event| event.starts_with("done"))
            .collect();
        (done, totals)
    };
    let (hits, hit_totals) = done_lines(Mode::Hits);
    let (counts, count_totals) = done_lines(Mode::Count);
    assert_eq!(counts, hits);
    assert_eq!(count_totals, hit_totals);
    let (with_matches, totals) = done_lines(Mode::FilesWithMatches);
    let expected: Vec<String> = hits
        .iter()
        .map(|line| match line.rsplit_once(' ') {
            Some((head, count)) if count != "0" => format!("{head} 1"),
            _ => line.clone(),
        })
        .collect();
    assert_eq!(with_matches, expected);
    assert_eq!(totals.n_hits, totals.n_files_with_hits);
}

#[test]
fn the_consumer_can_stop_the_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = store(dir.path(), 40);
    for threads in [1, 2] {
        let (events, totals) = run(
            &files,
            RunOptions {
                mode: Mode::Hits,
                limit: None,
                max_per_file: None,
                threads,
            },
            Some(3),
        );
        assert_eq!(events.len(), 3, "{threads} threads");
        assert!(!totals.is_limit_reached);
    }
}

#[test]
fn no_files_is_an_empty_run() {
    let (events, totals) = run(&[], RunOptions::default(), None);
    assert!(events.is_empty());
    assert_eq!(totals, SearchTotals::default());
}

#[test]
fn an_interrupt_from_another_party_stops_the_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = store(dir.path(), 200);
    let searcher = searcher(Pattern::literal("needle"), Scope::default());
    for threads in [1, 4] {
        let progress = Progress::default();
        let mut n_done = 0;
        search_files_with_progress(
            &searcher,
            &files,
            &RunOptions {
                mode: Mode::Hits,
                limit: None,
                max_per_file: None,
                threads,
            },
            &progress,
            &mut |event| {
                if let Event::FileDone(_) = event {
                    n_done += 1;
                    // As the MCP server does from its runtime when a call's budget is spent.
                    progress.interrupt();
                }
                ControlFlow::Continue(())
            },
        );
        assert!(progress.is_interrupted());
        assert_eq!(
            n_done, 1,
            "{threads} threads: files delivered after the interrupt"
        );
    }
}

/// Writes a session of `n_hits` user messages holding "needle" on a branch that is left at
/// the middle for a second branch from the first entry, so the flags of the first half are
/// off the active branch and those of the second half on it; returns the file.
fn many_hits(dir: &Path, name: &str, n_hits: usize) -> SearchFile {
    let mut lines = vec![user("root", None, "start")];
    let mut parent = "root".to_owned();
    for idx in 0..n_hits {
        if idx == n_hits / 2 {
            // The second half goes on below the root again: the first is abandoned.
            parent = "root".to_owned();
        }
        let id = format!("e{idx}");
        lines.push(user(
            &id,
            Some(&parent),
            &format!("needle number {idx} {}", "x".repeat(200)),
        ));
        parent = id;
    }
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let path = dir.join(name);
    std::fs::write(&path, jsonl(&lines)).expect("write");
    SearchFile {
        path: path.to_str().expect("utf-8").to_owned(),
        depth: 1,
    }
}

/// A file with more hits than a worker holds is read again as it is delivered: the events,
/// flags included, are those of searching the file whole, with limits and a consumer that
/// stops inside it.
#[test]
fn a_file_with_too_many_hits_to_hold_is_streamed_with_the_same_events() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut files = store(dir.path(), 6);
    // Over the 256 KiB a worker holds: about 2,000 hits of 400 bytes.
    files.insert(2, many_hits(dir.path(), "big.jsonl", 2_000));
    files.insert(5, many_hits(dir.path(), "big2.jsonl", 1_500));
    let searcher = searcher(Pattern::literal("needle"), Scope::default());
    // The reference: each file searched whole, one by one.
    let mut expected = Vec::new();
    for file in &files {
        let result = searcher.search_file(file, Mode::Hits, None);
        assert!(!result.is_deferred);
        expected.extend(
            result
                .hits
                .iter()
                .map(|hit| describe_event(Event::Hit(hit))),
        );
        expected.extend(
            result
                .warnings
                .iter()
                .map(|warning| describe_event(Event::Warning(warning))),
        );
        let count = pi_retrospect_search::FileCount {
            path: file.path.clone(),
            depth: file.depth,
            n_hits: result.n_hits,
        };
        expected.push(describe_event(Event::FileDone(&count)));
    }
    let big_flags: Vec<&String> = expected
        .iter()
        .filter(|event| event.contains("big.jsonl") && event.starts_with("hit"))
        .collect();
    assert_eq!(big_flags.len(), 2_000);
    assert!(big_flags[0].contains(" false needle"), "{}", big_flags[0]);
    assert!(
        big_flags[1_999].contains(" true needle"),
        "{}",
        big_flags[1_999]
    );
    let collect = |options: RunOptions, stop_after: Option<usize>| {
        run_with(&searcher, &files, options, stop_after)
    };
    let n_hits = expected
        .iter()
        .filter(|event| event.starts_with("hit"))
        .count() as u64;
    for threads in [1, 2, 4] {
        let options = RunOptions {
            mode: Mode::Hits,
            limit: None,
            max_per_file: None,
            threads,
        };
        let (events, totals) = collect(options, None);
        assert_eq!(events, expected, "{threads} threads");
        assert_eq!(totals.n_hits, n_hits);
        assert_eq!(totals.n_files_searched, files.len() as u64);
        // A limit that ends inside the big file stops there, as it does in a held file.
        let first_big = expected
            .iter()
            .position(|event| event.contains("big.jsonl"))
            .expect("the big file has hits");
        let n_before = expected[..first_big]
            .iter()
            .filter(|event| event.starts_with("hit"))
            .count();
        let (events, totals) = collect(
            RunOptions {
                limit: Some(n_before as u64 + 1_500),
                ..options
            },
            None,
        );
        let mut wanted: Vec<String> = expected[..first_big + 1_500].to_vec();
        wanted.push(format!("done {} 1 1500", files[2].path));
        assert_eq!(events, wanted, "limit, {threads} threads");
        assert!(totals.is_limit_reached);
        // A consumer that stops inside the big file gets no event after.
        let (events, _) = collect(options, Some(first_big + 10));
        assert_eq!(
            events,
            expected[..first_big + 10].to_vec(),
            "stop, {threads} threads"
        );
        // At most 1,200 hits of each file.
        let (events, _) = collect(
            RunOptions {
                max_per_file: Some(1_200),
                ..options
            },
            None,
        );
        let n_big = events
            .iter()
            .filter(|event| event.contains("big.jsonl") && event.starts_with("hit"))
            .count();
        assert_eq!(n_big, 1_200, "max per file, {threads} threads");
        assert!(events.contains(&format!("done {} 1 1200", files[2].path)));
    }
}

/// A search stopped early by a limit flags its hits by the whole file's active branch: a
/// hit on a branch abandoned after the point where the search stopped is not on it.
#[test]
fn a_limited_search_flags_by_the_whole_files_branch() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Longer than the first read (256 KiB), where the search stops.
    let file = many_hits(dir.path(), "s.jsonl", 3_000);
    let searcher = searcher(Pattern::literal("needle"), Scope::default());
    let result = searcher.search_file(&file, Mode::Hits, Some(1));
    assert_eq!(result.hits.len(), 1);
    assert!(!result.hits[0].is_on_active_branch);
}
