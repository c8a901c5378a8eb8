//! Project automation behind `cargo xtask`: the synthetic fixture stores and, later, the
//! benchmark harness. The generators live in this library so tests can check that the
//! committed fixtures are exactly what the generator writes.

#![deny(missing_docs)]

pub mod fixtures;
