//! `pi-retrospect failures`: flags -> `app::failures` -> `render::failures`.

use std::io::Write;

use clap::{Args, ValueEnum};
use pi_retrospect_app::{Environment, FailuresRequest, ListRequest};
use pi_retrospect_app::{FailureKind, GroupBy};
use pi_retrospect_render::failures::{self as render, TextOptions};

use crate::UsageError;
use crate::args::{ColorChoice, SessionFilterArgs, StoreArgs};

/// The long help of `failures`.
pub const FAILURES_HELP: &str = "\
Lists what failed in every selected session (subagent runs included), newest first: tool \
results with `isError` (tool_error), replies that ended with `stopReason` `error` \
(api_error, with the provider's errorMessage), `aborted` (aborted) or `length` (cut_off), \
and `!` commands that exited non-zero (command_exit). Each row names the session file and \
entry (a handle `show` and `inspect read` open), its time, cwd and title, whether it is on \
the active branch, the run depth, the tool and the failing call's arguments (the whole bash \
command), and the error text, bounded (head and tail kept) and free of terminal controls.

A line is decoded only when its raw bytes hold a failure's key and value, so a store is \
read about as fast as `rg` reads it. Entries a fork copied from its parent are counted once, \
in the parent, when both are selected. --since/--until bound each failure's own timestamp.

--by signature groups the same failure across sessions: the tool (or kind) and the first \
and last lines of the error (a traceback's last line names it) with numbers, hex ids, paths \
and line/column positions replaced; a failure without error text is `TOOL: (no error text)`. --repeats \
lists the same tool called with the same arguments three or more times in a row (failing or \
not); --by session counts those calls per session (repeatedCalls). Exit status: 0 when some \
failure (or, with --repeats, a repeated call) was found, 1 when none was, 2 on an error.

Examples (on the committed fixtures, from the repository root, with R=fixtures/pi-real/sessions):
  pi-retrospect failures --sessions-root $R
  pi-retrospect failures --sessions-root $R --kind tool_error,command_exit --json
  pi-retrospect failures --sessions-root $R --by signature
  pi-retrospect failures --sessions-root $R --by session --since 2026-11-30
  pi-retrospect failures --sessions-root $R --session 01a22de2-540d --repeats --jsonl
  pi-retrospect failures --sessions-root $R --count";

/// The groupings of `--by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ByArg {
    /// The tool (or kind) plus the normalised error text.
    Signature,
    /// The tool, or the kind without one.
    Tool,
    /// The session file.
    Session,
    /// The session's cwd.
    Project,
    /// The UTC day.
    Day,
}

/// Flags of `failures`.
#[derive(Debug, Args)]
pub struct FailuresArgs {
    #[command(flatten)]
    pub store: StoreArgs,

    /// Only these kinds, comma-separated: tool_error, api_error, aborted, command_exit, cut_off.
    #[arg(long, value_name = "KINDS", help_heading = "Filters")]
    pub kind: Option<String>,

    /// Only this session (a path, an id or unique prefix, or `latest`) with its runs.
    #[arg(long, value_name = "SESSION", help_heading = "Filters")]
    pub session: Option<String>,

    #[command(flatten)]
    pub filters: SessionFilterArgs,

    /// Sessions whose id starts with PREFIX (repeatable).
    #[arg(long, value_name = "PREFIX", help_heading = "Filters")]
    pub id: Vec<String>,

    /// Sessions whose name contains TEXT, case-insensitively.
    #[arg(long, value_name = "TEXT", help_heading = "Filters")]
    pub name: Option<String>,

    /// Failures at or after WHEN (a date, a date-time, RFC 3339, or an age like 3d).
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub since: Option<String>,

    /// Failures at or before WHEN.
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub until: Option<String>,

    /// Group the failures.
    #[arg(long, value_enum, value_name = "KEY", help_heading = "Grouping")]
    pub by: Option<ByArg>,

    /// The IANA time zone of --by day and of dates in --since/--until (default: the local
    /// zone, as stats reads them).
    #[arg(long, value_name = "ZONE", help_heading = "Grouping")]
    pub timezone: Option<String>,

    /// Also list runs of the same call repeated three or more times in a row.
    #[arg(long, help_heading = "Grouping")]
    pub repeats: bool,

    /// Print only the number of failures (with --repeats, then the number of repeated
    /// calls on a second line).
    #[arg(long, short = 'c', help_heading = "Output")]
    pub count: bool,

    /// One JSON document (`pi-retrospect schema failures`).
    #[arg(long, conflicts_with = "jsonl", help_heading = "Output")]
    pub json: bool,

    /// One row per line as JSON (`type`: failure, repeat, group or warning), written as the
    /// files are read: sessions oldest first, each followed by its runs; a file's rows newest
    /// first.
    #[arg(long, help_heading = "Output")]
    pub jsonl: bool,

    /// When to colour.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = "Output")]
    pub color: ColorChoice,

    /// Worker threads (at most 256; default: one per core).
    #[arg(long, value_name = "N", help_heading = "Output")]
    pub threads: Option<usize>,
}

/// Returns the kinds a `--kind` list names.
fn parse_kinds(text: &str) -> Result<Vec<FailureKind>, UsageError> {
    // An empty name would select every kind while saying it selects one.
    if text.split(',').any(|name| name.trim().is_empty()) {
        return Err(UsageError(format!(
            "--kind {text:?}: an empty kind (expected tool_error, api_error, aborted, command_exit or cut_off, comma-separated)"
        )));
    }
    text.split(',')
        .map(str::trim)
        .map(|name| {
            FailureKind::from_name(name).ok_or_else(|| {
                UsageError(format!(
                    "--kind: unknown kind {name:?} (expected tool_error, api_error, aborted, command_exit or cut_off)"
                ))
            })
        })
        .collect()
}

/// Runs `failures`; returns whether some failure was found.
pub fn run(args: &FailuresArgs, env: &Environment, out: &mut dyn Write) -> anyhow::Result<bool> {
    let kinds = match &args.kind {
        Some(text) => parse_kinds(text)?,
        None => Vec::new(),
    };
    let session = args
        .session
        .as_deref()
        .map(|session| args.store.target(session, env))
        .transpose()?;
    let group_by = args.by.map(|by| match by {
        ByArg::Signature => GroupBy::Signature,
        ByArg::Tool => GroupBy::Tool,
        ByArg::Session => GroupBy::Session,
        ByArg::Project => GroupBy::Project,
        ByArg::Day => GroupBy::Day,
    });
    let request = FailuresRequest {
        sessions: args.filters.apply(ListRequest {
            stores: args.store.flags(),
            id_prefixes: args.id.clone(),
            name_contains: args.name.clone(),
            threads: crate::args::threads(args.threads)?,
            ..ListRequest::default()
        }),
        session,
        kinds,
        since: args.since.clone(),
        until: args.until.clone(),
        group_by,
        time_zone: args.timezone.clone(),
        repeats: args.repeats,
        // Counted, no row is kept (repeats are found as the lines are read).
        is_count_only: args.count && group_by.is_none(),
        interrupt: None,
        as_of: None,
        created_by: None,
    };
    if args.jsonl && group_by.is_none() {
        return write_jsonl_streamed(&request, env, out);
    }
    let result = pi_retrospect_app::failures(&request, env)?;
    let report = &result.report;
    // A loop asked for with --repeats is a finding too: `failures --repeats && alert` fires.
    let is_found = report.n_failures > 0 || (args.repeats && !report.repeats.is_empty());
    if args.json {
        render::write_json(out, report, result.groups.as_deref())?;
        return Ok(is_found);
    }
    if args.jsonl {
        for warning in &report.warnings {
            render::write_warning_jsonl(out, warning)?;
        }
        match &result.groups {
            Some(groups) => {
                for group in groups {
                    render::write_jsonl_row(out, "group", group)?;
                }
            }
            None => {
                for failure in &report.failures {
                    render::write_jsonl_row(out, "failure", failure)?;
                }
            }
        }
        for repeat in &report.repeats {
            render::write_jsonl_row(out, "repeat", repeat)?;
        }
        return Ok(is_found);
    }
    crate::output::print_listing_warnings(&report.warnings);
    if args.count {
        writeln!(out, "{}", report.n_failures)?;
        // What --repeats looks for is counted too: a loop with no failure is not "0".
        if args.repeats {
            writeln!(out, "{}", report.repeats.len())?;
        }
        return Ok(is_found);
    }
    let options = TextOptions {
        paint: crate::term::use_color(args.color),
        width: crate::term::fit_width(),
    };
    let has_printed = match &result.groups {
        Some(groups) => {
            render::write_groups_text(out, groups, options)?;
            !groups.is_empty()
        }
        None => {
            render::write_text(out, &report.failures, options)?;
            !report.failures.is_empty()
        }
    };
    // The runs themselves are listed when asked for; `--by session` finds them only for its
    // `repeated calls` counts.
    if args.repeats && !report.repeats.is_empty() {
        if has_printed {
            writeln!(out)?;
        }
        writeln!(out, "repeated calls:")?;
        render::write_repeats_text(out, &report.repeats, options)?;
    }
    Ok(is_found)
}

/// Writes `--jsonl` rows as the files are read (see `app::failures_streamed` for the order):
/// each file's warnings, failures and repeated calls, then the listing's warnings. Returns
/// whether some failure was found.
fn write_jsonl_streamed(
    request: &FailuresRequest,
    env: &Environment,
    out: &mut dyn Write,
) -> anyhow::Result<bool> {
    let mut written: std::io::Result<()> = Ok(());
    let mut is_repeat_found = false;
    let totals = pi_retrospect_app::failures_streamed(request, env, &mut |report| {
        is_repeat_found |= !report.repeats.is_empty();
        written = (|| {
            for warning in &report.warnings {
                render::write_warning_jsonl(out, warning)?;
            }
            for failure in &report.failures {
                render::write_jsonl_row(out, "failure", failure)?;
            }
            for repeat in &report.repeats {
                render::write_jsonl_row(out, "repeat", repeat)?;
            }
            Ok(())
        })();
        if written.is_ok() {
            std::ops::ControlFlow::Continue(())
        } else {
            std::ops::ControlFlow::Break(())
        }
    })?;
    written?;
    for warning in &totals.warnings {
        render::write_warning_jsonl(out, warning)?;
    }
    Ok(totals.n_failures > 0 || is_repeat_found)
}
