//! End-to-end tests of the `pi-retrospect` binary (and of `app` as its commands call it).
//!
//! One test binary for the whole directory: each file is a module here, so the crate's
//! integration tests are compiled and linked once instead of once per file.

mod app_layer;
mod cli;
mod common;
mod examples;
mod failures;
mod flows;
mod handoff;
mod hostile;
mod list_flags;
mod mcp;
mod mcp_load;
mod names;
mod pick;
mod read_commands;
mod search;
mod search_and_stats;
mod stats;
