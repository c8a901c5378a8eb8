//! The model-visible context on a branch, rebuilt the way Pi rebuilds it on open: the latest
//! compaction replaces everything before its `firstKeptEntryId`, and the latest `context_edit`
//! per target (on the branch) omits or replaces that target's content.

use std::collections::HashMap;

use serde::Serialize;

use crate::entry::{EntryKind, Role};
use crate::session::Transcript;
use crate::warning::{TranscriptWarning, WarningKind};

/// Returns what produced one model-visible message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ContextMessageKind<'a> {
    /// A stored message with its role.
    Message(Role<'a>),
    /// The complete system checkpoint a compaction carries.
    CompactionSystemCheckpoint,
    /// A compaction's summary.
    CompactionSummary,
    /// A `branch_summary` entry.
    BranchSummary,
    /// A `custom_message` entry.
    CustomMessage,
}

/// Returns how a `context_edit` changed a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextEdit {
    /// The edited entry.
    pub target: usize,
    /// The `context_edit` entry that applies (the latest on the branch).
    pub edit: usize,
    /// The edit omits the target rather than replacing its content.
    pub omits: bool,
}

/// Returns one model-visible message and its source entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextMessage<'a> {
    /// Index of the source entry.
    pub entry: usize,
    /// What kind of message it is.
    pub kind: ContextMessageKind<'a>,
    /// The `context_edit` entry whose replacement content the model sees instead.
    pub replaced_by: Option<usize>,
}

/// Returns the context Pi would send to the model with `leaf` as the current position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Context<'a> {
    /// The branch from a root down to the leaf, root first.
    pub branch: Vec<usize>,
    /// The latest compaction on the branch, if any.
    pub compaction: Option<usize>,
    /// The selected entries (including metadata entries), in context order.
    pub entries: Vec<usize>,
    /// The model-visible messages, after context edits.
    pub messages: Vec<ContextMessage<'a>>,
    /// Edits that apply to selected entries, omissions included.
    pub edits: Vec<ContextEdit>,
    /// The model in effect: the latest `model_change` or assistant message on the branch.
    pub model: Option<ModelRef>,
    /// The latest thinking level set on the branch.
    pub thinking_level: Option<&'a str>,
    /// Characters of the selected messages divided by four: an estimate, not provider usage.
    pub estimated_tokens: u64,
    /// Problems found while rebuilding, e.g. a `firstKeptEntryId` not on the branch.
    pub warnings: Vec<TranscriptWarning>,
}

/// Returns a provider and model pair.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRef {
    /// The provider, when recorded.
    pub provider: Option<String>,
    /// The model id.
    pub model: String,
}

impl ModelRef {
    /// Returns `provider/model`, or the model alone.
    pub fn display(&self) -> String {
        match &self.provider {
            Some(provider) => format!("{provider}/{}", self.model),
            None => self.model.clone(),
        }
    }
}

/// Returns the model an entry selects or reports, if any.
pub(crate) fn model_of(kind: &EntryKind<'_>) -> Option<ModelRef> {
    match *kind {
        EntryKind::ModelChange {
            provider,
            model_id: Some(model),
        } => Some(ModelRef {
            provider: provider.map(str::to_owned),
            model: model.to_owned(),
        }),
        EntryKind::Message(meta) if meta.role == Role::Assistant => {
            meta.model.map(|model| ModelRef {
                provider: meta.provider.map(str::to_owned),
                model: model.to_owned(),
            })
        }
        _ => None,
    }
}

impl Transcript {
    /// Returns the model-visible context with the session's leaf as the current position.
    pub fn context(&self) -> Context<'_> {
        match self.leaf() {
            Some(leaf) => self.context_at(leaf),
            None => build(self, Vec::new()),
        }
    }

    /// Returns the model-visible context with `leaf` as the current position.
    pub fn context_at(&self, leaf: usize) -> Context<'_> {
        build(self, self.path_to(leaf))
    }
}

fn build(session: &Transcript, branch: Vec<usize>) -> Context<'_> {
    let mut warnings = Vec::new();
    let (compaction, entries) = select_entries(session, &branch, &mut warnings);
    let settings = latest_settings(session, &branch);
    let projection = project(session, &entries, compaction, &settings.edits);
    Context {
        branch,
        compaction,
        entries,
        messages: projection.messages,
        edits: projection.edits,
        model: settings.model,
        thinking_level: settings.thinking_level,
        estimated_tokens: projection.estimated_tokens,
        warnings,
    }
}

/// Returns the latest compaction on `branch` and the entries Pi selects for the context: all of
/// the branch without a compaction; with one, the compaction, the non-system entries from its
/// first kept entry up to it, and everything after it.
fn select_entries(
    session: &Transcript,
    branch: &[usize],
    warnings: &mut Vec<TranscriptWarning>,
) -> (Option<usize>, Vec<usize>) {
    let compaction_position = branch
        .iter()
        .rposition(|&idx| matches!(session.entry(idx).kind, EntryKind::Compaction { .. }));
    let Some(position) = compaction_position else {
        return (None, branch.to_vec());
    };
    let compaction = branch[position];
    let mut entries = Vec::with_capacity(branch.len() - position);
    entries.push(compaction);
    let first_kept = session.first_kept_of(compaction);
    let kept_from = first_kept
        .and_then(|first_kept| branch[..position].iter().position(|&idx| idx == first_kept));
    if kept_from.is_none() && first_kept != Some(compaction) {
        let entry = session.entry(compaction);
        warnings.push(TranscriptWarning::new(
            Some(entry.line_no),
            WarningKind::FirstKeptNotOnBranch,
            format!(
                "compaction {} on line {} keeps from an entry that is not on its branch; nothing before it is kept",
                crate::tree::short(&entry.handle()),
                entry.line_no
            ),
        ));
    }
    if let Some(kept_from) = kept_from {
        entries.extend(
            branch[kept_from..position]
                .iter()
                .copied()
                .filter(|&idx| !session.entry(idx).has_role(&Role::System)),
        );
    }
    entries.extend_from_slice(&branch[position + 1..]);
    (Some(compaction), entries)
}

/// What the whole branch sets: the latest edit per target, the model and the thinking level.
struct Settings<'a> {
    /// Target id -> (the latest `context_edit` on the branch, whether it omits the target).
    edits: HashMap<&'a str, (usize, bool)>,
    model: Option<ModelRef>,
    thinking_level: Option<&'a str>,
}

fn latest_settings<'a>(session: &'a Transcript, branch: &[usize]) -> Settings<'a> {
    let mut edits = HashMap::new();
    let mut model_entry = None;
    let mut thinking_level = None;
    for &idx in branch {
        let entry = session.entry(idx);
        match entry.kind {
            EntryKind::ContextEdit {
                target_id: Some(target_id),
                omits,
            } => {
                edits.insert(target_id, (idx, omits));
            }
            EntryKind::ThinkingLevelChange {
                thinking_level: Some(level),
            } => thinking_level = Some(level),
            kind => {
                if model_of(&kind).is_some() {
                    model_entry = Some(idx);
                }
            }
        }
    }
    Settings {
        edits,
        model: model_entry.and_then(|idx| model_of(&session.entry(idx).kind)),
        thinking_level,
    }
}

/// The model-visible messages of the selected entries, after context edits.
struct Projection<'a> {
    messages: Vec<ContextMessage<'a>>,
    edits: Vec<ContextEdit>,
    estimated_tokens: u64,
}

fn project<'a>(
    session: &'a Transcript,
    entries: &[usize],
    compaction: Option<usize>,
    latest_edit: &HashMap<&str, (usize, bool)>,
) -> Projection<'a> {
    let mut projection = Projection {
        messages: Vec::new(),
        edits: Vec::new(),
        estimated_tokens: 0,
    };
    for &idx in entries {
        let entry = session.entry(idx);
        let kinds = context_messages(&entry.kind, Some(idx) == compaction);
        if kinds[0].is_none() {
            continue;
        }
        let edit = entry
            .id
            .and_then(|id| latest_edit.get(id))
            .filter(|_| !session.is_linear());
        if let Some(&(edit, omits)) = edit {
            projection.edits.push(ContextEdit {
                target: idx,
                edit,
                omits,
            });
            if omits {
                continue;
            }
        }
        projection.estimated_tokens += entry.estimated_tokens();
        for kind in kinds.into_iter().flatten() {
            projection.messages.push(ContextMessage {
                entry: idx,
                kind,
                replaced_by: edit.map(|&(edit, _)| edit),
            });
        }
    }
    projection
}

/// Returns the model-visible messages one selected entry turns into, first first (none for
/// most entries that are not messages).
fn context_messages<'a>(
    kind: &EntryKind<'a>,
    is_the_compaction: bool,
) -> [Option<ContextMessageKind<'a>>; 2] {
    let one = |kind| [Some(kind), None];
    match *kind {
        EntryKind::Message(meta) => {
            if meta.role == Role::BashExecution && meta.exclude_from_context {
                return [None, None];
            }
            one(ContextMessageKind::Message(meta.role))
        }
        EntryKind::Compaction {
            has_system_message, ..
        } => {
            if !is_the_compaction {
                [None, None]
            } else if has_system_message {
                [
                    Some(ContextMessageKind::CompactionSystemCheckpoint),
                    Some(ContextMessageKind::CompactionSummary),
                ]
            } else {
                one(ContextMessageKind::CompactionSummary)
            }
        }
        // Pi projects a branch summary only `if (entry.summary)` (session-manager.js,
        // `sessionEntryToContextMessages`); an empty one stays selected but says nothing.
        EntryKind::BranchSummary {
            has_summary: true, ..
        } => one(ContextMessageKind::BranchSummary),
        EntryKind::CustomMessage { .. } => one(ContextMessageKind::CustomMessage),
        _ => [None, None],
    }
}
