//! The model-visible context on a branch, rebuilt the way Pi rebuilds it on open: the latest
//! compaction replaces everything before its `firstKeptEntryId`, and the latest `context_edit`
//! per target (on the branch) omits or replaces that target's content.

use std::collections::HashMap;

use serde::Serialize;

use crate::entry::{EntryKind, Role};
use crate::session::Transcript;
use crate::warning::{TranscriptWarning, WarningKind};

/// Returns what produced one model-visible message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ContextMessageKind {
    /// A stored message with its role.
    Message(Role),
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
pub struct ContextMessage {
    /// Index of the source entry.
    pub entry: usize,
    /// What kind of message it is.
    pub kind: ContextMessageKind,
    /// The `context_edit` entry whose replacement content the model sees instead.
    pub replaced_by: Option<usize>,
}

/// Returns the context Pi would send to the model with `leaf` as the current position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    /// The branch from a root down to the leaf, root first.
    pub branch: Vec<usize>,
    /// The latest compaction on the branch, if any.
    pub compaction: Option<usize>,
    /// The selected entries (including metadata entries), in context order.
    pub entries: Vec<usize>,
    /// The model-visible messages, after context edits.
    pub messages: Vec<ContextMessage>,
    /// Edits that apply to selected entries, omissions included.
    pub edits: Vec<ContextEdit>,
    /// The model in effect: the latest `model_change` or assistant message on the branch.
    pub model: Option<ModelRef>,
    /// The latest thinking level set on the branch.
    pub thinking_level: Option<String>,
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
pub(crate) fn model_of(kind: &EntryKind) -> Option<ModelRef> {
    match kind {
        EntryKind::ModelChange {
            provider,
            model_id: Some(model),
        } => Some(ModelRef {
            provider: provider.clone(),
            model: model.clone(),
        }),
        EntryKind::Message(meta) if meta.role == Role::Assistant => {
            meta.model.as_ref().map(|model| ModelRef {
                provider: meta.provider.clone(),
                model: model.clone(),
            })
        }
        _ => None,
    }
}

impl Transcript {
    /// Returns the model-visible context with the session's leaf as the current position.
    pub fn context(&self) -> Context {
        match self.leaf() {
            Some(leaf) => self.context_at(leaf),
            None => build(self, Vec::new()),
        }
    }

    /// Returns the model-visible context with `leaf` as the current position.
    pub fn context_at(&self, leaf: usize) -> Context {
        build(self, self.path_to(leaf))
    }
}

fn build(session: &Transcript, branch: Vec<usize>) -> Context {
    let mut warnings = Vec::new();
    let compaction_position = branch
        .iter()
        .rposition(|&idx| matches!(session.entry(idx).kind, EntryKind::Compaction { .. }));
    let mut entries = Vec::with_capacity(branch.len());
    let compaction = compaction_position.map(|position| branch[position]);
    match compaction_position {
        None => entries.extend_from_slice(&branch),
        Some(position) => {
            let compaction = branch[position];
            entries.push(compaction);
            let first_kept = session.first_kept_of(compaction);
            let kept_from = first_kept.and_then(|first_kept| {
                branch[..position].iter().position(|&idx| idx == first_kept)
            });
            if kept_from.is_none() && first_kept != Some(compaction) {
                let entry = session.entry(compaction);
                warnings.push(TranscriptWarning::new(
                    Some(entry.line_no),
                    WarningKind::FirstKeptNotOnBranch,
                    format!(
                        "compaction {} on line {} keeps from an entry that is not on its branch; nothing before it is kept",
                        entry.handle(),
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
        }
    }

    // The latest edit per target on the whole branch wins.
    let mut latest_edit: HashMap<&str, (usize, bool)> = HashMap::new();
    let mut model = None;
    let mut thinking_level = None;
    for &idx in &branch {
        let entry = session.entry(idx);
        match &entry.kind {
            EntryKind::ContextEdit {
                target_id: Some(target_id),
                omits,
            } => {
                latest_edit.insert(target_id.as_str(), (idx, *omits));
            }
            EntryKind::ThinkingLevelChange {
                thinking_level: Some(level),
            } => thinking_level = Some(level.clone()),
            kind => {
                if let Some(found) = model_of(kind) {
                    model = Some(found);
                }
            }
        }
    }

    let mut messages = Vec::new();
    let mut edits = Vec::new();
    let mut estimated_tokens = 0;
    for &idx in &entries {
        let entry = session.entry(idx);
        let kinds: &[ContextMessageKind] = &match &entry.kind {
            EntryKind::Message(meta) => {
                if meta.role == Role::BashExecution && meta.exclude_from_context {
                    continue;
                }
                vec![ContextMessageKind::Message(meta.role.clone())]
            }
            EntryKind::Compaction {
                has_system_message, ..
            } => {
                if Some(idx) != compaction {
                    continue;
                }
                if *has_system_message {
                    vec![
                        ContextMessageKind::CompactionSystemCheckpoint,
                        ContextMessageKind::CompactionSummary,
                    ]
                } else {
                    vec![ContextMessageKind::CompactionSummary]
                }
            }
            // Pi projects a branch summary only `if (entry.summary)` (session-manager.js,
            // `sessionEntryToContextMessages`); an empty one stays selected but says nothing.
            EntryKind::BranchSummary {
                has_summary: true, ..
            } => vec![ContextMessageKind::BranchSummary],
            EntryKind::CustomMessage { .. } => vec![ContextMessageKind::CustomMessage],
            _ => continue,
        };
        let edit = entry
            .id
            .as_deref()
            .and_then(|id| latest_edit.get(id))
            .filter(|_| !session.is_linear());
        if let Some(&(edit, omits)) = edit {
            edits.push(ContextEdit {
                target: idx,
                edit,
                omits,
            });
            if omits {
                continue;
            }
        }
        estimated_tokens += entry.estimated_tokens();
        for kind in kinds {
            messages.push(ContextMessage {
                entry: idx,
                kind: kind.clone(),
                replaced_by: edit.map(|&(edit, _)| edit),
            });
        }
    }
    Context {
        branch,
        compaction,
        entries,
        messages,
        edits,
        model,
        thinking_level,
        estimated_tokens,
        warnings,
    }
}
