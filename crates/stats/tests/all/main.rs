//! Integration tests of `pi-retrospect-stats`: what each file counts, deduplication across forks and runs, forged usage and the real Pi corpus.
//!
//! One test binary for the whole directory: each file is a module here, so the crate's
//! integration tests are compiled and linked once instead of once per file.

mod common;
mod dedup;
mod forged;
mod pi_real;
mod property;
mod records;
mod runs;
