//! `pi-retrospect list`: flags -> an application request -> the sessions index, rendered.

use std::io::Write;

use clap::{Args, ValueEnum};

use pi_retrospect_app::{Environment, ListRequest, ListResult};
use pi_retrospect_core::filter::SortKey;
use pi_retrospect_core::{Session, SessionSummary};
use pi_retrospect_render::long::LongOptions;
use pi_retrospect_walk::WalkState;
use rayon::prelude::*;

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
    /// summary cache (with --no-cache, read from file ends: a name set only in the middle of a
    /// long session is not seen).
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
    Jsonl { unordered: bool },
    Long { color: bool, width: Option<usize> },
}

/// Runs `list` with `args`, writing to `out`.
pub fn run(args: &ListArgs, env: &Environment, out: &mut dyn Write) -> anyhow::Result<()> {
    let request = request(args)?;
    // Everything the flags alone can refuse is refused before a settings file is read.
    let query = request.query(env)?;
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
        sort: match args.sort {
            SortField::Timestamp => SortKey::Timestamp,
            SortField::Cwd => SortKey::Cwd,
            SortField::Path => SortKey::Path,
            SortField::Id => SortKey::Id,
            SortField::Activity => SortKey::Activity,
        },
        newest_first: args.newest_first,
        limit: args.limit.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
        // What a person sees in --long, a script gets in --jsonl.
        read_summaries: args.long || args.jsonl,
        no_cache: args.no_cache,
        unique_id_prefixes: args.long,
        threads,
    })
}

fn format(args: &ListArgs, query: &pi_retrospect_core::filter::Query) -> anyhow::Result<Format> {
    // clap drops `requires = "jsonl"` when another format of the group is given, so
    // `--unordered -l` would be ignored silently (finding L6 of the second flows review).
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
                let parts = pi_retrospect_walk::with_threads(threads, || {
                    batch
                        .par_chunks(TREES_PER_TASK)
                        .map(|trees| {
                            let mut lines = Vec::new();
                            for session in trees {
                                pi_retrospect_render::jsonl::write_session_tree(
                                    &mut lines,
                                    session,
                                    &summary_of,
                                )?;
                            }
                            Ok(lines)
                        })
                        .collect::<std::io::Result<Vec<Vec<u8>>>>()
                });
                for part in parts? {
                    out.write_all(&part)?;
                }
            }
            for warning in &listing.warnings {
                pi_retrospect_render::jsonl::write_warning(out, warning)?;
            }
        }
        Format::Long { color, width } => {
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
                color,
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
            let (rows, layout, parts) = pi_retrospect_walk::with_threads(threads, || {
                let rows = long::LongRows::concat(
                    sessions
                        .par_chunks(ROWS_PER_TASK)
                        .map(|part| long::long_rows(part, &options))
                        .collect(),
                );
                let layout = long::long_layout(&rows, &options);
                let starts: Vec<usize> = (0..rows.len()).step_by(ROWS_PER_TASK).collect();
                let parts: Vec<String> = starts
                    .par_iter()
                    .map(|start| {
                        let end = (start + ROWS_PER_TASK).min(rows.len());
                        long::long_lines_of(&rows, *start..end, &layout, &options)
                    })
                    .collect();
                (rows, layout, parts)
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

/// Appends to `out` when a session ran, in local time: its start (`2026-09-01 10:00`), then,
/// when it was last active in a later minute, `→14:32` on the same day or `→09-03` on a
/// later one.
fn push_when(
    out: &mut String,
    session: &Session,
    summary: Option<&SessionSummary>,
    clock: &LocalClock<'_>,
) {
    // The zone gives the offset; the calendar fields are worked out here, which costs a
    // fraction of jiff's civil conversion (two per `--long` row). An instant past jiff's
    // calendar (9999-12-30, leaving room for any offset) has no local time.
    let local =
        |instant: pi_retrospect_core::Timestamp| Civil::at(instant, clock.offset_seconds(instant)?);
    // Written byte by byte into a buffer on the stack: `strftime`, and even `write!` or
    // `String::push`, cost more than the rest of a `--long` row.
    let mut text = WhenText::default();
    let Some(start) = local(session.instant) else {
        // Past the local calendar (a header at 9999-12-31): its UTC date and time, as short
        // as a local start, so one odd row does not widen the column (review fix 11, L3).
        let Some(start) = Civil::at(session.instant, 0) else {
            out.push_str(&session.timestamp);
            return;
        };
        start.push_date(&mut text);
        text.push(b' ');
        text.push_pair(start.hour, b':', start.minute);
        return text.append_to(out);
    };
    start.push_date(&mut text);
    text.push(b' ');
    text.push_pair(start.hour, b':', start.minute);
    let last_instant = session.last_activity(summary);
    let Some(last) = local(last_instant) else {
        // The file said it and `--jsonl` reports it: never dropped (final break review F4).
        // Shown as its UTC date, in the later-year form (`→9999-12-31`): the whole UTC text
        // made every row's WHEN 43 columns wide (review fix 11, L3).
        if last_instant != session.instant
            && let Some(last) = Civil::at(last_instant, 0)
        {
            text.push_arrow();
            last.push_date(&mut text);
        }
        return text.append_to(out);
    };
    if last.year != start.year {
        text.push_arrow();
        last.push_date(&mut text);
    } else if (last.month, last.day) != (start.month, start.day) {
        text.push_arrow();
        text.push_pair(last.month, b'-', last.day);
    } else if (last.hour, last.minute) != (start.hour, start.minute) {
        text.push_arrow();
        text.push_pair(last.hour, b':', last.minute);
    }
    text.append_to(out);
}

/// A time zone as `--long` reads it: offsets looked up through a cache of each thread's last
/// offset period (the span between two of the zone's transitions), as consecutive rows
/// (sorted by time) mostly fall in one.
struct LocalClock<'z> {
    zone: &'z jiff::tz::TimeZone,
    /// Tells this clock's cache entries from another's (another zone's, in tests).
    id: u64,
}

/// The id of the next [`LocalClock`]; 0 is no clock's.
static NEXT_CLOCK_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A thread's last answers: an offset period of a clock and a local day's date.
#[derive(Clone, Copy)]
struct ClockCache {
    /// The clock whose period this is (0: none).
    clock: u64,
    /// The period, in seconds since the epoch: from `period_start` up to, not including,
    /// `period_end`, the zone's offset is `offset_seconds`.
    period_start: i64,
    period_end: i64,
    offset_seconds: i32,
    /// A local day (days since the epoch; `i64::MIN` for none) and its date.
    day: i64,
    year: i16,
    month: i8,
    day_of_month: i8,
}

thread_local! {
    static CLOCK_CACHE: std::cell::Cell<ClockCache> = const {
        std::cell::Cell::new(ClockCache {
            clock: 0,
            period_start: 0,
            period_end: 0,
            offset_seconds: 0,
            day: i64::MIN,
            year: 0,
            month: 0,
            day_of_month: 0,
        })
    };
}

impl<'z> LocalClock<'z> {
    fn new(zone: &'z jiff::tz::TimeZone) -> LocalClock<'z> {
        let id = NEXT_CLOCK_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        LocalClock { zone, id }
    }

    /// Returns the zone's offset at `instant`, in seconds east of UTC, as
    /// [`jiff::tz::TimeZone::to_offset`] says it, or `None` when jiff cannot hold the instant.
    fn offset_seconds(&self, instant: pi_retrospect_core::Timestamp) -> Option<i32> {
        let cache = CLOCK_CACHE.with(std::cell::Cell::get);
        // The period's ends are within jiff's range, so an instant in it is one jiff holds
        // when its fraction is a valid one.
        if cache.clock == self.id
            && (cache.period_start..cache.period_end).contains(&instant.seconds)
            && instant.nanos < 1_000_000_000
        {
            return Some(cache.offset_seconds);
        }
        let nanos = i32::try_from(instant.nanos).unwrap_or(0);
        let at = jiff::Timestamp::new(instant.seconds, nanos).ok()?;
        let offset_seconds = self.zone.to_offset(at).seconds();
        // The transitions around `at` are strictly before and after it. The offset holds
        // from the one before when that one set it (else one falls at `at` itself: from
        // `at`), up to the one after.
        let period_start = match self.zone.preceding(at).next() {
            Some(transition) if transition.offset().seconds() == offset_seconds => {
                transition.timestamp().as_second()
            }
            Some(_) => instant.seconds,
            None => jiff::Timestamp::MIN.as_second(),
        };
        let period_end = self
            .zone
            .following(at)
            .next()
            .map_or(jiff::Timestamp::MAX.as_second() + 1, |transition| {
                transition.timestamp().as_second()
            });
        CLOCK_CACHE.with(|cell| {
            cell.set(ClockCache {
                clock: self.id,
                period_start,
                period_end,
                offset_seconds,
                ..cell.get()
            });
        });
        Some(offset_seconds)
    }
}

/// A date and time to the minute, as `when` writes it.
#[derive(Clone, Copy)]
struct Civil {
    year: i16,
    month: i8,
    day: i8,
    hour: i8,
    minute: i8,
}

impl Civil {
    /// Returns the calendar fields of `instant` at `offset_seconds` east of UTC, or `None`
    /// when its year is beyond what `strftime`'s `%Y` writes here. The date of the thread's
    /// last local day is kept, as consecutive rows mostly fall on one.
    fn at(instant: pi_retrospect_core::Timestamp, offset_seconds: i32) -> Option<Civil> {
        let seconds = instant.seconds.checked_add(i64::from(offset_seconds))?;
        let day = seconds.div_euclid(86_400);
        // Below 86,400: each of hour and minute fits in i8.
        let second_of_day = seconds.rem_euclid(86_400) as i32;
        let hour = (second_of_day / 3600) as i8;
        let minute = (second_of_day / 60 % 60) as i8;
        let cache = CLOCK_CACHE.with(std::cell::Cell::get);
        if cache.day == day {
            return Some(Civil {
                year: cache.year,
                month: cache.month,
                day: cache.day_of_month,
                hour,
                minute,
            });
        }
        let (year, month, day_of_month, _, _, _) =
            pi_retrospect_core::Timestamp { seconds, nanos: 0 }.to_utc_fields();
        let civil = Civil {
            year: i16::try_from(year).ok()?,
            month: i8::try_from(month).ok()?,
            day: i8::try_from(day_of_month).ok()?,
            hour,
            minute,
        };
        CLOCK_CACHE.with(|cell| {
            cell.set(ClockCache {
                day,
                year: civil.year,
                month: civil.month,
                day_of_month: civil.day,
                ..cell.get()
            });
        });
        Some(civil)
    }

    /// Appends the date, `YYYY-MM-DD` (the year as [`WhenText::push_year`] writes it).
    fn push_date(self, text: &mut WhenText) {
        text.push_year(self.year);
        text.push(b'-');
        text.push_pair(self.month, b'-', self.day);
    }
}

/// The text `when` writes, built on the stack: at most 31 ASCII bytes (`-32768-12-31 23:59`
/// and `-32768-12-31`) and the arrow between them, kept apart so that the bytes are checked
/// as UTF-8 on the fast path for ASCII.
struct WhenText {
    bytes: [u8; 40],
    len: usize,
    /// Where `→` stands, when it does.
    arrow_at: Option<usize>,
}

impl Default for WhenText {
    fn default() -> WhenText {
        WhenText {
            bytes: [0; 40],
            len: 0,
            arrow_at: None,
        }
    }
}

impl WhenText {
    /// Appends a byte (never past the buffer, which is longer than any text `when` writes).
    fn push(&mut self, byte: u8) {
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = byte;
            self.len += 1;
        }
    }

    /// Appends `→`.
    fn push_arrow(&mut self) {
        self.arrow_at = Some(self.len);
    }

    /// Appends two calendar fields as two digits each, `separator` between them (`09-03`,
    /// `14:32`).
    fn push_pair(&mut self, first: i8, separator: u8, second: i8) {
        self.push_two(first);
        self.push(separator);
        self.push_two(second);
    }

    /// Appends a calendar field (0-99) as two digits.
    fn push_two(&mut self, value: i8) {
        let value = value.unsigned_abs() % 100;
        self.push(b'0' + value / 10);
        self.push(b'0' + value % 10);
    }

    /// Appends a year as `strftime`'s `%Y` writes it: at least four digits, with a sign when
    /// negative.
    fn push_year(&mut self, year: i16) {
        if year < 0 {
            self.push(b'-');
        }
        let year = year.unsigned_abs();
        if year >= 10_000 {
            // At most 32,768: one more digit.
            self.push(b'0' + (year / 10_000) as u8);
        }
        for divisor in [1000, 100, 10, 1] {
            // A digit: below 10, so the cast keeps it.
            self.push(b'0' + ((year / divisor) % 10) as u8);
        }
    }

    /// Appends the text to `out`. Only ASCII is pushed, so it is UTF-8 (the empty fallbacks
    /// are never taken).
    fn append_to(self, out: &mut String) {
        let arrow_at = self.arrow_at.unwrap_or(self.len);
        out.push_str(std::str::from_utf8(&self.bytes[..arrow_at]).unwrap_or_default());
        if self.arrow_at.is_some() {
            out.push('→');
            out.push_str(std::str::from_utf8(&self.bytes[arrow_at..self.len]).unwrap_or_default());
        }
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
    pi_retrospect_app::list_unordered(request, env, &mut |part| {
        for note in &part.notes {
            crate::output::print_note(note);
        }
        match write(format, &part, env, request.threads, out).and_then(|()| Ok(out.flush()?)) {
            Ok(()) => WalkState::Continue,
            Err(error) => {
                write_error = Some(error);
                WalkState::Quit
            }
        }
    })?;
    match write_error {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Returns what [`push_when`] appends.
    fn when(session: &Session, summary: Option<&SessionSummary>, clock: &LocalClock<'_>) -> String {
        let mut text = String::new();
        push_when(&mut text, session, summary, clock);
        text
    }

    /// `when` writes its fields by hand; it must say what `strftime` says, in any zone, for
    /// every shape (same minute, same day, same year, another year).
    #[test]
    fn when_matches_strftime() {
        let reference = |session: &Session,
                         last: pi_retrospect_core::Timestamp,
                         zone: &jiff::tz::TimeZone| {
            let local = |instant: pi_retrospect_core::Timestamp| {
                jiff::Timestamp::new(instant.seconds, i32::try_from(instant.nanos).unwrap_or(0))
                    .expect("in range")
                    .to_zoned(zone.clone())
            };
            let start = local(session.instant);
            let last = local(last);
            let mut text = start.strftime("%Y-%m-%d %H:%M").to_string();
            if last.year() != start.year() {
                text.push_str(&last.strftime("→%Y-%m-%d").to_string());
            } else if last.date() != start.date() {
                text.push_str(&last.strftime("→%m-%d").to_string());
            } else if last.strftime("%H:%M").to_string() != start.strftime("%H:%M").to_string() {
                text.push_str(&last.strftime("→%H:%M").to_string());
            }
            text
        };
        let parse = |text: &str| pi_retrospect_core::timestamp::parse(text).expect("timestamp");
        let zones = [
            jiff::tz::TimeZone::UTC,
            jiff::tz::TimeZone::get("Asia/Kolkata").expect("zone"),
            jiff::tz::TimeZone::get("America/St_Johns").expect("zone"),
            jiff::tz::TimeZone::get("America/New_York").expect("zone"),
            jiff::tz::TimeZone::get("Australia/Lord_Howe").expect("zone"),
        ];
        // Around New York's and Lord Howe's changes (2026-03-08 07:00, 2026-11-01 06:00 and
        // 2026-04-04 15:00 UTC), at them and a second and a nanosecond either side, so the
        // clock's cached periods are crossed in both directions.
        let starts = [
            "2026-01-01T00:00:00Z",
            "0999-12-31T23:59:59.999Z",
            "2026-03-08T06:30:00Z",
            "2026-03-08T06:59:59.999999999Z",
            "2026-03-08T07:00:00Z",
            "2026-11-01T05:59:59Z",
            "2026-11-01T06:00:00Z",
            "2026-04-04T14:59:59Z",
            "2026-04-04T15:00:00Z",
            "2026-04-04T15:00:01Z",
        ];
        let lasts = [
            "2026-01-01T00:00:30Z",
            "2026-01-01T00:01:00Z",
            "2026-01-01T23:59:00Z",
            "2026-02-03T04:05:06Z",
            "2027-01-01T00:00:00Z",
            "1000-01-01T00:00:00Z",
            "2026-03-08T07:00:00.000000001Z",
            "2026-11-01T06:30:00Z",
            "2026-04-04T15:29:00Z",
        ];
        for zone in &zones {
            // One clock for the whole zone, as one listing has: its cache sees every order.
            let clock = LocalClock::new(zone);
            for start in starts {
                for last in lasts {
                    let session = Session {
                        id: "s".into(),
                        path: "/s.jsonl".into(),
                        timestamp: start.into(),
                        cwd: "/w".into(),
                        parent_session_path: None,
                        subagent_sessions: Vec::new(),
                        instant: parse(start),
                        n_pruned_runs: 0,
                        summary: None,
                    };
                    let summary = SessionSummary {
                        last_activity: Some(parse(last)),
                        ..SessionSummary::default()
                    };
                    assert_eq!(
                        when(&session, Some(&summary), &clock),
                        reference(&session, session.last_activity(Some(&summary)), zone),
                        "{start} → {last}"
                    );
                }
            }
        }
    }

    /// Final break review F4: an entry stamped 9999-12-31 is the last activity `--jsonl`
    /// reports; `--long` shows the same instant (in UTC, as local time cannot hold it) rather
    /// than no arrow at all.
    #[test]
    fn when_shows_an_activity_past_the_local_calendar() {
        let parse = |text: &str| pi_retrospect_core::timestamp::parse(text).expect("timestamp");
        let session = Session {
            id: "s".into(),
            path: "/s.jsonl".into(),
            timestamp: "2026-11-30T10:00:00Z".into(),
            cwd: "/w".into(),
            parent_session_path: None,
            subagent_sessions: Vec::new(),
            instant: parse("2026-11-30T10:00:00Z"),
            n_pruned_runs: 0,
            summary: None,
        };
        let summary = SessionSummary {
            last_activity: Some(parse("9999-12-31T23:59:59.999Z")),
            ..SessionSummary::default()
        };
        let zone = jiff::tz::TimeZone::get("Asia/Kolkata").expect("zone");
        let last = session.last_activity(Some(&summary)).to_string();
        assert_eq!(last, "9999-12-31T23:59:59.999Z");
        // Review fix 11, L3: in the later-year form, as wide as any other row's, so that one
        // odd row does not widen every row's WHEN column; the date is the UTC one.
        let zone = LocalClock::new(&zone);
        let shown = when(&session, Some(&summary), &zone);
        assert_eq!(shown, "2026-11-30 15:30→9999-12-31");
        let later_year = SessionSummary {
            last_activity: Some(parse("2027-01-02T00:00:00Z")),
            ..SessionSummary::default()
        };
        assert_eq!(
            shown.chars().count(),
            when(&session, Some(&later_year), &zone).chars().count()
        );

        // A start past the local calendar is its UTC date and time, as short as a local one.
        let mut far = session.clone();
        far.timestamp = "9999-12-31T23:59:59.123456789-23:59".into();
        far.instant = parse("9999-12-31T23:59:59.123456789-23:59");
        assert_eq!(when(&far, None, &zone), "10000-01-01 23:58");
    }

    proptest::proptest! {
        /// The clock's cached offset periods answer what the zone does, for instants in any
        /// order (sorted as a listing's, near each other, or anywhere in jiff's range), in
        /// zones with and without changes, and with another clock's entries in between.
        #[test]
        fn clock_offsets_match_the_zone(
            zone in proptest::sample::select(vec![
                "UTC", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata",
                "Europe/London", "Asia/Kathmandu",
            ]),
            base in proptest::prop_oneof![
                // Zones change most between 1900 and 2040; jiff's range is years -9999 to 9999.
                -2_300_000_000_i64..2_300_000_000,
                -377_800_000_000_i64..253_500_000_000,
            ],
            steps in proptest::collection::vec((-40_000_000_i64..40_000_000, 0_u32..1_000_000_000), 1..40),
            is_sorted: bool,
        ) {
            let zone = jiff::tz::TimeZone::get(zone).expect("zone");
            let other_zone = jiff::tz::TimeZone::get("America/St_Johns").expect("zone");
            let clock = LocalClock::new(&zone);
            let other = LocalClock::new(&other_zone);
            let mut instants: Vec<pi_retrospect_core::Timestamp> = steps
                .iter()
                .map(|&(step, nanos)| pi_retrospect_core::Timestamp { seconds: base + step, nanos })
                .collect();
            if is_sorted {
                instants.sort_by_key(|instant| (instant.seconds, instant.nanos));
            }
            for (index, instant) in instants.iter().enumerate() {
                let expected = jiff::Timestamp::new(instant.seconds, i32::try_from(instant.nanos).unwrap_or(0))
                    .ok()
                    .map(|at| zone.to_offset(at).seconds());
                proptest::prop_assert_eq!(clock.offset_seconds(*instant), expected, "{:?}", instant);
                if index % 7 == 6 {
                    let _ = other.offset_seconds(*instant);
                }
            }
        }
    }
}
