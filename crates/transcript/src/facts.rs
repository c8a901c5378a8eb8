//! Derived facts about a whole session: its name as Pi shows it, labels, first user message,
//! models used, counts per role and type, and first/last activity.

use std::collections::{BTreeMap, HashMap};

use pi_retrospect_core::timestamp;
use serde::Serialize;

use crate::content::entry_text;
use crate::context::model_of;
use crate::entry::{EntryKind, Role};
use crate::error::TranscriptError;
use crate::session::Transcript;
use crate::text::preview;

/// Returns one current label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelFact {
    /// The labelled entry's id.
    pub entry_id: String,
    /// The label text.
    pub label: String,
}

/// Returns facts derived from the whole file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionFacts {
    /// The header's session id.
    pub session_id: Option<String>,
    /// The name Pi shows: from the latest `session_info` entry in the file, trimmed.
    pub name: Option<String>,
    /// The header's working directory.
    pub cwd: Option<String>,
    /// The format version the file was read as.
    pub version: u64,
    /// Current labels (latest label entry per target wins; an empty one clears), by target id.
    pub labels: Vec<LabelFact>,
    /// The text of the first user message that has any, as Pi's session list shows it:
    /// whitespace folded, cut to 240 characters.
    pub first_user_message: Option<String>,
    /// Models used, `provider/model`, in order of first use.
    pub models: Vec<String>,
    /// Number of messages per role.
    pub messages_by_role: BTreeMap<String, u64>,
    /// Number of entries per type.
    pub entries_by_type: BTreeMap<String, u64>,
    /// Number of entries.
    pub n_entries: usize,
    /// The earliest entry timestamp, as stored.
    pub first_activity: Option<String>,
    /// The latest entry timestamp, as stored.
    pub last_activity: Option<String>,
    /// The leaf's handle.
    pub leaf_id: Option<String>,
    /// Number of leaves in the tree (branches).
    pub n_leaves: usize,
}

/// Returns the current labels of a session: target id to label, latest in file order wins.
pub fn labels(session: &Transcript) -> HashMap<String, String> {
    let mut labels = HashMap::new();
    for entry in session.entries() {
        if let EntryKind::Label {
            target_id: Some(target_id),
            label,
        } = &entry.kind
        {
            match label.filter(|label| !label.is_empty()) {
                Some(label) => labels.insert((*target_id).to_owned(), label.to_owned()),
                None => labels.remove(*target_id),
            };
        }
    }
    labels
}

/// Returns the derived facts of `session`; decodes only user messages up to the first with text.
pub fn facts(session: &Transcript) -> Result<SessionFacts, TranscriptError> {
    let mut name = None;
    let mut models: Vec<String> = Vec::new();
    let mut messages_by_role = BTreeMap::new();
    let mut entries_by_type = BTreeMap::new();
    let mut user_messages = Vec::new();
    let mut first_activity: Option<(timestamp::Timestamp, &str)> = None;
    let mut last_activity: Option<(timestamp::Timestamp, &str)> = None;
    for (idx, entry) in session.entries().iter().enumerate() {
        *entries_by_type
            .entry(entry.entry_type.to_owned())
            .or_insert(0) += 1;
        match &entry.kind {
            EntryKind::SessionInfo { name: entry_name } => {
                // Pi shows the latest name trimmed (`entry.name?.trim() || undefined`), so a
                // blank one clears it.
                name = entry_name
                    .map(str::trim)
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned);
            }
            EntryKind::Message(meta) => {
                *messages_by_role
                    .entry(meta.role.as_str().to_owned())
                    .or_insert(0) += 1;
                if meta.role == Role::User {
                    user_messages.push(idx);
                }
            }
            _ => {}
        }
        if let Some(model) = model_of(&entry.kind).map(|model| model.display())
            && !models.contains(&model)
        {
            models.push(model);
        }
        if let Some(text) = entry.timestamp
            && let Some(instant) = timestamp::parse(text)
        {
            if first_activity.is_none_or(|(first, _)| instant < first) {
                first_activity = Some((instant, text));
            }
            if last_activity.is_none_or(|(last, _)| instant > last) {
                last_activity = Some((instant, text));
            }
        }
    }
    // As in Pi's session list (`buildSessionInfo`), a user message without text (an image
    // alone, say) is passed over for the next one. Usually only the first is decoded.
    let mut first_user_message = None;
    for idx in user_messages {
        let value = session.decode(idx)?;
        if let Some(text) = entry_text(&session.entry(idx), &value).filter(|text| !text.is_empty())
        {
            first_user_message = Some(preview(&text, 240));
            break;
        }
    }
    let mut labels: Vec<LabelFact> = labels(session)
        .into_iter()
        .map(|(entry_id, label)| LabelFact { entry_id, label })
        .collect();
    labels.sort_by(|left, right| left.entry_id.cmp(&right.entry_id));
    let n_leaves = (0..session.entries().len())
        .filter(|&idx| session.children(idx).is_empty())
        .count();
    Ok(SessionFacts {
        session_id: session.session_id().map(str::to_owned),
        name,
        cwd: session.header().and_then(|header| header.cwd.clone()),
        version: session.version(),
        labels,
        first_user_message,
        models,
        messages_by_role,
        entries_by_type,
        n_entries: session.entries().len(),
        first_activity: first_activity.map(|(_, text)| text.to_owned()),
        last_activity: last_activity.map(|(_, text)| text.to_owned()),
        leaf_id: session.leaf().map(|leaf| session.entry(leaf).handle()),
        n_leaves,
    })
}
