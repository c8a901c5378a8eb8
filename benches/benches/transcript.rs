//! Criterion benchmarks of reading one session with `pi-retrospect-transcript`: opening it
//! (every entry's envelope, the tree and the leaf), the active branch and the model context
//! (Pi's work when it resumes a session), and the `entries` and `inspect overview` views on the
//! parsed session. The session is about 8 MiB (roughly 600 entries), written by
//! `xtask::gen_session` (seed 1) into a temporary directory. `cargo xtask bench` measures the
//! same work on 128 MiB against Pi itself. Run with `cargo bench -p pi-retrospect-benches
//! --bench transcript`.

#![expect(
    missing_docs,
    reason = "criterion's macros generate undocumented public functions"
)]

use std::fs::File;
use std::hint::black_box;
use std::io::{BufWriter, Write};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pi_retrospect_benches::SEED;
use pi_retrospect_transcript::{
    EntriesFilter, InspectPageRequest, InspectView, Transcript, entries, inspect,
};

/// The generated session's target size.
const SESSION_BYTES: u64 = 8 << 20;

fn transcript(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("cannot make a temp dir: {error}"));
    let path = dir.path().join("session.jsonl");
    let written = File::create(&path).and_then(|file| {
        let mut out = BufWriter::new(file);
        xtask::gen_session::write_big_session(&mut out, SEED, SESSION_BYTES)?;
        out.flush()
    });
    if let Err(error) = written {
        panic!("cannot write {}: {error}", path.display());
    }
    let open = |path: &std::path::Path| {
        Transcript::open(path).unwrap_or_else(|error| panic!("cannot open the session: {error}"))
    };
    let session = open(&path);

    let mut group = c.benchmark_group("transcript 8 MiB");
    group.throughput(Throughput::Bytes(session.snapshot().bytes));
    group.bench_function("open (entries, tree, leaf)", |b| {
        b.iter(|| open(black_box(&path)));
    });
    group.bench_function("open + active branch + context", |b| {
        b.iter(|| {
            let session = open(black_box(&path));
            let branch = session.active_branch();
            (branch.len(), session.context().messages.len())
        });
    });
    group.throughput(Throughput::Elements(session.entries().len() as u64));
    group.bench_function("context of the parsed session", |b| {
        b.iter(|| black_box(&session).context());
    });
    group.bench_function("entries, every row with its text", |b| {
        let filter = EntriesFilter::default();
        b.iter(|| entries(black_box(&session), &filter).map(|rows| rows.len()));
    });
    group.bench_function("inspect overview, first page", |b| {
        let request = InspectPageRequest::new(InspectView::Overview);
        b.iter(|| inspect(black_box(&session), &request).map(|page| page.checkpoints.len()));
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    targets = transcript
}
criterion_main!(benches);
