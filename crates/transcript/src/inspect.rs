//! The `inspect` views over completed-turn checkpoints: `overview`, `ancestors`, `children`,
//! `search` and `read`, with bounded pages and cursors that continue the same snapshot.
//!
//! Image data never appears in a result; tool output, tool-call arguments, thinking and
//! system prompts only when the request's [`SearchScope`] asks for them. `search` looks in
//! the texts the one rule of `read::searchable` names, with its case rule, as `search` and
//! `entries --grep` do. Token counts are
//! characters divided by four: estimates.

use std::collections::HashMap;
use std::path::Path;

use pi_retrospect_core::search::FieldKind;
use pi_retrospect_read::searchable::{
    CaseMode, FieldKinds, LiteralMatcher, SearchScope, may_hold_text, not_searched,
};
use serde::Serialize;

use crate::content::{
    EntryContent, MessageStatus, bash_output, entry_content, entry_text, message_status,
    searchable_texts,
};
use crate::entry::Role;
use crate::error::TranscriptError;
use crate::facts::labels;
use crate::session::{Snapshot, Transcript};
use crate::text::{preview, snippet_around, utc_timestamp};
use crate::turns::{Turn, Turns};

/// Default page size.
pub const DEFAULT_LIMIT: usize = 20;
/// Largest page size.
pub const MAX_LIMIT: usize = 50;
/// Characters kept of previews and labels.
pub const PREVIEW_CHARS: usize = 240;
/// Characters of the requested entry's text on one page of the `read` view; the rest
/// follows on the next pages.
pub const READ_PAGE_CHARS: usize = 8000;
/// Characters kept of each neighbour's text in the `read` view (read it to see all).
pub const NEIGHBOUR_TEXT_CHARS: usize = 2000;
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
    /// Literal matches (smart case unless the request says) in the texts the one rule of
    /// `read::searchable` names: by default user and assistant text, API errors, `!`
    /// commands and their output, summaries, custom messages, session names and labels;
    /// tool output, tool-call arguments, thinking and system prompts when the scope asks.
    Search {
        /// The literal text to find.
        query: String,
    },
    /// One entry with its neighbours; at a branch point the child ids are listed. A long
    /// entry continues on the next pages.
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
pub struct InspectPageRequest {
    /// The view.
    pub view: InspectView,
    /// Page size: default 20, at most 50.
    pub limit: Option<usize>,
    /// A `nextCursor` from an earlier page of the same request.
    pub cursor: Option<String>,
    /// What is shown and searched besides the conversation: tool output (it can hold
    /// sensitive source material), tool-call arguments, thinking, system prompts.
    pub scope: SearchScope,
    /// How `search` treats case (smart case by default).
    pub case: CaseMode,
}

impl InspectPageRequest {
    /// Returns a request for `view` with default paging and no tool output.
    pub fn new(view: InspectView) -> Self {
        InspectPageRequest {
            view,
            limit: None,
            cursor: None,
            scope: SearchScope::default(),
            case: CaseMode::default(),
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
        feed(&[
            u8::from(self.scope.tool_results),
            u8::from(self.scope.tool_args),
            u8::from(self.scope.thinking),
            u8::from(self.scope.system),
            self.case as u8,
        ]);
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

/// A tool result of a turn: which tool, and whether it failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultRef {
    /// The tool result entry.
    pub entry_id: String,
    /// The tool's name.
    pub tool_name: Option<String>,
    /// The tool failed.
    pub is_error: bool,
}

/// One checkpoint with its relations.
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
    /// The checkpoint entry's timestamp, UTC RFC 3339.
    pub timestamp: Option<String>,
    /// The latest user request above the turn, cut to 240 characters.
    pub request_preview: Option<String>,
    /// The assistant's text, cut to 240 characters.
    pub preview: Option<String>,
    /// Thinking blocks of the response (never their text).
    pub n_thinking: usize,
    /// Names of the tools the turn called (arguments only in search with `toolArgs`).
    pub tool_names: Vec<String>,
    /// The turn's tool results: tool and failure.
    pub tool_results: Vec<ToolResultRef>,
    /// Tool output previews, only when tool results were asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_output_previews: Vec<String>,
    /// The checkpoint is on the active branch.
    pub is_on_active_branch: bool,
    /// Estimated context tokens with this checkpoint as the leaf (characters / 4).
    pub estimated_context_tokens: u64,
    /// How the response ended: `stopReason`, `errorMessage`.
    #[serde(flatten)]
    pub status: MessageStatus,
}

/// One search match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InspectHit {
    /// The matching entry.
    pub entry_id: String,
    /// Which kind of text matched (the kinds of `search`).
    pub field: FieldKind,
    /// Text around the match, cut to 240 characters.
    pub snippet: String,
    /// The checkpoint of the matching entry's turn (for a user request: the next one below).
    pub checkpoint_id: Option<String>,
    /// The entry's timestamp, UTC RFC 3339.
    pub timestamp: Option<String>,
    /// The entry is on the active branch.
    pub is_on_active_branch: bool,
    /// How the message ended (stop reason, error, exit code).
    #[serde(flatten)]
    pub status: MessageStatus,
}

/// One entry as the `read` view shows it.
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
    /// The entry's timestamp, UTC RFC 3339.
    pub timestamp: Option<String>,
    /// The entry's labels.
    pub labels: Vec<String>,
    /// The entry's text from `textOffset` on, one page of it; `None` for hidden tool output.
    pub text: Option<String>,
    /// Characters of the text before this page's part (0 on the first page).
    pub text_offset: usize,
    /// Characters of the whole text.
    pub n_text_chars: usize,
    /// More of the text follows this page's part.
    pub is_text_truncated: bool,
    /// Tool output exists but was not asked for.
    pub is_tool_output_hidden: bool,
    /// Names of tools called (their arguments are in `show --json`).
    pub tool_calls: Vec<String>,
    /// A tool result's tool name.
    pub tool_name: Option<String>,
    /// Images in the content (their data is never returned).
    pub n_images: usize,
    /// Thinking blocks (never their text).
    pub n_thinking: usize,
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
    /// How the message ended: stop reason and error, `isError`, exit code.
    #[serde(flatten)]
    pub status: MessageStatus,
}

/// A branch point met by the `read` view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchPoint {
    /// The entry with several children.
    pub entry_id: String,
    /// Its children, in file order.
    pub child_ids: Vec<String>,
}

/// The `read` view's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResult {
    /// The requested entry.
    pub entry: ReadItem,
    /// Its ancestors, nearest last (first page only).
    pub before: Vec<ReadItem>,
    /// Its descendants along the path until a branch point (first page only).
    pub after: Vec<ReadItem>,
    /// Where `after` stopped because the path branches.
    pub branch_point: Option<BranchPoint>,
}

/// One page of an inspect view.
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
    /// Matches: an array in every `search` page, none found included; absent in the other
    /// views.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hits: Option<Vec<InspectHit>>,
    /// What `search` did not look in, each with the option that adds it (`toolResults`,
    /// `toolArgs`, `thinking`, `system`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_searched: Vec<&'static str>,
    /// The `read` result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<ReadResult>,
    /// Results across all pages (for `read`: characters of the entry's text).
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
pub fn inspect_path(
    path: &Path,
    request: &InspectPageRequest,
) -> Result<InspectPage, TranscriptError> {
    let snapshot_bytes = match &request.cursor {
        Some(cursor) => Some(Cursor::decode(cursor)?.snapshot_bytes),
        None => None,
    };
    let session = Transcript::open_snapshot(path, snapshot_bytes)?;
    inspect(&session, request)
}

/// Returns the page size of `request`, refusing one outside 1 to 50.
fn page_limit(request: &InspectPageRequest) -> Result<usize, TranscriptError> {
    let limit = request.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(TranscriptError::InvalidArgument {
            name: "limit",
            value: limit.to_string(),
            reason: "must be between 1 and 50",
        });
    }
    Ok(limit)
}

/// Returns where the page starts: 0, or the offset of a cursor from this very request over
/// this very snapshot.
fn resume_offset(
    request: &InspectPageRequest,
    snapshot: Snapshot,
    fingerprint: u64,
) -> Result<usize, TranscriptError> {
    let Some(text) = &request.cursor else {
        return Ok(0);
    };
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
    Ok(cursor.offset)
}

/// Returns a page of `request` over `session`.
///
/// A cursor must come from the same request over a session parsed to the same snapshot
/// length ([`inspect_path`] arranges that).
pub fn inspect(
    session: &Transcript,
    request: &InspectPageRequest,
) -> Result<InspectPage, TranscriptError> {
    let limit = page_limit(request)?;
    let fingerprint = request.fingerprint(session);
    let snapshot = session.snapshot();
    let offset = resume_offset(request, snapshot, fingerprint)?;
    let mut ctx = InspectCtx::new(session, request.scope, request.case);
    let mut page = InspectPage {
        session_id: session.session_id().map(str::to_owned),
        view: request.view.name(),
        active_entry_id: session.leaf().map(|leaf| session.entry(leaf).handle()),
        checkpoints: Vec::new(),
        hits: None,
        not_searched: Vec::new(),
        read: None,
        n_total: 0,
        next_cursor: None,
        snapshot,
        token_estimate: TOKEN_ESTIMATE,
        n_steps: 0,
    };
    let next_offset = match &request.view {
        InspectView::Search { query } => ctx.search_page(query, offset, limit, &mut page)?,
        InspectView::Read {
            entry,
            before,
            after,
        } => ctx.read_page(entry, *before, *after, offset, &mut page)?,
        view => ctx.checkpoint_page(view, offset, limit, &mut page)?,
    };
    if let Some(next_offset) = next_offset.filter(|&next| next < page.n_total) {
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
    scope: SearchScope,
    case: CaseMode,
    /// Request previews by user entry: consecutive turns answer the same request, so a page
    /// of checkpoints would otherwise decode it once per checkpoint.
    request_previews: HashMap<usize, Option<String>>,
    /// Work done so far (see [`InspectPage::n_steps`]).
    n_steps: std::cell::Cell<u64>,
}

impl<'a> InspectCtx<'a> {
    fn new(session: &'a Transcript, scope: SearchScope, case: CaseMode) -> Self {
        let mut is_active = vec![false; session.entries().len()];
        for idx in session.active_branch() {
            is_active[idx] = true;
        }
        InspectCtx {
            session,
            turns: Turns::new(session),
            labels: labels(session),
            is_active,
            scope,
            case,
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

    fn timestamp(&self, idx: usize) -> Option<String> {
        self.session.entry(idx).timestamp.map(utc_timestamp)
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

    /// Fills a page of `overview`, `ancestors` or `children`; returns the next offset.
    fn checkpoint_page(
        &mut self,
        view: &InspectView,
        offset: usize,
        limit: usize,
        page: &mut InspectPage,
    ) -> Result<Option<usize>, TranscriptError> {
        let session = self.session;
        let checkpoints = match view {
            InspectView::Ancestors { entry } => {
                let target = match entry {
                    Some(handle) => self.find(handle)?,
                    None => match session.leaf() {
                        Some(leaf) => leaf,
                        None => return Ok(None),
                    },
                };
                self.turns.checkpoints_on_path(session, target)
            }
            InspectView::Children { entry } => {
                let target = self.find(entry)?;
                self.turns.child_checkpoints(session, target)
            }
            _ => self.turns.checkpoints(),
        };
        for &checkpoint in checkpoints.iter().skip(offset).take(limit) {
            page.checkpoints.push(self.checkpoint_item(checkpoint)?);
        }
        page.n_total = checkpoints.len();
        Ok(Some(offset.saturating_add(limit)))
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

    /// Returns the turn's tool results with their failure, and (when asked) output previews.
    fn tool_results_of(
        &self,
        turn: &Turn,
    ) -> Result<(Vec<ToolResultRef>, Vec<String>), TranscriptError> {
        let mut results = Vec::new();
        let mut previews = Vec::new();
        for &tool_result in &turn.tool_results {
            let entry = self.session.entry(tool_result);
            let meta = entry.message();
            results.push(ToolResultRef {
                entry_id: self.handle(tool_result),
                tool_name: meta.and_then(|meta| meta.tool_name.map(str::to_owned)),
                is_error: meta.is_some_and(|meta| meta.is_error),
            });
            if self.scope.tool_results
                && let Some(text) = self.text_of(tool_result)?
            {
                previews.push(preview(&text, PREVIEW_CHARS));
            }
        }
        Ok((results, previews))
    }

    fn checkpoint_item(&mut self, checkpoint: usize) -> Result<CheckpointItem, TranscriptError> {
        let session = self.session;
        let turn = self.turns.turn_of(checkpoint).cloned().unwrap_or(Turn {
            assistant: checkpoint,
            tool_results: Vec::new(),
            last: checkpoint,
            is_complete: true,
        });
        let assistant_value = session.decode(turn.assistant)?;
        let content = entry_content(&session.entry(turn.assistant), &assistant_value);
        let mut labels = self.labels_of(turn.assistant);
        for &tool_result in &turn.tool_results {
            labels.extend(self.labels_of(tool_result));
        }
        let (tool_results, tool_output_previews) = self.tool_results_of(&turn)?;
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
            timestamp: self.timestamp(checkpoint),
            request_preview,
            preview: content
                .text
                .filter(|text| !text.is_empty())
                .map(|text| preview(&text, PREVIEW_CHARS)),
            n_thinking: content.thinking.len(),
            tool_names: content
                .tool_calls
                .into_iter()
                .map(|call| call.name)
                .collect(),
            tool_results,
            tool_output_previews,
            is_on_active_branch: self.is_active[checkpoint],
            // The same context `Transcript::context_at` builds (compaction kept range, system
            // messages dropped, edits applied), so the estimate never disagrees with it. A page
            // holds at most 50 checkpoints, so building each context is cheap.
            estimated_context_tokens: session.context_at(checkpoint).estimated_tokens,
            status: content.status,
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

    /// Fills a page of `search`; returns the next offset.
    fn search_page(
        &self,
        query: &str,
        offset: usize,
        limit: usize,
        page: &mut InspectPage,
    ) -> Result<Option<usize>, TranscriptError> {
        if query.is_empty() {
            return Err(TranscriptError::InvalidArgument {
                name: "query",
                value: String::new(),
                reason: "must not be empty",
            });
        }
        // Only the page's hits are built (a snippet and a checkpoint each); the rest
        // are counted, so a page costs one pass over the file however many hits there are.
        let (hits, n_total) = self.search(query, offset..offset.saturating_add(limit))?;
        page.n_total = n_total;
        page.hits = Some(hits);
        page.not_searched = not_searched(self.scope.kinds());
        page.n_steps = self.n_steps.get();
        Ok(Some(offset.saturating_add(limit)))
    }

    /// Returns the hits numbered `page` (in file order) and the number of hits in all.
    fn search(
        &self,
        query: &str,
        page: std::ops::Range<usize>,
    ) -> Result<(Vec<InspectHit>, usize), TranscriptError> {
        let session = self.session;
        let matcher = LiteralMatcher::new(query, self.case).ok_or_else(|| {
            TranscriptError::InvalidArgument {
                name: "query",
                value: query.to_owned(),
                reason: "is too long to search for",
            }
        })?;
        let kinds: FieldKinds = self.scope.kinds();
        let version = session.version();
        let mut hits = Vec::new();
        let mut n_hits = 0usize;
        for (idx, entry) in session.entries().iter().enumerate() {
            self.n_steps.set(self.n_steps.get() + 1);
            // Entries that cannot hold a searched text are never decoded.
            if !may_hold_text(
                entry.entry_type,
                entry.role().map(|role| role.as_str()),
                kinds,
            ) {
                continue;
            }
            let value = session.decode(idx)?;
            let mut status = None;
            for text in searchable_texts(&value, kinds, version) {
                let Some(found) = matcher.find(&text.text) else {
                    continue;
                };
                n_hits += 1;
                if !page.contains(&(n_hits - 1)) {
                    continue;
                }
                let at = text.text[..found.start].chars().count();
                hits.push(InspectHit {
                    entry_id: self.handle(idx),
                    field: text.kind,
                    snippet: snippet_around(&text.text, at, PREVIEW_CHARS),
                    checkpoint_id: self.checkpoint_for_hit(idx).map(|idx| self.handle(idx)),
                    timestamp: self.timestamp(idx),
                    is_on_active_branch: self.is_active[idx],
                    status: status
                        .get_or_insert_with(|| message_status(&entry, &value))
                        .clone(),
                });
            }
        }
        Ok((hits, n_hits))
    }

    /// Returns one entry of the `read` view, its text from character `text_offset` on, cut
    /// to `max_chars` characters.
    fn read_item(
        &self,
        idx: usize,
        text_offset: usize,
        max_chars: usize,
    ) -> Result<ReadItem, TranscriptError> {
        let session = self.session;
        let entry = session.entry(idx);
        let value = session.decode(idx)?;
        let EntryContent {
            text,
            thinking,
            tool_calls,
            n_images,
            tools_added,
            tools_removed,
            status,
        } = entry_content(&entry, &value);
        let is_tool_result = entry.has_role(&Role::ToolResult);
        let is_command = entry.has_role(&Role::BashExecution);
        let is_tool_output_hidden = (is_tool_result || is_command) && !self.scope.tool_results;
        let text = if is_tool_output_hidden && is_tool_result {
            None
        } else if is_command && !is_tool_output_hidden {
            // A `!` command's own line, then its output.
            let output = bash_output(&value).unwrap_or_default();
            text.map(|command| format!("{command}\n{output}"))
        } else {
            text
        };
        let n_text_chars = text.as_deref().map_or(0, |text| text.chars().count());
        let text = text.map(|text| text.chars().skip(text_offset).take(max_chars).collect());
        Ok(ReadItem {
            entry_id: entry.handle(),
            parent_id: session.parent(idx).map(|parent| self.handle(parent)),
            entry_type: entry.entry_type.to_owned(),
            role: entry.role().map(|role| role.as_str().to_owned()),
            timestamp: self.timestamp(idx),
            labels: self.labels_of(idx),
            text,
            text_offset,
            n_text_chars,
            is_text_truncated: text_offset.saturating_add(max_chars) < n_text_chars,
            is_tool_output_hidden,
            tool_calls: tool_calls.into_iter().map(|call| call.name).collect(),
            tool_name: entry
                .message()
                .and_then(|meta| meta.tool_name.map(str::to_owned)),
            n_images,
            n_thinking: thinking.len(),
            tools_added,
            tools_removed,
            is_checkpoint: self.turns.is_checkpoint(idx),
            checkpoint_id: self
                .turns
                .turn_of(idx)
                .and_then(|turn| turn.checkpoint())
                .map(|idx| self.handle(idx)),
            is_on_active_branch: self.is_active[idx],
            n_children: session.children(idx).len(),
            estimated_tokens: entry.estimated_tokens(),
            status,
        })
    }

    /// Fills a page of `read`: the entry with its neighbours on the first page, the rest of a
    /// long entry's text on later ones (`offset` is a character offset into it). Returns the
    /// next offset.
    fn read_page(
        &self,
        handle: &str,
        before: usize,
        after: usize,
        offset: usize,
        page: &mut InspectPage,
    ) -> Result<Option<usize>, TranscriptError> {
        for (name, value) in [("before", before), ("after", after)] {
            if value > MAX_NEIGHBOURS {
                return Err(TranscriptError::InvalidArgument {
                    name,
                    value: value.to_string(),
                    reason: "must be at most 10",
                });
            }
        }
        let target = self.find(handle)?;
        let entry = self.read_item(target, offset, READ_PAGE_CHARS)?;
        page.n_total = entry.n_text_chars.max(1);
        page.read = Some(if offset == 0 {
            self.read(entry, target, before, after)?
        } else {
            ReadResult {
                entry,
                before: Vec::new(),
                after: Vec::new(),
                branch_point: None,
            }
        });
        Ok(Some(offset.saturating_add(READ_PAGE_CHARS)))
    }

    fn read(
        &self,
        entry: ReadItem,
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
        let neighbour = |idx: usize| self.read_item(idx, 0, NEIGHBOUR_TEXT_CHARS);
        Ok(ReadResult {
            entry,
            before: ancestors
                .into_iter()
                .map(neighbour)
                .collect::<Result<_, _>>()?,
            after: descendants
                .into_iter()
                .map(neighbour)
                .collect::<Result<_, _>>()?,
            branch_point,
        })
    }
}
