//! `pi-retrospect list`: flags -> an application request -> the sessions index, rendered.

use std::io::Write;

use clap::{Args, ValueEnum};

use pi_retrospect_app::{Environment, ListRequest, ListResult};
use pi_retrospect_core::order::{SortKey, SortOrder};
use pi_retrospect_core::{Session, SessionSummary};
use pi_retrospect_render::long::LongOptions;
use pi_retrospect_render::when::{LocalClock, push_when};

use crate::UsageError;
use crate::args::{ColorChoice, StoreArgs};

pub const LIST_HELP: &str = "\
Stores: --sessions-root DIR names one store in Pi's default layout. Otherwise the store is \
found the way Pi finds it: --session-dir, $PI_CODING_AGENT_SESSION_DIR, `sessionDir` in \
<agent-dir>/settings.json, and the default root <agent-dir>/sessions (<agent-dir> is \
$PI_CODING_AGENT_DIR or ~/.pi/agent). A custom directory is listed together with the default \
root, where older sessions stay.

Ordering: oldest first. Sessions are sorted by the instant their header timestamp denotes, \
ties broken by path, at every nesting level, so the newest session is the last one and a \
session's subagent runs appear in launch order. --sort changes the key of the top level \
(ties still fall back to timestamp, then path); --newest-first reverses the top level only.

Two meanings of \"parent\": nesting (a subagent run listed under the session that launched it) \
comes only from where the file sits on disk; `parentSessionPath` in --json is the header's \
fork/clone lineage, copied verbatim, and says nothing about nesting.

Filters apply to top-level sessions and combine (AND; repeated --cwd values OR); a session \
that is kept keeps its whole tree of runs. --id also finds subagent runs, shown under their \
ancestors.

Time values (WHEN): a date (2026-09-30: that whole local day), today, yesterday, now, a local \
date-time (2026-09-30T14:30), an RFC 3339 instant (2026-09-30T14:30:00Z), or an age: a \
number and a unit s, m/min, h, d, w, mo, y, any case (30m, 2h, 3d, 1w, 6mo, 1y). --since and \
--until bound when a session started; --active-since and --active-until when it was active: \
together they keep the sessions that started by the end of the range and were last active \
after its start. Last activity is the newest entry's timestamp, read from the end of the \
file (never its modification time).

Files that cannot be read or have no valid session header are never fatal: each is skipped \
with one warning naming its path and the reason, and the exit status stays 0. The text and \
JSON outputs carry warnings in the document; --long writes them to stderr (-q silences them). \
Symlinks are never followed and FIFOs never opened: one where a session file, a project \
directory or a directory of subagent runs could be is a warning too, on stderr beside --json and the text output (whose \
documents, like the contract, leave it out).

Examples:
  pi-retrospect list --here --since 3d --long
  pi-retrospect list --active-since yesterday --active-until yesterday -l
  pi-retrospect list --cwd ~/repos/app --worktrees --newest-first --limit 5
  pi-retrospect list --since 2026-09-01 --until 2026-09-30 --with-subagents
  pi-retrospect list --sort activity --newest-first --limit 10 --long
  pi-retrospect list --name \"flaky test\" --long
  pi-retrospect list --json | jq -r '.sessions[-1].path'
  pi-retrospect list --jsonl --exclude-current | jq -r 'select(.depth == 0) | .path'";

/// Output formats of `list`.

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SortField {
    /// Header timestamp (the default).
    Timestamp,
    /// Working directory.
    Cwd,
    /// File path.
    Path,
    /// Session id.
    Id,
    /// Last activity (the newest entry's timestamp).
    Activity,
}

/// Flags of `list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Where the sessions are.
    #[command(flatten)]
    pub store: StoreArgs,

    /// Sessions whose cwd is DIR (repeatable; relative to the current directory; `~` expanded).
    #[arg(long, value_name = "DIR", help_heading = "Filters")]
    pub cwd: Vec<String>,

    /// Sessions whose cwd is DIR or below it (repeatable).
    #[arg(long, value_name = "DIR", help_heading = "Filters")]
    pub cwd_prefix: Vec<String>,

    /// Same as --cwd with the current directory.
    #[arg(long, help_heading = "Filters")]
    pub here: bool,

    /// With --cwd/--cwd-prefix/--here, also sibling directories whose name is DIR's plus a dash
    /// and more (git worktrees beside the main checkout; a lexical rule). Alone, it applies to
    /// the current directory.
    #[arg(long, help_heading = "Filters")]
    pub worktrees: bool,

    /// Sessions that started at or after WHEN: a date (start of that local day), today,
    /// yesterday, a local date-time (`2026-09-01T14:30`), an RFC 3339 instant, or an age
    /// (`30m`, `2h`, `3d`, `1w`, `6mo`, `1y`).
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub since: Option<String>,

    /// Sessions that started at or before WHEN (a date keeps that whole local day).
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub until: Option<String>,

    /// Sessions last active at or after WHEN (the newest entry's timestamp). Reads file ends.
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub active_since: Option<String>,

    /// Sessions active at or before WHEN (started by then); with --active-since, the sessions
    /// active at some point in the range.
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub active_until: Option<String>,

    /// Only sessions that launched at least one subagent run.
    #[arg(long, help_heading = "Filters")]
    pub with_subagents: bool,

    /// Show at most N levels of subagent nesting (0: top-level sessions only).
    #[arg(long, value_name = "N", help_heading = "Filters")]
    pub max_depth: Option<usize>,

    /// Leave out the session at $PI_SESSION_FILE (the one running this command), with its tree.
    #[arg(long, help_heading = "Filters")]
    pub exclude_current: bool,

    /// Sessions, or subagent runs (shown under their ancestors), whose id starts with PREFIX (repeatable).
    #[arg(long, value_name = "PREFIX", help_heading = "Filters")]
    pub id: Vec<String>,

    /// Sessions whose name (set with Pi's /name) contains TEXT, case-insensitively. Reads bodies.
    #[arg(long, value_name = "TEXT", help_heading = "Filters")]
    pub name: Option<String>,

    /// Order the top level by this field; ties fall back to timestamp, then path.
    #[arg(long, value_enum, default_value_t = SortField::Timestamp, help_heading = "Order")]
    pub sort: SortField,

    /// Reverse the top-level order (children stay in launch order).
    #[arg(long, help_heading = "Order")]
    pub newest_first: bool,

    /// Keep at most N top-level sessions, after sorting (N >= 1; leave it out for all).
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = crate::args::positive_limit,
        help_heading = "Order"
    )]
    pub limit: Option<u64>,

    /// Print the contract's JSON document `{ "sessions": [...], "warnings": [...] }`.
    #[arg(long, group = "format", help_heading = "Output")]
    pub json: bool,

    /// Print one flattened JSON object per line, with `depth`, `parentPath`, `nSubagents`,
    /// `name`, `firstUserMessage` and `lastActivity`: each file's whole-body facts, kept in the
    /// summary cache (with --no-cache, read from file ends: a name set after the first user
    /// message may not be seen).
    #[arg(long, group = "format", help_heading = "Output")]
    pub jsonl: bool,

    /// With --jsonl: write each session tree as soon as it is read, in no particular order.
    #[arg(long, requires = "jsonl", help_heading = "Output")]
    pub unordered: bool,

    /// One aligned line per session: local start time (and last activity), id, cwd, runs,
    /// and name or first message; fitted to the terminal, with a header row there. Reads the
    /// facts as --jsonl does.
    #[arg(long, short = 'l', group = "format", help_heading = "Output")]
    pub long: bool,

    /// Neither read nor write the summary cache ($XDG_CACHE_HOME/pi-retrospect, else
    /// ~/.cache/pi-retrospect): --long and --jsonl read file ends, --name whole bodies.
    /// $PI_RETROSPECT_NO_CACHE does the same for every command.
    #[arg(long, help_heading = "Output")]
    pub no_cache: bool,

    /// When to use colour.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = "Output")]
    pub color: ColorChoice,

    /// Worker threads for the walk and body reads (N >= 1, at most 256; default: one per core).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

/// How to print the listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Json,
    Jsonl {
        unordered: bool,
    },
    Long {
        paint: pi_retrospect_render::Paint,
        width: Option<usize>,
    },
}

/// Runs `list` with `args`, writing to `out`.
pub fn run(args: &ListArgs, env: &Environment, out: &mut dyn Write) -> anyhow::Result<()> {
    let request = request(args)?;
    // Everything the flags alone can refuse is refused before a settings file is read.
    let query = request.filter(env)?;
    let format = format(args, &query)?;
    match format {
        Format::Jsonl { unordered: true } => stream_unordered(&request, env, format, out),
        _ => {
            let result = pi_retrospect_app::list(&request, env)?;
            {
                for note in &result.notes {
                    crate::output::print_note(note);
                }
            }
            write(format, &result, env, request.threads, out)?;
            match format {
                Format::Long { .. } => {
                    // Written once the rows are out, so they follow the listing on a terminal.
                    out.flush()?;
                    crate::output::print_listing_warnings(&result.listing.warnings);
                }
                Format::Text | Format::Json => {
                    // The contract's documents do not warn about entries the discovery rules
                    // exclude (a symlink, a FIFO): they are said on stderr instead.
                    out.flush()?;
                    let out_of_scope: Vec<_> = result
                        .listing
                        .warnings
                        .iter()
                        .filter(|warning| warning.is_out_of_scope)
                        .cloned()
                        .collect();
                    crate::output::print_listing_warnings(&out_of_scope);
                }
                Format::Jsonl { .. } => {}
            }
            // The process ends once the listing is out: freeing tens of thousands of sessions
            // one by one would only delay the exit (a tenth of `list --jsonl`'s time on a
            // 10,000-session store), so the memory goes back with the process.
            std::mem::forget(result);
            Ok(())
        }
    }
}

fn request(args: &ListArgs) -> anyhow::Result<ListRequest> {
    let threads = match args.threads {
        None => 0,
        Some(0) => {
            return Err(UsageError(
                "--threads must be at least 1 (leave it out for one thread per core)".to_owned(),
            )
            .into());
        }
        Some(threads) => threads,
    };
    Ok(ListRequest {
        stores: args.store.flags(),
        cwd: args.cwd.clone(),
        cwd_prefix: args.cwd_prefix.clone(),
        here: args.here,
        worktrees: args.worktrees,
        since: args.since.clone(),
        until: args.until.clone(),
        active_since: args.active_since.clone(),
        active_until: args.active_until.clone(),
        with_subagents: args.with_subagents,
        max_depth: args.max_depth,
        exclude_current: args.exclude_current,
        id_prefixes: args.id.clone(),
        name_contains: args.name.clone(),
        order: SortOrder::by(match args.sort {
            SortField::Timestamp => SortKey::Timestamp,
            SortField::Cwd => SortKey::Cwd,
            SortField::Path => SortKey::Path,
            SortField::Id => SortKey::Id,
            SortField::Activity => SortKey::Activity,
        })
        .reversed(args.newest_first),
        limit: args.limit.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
        // What a person sees in --long, a script gets in --jsonl.
        read_summaries: args.long || args.jsonl,
        no_cache: args.no_cache,
        unique_id_prefixes: args.long,
        threads,
    })
}

fn format(
    args: &ListArgs,
    query: &pi_retrospect_core::filter::ListFilter,
) -> anyhow::Result<Format> {
    // clap drops `requires = "jsonl"` when another format of the group is given, so
    // `--unordered -l` would be ignored silently.
    if args.unordered && !args.jsonl {
        return Err(UsageError(
            "--unordered needs --jsonl: --json, --long and the text output are always sorted"
                .to_owned(),
        )
        .into());
    }
    if args.json {
        return Ok(Format::Json);
    }
    if args.jsonl {
        if args.unordered && (query.limit.is_some() || query.order != SortOrder::OLDEST_FIRST) {
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
            paint: crate::term::use_color(args.color),
            width: crate::term::fit_width(),
        });
    }
    Ok(Format::Text)
}

fn write(
    format: Format,
    result: &ListResult,
    env: &Environment,
    threads: usize,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let ListResult {
        listing,
        summaries,
        id_prefixes,
        ..
    } = result;
    match format {
        Format::Text => pi_retrospect_render::write_text(out, listing)?,
        Format::Json => pi_retrospect_render::write_json(out, listing)?,
        Format::Jsonl { unordered: true } => {
            // A streamed part is one tree, written while the walk goes on: on this thread,
            // never on the pool, whose workers may all be waiting for this write to take
            // the next part (a deadlock once more trees were read than the channel holds).
            let summary_of = |path: &str| summaries.get(path);
            for session in &listing.sessions {
                pi_retrospect_render::jsonl::write_session_tree(out, session, &summary_of)?;
            }
            for warning in &listing.warnings {
                pi_retrospect_render::jsonl::write_warning(out, warning)?;
            }
        }
        Format::Jsonl { unordered: false } => {
            let summary_of = |path: &str| summaries.get(path);
            // Trees are turned into lines in parallel on the listing's threads, a batch at a
            // time (so memory stays a batch's lines), and written in order.
            for batch in listing.sessions.chunks(TREES_PER_BATCH) {
                let parts =
                    pi_retrospect_app::map_chunks(threads, batch, TREES_PER_TASK, |trees| {
                        let mut lines = Vec::new();
                        for session in trees {
                            pi_retrospect_render::jsonl::write_session_tree(
                                &mut lines,
                                session,
                                &summary_of,
                            )?;
                        }
                        Ok(lines)
                    });
                for part in parts
                    .into_iter()
                    .collect::<std::io::Result<Vec<Vec<u8>>>>()?
                {
                    out.write_all(&part)?;
                }
            }
            for warning in &listing.warnings {
                pi_retrospect_render::jsonl::write_warning(out, warning)?;
            }
        }
        Format::Long { paint, width } => {
            let clock = LocalClock::new(&env.time_zone);
            let when_of =
                |session: &Session, summary: Option<&SessionSummary>, text: &mut String| {
                    push_when(text, session, summary, &clock);
                };
            let summary_of = |path: &str| summaries.get(path);
            let id_len_of = |id: &str| match id_prefixes {
                Some(prefixes) => prefixes.unique_len(id),
                None => id.chars().count(),
            };
            let home = env.home.as_deref().and_then(|home| home.to_str());
            let options = LongOptions {
                paint,
                width,
                header: width.is_some(),
                home,
                when_of: &when_of,
                summary_of: &summary_of,
                id_len_of: &id_len_of,
            };
            // The rows, then their lines, are made a part at a time in parallel on the
            // listing's threads (`--threads`); the lines are written in order.
            use pi_retrospect_render::long;
            let sessions = long::long_sessions(listing);
            let rows = long::LongRows::concat(pi_retrospect_app::map_chunks(
                threads,
                &sessions,
                ROWS_PER_TASK,
                |part| long::long_rows(part, &options),
            ));
            let layout = long::long_layout(&rows, &options);
            let starts: Vec<usize> = (0..rows.len()).step_by(ROWS_PER_TASK).collect();
            let parts: Vec<String> = pi_retrospect_app::map_chunks(threads, &starts, 1, |start| {
                let Some(&start) = start.first() else {
                    return String::new();
                };
                let end = (start + ROWS_PER_TASK).min(rows.len());
                long::long_lines_of(&rows, start..end, &layout, &options)
            });
            out.write_all(long::long_header(&layout, &options).as_bytes())?;
            for part in parts {
                out.write_all(part.as_bytes())?;
            }
            // As for the listing (see `run`): the process ends once the rows are out, and
            // freeing tens of thousands of their strings one by one would only delay it.
            std::mem::forget(rows);
        }
    }
    Ok(())
}

/// How many `--long` rows one parallel task makes.
const ROWS_PER_TASK: usize = 256;
/// How many top-level trees `--jsonl` turns into lines before writing them.
const TREES_PER_BATCH: usize = 1024;
/// How many top-level trees one parallel task of a batch takes.
const TREES_PER_TASK: usize = 32;

/// `--jsonl --unordered`: each kept session tree is written as soon as the walk has read it;
/// a write failure (a closed pipe) stops the walk.
fn stream_unordered(
    request: &ListRequest,
    env: &Environment,
    format: Format,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let mut write_error = None;
    pi_retrospect_app::list_unordered(request, env, &mut |part| {
        for note in &part.notes {
            crate::output::print_note(note);
        }
        match write(format, &part, env, request.threads, out).and_then(|()| Ok(out.flush()?)) {
            Ok(()) => pi_retrospect_app::WalkState::Continue,
            Err(error) => {
                write_error = Some(error);
                pi_retrospect_app::WalkState::Quit
            }
        }
    })?;
    match write_error {
        Some(error) => Err(error),
        None => Ok(()),
    }
}
