//! `stats --by day` until the CLI has it: walks the stores given as arguments (Pi's default
//! layout), counts with this crate and prints the day table (or `--json`). Used by
//! `cargo xtask bench` to measure the speed target.
//!
//! Usage: `stats_by_day [--json] [--threads N] [--time-zone NAME] SESSIONS_ROOT...`

use std::io::Write;
use std::path::Path;

use jiff::tz::TimeZone;
use pi_retrospect_core::SessionRow;
use pi_retrospect_stats::{
    FileScan, GroupKey, PRESCAN_HEAD_BYTES, StatsOptions, prescan, stats_with_prescans,
};
use pi_retrospect_walk::{
    BodyReach, BodyReader, Head, Layout, Store, WalkOptions, list_stores_with, with_threads,
};

/// Scans every file of every tree on the walk's descriptor.
struct Prescans<'a> {
    options: &'a StatsOptions,
}

impl BodyReader for Prescans<'_> {
    type Kind = ();
    type Body = Box<FileScan>;

    fn plan(&self, _row: &SessionRow) -> Option<(BodyReach, ())> {
        Some((BodyReach::Tree, ()))
    }

    fn head_bytes(&self) -> usize {
        PRESCAN_HEAD_BYTES
    }

    fn read(&self, _kind: (), path: &str, file: &std::fs::File, head: Head<'_>) -> Box<FileScan> {
        prescan(path, file, head.bytes, head.is_whole, self.options)
    }
}

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let mut is_json = false;
    let mut threads = 0;
    let mut time_zone = TimeZone::system();
    let mut roots = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--json" => is_json = true,
            "--threads" => threads = args.next().and_then(|n| n.parse().ok()).unwrap_or(0),
            "--time-zone" => {
                let name = args.next().unwrap_or_default();
                match TimeZone::get(&name) {
                    Ok(zone) => time_zone = zone,
                    Err(error) => {
                        eprintln!("stats_by_day: {error}");
                        return std::process::ExitCode::from(2);
                    }
                }
            }
            _ => roots.push(arg),
        }
    }
    let Ok(cwd) = std::env::current_dir() else {
        eprintln!("stats_by_day: no current directory");
        return std::process::ExitCode::FAILURE;
    };
    let stores: Vec<Store> = roots
        .iter()
        .filter_map(|root| Store::resolve(Path::new(root), &cwd, Layout::Projects).ok())
        .collect();
    let report = with_threads(threads, || {
        let mut options = StatsOptions::new(time_zone);
        options.group_by = vec![GroupKey::Day];
        // As the command does it: each file scanned on the walk's descriptor.
        let reads = Prescans { options: &options };
        let (listing, prescans) = list_stores_with(&stores, &WalkOptions { threads: 0 }, &reads)?;
        let mut report = stats_with_prescans(&listing, options.clone(), prescans);
        report.warnings.extend(listing.warnings);
        Ok::<_, pi_retrospect_walk::WalkError>(report)
    });
    let report = match report {
        Ok(report) => report,
        Err(error) => {
            eprintln!("stats_by_day: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let written = if is_json {
        pi_retrospect_render::stats::write_json(&mut out, &report)
    } else {
        pi_retrospect_render::stats::write_table(&mut out, &report, &Default::default())
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("stats_by_day: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
