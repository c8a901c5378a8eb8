//! Integration tests of `pi-retrospect-search`: one file's hits, the fast path against decoding every line, long lines and runs over many files.
//!
//! One test binary for the whole directory: each file is a module here, so the crate's
//! integration tests are compiled and linked once instead of once per file.

mod common;
mod fast_path;
mod long_lines;
mod run;
mod search;
