//! `pi-retrospect list`: flags -> an application request -> the sessions index, rendered.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use pi_retrospect_app::{Environment, ListRequest, ListResult, StoreFlags};
use pi_retrospect_core::Session;
use pi_retrospect_core::filter::SortKey;
use pi_retrospect_render::long::LongOptions;
use pi_retrospect_walk::WalkState;

use crate::UsageError;
use crate::args::ColorChoice;

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
that is kept keeps its whole tree of runs.

Files that cannot be read or have no valid session header are never fatal: each is skipped \
with one warning naming its path and the reason, and the exit status stays 0.

Examples:
  pi-retrospect list --here --since 3d --long
  pi-retrospect list --cwd ~/repos/app --worktrees --newest-first --limit 5
  pi-retrospect list --since 2026-09-01 --until 2026-09-30 --with-subagents
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
}

/// Flags of `list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// A store in Pi's default layout (`DIR/--<cwd-slug>--/<stem>.jsonl`); only this store is listed.
    #[arg(long, value_name = "DIR", help_heading = "Stores")]
    pub sessions_root: Option<PathBuf>,

    /// Pi's custom session directory (session files directly inside it), listed with the default root.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with = "sessions_root",
        help_heading = "Stores"
    )]
    pub session_dir: Option<PathBuf>,

    /// Also list `sessions-archive/` beside the sessions root, in the same layout.
    #[arg(long, help_heading = "Stores")]
    pub include_archive: bool,

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

    /// Sessions at or after WHEN: a date (start of that local day), a local date-time
    /// (`2026-09-01T14:30`), an RFC 3339 instant, or an age (`30m`, `2h`, `3d`, `1w`).
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub since: Option<String>,

    /// Sessions at or before WHEN (a date keeps that whole local day).
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub until: Option<String>,

    /// Only sessions that launched at least one subagent run.
    #[arg(long, help_heading = "Filters")]
    pub with_subagents: bool,

    /// Show at most N levels of subagent nesting (0: top-level sessions only).
    #[arg(long, value_name = "N", help_heading = "Filters")]
    pub max_depth: Option<usize>,

    /// Leave out the session at $PI_SESSION_FILE (the one running this command), with its tree.
    #[arg(long, help_heading = "Filters")]
    pub exclude_current: bool,

    /// Sessions whose id starts with PREFIX (repeatable).
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

    /// Keep at most N top-level sessions, after sorting (N >= 1).
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        help_heading = "Order"
    )]
    pub limit: Option<i64>,

    /// Print the contract's JSON document `{ "sessions": [...], "warnings": [...] }`.
    #[arg(long, group = "format", help_heading = "Output")]
    pub json: bool,

    /// Print one flattened JSON object per line, with `depth` and `parentPath`.
    #[arg(long, group = "format", help_heading = "Output")]
    pub jsonl: bool,

    /// With --jsonl: write each session tree as soon as it is read, in no particular order.
    #[arg(long, requires = "jsonl", help_heading = "Output")]
    pub unordered: bool,

    /// One aligned line per session: local time, id, cwd, runs, and name or first message.
    #[arg(long, short = 'l', group = "format", help_heading = "Output")]
    pub long: bool,

    /// When to use colour.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = "Output")]
    pub color: ColorChoice,

    /// Worker threads for the walk (default: one per core).
    #[arg(long, value_name = "N", default_value_t = 0, hide_default_value = true)]
    pub threads: usize,
}

/// How to print the listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Json,
    Jsonl { unordered: bool },
    Long { color: bool, width: usize },
}

/// Runs `list` with `args`, writing to `out`.
pub fn run(args: &ListArgs, env: &Environment, out: &mut dyn Write) -> anyhow::Result<()> {
    let request = request(args);
    // Everything the flags alone can refuse is refused before a settings file is read.
    let query = request.query(env)?;
    let format = format(args, &query)?;
    match format {
        Format::Jsonl { unordered: true } => stream_unordered(&request, env, format, out),
        _ => {
            let result = pi_retrospect_app::list(&request, env)?;
            write(format, &result, env, out)
        }
    }
}

fn request(args: &ListArgs) -> ListRequest {
    ListRequest {
        stores: StoreFlags {
            sessions_root: args.sessions_root.clone(),
            session_dir: args.session_dir.clone(),
            include_archive: args.include_archive,
        },
        cwd: args.cwd.clone(),
        cwd_prefix: args.cwd_prefix.clone(),
        here: args.here,
        worktrees: args.worktrees,
        since: args.since.clone(),
        until: args.until.clone(),
        with_subagents: args.with_subagents,
        max_depth: args.max_depth,
        exclude_current: args.exclude_current,
        id_prefixes: args.id.clone(),
        name_contains: args.name.clone(),
        sort: match args.sort {
            SortField::Timestamp => SortKey::Timestamp,
            SortField::Cwd => SortKey::Cwd,
            SortField::Path => SortKey::Path,
            SortField::Id => SortKey::Id,
        },
        newest_first: args.newest_first,
        limit: args.limit,
        read_summaries: args.long,
        unique_id_width: args.long,
        threads: args.threads,
    }
}

fn format(args: &ListArgs, query: &pi_retrospect_core::filter::Query) -> anyhow::Result<Format> {
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

fn write(
    format: Format,
    result: &ListResult,
    env: &Environment,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let ListResult {
        listing,
        summaries,
        id_width,
    } = result;
    match format {
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
            let time_of = |session: &Session| local_time(session, &env.time_zone);
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

/// `--jsonl --unordered`: each kept session tree is written as soon as the walk has read it;
/// a write failure (a closed pipe) stops the walk.
fn stream_unordered(
    request: &ListRequest,
    env: &Environment,
    format: Format,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let mut write_error = None;
    pi_retrospect_app::list_unordered(
        request,
        env,
        &mut |part| match write(format, &part, env, out).and_then(|()| Ok(out.flush()?)) {
            Ok(()) => WalkState::Continue,
            Err(error) => {
                write_error = Some(error);
                WalkState::Quit
            }
        },
    )?;
    match write_error {
        Some(error) => Err(error),
        None => Ok(()),
    }
}
