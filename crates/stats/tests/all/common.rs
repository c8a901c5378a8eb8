//! Shared helpers: session lines as Pi writes them, temp stores, and a report over a store.

#![allow(dead_code, reason = "each test file uses a different part")]

use std::path::Path;

use jiff::tz::TimeZone;
use pi_retrospect_core::{Listing, Session};
use pi_retrospect_stats::{
    FileScan, GroupKey, StatsOptions, StatsReport, prescan, stats, stats_with_prescans,
};
use pi_retrospect_testkit::{Block, Entry, Header, Message, Usage};
use pi_retrospect_walk::{Layout, Store, WalkOptions, list_stores};

/// Writes each `(relative path, lines)` under `root`, creating directories.
pub fn materialize(root: &Path, files: &[(&str, Vec<String>)]) {
    let store = pi_retrospect_testkit::Store::at(root);
    for (relative, lines) in files {
        store.write(relative, lines);
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

/// Returns the header of session `id` in `/work/app`, a fork of `parent` when given.
pub fn header(id: &str, timestamp: &str, parent: Option<&str>) -> String {
    let header = Header::new(id).timestamp(timestamp).cwd("/work/app");
    match parent {
        Some(parent) => header.parent_session(parent),
        None => header,
    }
    .to_string()
}

/// Returns a user message `hello`.
pub fn user(id: &str, parent: Option<&str>, timestamp: &str) -> String {
    Entry::message(Message::user("hello").timestamp(1))
        .id(id)
        .parent(parent)
        .at(timestamp)
        .to_string()
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
    let message = Message::assistant(&[Block::text("ok")])
        .api("anthropic-messages")
        .provider("anthropic")
        .model(model)
        .member("usage", &usage(tokens, 1, cost))
        .stop_reason("stop")
        .timestamp(1);
    Entry::message(message)
        .id(id)
        .parent(parent)
        .at(timestamp)
        .to_string()
}

/// Pi's usage object: `input` and `output` tokens, a `cost.total` when given.
pub fn usage(input: u64, output: u64, cost: Option<f64>) -> String {
    let usage = Usage::tokens(input, output);
    match cost {
        Some(total) => usage.cost(total),
        None => usage,
    }
    .to_string()
}
