//! `inspect_session`: checkpoint views over one session (overview, ancestors, children,
//! search, read) in bounded pages whose cursors continue the same snapshot of the file. The
//! document is `pi-retrospect inspect --json`'s, with the warnings capped.

use std::sync::Arc;

use pi_retrospect_app::InspectRequest;
use pi_retrospect_transcript::InspectView;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::args::{bounded, parse, session_target};
use crate::error::ToolError;
use crate::output::{
    MAX_PAGE_BYTES, ToolOutput, add_size_fields, bound_warnings, bounded_text, json_from_writer,
    json_len, page_budget, text_from_writer,
};
use crate::server::CallContext;
use crate::tools::{ToolSpec, input_schema, schema_from_text};

pub(crate) const TOOL: ToolSpec = ToolSpec {
    name: "inspect_session",
    title: "Inspect a session's checkpoints",
    description: DESCRIPTION,
    input_schema: input_schema::<InspectSessionParams>,
    output_schema,
    run,
    needs_session: true,
};

/// Results per page when `limit` is not given.
const DEFAULT_LIMIT: u64 = 20;
/// The largest `limit`.
const MAX_LIMIT: u64 = 50;
/// `before`/`after` when not given.
const DEFAULT_NEIGHBOURS: u64 = 2;
/// The largest `before`/`after`.
const MAX_NEIGHBOURS: u64 = 10;

const DESCRIPTION: &str = "\
Inspects one session's completed-turn checkpoints. A turn is one assistant response plus the \
tool results answering its calls; its checkpoint is the turn's last entry. Never writes.
Views: overview (every checkpoint in the tree, file order); ancestors (checkpoints from the \
root to entryId, default the leaf); children (the next checkpoint on each path below \
entryId); search (literal, case-insensitive matches of query in labels, assistant text, user \
requests, and tool output with includeToolResults); read (entryId with `before` ancestors \
and `after` descendants; at a branch point it lists the child ids instead of choosing).
- sessionPath is a `path` from list_sessions (absolute; only *.jsonl files inside the session \
stores can be read); Pi 1.6.0 does not tell the server which session is calling, so it is \
required. entryId is an entry id or `line:N`.
- Previews are cut to 240 characters, read text to 2000 per entry; token counts are estimates \
(characters / 4), not provider usage. Thinking, image data and tool-call arguments are never \
returned; tool output only with includeToolResults (it can hold sensitive material).
- Pages: limit results (default 20, at most 50) and at most 32 KiB of JSON (256 KiB when limit is given) (fewer results \
when needed). When nextCursor is not null, repeat the same arguments with cursor = \
nextCursor: later pages read the same snapshot of the file even while Pi appends to it.
- Damage in the file is in warnings (at most 50; nWarnings counts them all).";

/// The arguments of `inspect_session`: the session-inspection tool's, plus `sessionPath`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct InspectSessionParams {
    /// Which view.
    view: View,
    /// An entry id or `line:N`: required by children and read; ancestors defaults to the leaf.
    entry_id: Option<String>,
    /// The literal text search looks for (required by search).
    query: Option<String>,
    /// Results per page (default 20, at most 50).
    #[schemars(range(min = 1, max = 50))]
    limit: Option<u64>,
    /// read: ancestors to show (default 2, at most 10).
    #[schemars(range(max = 10))]
    before: Option<u64>,
    /// read: descendants to show along an unbranched path (default 2, at most 10).
    #[schemars(range(max = 10))]
    after: Option<u64>,
    /// Include tool output: search it, preview it, show it in read (default false).
    #[serde(default)]
    include_tool_results: bool,
    /// A nextCursor from the previous page of the same call.
    cursor: Option<String>,
    /// The session file: an absolute `path` from list_sessions, inside the session stores.
    session_path: Option<String>,
}

/// The views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum View {
    /// Every checkpoint in the tree, in file order.
    Overview,
    /// Checkpoints from the root to entryId (default: the leaf).
    Ancestors,
    /// The next checkpoint on each path below entryId.
    Children,
    /// Matches of query.
    Search,
    /// entryId with its neighbours.
    Read,
}

/// Returns `inspect --json`'s schema (`pi-retrospect schema inspect`, the one the render crate
/// writes against), plus the `nWarnings` count a page adds: one source, so the declared schema
/// accepts every field a hit can have (`command`, `toolArgs`, ...; review H3).
fn output_schema() -> Arc<JsonObject> {
    let mut schema: Value = serde_json::from_str(pi_retrospect_render::schema::INSPECT_SCHEMA)
        .unwrap_or(Value::Object(serde_json::Map::new()));
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert(
            "nWarnings".to_owned(),
            serde_json::json!({ "type": "integer", "minimum": 0, "description": "Warnings in all; at most 50 are kept." }),
        );
    }
    schema_from_text(&schema.to_string())
}

fn run(context: &CallContext, arguments: JsonObject) -> Result<ToolOutput, ToolError> {
    let params: InspectSessionParams = parse(arguments)?;
    let budget = page_budget(params.limit.is_some());
    let mut limit = bounded("limit", params.limit, DEFAULT_LIMIT, 1, MAX_LIMIT)?;
    let view = view(&params)?;
    let target = session_target(context, params.session_path)?;
    // A page larger than the bound is asked for again with half as many results; its cursor
    // continues after the results it holds.
    loop {
        let request = InspectRequest {
            target: target.clone(),
            view: pi_retrospect_transcript::InspectRequest {
                view: view.clone(),
                limit: Some(limit),
                cursor: params.cursor.clone(),
                scope: pi_retrospect_transcript::SearchScope {
                    tool_results: params.include_tool_results,
                    ..pi_retrospect_transcript::SearchScope::default()
                },
            },
        };
        let result = pi_retrospect_app::inspect(&request, &context.env)?;
        let session = &result.session;
        let mut document = json_from_writer(|out| {
            pi_retrospect_render::inspect::write_json(
                out,
                &session.path,
                &result.page,
                session.transcript.warnings(),
            )
        })?;
        bound_warnings(&mut document);
        add_size_fields(&mut document);
        // The cursor is part of the document, so a page that fits holds its continuation.
        let n_bytes = json_len(&document);
        let is_single = limit == 1 || matches!(view, InspectView::Read { .. });
        if n_bytes > budget && !(is_single && n_bytes <= MAX_PAGE_BYTES) {
            if matches!(view, InspectView::Read { .. }) {
                return Err(ToolError::Internal(format!(
                    "the read result is larger than {MAX_PAGE_BYTES} bytes; ask for fewer \
                     neighbours (before, after)"
                )));
            }
            if limit > 1 {
                limit /= 2;
                continue;
            }
            return Err(ToolError::Internal(format!(
                "one result is larger than {MAX_PAGE_BYTES} bytes; read its entries with \
                 session_entries instead"
            )));
        }
        let text = text_from_writer(|out| {
            pi_retrospect_render::inspect::write_text(
                out,
                &session.path,
                &result.page,
                &request.view.view,
                &pi_retrospect_render::inspect::InspectStyle {
                    offset: result.offset,
                    time_zone: &context.env.time_zone,
                },
            )
        })?;
        return Ok(ToolOutput {
            structured: document,
            text: bounded_text(text),
        });
    }
}

/// Returns the transcript crate's view for the arguments, refusing a missing `entryId` or
/// `query`.
fn view(params: &InspectSessionParams) -> Result<InspectView, ToolError> {
    let required_entry = |view: &str| {
        params
            .entry_id
            .clone()
            .filter(|entry| !entry.is_empty())
            .ok_or_else(|| ToolError::argument("entryId", format!("required by view {view}")))
    };
    Ok(match params.view {
        View::Overview => InspectView::Overview,
        View::Ancestors => InspectView::Ancestors {
            entry: params.entry_id.clone().filter(|entry| !entry.is_empty()),
        },
        View::Children => InspectView::Children {
            entry: required_entry("children")?,
        },
        View::Search => InspectView::Search {
            query: params
                .query
                .clone()
                .filter(|query| !query.is_empty())
                .ok_or_else(|| {
                    ToolError::argument("query", "required by view search, and not empty")
                })?,
        },
        View::Read => InspectView::Read {
            entry: required_entry("read")?,
            before: bounded(
                "before",
                params.before,
                DEFAULT_NEIGHBOURS,
                0,
                MAX_NEIGHBOURS,
            )?,
            after: bounded("after", params.after, DEFAULT_NEIGHBOURS, 0, MAX_NEIGHBOURS)?,
        },
    })
}
