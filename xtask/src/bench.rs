//! `cargo xtask bench`: `list --json` against the I/O floor, side by side, with medians; then
//! opening one 128 MiB session against Pi itself (the `transcript` section, in
//! `bench/transcript.rs`); then `stats --by day` against `rg -c -F` (the `stats` section, in
//! `bench/stats.rs`); and counting hits of a pattern in the 10k store against ripgrep
//! (`bench/search.rs`). `--only list|transcript|stats|search|failures` runs one section.
//!
//! It builds the release binaries (`pi-retrospect` and `io_floor`), generates the benchmark
//! stores under `target/bench-store/` when they are missing, checks that `list` sees every
//! file of each store without a warning, and then runs every configuration several times,
//! interleaved (each round runs all configurations, starting at a different one), so that
//! the noise of a shared machine falls on all of them alike. The page cache is warm for
//! every program (each configuration runs once before timing); nothing here can drop it.
//!
//! The table: wall time (median and minimum) and sessions per second (every listed session,
//! top-level or run, counts) for `list --json` and for the floor at each store size, on 1
//! thread and on all cores, plus peak RSS, and, on the largest store, `list --long` and
//! `list --jsonl` (which read every session's body facts); then the targets of the
//! performance issues, each with its ratio and PASS or MISS.

mod failures;
mod search;
mod stats;
mod transcript;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::big_store::{self, StoreStats};

/// What the listing may cost over the I/O floor on the largest store (wall time).
const LIST_FLOOR_TARGET: f64 = 1.2;

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Timed runs per configuration (the median is reported).
    pub n_runs: usize,
    /// Top-level session counts of the realistic stores; the largest is compared to the floor.
    pub sizes: Vec<u64>,
    /// Runs of the one wide session, and sessions of its flat counterpart.
    pub n_wide_runs: u64,
    /// Generator seed.
    pub seed: u64,
    /// A prebuilt `pi-retrospect` to measure instead of building the workspace's (for
    /// before/after comparisons).
    pub list_binary: Option<PathBuf>,
    /// The sections to run, in this order.
    pub sections: Vec<Section>,
    /// The Node 22 binary for the Pi comparison (`PI_NODE`); by default the oracle cache's.
    pub pi_node: Option<PathBuf>,
    /// The directory holding `node_modules` with Pi's SDK (`ORACLE_CACHE`); by default
    /// `/tmp/oracle-cache`, where `/work/shared/oracle/setup.sh` installs it.
    pub oracle_cache: Option<PathBuf>,
}

/// One part of `cargo xtask bench`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// `list --json` on the generated stores against the I/O floor.
    List,
    /// Opening one large session (tree, leaf, active branch, context) against Pi.
    Transcript,
    /// `stats --by day` on the largest generated store against `rg -c -F`.
    Stats,
    /// Counting hits in the largest store against ripgrep.
    Search,
    /// `failures --count` on the largest store against `rg -c -F`.
    Failures,
}

impl Section {
    /// Returns the section named `name` (`list`, `transcript`, `stats` or `search`).
    pub fn from_name(name: &str) -> Option<Section> {
        match name {
            "list" => Some(Section::List),
            "transcript" => Some(Section::Transcript),
            "stats" => Some(Section::Stats),
            "search" => Some(Section::Search),
            "failures" => Some(Section::Failures),
            _ => None,
        }
    }
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            n_runs: 7,
            sizes: vec![1_000, 10_000],
            n_wide_runs: 5_000,
            seed: 1,
            list_binary: None,
            sections: vec![
                Section::List,
                Section::Transcript,
                Section::Stats,
                Section::Search,
                Section::Failures,
            ],
            pi_node: None,
            oracle_cache: None,
        }
    }
}

/// Which kind of store a benchmark store is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    /// [`big_store::write_big_store`].
    Big,
    /// [`big_store::write_wide_session`].
    Wide,
    /// [`big_store::write_flat_store`].
    Flat,
}

/// Returns the directory of a benchmark store under `target/bench-store`, generating it
/// first when it is missing or was written by a different generator or seed.
///
/// A marker file beside the store (not inside it, where the walk would see it) records what
/// was written; it is written last, so an interrupted generation is redone.
pub fn ensure_store(
    workspace: &Path,
    kind: StoreKind,
    size: u64,
    seed: u64,
) -> anyhow::Result<(PathBuf, StoreStats)> {
    let base = workspace.join("target").join("bench-store");
    let name = match kind {
        StoreKind::Big => format!("{size}"),
        StoreKind::Wide => format!("wide-{size}"),
        StoreKind::Flat => format!("flat-{size}"),
    };
    let root = base.join(&name);
    let marker = base.join(format!("{name}.done"));
    let expected_key = format!("generator 1 seed {seed}");
    if let Ok(text) = fs::read_to_string(&marker)
        && let Some((key, stats)) = text.split_once('\n')
        && key == expected_key
        && let Some(stats) = parse_stats(stats)
    {
        return Ok((root, stats));
    }
    if root.exists() {
        fs::remove_dir_all(&root).with_context(|| format!("cannot remove {}", root.display()))?;
    }
    eprintln!("generating {} ...", root.display());
    let started = Instant::now();
    let stats = match kind {
        StoreKind::Big => big_store::write_big_store(&root, size, seed),
        StoreKind::Wide => big_store::write_wide_session(&root, size, seed),
        StoreKind::Flat => big_store::write_flat_store(&root, size, seed),
    }
    .with_context(|| format!("cannot write {}", root.display()))?;
    eprintln!(
        "  {} sessions, {} runs, {} MB in {:.1} s",
        stats.n_sessions,
        stats.n_runs,
        stats.n_bytes / 1_000_000,
        started.elapsed().as_secs_f64()
    );
    fs::write(
        &marker,
        format!(
            "{expected_key}\n{} {} {} {}",
            stats.n_sessions, stats.n_runs, stats.n_projects, stats.n_bytes
        ),
    )?;
    Ok((root, stats))
}

fn parse_stats(text: &str) -> Option<StoreStats> {
    let numbers: Vec<u64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    match numbers[..] {
        [n_sessions, n_runs, n_projects, n_bytes] => Some(StoreStats {
            n_sessions,
            n_runs,
            n_projects,
            n_bytes,
        }),
        _ => None,
    }
}

/// One program run on one store with one thread count.
#[derive(Debug)]
struct Config {
    store_label: String,
    stats: StoreStats,
    program: Program,
    threads: usize,
    root: PathBuf,
    /// Wall time of each timed round, in round order (so rounds pair up across configs).
    wall_times: Vec<Duration>,
    /// User + system CPU time of each timed round, when `/proc` tells.
    cpu_times: Vec<Duration>,
    peak_rss_kb: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Program {
    List,
    Floor,
    /// `list --long`: headers plus every session's body facts (name, first message, last
    /// activity), from a warm summary cache (filled by the untimed warm-up run).
    Long,
    /// `list --long` with the summary cache emptied before every run: every body read whole.
    LongCold,
    /// `list --long --no-cache`: the facts read from each file's ends.
    LongNoCache,
    /// `list --jsonl`: the same body facts, one row per session, from a warm summary cache.
    Jsonl,
}

impl Program {
    fn label(self) -> &'static str {
        match self {
            Program::List => "list --json",
            Program::Floor => "I/O floor",
            Program::Long => "list --long",
            Program::LongCold => "list --long (cold cache)",
            Program::LongNoCache => "list --long --no-cache",
            Program::Jsonl => "list --jsonl",
        }
    }
}

/// The two binaries of the list section, and the summary cache the listings use.
struct Binaries {
    list: PathBuf,
    floor: PathBuf,
    /// `$XDG_CACHE_HOME` of every listing: a directory of the bench's own, never the
    /// developer's cache, outside the stores.
    cache_home: PathBuf,
}

impl Binaries {
    fn command(&self, config: &Config) -> Command {
        let mut command = match config.program {
            Program::List
            | Program::Long
            | Program::LongCold
            | Program::LongNoCache
            | Program::Jsonl => {
                let format = match config.program {
                    Program::Long | Program::LongCold => "--long",
                    Program::LongNoCache => "--long --no-cache",
                    Program::Jsonl => "--jsonl",
                    _ => "--json",
                };
                let mut command = Command::new(&self.list);
                command
                    .env("XDG_CACHE_HOME", &self.cache_home)
                    .env_remove("PI_RETROSPECT_NO_CACHE")
                    .arg("list")
                    .args(format.split(' '))
                    .arg("--sessions-root");
                command
            }
            Program::Floor => Command::new(&self.floor),
        };
        command
            .arg(&config.root)
            .arg("--threads")
            .arg(config.threads.to_string());
        command
    }
}

/// Runs the chosen sections and prints their tables (also written to
/// `target/bench-store/last-run.md`).
pub fn run(workspace: &Path, options: &BenchOptions) -> anyhow::Result<()> {
    let has_list = options.sections.contains(&Section::List);
    let has_transcript = options.sections.contains(&Section::Transcript);
    let has_stats = options.sections.contains(&Section::Stats);
    let has_search = options.sections.contains(&Section::Search)
        || options.sections.contains(&Section::Failures);
    if options.n_runs == 0
        || (!has_transcript && !has_stats && !has_search && (!has_list || options.sizes.is_empty()))
    {
        bail!("nothing to measure");
    }
    if has_list && options.sizes.is_empty() {
        bail!("--sizes is empty: nothing to list");
    }
    let mut targets = Vec::new();
    if has_list {
        targets.push(("xtask", "io_floor"));
    }
    if (has_list || has_search || has_stats) && options.list_binary.is_none() {
        targets.push(("cli", "pi-retrospect"));
    }
    if has_transcript {
        targets.push(("xtask", "transcript_open"));
    }
    let mut built = match targets.is_empty() {
        true => HashMap::new(),
        false => build(workspace, &targets)?,
    };
    let n_cores = std::thread::available_parallelism().map_or(1, usize::from);
    // The binary the list and search sections run: a prebuilt one, or the workspace's.
    let cli_binary = match &options.list_binary {
        Some(binary) => Some(binary.clone()),
        None => built.remove("pi-retrospect"),
    };
    let cli = || {
        cli_binary
            .clone()
            .context("cargo did not report the pi-retrospect binary")
    };

    let mut report = String::new();
    for section in &options.sections {
        if !report.is_empty() {
            report.push('\n');
        }
        match section {
            Section::List => {
                let binaries = Binaries {
                    list: cli()?,
                    floor: take(&mut built, "io_floor")?,
                    cache_home: workspace.join("target/bench-summary-cache"),
                };
                report.push_str(&run_list(workspace, options, &binaries, n_cores)?);
            }
            Section::Transcript => {
                let binary = take(&mut built, "transcript_open")?;
                report.push_str(&transcript::run(workspace, options, &binary, n_cores)?);
            }
            Section::Stats => report.push_str(&stats::run(workspace, options, &cli()?, n_cores)?),
            Section::Search => {
                report.push_str(&search::run(workspace, options, &cli()?, n_cores)?);
            }
            Section::Failures => {
                report.push_str(&failures::run(workspace, options, &cli()?, n_cores)?);
            }
        }
    }
    print!("{report}");
    let path = workspace.join("target/bench-store/last-run.md");
    fs::write(&path, &report).with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("(also written to {})", path.display());
    Ok(())
}

/// Removes and returns the path cargo reported for binary `name`.
fn take(built: &mut HashMap<String, PathBuf>, name: &str) -> anyhow::Result<PathBuf> {
    built
        .remove(name)
        .with_context(|| format!("cargo did not report the {name} binary"))
}

/// Runs the list section and returns its report.
fn run_list(
    workspace: &Path,
    options: &BenchOptions,
    binaries: &Binaries,
    n_cores: usize,
) -> anyhow::Result<String> {
    let mut thread_counts = vec![1];
    if n_cores > 1 {
        thread_counts.push(n_cores);
    }

    let mut configs = Vec::new();
    let largest = options.sizes.iter().max().copied().unwrap_or(0);
    for &size in &options.sizes {
        let (root, stats) = ensure_store(workspace, StoreKind::Big, size, options.seed)?;
        check_listing(binaries, &root, &stats)?;
        let mut programs = vec![Program::List, Program::Floor];
        if size == largest {
            // The views that read every session's body, against the header-only listing.
            programs.extend([
                Program::Long,
                Program::LongCold,
                Program::LongNoCache,
                Program::Jsonl,
            ]);
        }
        for program in programs {
            for &threads in &thread_counts {
                configs.push(new_config(
                    format!("{size}"),
                    &root,
                    stats,
                    program,
                    threads,
                ));
            }
        }
    }
    let n_wide = options.n_wide_runs;
    for (kind, label) in [
        (StoreKind::Wide, format!("1 session, {n_wide} runs")),
        (StoreKind::Flat, format!("{n_wide} sessions")),
    ] {
        let (root, stats) = ensure_store(workspace, kind, n_wide, options.seed)?;
        check_listing(binaries, &root, &stats)?;
        for &threads in &thread_counts {
            configs.push(new_config(
                label.clone(),
                &root,
                stats,
                Program::List,
                threads,
            ));
        }
    }

    eprintln!(
        "measuring {} configurations x {} runs (warm cache) ...",
        configs.len(),
        options.n_runs
    );
    for config in &configs {
        time_once(binaries, config)?;
    }
    for round in 0..options.n_runs {
        for offset in 0..configs.len() {
            let idx = (round + offset) % configs.len();
            let (elapsed, cpu) = time_once(binaries, &configs[idx])?;
            configs[idx].wall_times.push(elapsed);
            configs[idx].cpu_times.extend(cpu);
        }
    }
    for config in &mut configs {
        config.peak_rss_kb = peak_rss_kb(binaries.command(config));
    }
    Ok(report(&configs, options, n_cores))
}

fn new_config(
    store_label: String,
    root: &Path,
    stats: StoreStats,
    program: Program,
    threads: usize,
) -> Config {
    Config {
        store_label,
        stats,
        program,
        threads,
        root: root.to_owned(),
        wall_times: Vec::new(),
        cpu_times: Vec::new(),
        peak_rss_kb: None,
    }
}

/// Builds the `(package, binary)` targets in release mode and returns their paths by binary
/// name, as cargo reports them.
pub fn build(
    workspace: &Path,
    targets: &[(&str, &str)],
) -> anyhow::Result<HashMap<String, PathBuf>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("building release binaries ...");
    let mut command = Command::new(cargo);
    command.current_dir(workspace).args([
        "build",
        "--release",
        "--message-format=json-render-diagnostics",
    ]);
    let mut packages: Vec<&str> = targets.iter().map(|(package, _)| *package).collect();
    packages.sort_unstable();
    packages.dedup();
    for package in packages {
        command.args(["-p", package]);
    }
    for (_, binary) in targets {
        command.args(["--bin", binary]);
    }
    let output = command
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run cargo build")?;
    if !output.status.success() {
        bail!("cargo build failed");
    }
    let mut built = HashMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(executable) = message.get("executable").and_then(|value| value.as_str()) else {
            continue;
        };
        if let Some(name) = message
            .pointer("/target/name")
            .and_then(|value| value.as_str())
            && targets.iter().any(|(_, binary)| *binary == name)
        {
            built.insert(name.to_owned(), PathBuf::from(executable));
        }
    }
    Ok(built)
}

/// Fails unless `list --json` reports every file of the store and no warning.
fn check_listing(binaries: &Binaries, root: &Path, stats: &StoreStats) -> anyhow::Result<()> {
    let output = Command::new(&binaries.list)
        .args(["list", "--json", "--sessions-root"])
        .arg(root)
        .output()
        .context("cannot run pi-retrospect")?;
    if !output.status.success() {
        bail!("pi-retrospect list failed on {}", root.display());
    }
    let listing: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    fn count(sessions: &serde_json::Value) -> u64 {
        sessions.as_array().map_or(0, |sessions| {
            sessions
                .iter()
                .map(|session| 1 + count(&session["subagentSessions"]))
                .sum()
        })
    }
    let n_top = listing["sessions"].as_array().map_or(0, Vec::len) as u64;
    let n_total = count(&listing["sessions"]);
    let n_warnings = listing["warnings"].as_array().map_or(0, Vec::len);
    if n_top != stats.n_sessions || n_total != stats.n_sessions + stats.n_runs || n_warnings != 0 {
        bail!(
            "list on {} saw {n_top} sessions, {n_total} in all and {n_warnings} warnings; \
             the generator wrote {} sessions and {} runs",
            root.display(),
            stats.n_sessions,
            stats.n_runs
        );
    }
    Ok(())
}

fn time_once(binaries: &Binaries, config: &Config) -> anyhow::Result<(Duration, Option<Duration>)> {
    if config.program == Program::LongCold {
        // Untimed: the next run finds no summary cache and reads every body whole.
        match std::fs::remove_dir_all(binaries.cache_home.join("pi-retrospect")) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                bail!("cannot empty {}: {error}", binaries.cache_home.display())
            }
            _ => {}
        }
    }
    let mut command = binaries.command(config);
    command.stdout(Stdio::null()).stderr(Stdio::null());
    let cpu_before = children_cpu();
    let started = Instant::now();
    let status = command
        .status()
        .with_context(|| format!("cannot run {:?}", command.get_program()))?;
    let elapsed = started.elapsed();
    let cpu = cpu_before
        .zip(children_cpu())
        .map(|(before, after)| after.saturating_sub(before));
    if !status.success() {
        bail!("{command:?} failed: {status}");
    }
    Ok((elapsed, cpu))
}

/// Returns the user + system CPU time of every child this process has waited for, from
/// `cutime` and `cstime` in `/proc/self/stat` (clock ticks of 10 ms, Linux's `USER_HZ`).
/// Unlike wall time it hardly moves when other programs load the machine.
fn children_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces: the
    // first is field 3 (state), so cutime (16) and cstime (17) are the 14th and 15th.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let user: u64 = fields.get(13)?.parse().ok()?;
    let system: u64 = fields.get(14)?.parse().ok()?;
    Some(Duration::from_millis((user + system) * 10))
}

/// Returns the median of the per-round ratios `numerator[r] / denominator[r]`: the two
/// programs ran in the same round, so a moment of load falls on both.
fn paired_ratio(numerator: &[Duration], denominator: &[Duration]) -> Option<f64> {
    let mut ratios: Vec<f64> = numerator
        .iter()
        .zip(denominator)
        .filter(|(_, below)| !below.is_zero())
        .map(|(above, below)| above.as_secs_f64() / below.as_secs_f64())
        .collect();
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let middle = ratios.len() / 2;
    Some(if ratios.len() % 2 == 1 {
        ratios[middle]
    } else {
        (ratios[middle - 1] + ratios[middle]) / 2.0
    })
}

/// Returns the peak resident set of one run of `command`, in KiB.
///
/// Through `/usr/bin/time -f %M` when it exists; otherwise by polling the child's `VmHWM`
/// (its high-water mark, so the last reading before it exits is close to the peak).
fn peak_rss_kb(mut command: Command) -> Option<u64> {
    command.stdout(Stdio::null()).stderr(Stdio::null());
    let time = Path::new("/usr/bin/time");
    if time.exists() {
        let mut timed = Command::new(time);
        timed.args(["-f", "%M"]).arg(command.get_program());
        timed.args(command.get_args());
        let output = timed.stdout(Stdio::null()).output().ok()?;
        let text = String::from_utf8_lossy(&output.stderr);
        return text.lines().last()?.trim().parse().ok();
    }
    let mut child = command.spawn().ok()?;
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak = None;
    loop {
        if let Ok(text) = fs::read_to_string(&status_path)
            && let Some(line) = text.lines().find(|line| line.starts_with("VmHWM:"))
        {
            peak = line
                .split_whitespace()
                .nth(1)
                .and_then(|kb| kb.parse().ok())
                .or(peak);
        }
        if child.try_wait().ok()?.is_some() {
            return peak;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    // Invariant: every configuration has at least one timed run (`n_runs > 0` is checked).
    sorted[sorted.len() / 2]
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn report(configs: &[Config], options: &BenchOptions, n_cores: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "`cargo xtask bench`: {n_cores} cores, {} timed runs per row, interleaved, warm page cache\n",
        options.n_runs
    );
    let _ = writeln!(
        out,
        "| store (top-level sessions) | files | program | threads | median ms | min ms | sessions/s | peak RSS MB |"
    );
    let _ = writeln!(out, "|---|---:|---|---:|---:|---:|---:|---:|");
    for config in configs {
        let median = median(&config.wall_times);
        let fastest = config.wall_times.iter().min().copied().unwrap_or(median);
        let n_files = config.stats.n_sessions + config.stats.n_runs;
        let rss = config
            .peak_rss_kb
            .map_or("?".to_owned(), |kb| format!("{:.1}", kb as f64 / 1024.0));
        let _ = writeln!(
            out,
            "| {} | {n_files} | {} | {} | {:.1} | {:.1} | {:.0} | {rss} |",
            config.store_label,
            config.program.label(),
            config.threads,
            millis(median),
            millis(fastest),
            n_files as f64 / median.as_secs_f64(),
        );
    }

    let best = |label: &str, program: Program| -> Option<Duration> {
        configs
            .iter()
            .filter(|config| config.store_label == label && config.program == program)
            .map(|config| median(&config.wall_times))
            .min()
    };
    let at = |label: &str, threads: usize| -> Option<&Config> {
        configs.iter().find(|config| {
            config.store_label == label
                && config.program == Program::List
                && config.threads == threads
        })
    };
    let verdict = |is_met: bool| if is_met { "PASS" } else { "MISS" };
    let _ = writeln!(out, "\nTargets (ratios of medians):\n");

    let largest = options.sizes.iter().max().copied().unwrap_or(0).to_string();
    if let (Some(list), Some(floor)) = (
        best(&largest, Program::List),
        best(&largest, Program::Floor),
    ) {
        let ratio = list.as_secs_f64() / floor.as_secs_f64();
        let _ = writeln!(
            out,
            "- list {largest}, best thread count / I/O floor, best thread count: {:.1} ms / {:.1} ms = {ratio:.2}x (target <= {LIST_FLOOR_TARGET}x): {}",
            millis(list),
            millis(floor),
            verdict(ratio <= LIST_FLOOR_TARGET)
        );
    }
    // The same, paired: each round ran both programs, so the median of the per-round ratios
    // is what the load moves least; the CPU times' ratio is steadier still.
    for threads in configs
        .iter()
        .filter(|config| config.store_label == largest && config.program == Program::List)
        .map(|config| config.threads)
    {
        let of = |program: Program| {
            configs.iter().find(|config| {
                config.store_label == largest
                    && config.program == program
                    && config.threads == threads
            })
        };
        let (Some(list), Some(floor)) = (of(Program::List), of(Program::Floor)) else {
            continue;
        };
        let Some(ratio) = paired_ratio(&list.wall_times, &floor.wall_times) else {
            continue;
        };
        let cpu_note = paired_ratio(&list.cpu_times, &floor.cpu_times)
            .map(|cpu| format!("; CPU time (user + system), paired: {cpu:.2}x"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "- list {largest} / I/O floor, {threads} thread(s), paired (median of per-round ratios): {ratio:.2}x (target <= {LIST_FLOOR_TARGET}x): {}{cpu_note}",
            verdict(ratio <= LIST_FLOOR_TARGET)
        );
    }
    if options.sizes.len() >= 2 {
        let smallest = options.sizes.iter().min().copied().unwrap_or(0);
        let scale = options.sizes.iter().max().copied().unwrap_or(0) as f64 / smallest as f64;
        let limit = scale * 1.1;
        for config in configs
            .iter()
            .filter(|config| config.store_label == largest && config.program == Program::List)
        {
            if let Some(small) = at(&smallest.to_string(), config.threads) {
                let ratio = median(&config.wall_times).as_secs_f64()
                    / median(&small.wall_times).as_secs_f64();
                let _ = writeln!(
                    out,
                    "- list {largest} / list {smallest}, {} thread(s): {ratio:.2}x (target <= {limit:.0}x): {}",
                    config.threads,
                    verdict(ratio <= limit)
                );
            }
        }
    }
    for program in [
        Program::Long,
        Program::LongCold,
        Program::LongNoCache,
        Program::Jsonl,
    ] {
        for config in configs
            .iter()
            .filter(|config| config.store_label == largest && config.program == program)
        {
            if let Some(json) = at(&largest, config.threads) {
                let ratio = median(&config.wall_times).as_secs_f64()
                    / median(&json.wall_times).as_secs_f64();
                let _ = writeln!(
                    out,
                    "- {} {largest} / list --json {largest}, {} thread(s): {:.1} ms / {:.1} ms = {ratio:.2}x (target <= 2x): {}",
                    program.label(),
                    config.threads,
                    millis(median(&config.wall_times)),
                    millis(median(&json.wall_times)),
                    verdict(ratio <= 2.0)
                );
            }
        }
    }
    let peak = configs
        .iter()
        .filter(|config| config.store_label == largest && config.program == Program::List)
        .filter_map(|config| config.peak_rss_kb)
        .max();
    if let Some(peak) = peak {
        let megabytes = peak as f64 / 1024.0;
        let _ = writeln!(
            out,
            "- peak RSS of list {largest}: {megabytes:.1} MB (target < 64 MB): {}",
            verdict(megabytes < 64.0)
        );
    }
    let n_wide = options.n_wide_runs;
    let wide = format!("1 session, {n_wide} runs");
    let flat = format!("{n_wide} sessions");
    for config in configs
        .iter()
        .filter(|config| config.store_label == wide && config.program == Program::List)
    {
        if let Some(flat) = at(&flat, config.threads) {
            let ratio =
                median(&config.wall_times).as_secs_f64() / median(&flat.wall_times).as_secs_f64();
            let _ = writeln!(
                out,
                "- one session with {n_wide} runs / {n_wide} sessions, {} thread(s): {:.1} ms / {:.1} ms = {ratio:.2}x (target <= 2x): {}",
                config.threads,
                millis(median(&config.wall_times)),
                millis(median(&flat.wall_times)),
                verdict(ratio <= 2.0)
            );
        }
    }
    out
}
