//! Large synthetic session stores for benchmarks (`cargo xtask fixtures --big N`).
//!
//! [`write_big_store`] lays out a store the way Pi and pi-subagents do: `N` top-level
//! sessions over about `N / 50` project directories `--<slug>--`, about 30% of them with one
//! to five subagent runs at `<project>/<stem>/<launch-uuid>/run-<n>/session.jsonl`. Every file
//! starts with a 150-300 byte header and continues with a realistic body (a system prompt,
//! user/assistant/tool-result turns chained by `parentId`, model and thinking-level changes,
//! usage, labels, compactions), 5 to 200 entries and a few KB to a few hundred KB per file, so
//! that both header-only listing and full-body work can be benchmarked.
//!
//! [`write_wide_session`] writes one session with thousands of runs under one launch, the
//! worst case for nesting. Everything is deterministic for a seed: a small xorshift generator,
//! no `rand` crate, fixed epoch. Generated stores live under `target/` and are never committed.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// A small, fast, deterministic pseudo-random generator (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Returns a generator for `seed` (any value, including 0).
    pub fn new(seed: u64) -> Rng {
        // splitmix64 of the seed, so that nearby seeds give unrelated streams and 0 is fine.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    /// Returns the next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Returns a value in `low..=high`.
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.next_u64() % (high - low + 1)
    }

    /// Returns true with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    /// Returns a value in `low..=high` drawn log-uniformly (small values are more common).
    pub fn log_range(&mut self, low: u64, high: u64) -> u64 {
        let fraction = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let value = (low as f64) * ((high as f64) / (low as f64)).powf(fraction);
        (value as u64).clamp(low, high)
    }

    /// Returns one element of `items`.
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next_u64() % items.len() as u64) as usize]
    }

    /// Returns a UUID-shaped string (version 7 layout, random bits).
    pub fn uuid(&mut self) -> String {
        let high = self.next_u64();
        let low = self.next_u64();
        format!(
            "{:08x}-{:04x}-7{:03x}-{:04x}-{:012x}",
            high >> 32,
            (high >> 16) & 0xffff,
            high & 0xfff,
            0x8000 | ((low >> 48) & 0x3fff),
            low & 0xffff_ffff_ffff
        )
    }

    /// Returns an 8-character hex entry id, as Pi writes them.
    pub fn entry_id(&mut self) -> String {
        format!("{:08x}", self.next_u64() >> 32)
    }
}

/// What a generated store holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Top-level sessions written.
    pub n_sessions: u64,
    /// Subagent runs written.
    pub n_runs: u64,
    /// Project directories written.
    pub n_projects: u64,
    /// Bytes written across all files.
    pub n_bytes: u64,
}

/// How large the bodies of generated files are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodySize {
    /// 5 to 200 entries (log-uniform), a few KB to a few hundred KB per file.
    Realistic,
    /// 5 to 12 entries: for stores whose point is their shape, not their bytes.
    Small,
}

/// Seconds from 1970 to 2026-01-01T00:00:00Z, the generated history's start.
const EPOCH_2026: u64 = 1_767_225_600;

/// Writes a store of `n_sessions` top-level sessions under `root` (created if missing).
///
/// About `n_sessions / 50` project directories, about 30% of sessions with 1-5 runs, headers
/// of 150-300 bytes and [`BodySize::Realistic`] bodies. Deterministic for `seed`.
pub fn write_big_store(root: &Path, n_sessions: u64, seed: u64) -> io::Result<StoreStats> {
    let mut rng = Rng::new(seed);
    let n_projects = (n_sessions / 50).max(1);
    let projects: Vec<Project> = (0..n_projects)
        .map(|idx| Project::new(idx, &mut rng))
        .collect();
    let mut stats = StoreStats {
        n_projects,
        ..StoreStats::default()
    };
    for project in &projects {
        fs::create_dir_all(root.join(&project.dir_name))?;
    }
    // Sessions start about every 4 minutes over the store's history, in no project order.
    let mut clock = EPOCH_2026 * 1000;
    for _ in 0..n_sessions {
        clock += rng.range(1_000, 480_000);
        let project = &projects[(rng.next_u64() % n_projects) as usize];
        let id = rng.uuid();
        let stem = format!("{}_{id}", file_timestamp(clock));
        let project_dir = root.join(&project.dir_name);
        let parent_session = rng.chance(8).then(|| {
            format!(
                "{}/{}/{stem}-origin.jsonl",
                root.display(),
                project.dir_name
            )
        });
        stats.n_bytes += write_session_file(
            &project_dir.join(format!("{stem}.jsonl")),
            &Header {
                id: &id,
                millis: clock,
                cwd: &project.cwd,
                parent_session: parent_session.as_deref(),
            },
            BodySize::Realistic,
            &mut rng,
        )?;
        stats.n_sessions += 1;
        if rng.chance(30) {
            let n_runs = rng.range(1, 5);
            let n_launches = if n_runs > 2 && rng.chance(40) { 2 } else { 1 };
            let launches: Vec<String> = (0..n_launches).map(|_| rng.uuid()).collect();
            for run in 0..n_runs {
                let launch = &launches[(run % n_launches) as usize];
                let run_dir = project_dir
                    .join(&stem)
                    .join(launch)
                    .join(format!("run-{run}"));
                fs::create_dir_all(&run_dir)?;
                let run_millis = clock + rng.range(5_000, 600_000);
                let run_id = rng.uuid();
                stats.n_bytes += write_session_file(
                    &run_dir.join("session.jsonl"),
                    &Header {
                        id: &run_id,
                        millis: run_millis,
                        cwd: &project.cwd,
                        parent_session: None,
                    },
                    BodySize::Realistic,
                    &mut rng,
                )?;
                stats.n_runs += 1;
            }
        }
    }
    Ok(stats)
}

/// Writes one project with one session that has `n_runs` runs under a single launch, under
/// `root` (created if missing), with [`BodySize::Small`] bodies.
pub fn write_wide_session(root: &Path, n_runs: u64, seed: u64) -> io::Result<StoreStats> {
    let mut rng = Rng::new(seed);
    let project = Project::new(0, &mut rng);
    let project_dir = root.join(&project.dir_name);
    let millis = EPOCH_2026 * 1000;
    let id = rng.uuid();
    let stem = format!("{}_{id}", file_timestamp(millis));
    fs::create_dir_all(&project_dir)?;
    let mut stats = StoreStats {
        n_projects: 1,
        n_sessions: 1,
        ..StoreStats::default()
    };
    stats.n_bytes += write_session_file(
        &project_dir.join(format!("{stem}.jsonl")),
        &Header {
            id: &id,
            millis,
            cwd: &project.cwd,
            parent_session: None,
        },
        BodySize::Small,
        &mut rng,
    )?;
    let launch_dir = project_dir.join(&stem).join(rng.uuid());
    for run in 0..n_runs {
        let run_dir = launch_dir.join(format!("run-{run}"));
        fs::create_dir_all(&run_dir)?;
        let run_id = rng.uuid();
        stats.n_bytes += write_session_file(
            &run_dir.join("session.jsonl"),
            &Header {
                id: &run_id,
                millis: millis + 1_000 + rng.range(0, 3_600_000),
                cwd: &project.cwd,
                parent_session: None,
            },
            BodySize::Small,
            &mut rng,
        )?;
        stats.n_runs += 1;
    }
    Ok(stats)
}

/// Writes `n_sessions` run-less sessions over `n_sessions / 50` projects under `root`, with
/// [`BodySize::Small`] bodies: the counterpart of [`write_wide_session`] with as many files.
pub fn write_flat_store(root: &Path, n_sessions: u64, seed: u64) -> io::Result<StoreStats> {
    let mut rng = Rng::new(seed);
    let n_projects = (n_sessions / 50).max(1);
    let projects: Vec<Project> = (0..n_projects)
        .map(|idx| Project::new(idx, &mut rng))
        .collect();
    for project in &projects {
        fs::create_dir_all(root.join(&project.dir_name))?;
    }
    let mut stats = StoreStats {
        n_projects,
        ..StoreStats::default()
    };
    let mut clock = EPOCH_2026 * 1000;
    for _ in 0..n_sessions {
        clock += rng.range(1_000, 480_000);
        let project = &projects[(rng.next_u64() % n_projects) as usize];
        let id = rng.uuid();
        let path = root
            .join(&project.dir_name)
            .join(format!("{}_{id}.jsonl", file_timestamp(clock)));
        stats.n_bytes += write_session_file(
            &path,
            &Header {
                id: &id,
                millis: clock,
                cwd: &project.cwd,
                parent_session: None,
            },
            BodySize::Small,
            &mut rng,
        )?;
        stats.n_sessions += 1;
    }
    Ok(stats)
}

/// One project directory and the cwd its sessions record.
struct Project {
    dir_name: String,
    cwd: String,
}

impl Project {
    /// Returns project `idx`: a cwd of 28-178 bytes, so headers land in 150-300 bytes.
    fn new(idx: u64, rng: &mut Rng) -> Project {
        let owner = rng.pick(&["ana", "bob", "chen", "dmitri", "eve", "farah"]);
        let mut cwd = format!("/home/{owner}/src/{}", rng.pick(ORGS));
        let target_len = rng.range(28, 170) as usize;
        while cwd.len() < target_len {
            cwd.push('/');
            cwd.push_str(rng.pick(WORDS));
        }
        cwd.push_str(&format!("-{idx}"));
        // Pi's slug: the leading separator dropped, separators and colons replaced by `-`.
        let slug: String = cwd[1..]
            .chars()
            .map(|c| {
                if matches!(c, '/' | '\\' | ':') {
                    '-'
                } else {
                    c
                }
            })
            .collect();
        Project {
            dir_name: format!("--{slug}--"),
            cwd,
        }
    }
}

/// The values of one header line.
struct Header<'a> {
    id: &'a str,
    millis: u64,
    cwd: &'a str,
    parent_session: Option<&'a str>,
}

/// Writes one session file (header, then body) and returns its size in bytes.
fn write_session_file(
    path: &Path,
    header: &Header<'_>,
    size: BodySize,
    rng: &mut Rng,
) -> io::Result<u64> {
    let mut out = CountingWriter {
        inner: BufWriter::with_capacity(64 * 1024, fs::File::create(path)?),
        n_bytes: 0,
    };
    let mut line = format!(
        r#"{{"type":"session","version":3,"id":"{}","timestamp":"{}","cwd":"{}""#,
        header.id,
        iso_timestamp(header.millis),
        json_escape(header.cwd)
    );
    // A fork's lineage is kept only while the header stays within 300 bytes.
    if let Some(parent) = header.parent_session
        && line.len() + parent.len() + 20 <= 300
    {
        line.push_str(&format!(r#","parentSession":"{}""#, json_escape(parent)));
    }
    line.push_str("}\n");
    out.write_all(line.as_bytes())?;
    write_body(&mut out, header, size, rng)?;
    out.inner.flush()?;
    Ok(out.n_bytes)
}

/// Writes the entries after the header: a system prompt, then turns chained by `parentId`.
fn write_body(
    out: &mut dyn Write,
    header: &Header<'_>,
    size: BodySize,
    rng: &mut Rng,
) -> io::Result<()> {
    let n_entries = match size {
        BodySize::Realistic => rng.log_range(5, 200),
        BodySize::Small => rng.range(5, 12),
    };
    let mut millis = header.millis;
    let mut parent: Option<String> = None;
    let mut model = rng.pick(MODELS);
    let mut n_written = 0;
    while n_written < n_entries {
        millis += rng.range(200, 90_000);
        let id = rng.entry_id();
        let parent_json = match &parent {
            Some(parent) => format!(r#""{parent}""#),
            None => "null".to_owned(),
        };
        let base = format!(
            r#""id":"{id}","parentId":{parent_json},"timestamp":"{}""#,
            iso_timestamp(millis)
        );
        if n_written == 0 {
            writeln!(
                out,
                r#"{{"type":"message",{base},"message":{{"role":"system","content":"","sections":{{"preamble":"{}","tools":"{}","cwd":"{}"}},"toolsAdded":[{}],"timestamp":{millis}}}}}"#,
                prose(rng, 60, 200),
                prose(rng, 40, 120),
                json_escape(header.cwd),
                TOOLS
                    .iter()
                    .map(|tool| format!(
                        r#"{{"name":"{tool}","description":"{}","parameters":{{"type":"object"}}}}"#,
                        prose(rng, 8, 30)
                    ))
                    .collect::<Vec<_>>()
                    .join(",")
            )?;
        } else {
            match rng.range(0, 99) {
                0..=2 => {
                    model = rng.pick(MODELS);
                    writeln!(
                        out,
                        r#"{{"type":"model_change",{base},"provider":"anthropic","modelId":"{model}"}}"#
                    )?;
                }
                3..=4 => writeln!(
                    out,
                    r#"{{"type":"thinking_level_change",{base},"thinkingLevel":"{}"}}"#,
                    rng.pick(&["off", "low", "medium", "high"])
                )?,
                5..=6 => writeln!(
                    out,
                    r#"{{"type":"usage",{base},"kind":"cache_warm","provider":"anthropic","model":"{model}","usage":{}}}"#,
                    usage(rng)
                )?,
                7 => writeln!(
                    out,
                    r#"{{"type":"label",{base},"targetId":"{}","label":"checkpoint-{n_written}"}}"#,
                    parent.as_deref().unwrap_or(&id)
                )?,
                8 => writeln!(
                    out,
                    r#"{{"type":"compaction",{base},"summary":"{}","firstKeptEntryId":"{id}","tokensBefore":{}}}"#,
                    prose(rng, 40, 300),
                    rng.range(20_000, 180_000)
                )?,
                9 => writeln!(
                    out,
                    r#"{{"type":"session_info",{base},"name":"{}"}}"#,
                    prose(rng, 2, 6)
                )?,
                10..=34 => writeln!(
                    out,
                    r#"{{"type":"message",{base},"message":{{"role":"user","content":"{}","timestamp":{millis}}}}}"#,
                    prose(rng, 4, 80)
                )?,
                35..=69 => {
                    let call = format!("toolu_{:016x}", rng.next_u64());
                    writeln!(
                        out,
                        r#"{{"type":"message",{base},"message":{{"role":"assistant","content":[{{"type":"text","text":"{}"}},{{"type":"toolCall","id":"{call}","name":"{}","arguments":{{"path":"src/{}.rs"}}}}],"api":"anthropic-messages","provider":"anthropic","model":"{model}","usage":{},"stopReason":"toolUse","timestamp":{millis}}}}}"#,
                        prose(rng, 10, 150),
                        rng.pick(TOOLS),
                        rng.pick(WORDS),
                        usage(rng)
                    )?;
                }
                _ => {
                    // Tool output is where most of a transcript's bytes are: file contents and
                    // command output, occasionally large.
                    let n_lines = if rng.chance(10) {
                        rng.range(100, 400)
                    } else {
                        rng.range(1, 40)
                    };
                    writeln!(
                        out,
                        r#"{{"type":"message",{base},"message":{{"role":"toolResult","toolCallId":"toolu_{:016x}","toolName":"{}","content":[{{"type":"text","text":"{}"}}],"isError":{},"timestamp":{millis}}}}}"#,
                        rng.next_u64(),
                        rng.pick(TOOLS),
                        code_lines(rng, n_lines),
                        rng.chance(5)
                    )?;
                }
            }
        }
        parent = Some(id);
        n_written += 1;
    }
    Ok(())
}

fn usage(rng: &mut Rng) -> String {
    let input = rng.range(10, 5_000);
    let output = rng.range(10, 4_000);
    let cache_read = rng.range(0, 150_000);
    format!(
        r#"{{"input":{input},"output":{output},"cacheRead":{cache_read},"cacheWrite":0,"totalTokens":{},"cost":{{"input":0.001,"output":0.002,"cacheRead":0.003,"cacheWrite":0,"total":0.006}}}}"#,
        input + output + cache_read
    )
}

/// Returns `low..=high` words of prose (JSON-safe: no quotes or backslashes).
fn prose(rng: &mut Rng, low: u64, high: u64) -> String {
    let n_words = rng.range(low, high);
    let mut text = String::with_capacity(n_words as usize * 7);
    for idx in 0..n_words {
        if idx > 0 {
            text.push(if rng.chance(6) { '.' } else { ' ' });
            if text.ends_with('.') {
                text.push(' ');
            }
        }
        text.push_str(rng.pick(WORDS));
    }
    text
}

/// Returns `n_lines` of code-like text joined by escaped newlines.
fn code_lines(rng: &mut Rng, n_lines: u64) -> String {
    let mut text = String::new();
    for line in 0..n_lines {
        if line > 0 {
            text.push_str("\\n");
        }
        let indent = rng.range(0, 3) as usize * 4;
        text.push_str(&" ".repeat(indent));
        text.push_str(&format!(
            "let {} = {}({}, {});",
            rng.pick(WORDS),
            rng.pick(WORDS),
            rng.pick(WORDS),
            rng.range(0, 9999)
        ));
    }
    text
}

fn json_escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Returns `2026-09-01T10:00:00.000Z` for Unix milliseconds (core's formatter, so the
/// generators share one calendar routine).
pub fn iso_timestamp(millis: u64) -> String {
    pi_retrospect_core::Timestamp {
        seconds: i64::try_from(millis / 1000).unwrap_or(i64::MAX),
        nanos: u32::try_from(millis % 1000).unwrap_or(0) * 1_000_000,
    }
    .to_string()
}

/// Returns Pi's file-name timestamp `2026-09-01T10-00-00-000Z` for Unix milliseconds.
fn file_timestamp(millis: u64) -> String {
    iso_timestamp(millis).replace([':', '.'], "-")
}

/// Returns `text` as a JSON string literal, quotes included.
pub fn json_quote(text: &str) -> String {
    // Serialising a string cannot fail.
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

/// Counts the bytes that pass through, for [`StoreStats::n_bytes`].
struct CountingWriter<W: Write> {
    inner: W,
    n_bytes: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let n_written = self.inner.write(bytes)?;
        self.n_bytes += n_written as u64;
        Ok(n_written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

const ORGS: &[&str] = &["acme", "globex", "initech", "umbrella", "hooli", "vandelay"];
const MODELS: &[&str] = &["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"];
const TOOLS: &[&str] = &["read", "bash", "edit", "write", "grep", "find"];
const WORDS: &[&str] = &[
    "parser", "session", "render", "walker", "index", "buffer", "header", "config", "cache",
    "thread", "error", "result", "value", "token", "stream", "writer", "reader", "module",
    "handle", "record", "entry", "field", "branch", "commit", "deploy", "server", "client",
    "router", "schema", "query", "metric", "signal", "vector", "matrix", "layer", "kernel",
    "driver", "socket", "packet", "frame", "window", "widget", "layout", "theme", "style", "fix",
    "the", "a", "of", "to", "and", "in", "is", "it", "that", "this", "with", "for", "we", "should",
    "check", "update", "remove", "add", "test", "run", "build", "failing",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_civil_dates() {
        assert_eq!(iso_timestamp(EPOCH_2026 * 1000), "2026-01-01T00:00:00.000Z");
        assert_eq!(iso_timestamp(1_788_256_800_123), "2026-09-01T10:00:00.123Z");
        assert_eq!(
            file_timestamp(1_709_164_800_000),
            "2024-02-29T00-00-00-000Z"
        );
    }

    fn files_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                files_under(&path, out);
            } else {
                out.push(path);
            }
        }
    }

    #[test]
    fn big_store_has_the_promised_shape_and_is_deterministic() {
        let first = tempfile::tempdir().expect("temp dir");
        let second = tempfile::tempdir().expect("temp dir");
        let stats = write_big_store(first.path(), 200, 7).expect("write");
        assert_eq!(
            stats,
            write_big_store(second.path(), 200, 7).expect("write")
        );
        assert_eq!((stats.n_sessions, stats.n_projects), (200, 4));
        assert!((20..=200).contains(&stats.n_runs), "{stats:?}");

        let mut files = Vec::new();
        files_under(first.path(), &mut files);
        assert_eq!(files.len() as u64, stats.n_sessions + stats.n_runs);
        for path in &files {
            let text = fs::read_to_string(path).expect("read");
            let header = text.lines().next().expect("header");
            assert!(
                (150..=300).contains(&header.len()),
                "{} has a {}-byte header",
                path.display(),
                header.len()
            );
            let n_entries = text.lines().count() - 1;
            assert!((5..=200).contains(&n_entries), "{n_entries} entries");
            for line in text.lines() {
                serde_json::from_str::<serde_json::Value>(line).expect("every line is JSON");
            }
            let relative = path.strip_prefix(first.path()).expect("under root");
            let again = fs::read(second.path().join(relative)).expect("same file");
            assert_eq!(text.as_bytes(), again, "{}", relative.display());
        }
    }

    #[test]
    fn wide_session_has_every_run_under_one_launch() {
        let dir = tempfile::tempdir().expect("temp dir");
        let stats = write_wide_session(dir.path(), 50, 1).expect("write");
        assert_eq!((stats.n_sessions, stats.n_runs), (1, 50));
        let mut files = Vec::new();
        files_under(dir.path(), &mut files);
        assert_eq!(files.len(), 51);
        let flat = tempfile::tempdir().expect("temp dir");
        let stats = write_flat_store(flat.path(), 50, 1).expect("write");
        assert_eq!((stats.n_sessions, stats.n_runs), (50, 0));
    }
}
