//! Project automation behind `cargo xtask`: the synthetic fixture stores, the large generated
//! stores for benchmarks, the benchmark harness and the layering check of ARCHITECTURE.md's
//! table. The generators live in this library so
//! tests can check that the committed fixtures are exactly what the generator writes, and so
//! the criterion benches in `benches/` can generate the same stores.

#![deny(missing_docs)]

pub mod bench;
pub mod big_store;
pub mod fixtures;
pub mod gen_session;
pub mod layering;
