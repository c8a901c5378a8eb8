//! `pi-retrospect stats`: flags -> `app::stats` -> `render::stats`.

use std::io::Write;

use clap::Args;
use pi_retrospect_app::{Environment, ListRequest, StatsRequest};
use pi_retrospect_render::stats::{ChartMetric, ChartOptions, TableOptions};

use crate::UsageError;
use crate::args::{ColorChoice, SessionFilterArgs, StoreArgs};
use crate::output::print_listing_warnings;

/// The long help of `stats`.
pub const STATS_HELP: &str = "\
Counts tokens (input, output, cache read, cache write, total) and cost the way Pi counts a \
session's totals: assistant messages' usage, `usage` entries, compaction and branch-summary \
usage and tool results' nested usage, over every entry of the file (all branches). Cost is what Pi recorded (a recorded zero, as free and local providers record, is \
$0); where a provider recorded none, tokens still count and the cost is marked unknown \
(`?`/`*`). A record with a negative token count or cost (`cost.total` or one of its parts) is not counted but counted as a warning. Sums saturate rather than wrap on absurd values; a cost too large for exact cents is printed as the number itself, as in --json.

Every model call is counted once. Subagent runs are counted from their own files, on their \
own rows; the usage pi-subagents also records on the launching tool result is added only for \
runs whose file is missing (a warning names the launcher), under the model the run's result records. A run that names no file is looked for where pi-subagents writes it (`<launcher's stem>/<runId>/run-<index>/session.jsonl`). --rollup adds each run into the \
session that launched it and leaves the run's own row out, so the rows add up to the total. Per session, `pi` is what Pi reports for that file (nested run \
usage and a fork's copied entries included), `own` is the calls made in that file alone, and \
`withRuns` is `own` plus its runs; every aggregate (project, model, period, total) counts \
each call once. Copies under `subagent-artifacts/` are never read.

--since/--until bound each record's own timestamp (not the session's start). One time zone \
serves the whole report: --timezone (default: the local zone) sets the days, weeks and months \
of --by and how a date or a time without an offset in --since/--until is read, so \
`--since 2026-03-02 --timezone UTC` starts at the first instant of the UTC day the \
2026-03-02 row shows. Grouped by a period on a terminal, a bar chart of the trend follows \
the table.

Examples (on the committed fixtures, from the repository root, with R=fixtures/pi-real/sessions):
  pi-retrospect stats --sessions-root $R
  pi-retrospect stats --sessions-root $R --by model
  pi-retrospect stats --sessions-root $R --by day,model --timezone Europe/Berlin
  pi-retrospect stats --sessions-root $R --by session --rollup
  pi-retrospect stats --sessions-root $R --session 01a22de2-5685 --json";

/// Flags of `stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub store: StoreArgs,

    /// Only this session (a path, an id or unique prefix, or `latest`; a word naming a file in
    /// the current directory is that file) with its runs.
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

    /// Count records at or after WHEN (a date, a date-time, RFC 3339, or an age like 3d).
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub since: Option<String>,

    /// Count records at or before WHEN.
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub until: Option<String>,

    /// Group rows by these, comma-separated: session, project, model, day, week, month.
    #[arg(long, value_name = "KEYS", help_heading = "Grouping")]
    pub by: Option<String>,

    /// The IANA time zone of days, weeks and months, and of dates in --since/--until
    /// (default: the local zone).
    #[arg(long, value_name = "ZONE", help_heading = "Grouping")]
    pub timezone: Option<String>,

    /// Add each subagent run's usage into the session that launched it and leave out the run's
    /// own row (needs a session key in --by).
    #[arg(long, help_heading = "Grouping")]
    pub rollup: bool,

    /// Print the report as JSON (`pi-retrospect schema stats`).
    #[arg(long, help_heading = "Output")]
    pub json: bool,

    /// When to colour: the header and total lines, the chart's title and bars.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = "Output")]
    pub color: ColorChoice,

    /// Bars of cost instead of tokens in the chart.
    #[arg(long, help_heading = "Output")]
    pub chart_cost: bool,

    /// Worker threads (at most 256; default: one per core).
    #[arg(long, value_name = "N", help_heading = "Output")]
    pub threads: Option<usize>,
}

/// Runs `stats` with `args`, writing to `out`.
pub fn run(args: &StatsArgs, env: &Environment, out: &mut dyn Write) -> anyhow::Result<()> {
    let group_by = match &args.by {
        None => Vec::new(),
        Some(text) => pi_retrospect_app::parse_group_keys(text)
            .map_err(|error| UsageError(format!("--by: {error}")))?,
    };
    if args.rollup && !group_by.contains(&pi_retrospect_core::stats::GroupKey::Session) {
        // Only a session row has runs to add in; silently showing the same table would
        // suggest the runs were rolled up somewhere.
        return Err(UsageError(format!(
            "--rollup adds each run into the session row that launched it, so it needs a session key: --by {}",
            args.by.as_deref().map_or("session".to_owned(), |by| format!("session,{by}"))
        ))
        .into());
    }
    let session = args
        .session
        .as_deref()
        .map(|session| args.store.target(session, env))
        .transpose()?;
    let request = StatsRequest {
        sessions: args.filters.apply(ListRequest {
            stores: args.store.flags(),
            id_prefixes: args.id.clone(),
            name_contains: args.name.clone(),
            threads: crate::args::threads(args.threads)?,
            ..ListRequest::default()
        }),
        session,
        group_by,
        time_zone: args.timezone.clone(),
        since: args.since.clone(),
        until: args.until.clone(),
        rollup: args.rollup,
    };
    let result = pi_retrospect_app::stats(&request, env)?;
    for note in &result.notes {
        crate::output::print_note(note);
    }
    let report = &result.report;
    if args.json {
        pi_retrospect_render::stats::write_json(out, report)?;
        return Ok(());
    }
    print_listing_warnings(&report.warnings);
    let color = crate::term::use_color(args.color);
    pi_retrospect_render::stats::write_table(
        out,
        report,
        &TableOptions {
            rollup: args.rollup,
            paint: color,
            id_prefixes: Some(&result.id_prefixes),
            width: crate::term::fit_width(),
        },
    )?;
    if let Some(width) = crate::term::fit_width() {
        let options = ChartOptions {
            width,
            metric: if args.chart_cost {
                ChartMetric::Cost
            } else {
                ChartMetric::Tokens
            },
            paint: color,
        };
        pi_retrospect_render::stats::write_bar_chart(out, report, &options)?;
    }
    Ok(())
}
