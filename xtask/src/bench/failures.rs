//! The `failures` section of `cargo xtask bench`: `pi-retrospect failures --count` on the
//! generated 10k store against `rg -c -F --no-ignore '"isError":true' ROOT`, which reads every
//! byte of the same files and counts the lines holding the commonest failure's bytes. Both run
//! on all cores, once untimed (warm page cache), then `--runs` interleaved rounds; the table
//! gives medians and peak RSS against the targets (within 1.5x of `rg`, under 200 MB).

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::{BenchOptions, StoreKind, ensure_store, median, millis, peak_rss_kb};

/// What the target allows: our time over ripgrep's.
const TARGET_RATIO: f64 = 1.5;
/// The memory target.
const TARGET_RSS_MB: f64 = 200.0;

fn timed(mut command: Command) -> anyhow::Result<(Duration, String)> {
    let started = Instant::now();
    let output = command
        .stderr(Stdio::null())
        .output()
        .context("cannot run the benchmark command")?;
    let elapsed = started.elapsed();
    // `failures` exits 1 and `rg` 1 when nothing is found: still a measurement.
    if !matches!(output.status.code(), Some(0 | 1)) {
        bail!("{command:?} failed: {}", output.status);
    }
    Ok((
        elapsed,
        String::from_utf8_lossy(&output.stdout).into_owned(),
    ))
}

/// Runs the section and returns its report.
pub(super) fn run(
    workspace: &Path,
    options: &BenchOptions,
    cli: &Path,
    n_cores: usize,
) -> anyhow::Result<String> {
    let size = options.sizes.iter().max().copied().unwrap_or(10_000);
    let (root, _) = ensure_store(workspace, StoreKind::Big, size, options.seed)?;
    let ours = || {
        let mut command = Command::new(cli);
        command
            .args(["failures", "--count", "--sessions-root"])
            .arg(&root);
        command
    };
    let Some(rg) = super::stats::find_on_path("rg") else {
        return Ok("## failures --count against rg\n\nskipped: `rg` is not on PATH\n".to_owned());
    };
    let theirs = || {
        let mut command = Command::new(&rg);
        command
            .args(["-c", "-F", "--no-ignore", "\"isError\":true"])
            .arg(&root);
        command
    };
    let (_, our_count) = timed(ours())?;
    let (_, rg_lines) = timed(theirs())?;
    let n_rg: u64 = rg_lines
        .lines()
        .filter_map(|line| line.rsplit(':').next()?.trim().parse::<u64>().ok())
        .sum();
    let mut our_times = Vec::new();
    let mut rg_times = Vec::new();
    for round in 0..options.n_runs {
        if round % 2 == 0 {
            our_times.push(timed(ours())?.0);
            rg_times.push(timed(theirs())?.0);
        } else {
            rg_times.push(timed(theirs())?.0);
            our_times.push(timed(ours())?.0);
        }
    }
    let our_rss = peak_rss_kb(ours()).map_or(f64::NAN, |kb| kb as f64 / 1024.0);
    let (ours_ms, rg_ms) = (millis(median(&our_times)), millis(median(&rg_times)));
    let ratio = ours_ms / rg_ms;
    let mut report = String::new();
    writeln!(
        report,
        "## failures --count against rg -c -F ({size} store, {n_cores} cores)\n"
    )?;
    writeln!(report, "| program | median ms | found | peak RSS MB |")?;
    writeln!(report, "|---|---:|---:|---:|")?;
    writeln!(
        report,
        "| failures --count | {ours_ms:.1} | {} failures | {our_rss:.1} |",
        our_count.trim()
    )?;
    writeln!(
        report,
        "| rg -c -F '\"isError\":true' | {rg_ms:.1} | {n_rg} lines | |"
    )?;
    let verdict = |is_met: bool| if is_met { "PASS" } else { "MISS" };
    writeln!(
        report,
        "\nratio {ratio:.2} (target {TARGET_RATIO}): {}; RSS target {TARGET_RSS_MB} MB: {}",
        verdict(ratio <= TARGET_RATIO),
        verdict(our_rss < TARGET_RSS_MB)
    )?;
    Ok(report)
}
