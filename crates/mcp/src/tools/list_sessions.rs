//! `list_sessions`: the sessions index. With `{}` its `structuredContent` is exactly the
//! document `pi-retrospect list --json` prints, and its text is `list`'s rendered text.

use std::sync::Arc;

use pi_retrospect_app::ListRequest;
use pi_retrospect_core::order::{SortKey, SortOrder};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::args::{CwdMatch, OneOrMany, SessionFilters, parse};
use crate::cursor;
use crate::error::ToolError;
use crate::output::{
    MAX_WARNINGS, ToolOutput, bounded_text, fit_page, json_from_writer, page_budget,
    text_from_writer,
};
use crate::server::CallContext;
use crate::tools::{ToolSpec, input_schema, schema_from_text};

pub(crate) const TOOL: ToolSpec = ToolSpec {
    name: "list_sessions",
    title: "List Pi sessions",
    description: DESCRIPTION,
    input_schema: input_schema::<ListSessionsParams>,
    output_schema,
    run,
    needs_session: false,
};

const DESCRIPTION: &str = "\
Lists the Pi sessions recorded in the session store, with the subagent runs each session \
launched nested under it. Only reads file headers; never writes.
Returns {sessions, warnings} as structuredContent (the same document as `pi-retrospect list \
--json`) and the rendered index as text.
- Oldest first at every level (header timestamp, ties by path), so the newest session is the \
last one: sessions.at(-1). sortBy/sortDirection change only the top level; runs stay in \
launch order.
- Key on `path`: it is unique and is the `sessionPath` the other tools take. Ids can repeat.
- `subagentSessions` is nesting (runs launched by the session, from where files sit on disk); \
`parentSessionPath` is fork/clone lineage copied from the header. They are unrelated.
- An empty `sessions` with warnings means the history could not be read, not that there is \
none. Each unreadable file is one warning naming it.
- Filters select top-level sessions (AND; values within one filter OR) and a kept session \
keeps its runs.
- The calling session is left out (with its runs) unless includeCurrentSession is true, but \
only when the server knows it: Pi 1.6.0 does not tell an MCP server which session is calling. \
Pass your own session file as excludeSessionPath to leave it out.
- Pages: at most 32 KiB of JSON (256 KiB when limit is given; limit then counts this page's \
sessions). When nextCursor is present, repeat the same arguments with cursor = nextCursor: \
it names the last session's sort key, so sessions written between pages neither shift nor \
repeat the listing.";

/// The arguments of `list_sessions`: the upstream tool's (`cwds` to `limit`) plus ours.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ListSessionsParams {
    /// Keep sessions whose cwd is one of these absolute directories (`~` expanded).
    #[serde(default)]
    cwds: OneOrMany,
    /// How `cwds` and `cwdPrefix` match: `exact` (default), or `sibling-prefix` to also match
    /// sibling directories named DIR-<suffix> (git worktrees beside the checkout;
    /// `/repos/app` matches `/repos/app-fix`, not `/repos/application`).
    #[serde(default)]
    cwd_match: CwdMatch,
    /// Keep the calling session when the server knows it (default false: it is left out with
    /// its runs; Pi 1.6.0 does not tell the server which session calls).
    #[serde(default)]
    include_current_session: bool,
    /// Keep sessions that started at or after this: an RFC 3339 instant, a date (its first
    /// local instant), a local date-time, or an age such as `30m`, `2h`, `3d`, `1w`.
    start_timestamp: Option<String>,
    /// Keep sessions that started at or before this (a date keeps that whole local day).
    end_timestamp: Option<String>,
    /// The top-level sort key (default `timestamp`); ties fall back to timestamp, then path.
    #[serde(default)]
    sort_by: SortBy,
    /// `asc` (default: oldest first) or `desc` (top level reversed; runs keep launch order).
    #[serde(default)]
    sort_direction: SortDirection,
    /// Keep at most this many top-level sessions in this page, after sorting; giving it also
    /// raises the page's byte budget from 32 KiB to 256 KiB.
    #[schemars(range(min = 1))]
    limit: Option<u64>,
    /// The `nextCursor` of the previous page, to continue a listing larger than one page
    /// (32 KiB by default, up to 256 KiB with `limit`); with the same other arguments (only
    /// `limit` may change).
    cursor: Option<String>,
    /// Keep sessions whose cwd is one of these absolute directories or below it.
    #[serde(default)]
    cwd_prefix: OneOrMany,
    /// Keep only sessions that launched at least one subagent run.
    #[serde(default)]
    with_subagents: bool,
    /// Show at most this many levels of runs (0: top-level sessions only).
    max_depth: Option<u64>,
    /// Keep sessions whose id starts with one of these prefixes.
    #[serde(default)]
    id: OneOrMany,
    /// Keep sessions whose name (Pi's /name) contains this text, case-insensitively; reads
    /// session bodies, so it is slower.
    name: Option<String>,
    /// Leave out the session at this absolute path, with its runs: pass your own session file
    /// to list only the others. Replaces the server's own knowledge of the calling session.
    exclude_session_path: Option<String>,
}

/// The top-level sort key.
#[derive(Debug, Default, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum SortBy {
    /// Header timestamp.
    #[default]
    Timestamp,
    /// Working directory, bytewise.
    Cwd,
    /// File path, bytewise.
    Path,
    /// Session id, bytewise.
    Id,
}

/// The top-level order.
#[derive(Debug, Default, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum SortDirection {
    /// Ascending: oldest first.
    #[default]
    Asc,
    /// Descending: the top level reversed.
    Desc,
}

fn output_schema() -> Arc<JsonObject> {
    // `list --json`'s schema, plus what a page cut to the byte bound adds.
    let mut schema: Value = serde_json::from_str(pi_retrospect_render::schema::LIST_SCHEMA)
        .unwrap_or(Value::Object(serde_json::Map::new()));
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert(
            "nextCursor".to_owned(),
            serde_json::json!({ "type": "string", "description": "Present when the listing continues: pass as cursor with the same arguments." }),
        );
        properties.insert(
            "nWarnings".to_owned(),
            serde_json::json!({ "type": "integer", "minimum": 0, "description": "Present when more than 50 warnings were found: how many in all (the first 50 are kept)." }),
        );
    }
    schema_from_text(&schema.to_string())
}

fn run(context: &CallContext, arguments: JsonObject) -> Result<ToolOutput, ToolError> {
    let digest = cursor::digest(&arguments);
    let params: ListSessionsParams = parse(arguments)?;
    let after = params
        .cursor
        .as_deref()
        .map(|text| {
            cursor::decode(TOOL.name, &digest, text).and_then(|key| SessionKey::from_value(&key))
        })
        .transpose()?;
    let budget = page_budget(params.limit.is_some());
    let (mut request, env) = request(context, params)?;
    // The limit counts the sessions of this page, so it is applied after the cursor's key.
    let limit = request.limit.take();
    let order = request.order;
    let mut result = pi_retrospect_app::list(&request, &env)?;
    let listing = &mut result.listing;
    if let Some(after) = &after {
        // The listing is sorted by the key, so the sessions after the cursor are a suffix;
        // sessions written since the previous page sort by their own key and neither shift
        // nor repeat the ones already returned.
        listing.sessions.retain(|session| {
            let ordering = SessionKey::of(session, order.key).cmp(after);
            if order.is_reversed {
                ordering.is_lt()
            } else {
                ordering.is_gt()
            }
        });
    }
    let n_after = listing.sessions.len();
    if let Some(limit) = limit {
        listing
            .sessions
            .truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    }
    let n_more_after_limit = n_after > listing.sessions.len();
    // The tool's document is the contract's, which does not warn about entries the
    // discovery rules exclude (symlinks, FIFOs).
    listing.warnings.retain(|warning| !warning.is_out_of_scope);
    let n_warnings = listing.warnings.len();
    listing.warnings.truncate(MAX_WARNINGS);
    let mut structured = json_from_writer(|out| pi_retrospect_render::write_json(out, listing))?;
    if n_warnings > MAX_WARNINGS
        && let Some(object) = structured.as_object_mut()
    {
        object.insert("nWarnings".to_owned(), Value::from(n_warnings));
    }
    // The page ends early when the sessions and the cursor after them do not fit the budget
    // together (a listing that fits is exactly `list --json`).
    let n_sessions = listing.sessions.len();
    let sessions = &listing.sessions;
    let n_kept = fit_page(&mut structured, "sessions", budget, &mut |n_kept| {
        if n_kept < n_sessions || n_more_after_limit {
            let key = match n_kept.checked_sub(1) {
                Some(last) => SessionKey::of(&sessions[last], order.key).to_value(),
                // Not even one session fits: the cursor stays where this page began.
                None => after.as_ref().map_or(Value::Null, SessionKey::to_value),
            };
            vec![(
                "nextCursor",
                Value::from(cursor::encode(TOOL.name, &digest, &key)),
            )]
        } else {
            Vec::new()
        }
    });
    if n_kept == 0 && n_sessions > 0 {
        return Err(ToolError::Internal(format!(
            "one session is larger than the page ({budget} bytes); give a larger limit or \
             narrow the request (maxDepth)"
        )));
    }
    listing.sessions.truncate(n_kept);
    let next_cursor = structured
        .get("nextCursor")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut text = text_from_writer(|out| pi_retrospect_render::write_text(out, listing))?;
    if let Some(cursor) = &next_cursor {
        text.push_str(&format!(
            "more sessions: call again with cursor = {cursor:?}\n"
        ));
    }
    if n_warnings > MAX_WARNINGS {
        text.push_str(&format!(
            "… and {} more warnings\n",
            n_warnings - MAX_WARNINGS
        ));
    }
    Ok(ToolOutput {
        structured,
        text: bounded_text(text),
    })
}

/// Where a top-level session sorts in a listing: the sort field (empty for the timestamp
/// order), then the header instant, then the path, as the core's listing order compares
/// them. Paths are unique, so no two sessions share a key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct SessionKey {
    primary: Vec<u8>,
    seconds: i64,
    nanos: u32,
    path: Vec<u8>,
}

impl SessionKey {
    fn of(session: &pi_retrospect_core::listing::Session, sort: SortKey) -> SessionKey {
        let primary = match sort {
            SortKey::Cwd => session.cwd.as_bytes(),
            SortKey::Path => session.path.as_bytes(),
            SortKey::Id => session.id.as_bytes(),
            SortKey::Timestamp | SortKey::Activity => &[],
        };
        SessionKey {
            primary: primary.to_vec(),
            seconds: session.instant.seconds,
            nanos: session.instant.nanos,
            path: session.path.as_bytes().to_vec(),
        }
    }

    fn to_value(&self) -> Value {
        serde_json::json!([
            String::from_utf8_lossy(&self.primary),
            self.seconds,
            self.nanos,
            String::from_utf8_lossy(&self.path)
        ])
    }

    fn from_value(value: &Value) -> Result<SessionKey, ToolError> {
        let bad = || ToolError::argument("cursor", "not a nextCursor of list_sessions");
        let text = |idx: usize| value[idx].as_str().map(|text| text.as_bytes().to_vec());
        Ok(SessionKey {
            primary: text(0).ok_or_else(bad)?,
            seconds: value[1].as_i64().ok_or_else(bad)?,
            nanos: value[2]
                .as_u64()
                .and_then(|nanos| u32::try_from(nanos).ok())
                .ok_or_else(bad)?,
            path: text(3).ok_or_else(bad)?,
        })
    }
}

/// Returns the application request the arguments describe, and the environment to run it in
/// (its `session_file` is the session to leave out, if any).
fn request(
    context: &CallContext,
    params: ListSessionsParams,
) -> Result<(ListRequest, pi_retrospect_app::Environment), ToolError> {
    let limit = match params.limit {
        None => None,
        Some(0) => return Err(ToolError::argument("limit", "must be at least 1")),
        Some(limit) => Some(i64::try_from(limit).unwrap_or(i64::MAX)),
    };
    let max_depth = params
        .max_depth
        .map(|depth| usize::try_from(depth).unwrap_or(usize::MAX));
    let (sessions, env) = SessionFilters {
        cwds: params.cwds,
        cwd_prefix: params.cwd_prefix,
        cwd_match: params.cwd_match,
        start_timestamp: params.start_timestamp,
        end_timestamp: params.end_timestamp,
        include_current_session: params.include_current_session,
        exclude_session_path: params.exclude_session_path,
    }
    .request(context)?;
    let request = ListRequest {
        with_subagents: params.with_subagents,
        max_depth,
        id_prefixes: params.id.into_vec(),
        name_contains: params.name,
        order: SortOrder::by(match params.sort_by {
            SortBy::Timestamp => SortKey::Timestamp,
            SortBy::Cwd => SortKey::Cwd,
            SortBy::Path => SortKey::Path,
            SortBy::Id => SortKey::Id,
        })
        .reversed(matches!(params.sort_direction, SortDirection::Desc)),
        limit,
        ..sessions
    };
    Ok((request, env))
}
