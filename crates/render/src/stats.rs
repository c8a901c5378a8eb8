//! Writers for a token and cost report ([`StatsReport`]): an aligned table with a total row,
//! a compact bar chart for a day, week or month grouping, JSON, and the JSON Schema.

use std::collections::BTreeMap;
use std::io::{self, Write};

use jiff::ToSpan;
use jiff::civil::Date;
use pi_retrospect_core::stats::{Figures, GroupKey, StatsReport, StatsRow, Usage};
use pi_retrospect_core::{IdPrefixes, unique_prefix_len};

use unicode_width::UnicodeWidthStr;

use crate::text::{field, thousands};

/// Options for [`write_table`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableOptions<'a> {
    /// Shows each session row's figure with its subagent runs (`withRuns`) instead of its own.
    pub rollup: bool,
    /// Emits ANSI colour: the header and the total line bold.
    pub paint: crate::Paint,
    /// The ids a lookup by id searches (the whole store): each session's id is shown by a
    /// prefix unique among them too, not only among the rows shown, so it stays a handle
    /// when a filter kept few sessions.
    pub id_prefixes: Option<&'a IdPrefixes>,
    /// The line width a table grouped by session fits its last column (the session's cwd and
    /// name or first request) to, cutting it with `…` as `list -l` does (a terminal's
    /// width); `None` cuts nothing, so a pipe to `grep` gets whole names and cwds.
    pub width: Option<usize>,
}

/// Writes the report as an aligned table: one column per grouped dimension, then `Input`,
/// `Output`, `Cache read`, `Cache write`, `Total` and `Cost`, one line per row and a `Total`
/// line (the deduplicated store total). Sessions are shown by their shortest distinct id
/// prefix (distinct among `id_prefixes` too when given), runs indented under the session
/// that launched them, forks marked `(fork)`; when a fork's file holds copies of its
/// parent's records, a `Pi total` column gives what Pi reports for the file. A cost some of whose records had no recorded cost ends in `*`, one with none
/// known is `?`, and a note says so. The report's warnings are the caller's to print (the CLI
/// writes warnings to stderr).
pub fn write_table(
    out: &mut dyn Write,
    report: &StatsReport,
    options: &TableOptions<'_>,
) -> io::Result<()> {
    let shown_ids = || {
        report
            .rows
            .iter()
            .filter_map(|row| row.session.as_ref())
            .map(|session| session.session_id.as_str())
    };
    let store_width = options.id_prefixes.map_or(0, |prefixes| {
        shown_ids()
            .map(|id| prefixes.unique_len(id))
            .max()
            .unwrap_or(0)
    });
    let id_width = unique_prefix_len(shown_ids()).max(store_width);
    let shows_pi = report.rows.iter().any(|row| match &row.figures {
        Figures::Session { pi, own, .. } => pi.total != own.total,
        Figures::Group { .. } => false,
    });
    let mut header: Vec<String> = report
        .group_by
        .iter()
        .map(|key| column_title(*key, options.rollup).to_owned())
        .collect();
    if header.is_empty() {
        header.push(String::new());
    }
    let n_keys = header.len();
    header.extend(FIGURE_TITLES.iter().map(|title| (*title).to_owned()));
    if shows_pi {
        header.push("Pi total".to_owned());
    }
    let shows_facts = report.group_by.contains(&GroupKey::Session);
    if shows_facts {
        header.extend(FACT_TITLES.iter().map(|title| (*title).to_owned()));
    }

    let mut lines = vec![header];
    for row in &report.rows {
        let mut cells: Vec<String> = report
            .group_by
            .iter()
            .map(|key| key_cell(row, *key, id_width))
            .collect();
        let usage = shown_figure(row, options.rollup);
        cells.extend(figure_cells(usage));
        if shows_pi {
            cells.push(match &row.figures {
                Figures::Session { pi, own, .. } if pi.total != own.total => format_count(pi.total),
                _ => String::new(),
            });
        }
        if shows_facts {
            cells.extend(fact_cells(row, options.width.is_some()));
        }
        lines.push(cells);
    }
    let mut total = vec![String::new(); n_keys];
    total[0] = "Total".to_owned();
    total.extend(figure_cells(&report.total));
    if shows_pi {
        total.push(String::new());
    }
    if shows_facts {
        total.extend(std::iter::repeat_n(String::new(), FACT_TITLES.len()));
    }
    lines.push(total);

    let mut dropped = Vec::new();
    if let Some(width) = options.width {
        let project_column = (!shows_facts)
            .then(|| {
                report
                    .group_by
                    .iter()
                    .position(|key| *key == GroupKey::Project)
            })
            .flatten();
        dropped = drop_columns_to_fit(&mut lines, width, shows_facts, project_column);
    }
    let mut widths = column_widths(&lines);
    if let (Some(width), Some(column)) = (
        options.width,
        report
            .group_by
            .iter()
            .position(|key| *key == GroupKey::Project),
    ) && !shows_facts
    {
        // A project is a cwd: past the columns dropped, a long one gives up its middle (its
        // telling end stays, as `list -l` keeps it) rather than push the figures off the line.
        let others: usize = widths
            .iter()
            .enumerate()
            .filter(|(idx, _)| *idx != column)
            .map(|(_, width)| width + 2)
            .sum();
        let room = width
            .saturating_sub(others)
            .clamp(MIN_CWD_CHARS.min(widths[column]), widths[column]);
        for cells in lines.iter_mut().skip(1) {
            if let Some(project) = cells.get_mut(column) {
                *project = crate::long::elide_middle(project, room);
            }
        }
        widths = column_widths(&lines);
    }
    if shows_facts && let Some(width) = options.width {
        // The cwd and the name are the last columns: on a narrow line the cwd gives up its
        // middle first (keeping its telling end, as `list -l` does), then the name is cut to
        // what the line has left, never wrapped.
        let n_columns = widths.len();
        let fixed: usize = widths[..n_columns - 2].iter().map(|width| width + 2).sum();
        let cwd_room = width
            .saturating_sub(fixed + 2 + MIN_DESCRIPTION_CHARS)
            .clamp(
                MIN_CWD_CHARS.min(widths[n_columns - 2]),
                widths[n_columns - 2],
            );
        for cells in lines.iter_mut().skip(1) {
            if let Some(cwd) = cells.get_mut(n_columns - 2) {
                *cwd = crate::long::elide_middle(cwd, cwd_room);
            }
        }
        widths = column_widths(&lines);
        let used: usize = widths[..n_columns - 1].iter().map(|width| width + 2).sum();
        let room = width.saturating_sub(used).max(MIN_DESCRIPTION_CHARS);
        for cells in &mut lines {
            if let Some(last) = cells.last_mut() {
                *last = crate::text::cut_to(last, room);
            }
        }
        widths = column_widths(&lines);
    }
    // Keys, and a session's cwd and name, are text; the rest are figures.
    let is_left_aligned = |idx: usize| idx < n_keys || (shows_facts && idx + 2 >= widths.len());
    let mut text = String::new();
    let n_lines = lines.len();
    for (line_idx, cells) in lines.iter().enumerate() {
        let mut line = String::new();
        for (idx, cell) in cells.iter().enumerate() {
            if idx > 0 {
                line.push_str("  ");
            }
            let padding = widths[idx].saturating_sub(cell.width());
            if is_left_aligned(idx) {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', padding));
            } else {
                line.extend(std::iter::repeat_n(' ', padding));
                line.push_str(cell);
            }
        }
        // On a terminal a line still wider than it (many figures, a narrow window) is cut
        // at its edge with `…`: never wrapped into the next.
        let line = match options.width {
            Some(width) if line.trim_end().width() > width => {
                crate::text::cut_to(line.trim_end(), width)
            }
            _ => line,
        };
        let is_emphasised = line_idx == 0 || line_idx + 1 == n_lines;
        if options.paint.is_on && is_emphasised {
            text.push_str(&format!("{BOLD}{}{RESET}", line.trim_end()));
        } else {
            text.push_str(line.trim_end());
        }
        text.push('\n');
    }
    if let (false, Some(width)) = (dropped.is_empty(), options.width) {
        let note = format!(
            "not shown for the terminal's width: {} (a pipe or --json has every column)",
            dropped.join(", ")
        );
        // Wrapped, never cut: it is the one place that names every column left out.
        for line in crate::text::wrap(&note, width) {
            text.push_str(&line);
            text.push('\n');
        }
    }
    if !report.total.is_cost_known() {
        let note = format!(
            "* cost unknown for {} of {} records (the provider recorded none): costs shown are lower bounds",
            format_count(report.total.n_cost_unknown),
            format_count(report.total.n_entries)
        );
        match options.width {
            Some(width) => {
                for line in crate::text::wrap(&note, width) {
                    text.push_str(&line);
                    text.push('\n');
                }
            }
            None => {
                text.push_str(&note);
                text.push('\n');
            }
        }
    }
    out.write_all(text.as_bytes())
}

/// What [`write_bar_chart`] draws bars of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ChartMetric {
    /// Total tokens (known for every record).
    #[default]
    Tokens,
    /// Recorded cost.
    Cost,
}

/// Options for [`write_bar_chart`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChartOptions {
    /// The line width to fit (the terminal's width, or a default).
    pub width: usize,
    /// What the bars measure.
    pub metric: ChartMetric,
    /// Emits ANSI colour: the title bold, the bars cyan.
    pub paint: crate::Paint,
}

const BOLD: &str = "\x1b[1m";
const CYAN: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

impl Default for ChartOptions {
    fn default() -> Self {
        ChartOptions {
            width: 80,
            metric: ChartMetric::Tokens,
            paint: crate::Paint::OFF,
        }
    }
}

/// Writes one bar per period of the report's first period grouping (day, week or month),
/// oldest first, each with its total tokens and cost; other dimensions are summed. A short
/// run of periods without records is drawn as empty bars so the gap shows; a longer one is a
/// single `… (N empty days)` line. Writes nothing when the report is not grouped by a period.
pub fn write_bar_chart(
    out: &mut dyn Write,
    report: &StatsReport,
    options: &ChartOptions,
) -> io::Result<()> {
    let Some(key) = report.group_by.iter().copied().find(|key| key.is_period()) else {
        return Ok(());
    };
    let mut periods: BTreeMap<&str, Usage> = BTreeMap::new();
    for row in &report.rows {
        if let Some(label) = row.key_text(key) {
            periods.entry(label).or_default().add(row.figures.counted());
        }
    }
    let unknown = periods.remove("unknown");
    let (mut bars, gaps) = with_gaps(key, &periods);
    if let Some(unknown) = unknown {
        bars.push(("unknown".to_owned(), unknown));
    }
    let value = |usage: &Usage| match options.metric {
        ChartMetric::Tokens => usage.total as f64,
        ChartMetric::Cost => usage.cost,
    };
    let max = bars
        .iter()
        .map(|(_, usage)| value(usage))
        .fold(0.0, f64::max);
    let label_width = bars.iter().map(|(label, _)| label.len()).max().unwrap_or(0);
    let tokens_width = bars
        .iter()
        .map(|(_, usage)| format_count(usage.total).len())
        .max()
        .unwrap_or(0);
    let costs: Vec<String> = bars.iter().map(|(_, usage)| format_cost(usage)).collect();
    let cost_width = costs
        .iter()
        .map(|cost| cost.chars().count())
        .max()
        .unwrap_or(0);
    let bar_width = options
        .width
        .saturating_sub(label_width + tokens_width + cost_width + 6)
        .max(10);

    let (bold, cyan, reset) = if options.paint.is_on {
        (BOLD, CYAN, RESET)
    } else {
        ("", "", "")
    };
    let mut text = format!(
        "{bold}{} by {} ({}){reset}\n",
        match options.metric {
            ChartMetric::Tokens => "Tokens",
            ChartMetric::Cost => "Cost",
        },
        key.as_str(),
        field(&report.time_zone)
    );
    let unit = match key {
        GroupKey::Week => "weeks",
        GroupKey::Month => "months",
        _ => "days",
    };
    let mut gaps = gaps.iter().peekable();
    for (idx, ((label, usage), cost)) in bars.iter().zip(&costs).enumerate() {
        if let Some((_, n_empty)) = gaps.next_if(|(before, _)| *before == idx) {
            text.push_str(&format!(
                "{:<label_width$}  ({} empty {unit})\n",
                "…",
                thousands(usize::try_from(*n_empty).unwrap_or(usize::MAX))
            ));
        }
        let bar = if max > 0.0 {
            bar_of(value(usage) / max * bar_width as f64)
        } else {
            String::new()
        };
        let padding = bar_width.saturating_sub(bar.chars().count());
        text.push_str(&format!(
            "{label:<label_width$}  {cyan}{bar}{reset}{}  {:>tokens_width$}  {cost:>cost_width$}\n",
            " ".repeat(padding),
            format_count(usage.total),
        ));
    }
    if !report.total.is_cost_known() {
        text.push_str("* cost unknown for some records (the provider recorded none)\n");
    }
    out.write_all(text.as_bytes())
}

/// Writes the report as pretty-printed JSON (two-space indentation) and a final newline.
pub fn write_json(out: &mut dyn Write, report: &StatsReport) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// Returns a token count with thousands separators: `1,234,567` ([`thousands`] for `u64`).
pub fn format_count(count: u64) -> String {
    usize::try_from(count).map_or_else(|_| count.to_string(), thousands)
}

/// The cost from which dollars are no longer written in cents: 2^53 cents, above which a
/// float no longer holds every cent (and the cents of `i64` run out soon after).
pub const MAX_CENTS_DOLLARS: f64 = 90_071_992_547_409.92;

/// Returns a figure's cost in dollars: cents from one dollar up (`$1,234.56`), four decimals
/// below (`$0.0151`); `*` after it when some records had no recorded cost (a lower bound), and
/// `?` when none did. A cost too large for exact cents (from [`MAX_CENTS_DOLLARS`] on, only a
/// saturated or forged sum) is written as the number itself, in the shortest form that reads
/// back as the same value, so the text says what the JSON report says.
pub fn format_cost(usage: &Usage) -> String {
    if usage.n_entries > 0 && usage.n_cost_unknown == usage.n_entries {
        return "?".to_owned();
    }
    let dollars = if usage.cost.abs() >= MAX_CENTS_DOLLARS {
        format!("${:e}", usage.cost)
    } else if usage.cost.abs() >= 1.0 {
        let cents = (usage.cost * 100.0).round() as i64;
        let sign = if cents < 0 { "-" } else { "" };
        format!(
            "{sign}${}.{:02}",
            format_count(cents.unsigned_abs() / 100),
            cents.unsigned_abs() % 100
        )
    } else {
        format!("${:.4}", usage.cost)
    };
    if usage.is_cost_known() {
        dollars
    } else {
        format!("{dollars}*")
    }
}

const FIGURE_TITLES: [&str; 6] = [
    "Input",
    "Output",
    "Cache read",
    "Cache write",
    "Total",
    "Cost",
];

/// The titles of the columns a table grouped by session adds after the figures.
const FACT_TITLES: [&str; 5] = ["Turns", "Tool calls", "Duration", "Cwd", "Name"];

/// The columns a table too wide for the terminal gives up, the first first: the parts the
/// total sums, then a session's details. The keys, `Total`, `Cost`, a session's cwd (elided)
/// and name (cut) always stay, so that a narrow window still answers what it cost.
const DROPPED_FIRST: [&str; 8] = [
    "Cache write",
    "Cache read",
    "Pi total",
    "Tool calls",
    "Input",
    "Output",
    "Duration",
    "Turns",
];

/// Removes columns of `lines` (its first line holds the titles) in [`DROPPED_FIRST`] order
/// until the table fits `width` (a session's cwd and name counted at their least), and
/// returns the titles removed.
fn drop_columns_to_fit(
    lines: &mut [Vec<String>],
    width: usize,
    shows_facts: bool,
    project_column: Option<usize>,
) -> Vec<String> {
    let table_width = |lines: &[Vec<String>]| {
        let widths = column_widths(lines);
        let n_columns = widths.len();
        widths
            .iter()
            .enumerate()
            .map(|(idx, &column)| match shows_facts {
                true if idx + 2 == n_columns => column.min(MIN_CWD_CHARS),
                true if idx + 1 == n_columns => column.min(MIN_DESCRIPTION_CHARS),
                // A project (a cwd) is elided past this rather than cost a figure.
                _ if Some(idx) == project_column => column.min(MAX_CWD_CHARS),
                _ => column,
            })
            .sum::<usize>()
            + 2 * n_columns.saturating_sub(1)
    };
    let mut dropped = Vec::new();
    for title in DROPPED_FIRST {
        if table_width(lines) <= width {
            break;
        }
        let Some(column) = lines[0].iter().position(|cell| cell == title) else {
            continue;
        };
        for cells in lines.iter_mut() {
            if column < cells.len() {
                cells.remove(column);
            }
        }
        dropped.push(title.to_owned());
    }
    dropped
}

/// The fewest columns the name column is cut to, however narrow the line.
const MIN_DESCRIPTION_CHARS: usize = 16;

/// The fewest columns a session's cwd is elided to on a narrow line.
const MIN_CWD_CHARS: usize = 12;

/// The most columns of a cwd a session table shows (a longer one is cut with `…`), so a
/// deep path leaves the name room.
const MAX_CWD_CHARS: usize = 40;

/// Returns a session row's turns, tool calls, duration, cwd and name (or first request) cells;
/// `is_fitted` (a terminal) shortens a long cwd, otherwise it is whole.
fn fact_cells(row: &StatsRow, is_fitted: bool) -> [String; 5] {
    let Some(session) = &row.session else {
        return Default::default();
    };
    let facts = &session.facts;
    let n_tool_calls = facts
        .tool_calls
        .values()
        .fold(0u64, |sum, count| sum.saturating_add(*count));
    let title = facts
        .name
        .as_deref()
        .or(facts.first_user_message.as_deref())
        .unwrap_or("");
    [
        format_count(facts.n_turns),
        format_count(n_tool_calls),
        facts.duration_ms.map(format_duration).unwrap_or_default(),
        if is_fitted {
            crate::long::elide_middle(&field(&session.cwd), MAX_CWD_CHARS)
        } else {
            field(&session.cwd).into_owned()
        },
        crate::text::one_line(title, 4096),
    ]
}

/// Returns a duration as `0.2s`, `12s`, `3m05s` or `2h07m`.
pub fn format_duration(millis: u64) -> String {
    let seconds = millis / 1000;
    match seconds {
        // Tenths, cut rather than rounded, so a figure never reads longer than it was.
        0..10 => format!("{seconds}.{}s", (millis % 1000) / 100),
        10..60 => format!("{seconds}s"),
        60..3600 => format!("{}m{:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h{:02}m", seconds / 3600, (seconds % 3600) / 60),
    }
}

fn column_title(key: GroupKey, rollup: bool) -> &'static str {
    match key {
        GroupKey::Session if rollup => "Session (with runs)",
        GroupKey::Session => "Session",
        GroupKey::Project => "Project",
        GroupKey::Model => "Model",
        GroupKey::Day => "Day",
        GroupKey::Week => "Week of",
        GroupKey::Month => "Month",
    }
}

fn key_cell(row: &StatsRow, key: GroupKey, id_width: usize) -> String {
    if key == GroupKey::Session
        && let Some(session) = &row.session
    {
        let mut cell = "  ".repeat(session.depth);
        cell.extend(field(&session.session_id).chars().take(id_width));
        if session.fork_of.is_some() {
            cell.push_str(" (fork)");
        }
        return cell;
    }
    row.key_text(key)
        .map(|text| field(text).into_owned())
        .unwrap_or_default()
}

fn shown_figure(row: &StatsRow, rollup: bool) -> &Usage {
    match &row.figures {
        Figures::Session { with_runs, .. } if rollup => with_runs,
        figures => figures.counted(),
    }
}

fn figure_cells(usage: &Usage) -> [String; 6] {
    [
        format_count(usage.input),
        format_count(usage.output),
        format_count(usage.cache_read),
        format_count(usage.cache_write),
        format_count(usage.total),
        format_cost(usage),
    ]
}

fn column_widths(lines: &[Vec<String>]) -> Vec<usize> {
    let mut widths = vec![0; lines.first().map_or(0, Vec::len)];
    for cells in lines {
        for (width, cell) in widths.iter_mut().zip(cells) {
            *width = (*width).max(cell.width());
        }
    }
    widths
}

/// Returns the bars from the first period to the last, oldest first: the recorded periods and
/// runs of at most [`MAX_EMPTY_BARS`] empty ones between them; and each longer run of empty
/// periods as `(index of the bar it comes before, its length)`. Labels that are no period
/// (never produced by the library) are kept as they are.
fn with_gaps(key: GroupKey, periods: &BTreeMap<&str, Usage>) -> (Vec<Bar>, Vec<Gap>) {
    let parse = |label: &str| match key {
        GroupKey::Month => format!("{label}-01").parse::<Date>().ok(),
        _ => label.parse::<Date>().ok(),
    };
    let as_is = || {
        let bars = periods
            .iter()
            .map(|(label, usage)| ((*label).to_owned(), *usage))
            .collect();
        (bars, Vec::new())
    };
    let Some(dates) = periods
        .keys()
        .map(|label| parse(label))
        .collect::<Option<Vec<Date>>>()
    else {
        return as_is();
    };
    let step = match key {
        GroupKey::Week => 1.week(),
        GroupKey::Month => 1.month(),
        _ => 1.day(),
    };
    let label_of = |date: Date| match key {
        GroupKey::Month => format!("{:04}-{:02}", date.year(), date.month()),
        _ => date.to_string(),
    };
    let mut bars = Vec::new();
    let mut gaps = Vec::new();
    let mut previous: Option<Date> = None;
    for (date, usage) in dates.into_iter().zip(periods.values().copied()) {
        if let Some(previous) = previous {
            let n_empty = periods_between(key, previous, date);
            if n_empty > MAX_EMPTY_BARS {
                gaps.push((bars.len(), n_empty));
            } else {
                let mut empty = previous;
                for _ in 0..n_empty {
                    match empty.checked_add(step) {
                        Ok(next) => empty = next,
                        Err(_) => break,
                    }
                    bars.push((label_of(empty), Usage::default()));
                }
            }
        }
        bars.push((label_of(date), usage));
        previous = Some(date);
    }
    (bars, gaps)
}

/// One bar of the chart: a period's label and its figures.
type Bar = (String, Usage);

/// A long run of empty periods: the index of the bar it comes before, and its length.
type Gap = (usize, i64);

/// The longest run of empty periods drawn as bars; a longer run is one line saying how many
/// periods it holds, so a report spanning years stays a few lines.
const MAX_EMPTY_BARS: i64 = 3;

/// Returns how many whole periods lie strictly between the periods starting at `from` and
/// `to` (`from` < `to`).
fn periods_between(key: GroupKey, from: Date, to: Date) -> i64 {
    let n_days = i64::from((to - from).get_days());
    match key {
        GroupKey::Week => n_days / 7 - 1,
        GroupKey::Month => {
            let months = |date: Date| i64::from(date.year()) * 12 + i64::from(date.month());
            months(to) - months(from) - 1
        }
        _ => n_days - 1,
    }
    .max(0)
}

/// Returns a bar `width` columns long (fractional: drawn in eighths).
fn bar_of(width: f64) -> String {
    const EIGHTHS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let n_eighths = (width * 8.0).round().max(0.0) as usize;
    let mut bar: String = std::iter::repeat_n('█', n_eighths / 8).collect();
    if !n_eighths.is_multiple_of(8) {
        bar.push(EIGHTHS[n_eighths % 8]);
    }
    bar
}

/// The JSON Schema (draft 2020-12) of [`write_json`]'s document.
pub const STATS_SCHEMA: &str = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://pi-retrospect.invalid/schema/stats.json",
  "title": "pi-retrospect stats --json",
  "description": "Tokens and cost counted the way Pi's session statistics count them (assistant messages, usage entries, compaction and branch-summary usage, tool results' nested usage; every entry of every branch once), grouped as asked. Entries a fork copied from its parent are counted once, in the parent; subagent runs are counted once, on their own rows (a tool result's nested usage only for runs whose files are not listed).",
  "type": "object",
  "additionalProperties": false,
  "required": ["groupBy", "timeZone", "rows", "total", "warnings", "nWarnings"],
  "properties": {
    "groupBy": {
      "type": "array",
      "description": "The dimensions of each row, in order; empty for the total alone.",
      "items": { "enum": ["session", "project", "model", "day", "week", "month"] }
    },
    "timeZone": { "type": "string", "description": "The zone days, weeks and months are counted in: an IANA name, a fixed offset, or `unnamed`." },
    "since": { "type": "string", "format": "date-time", "description": "Inclusive lower bound on each record's own timestamp (UTC)." },
    "until": { "type": "string", "format": "date-time", "description": "Inclusive upper bound on each record's own timestamp (UTC)." },
    "rows": {
      "type": "array",
      "description": "Ordered by key, dimension by dimension: sessions in listing order (oldest first, each followed by its runs), other values ascending (periods chronologically).",
      "items": { "$ref": "#/$defs/Row" }
    },
    "total": { "$ref": "#/$defs/Usage", "description": "Every record counted once." },
    "nWarnings": { "type": "integer", "minimum": 0, "description": "Problems found in all, those summed up by an `… and N more` warning included." },
    "warnings": {
      "type": "array",
      "description": "Files and lines that could not be counted, sorted by path then reason: per file the first 5 problem lines and one `… and N more` warning, at most 1000 in all.",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["path", "reason"],
        "properties": {
          "path": { "type": "string" },
          "reason": { "type": "string" }
        }
      }
    }
  },
  "$defs": {
    "Usage": {
      "type": "object",
      "additionalProperties": false,
      "required": ["input", "output", "cacheRead", "cacheWrite", "total", "cost", "nEntries", "nCostUnknown"],
      "properties": {
        "input": { "type": "integer", "minimum": 0 },
        "output": { "type": "integer", "minimum": 0 },
        "cacheRead": { "type": "integer", "minimum": 0 },
        "cacheWrite": { "type": "integer", "minimum": 0 },
        "total": { "type": "integer", "minimum": 0, "description": "input + output + cacheRead + cacheWrite, as Pi's /session totals it." },
        "cost": { "type": "number", "description": "Sum of the recorded usage.cost.total values; a lower bound when nCostUnknown > 0." },
        "nEntries": { "type": "integer", "minimum": 0, "description": "Usage records added." },
        "nCostUnknown": { "type": "integer", "minimum": 0, "description": "Records whose provider recorded no cost (none, or not a finite number; a recorded zero is a known zero): their tokens count, their cost is unknown." }
      }
    },
    "Row": {
      "type": "object",
      "description": "Key fields are present exactly for the grouped dimensions. A row grouped by session has pi, own and withRuns; any other row has usage.",
      "properties": {
        "path": { "type": "string", "description": "Session: absolute path of the session file." },
        "sessionId": { "type": "string", "description": "Session: id from the header." },
        "cwd": { "type": "string", "description": "Session: working directory from the header." },
        "depth": { "type": "integer", "minimum": 0, "description": "Session: 0 for a top-level session, 1 for its runs, ..." },
        "launchedBy": { "type": "string", "description": "Session: path of the session whose subagent run this file is." },
        "forkOf": { "type": "string", "description": "Session: path of the fork parent whose copied entries own leaves out." },
        "name": { "type": "string", "description": "Session: its name as Pi shows it (the latest session_info name)." },
        "firstUserMessage": { "type": "string", "description": "Session: the first user message's text, at most 500 characters (cut with …)." },
        "nTurns": { "type": "integer", "minimum": 0, "description": "Session: assistant messages in the file, every branch." },
        "toolCalls": { "type": "object", "additionalProperties": { "type": "integer", "minimum": 0 }, "description": "Session: tool calls by tool name (at most 64 names; the rest under (other))." },
        "durationMs": { "type": "integer", "minimum": 0, "description": "Session: milliseconds from the first entry's timestamp to the last entry's." },
        "project": { "type": "string", "description": "The cwd of the top-level session the file belongs to." },
        "model": { "type": "string", "description": "provider/model; `unknown` when none is named; `tool:<name>` for a tool result's nested usage." },
        "day": { "type": "string", "pattern": "^([0-9]{4}-[0-9]{2}-[0-9]{2}|unknown)$" },
        "week": { "type": "string", "pattern": "^([0-9]{4}-[0-9]{2}-[0-9]{2}|unknown)$", "description": "The Monday the week starts on." },
        "month": { "type": "string", "pattern": "^([0-9]{4}-[0-9]{2}|unknown)$" },
        "pi": { "$ref": "#/$defs/Usage", "description": "Session: what Pi's own session statistics report for the file: copies from a fork parent and tool results' nested subagent usage included." },
        "own": { "$ref": "#/$defs/Usage", "description": "Session: the model calls made in this file alone: no copies from the fork parent, and a tool result's nested usage only for subagent runs whose session files are not in the listing; what the row adds to every aggregate." },
        "withRuns": { "$ref": "#/$defs/Usage", "description": "Session: own plus the own of every subagent run below it." },
        "usage": { "$ref": "#/$defs/Usage", "description": "Any other row: its records, each counted once." }
      },
      "oneOf": [
        { "required": ["path", "sessionId", "cwd", "depth", "nTurns", "toolCalls", "pi", "own", "withRuns"], "properties": { "path": true, "sessionId": true, "cwd": true, "depth": true, "nTurns": true, "toolCalls": true, "pi": true, "own": true, "withRuns": true, "usage": false } },
        { "required": ["usage"], "properties": { "usage": true, "path": false, "pi": false, "own": false, "withRuns": false } }
      ],
      "additionalProperties": false
    }
  }
}
"##;

#[cfg(test)]
mod tests {
    use super::*;
    use pi_retrospect_core::Warning;
    use pi_retrospect_core::stats::RowSession;

    fn usage(total: u64, cost: f64, n_cost_unknown: u64) -> Usage {
        Usage {
            input: total,
            total,
            cost,
            n_entries: 2,
            n_cost_unknown,
            ..Usage::default()
        }
    }

    fn group_row(key: GroupKey, label: &str, usage: Usage) -> StatsRow {
        let mut row = StatsRow {
            session: None,
            project: None,
            model: None,
            day: None,
            week: None,
            month: None,
            figures: Figures::Group { usage },
        };
        let slot = match key {
            GroupKey::Model => &mut row.model,
            GroupKey::Day => &mut row.day,
            GroupKey::Week => &mut row.week,
            GroupKey::Month => &mut row.month,
            _ => &mut row.project,
        };
        *slot = Some(label.to_owned());
        row
    }

    fn report(group_by: Vec<GroupKey>, rows: Vec<StatsRow>, total: Usage) -> StatsReport {
        StatsReport {
            group_by,
            time_zone: "Europe/Berlin".to_owned(),
            since: None,
            until: None,
            rows,
            total,
            warnings: Vec::new(),
            n_warnings: 0,
        }
    }

    #[test]
    fn a_cost_too_large_for_cents_reads_as_the_figure_the_json_holds() {
        for cost in [f64::MAX, 1e300, MAX_CENTS_DOLLARS, 1.5e14, 9.3e16] {
            let figure = usage(1, cost, 0);
            let text = format_cost(&figure);
            let json: serde_json::Value = serde_json::to_value(figure).expect("a usage serialises");
            let from_text: f64 = text
                .strip_prefix('$')
                .and_then(|number| number.parse().ok())
                .unwrap_or_else(|| panic!("{text} is a dollar figure"));
            assert_eq!(Some(from_text), json["cost"].as_f64(), "{text}");
        }
        // Below the bound, cents as before.
        assert_eq!(format_cost(&usage(1, 1234.5, 0)), "$1,234.50");
        assert_eq!(
            format_cost(&usage(1, 90_071_992_547_409.0, 0)),
            "$90,071,992,547,409.00"
        );
    }

    fn text_of(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        write(&mut out).expect("write to a Vec");
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn formats_counts_and_costs() {
        let check = |usage: Usage, expected: &str| assert_eq!(format_cost(&usage), expected);
        check(usage(1, 0.015_06, 0), "$0.0151");
        check(usage(1, 1234.567, 0), "$1,234.57");
        check(usage(1, 0.5, 1), "$0.5000*");
        check(usage(1, 0.0, 2), "?");
        check(Usage::default(), "$0.0000");
        for (count, expected) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (1_234_567, "1,234,567"),
        ] {
            assert_eq!(format_count(count), expected);
        }
    }

    #[test]
    fn table_of_days_with_total_and_unknown_cost() {
        let report = report(
            vec![GroupKey::Day],
            vec![
                group_row(GroupKey::Day, "2026-03-29", usage(1500, 0.25, 0)),
                group_row(GroupKey::Day, "2026-03-30", usage(20, 0.0, 2)),
            ],
            Usage {
                n_entries: 4,
                ..usage(1520, 0.25, 2)
            },
        );
        let text = text_of(|out| write_table(out, &report, &TableOptions::default()));
        assert_eq!(
            text,
            "\
Day         Input  Output  Cache read  Cache write  Total      Cost
2026-03-29  1,500       0           0            0  1,500   $0.2500
2026-03-30     20       0           0            0     20         ?
Total       1,520       0           0            0  1,520  $0.2500*
* cost unknown for 2 of 4 records (the provider recorded none): costs shown are lower bounds
"
        );
    }

    #[test]
    fn durations_read_in_their_unit() {
        let cases = [
            (0, "0.0s"),
            (206, "0.2s"),
            (9_999, "9.9s"),
            (10_000, "10s"),
            (185_000, "3m05s"),
            (7_620_000, "2h07m"),
        ];
        for (millis, expected) in cases {
            assert_eq!(format_duration(millis), expected, "{millis}");
        }
    }

    #[test]
    fn table_of_sessions_shows_runs_forks_and_what_pi_counts() {
        let session_row =
            |id: &str, depth: usize, fork: bool, pi: u64, own: u64, runs: u64| StatsRow {
                session: Some(RowSession {
                    path: format!("/s/{id}.jsonl"),
                    session_id: id.to_owned(),
                    cwd: "/w".to_owned(),
                    depth,
                    launched_by: None,
                    fork_of: fork.then(|| "/s/p.jsonl".to_owned()),
                    facts: pi_retrospect_core::stats::SessionFacts {
                        name: (!fork).then(|| "fix the\nparser".to_owned()),
                        first_user_message: Some(
                            "a first request far too long for the line".to_owned(),
                        ),
                        n_turns: pi,
                        tool_calls: [("bash".to_owned(), 2), ("read".to_owned(), 1)].into(),
                        duration_ms: Some(pi * 1000 + 5),
                    },
                }),
                project: None,
                model: None,
                day: None,
                week: None,
                month: None,
                figures: Figures::Session {
                    pi: usage(pi, 0.5, 0),
                    own: usage(own, 0.5, 0),
                    with_runs: usage(runs, 0.5, 0),
                },
            };
        let mut report = report(
            vec![GroupKey::Session],
            vec![
                session_row("0199aaaa-1111", 0, false, 300, 300, 750),
                session_row("0199aaaa-2222", 1, true, 700, 400, 400),
            ],
            usage(700, 1.0, 0),
        );
        // Warnings are the caller's to print, never part of the table.
        report
            .warnings
            .push(Warning::new("/s/x.jsonl", "line 3: not valid JSON"));
        let text = text_of(|out| {
            write_table(
                out,
                &report,
                &TableOptions {
                    rollup: true,
                    width: Some(150),
                    ..TableOptions::default()
                },
            )
        });
        // The name (or else the first request) is folded onto one line and cut with `…` to
        // the width; the counts are the row's facts.
        assert!(
            text.lines().all(|line| line.chars().count() <= 150),
            "{text}"
        );
        assert_eq!(
            text,
            "\
Session (with runs)  Input  Output  Cache read  Cache write  Total     Cost  Pi total  Turns  Tool calls  Duration  Cwd  Name
0199aaaa-1             750       0           0            0    750  $0.5000              300           3     5m00s  /w   fix the parser
  0199aaaa-2 (fork)    400       0           0            0    400  $0.5000       700    700           3    11m40s  /w   a first request far too long…
Total                  700       0           0            0    700    $1.00
"
        );
    }

    /// Session names are cut to the line's width in terminal columns, by whole graphemes:
    /// wide CJK characters count two, an emoji family sequence is kept or dropped whole.
    /// A top-level session row named `name` in `cwd` with five tokens and $0.50.
    fn named_session_row(idx: usize, cwd: &str, name: &str) -> StatsRow {
        StatsRow {
            session: Some(RowSession {
                path: format!("/s/{idx}.jsonl"),
                session_id: format!("0199bbbb-{idx}"),
                cwd: cwd.to_owned(),
                depth: 0,
                launched_by: None,
                fork_of: None,
                facts: pi_retrospect_core::stats::SessionFacts {
                    name: Some(name.to_owned()),
                    ..Default::default()
                },
            }),
            project: None,
            model: None,
            day: None,
            week: None,
            month: None,
            figures: Figures::Session {
                pi: usage(5, 0.5, 0),
                own: usage(5, 0.5, 0),
                with_runs: usage(5, 0.5, 0),
            },
        }
    }

    /// On a narrow terminal the cwd gives up its middle first, keeping its end, and a line
    /// still too wide is cut at the edge: every line fits, none wraps.
    #[test]
    fn narrow_terminals_elide_the_cwd_and_cut_the_line() {
        let cwd = "/home/someone/src/a-very-long-project-name/crates/the-app";
        let row = |idx: usize| named_session_row(idx, cwd, "Fix the flaky webhook test in CI");
        let report = report(
            vec![GroupKey::Session],
            vec![row(0), row(1)],
            usage(10, 1.0, 0),
        );
        let table = |width: Option<usize>| {
            text_of(|out| {
                write_table(
                    out,
                    &report,
                    &TableOptions {
                        width,
                        ..TableOptions::default()
                    },
                )
            })
        };
        let wide = table(Some(220));
        assert!(
            wide.contains(
                "/home/someone…roject-name/crates/the-app  Fix the flaky webhook test in CI"
            ),
            "{wide}"
        );
        let mid = table(Some(140));
        assert!(mid.contains("…e/crates/the-app  Fix the flaky w…"), "{mid}");
        for width in [60, 100, 150] {
            let text = table(Some(width));
            for line in text.lines() {
                assert!(
                    line.width() <= width,
                    "{width}: {line:?} is {} wide",
                    line.width()
                );
            }
        }
        // Without a terminal (a pipe to `grep`) nothing is cut: the cwd and name are whole.
        let long_name =
            "A name long enough that any fitted table would cut it somewhere ".repeat(4);
        let long = report_with_name(cwd, &long_name);
        let piped = text_of(|out| write_table(out, &long, &TableOptions::default()));
        assert!(piped.contains(cwd), "{piped}");
        assert!(piped.contains(long_name.trim_end()), "{piped}");
        assert!(!piped.contains('…'), "{piped}");
    }

    /// A report of one session row named `name` in `cwd`.
    fn report_with_name(cwd: &str, name: &str) -> StatsReport {
        report(
            vec![GroupKey::Session],
            vec![named_session_row(0, cwd, name)],
            usage(5, 0.5, 0),
        )
    }

    #[test]
    fn session_names_are_cut_by_display_width_never_inside_a_grapheme() {
        use unicode_segmentation::UnicodeSegmentation;
        let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}";
        let names = [
            "日本語のセッションの名前はとても長いのでこの幅には入りません".to_owned(),
            "\u{1F44D}\u{1F3FD}\u{1F1EF}\u{1F1F5}".repeat(40),
            format!("{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}{family}"),
            "cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301} cafe\u{301}".to_owned(),
        ];
        for width in [120, 131, 160] {
            let rows: Vec<StatsRow> = names
                .iter()
                .enumerate()
                .map(|(idx, name)| named_session_row(idx, "/w", name))
                .collect();
            let report = report(vec![GroupKey::Session], rows, usage(15, 1.5, 0));
            let text = text_of(|out| {
                write_table(
                    out,
                    &report,
                    &TableOptions {
                        width: Some(width),
                        ..TableOptions::default()
                    },
                )
            });
            for line in text.lines() {
                assert!(
                    line.width() <= width,
                    "{width}: {line:?} is {} wide",
                    line.width()
                );
            }
            for (idx, name) in names.iter().enumerate() {
                // As the table shows it before any cut (terminal-safe, on one line).
                let name = &crate::text::one_line(name, 4096);
                let line = text
                    .lines()
                    .find(|line| line.starts_with(&format!("0199bbbb-{idx}")))
                    .unwrap_or_else(|| panic!("{width}: row {idx} is shown: {text}"));
                let shown = line
                    .split_once(" /w ")
                    .map(|(_, name)| name.trim_start())
                    .unwrap_or_else(|| panic!("{width}: {line:?} has its cwd"));
                let kept = shown
                    .strip_suffix('…')
                    .unwrap_or_else(|| panic!("{width}: {shown:?} is cut with …"));
                // What is kept is a run of the name's own graphemes, from its start.
                assert!(name.starts_with(kept), "{width}: {kept:?}");
                let n_kept = kept.graphemes(true).count();
                assert_eq!(
                    kept,
                    name.graphemes(true).take(n_kept).collect::<String>(),
                    "{width}"
                );
                assert!(n_kept > 0, "{width}: {shown:?}");
            }
        }
    }

    /// With colour the header and total lines are bold and the bars cyan; without
    /// it, not one escape.
    #[test]
    fn colour_only_when_asked() {
        let report = report(
            vec![GroupKey::Day],
            vec![group_row(GroupKey::Day, "2026-03-28", usage(400, 1.0, 0))],
            usage(400, 1.0, 0),
        );
        let render = |color: bool| {
            let table = TableOptions {
                paint: crate::Paint { is_on: color },
                ..TableOptions::default()
            };
            let chart = ChartOptions {
                width: 40,
                paint: crate::Paint { is_on: color },
                ..ChartOptions::default()
            };
            text_of(|out| {
                write_table(out, &report, &table)?;
                write_bar_chart(out, &report, &chart)
            })
        };
        let plain = render(false);
        assert!(!plain.contains('\x1b'), "{plain}");
        let coloured = render(true);
        let lines: Vec<&str> = coloured.lines().collect();
        assert!(lines[0].starts_with("\x1b[1mDay") && lines[0].ends_with("\x1b[0m"));
        assert!(lines[2].starts_with("\x1b[1mTotal"), "{coloured}");
        assert!(lines[3].starts_with("\x1b[1mTokens by day"), "{coloured}");
        assert!(lines[4].contains("\x1b[36m█"), "{coloured}");
        // Stripped of its escapes, the coloured text is the plain one.
        let stripped = coloured
            .replace("\x1b[1m", "")
            .replace("\x1b[36m", "")
            .replace("\x1b[0m", "");
        assert_eq!(stripped, plain);
    }

    #[test]
    fn bar_chart_fills_gaps_and_scales_to_the_largest() {
        let report = report(
            vec![GroupKey::Day, GroupKey::Model],
            vec![
                group_row(GroupKey::Day, "2026-03-28", usage(400, 1.0, 0)),
                group_row(GroupKey::Day, "2026-03-30", usage(800, 2.0, 0)),
                group_row(GroupKey::Day, "2026-03-30", usage(800, 2.0, 0)),
            ],
            usage(2000, 5.0, 0),
        );
        let text = text_of(|out| {
            write_bar_chart(
                out,
                &report,
                &ChartOptions {
                    width: 44,
                    metric: ChartMetric::Tokens,
                    paint: crate::Paint::OFF,
                },
            )
        });
        assert_eq!(
            text,
            "\
Tokens by day (Europe/Berlin)
2026-03-28  ████                400    $1.00
2026-03-29                        0  $0.0000
2026-03-30  ████████████████  1,600    $4.00
"
        );
        // Weeks step by seven days, months by one month; a report without a period draws nothing.
        let months = report_with(GroupKey::Month, &["2026-01", "2026-03"]);
        let text = text_of(|out| write_bar_chart(out, &months, &ChartOptions::default()));
        let labels: Vec<&str> = text.lines().skip(1).map(|line| &line[..7]).collect();
        assert_eq!(labels, ["2026-01", "2026-02", "2026-03"]);
        let weeks = report_with(GroupKey::Week, &["2026-03-23", "2026-04-06"]);
        let text = text_of(|out| write_bar_chart(out, &weeks, &ChartOptions::default()));
        let labels: Vec<&str> = text.lines().skip(1).map(|line| &line[..10]).collect();
        assert_eq!(labels, ["2026-03-23", "2026-03-30", "2026-04-06"]);
        let models = report_with(GroupKey::Model, &["a/b"]);
        assert_eq!(
            text_of(|out| write_bar_chart(out, &models, &ChartOptions::default())),
            ""
        );
    }

    /// A long run of empty periods is one line, so two
    /// records years apart draw a few lines, not one per day between them.
    #[test]
    fn bar_chart_collapses_long_runs_of_empty_periods() {
        let days = report_with(GroupKey::Day, &["1970-01-01", "2026-03-01", "2026-03-04"]);
        let text = text_of(|out| write_bar_chart(out, &days, &ChartOptions::default()));
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(lines.len(), 6, "{text}");
        assert!(lines[1].starts_with('…'), "{text}");
        assert!(lines[1].ends_with("  (20,512 empty days)"), "{text}");
        let labels: Vec<&str> = [0, 2, 3, 4, 5].map(|idx| &lines[idx][..10]).to_vec();
        assert_eq!(
            labels,
            [
                "1970-01-01",
                "2026-03-01",
                "2026-03-02",
                "2026-03-03",
                "2026-03-04"
            ]
        );
        let months = report_with(GroupKey::Month, &["2020-01", "2026-03"]);
        let text = text_of(|out| write_bar_chart(out, &months, &ChartOptions::default()));
        assert!(text.contains("(73 empty months)"), "{text}");
        assert_eq!(text.lines().count(), 4, "{text}");
        let weeks = report_with(GroupKey::Week, &["2026-01-05", "2026-03-30"]);
        let text = text_of(|out| write_bar_chart(out, &weeks, &ChartOptions::default()));
        assert!(text.contains("(11 empty weeks)"), "{text}");
    }

    fn report_with(key: GroupKey, labels: &[&str]) -> StatsReport {
        report(
            vec![key],
            labels
                .iter()
                .map(|label| group_row(key, label, usage(10, 0.1, 0)))
                .collect(),
            usage(10 * labels.len() as u64, 0.1, 0),
        )
    }

    #[test]
    fn json_uses_pis_usage_names_and_matches_the_schema_keys() {
        let report = report(
            vec![GroupKey::Model],
            vec![group_row(
                GroupKey::Model,
                "anthropic/claude",
                usage(5, 0.5, 0),
            )],
            usage(5, 0.5, 0),
        );
        let text = text_of(|out| write_json(out, &report));
        let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(
            value["rows"][0],
            serde_json::json!({
                "model": "anthropic/claude",
                "usage": { "input": 5, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 5,
                           "cost": 0.5, "nEntries": 2, "nCostUnknown": 0 }
            })
        );
        assert!(value.get("since").is_none());
        let schema: serde_json::Value = serde_json::from_str(STATS_SCHEMA).expect("schema is JSON");
        let required: Vec<&str> = schema["required"]
            .as_array()
            .expect("required")
            .iter()
            .filter_map(|key| key.as_str())
            .collect();
        for key in required {
            assert!(value.get(key).is_some(), "{key}");
        }
        for key in value["total"].as_object().expect("total").keys() {
            assert!(
                schema["$defs"]["Usage"]["properties"].get(key).is_some(),
                "{key}"
            );
        }
    }
}
