//! The `stats` section of `cargo xtask bench`: `stats --by day` against `rg -c -F` over the
//! same files (within 1.5x of `rg`, peak RSS under 200 MB).
//!
//! Ours is the release binary, `pi-retrospect stats --by day --timezone UTC --threads N
//! --sessions-root ROOT` (a prebuilt one with `--list-bin`): the walk, the statistics by day
//! and the rendered table. `rg -c -F --no-ignore '"usage"' ROOT` reads every byte of the same
//! files and counts the lines holding the bytes our scan looks for (`--no-ignore`: the store
//! sits under `target/`, which the repository's `.gitignore` would hide from `rg`). Both run on
//! the largest generated store, on 1 thread and on all cores, once untimed (warm page cache),
//! then `--runs` interleaved rounds. A check comes first: the number of usage records we count
//! must equal the number of lines `rg` counts.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::{BenchOptions, StoreKind, ensure_store, median, millis, peak_rss_kb};

/// The target: our time over `rg`'s, at the best thread count of each.
const TARGET_RATIO: f64 = 1.5;
/// The memory target.
const TARGET_RSS_MB: f64 = 200.0;

/// One program at one thread count, with its timings.
struct Row {
    label: &'static str,
    threads: usize,
    command: Box<dyn Fn() -> Command>,
    wall_times: Vec<Duration>,
    /// User plus system time of each timed run, when `/usr/bin/time` reports it.
    cpu_times: Vec<Duration>,
    peak_rss_kb: Option<u64>,
}

/// Runs the section and returns its report.
pub(super) fn run(
    workspace: &Path,
    options: &BenchOptions,
    ours: &Path,
    n_cores: usize,
) -> anyhow::Result<String> {
    let size = options.sizes.iter().max().copied().unwrap_or(10_000);
    let (root, stats) = ensure_store(workspace, StoreKind::Big, size, options.seed)?;
    let ours = ours.to_path_buf();
    let Some(rg) = find_on_path("rg") else {
        return Ok(
            "## stats --by day against rg\n\nskipped: `rg` is not on PATH (`apt-get install -y ripgrep`)\n"
                .to_owned(),
        );
    };
    let n_counted = count_ours(&ours, &root)?;
    let n_lines = count_rg(&rg, &root)?;
    if n_counted != n_lines {
        bail!(
            "stats counted {n_counted} usage records but rg found {n_lines} lines with \"usage\""
        );
    }

    let mut thread_counts = vec![1];
    if n_cores > 1 {
        thread_counts.push(n_cores);
    }
    let mut rows = Vec::new();
    for &threads in &thread_counts {
        let (ours, root_for_ours) = (ours.clone(), root.clone());
        rows.push(Row {
            label: "stats --by day",
            threads,
            command: Box::new(move || {
                let mut command = Command::new(&ours);
                command
                    .args(["stats", "--by", "day", "--timezone", "UTC", "--threads"])
                    .arg(threads.to_string())
                    .arg("--sessions-root")
                    .arg(&root_for_ours);
                command
            }),
            wall_times: Vec::new(),
            cpu_times: Vec::new(),
            peak_rss_kb: None,
        });
        let (rg, root_for_rg) = (rg.clone(), root.clone());
        rows.push(Row {
            label: "rg -c -F",
            threads,
            command: Box::new(move || {
                let mut command = Command::new(&rg);
                command
                    .args([
                        "-c",
                        "-F",
                        "--no-ignore",
                        "-j",
                        &threads.to_string(),
                        "\"usage\"",
                    ])
                    .arg(&root_for_rg);
                command
            }),
            wall_times: Vec::new(),
            cpu_times: Vec::new(),
            peak_rss_kb: None,
        });
    }

    eprintln!(
        "measuring stats against rg: {} configurations x {} runs (warm cache) ...",
        rows.len(),
        options.n_runs
    );
    for row in &rows {
        time_once((row.command)())?;
    }
    for round in 0..options.n_runs {
        for offset in 0..rows.len() {
            let idx = (round + offset) % rows.len();
            let (elapsed, cpu) = time_once((rows[idx].command)())?;
            rows[idx].wall_times.push(elapsed);
            rows[idx].cpu_times.extend(cpu);
        }
    }
    for row in &mut rows {
        row.peak_rss_kb = peak_rss_kb((row.command)());
    }

    let n_files = stats.n_sessions + stats.n_runs;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## stats --by day against rg\n\n{size}-session store: {n_files} files, {} MB, {n_lines} lines with \"usage\" (both count the same); {n_cores} cores, {} timed runs per row, interleaved, warm page cache\n",
        stats.n_bytes / 1_000_000,
        options.n_runs
    );
    let _ = writeln!(
        out,
        "| program | threads | median ms | min ms | MB/s | median CPU ms (user + sys) | peak RSS MB |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for row in &rows {
        let median = median(&row.wall_times);
        let fastest = row.wall_times.iter().min().copied().unwrap_or(median);
        let rss = row
            .peak_rss_kb
            .map_or("?".to_owned(), |kb| format!("{:.1}", kb as f64 / 1024.0));
        let cpu = match row.cpu_times.is_empty() {
            true => "?".to_owned(),
            false => format!("{:.0}", millis(super::median(&row.cpu_times))),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {:.1} | {:.1} | {:.0} | {cpu} | {rss} |",
            row.label,
            row.threads,
            millis(median),
            millis(fastest),
            stats.n_bytes as f64 / 1_000_000.0 / median.as_secs_f64(),
        );
    }
    let best = |label: &str| {
        rows.iter()
            .filter(|row| row.label == label)
            .map(|row| median(&row.wall_times))
            .min()
    };
    let verdict = |is_met: bool| if is_met { "PASS" } else { "MISS" };
    let _ = writeln!(out, "\nTargets (ratios of medians):\n");
    if let (Some(ours), Some(rg)) = (best("stats --by day"), best("rg -c -F")) {
        let ratio = ours.as_secs_f64() / rg.as_secs_f64();
        let _ = writeln!(
            out,
            "- stats --by day, best thread count / rg -c -F, best thread count: {:.1} ms / {:.1} ms = {ratio:.2}x (target <= {TARGET_RATIO}x): {}",
            millis(ours),
            millis(rg),
            verdict(ratio <= TARGET_RATIO)
        );
    }
    // CPU time says how much work each does, whatever else the machine is running.
    let cpu = |label: &str| {
        rows.iter()
            .find(|row| row.label == label && row.threads == 1 && !row.cpu_times.is_empty())
            .map(|row| median(&row.cpu_times))
    };
    if let (Some(ours), Some(rg)) = (cpu("stats --by day"), cpu("rg -c -F")) {
        let _ = writeln!(
            out,
            "- for reference, CPU time on 1 thread (medians): {:.0} ms / {:.0} ms = {:.2}x",
            millis(ours),
            millis(rg),
            ours.as_secs_f64() / rg.as_secs_f64()
        );
    }
    if let Some(peak) = rows
        .iter()
        .filter(|row| row.label == "stats --by day")
        .filter_map(|row| row.peak_rss_kb)
        .max()
    {
        let megabytes = peak as f64 / 1024.0;
        let _ = writeln!(
            out,
            "- peak RSS of stats --by day: {megabytes:.1} MB (target < {TARGET_RSS_MB} MB): {}",
            verdict(megabytes < TARGET_RSS_MB)
        );
    }
    Ok(out)
}

/// Returns the first executable named `name` in `PATH`.
pub(super) fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

/// Returns how many usage records `stats --json` counts in the store.
fn count_ours(ours: &Path, root: &Path) -> anyhow::Result<u64> {
    let output = Command::new(ours)
        .args(["stats", "--json", "--timezone", "UTC", "--sessions-root"])
        .arg(root)
        .output()
        .context("cannot run pi-retrospect stats")?;
    if !output.status.success() {
        bail!("pi-retrospect stats failed on {}", root.display());
    }
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    report["total"]["nEntries"]
        .as_u64()
        .context("stats --json has no total.nEntries")
}

/// Returns the sum of `rg -c`'s per-file counts.
fn count_rg(rg: &Path, root: &Path) -> anyhow::Result<u64> {
    let output = Command::new(rg)
        .args(["-c", "-F", "--no-ignore", "\"usage\""])
        .arg(root)
        .output()
        .context("cannot run rg")?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            line.rsplit_once(':')
                .and_then(|(_, count)| count.parse::<u64>().ok())
                .with_context(|| format!("unexpected rg output line {line:?}"))
        })
        .sum()
}

/// Runs `command` once; returns its wall time and, through `/usr/bin/time` when it exists,
/// its user plus system time (the wrapper's own start-up falls on every program alike).
fn time_once(command: Command) -> anyhow::Result<(Duration, Option<Duration>)> {
    let time = Path::new("/usr/bin/time");
    let mut run = match time.exists() {
        true => {
            let mut timed = Command::new(time);
            timed.args(["-f", "%U %S"]).arg(command.get_program());
            timed.args(command.get_args());
            timed
        }
        false => command,
    };
    run.stdout(Stdio::null()).stderr(Stdio::piped());
    let started = Instant::now();
    let output = run
        .output()
        .with_context(|| format!("cannot run {:?}", run.get_program()))?;
    let elapsed = started.elapsed();
    if !output.status.success() {
        bail!("{run:?} failed: {}", output.status);
    }
    let cpu = String::from_utf8_lossy(&output.stderr)
        .lines()
        .last()
        .and_then(|line| {
            let mut seconds = line.split_whitespace().map(str::parse::<f64>);
            Some(seconds.next()?.ok()? + seconds.next()?.ok()?)
        })
        .map(Duration::from_secs_f64);
    Ok((elapsed, cpu))
}
