//! Counts the hits of a pattern in every session of a store, like `rg -c`: one
//! `PATH:COUNT` line per file with hits, newest session first, and a summary on stderr.
//!
//! The library alone, without the application layer or the command line (`cargo xtask bench`
//! measures `pi-retrospect search --count`, the real command):
//!
//! ```text
//! search_count SESSIONS_ROOT PATTERN [-E] [-i | -S] [-w] [--threads N]
//!              [--mode count|hits|files] [--all-kinds] [--limit N]
//! ```
//!
//! `--all-kinds` adds the opt-in kinds (thinking, tool-call arguments, tool results, system
//! prompt); `--mode hits` builds every hit (snippet and active-branch flag) and prints one
//! line per hit.

use std::io::{self, BufWriter, Write};
use std::ops::ControlFlow;
use std::path::Path;
use std::process::ExitCode;

use pi_retrospect_core::order::SortOrder;
use pi_retrospect_search::{
    CaseMode, Event, FieldKinds, Mode, Pattern, Query, RunOptions, Searcher, Syntax,
    files_in_order, search_files,
};
use pi_retrospect_walk::{Layout, Store, WalkOptions, list_stores};

const USAGE: &str = "usage: search_count SESSIONS_ROOT PATTERN [-E] [-i | -S] [-w] [--threads N] [--mode count|hits|files] [--all-kinds] [--limit N]";

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(message) => {
            eprintln!("search_count: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<bool, String> {
    let mut args = std::env::args().skip(1);
    let mut positional = Vec::new();
    let mut pattern = Pattern::default();
    let mut options = RunOptions {
        mode: Mode::Count,
        ..RunOptions::default()
    };
    let mut kinds = FieldKinds::default_kinds();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-E" => pattern.syntax = Syntax::Regex,
            "-i" => pattern.case = CaseMode::Insensitive,
            "-S" => pattern.case = CaseMode::Smart,
            "-w" => pattern.is_whole_word = true,
            "--all-kinds" => kinds = FieldKinds::all(),
            "--threads" | "--mode" | "--limit" => {
                let value = args.next().ok_or(format!("{arg} needs a value\n{USAGE}"))?;
                match arg.as_str() {
                    "--threads" => options.threads = number(&value)? as usize,
                    "--limit" => options.limit = Some(number(&value)?),
                    _ => {
                        options.mode = match value.as_str() {
                            "count" => Mode::Count,
                            "hits" => Mode::Hits,
                            "files" => Mode::FilesWithMatches,
                            _ => return Err(format!("unknown mode {value:?}\n{USAGE}")),
                        }
                    }
                }
            }
            _ if arg.starts_with('-') && positional.len() < 2 && arg.len() > 1 => {
                return Err(format!("unknown flag {arg}\n{USAGE}"));
            }
            _ => positional.push(arg),
        }
    }
    let [root, text] = <[String; 2]>::try_from(positional).map_err(|_| USAGE.to_owned())?;
    pattern.text = text;
    let mut query = Query::new(pattern);
    query.scope.kinds = kinds;
    let searcher = Searcher::new(&query).map_err(|error| error.to_string())?;

    let cwd = std::env::current_dir().map_err(|error| error.to_string())?;
    let store = Store::resolve(Path::new(&root), &cwd, Layout::Projects)
        .map_err(|warning| warning.reason)?;
    let walk = WalkOptions {
        threads: options.threads,
    };
    let started = std::time::Instant::now();
    let listing = list_stores(&[store], &walk).map_err(|error| error.to_string())?;
    let walked = started.elapsed();
    let files = files_in_order(&listing.sessions, SortOrder::NEWEST_FIRST);

    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut write_error = None;
    let totals = search_files(&searcher, &files, &options, &mut |event| {
        let written = match event {
            Event::Hit(hit) => writeln!(
                out,
                "{}:{}:{}:{}",
                hit.path,
                hit.line_no,
                hit.field.as_str(),
                hit.snippet
            ),
            Event::FileDone(count) if count.n_hits > 0 && options.mode != Mode::Hits => {
                match options.mode {
                    Mode::FilesWithMatches => writeln!(out, "{}", count.path),
                    _ => writeln!(out, "{}:{}", count.path, count.n_hits),
                }
            }
            Event::Warning(warning) => {
                eprintln!(
                    "search_count: warning: {}: {}",
                    warning.path, warning.message
                );
                Ok(())
            }
            Event::FileDone(_) => Ok(()),
        };
        match written {
            Ok(()) => ControlFlow::Continue(()),
            Err(error) => {
                write_error = Some(error);
                ControlFlow::Break(())
            }
        }
    });
    if let Some(error) = write_error.or_else(|| out.flush().err())
        && error.kind() != io::ErrorKind::BrokenPipe
    {
        return Err(format!("cannot write: {error}"));
    }
    eprintln!(
        "walk {:.1} ms, search {:.1} ms",
        walked.as_secs_f64() * 1000.0,
        (started.elapsed() - walked).as_secs_f64() * 1000.0
    );
    eprintln!(
        "{} hits in {} of {} files ({} MB read, {} listing warnings)",
        totals.n_hits,
        totals.n_files_with_hits,
        totals.n_files_searched,
        totals.n_bytes_searched / 1_000_000,
        listing.warnings.len()
    );
    Ok(totals.n_hits > 0)
}

fn number(value: &str) -> Result<u64, String> {
    value
        .parse()
        .map_err(|_| format!("expected a number, not {value:?}"))
}
