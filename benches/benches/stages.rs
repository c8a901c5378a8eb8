//! Criterion benchmarks of each stage of `list` on its own: header parsing, the directory
//! walk, nesting and ordering, and rendering. Stores come from `xtask::big_store` (generated
//! under `target/bench-store/` on first use). Run with `cargo bench -p pi-retrospect-benches`.

#![expect(
    missing_docs,
    reason = "criterion's macros generate undocumented public functions"
)]

use std::hint::black_box;
use std::io;
use std::path::Path;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use pi_retrospect_benches::{FORKED_HEADER_LINE, HEADER_LINE, store};
use pi_retrospect_core::{HeaderFields, Listing, Session, SessionRow, nest, timestamp};
use pi_retrospect_walk::{WalkOptions, discover_session_files, list_session_file};
use xtask::bench::StoreKind;

fn header(c: &mut Criterion) {
    let mut group = c.benchmark_group("header");
    for (name, line) in [("typical", HEADER_LINE), ("forked", FORKED_HEADER_LINE)] {
        group.bench_with_input(BenchmarkId::new("parse", name), line, |b, line| {
            b.iter(|| pi_retrospect_header::parse_header(black_box(line.as_bytes())));
        });
    }
    let store = store(StoreKind::Big, 1_000);
    let (files, _) = discover_session_files(&store).expect("descriptors to spare");
    let path = Path::new(&files[0].path);
    group.bench_function("read_header (open, fstat, read, parse)", |b| {
        b.iter(|| pi_retrospect_header::read_header(black_box(path)));
    });
    group.finish();
}

fn walk(c: &mut Criterion) {
    let store = store(StoreKind::Big, 1_000);
    let mut group = c.benchmark_group("walk 1k");
    group.bench_function("discover_session_files", |b| {
        b.iter(|| discover_session_files(black_box(&store)));
    });
    let (files, _) = discover_session_files(&store).expect("descriptors to spare");
    group.bench_function("list_session_file, every file, serial", |b| {
        b.iter(|| files.iter().map(list_session_file).count());
    });
    group.finish();
}

fn row(path: String, second: u64) -> SessionRow {
    let text = format!(
        "2026-01-01T{:02}:{:02}:{:02}Z",
        second / 3600 % 24,
        second / 60 % 60,
        second % 60
    );
    SessionRow {
        path,
        header: HeaderFields {
            id: format!("id-{second}"),
            instant: timestamp::parse(&text).unwrap_or_default(),
            timestamp: text,
            cwd: "/w".to_owned(),
            parent_session_path: None,
        },
    }
}

fn nesting(c: &mut Criterion) {
    const N: u64 = 5_000;
    let mut group = c.benchmark_group("nesting 5000");
    // The worst case seen: one session whose container holds 5,000 runs.
    let runs: Vec<SessionRow> = (0..N)
        .map(|n| row(format!("/r/p/s/L/run-{n}/session.jsonl"), (n * 7919) % N))
        .collect();
    group.bench_function("nest: 1 session, 5000 runs", |b| {
        b.iter_batched(
            || runs.clone(),
            |runs| nest("/r/p/s", runs),
            criterion::BatchSize::LargeInput,
        );
    });
    // The same number of rows as 5,000 run-less top-level sessions, ordered.
    let sessions: Vec<Session> = (0..N)
        .map(|n| Session::from_row(row(format!("/r/p/s{n}.jsonl"), (n * 7919) % N)))
        .collect();
    group.bench_function("sort: 5000 top-level sessions", |b| {
        b.iter_batched(
            || Listing {
                sessions: sessions.clone(),
                warnings: Vec::new(),
            },
            |mut listing| {
                listing.sort();
                listing
            },
            criterion::BatchSize::LargeInput,
        );
    });
    group.finish();
}

fn render(c: &mut Criterion) {
    let listing = pi_retrospect_walk::list(&store(StoreKind::Big, 10_000), &WalkOptions::default())
        .expect("descriptors to spare");
    let mut group = c.benchmark_group("render 10k");
    group.bench_function("write_json", |b| {
        b.iter(|| pi_retrospect_render::write_json(&mut io::sink(), black_box(&listing)));
    });
    group.bench_function("write_text", |b| {
        b.iter(|| pi_retrospect_render::write_text(&mut io::sink(), black_box(&listing)));
    });
    group.finish();
}

criterion_group! {
    name = stages;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = header, walk, nesting, render
}
criterion_main!(stages);
