//! The result types of token and cost statistics (`pi-retrospect-stats` computes them, the
//! renderers print them). Field names in JSON are Pi's usage names: `input`, `output`,
//! `cacheRead`, `cacheWrite`, `total`, `cost`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::listing::Warning;

/// Token and cost totals over some usage records, counted the way Pi's session statistics
/// count them.
///
/// `total` is `input + output + cacheRead + cacheWrite` (Pi's `/session` total; a record's own
/// `totalTokens` is not read). `cost` is the sum of the recorded `usage.cost.total` values (a
/// recorded zero, as free and local providers record, is a known zero, as Pi shows it); a
/// record whose provider recorded no cost (no finite `cost.total`) adds its tokens but no cost
/// and is counted in `n_cost_unknown`, so a row whose `n_cost_unknown` is not zero shows a
/// lower bound of its cost. Sums saturate: token counts at `u64::MAX`, the cost at the largest
/// finite `f64`, so hostile values can neither wrap nor make the cost infinite.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens not read from or written to a cache.
    pub input: u64,
    /// Output tokens (reasoning included).
    pub output: u64,
    /// Input tokens read from the provider's cache.
    pub cache_read: u64,
    /// Input tokens written to the provider's cache.
    pub cache_write: u64,
    /// `input + output + cache_read + cache_write`.
    pub total: u64,
    /// Sum of the recorded costs, in the provider's currency (US dollars for Pi's catalog).
    pub cost: f64,
    /// How many usage records were added.
    pub n_entries: u64,
    /// How many of them carried no cost (see the type's documentation).
    pub n_cost_unknown: u64,
}

impl Usage {
    /// Returns the usage of these token counts, `total` their sum (stopped at the largest
    /// count, as every sum is), with no cost and no record.
    pub fn of_tokens(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Usage {
        Usage {
            input,
            output,
            cache_read,
            cache_write,
            total: input
                .saturating_add(output)
                .saturating_add(cache_read)
                .saturating_add(cache_write),
            ..Usage::default()
        }
    }

    /// Takes `part` (a share of what was added) back out of `self`: each count and the cost
    /// down by as much, never below zero.
    pub fn remove(&mut self, part: &Usage) {
        self.input = self.input.saturating_sub(part.input);
        self.output = self.output.saturating_sub(part.output);
        self.cache_read = self.cache_read.saturating_sub(part.cache_read);
        self.cache_write = self.cache_write.saturating_sub(part.cache_write);
        self.total = self.total.saturating_sub(part.total);
        self.cost = (self.cost - part.cost).max(0.0);
        self.n_entries = self.n_entries.saturating_sub(part.n_entries);
        self.n_cost_unknown = self.n_cost_unknown.saturating_sub(part.n_cost_unknown);
    }

    /// Adds `other` to `self`.
    pub fn add(&mut self, other: &Usage) {
        self.add_checked(other);
    }

    /// Adds `other` to `self` and returns whether a sum stopped at its bound (a token count
    /// at `u64::MAX`, the cost at the largest finite value), so the caller can say so.
    pub fn add_checked(&mut self, other: &Usage) -> bool {
        fn add(sum: &mut u64, value: u64) -> bool {
            let (added, overflowed) = sum.overflowing_add(value);
            *sum = if overflowed { u64::MAX } else { added };
            overflowed
        }
        let mut saturated = add(&mut self.input, other.input);
        saturated |= add(&mut self.output, other.output);
        saturated |= add(&mut self.cache_read, other.cache_read);
        saturated |= add(&mut self.cache_write, other.cache_write);
        saturated |= add(&mut self.total, other.total);
        let cost = self.cost + other.cost;
        saturated |= !cost.is_finite() && self.cost.is_finite() && other.cost.is_finite();
        self.cost = saturating_cost(cost);
        self.n_entries = self.n_entries.saturating_add(other.n_entries);
        self.n_cost_unknown = self.n_cost_unknown.saturating_add(other.n_cost_unknown);
        saturated
    }

    /// Returns whether every record added carried a cost.
    pub fn is_cost_known(&self) -> bool {
        self.n_cost_unknown == 0
    }

    /// Returns whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.n_entries == 0
    }
}

/// Returns `cost` held to the finite range: an infinite sum becomes the largest finite value
/// of its sign (JSON has no infinity; `serde_json` would write `null`), NaN becomes 0.
pub fn saturating_cost(cost: f64) -> f64 {
    if cost.is_nan() {
        0.0
    } else {
        cost.clamp(f64::MIN, f64::MAX)
    }
}

/// One dimension a statistics report can be grouped by (`--by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum GroupKey {
    /// Each session file (subagent runs included, each on its own row).
    Session,
    /// The cwd of the top-level session a file belongs to (a run counts for its launcher's).
    Project,
    /// `provider/model` of the record.
    Model,
    /// The calendar day of the record's timestamp in the report's time zone.
    Day,
    /// The week (Monday to Sunday) of the record's timestamp in the report's time zone.
    Week,
    /// The calendar month of the record's timestamp in the report's time zone.
    Month,
}

impl GroupKey {
    /// Every key, in the order `--by` documents them.
    pub const ALL: [GroupKey; 6] = [
        GroupKey::Session,
        GroupKey::Project,
        GroupKey::Model,
        GroupKey::Day,
        GroupKey::Week,
        GroupKey::Month,
    ];

    /// Returns the key's name as `--by` and the JSON rows spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupKey::Session => "session",
            GroupKey::Project => "project",
            GroupKey::Model => "model",
            GroupKey::Day => "day",
            GroupKey::Week => "week",
            GroupKey::Month => "month",
        }
    }

    /// Returns the key named `name`, if any.
    pub fn from_name(name: &str) -> Option<GroupKey> {
        GroupKey::ALL.into_iter().find(|key| key.as_str() == name)
    }

    /// Returns whether the key is a calendar period (day, week or month).
    pub fn is_period(self) -> bool {
        matches!(self, GroupKey::Day | GroupKey::Week | GroupKey::Month)
    }
}

/// The session file a row of a report grouped by session is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RowSession {
    /// Absolute path of the session file.
    pub path: String,
    /// Session id from the header.
    pub session_id: String,
    /// Absolute working directory from the header.
    pub cwd: String,
    /// How many launches deep the file sits: 0 for a top-level session, 1 for its runs, ...
    pub depth: usize,
    /// The session whose run this file is (on-disk nesting), for a subagent run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launched_by: Option<String>,
    /// The fork parent whose copied entries `own` leaves out: the header's `parentSession`, or
    /// for a run under `forks/` without one, the session that launched it. Absent when the file
    /// is no fork, and when the parent could not be read (every entry is then `own`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fork_of: Option<String>,
    /// What the file says about itself, read in the same pass as its usage.
    #[serde(flatten)]
    pub facts: SessionFacts,
}

/// What a session was: its name or first request, its turns, tool calls and duration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionFacts {
    /// The session's name as Pi shows it (the latest `session_info` entry's non-empty name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The text of the first user message, at most [`MAX_FACT_CHARS`] characters (a longer
    /// one is cut and ends in `…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_user_message: Option<String>,
    /// Assistant messages in the file (every branch; a fork's copies from its parent too).
    pub n_turns: u64,
    /// Tool calls the assistant messages made, by tool name (at most [`MAX_TOOL_NAMES`]
    /// names; calls of further names are counted under `(other)`).
    pub tool_calls: BTreeMap<String, u64>,
    /// Milliseconds from the first entry's timestamp to the last entry's (file order), when
    /// both are valid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// The most characters of a first user message a row keeps.
pub const MAX_FACT_CHARS: usize = 500;
/// The most distinct tool names a row counts calls of by name.
pub const MAX_TOOL_NAMES: usize = 64;

/// The figures of one row.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Figures {
    /// A row of a report grouped by session.
    #[serde(rename_all = "camelCase")]
    Session {
        /// What Pi's own session statistics report for the file (every entry of the file,
        /// copies from a fork parent included).
        pi: Usage,
        /// The file's own figure: without the entries copied from its fork parent. This is
        /// what the row adds to every aggregate.
        own: Usage,
        /// `own` plus the `own` of every subagent run below the file (its runs, their runs,
        /// ...): what the delegated work really cost.
        with_runs: Usage,
    },
    /// A row of any other grouping: every record counted once.
    Group {
        /// The row's figure.
        usage: Usage,
    },
}

impl Figures {
    /// Returns what the row adds to the report's total (`own` for a session row).
    pub fn counted(&self) -> &Usage {
        match self {
            Figures::Session { own, .. } => own,
            Figures::Group { usage } => usage,
        }
    }
}

/// One row of a statistics report: its key (only the grouped dimensions are set) and figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatsRow {
    /// The session file, when grouped by session.
    #[serde(flatten)]
    pub session: Option<RowSession>,
    /// The project (a top-level session's cwd), when grouped by project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// `provider/model`, when grouped by model. Usage that names no model is `unknown`; a tool
    /// result's nested usage is `tool:<tool name>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `YYYY-MM-DD`, when grouped by day.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub day: Option<String>,
    /// `YYYY-MM-DD` of the week's Monday, when grouped by week.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub week: Option<String>,
    /// `YYYY-MM`, when grouped by month.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub month: Option<String>,
    /// The figures.
    #[serde(flatten)]
    pub figures: Figures,
}

impl StatsRow {
    /// Returns the row's value for `key` as text (a session is its path), if it is set.
    pub fn key_text(&self, key: GroupKey) -> Option<&str> {
        match key {
            GroupKey::Session => self.session.as_ref().map(|session| session.path.as_str()),
            GroupKey::Project => self.project.as_deref(),
            GroupKey::Model => self.model.as_deref(),
            GroupKey::Day => self.day.as_deref(),
            GroupKey::Week => self.week.as_deref(),
            GroupKey::Month => self.month.as_deref(),
        }
    }
}

/// A statistics report: rows in order, the deduplicated total and the warnings.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatsReport {
    /// The grouping, in the order asked for; empty for the total alone.
    pub group_by: Vec<GroupKey>,
    /// The IANA name (or POSIX TZ string) of the time zone periods are counted in.
    pub time_zone: String,
    /// The inclusive lower bound on each record's timestamp (RFC 3339, UTC), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// The inclusive upper bound on each record's timestamp (RFC 3339, UTC), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// Rows ordered by their key, dimension by dimension: sessions in listing order (each
    /// followed by its runs), other values ascending (periods chronologically).
    pub rows: Vec<StatsRow>,
    /// Every record counted once: entries copied into a fork are counted in their parent only.
    pub total: Usage,
    /// Files and lines that could not be counted, sorted by path then reason: per file the
    /// first few problem lines and one `… and N more` warning, and at most
    /// [`MAX_REPORT_WARNINGS`] in all (the last then says how many more were left out).
    pub warnings: Vec<Warning>,
    /// How many problems were found, those summed up by `… and N more` included.
    pub n_warnings: u64,
}

/// The most warnings a report holds.
pub const MAX_REPORT_WARNINGS: usize = 1000;
