//! `io_floor ROOT [--threads N]`: the I/O floor that `cargo xtask bench` compares `list` with.
//!
//! It does only the unavoidable part of listing a store: it lists the project directories
//! and, below them, every directory, then opens every `*.jsonl` file and reads its first
//! 4097 bytes, in parallel on `N` rayon threads (`0`: one per core). No header is parsed,
//! nothing is sorted, nested or printed beyond one summary line on stderr. A `list` that
//! takes little more time than this is spending its time on the file system, not on itself.

use std::fs::{self, File};
use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, bail};
use rayon::prelude::*;

/// The bound `list` reads of each file: 4096 bytes of header line plus one.
const N_HEADER_BYTES: usize = 4097;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut root = None;
    let mut threads = 0;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--threads" => {
                threads = args
                    .next()
                    .context("--threads needs a value")?
                    .parse()
                    .context("--threads needs a number")?;
            }
            _ if root.is_none() => root = Some(PathBuf::from(arg)),
            _ => bail!("usage: io_floor ROOT [--threads N]"),
        }
    }
    let root = root.context("usage: io_floor ROOT [--threads N]")?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start the thread pool")?;
    let (n_files, n_bytes) = pool.install(|| floor(&root))?;
    eprintln!("io_floor: read {n_bytes} bytes from {n_files} files");
    Ok(())
}

/// Lists `root`'s directories in parallel, then reads the head of every `*.jsonl` in parallel.
fn floor(root: &std::path::Path) -> anyhow::Result<(usize, usize)> {
    let mut project_dirs = Vec::new();
    for entry in fs::read_dir(root).with_context(|| format!("cannot list {}", root.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            project_dirs.push(entry.path());
        }
    }
    let files: Vec<PathBuf> = project_dirs
        .par_iter()
        .flat_map_iter(|dir| {
            let mut found = Vec::new();
            collect_jsonl(dir.clone(), &mut found);
            found
        })
        .collect();
    let n_bytes = files
        .par_iter()
        .map(|path| {
            let mut buffer = [0u8; N_HEADER_BYTES];
            File::open(path)
                .and_then(|mut file| file.read(&mut buffer))
                .unwrap_or(0)
        })
        .sum();
    Ok((files.len(), n_bytes))
}

/// Collects every `*.jsonl` regular file under `dir`, depth first, without following links.
fn collect_jsonl(dir: PathBuf, found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect_jsonl(entry.path(), found);
        } else if kind.is_file() && entry.file_name().as_encoded_bytes().ends_with(b".jsonl") {
            found.push(entry.path());
        }
    }
}
