//! Shared helpers: session lines as Pi writes them, temp stores, and a report over a store.

#![allow(dead_code, reason = "each test file uses a different part")]

use std::path::Path;

use jiff::tz::TimeZone;
use pi_retrospect_core::{Listing, Session};
use pi_retrospect_stats::{
    FileScan, GroupKey, StatsOptions, StatsReport, prescan, stats, stats_with_prescans,
};
use pi_retrospect_walk::{Layout, Store, WalkOptions, list_stores};

/// Writes each `(relative path, lines)` under `root`, creating directories.
pub fn materialize(root: &Path, files: &[(&str, Vec<String>)]) {
    for (relative, lines) in files {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        let mut text = lines.join("\n");
        text.push('\n');
        std::fs::write(&path, text).expect("write");
    }
}

/// Lists the Pi-layout store at `root`.
pub fn listing(root: &Path) -> Listing {
    let store = Store::resolve(root, Path::new("/"), Layout::Projects).expect("store");
    list_stores(&[store], &WalkOptions { threads: 1 }).expect("walk")
}

/// Returns options grouped by `group_by`, periods in UTC.
pub fn options(group_by: &[GroupKey]) -> StatsOptions {
    let mut options = StatsOptions::new(TimeZone::UTC);
    options.group_by = group_by.to_vec();
    options
}

/// Returns the report on 1 thread and on 4, after checking that both are the same.
pub fn report(listing: &Listing, options: &StatsOptions) -> StatsReport {
    let on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool")
            .install(|| stats(listing, options.clone()))
    };
    let serial = on(1);
    assert_eq!(
        serial,
        on(4),
        "the report does not depend on the thread count"
    );
    // Files scanned on their own descriptor before the plan, from a head that holds the whole
    // file or only its start, give the same report as files the plan opens itself.
    for head_bytes in [40, 1 << 20] {
        let prescans = prescans(listing, options, head_bytes);
        assert_eq!(
            serial,
            stats_with_prescans(listing, options.clone(), prescans),
            "the report does not depend on prescans of {head_bytes} bytes"
        );
    }
    serial
}

/// Returns a prescan of every listed file, from a head of at most `head_bytes`.
fn prescans(
    listing: &Listing,
    options: &StatsOptions,
    head_bytes: usize,
) -> Vec<(String, Box<FileScan>)> {
    use std::os::unix::fs::FileExt;
    fn collect<'l>(sessions: &'l [Session], paths: &mut Vec<&'l str>) {
        for session in sessions {
            paths.push(&session.path);
            collect(&session.subagent_sessions, paths);
        }
    }
    let mut paths = Vec::new();
    collect(&listing.sessions, &mut paths);
    paths
        .into_iter()
        .filter_map(|path| {
            let file = std::fs::File::open(path).ok()?;
            let mut head = vec![0; head_bytes];
            let n_read = file.read_at(&mut head, 0).expect("read");
            let scan = prescan(path, &file, &head[..n_read], n_read < head_bytes, options);
            Some((path.to_owned(), scan))
        })
        .collect()
}

pub fn header(id: &str, timestamp: &str, parent: Option<&str>) -> String {
    match parent {
        Some(parent) => format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{timestamp}","cwd":"/work/app","parentSession":"{parent}"}}"#
        ),
        None => format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{timestamp}","cwd":"/work/app"}}"#
        ),
    }
}

pub fn user(id: &str, parent: Option<&str>, timestamp: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{},"timestamp":"{timestamp}","message":{{"role":"user","content":"hello","timestamp":1}}}}"#,
        json_id(parent)
    )
}

/// An assistant message with `tokens` input tokens and 1 output token at `cost`
/// (`None`: no `cost` object at all).
pub fn assistant(
    id: &str,
    parent: Option<&str>,
    timestamp: &str,
    model: &str,
    tokens: u64,
    cost: Option<f64>,
) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{},"timestamp":"{timestamp}","message":{{"role":"assistant","content":[{{"type":"text","text":"ok"}}],"api":"anthropic-messages","provider":"anthropic","model":"{model}","usage":{},"stopReason":"stop","timestamp":1}}}}"#,
        json_id(parent),
        usage(tokens, 1, cost)
    )
}

/// Pi's usage object: `input` and `output` tokens, a `cost.total` when given.
pub fn usage(input: u64, output: u64, cost: Option<f64>) -> String {
    let cost = match cost {
        Some(total) => format!(
            r#","cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":{total}}}"#
        ),
        None => String::new(),
    };
    format!(
        r#"{{"input":{input},"output":{output},"cacheRead":0,"cacheWrite":0,"totalTokens":{}{cost}}}"#,
        input + output
    )
}

fn json_id(id: Option<&str>) -> String {
    id.map_or("null".to_owned(), |id| format!(r#""{id}""#))
}
