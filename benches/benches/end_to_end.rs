//! Criterion benchmark of `list --json` end to end, in process: walk, nest, sort and render
//! the JSON document of a generated store of 1,000 and 10,000 sessions, on 1 thread and on
//! all cores. `cargo xtask bench` measures the same through the release binary against the
//! I/O floor. Run with `cargo bench -p pi-retrospect-benches --bench end_to_end`.

#![expect(
    missing_docs,
    reason = "criterion's macros generate undocumented public functions"
)]

use std::io;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use pi_retrospect_benches::store;
use pi_retrospect_walk::WalkOptions;
use xtask::bench::StoreKind;

fn list_json(c: &mut Criterion) {
    let mut group = c.benchmark_group("list --json");
    group.sample_size(10);
    for size in [1_000, 10_000] {
        let store = store(StoreKind::Big, size);
        for threads in [1, 0] {
            let label = if threads == 0 {
                "all threads"
            } else {
                "1 thread"
            };
            group.bench_with_input(
                BenchmarkId::new(format!("{size} sessions"), label),
                &threads,
                |b, &threads| {
                    b.iter(|| {
                        let listing = pi_retrospect_walk::list(&store, &WalkOptions { threads })
                            .expect("descriptors to spare");
                        pi_retrospect_render::write_json(&mut io::sink(), &listing)
                    });
                },
            );
        }
    }
    group.finish();
}

criterion_group! {
    name = end_to_end;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    targets = list_json
}
criterion_main!(end_to_end);
