//! `search_sessions`: exact search over every session of the stores (or one), in bounded pages
//! of hits continued by a cursor. The document is `pi-retrospect search --json`'s plus
//! `nextCursor`.

use std::ops::ControlFlow;
use std::sync::Arc;

use pi_retrospect_app::{SearchEvent as Event, SearchMode as Mode, SearchRequest, SearchTerms};
use pi_retrospect_core::order::{SortKey, SortOrder};
use pi_retrospect_core::search::SearchDocument;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::args::{
    Case, CwdMatch, MessageRole, OneOrMany, SessionFilters, bounded, parse, session_target,
};
use crate::cursor;
use crate::error::ToolError;
use crate::output::{
    MAX_WARNINGS, ToolOutput, bounded_text, fit_page, json_from_writer, page_budget,
};
use crate::server::CallContext;
use crate::tools::{ToolSpec, input_schema, schema_from_text};

pub(crate) const TOOL: ToolSpec = ToolSpec {
    name: "search_sessions",
    title: "Search every session",
    description: DESCRIPTION,
    input_schema: input_schema::<SearchSessionsParams>,
    output_schema,
    run,
    needs_session: false,
};

/// Hits per page when `limit` is not given.
const DEFAULT_LIMIT: u64 = 50;
/// The largest `limit`.
const MAX_LIMIT: u64 = 200;

const DESCRIPTION: &str = "\
Searches the text of every session in the stores (subagent runs included), without an index \
and exactly: only entry text matches, never JSON field names, ids or image data. pattern is \
literal unless regex is true (Rust regex syntax); case: smart (default: case is ignored \
unless the pattern has an upper-case letter), sensitive or insensitive; wholeWord. Searched \
by default: user and assistant text, API errors of failed responses (errorMessage), `!` \
commands and output, summaries, custom messages, session names, labels; opt in with \
thinking, toolArgs (string values, never keys), toolResults, system (the same texts \
inspect_session and session_entries search); narrow with roles, tools, models. sessionPath limits it to one file \
(an absolute `path` from list_sessions); cwds/cwdPrefix (cwdMatch sibling-prefix for \
worktrees) and excludeSessionPath narrow the sessions as in list_sessions; \
startTimestamp/endTimestamp bound each hit's entry by its own time (as `search --since`), \
not the session's start. Sessions newest first \
(order), hits in file order, each with path, entryId, lineNo, timestamp, role, field, \
isOnActiveBranch, depth and a snippet with the match's range. Pages: limit hits (default 50, \
at most 200) and 32 KiB of JSON (256 KiB when limit is given); when nextCursor is not null, \
repeat the call with cursor = nextCursor (it names the last hit, so sessions written between \
pages neither shift nor repeat hits). Never \
writes.";

/// The arguments of `search_sessions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SearchSessionsParams {
    /// What to look for.
    pattern: String,
    /// Treat pattern as a regular expression.
    #[serde(default)]
    regex: bool,
    /// smart (default), sensitive or insensitive.
    case: Option<Case>,
    /// Match whole words only.
    #[serde(default)]
    whole_word: bool,
    /// Also search thinking.
    #[serde(default)]
    thinking: bool,
    /// Also search tool-call arguments (string values, never keys).
    #[serde(default)]
    tool_args: bool,
    /// Also search tool output.
    #[serde(default)]
    tool_results: bool,
    /// Also search system prompts.
    #[serde(default)]
    system: bool,
    /// Only messages with these roles.
    #[serde(default)]
    roles: OneOrMany<MessageRole>,
    /// Only calls and results of these tools.
    #[serde(default)]
    tools: OneOrMany,
    /// Only assistant messages of these models.
    #[serde(default)]
    models: OneOrMany,
    /// Only this session file: an absolute `path` from list_sessions.
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
    /// Only hits in entries written at or after this (each entry's own time): an RFC 3339
    /// instant, a date (its first local instant), a local date-time, or an age such as
    /// `30m`, `2h`, `3d`, `1w`.
    start_timestamp: Option<String>,
    /// Only hits in entries written at or before this (a date keeps that whole local day).
    end_timestamp: Option<String>,
    /// Search the calling session too when the server knows it (default false: it is left
    /// out with its runs, as in list_sessions).
    #[serde(default)]
    include_current_session: bool,
    /// Leave out the session at this absolute path, with its runs (your own session file).
    exclude_session_path: Option<String>,
    /// newest (default), oldest or path.
    order: Option<Order>,
    /// Hits per page (default 50, at most 200).
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u64>,
    /// A nextCursor from the previous page of the same call.
    cursor: Option<String>,
}

/// The order sessions are searched and reported in.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Order {
    /// Newest first (the default).
    Newest,
    /// Oldest first.
    Oldest,
    /// By file path.
    Path,
}

fn output_schema() -> Arc<JsonObject> {
    let mut schema: Value = serde_json::from_str(pi_retrospect_render::search::SEARCH_SCHEMA)
        .unwrap_or(Value::Object(serde_json::Map::new()));
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert(
            "nextCursor".to_owned(),
            serde_json::json!({ "type": ["string", "null"] }),
        );
    }
    schema_from_text(&schema.to_string())
}

fn run(context: &CallContext, arguments: JsonObject) -> Result<ToolOutput, ToolError> {
    let digest = cursor::digest(&arguments);
    let params: SearchSessionsParams = parse(arguments)?;
    if params.pattern.is_empty() {
        return Err(ToolError::argument("pattern", "must not be empty"));
    }
    // An empty name would match nothing and read as "no such tool or model"; refused, as
    // the command line refuses `--tool ""` and `--model ""`.
    for (name, values) in [("tools", &params.tools), ("models", &params.models)] {
        if values.as_slice().iter().any(String::is_empty) {
            return Err(ToolError::argument(name, "must not hold an empty name"));
        }
    }
    let budget = page_budget(params.limit.is_some());
    let limit = bounded("limit", params.limit, DEFAULT_LIMIT, 1, MAX_LIMIT)? as u64;
    // The cursor names the last hit delivered: its file, line and place among that line's
    // hits. Files only grow at their end and the listing order is by key, so resuming there
    // neither skips nor repeats hits when sessions are written between pages.
    let after = params
        .cursor
        .as_deref()
        .map(|text| {
            cursor::decode(TOOL.name, &digest, text).and_then(|key| HitKey::from_value(&key))
        })
        .transpose()?;
    let case = Case::mode(params.case);
    let order = match params.order {
        None | Some(Order::Newest) => SortOrder::NEWEST_FIRST,
        Some(Order::Oldest) => SortOrder::OLDEST_FIRST,
        Some(Order::Path) => SortOrder::by(SortKey::Path),
    };
    let mut terms = SearchTerms {
        is_regex: params.regex,
        case,
        is_whole_word: params.whole_word,
        thinking: params.thinking,
        tool_args: params.tool_args,
        tool_results: params.tool_results,
        system: params.system,
        roles: params.roles.into_names(),
        tools: params.tools.into_vec(),
        models: params.models.into_vec(),
        ..SearchTerms::new(params.pattern)
    };
    let session = params
        .session_path
        .map(|path| session_target(context, Some(path)))
        .transpose()?;
    let is_one_session = session.is_some();
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
    // As `search --since/--until`: each hit's entry is bounded by its own time, and only the
    // sessions active in the range are read (a long session that started earlier has hits
    // in it).
    terms.since = sessions.since.take();
    terms.until = sessions.until.take();
    sessions.active_since.clone_from(&terms.since);
    sessions.active_until.clone_from(&terms.until);
    let not_searched = terms.not_searched();
    let request = SearchRequest {
        sessions,
        session,
        terms,
        order,
        mode: Mode::Hits,
        // The page stops itself (one hit more than the page tells whether another follows),
        // as the hits skipped in the file it resumes in are not known in advance.
        limit: None,
        max_per_file: None,
        resume_at: after.as_ref().map(|key| key.path.clone()),
    };
    let mut document = SearchDocument::default();
    let mut keys: Vec<HitKey> = Vec::new();
    let mut is_more = false;
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut previous: Option<HitKey> = None;
    // Files only grow, so the hit a cursor names is met again on the way to the next page;
    // a file rewritten shorter (or otherwise) since loses it, and resuming by line would
    // skip or repeat hits without a word.
    let mut is_cursor_met = false;
    let totals =
        pi_retrospect_app::search_with_progress(&request, &env, &context.interrupt, &mut |event| {
            match event {
                Event::Hit(hit) => {
                    let ordinal = match &previous {
                        Some(key) if key.path == hit.path && key.line_no == hit.line_no => {
                            key.ordinal + 1
                        }
                        _ => 1,
                    };
                    let key = HitKey {
                        path: hit.path.clone(),
                        line_no: hit.line_no,
                        ordinal,
                    };
                    previous = Some(key.clone());
                    is_cursor_met |= after.as_ref() == Some(&key);
                    let is_delivered = after.as_ref().is_some_and(|after| {
                        after.path == key.path
                            && (key.line_no, key.ordinal) <= (after.line_no, after.ordinal)
                    });
                    if !is_delivered {
                        if document.hits.len() == limit {
                            is_more = true;
                            return ControlFlow::Break(());
                        }
                        document.hits.push(hit.clone());
                        keys.push(key);
                    }
                }
                Event::Warning(warning) if document.warnings.len() < MAX_WARNINGS => {
                    document.warnings.push(warning.clone());
                }
                Event::Warning(_) | Event::FileDone(_) => {}
            }
            ControlFlow::Continue(())
        })
        .map_err(|error| match error.input {
            Some(pi_retrospect_app::Input::Cursor) => ToolError::argument(
                "cursor",
                format!("{}; start again without cursor", error.message),
            ),
            _ => ToolError::from(error),
        })?;
    if let Some(after) = &after
        && !is_cursor_met
        && !context.interrupt.is_interrupted()
    {
        return Err(ToolError::argument(
            "cursor",
            format!(
                "{}: the session changed since the previous page (the hit on line {} the \
                 cursor names is no longer there); start again without cursor",
                after.path, after.line_no
            ),
        ));
    }
    // One named session that cannot be read is a failure, as the CLI's `search --session`
    // exits non-zero on it, never an empty result.
    if is_one_session
        && let Some(warning) = document
            .warnings
            .iter()
            .find(|warning| warning.line_no.is_none())
    {
        return Err(ToolError::App(pi_retrospect_app::AppError::io(format!(
            "{}: {}",
            warning.path, warning.message
        ))));
    }
    document.totals = totals;
    document.totals.n_hits = document.hits.len() as u64;
    document.totals.is_limit_reached = is_more;
    let mut structured =
        json_from_writer(|out| pi_retrospect_render::search::write_json(out, &document))?;
    // A page over the budget (hits with huge fields) ends early; the cursor continues after
    // the hits it holds and is fitted inside the budget with the totals that say so.
    let n_page_hits = document.hits.len();
    let cursor_for = |n_kept: usize| {
        // Not even one hit fitting leaves no cursor: that page is refused below.
        (n_kept < n_page_hits || is_more)
            .then(|| n_kept.checked_sub(1))
            .flatten()
            .map(|last| cursor::encode(TOOL.name, &digest, &keys[last].to_value()))
    };
    let totals = structured.get("totals").cloned().unwrap_or(Value::Null);
    let n_kept = fit_page(&mut structured, "hits", budget, &mut |n_kept| {
        let cursor = cursor_for(n_kept);
        let mut totals = totals.clone();
        if let Some(totals) = totals.as_object_mut() {
            totals.insert("nHits".to_owned(), Value::from(n_kept));
            totals.insert("isLimitReached".to_owned(), Value::from(cursor.is_some()));
        }
        vec![
            ("totals", totals),
            ("nextCursor", cursor.map_or(Value::Null, Value::from)),
        ]
    });
    if n_kept == 0 && n_page_hits > 0 {
        return Err(ToolError::Internal(format!(
            "one hit is larger than the page ({budget} bytes); give a larger limit"
        )));
    }
    let next_cursor = cursor_for(n_kept);
    document.hits.truncate(n_kept);
    let mut text = Vec::new();
    {
        let mut writer = pi_retrospect_render::search::TextWriter::new(
            &mut text,
            pi_retrospect_render::Paint::OFF,
        );
        for hit in &document.hits {
            writer
                .write_hit(hit)
                .map_err(|error| ToolError::Internal(error.to_string()))?;
        }
    }
    let mut text = String::from_utf8_lossy(&text).into_owned();
    if let Some(cursor) = &next_cursor {
        text.push_str(&format!("more hits: call again with cursor = {cursor:?}\n"));
    }
    if document.hits.is_empty() {
        text.push_str("no hits\n");
        if !not_searched.is_empty() {
            let line = pi_retrospect_render::inspect::not_searched_line(
                &not_searched,
                pi_retrospect_render::inspect::Spelling::Arguments,
            );
            text.push_str(&format!("{line}\n"));
        }
    }
    Ok(ToolOutput {
        structured,
        text: bounded_text(text),
    })
}

/// Where a hit sits in a paged search: its file, its line, and its place among the hits of
/// that line (one per matching text), so the next page resumes right after it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HitKey {
    path: String,
    line_no: u64,
    ordinal: u64,
}

impl HitKey {
    fn to_value(&self) -> Value {
        serde_json::json!([self.path, self.line_no, self.ordinal])
    }

    fn from_value(value: &Value) -> Result<HitKey, ToolError> {
        let bad = || ToolError::argument("cursor", "not a nextCursor of search_sessions");
        Ok(HitKey {
            path: value[0].as_str().ok_or_else(bad)?.to_owned(),
            line_no: value[1].as_u64().ok_or_else(bad)?,
            ordinal: value[2].as_u64().ok_or_else(bad)?,
        })
    }
}
