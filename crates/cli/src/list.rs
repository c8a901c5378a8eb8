//! `pi-retrospect list`: the sessions index, filtered, sorted and rendered.

use std::collections::HashMap;
use std::io::Write;

use anyhow::Context;
use pi_retrospect_core::filter::{CwdMatcher, Query, SortKey};
use pi_retrospect_core::{Listing, Session, SessionSummary, Warning};
use pi_retrospect_render::long::LongOptions;
use pi_retrospect_walk::{Store, WalkOptions};

use crate::UsageError;
use crate::opts::{ListArgs, SortField};
use crate::store::{Env, StoreFlags, resolve_stores};
use crate::when::{Bound, parse_when};

/// How to print the listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Json,
    Jsonl { unordered: bool },
    Long { color: bool, width: usize },
}

/// Everything `list` needs, resolved from flags and environment before any file is read.
struct Config {
    stores: Vec<Store>,
    store_warnings: Vec<Warning>,
    query: Query,
    format: Format,
    walk: WalkOptions,
}

/// Runs `list` with `args`, writing to `out`.
pub fn run(args: &ListArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let env = Env::from_process()?;
    let config = resolve(args, &env)?;
    match config.format {
        Format::Jsonl { unordered: true } => stream_unordered(&config, out),
        _ => {
            let built = build_listing(&config);
            write(&config, &built, out)
        }
    }
}

fn resolve(args: &ListArgs, env: &Env) -> anyhow::Result<Config> {
    // Everything the flags alone can refuse is refused before a settings file is read.
    let query = resolve_query(args, env)?;
    let format = resolve_format(args, &query)?;
    let (stores, store_warnings) = resolve_stores(
        &StoreFlags {
            sessions_root: args.sessions_root.clone(),
            session_dir: args.session_dir.clone(),
            include_archive: args.include_archive,
        },
        env,
    )?;
    Ok(Config {
        stores,
        store_warnings,
        query,
        format,
        walk: WalkOptions {
            threads: args.threads,
        },
    })
}

fn resolve_format(args: &ListArgs, query: &Query) -> anyhow::Result<Format> {
    if args.json {
        return Ok(Format::Json);
    }
    if args.jsonl {
        if args.unordered
            && (query.limit.is_some() || query.newest_first || query.sort != SortKey::Timestamp)
        {
            return Err(UsageError(
                "--unordered cannot be combined with --limit, --sort or --newest-first".to_owned(),
            )
            .into());
        }
        return Ok(Format::Jsonl {
            unordered: args.unordered,
        });
    }
    if args.long {
        return Ok(Format::Long {
            color: crate::term::use_color(args.color),
            width: crate::term::width(),
        });
    }
    Ok(Format::Text)
}

fn resolve_query(args: &ListArgs, env: &Env) -> anyhow::Result<Query> {
    let usage = |message: String| anyhow::Error::from(UsageError(message));
    let mut cwds = Vec::new();
    let mut exact: Vec<&str> = args.cwd.iter().map(String::as_str).collect();
    let cwd_text = env
        .cwd
        .to_str()
        .context("the current directory is not valid UTF-8")?;
    if args.here || (args.worktrees && args.cwd.is_empty() && args.cwd_prefix.is_empty()) {
        exact.push(cwd_text);
    }
    for (values, include_subdirectories) in [
        (exact, false),
        (args.cwd_prefix.iter().map(String::as_str).collect(), true),
    ] {
        for value in values {
            if value.is_empty() {
                return Err(usage("--cwd and --cwd-prefix need a directory".to_owned()));
            }
            cwds.push(CwdMatcher {
                dir: env.absolute(value)?,
                include_subdirectories,
                include_worktrees: args.worktrees,
            });
        }
    }

    let zone = jiff::tz::TimeZone::system();
    let now = jiff::Timestamp::now();
    let bound = |flag: &str, value: Option<&str>, which: Bound| {
        value
            .map(|text| {
                parse_when(text, which, now, &zone)
                    .map_err(|message| usage(format!("{flag}: {message}")))
            })
            .transpose()
    };
    let since = bound("--since", args.since.as_deref(), Bound::Start)?;
    let until = bound("--until", args.until.as_deref(), Bound::End)?;
    if let (Some(since), Some(until)) = (since, until)
        && until < since
    {
        return Err(usage(format!(
            "--until ({until}) is before --since ({since}): the range is empty"
        )));
    }

    let limit = match args.limit {
        None => None,
        Some(limit) if limit >= 1 => Some(usize::try_from(limit).unwrap_or(usize::MAX)),
        Some(limit) => return Err(usage(format!("--limit must be at least 1, not {limit}"))),
    };
    let exclude_path = if args.exclude_current {
        env.session_file
            .as_deref()
            .map(|file| env.absolute(file))
            .transpose()?
    } else {
        None
    };
    Ok(Query {
        cwds,
        since,
        until,
        with_subagents: args.with_subagents,
        max_depth: args.max_depth,
        exclude_path,
        id_prefixes: args.id.clone(),
        name_contains: args.name.clone(),
        sort: match args.sort {
            SortField::Timestamp => SortKey::Timestamp,
            SortField::Cwd => SortKey::Cwd,
            SortField::Path => SortKey::Path,
            SortField::Id => SortKey::Id,
        },
        newest_first: args.newest_first,
        limit,
    })
}

type Summaries = HashMap<String, SessionSummary>;

/// What `build_listing` found: the filtered listing, the body facts read, and for `--long`
/// the id width that keeps every shown prefix unique among all the sessions walked.
struct Built {
    listing: Listing,
    summaries: Summaries,
    id_width: Option<usize>,
}

/// Walks, filters and (when needed) reads bodies.
fn build_listing(config: &Config) -> Built {
    let mut listing = pi_retrospect_walk::list_stores(&config.stores, &config.walk);
    let id_width = matches!(config.format, Format::Long { .. }).then(|| {
        let mut ids = Vec::new();
        collect(&listing.sessions, |session| &session.id, &mut ids);
        pi_retrospect_render::long::unique_prefix_len(ids.into_iter())
    });
    listing
        .warnings
        .extend(config.store_warnings.iter().cloned());
    let mut summaries = Summaries::new();
    read_names_if_needed(config, &mut listing, &mut summaries);
    config.query.apply(&mut listing, &|path| {
        summaries
            .get(path)
            .and_then(|summary| summary.name.as_deref())
    });
    if matches!(config.format, Format::Long { .. }) {
        let mut all = Vec::new();
        collect(&listing.sessions, |session| &session.path, &mut all);
        let missing: Vec<&str> = all
            .into_iter()
            .filter(|path| !summaries.contains_key(*path))
            .collect();
        read_into(&missing, config, &mut summaries, &mut listing.warnings);
    }
    listing.warnings.sort();
    listing.warnings.dedup();
    Built {
        listing,
        summaries,
        id_width,
    }
}

/// Collects `field` of every session at every level, depth first.
fn collect<'a>(sessions: &'a [Session], field: fn(&Session) -> &str, out: &mut Vec<&'a str>) {
    for session in sessions {
        out.push(field(session));
        collect(&session.subagent_sessions, field, out);
    }
}

/// Reads the body facts of the top-level sessions when a filter needs their names.
fn read_names_if_needed(config: &Config, listing: &mut Listing, summaries: &mut Summaries) {
    if !config.query.needs_names() {
        return;
    }
    let paths: Vec<&str> = listing
        .sessions
        .iter()
        .map(|session| session.path.as_str())
        .collect();
    read_into(&paths, config, summaries, &mut listing.warnings);
}

fn read_into(
    paths: &[&str],
    config: &Config,
    summaries: &mut Summaries,
    warnings: &mut Vec<Warning>,
) {
    let results = pi_retrospect_walk::with_threads(config.walk.threads, || {
        pi_retrospect_walk::read_summaries(paths)
    });
    for (path, result) in paths.iter().zip(results) {
        match result {
            Ok(summary) => {
                summaries.insert((*path).to_owned(), summary);
            }
            Err(warning) => warnings.push(warning),
        }
    }
}

fn write(config: &Config, built: &Built, out: &mut dyn Write) -> anyhow::Result<()> {
    let Built {
        listing,
        summaries,
        id_width,
    } = built;
    match config.format {
        Format::Text => pi_retrospect_render::write_text(out, listing)?,
        Format::Json => pi_retrospect_render::write_json(out, listing)?,
        Format::Jsonl { .. } => {
            let summary_of = |path: &str| summaries.get(path);
            for session in &listing.sessions {
                pi_retrospect_render::jsonl::write_session_tree(out, session, &summary_of)?;
            }
            for warning in &listing.warnings {
                pi_retrospect_render::jsonl::write_warning(out, warning)?;
            }
        }
        Format::Long { color, width } => {
            let zone = jiff::tz::TimeZone::system();
            let time_of = |session: &Session| local_time(session, &zone);
            let summary_of = |path: &str| summaries.get(path);
            let options = LongOptions {
                color,
                width,
                time_of: &time_of,
                summary_of: &summary_of,
                id_width: *id_width,
            };
            pi_retrospect_render::long::write_long(out, listing, &options)?;
        }
    }
    Ok(())
}

fn local_time(session: &Session, zone: &jiff::tz::TimeZone) -> String {
    let nanos = i32::try_from(session.instant.nanos).unwrap_or(0);
    match jiff::Timestamp::new(session.instant.seconds, nanos) {
        Ok(instant) => instant
            .to_zoned(zone.clone())
            .strftime("%Y-%m-%d %H:%M")
            .to_string(),
        Err(_) => session.timestamp.clone(),
    }
}

/// `--jsonl --unordered`: each kept session tree is written as soon as the walk has read it.
fn stream_unordered(config: &Config, out: &mut dyn Write) -> anyhow::Result<()> {
    let (sender, receiver) = std::sync::mpsc::channel::<(Option<Session>, Vec<Warning>)>();
    let mut write_error = None;
    let mut loose = std::thread::scope(|scope| {
        let walker = scope.spawn(move || {
            pi_retrospect_walk::for_each_session(
                &config.stores,
                &config.walk,
                &|session, warnings| {
                    // A closed receiver means the writer stopped (a broken pipe); the walk just ends.
                    let _ = sender.send((session, warnings));
                },
            )
        });
        for (session, warnings) in receiver {
            if write_error.is_some() {
                continue;
            }
            if let Err(error) = write_streamed(config, session, warnings, out) {
                write_error = Some(error);
            }
        }
        walker.join().unwrap_or_default()
    });
    if let Some(error) = write_error {
        return Err(error);
    }
    loose.extend(config.store_warnings.iter().cloned());
    loose.sort();
    for warning in &loose {
        pi_retrospect_render::jsonl::write_warning(out, warning)?;
    }
    Ok(())
}

fn write_streamed(
    config: &Config,
    session: Option<Session>,
    warnings: Vec<Warning>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let mut listing = Listing {
        sessions: session.into_iter().collect(),
        warnings,
    };
    let mut summaries = Summaries::new();
    read_names_if_needed(config, &mut listing, &mut summaries);
    config.query.apply(&mut listing, &|path| {
        summaries
            .get(path)
            .and_then(|summary| summary.name.as_deref())
    });
    listing.warnings.sort();
    let built = Built {
        listing,
        summaries,
        id_width: None,
    };
    write(config, &built, out)?;
    out.flush()?;
    Ok(())
}
