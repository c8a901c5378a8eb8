//! `inspect_session`: checkpoint views over one session (overview, ancestors, children,
//! search, read) in bounded pages whose cursors continue the same snapshot of the file. The
//! document is `pi-retrospect inspect --json`'s, with the warnings capped.

use std::sync::Arc;

use pi_retrospect_app::InspectRequest;
use pi_retrospect_transcript::InspectView;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::args::{bounded, parse, session_target};
use crate::error::ToolError;
use crate::output::{
    MAX_PAGE_BYTES, ToolOutput, bound_warnings, bounded_text, json_from_writer, json_len,
    text_from_writer,
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
- Pages: limit results (default 20, at most 50) and at most 256 KiB of JSON (fewer results \
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

fn output_schema() -> Arc<JsonObject> {
    schema_from_text(OUTPUT_SCHEMA)
}

fn run(context: &CallContext, arguments: JsonObject) -> Result<ToolOutput, ToolError> {
    let params: InspectSessionParams = parse(arguments)?;
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
        if json_len(&document) > MAX_PAGE_BYTES {
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

/// The JSON Schema of an `inspect_session` page.
const OUTPUT_SCHEMA: &str = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "inspect_session page",
  "type": "object",
  "required": ["path", "sessionId", "view", "activeEntryId", "nTotal", "nextCursor", "snapshot", "tokenEstimate", "nWarnings", "warnings"],
  "properties": {
    "path": { "type": "string", "description": "Absolute path of the file read." },
    "sessionId": { "type": ["string", "null"] },
    "view": { "enum": ["overview", "ancestors", "children", "search", "read"] },
    "activeEntryId": { "type": ["string", "null"], "description": "The leaf: the last entry appended." },
    "checkpoints": {
      "type": "array",
      "maxItems": 50,
      "description": "overview, ancestors, children: the page's checkpoints (absent when none).",
      "items": { "$ref": "#/$defs/Checkpoint" }
    },
    "hits": {
      "type": "array",
      "maxItems": 50,
      "description": "search: the page's matches (absent when none).",
      "items": { "$ref": "#/$defs/Hit" }
    },
    "read": { "$ref": "#/$defs/Read" },
    "nTotal": { "type": "integer", "minimum": 0, "description": "Results across all pages." },
    "nextCursor": { "type": ["string", "null"], "description": "Pass as cursor with the same arguments for the next page." },
    "snapshot": {
      "type": "object",
      "required": ["bytes", "nLines"],
      "properties": {
        "bytes": { "type": "integer", "minimum": 0 },
        "nLines": { "type": "integer", "minimum": 0 }
      }
    },
    "tokenEstimate": { "type": "string", "description": "How token counts were estimated." },
    "nWarnings": { "type": "integer", "minimum": 0 },
    "warnings": {
      "type": "array",
      "maxItems": 50,
      "items": {
        "type": "object",
        "required": ["lineNo", "kind", "message"],
        "properties": {
          "lineNo": { "type": ["integer", "null"] },
          "kind": { "type": "string" },
          "message": { "type": "string" }
        }
      }
    }
  },
  "$defs": {
    "Strings": { "type": "array", "items": { "type": "string" } },
    "Checkpoint": {
      "type": "object",
      "required": ["entryId", "assistantEntryId", "parentCheckpointId", "childCheckpointIds", "labels", "timestamp", "requestPreview", "preview", "toolNames", "isOnActiveBranch", "estimatedContextTokens"],
      "properties": {
        "entryId": { "type": "string", "description": "The checkpoint: the turn's last entry." },
        "assistantEntryId": { "type": "string", "description": "The assistant entry that opened the turn." },
        "parentCheckpointId": { "type": ["string", "null"] },
        "childCheckpointIds": { "$ref": "#/$defs/Strings" },
        "labels": { "$ref": "#/$defs/Strings" },
        "timestamp": { "type": ["string", "null"] },
        "requestPreview": { "type": ["string", "null"], "description": "The user request above the turn, cut to 240 characters." },
        "preview": { "type": ["string", "null"], "description": "The reply, cut to 240 characters." },
        "toolNames": { "$ref": "#/$defs/Strings" },
        "toolOutputPreviews": { "$ref": "#/$defs/Strings" },
        "isOnActiveBranch": { "type": "boolean" },
        "estimatedContextTokens": { "type": "integer", "minimum": 0 }
      }
    },
    "Hit": {
      "type": "object",
      "required": ["entryId", "field", "snippet", "checkpointId", "timestamp", "isOnActiveBranch"],
      "properties": {
        "entryId": { "type": "string" },
        "field": { "enum": ["label", "assistant", "user", "toolResult"] },
        "snippet": { "type": "string", "description": "Text around the match, cut to 240 characters." },
        "checkpointId": { "type": ["string", "null"] },
        "timestamp": { "type": ["string", "null"] },
        "isOnActiveBranch": { "type": "boolean" }
      }
    },
    "ReadItem": {
      "type": "object",
      "required": ["entryId", "parentId", "type", "role", "timestamp", "labels", "text", "isTextTruncated", "isToolOutputHidden", "toolCalls", "toolName", "isCheckpoint", "checkpointId", "isOnActiveBranch", "nChildren", "estimatedTokens"],
      "properties": {
        "entryId": { "type": "string" },
        "parentId": { "type": ["string", "null"] },
        "type": { "type": "string" },
        "role": { "type": ["string", "null"] },
        "timestamp": { "type": ["string", "null"] },
        "labels": { "$ref": "#/$defs/Strings" },
        "text": { "type": ["string", "null"], "description": "Cut to 2000 characters; null for hidden tool output." },
        "isTextTruncated": { "type": "boolean" },
        "isToolOutputHidden": { "type": "boolean" },
        "toolCalls": { "$ref": "#/$defs/Strings" },
        "toolName": { "type": ["string", "null"] },
        "toolsAdded": { "$ref": "#/$defs/Strings" },
        "toolsRemoved": { "$ref": "#/$defs/Strings" },
        "isCheckpoint": { "type": "boolean" },
        "checkpointId": { "type": ["string", "null"] },
        "isOnActiveBranch": { "type": "boolean" },
        "nChildren": { "type": "integer", "minimum": 0 },
        "estimatedTokens": { "type": "integer", "minimum": 0 }
      }
    },
    "Read": {
      "type": "object",
      "required": ["entry", "before", "after", "branchPoint"],
      "properties": {
        "entry": { "$ref": "#/$defs/ReadItem" },
        "before": { "type": "array", "maxItems": 10, "items": { "$ref": "#/$defs/ReadItem" } },
        "after": { "type": "array", "maxItems": 10, "items": { "$ref": "#/$defs/ReadItem" } },
        "branchPoint": {
          "type": ["object", "null"],
          "required": ["entryId", "childIds"],
          "properties": {
            "entryId": { "type": "string" },
            "childIds": { "$ref": "#/$defs/Strings" }
          }
        }
      }
    }
  }
}
"##;
