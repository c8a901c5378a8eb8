//! `session_stats`: tokens and cost counted the way Pi counts them, over the sessions of the
//! stores (or one session), grouped, in bounded pages of rows. The document is
//! `pi-retrospect stats --json`'s plus `nRows` and `nextOffset`.

use std::sync::Arc;

use pi_retrospect_app::{ListRequest, StatsRequest};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::args::{CwdMatch, Grouping, OneOrMany, SessionFilters, bounded, parse, session_target};
use crate::cursor;
use crate::error::ToolError;
use crate::output::{
    ToolOutput, bounded_text, fit_page, json_from_writer, page_budget, text_from_writer,
};
use crate::server::CallContext;
use crate::tools::{ToolSpec, input_schema, schema_from_text};

pub(crate) const TOOL: ToolSpec = ToolSpec {
    name: "session_stats",
    title: "Count tokens and cost",
    description: DESCRIPTION,
    input_schema: input_schema::<SessionStatsParams>,
    output_schema,
    run,
    needs_session: false,
};

/// Rows per page when `limit` is not given.
const DEFAULT_LIMIT: u64 = 100;
/// The largest `limit`.
const MAX_LIMIT: u64 = 500;

const DESCRIPTION: &str = "\
Counts input, output, cache read, cache write and total tokens and cost the way Pi counts a \
session's totals (assistant usage, `usage` entries, compaction and branch-summary usage, tools' \
nested usage; every branch). Each model call counts once in `total` and every row. Per session: \
`pi` is what Pi's /session shows for the file (fork copies and the nested usage of the subagent \
runs it launched included); `own` is the calls made in that file alone (a tool result's nested \
usage only for runs whose session files are missing, with a warning); `withRuns` is own plus \
every run below it (what the session cost with its delegated work). rollup (needs by session) \
shows withRuns in the text and leaves out the rows of runs whose launcher has a row, so the \
rows add up to the total. Session rows also carry cwd, name, firstUserMessage, nTurns, toolCalls by tool and \
durationMs. \
cost is what the provider recorded; nCostUnknown counts records without one. \
by: any of session, project, model, day, week, month (combined in order); timeZone is an IANA \
name for the periods (default the server's zone); startTimestamp/endTimestamp bound each \
record's own time. cwds/cwdPrefix/cwdMatch, id, name and excludeSessionPath choose the \
sessions as in list_sessions. Rows come in pages of at most limit rows (default 100, at most \
500) and 32 KiB of JSON (256 KiB when limit is given): when nextCursor is not null, repeat the \
call with cursor = nextCursor (nextOffset is the positional alternative, which shifts when \
sessions are written between pages); `total` is over every selected session, on every page. \
Never writes.";

/// The arguments of `session_stats`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SessionStatsParams {
    /// Groupings, combined in the order given: one or an array of session, project, model,
    /// day, week, month.
    #[serde(default)]
    by: OneOrMany<Grouping>,
    /// Only this session file (an absolute `path` from list_sessions) with its runs.
    session_path: Option<String>,
    /// Only sessions whose cwd is one of these absolute directories.
    #[serde(default)]
    cwds: OneOrMany,
    /// Only sessions whose cwd is one of these absolute directories or below.
    #[serde(default)]
    cwd_prefix: OneOrMany,
    /// How `cwds` and `cwdPrefix` match: `exact` (default), or `sibling-prefix` to also match
    /// sibling directories named DIR-<suffix> (git worktrees beside the checkout).
    #[serde(default)]
    cwd_match: CwdMatch,
    /// Only sessions whose id starts with one of these prefixes.
    #[serde(default)]
    id: OneOrMany,
    /// Only sessions whose name (Pi's /name) contains this text, case-insensitively.
    name: Option<String>,
    /// Count the calling session too when the server knows it (default false: it is left
    /// out with its runs, as in list_sessions).
    #[serde(default)]
    include_current_session: bool,
    /// Leave out the session at this absolute path, with its runs.
    exclude_session_path: Option<String>,
    /// In the text table, add each subagent run's usage into the session that launched it
    /// (with by session); the structured rows carry both figures either way.
    #[serde(default)]
    rollup: bool,
    /// Count records at or after this instant (RFC 3339, a date, or an age like 7d).
    start_timestamp: Option<String>,
    /// Count records at or before this instant.
    end_timestamp: Option<String>,
    /// The IANA time zone of days, weeks and months.
    time_zone: Option<String>,
    /// Rows per page (default 100, at most 500).
    #[schemars(range(min = 1, max = 500))]
    limit: Option<usize>,
    /// The first row of the page (a nextOffset). Offsets shift when sessions are written
    /// between pages; prefer cursor.
    offset: Option<usize>,
    /// The nextCursor of the previous page, with the same other arguments (only limit may
    /// change): continues after the last row returned, by its key.
    cursor: Option<String>,
}

fn output_schema() -> Arc<JsonObject> {
    let mut schema: Value = serde_json::from_str(pi_retrospect_render::stats::STATS_SCHEMA)
        .unwrap_or(Value::Object(serde_json::Map::new()));
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert(
            "nRows".to_owned(),
            serde_json::json!({ "type": "integer", "minimum": 0 }),
        );
        properties.insert(
            "nextOffset".to_owned(),
            serde_json::json!({ "type": ["integer", "null"], "minimum": 0 }),
        );
        properties.insert(
            "nextCursor".to_owned(),
            serde_json::json!({ "type": ["string", "null"], "description": "Continues after the last row: pass as cursor with the same arguments; null at the end." }),
        );
    }
    schema_from_text(&schema.to_string())
}

fn run(context: &CallContext, arguments: JsonObject) -> Result<ToolOutput, ToolError> {
    let digest = cursor::digest(&arguments);
    let params: SessionStatsParams = parse(arguments)?;
    let budget = page_budget(params.limit.is_some());
    let params_cursor = params.cursor.clone();
    let after = params
        .cursor
        .as_deref()
        .map(|text| cursor::decode(TOOL.name, &digest, text))
        .transpose()?;
    if after.is_some() && params.offset.is_some() {
        return Err(ToolError::argument(
            "offset",
            "give either offset or cursor, not both",
        ));
    }
    let limit = bounded(
        "limit",
        params.limit.map(|limit| limit as u64),
        DEFAULT_LIMIT,
        1,
        MAX_LIMIT,
    )?;
    let offset = params.offset.unwrap_or(0);
    let by = params.by.into_names();
    let group_by = if by.is_empty() {
        Vec::new()
    } else {
        pi_retrospect_app::parse_group_keys(&by.join(","))
            .map_err(|error| ToolError::argument("by", error.to_string()))?
    };
    let session = params
        .session_path
        .map(|path| session_target(context, Some(path)))
        .transpose()?;
    // Checked here so that an error names the argument, not the CLI flag. The
    // time bounds select records, not sessions: they move from the listing to the report.
    let (mut sessions, env) = SessionFilters {
        cwds: params.cwds,
        cwd_prefix: params.cwd_prefix,
        cwd_match: params.cwd_match,
        start_timestamp: params.start_timestamp,
        end_timestamp: params.end_timestamp,
        include_current_session: params.include_current_session,
        exclude_session_path: params.exclude_session_path,
    }
    .request(context)?;
    let (since, until) = (sessions.since.take(), sessions.until.take());
    let request = StatsRequest {
        sessions: ListRequest {
            id_prefixes: params.id.into_vec(),
            name_contains: params.name,
            ..sessions
        },
        session,
        group_by,
        time_zone: params.time_zone,
        since,
        until,
        rollup: params.rollup,
    };
    let pi_retrospect_app::StatsResult {
        mut report,
        id_prefixes,
        ..
    } = pi_retrospect_app::stats(&request, &env)?;
    let n_rows = report.rows.len();
    // A cursor names the last row returned by its group key; the page continues after that
    // row wherever it now sorts, so rows added since (a session written meanwhile) neither
    // shift nor repeat the ones already returned.
    let first = match &after {
        None => offset.min(n_rows),
        Some(key) => {
            let keys: Vec<Value> = report.rows.iter().map(row_key).collect();
            match keys.iter().position(|row| row == key) {
                Some(idx) => idx + 1,
                None => {
                    return Err(ToolError::argument(
                        "cursor",
                        "the row it continues after is gone (the sessions changed); start \
                         again without cursor",
                    ));
                }
            }
        }
    };
    let rows: Vec<_> = report.rows.drain(..).skip(first).take(limit).collect();
    let row_keys: Vec<Value> = rows.iter().map(row_key).collect();
    let n_taken = rows.len();
    report.rows = rows;
    report.warnings.truncate(crate::output::MAX_WARNINGS);
    let mut structured =
        json_from_writer(|out| pi_retrospect_render::stats::write_json(out, &report))?;
    // Rows are dropped from the end until they fit the budget with the fields that continue
    // after them (rows with huge model ids or paths end a page early).
    let n_kept = fit_page(&mut structured, "rows", budget, &mut |n_kept| {
        let is_more = first + n_kept < n_rows;
        let cursor = match n_kept.checked_sub(1) {
            Some(last) if is_more => {
                Value::from(cursor::encode(TOOL.name, &digest, &row_keys[last]))
            }
            None if is_more => params_cursor.clone().map_or(Value::Null, Value::from),
            _ => Value::Null,
        };
        vec![
            ("nRows", Value::from(n_rows)),
            (
                "nextOffset",
                if is_more {
                    Value::from(first + n_kept)
                } else {
                    Value::Null
                },
            ),
            ("nextCursor", cursor),
        ]
    });
    if n_kept == 0 && n_taken > 0 {
        return Err(ToolError::Internal(format!(
            "one row is larger than the page ({budget} bytes); give a larger limit"
        )));
    }
    report.rows.truncate(n_kept);
    let text = text_from_writer(|out| {
        pi_retrospect_render::stats::write_table(
            out,
            &report,
            &pi_retrospect_render::stats::TableOptions {
                rollup: params.rollup,
                paint: pi_retrospect_render::Paint::OFF,
                id_prefixes: Some(&id_prefixes),
                width: None,
            },
        )
    })?;
    Ok(ToolOutput {
        structured,
        text: bounded_text(text),
    })
}

/// Returns the identity of a stats row: its group key fields (a session row's path, a
/// project, model or period), which no two rows of one report share.
fn row_key(row: &pi_retrospect_core::stats::StatsRow) -> Value {
    use pi_retrospect_core::stats::GroupKey;
    Value::Array(
        [
            GroupKey::Session,
            GroupKey::Project,
            GroupKey::Model,
            GroupKey::Day,
            GroupKey::Week,
            GroupKey::Month,
        ]
        .into_iter()
        .map(|key| row.key_text(key).map_or(Value::Null, Value::from))
        .collect(),
    )
}
