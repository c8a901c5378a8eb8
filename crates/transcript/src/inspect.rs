//! The `inspect` views over completed-turn checkpoints: `overview`, `ancestors`, `children`,
//! `search` and `read`, with bounded pages and cursors that continue the same snapshot.
//!
//! Thinking, image data and tool-call arguments never appear in a result; tool output only
//! when the request asks for it. Token counts are characters divided by four: estimates.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use crate::content::{entry_content, entry_text};
use crate::entry::Role;
use crate::error::TranscriptError;
use crate::facts::labels;
use crate::session::{Snapshot, Transcript};
use crate::text::{Needle, preview, snippet_around, truncate_chars};
use crate::turns::Turns;

/// Default page size.
pub const DEFAULT_LIMIT: usize = 20;
/// Largest page size.
pub const MAX_LIMIT: usize = 50;
/// Characters kept of previews and labels.
pub const PREVIEW_CHARS: usize = 240;
/// Characters kept of one entry's text in the `read` view.
pub const READ_TEXT_CHARS: usize = 2000;
/// Largest `before`/`after` of the `read` view.
pub const MAX_NEIGHBOURS: usize = 10;

/// Returns which inspect view to produce.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum InspectView {
    /// Checkpoints across the whole tree, in file order.
    Overview,
    /// Checkpoints on the path to `entry` (or the leaf), root first.
    Ancestors {
        /// An id or `line:N` handle; the leaf when `None`.
        entry: Option<String>,
    },
    /// The next checkpoints on each path below `entry`.
    Children {
        /// An id or `line:N` handle.
        entry: String,
    },
    /// Literal, case-insensitive matches in labels, assistant text, user requests and
    /// (when asked) tool results.
    Search {
        /// The literal text to find.
        query: String,
    },
    /// One entry with its neighbours; at a branch point the child ids are listed.
    Read {
        /// An id or `line:N` handle.
        entry: String,
        /// Ancestors to show (at most 10).
        before: usize,
        /// Descendants to show along an unbranched path (at most 10).
        after: usize,
    },
}

impl InspectView {
    fn name(&self) -> &'static str {
        match self {
            InspectView::Overview => "overview",
            InspectView::Ancestors { .. } => "ancestors",
            InspectView::Children { .. } => "children",
            InspectView::Search { .. } => "search",
            InspectView::Read { .. } => "read",
        }
    }
}

/// Returns one inspect request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InspectRequest {
    /// The view.
    pub view: InspectView,
    /// Page size: default 20, at most 50.
    pub limit: Option<usize>,
    /// A `nextCursor` from an earlier page of the same request.
    pub cursor: Option<String>,
    /// Include tool output (it can hold sensitive source material).
    pub include_tool_results: bool,
}

impl InspectRequest {
    /// Returns a request for `view` with default paging and no tool output.
    pub fn new(view: InspectView) -> Self {
        InspectRequest {
            view,
            limit: None,
            cursor: None,
            include_tool_results: false,
        }
    }

    /// Returns a hash of the request but its paging and of the parsed snapshot it runs over
    /// (the session id and every entry's id and length), so a cursor only continues its own
    /// request, never another file, nor this file after it was replaced by different content
    /// of the same size.
    fn fingerprint(&self, session: &Transcript) -> u64 {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let mut feed = |bytes: &[u8]| {
            for &byte in bytes.iter().chain(std::iter::once(&0xFF)) {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
        };
        feed(self.view.name().as_bytes());
        match &self.view {
            InspectView::Overview => {}
            InspectView::Ancestors { entry } => feed(entry.as_deref().unwrap_or("").as_bytes()),
            InspectView::Children { entry } => feed(entry.as_bytes()),
            InspectView::Search { query } => feed(query.as_bytes()),
            InspectView::Read {
                entry,
                before,
                after,
            } => {
                feed(entry.as_bytes());
                feed(&before.to_le_bytes());
                feed(&after.to_le_bytes());
            }
        }
        feed(&[u8::from(self.include_tool_results)]);
        feed(session.session_id().unwrap_or("").as_bytes());
        feed(&session.snapshot().n_lines.to_le_bytes());
        for entry in session.entries() {
            feed(entry.id.unwrap_or("").as_bytes());
            feed(&entry.byte_len.to_le_bytes());
        }
        hash
    }
}

/// Returns a decoded cursor: which snapshot and where in the result list to continue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// Bytes of the file the first page parsed.
    pub snapshot_bytes: u64,
    /// Index of the next result.
    pub offset: usize,
    fingerprint: u64,
}

impl Cursor {
    /// Returns the cursor's string form.
    pub fn encode(&self) -> String {
        format!(
            "c1.{:x}.{:x}.{:016x}",
            self.snapshot_bytes, self.offset, self.fingerprint
        )
    }

    /// Returns the cursor a string encodes.
    pub fn decode(text: &str) -> Result<Cursor, TranscriptError> {
        let invalid = |reason: &str| TranscriptError::InvalidCursor {
            cursor: text.to_owned(),
            reason: reason.to_owned(),
        };
        let mut parts = text.split('.');
        if parts.next() != Some("c1") {
            return Err(invalid("not a cursor from this tool"));
        }
        let mut number = |name: &str| -> Result<u64, TranscriptError> {
            parts
                .next()
                .and_then(|part| u64::from_str_radix(part, 16).ok())
                .ok_or_else(|| invalid(&format!("bad {name}")))
        };
        let snapshot_bytes = number("snapshot length")?;
        let offset = usize::try_from(number("offset")?).map_err(|_| invalid("bad offset"))?;
        let fingerprint = number("fingerprint")?;
        if parts.next().is_some() {
            return Err(invalid("trailing data"));
        }
        Ok(Cursor {
            snapshot_bytes,
            offset,
            fingerprint,
        })
    }
}

/// Returns one checkpoint with its relations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointItem {
    /// The checkpoint entry (the turn's last entry).
    pub entry_id: String,
    /// The assistant message that opened the turn.
    pub assistant_entry_id: String,
    /// The nearest checkpoint above this one.
    pub parent_checkpoint_id: Option<String>,
    /// The next checkpoints on each path below this one.
    pub child_checkpoint_ids: Vec<String>,
    /// Labels on the turn's entries, cut to 240 characters.
    pub labels: Vec<String>,
    /// The checkpoint entry's timestamp.
    pub timestamp: Option<String>,
    /// The latest user request above the turn, cut to 240 characters.
    pub request_preview: Option<String>,
    /// The assistant's text, cut to 240 characters.
    pub preview: Option<String>,
    /// Names of the tools the turn called (never their arguments).
    pub tool_names: Vec<String>,
    /// Tool output previews, only when tool results were asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_output_previews: Vec<String>,
    /// The checkpoint is on the active branch.
    pub is_on_active_branch: bool,
    /// Estimated context tokens with this checkpoint as the leaf (characters / 4).
    pub estimated_context_tokens: u64,
}

/// Returns where a search matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SearchField {
    /// A label on the entry.
    Label,
    /// An assistant message's text.
    Assistant,
    /// A user request.
    User,
    /// A tool result's output.
    ToolResult,
}

/// Returns one search match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The matching entry.
    pub entry_id: String,
    /// What matched.
    pub field: SearchField,
    /// Text around the match, cut to 240 characters.
    pub snippet: String,
    /// The checkpoint of the matching entry's turn (for a user request: the next one below).
    pub checkpoint_id: Option<String>,
    /// The entry's timestamp.
    pub timestamp: Option<String>,
    /// The entry is on the active branch.
    pub is_on_active_branch: bool,
}

/// Returns one entry as the `read` view shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadItem {
    /// The entry's handle.
    pub entry_id: String,
    /// The resolved parent's handle.
    pub parent_id: Option<String>,
    /// The stored type.
    #[serde(rename = "type")]
    pub entry_type: String,
    /// The message role.
    pub role: Option<String>,
    /// The entry's timestamp.
    pub timestamp: Option<String>,
    /// The entry's labels.
    pub labels: Vec<String>,
    /// The entry's text, cut to 2000 characters; `None` for hidden tool output.
    pub text: Option<String>,
    /// The text was cut.
    pub is_text_truncated: bool,
    /// Tool output exists but was not asked for.
    pub is_tool_output_hidden: bool,
    /// Names of tools called (never their arguments).
    pub tool_calls: Vec<String>,
    /// A tool result's tool name.
    pub tool_name: Option<String>,
    /// System messages: tools added (names only).
    pub tools_added: Vec<String>,
    /// System messages: tools removed.
    pub tools_removed: Vec<String>,
    /// The entry is a checkpoint.
    pub is_checkpoint: bool,
    /// The checkpoint of the entry's turn.
    pub checkpoint_id: Option<String>,
    /// The entry is on the active branch.
    pub is_on_active_branch: bool,
    /// Number of children.
    pub n_children: usize,
    /// The entry's own size in tokens (characters / 4).
    pub estimated_tokens: u64,
}

/// Returns a branch point met by the `read` view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchPoint {
    /// The entry with several children.
    pub entry_id: String,
    /// Its children, in file order.
    pub child_ids: Vec<String>,
}

/// Returns the `read` view's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResult {
    /// The requested entry.
    pub entry: ReadItem,
    /// Its ancestors, nearest last.
    pub before: Vec<ReadItem>,
    /// Its descendants along the path until a branch point.
    pub after: Vec<ReadItem>,
    /// Where `after` stopped because the path branches.
    pub branch_point: Option<BranchPoint>,
}

/// Returns one page of an inspect view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InspectPage {
    /// The session id from the header.
    pub session_id: Option<String>,
    /// The view's name.
    pub view: &'static str,
    /// The active entry (the leaf).
    pub active_entry_id: Option<String>,
    /// Checkpoints (`overview`, `ancestors`, `children`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checkpoints: Vec<CheckpointItem>,
    /// Matches (`search`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hits: Vec<SearchHit>,
    /// The `read` result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<ReadResult>,
    /// Results across all pages.
    pub n_total: usize,
    /// Pass as `cursor` with the same request to get the next page.
    pub next_cursor: Option<String>,
    /// The part of the file this page describes.
    pub snapshot: Snapshot,
    /// How token counts were estimated.
    pub token_estimate: &'static str,
    /// The work done to build the page: entries visited in searches and tree walks. Not
    /// serialised; tests check with it that a page costs time linear in the file.
    #[serde(skip)]
    pub n_steps: u64,
}

const TOKEN_ESTIMATE: &str = "approximate: serialized characters / 4, not provider usage";

/// Returns a page of `request` over the file at `path`, parsing only the cursor's snapshot.
pub fn inspect_path(path: &Path, request: &InspectRequest) -> Result<InspectPage, TranscriptError> {
    let snapshot_bytes = match &request.cursor {
        Some(cursor) => Some(Cursor::decode(cursor)?.snapshot_bytes),
        None => None,
    };
    let session = Transcript::open_snapshot(path, snapshot_bytes)?;
    inspect(&session, request)
}

/// Returns a page of `request` over `session`.
///
/// A cursor must come from the same request over a session parsed to the same snapshot
/// length ([`inspect_path`] arranges that).
pub fn inspect(
    session: &Transcript,
    request: &InspectRequest,
) -> Result<InspectPage, TranscriptError> {
    let limit = request.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(TranscriptError::InvalidArgument {
            name: "limit",
            value: limit.to_string(),
            reason: "must be between 1 and 50",
        });
    }
    let fingerprint = request.fingerprint(session);
    let snapshot = session.snapshot();
    let offset = match &request.cursor {
        None => 0,
        Some(text) => {
            let cursor = Cursor::decode(text)?;
            if cursor.fingerprint != fingerprint {
                return Err(TranscriptError::InvalidCursor {
                    cursor: text.clone(),
                    reason: "it belongs to a different request or a different file".to_owned(),
                });
            }
            if cursor.snapshot_bytes != snapshot.bytes {
                return Err(TranscriptError::InvalidCursor {
                    cursor: text.clone(),
                    reason: format!(
                        "it continues a snapshot of {} bytes but this parse covers {}",
                        cursor.snapshot_bytes, snapshot.bytes
                    ),
                });
            }
            cursor.offset
        }
    };
    let mut ctx = InspectCtx::new(session, request.include_tool_results);
    let mut page = InspectPage {
        session_id: session.session_id().map(str::to_owned),
        view: request.view.name(),
        active_entry_id: session.leaf().map(|leaf| session.entry(leaf).handle()),
        checkpoints: Vec::new(),
        hits: Vec::new(),
        read: None,
        n_total: 0,
        next_cursor: None,
        snapshot,
        token_estimate: TOKEN_ESTIMATE,
        n_steps: 0,
    };
    let checkpoints = match &request.view {
        InspectView::Overview => Some(ctx.turns.checkpoints()),
        InspectView::Ancestors { entry } => {
            let target = match entry {
                Some(handle) => ctx.find(handle)?,
                None => match session.leaf() {
                    Some(leaf) => leaf,
                    None => return Ok(page),
                },
            };
            Some(ctx.turns.checkpoints_on_path(session, target))
        }
        InspectView::Children { entry } => {
            let target = ctx.find(entry)?;
            Some(ctx.turns.child_checkpoints(session, target))
        }
        InspectView::Search { .. } | InspectView::Read { .. } => None,
    };
    let n_total = if let Some(checkpoints) = checkpoints {
        for &checkpoint in checkpoints.iter().skip(offset).take(limit) {
            page.checkpoints.push(ctx.checkpoint_item(checkpoint)?);
        }
        checkpoints.len()
    } else if let InspectView::Search { query } = &request.view {
        if query.is_empty() {
            return Err(TranscriptError::InvalidArgument {
                name: "query",
                value: String::new(),
                reason: "must not be empty",
            });
        }
        // Only the page's hits are built (a snippet and a checkpoint each); the rest are
        // counted, so a page costs one pass over the file however many hits there are.
        let (hits, n_total) = ctx.search(query, offset..offset.saturating_add(limit))?;
        page.hits = hits;
        n_total
    } else if let InspectView::Read {
        entry,
        before,
        after,
    } = &request.view
    {
        for (name, value) in [("before", before), ("after", after)] {
            if *value > MAX_NEIGHBOURS {
                return Err(TranscriptError::InvalidArgument {
                    name,
                    value: value.to_string(),
                    reason: "must be at most 10",
                });
            }
        }
        let target = ctx.find(entry)?;
        page.read = Some(ctx.read(target, *before, *after)?);
        1
    } else {
        0
    };
    page.n_total = n_total;
    page.n_steps = ctx.n_steps.get();
    let next_offset = offset.saturating_add(limit);
    if next_offset < n_total && !matches!(request.view, InspectView::Read { .. }) {
        page.next_cursor = Some(
            Cursor {
                snapshot_bytes: snapshot.bytes,
                offset: next_offset,
                fingerprint,
            }
            .encode(),
        );
    }
    Ok(page)
}

/// Precomputed lookups shared by the views.
struct InspectCtx<'a> {
    session: &'a Transcript,
    turns: Turns,
    labels: HashMap<String, String>,
    is_active: Vec<bool>,
    include_tool_results: bool,
    /// Request previews by user entry: consecutive turns answer the same request, so a page
    /// of checkpoints would otherwise decode it once per checkpoint.
    request_previews: HashMap<usize, Option<String>>,
    /// Work done so far (see [`InspectPage::n_steps`]).
    n_steps: std::cell::Cell<u64>,
}

impl<'a> InspectCtx<'a> {
    fn new(session: &'a Transcript, include_tool_results: bool) -> Self {
        let mut is_active = vec![false; session.entries().len()];
        for idx in session.active_branch() {
            is_active[idx] = true;
        }
        InspectCtx {
            session,
            turns: Turns::new(session),
            labels: labels(session),
            is_active,
            include_tool_results,
            request_previews: HashMap::new(),
            n_steps: std::cell::Cell::new(0),
        }
    }

    fn find(&self, handle: &str) -> Result<usize, TranscriptError> {
        self.session
            .find(handle)
            .ok_or_else(|| TranscriptError::UnknownEntry {
                handle: handle.to_owned(),
            })
    }

    fn handle(&self, idx: usize) -> String {
        self.session.entry(idx).handle()
    }

    fn labels_of(&self, idx: usize) -> Vec<String> {
        let entry = self.session.entry(idx);
        if self.session.is_linear() {
            return Vec::new();
        }
        entry
            .id
            .and_then(|id| self.labels.get(id))
            .map(|label| vec![preview(label, PREVIEW_CHARS)])
            .unwrap_or_default()
    }

    fn text_of(&self, idx: usize) -> Result<Option<String>, TranscriptError> {
        let value = self.session.decode(idx)?;
        Ok(entry_text(&self.session.entry(idx), &value))
    }

    /// Returns the preview of the latest user request at or above `idx`, decoding each request
    /// once per page.
    fn request_preview(&mut self, idx: usize) -> Result<Option<String>, TranscriptError> {
        let session = self.session;
        let mut current = Some(idx);
        while let Some(idx) = current {
            if session.entry(idx).has_role(&Role::User) {
                if let Some(preview) = self.request_previews.get(&idx) {
                    return Ok(preview.clone());
                }
                let request = self.text_of(idx)?.map(|text| preview(&text, PREVIEW_CHARS));
                self.request_previews.insert(idx, request.clone());
                return Ok(request);
            }
            current = session.parent(idx);
        }
        Ok(None)
    }

    fn checkpoint_item(&mut self, checkpoint: usize) -> Result<CheckpointItem, TranscriptError> {
        let session = self.session;
        let turn = self
            .turns
            .turn_of(checkpoint)
            .cloned()
            .unwrap_or(crate::turns::Turn {
                assistant: checkpoint,
                tool_results: Vec::new(),
                last: checkpoint,
                is_complete: true,
            });
        let assistant_value = session.decode(turn.assistant)?;
        let content = entry_content(&session.entry(turn.assistant), &assistant_value);
        let mut labels = self.labels_of(turn.assistant);
        let mut tool_output_previews = Vec::new();
        for &tool_result in &turn.tool_results {
            labels.extend(self.labels_of(tool_result));
            if self.include_tool_results
                && let Some(text) = self.text_of(tool_result)?
            {
                tool_output_previews.push(preview(&text, PREVIEW_CHARS));
            }
        }
        let request_preview = self.request_preview(turn.assistant)?;
        Ok(CheckpointItem {
            entry_id: self.handle(checkpoint),
            assistant_entry_id: self.handle(turn.assistant),
            parent_checkpoint_id: self
                .turns
                .parent_checkpoint(session, turn.assistant)
                .map(|idx| self.handle(idx)),
            child_checkpoint_ids: self
                .turns
                .child_checkpoints(session, checkpoint)
                .into_iter()
                .map(|idx| self.handle(idx))
                .collect(),
            labels,
            timestamp: session.entry(checkpoint).timestamp.map(str::to_owned),
            request_preview,
            preview: content.text.map(|text| preview(&text, PREVIEW_CHARS)),
            tool_names: content
                .tool_calls
                .into_iter()
                .map(|call| call.name)
                .collect(),
            tool_output_previews,
            is_on_active_branch: self.is_active[checkpoint],
            // The same context `Transcript::context_at` builds (compaction kept range, system
            // messages dropped, edits applied), so the estimate never disagrees with it. A page
            // holds at most 50 checkpoints, so building each context is cheap.
            estimated_context_tokens: session.context_at(checkpoint).estimated_tokens,
        })
    }

    fn checkpoint_for_hit(&self, idx: usize) -> Option<usize> {
        if let Some(turn) = self.turns.turn_of(idx) {
            return turn.checkpoint();
        }
        let mut n_steps = 0;
        let first = self
            .turns
            .child_checkpoints_counted(self.session, idx, &mut n_steps)
            .first()
            .copied();
        self.n_steps.set(self.n_steps.get() + n_steps);
        first
    }

    /// Returns the hits numbered `page` (in file order) and the number of hits in all.
    fn search(
        &self,
        query: &str,
        page: std::ops::Range<usize>,
    ) -> Result<(Vec<SearchHit>, usize), TranscriptError> {
        let session = self.session;
        let needle = Needle::new(query, false);
        let mut hits = Vec::new();
        let mut n_hits = 0usize;
        for (idx, entry) in session.entries().iter().enumerate() {
            self.n_steps.set(self.n_steps.get() + 1);
            let mut push = |field, text: &str| {
                if let Some(at) = needle.find_char_offset(text) {
                    n_hits += 1;
                    if !page.contains(&(n_hits - 1)) {
                        return;
                    }
                    hits.push(SearchHit {
                        entry_id: self.handle(idx),
                        field,
                        snippet: snippet_around(text, at, PREVIEW_CHARS),
                        checkpoint_id: self.checkpoint_for_hit(idx).map(|idx| self.handle(idx)),
                        timestamp: entry.timestamp.map(str::to_owned),
                        is_on_active_branch: self.is_active[idx],
                    });
                }
            };
            if !session.is_linear()
                && let Some(label) = entry.id.and_then(|id| self.labels.get(id))
            {
                push(SearchField::Label, label);
            }
            let field = match entry.role() {
                Some(Role::Assistant) => SearchField::Assistant,
                Some(Role::User) => SearchField::User,
                Some(Role::ToolResult) if self.include_tool_results => SearchField::ToolResult,
                _ => continue,
            };
            let has_text = entry
                .message()
                .is_some_and(|meta| meta.shape.is_string || meta.shape.n_text > 0);
            if !has_text {
                continue;
            }
            if let Some(text) = self.text_of(idx)? {
                push(field, &text);
            }
        }
        Ok((hits, n_hits))
    }

    fn read_item(&self, idx: usize) -> Result<ReadItem, TranscriptError> {
        let session = self.session;
        let entry = session.entry(idx);
        let value = session.decode(idx)?;
        let content = entry_content(&entry, &value);
        let is_tool_output =
            entry.has_role(&Role::ToolResult) || matches!(entry.role(), Some(Role::BashExecution));
        let is_tool_output_hidden = is_tool_output && !self.include_tool_results;
        let text = if is_tool_output_hidden && entry.has_role(&Role::ToolResult) {
            None
        } else {
            content.text
        };
        let (text, is_text_truncated) = match text {
            Some(text) => {
                let (cut, is_cut) = truncate_chars(&text, READ_TEXT_CHARS);
                (Some(cut), is_cut)
            }
            None => (None, false),
        };
        let tool_name = entry
            .message()
            .and_then(|meta| meta.tool_name.map(str::to_owned));
        Ok(ReadItem {
            entry_id: entry.handle(),
            parent_id: session.parent(idx).map(|parent| self.handle(parent)),
            entry_type: entry.entry_type.to_owned(),
            role: entry.role().map(|role| role.as_str().to_owned()),
            timestamp: entry.timestamp.map(str::to_owned),
            labels: self.labels_of(idx),
            text,
            is_text_truncated,
            is_tool_output_hidden: is_tool_output_hidden && entry.has_role(&Role::ToolResult),
            tool_calls: content
                .tool_calls
                .into_iter()
                .map(|call| call.name)
                .collect(),
            tool_name,
            tools_added: content.tools_added,
            tools_removed: content.tools_removed,
            is_checkpoint: self.turns.is_checkpoint(idx),
            checkpoint_id: self
                .turns
                .turn_of(idx)
                .and_then(|turn| turn.checkpoint())
                .map(|idx| self.handle(idx)),
            is_on_active_branch: self.is_active[idx],
            n_children: session.children(idx).len(),
            estimated_tokens: entry.estimated_tokens(),
        })
    }

    fn read(
        &self,
        target: usize,
        before: usize,
        after: usize,
    ) -> Result<ReadResult, TranscriptError> {
        let session = self.session;
        let mut ancestors = Vec::new();
        let mut current = session.parent(target);
        while let Some(idx) = current {
            if ancestors.len() == before {
                break;
            }
            ancestors.push(idx);
            current = session.parent(idx);
        }
        ancestors.reverse();
        let mut descendants = Vec::new();
        let mut branch_point = None;
        let mut current = target;
        loop {
            let children = session.children(current);
            if children.len() > 1 {
                branch_point = Some(BranchPoint {
                    entry_id: self.handle(current),
                    child_ids: children.iter().map(|&child| self.handle(child)).collect(),
                });
                break;
            }
            let Some(&child) = children.first() else {
                break;
            };
            if descendants.len() == after {
                break;
            }
            descendants.push(child);
            current = child;
        }
        Ok(ReadResult {
            entry: self.read_item(target)?,
            before: ancestors
                .into_iter()
                .map(|idx| self.read_item(idx))
                .collect::<Result<_, _>>()?,
            after: descendants
                .into_iter()
                .map(|idx| self.read_item(idx))
                .collect::<Result<_, _>>()?,
            branch_point,
        })
    }
}
