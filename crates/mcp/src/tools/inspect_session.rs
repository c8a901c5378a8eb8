//! `inspect_session`: checkpoint views over one session (overview, ancestors, children,
//! search, read) in bounded pages whose cursors continue the same snapshot of the file. The
//! document is `pi-retrospect inspect --json`'s, with the warnings capped.

use std::sync::Arc;

use pi_retrospect_app::{InspectRequest, InspectView, SearchScope};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::args::{Case, bounded, parse, session_target};
use crate::cursor;
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
entryId); search (literal matches of query, smart case unless case says, in the texts \
search_sessions searches: user and assistant text, API errors, `!` commands and output, \
summaries, custom messages, session names, labels; toolResults, toolArgs, thinking and \
system add theirs); read (entryId with `before` ancestors \
and `after` descendants; at a branch point it lists the child ids instead of choosing).
- sessionPath is a `path` from list_sessions (absolute; only *.jsonl files inside the session \
stores can be read); Pi 1.6.0 does not tell the server which session is calling, so it is \
required. entryId is an entry id or `line:N`.
- Previews are cut to 240 characters, read text to 2000 per entry; token counts are estimates \
(characters / 4), not provider usage. Image data is never returned; thinking and tool-call \
arguments only as search snippets when asked for; tool output only with toolResults (it \
can hold sensitive material).
- Pages: limit results (default 20, at most 50) and at most 32 KiB of JSON (256 KiB when limit is given) (fewer results \
when needed). When nextCursor is not null, repeat the same arguments with cursor = \
nextCursor: later pages read the same snapshot of the file even while Pi appends to it (a \
cursor of a file since replaced or cut shorter is refused).
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
    #[serde(default, alias = "includeToolResults")]
    tool_results: bool,
    /// search: also search tool-call arguments (string values, never keys).
    #[serde(default)]
    tool_args: bool,
    /// search: also search thinking.
    #[serde(default)]
    thinking: bool,
    /// search: also search system prompts.
    #[serde(default)]
    system: bool,
    /// search: smart (default), sensitive or insensitive.
    case: Option<Case>,
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
/// accepts every field a hit can have (`command`, `toolArgs`, ...).
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
    let digest = cursor::digest(&arguments);
    let mut params: InspectSessionParams = parse(arguments)?;
    let after = params
        .cursor
        .take()
        .map(|text| {
            cursor::decode(TOOL.name, &digest, &text).and_then(|key| SnapshotKey::from_value(&key))
        })
        .transpose()?;
    let budget = page_budget(params.limit.is_some());
    let mut limit = bounded("limit", params.limit, DEFAULT_LIMIT, 1, MAX_LIMIT)?;
    let view = view(&params)?;
    let target = session_target(context, params.session_path)?;
    if let (Some(after), pi_retrospect_app::SessionRef::Path(path)) = (&after, &target.session) {
        after.check_same_file(path)?;
    }
    // A page larger than the bound is asked for again with half as many results; its cursor
    // continues after the results it holds.
    loop {
        let request = InspectRequest {
            target: target.clone(),
            view: view.clone(),
            limit: Some(limit),
            cursor: after.as_ref().map(|after| after.position.clone()),
            scope: SearchScope {
                tool_results: params.tool_results,
                tool_args: params.tool_args,
                thinking: params.thinking,
                system: params.system,
            },
            case: Case::mode(params.case),
        };
        let mut result = pi_retrospect_app::inspect(&request, &context.env).map_err(|error| {
            // An entry handle that names nothing is the `entryId` argument's fault.
            if error.input == Some(pi_retrospect_app::Input::Entry) {
                ToolError::argument(
                    "entryId",
                    format!(
                        "{}; take an id from view overview or session_entries",
                        error.message
                    ),
                )
            } else {
                ToolError::from(error)
            }
        })?;
        // The page's own cursor is a position in the snapshot it read; the one handed out
        // also names the file and that snapshot's size, so a later page refuses another file.
        if let Some(position) = result.page.next_cursor.take() {
            let key = SnapshotKey::of(&result.session.path, result.page.snapshot.bytes, position)?;
            result.page.next_cursor = Some(cursor::encode(TOOL.name, &digest, &key.to_value()));
        }
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
                &request.view,
                &pi_retrospect_render::inspect::InspectStyle {
                    offset: result.offset,
                    time_zone: &context.env.time_zone,
                    spelling: pi_retrospect_render::inspect::Spelling::Arguments,
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

/// Where one session's checkpoint pages are: the file's identity (device and inode), the
/// size of the snapshot the first page read, and the position inside that snapshot's
/// results. The snapshot is fixed by its size, so appends between pages neither shift nor
/// repeat results.
#[derive(Debug, Clone)]
struct SnapshotKey {
    dev: u64,
    ino: u64,
    snapshot_bytes: u64,
    position: String,
}

impl SnapshotKey {
    fn of(path: &str, snapshot_bytes: u64, position: String) -> Result<SnapshotKey, ToolError> {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::metadata(path)
            .map_err(|error| ToolError::Internal(format!("{path}: {error}")))?;
        Ok(SnapshotKey {
            dev: metadata.dev(),
            ino: metadata.ino(),
            snapshot_bytes,
            position,
        })
    }

    /// Refuses (as an error about `cursor`) a file that is not the first page's: another
    /// inode, or shorter than the snapshot the first page read.
    fn check_same_file(&self, path: &str) -> Result<(), ToolError> {
        use std::os::unix::fs::MetadataExt;
        let Ok(metadata) = std::fs::metadata(path) else {
            // A missing file is reported by the read itself, naming the path.
            return Ok(());
        };
        if (metadata.dev(), metadata.ino()) != (self.dev, self.ino) {
            return Err(ToolError::argument(
                "cursor",
                format!("{path} was replaced since the first page; start again without cursor"),
            ));
        }
        if metadata.len() < self.snapshot_bytes {
            return Err(ToolError::argument(
                "cursor",
                format!(
                    "{path} is shorter than at the first page ({} < {} bytes); start again \
                     without cursor",
                    metadata.len(),
                    self.snapshot_bytes
                ),
            ));
        }
        Ok(())
    }

    fn to_value(&self) -> Value {
        serde_json::json!([self.dev, self.ino, self.snapshot_bytes, self.position])
    }

    fn from_value(value: &Value) -> Result<SnapshotKey, ToolError> {
        let invalid = || ToolError::argument("cursor", "not a nextCursor of inspect_session");
        let number = |idx: usize| value[idx].as_u64().ok_or_else(invalid);
        let position = value[3].as_str().ok_or_else(invalid)?.to_owned();
        // The position must itself be a well-formed page position of this snapshot.
        let decoded = pi_retrospect_app::InspectCursor::decode(&position).map_err(|_| invalid())?;
        let key = SnapshotKey {
            dev: number(0)?,
            ino: number(1)?,
            snapshot_bytes: number(2)?,
            position,
        };
        if decoded.snapshot_bytes != key.snapshot_bytes {
            return Err(invalid());
        }
        Ok(key)
    }
}
