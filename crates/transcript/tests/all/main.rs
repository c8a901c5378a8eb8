//! Integration tests of `pi-retrospect-transcript`: parsing, views, hostile files, the real Pi corpus and fuzzing.
//!
//! One test binary for the whole directory: each file is a module here, so the crate's
//! integration tests are compiled and linked once instead of once per file.

mod common;
mod edge_cases;
mod fuzz;
mod hostile;
mod parse;
mod pi_real;
mod views;
