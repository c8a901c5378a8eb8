//! Support for `show`: the active branch as displayable items, and the whole entry tree with
//! branch points, labels and the active path marked, laid out so the active path stays at
//! depth 0 and every side branch sits right under its branch point.

use serde::Serialize;
use serde_json::Value;

use crate::content::{
    EntryContent, MessageStatus, ToolCall, bash_output, content_text, entry_content, string_field,
    system_sections,
};
use crate::context::model_of;
use crate::entry::{Entry, EntryKind, Role};
use crate::error::TranscriptError;
use crate::facts::labels;
use crate::session::Transcript;
use crate::text::{HeadAndTail, Omission, OutputLimit, head_and_tail, preview, utc_timestamp};

/// The opening Pi writes before every generated branch summary; a reader wants the summary.
const BRANCH_SUMMARY_OPENING: &str = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

/// Characters of a one-line note that is never cut.
const SHORT_NOTE_CHARS: usize = 100;

/// Characters of a tree row's preview (a renderer cuts it further to fit its width).
const TREE_PREVIEW_CHARS: usize = 200;

/// What `show` keeps of each entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShowOptions {
    /// How much of each tool result, `!` command output and long note to keep; `None` keeps
    /// everything (what `--json` shows).
    pub output_limit: Option<OutputLimit>,
    /// Keep thinking blocks as items; otherwise an assistant turn says how many it hides.
    pub include_thinking: bool,
}

impl Default for ShowOptions {
    fn default() -> Self {
        ShowOptions {
            output_limit: Some(OutputLimit::chars(2000)),
            include_thinking: false,
        }
    }
}

/// One displayable item of a conversation. Every item carries its entry's handle and
/// timestamp (UTC RFC 3339).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum DisplayItem {
    /// A user message.
    #[serde(rename_all = "camelCase")]
    User {
        /// The entry's handle.
        entry_id: String,
        /// The entry's timestamp.
        timestamp: Option<String>,
        /// The text.
        text: String,
        /// Images attached (their data is never shown).
        n_images: usize,
    },
    /// An assistant message's text, or the mark of a response that failed or said nothing.
    #[serde(rename_all = "camelCase")]
    Assistant {
        /// The entry's handle.
        entry_id: String,
        /// The entry's timestamp.
        timestamp: Option<String>,
        /// The text (empty for a response that failed, was aborted, or only thought).
        text: String,
        /// `provider/model` that answered.
        model: Option<String>,
        /// Thinking blocks left out of the items (they are items with `--thinking`).
        n_hidden_thinking: usize,
        /// How the response ended: `stopReason`, `errorMessage`.
        #[serde(flatten)]
        status: MessageStatus,
    },
    /// A thinking block, only when asked for.
    #[serde(rename_all = "camelCase")]
    Thinking {
        /// The entry's handle.
        entry_id: String,
        /// The entry's timestamp.
        timestamp: Option<String>,
        /// The thinking text (empty when redacted).
        text: String,
    },
    /// A tool call with its full arguments.
    #[serde(rename_all = "camelCase")]
    ToolCall {
        /// The entry's handle.
        entry_id: String,
        /// The entry's timestamp.
        timestamp: Option<String>,
        /// The id its tool result names.
        tool_call_id: Option<String>,
        /// The tool's name.
        name: String,
        /// The arguments as stored.
        arguments: Value,
        /// A readable one-line summary of the arguments.
        argument_summary: String,
    },
    /// A tool result.
    #[serde(rename_all = "camelCase")]
    ToolResult {
        /// The entry's handle.
        entry_id: String,
        /// The entry's timestamp.
        timestamp: Option<String>,
        /// The id of the call it answers.
        tool_call_id: Option<String>,
        /// The tool's name.
        tool_name: Option<String>,
        /// The output (cut head and tail in text views).
        text: String,
        /// What was cut out of `text`; never in `--json`.
        #[serde(skip_serializing_if = "Option::is_none")]
        omitted: Option<Omission>,
        /// Images in the output (their data is never shown).
        n_images: usize,
        /// `isError` and Pi's full-output file.
        #[serde(flatten)]
        status: MessageStatus,
    },
    /// A `!` command the user ran (`!!`: kept out of the model's context).
    #[serde(rename_all = "camelCase")]
    Bash {
        /// The entry's handle.
        entry_id: String,
        /// The entry's timestamp.
        timestamp: Option<String>,
        /// The command.
        command: String,
        /// Its output (cut head and tail in text views).
        output: String,
        /// What was cut out of `output`; never in `--json`.
        #[serde(skip_serializing_if = "Option::is_none")]
        omitted: Option<Omission>,
        /// Exit code, cancelled, truncated, full-output file, excluded from context.
        #[serde(flatten)]
        status: MessageStatus,
    },
    /// A system message: prompt sections and tool declarations.
    #[serde(rename_all = "camelCase")]
    System {
        /// The entry's handle.
        entry_id: String,
        /// The entry's timestamp.
        timestamp: Option<String>,
        /// The whole prompt text (content, then each section).
        text: String,
        /// Sections it sets.
        sections: Vec<String>,
        /// Sections it removes.
        removed_sections: Vec<String>,
        /// Tools it adds (names only).
        tools_added: Vec<String>,
        /// Tools it removes.
        tools_removed: Vec<String>,
    },
    /// A compaction: earlier context replaced by a summary.
    #[serde(rename_all = "camelCase")]
    Compaction {
        /// The entry's handle.
        entry_id: String,
        /// The entry's timestamp.
        timestamp: Option<String>,
        /// The summary.
        summary: String,
        /// What was cut out of `summary`; never in `--json`.
        #[serde(skip_serializing_if = "Option::is_none")]
        omitted: Option<Omission>,
        /// The context's size before compacting, as Pi counted it.
        tokens_before: Option<u64>,
        /// The first entry kept from before the compaction (itself when none is).
        first_kept_entry_id: Option<String>,
    },
    /// A summary of a branch the user left.
    #[serde(rename_all = "camelCase")]
    BranchSummary {
        /// The entry's handle.
        entry_id: String,
        /// The entry's timestamp.
        timestamp: Option<String>,
        /// The summary, without Pi's fixed opening sentence.
        summary: String,
        /// What was cut out of `summary`; never in `--json`.
        #[serde(skip_serializing_if = "Option::is_none")]
        omitted: Option<Omission>,
        /// The leaf of the abandoned branch.
        from_id: Option<String>,
    },
    /// An edit of what the model sees of an earlier entry.
    #[serde(rename_all = "camelCase")]
    ContextEdit {
        /// The entry's handle.
        entry_id: String,
        /// The entry's timestamp.
        timestamp: Option<String>,
        /// The edited entry.
        target_id: Option<String>,
        /// The edit hides the target from the model (`replacement: null`).
        omits: bool,
        /// The text the model sees instead, for a replacement.
        replacement: Option<String>,
        /// What was cut out of `replacement`; never in `--json`.
        #[serde(skip_serializing_if = "Option::is_none")]
        omitted: Option<Omission>,
    },
    /// A label set on (or cleared from) an entry.
    #[serde(rename_all = "camelCase")]
    Label {
        /// The entry's handle.
        entry_id: String,
        /// The entry's timestamp.
        timestamp: Option<String>,
        /// The labelled entry.
        target_id: Option<String>,
        /// The label; `None` clears it.
        label: Option<String>,
    },
    /// Any other entry with a body: a model or thinking-level change, a session name, an
    /// extension's message, a message of another role.
    #[serde(rename_all = "camelCase")]
    Note {
        /// The entry's handle.
        entry_id: String,
        /// The entry's timestamp.
        timestamp: Option<String>,
        /// The stored type.
        entry_type: String,
        /// The message role, for messages.
        role: Option<String>,
        /// An extension message's type.
        custom_type: Option<String>,
        /// The text.
        text: String,
        /// What was cut out of `text`; never in `--json`.
        #[serde(skip_serializing_if = "Option::is_none")]
        omitted: Option<Omission>,
    },
}

/// Builds the items of one entry.
struct ItemBuilder<'a> {
    session: &'a Transcript,
    options: ShowOptions,
    /// The items of the entry being built (an assistant turn can make several); handed on
    /// and emptied before the next entry is decoded, so it never holds more than one entry's.
    items: Vec<DisplayItem>,
}

impl ItemBuilder<'_> {
    /// Returns `text` cut to the output limit, and what was left out.
    fn cut(&self, text: String) -> (String, Option<Omission>) {
        match self.options.output_limit {
            Some(limit) => {
                let HeadAndTail { text, omitted } = head_and_tail(&text, limit);
                (text, omitted)
            }
            None => (text, None),
        }
    }

    /// Returns a note's text cut like tool output, unless it is short enough to be its own
    /// one-line note (a model name, a session name).
    fn cut_note(&self, text: String) -> (String, Option<Omission>) {
        if !text.contains('\n') && text.chars().count() <= SHORT_NOTE_CHARS {
            return (text, None);
        }
        self.cut(text)
    }

    fn push_entry(&mut self, idx: usize, value: &Value) {
        let entry = self.session.entry(idx);
        let entry_id = entry.handle();
        let timestamp = entry.timestamp.map(utc_timestamp);
        match &entry.kind {
            EntryKind::Message(meta) => {
                let content = entry_content(&entry, value);
                match meta.role {
                    Role::User => self.items.push(DisplayItem::User {
                        entry_id,
                        timestamp,
                        text: content.text.unwrap_or_default(),
                        n_images: content.n_images,
                    }),
                    Role::Assistant => self.push_assistant(&entry, entry_id, timestamp, content),
                    Role::ToolResult => self.push_tool_result(entry_id, timestamp, value, content),
                    Role::BashExecution => self.push_bash(entry_id, timestamp, value, content),
                    Role::System => self.push_system(entry_id, timestamp, value, content),
                    _ => self.push_note(&entry, entry_id, timestamp, value, content.text),
                }
            }
            EntryKind::Usage { .. } | EntryKind::Custom { .. } => {}
            EntryKind::Compaction { .. } => self.push_compaction(idx, entry_id, timestamp, value),
            EntryKind::BranchSummary { from_id, .. } => {
                let summary = string_field(value, "summary").unwrap_or_default();
                let (summary, omitted) = self.cut_note(without_opening(&summary).to_owned());
                self.items.push(DisplayItem::BranchSummary {
                    entry_id,
                    timestamp,
                    summary,
                    omitted,
                    from_id: from_id.map(str::to_owned),
                });
            }
            EntryKind::ContextEdit { target_id, omits } => {
                let replacement = value.get("replacement").and_then(content_text);
                let (replacement, omitted) = match replacement {
                    Some(text) => {
                        let (text, omitted) = self.cut_note(text);
                        (Some(text), omitted)
                    }
                    None => (None, None),
                };
                self.items.push(DisplayItem::ContextEdit {
                    entry_id,
                    timestamp,
                    target_id: target_id.map(str::to_owned),
                    omits: *omits,
                    replacement,
                    omitted,
                });
            }
            EntryKind::Label { target_id, label } => self.items.push(DisplayItem::Label {
                entry_id,
                timestamp,
                target_id: target_id.map(str::to_owned),
                label: label.map(str::to_owned),
            }),
            _ => {
                let text = crate::content::entry_text(&entry, value);
                self.push_note(&entry, entry_id, timestamp, value, text);
            }
        }
    }

    fn push_assistant(
        &mut self,
        entry: &Entry,
        entry_id: String,
        timestamp: Option<String>,
        content: EntryContent,
    ) {
        let EntryContent {
            text,
            thinking,
            tool_calls,
            status,
            ..
        } = content;
        let text = text.unwrap_or_default();
        let n_thinking = thinking.len();
        if self.options.include_thinking {
            for thinking in thinking {
                self.items.push(DisplayItem::Thinking {
                    entry_id: entry_id.clone(),
                    timestamp: timestamp.clone(),
                    text: thinking,
                });
            }
        }
        let n_hidden_thinking = if self.options.include_thinking {
            0
        } else {
            n_thinking
        };
        // A response that failed, carries the provider's error text (searched whatever its
        // stop reason), or said nothing the other items show, still gets its row: otherwise
        // an error or a thinking-only turn would vanish from the transcript.
        let is_silent = tool_calls.is_empty() && (n_hidden_thinking > 0 || n_thinking == 0);
        if !text.is_empty()
            || status.failure().is_some()
            || status.error_message.is_some()
            || is_silent
        {
            self.items.push(DisplayItem::Assistant {
                entry_id: entry_id.clone(),
                timestamp: timestamp.clone(),
                text,
                model: model_of(&entry.kind).map(|model| model.display()),
                n_hidden_thinking,
                status,
            });
        }
        for call in tool_calls {
            self.items.push(tool_call_item(&entry_id, &timestamp, call));
        }
    }

    fn push_tool_result(
        &mut self,
        entry_id: String,
        timestamp: Option<String>,
        value: &Value,
        content: EntryContent,
    ) {
        let message = value.get("message");
        let (text, omitted) = self.cut(content.text.unwrap_or_default());
        self.items.push(DisplayItem::ToolResult {
            entry_id,
            timestamp,
            tool_call_id: message.and_then(|message| string_field(message, "toolCallId")),
            tool_name: message.and_then(|message| string_field(message, "toolName")),
            text,
            omitted,
            n_images: content.n_images,
            status: content.status,
        });
    }

    fn push_bash(
        &mut self,
        entry_id: String,
        timestamp: Option<String>,
        value: &Value,
        content: EntryContent,
    ) {
        let command = value
            .get("message")
            .and_then(|message| string_field(message, "command"))
            .unwrap_or_default();
        let (output, omitted) = self.cut(bash_output(value).unwrap_or_default());
        self.items.push(DisplayItem::Bash {
            entry_id,
            timestamp,
            command,
            output,
            omitted,
            status: content.status,
        });
    }

    fn push_system(
        &mut self,
        entry_id: String,
        timestamp: Option<String>,
        value: &Value,
        content: EntryContent,
    ) {
        let (sections, removed_sections) = value
            .get("message")
            .map(system_sections)
            .unwrap_or_default();
        self.items.push(DisplayItem::System {
            entry_id,
            timestamp,
            text: content.text.unwrap_or_default(),
            sections,
            removed_sections,
            tools_added: content.tools_added,
            tools_removed: content.tools_removed,
        });
    }

    fn push_compaction(
        &mut self,
        idx: usize,
        entry_id: String,
        timestamp: Option<String>,
        value: &Value,
    ) {
        let (summary, omitted) = self.cut_note(string_field(value, "summary").unwrap_or_default());
        let first_kept = match self.session.first_kept_of(idx) {
            Some(kept) => Some(self.session.entry(kept).handle()),
            None => string_field(value, "firstKeptEntryId"),
        };
        self.items.push(DisplayItem::Compaction {
            entry_id,
            timestamp,
            summary,
            omitted,
            tokens_before: value.get("tokensBefore").and_then(Value::as_u64),
            first_kept_entry_id: first_kept,
        });
    }

    fn push_note(
        &mut self,
        entry: &Entry,
        entry_id: String,
        timestamp: Option<String>,
        value: &Value,
        text: Option<String>,
    ) {
        let custom_type = match &entry.kind {
            EntryKind::CustomMessage { custom_type, .. } => custom_type.map(str::to_owned),
            EntryKind::Message(meta) => meta.custom_type.map(str::to_owned).or_else(|| {
                value
                    .get("message")
                    .and_then(|m| string_field(m, "customType"))
            }),
            _ => None,
        };
        let (text, omitted) = self.cut_note(text.unwrap_or_default());
        self.items.push(DisplayItem::Note {
            entry_id,
            timestamp,
            entry_type: entry.entry_type.to_owned(),
            role: entry.role().map(|role| role.as_str().to_owned()),
            custom_type,
            text,
            omitted,
        });
    }
}

fn tool_call_item(entry_id: &str, timestamp: &Option<String>, call: ToolCall) -> DisplayItem {
    let argument_summary = call.argument_summary();
    DisplayItem::ToolCall {
        entry_id: entry_id.to_owned(),
        timestamp: timestamp.clone(),
        tool_call_id: call.id,
        name: call.name,
        arguments: call.arguments,
        argument_summary,
    }
}

/// Returns a branch summary without the fixed opening Pi writes before every generated one.
fn without_opening(summary: &str) -> &str {
    summary
        .strip_prefix(BRANCH_SUMMARY_OPENING)
        .unwrap_or(summary)
}

/// Hands the items of the active branch (root to leaf) to `visit` one at a time, decoding
/// each entry once, when it is reached: memory holds the items of one entry, whatever the
/// file's size. Stops at the first error `visit` returns.
pub fn for_each_item<E: From<TranscriptError>>(
    session: &Transcript,
    options: ShowOptions,
    mut visit: impl FnMut(DisplayItem) -> Result<(), E>,
) -> Result<(), E> {
    let mut builder = ItemBuilder {
        session,
        options,
        items: Vec::new(),
    };
    for idx in session.active_branch() {
        let value = session.decode(idx)?;
        builder.push_entry(idx, &value);
        for item in builder.items.drain(..) {
            visit(item)?;
        }
    }
    Ok(())
}

/// Returns the active branch (root to leaf) as displayable items, decoding each entry once.
///
/// This holds every item in memory; a writer that can print items one by one should use
/// [`for_each_item`] instead.
pub fn active_branch_items(
    session: &Transcript,
    options: ShowOptions,
) -> Result<Vec<DisplayItem>, TranscriptError> {
    let mut items = Vec::new();
    for_each_item(session, options, |item| {
        items.push(item);
        Ok::<(), TranscriptError>(())
    })?;
    Ok(items)
}

/// One entry of the tree view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeRow {
    /// The entry's handle.
    pub entry_id: String,
    /// The resolved parent's handle.
    pub parent_id: Option<String>,
    /// Physical line number.
    pub line_no: u64,
    /// How far the entry is from the active path: 0 on it, one more for each branch point
    /// between it and the active path (a separate root counts as one).
    pub depth: usize,
    /// The stored type.
    #[serde(rename = "type")]
    pub entry_type: String,
    /// The message role.
    pub role: Option<String>,
    /// The entry's label.
    pub label: Option<String>,
    /// Number of children.
    pub n_children: usize,
    /// The entry has more than one child.
    pub is_branch_point: bool,
    /// The entry is on the active path.
    pub is_on_active_path: bool,
    /// The entry is the leaf.
    pub is_leaf: bool,
    /// The entry starts a side branch (or a separate root): its subtree is `branchSize`
    /// entries that a renderer may fold into one line.
    pub is_branch_start: bool,
    /// For a branch start: the number of entries in its subtree, itself included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_size: Option<usize>,
    /// The entry's timestamp, UTC RFC 3339.
    pub timestamp: Option<String>,
    /// A one-line preview of the entry, when previews were asked for.
    pub preview: Option<String>,
    /// How a message ended (stop reason, error, exit code), when previews were asked for.
    #[serde(flatten)]
    pub status: MessageStatus,
}

/// Returns the preview of a tree row: the entry's text, or what stands in for it (a `!`
/// command, the tool calls of a tool-only turn, a note of hidden thinking or an image).
fn tree_preview(entry: &Entry, content: &EntryContent) -> Option<String> {
    let mut parts = Vec::new();
    match &entry.kind {
        EntryKind::BranchSummary { .. } => {
            let summary = content.text.as_deref().unwrap_or("");
            parts.push(without_opening(summary).to_owned());
        }
        EntryKind::Label { target_id, label } => parts.push(match label {
            Some(label) => format!("{label} (on {})", target_id.as_deref().unwrap_or("?")),
            None => format!(
                "(clears the label of {})",
                target_id.as_deref().unwrap_or("?")
            ),
        }),
        EntryKind::ContextEdit { target_id, omits } => {
            let target = target_id.as_deref().unwrap_or("?");
            parts.push(if *omits {
                format!("(hides {target} from the model)")
            } else {
                format!(
                    "(replaces {target} for the model) {}",
                    content.text.as_deref().unwrap_or("")
                )
            });
        }
        EntryKind::Message(meta) if meta.role == Role::System => {
            let mut summary = vec![format!(
                "system prompt, {} characters",
                content
                    .text
                    .as_deref()
                    .map_or(0, |text| text.chars().count())
            )];
            if !content.tools_added.is_empty() {
                summary.push(format!("tools: {}", content.tools_added.join(", ")));
            }
            if !content.tools_removed.is_empty() {
                summary.push(format!(
                    "removes tools: {}",
                    content.tools_removed.join(", ")
                ));
            }
            parts.push(format!("({})", summary.join("; ")));
        }
        _ => {
            if let Some(text) = content.text.as_deref().filter(|text| !text.is_empty()) {
                // A `!!` command: its stored text is `!cmd`.
                let bang = if content.status.exclude_from_context {
                    "!"
                } else {
                    ""
                };
                parts.push(format!("{bang}{text}"));
            }
        }
    }
    for call in &content.tool_calls {
        let arguments = call
            .command()
            .map_or_else(|| call.argument_summary(), str::to_owned);
        parts.push(format!("-> {} {arguments}", call.name));
    }
    if parts.is_empty() && !content.thinking.is_empty() {
        parts.push("(thinking only)".to_owned());
    }
    match content.n_images {
        0 => {}
        1 => parts.push("(image)".to_owned()),
        n => parts.push(format!("({n} images)")),
    }
    (!parts.is_empty()).then(|| preview(&parts.join("  "), TREE_PREVIEW_CHARS))
}

/// Returns the size of every entry's subtree, itself included, in linear time.
fn subtree_sizes(session: &Transcript) -> Vec<usize> {
    let mut order = Vec::with_capacity(session.entries().len());
    let mut stack: Vec<usize> = session.roots().to_vec();
    while let Some(idx) = stack.pop() {
        order.push(idx);
        stack.extend_from_slice(session.children(idx));
    }
    let mut sizes = vec![1; session.entries().len()];
    for &idx in order.iter().rev() {
        if let Some(parent) = session.parent(idx) {
            sizes[parent] += sizes[idx];
        }
    }
    sizes
}

/// One entry waiting to be drawn: where, how deep, and whether it starts a branch.
struct Pending {
    idx: usize,
    depth: usize,
    is_branch_start: bool,
}

/// What the tree view's heading says, known before any row is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeCounts {
    /// Rows of the tree: every entry (the repaired tree is a forest that holds them all).
    pub n_rows: usize,
    /// Entries with more than one child.
    pub n_branch_points: usize,
}

/// Returns the number of rows and branch points of the entry tree, without building a row.
pub fn tree_counts(session: &Transcript) -> TreeCounts {
    let n_rows = session.entries().len();
    TreeCounts {
        n_rows,
        n_branch_points: (0..n_rows)
            .filter(|&idx| session.children(idx).len() > 1)
            .count(),
    }
}

/// Hands the whole entry tree to `visit` one row at a time, in drawing order, in linear
/// time: the active path at depth 0; at each branch point the other branches first, in file
/// order and one level deeper, then the path goes on. Inside a side branch the last child (in
/// file order) goes on at the same depth, the others one level deeper. Roots off the active
/// path are drawn as side branches. Stops at the first error `visit` returns.
///
/// With `with_previews`, each entry is decoded for a preview and its status when its row is
/// made; without, only the envelopes are used. Beside the row being made, memory holds a few
/// bytes per entry (the active path, subtree sizes, the rows still to draw), never the rows.
pub fn for_each_tree_row<E: From<TranscriptError>>(
    session: &Transcript,
    with_previews: bool,
    mut visit: impl FnMut(TreeRow) -> Result<(), E>,
) -> Result<(), E> {
    let labels = labels(session);
    let mut is_active = vec![false; session.entries().len()];
    for idx in session.active_branch() {
        is_active[idx] = true;
    }
    let sizes = subtree_sizes(session);
    let leaf = session.leaf();
    let mut stack: Vec<Pending> = Vec::new();
    // Roots in file order: the stack is popped from the end, so push them reversed.
    for &root in session.roots().iter().rev() {
        stack.push(Pending {
            idx: root,
            depth: usize::from(!is_active[root]),
            is_branch_start: !is_active[root],
        });
    }
    while let Some(Pending {
        idx,
        depth,
        is_branch_start,
    }) = stack.pop()
    {
        let entry = session.entry(idx);
        let children = session.children(idx);
        let (preview, status) = if with_previews {
            let value = session.decode(idx)?;
            let content = entry_content(&entry, &value);
            (tree_preview(&entry, &content), content.status)
        } else {
            (None, MessageStatus::default())
        };
        visit(TreeRow {
            entry_id: entry.handle(),
            parent_id: session
                .parent(idx)
                .map(|parent| session.entry(parent).handle()),
            line_no: entry.line_no,
            depth,
            entry_type: entry.entry_type.to_owned(),
            role: entry.role().map(|role| role.as_str().to_owned()),
            label: entry
                .id
                .filter(|_| !session.is_linear())
                .and_then(|id| labels.get(id))
                .cloned(),
            n_children: children.len(),
            is_branch_point: children.len() > 1,
            is_on_active_path: is_active[idx],
            is_leaf: leaf == Some(idx),
            is_branch_start,
            branch_size: is_branch_start.then_some(sizes[idx]),
            timestamp: entry.timestamp.map(utc_timestamp),
            preview,
            status,
        })?;
        let main = if is_active[idx] {
            children.iter().copied().find(|&child| is_active[child])
        } else {
            children.last().copied()
        };
        if let Some(main) = main {
            stack.push(Pending {
                idx: main,
                depth,
                is_branch_start: false,
            });
        }
        for &child in children.iter().rev().filter(|&&child| Some(child) != main) {
            stack.push(Pending {
                idx: child,
                depth: depth + 1,
                is_branch_start: true,
            });
        }
    }
    Ok(())
}

/// Returns the whole entry tree in drawing order (see [`for_each_tree_row`]).
///
/// This holds every row in memory; a writer that can print rows one by one should use
/// [`for_each_tree_row`] instead.
pub fn entry_tree(
    session: &Transcript,
    with_previews: bool,
) -> Result<Vec<TreeRow>, TranscriptError> {
    let mut rows = Vec::with_capacity(session.entries().len());
    for_each_tree_row(session, with_previews, |row| {
        rows.push(row);
        Ok::<(), TranscriptError>(())
    })?;
    Ok(rows)
}
