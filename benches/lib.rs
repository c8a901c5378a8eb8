//! Shared helpers for the criterion benchmarks in `benches/`: the generated stores (the same
//! ones `cargo xtask bench` uses, under `target/bench-store/`) and typical inputs.

#![deny(missing_docs)]

use std::path::{Path, PathBuf};

use pi_retrospect_walk::{Layout, Store};
use xtask::bench::StoreKind;

/// The generator seed every benchmark store uses.
pub const SEED: u64 = 1;

/// Returns the workspace root (the parent of this package's directory).
pub fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map_or_else(|| manifest_dir.to_owned(), Path::to_owned)
}

/// Returns a benchmark store of `kind` and `size`, generating it on first use.
///
/// Panics when the store cannot be written: a benchmark without its input cannot run.
pub fn store(kind: StoreKind, size: u64) -> Store {
    let (root, _) = xtask::bench::ensure_store(&workspace_root(), kind, size, SEED)
        .unwrap_or_else(|error| panic!("cannot generate the benchmark store: {error:#}"));
    Store::resolve(&root, &workspace_root(), Layout::Projects)
        .unwrap_or_else(|warning| panic!("{}: {}", warning.path, warning.reason))
}

/// A typical Pi header line (no newline).
pub const HEADER_LINE: &str = r#"{"type":"session","version":3,"id":"01990d3e-8f2a-7c41-9b6e-3f1a2b4c5d6e","timestamp":"2026-09-01T10:00:00.000Z","cwd":"/home/ana/src/acme/parser-session/render-walker-index"}"#;

/// A forked session's header line (no newline), with `parentSession`.
pub const FORKED_HEADER_LINE: &str = r#"{"type":"session","version":3,"id":"01990d3e-8f2a-7c41-9b6e-3f1a2b4c5d6f","timestamp":"2026-09-01T10:00:00.000Z","cwd":"/home/ana/src/acme","parentSession":"/home/ana/.pi/agent/sessions/--home-ana-src-acme--/2026-08-31T09-00-00-000Z_01990d3e-8f2a-7c41-9b6e-3f1a2b4c5d6e.jsonl"}"#;
