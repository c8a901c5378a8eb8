//! Derived facts about a whole session: its name as Pi shows it, labels, first user message,
//! models used, counts per role and type, first/last activity, and where the entries a fork
//! copied from its parent end.

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
    /// The earliest entry timestamp, UTC RFC 3339.
    pub first_activity: Option<String>,
    /// The latest entry timestamp, UTC RFC 3339.
    pub last_activity: Option<String>,
    /// The header's `parentSession`: the session this one was forked or cloned from.
    pub parent_session: Option<String>,
    /// For a fork: the copies of the parent's entries it starts with.
    pub fork_copy: Option<ForkCopy>,
    /// The leaf's handle.
    pub leaf_id: Option<String>,
    /// Number of leaves in the tree (branches).
    pub n_leaves: usize,
    /// The work done to derive the facts: entries visited and look-ups of a model among those
    /// already seen. Not serialised; tests check with it that the facts cost time linear in
    /// the file, however many distinct models it names.
    #[serde(skip)]
    pub n_steps: u64,
}

/// Where a session sits among others: the fork parent its header names, the session that
/// launched it (on-disk nesting) and the runs it launched. The application layer fills it in,
/// since it reads other files and directories.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Lineage {
    /// For a fork: whether the parent file its header names exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session_exists: Option<bool>,
    /// For a subagent run: the session whose container holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launched_by: Option<String>,
    /// The subagent runs it launched, oldest first.
    pub runs: Vec<RunInfo>,
}

/// One subagent run a session launched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    /// The run's transcript.
    pub path: String,
    /// Its session id.
    pub id: String,
    /// Its header timestamp, UTC RFC 3339.
    pub timestamp: String,
    /// Its name as Pi shows it (the latest `session_info` entry's non-empty `name`), read
    /// with `first_task`: what titles the run, as in `list`.
    pub name: Option<String>,
    /// Its first user message: the task it was given (read for the first 50 runs).
    pub first_task: Option<String>,
    /// Runs it launched in turn (its own direct runs).
    pub n_runs: usize,
}

/// The entries a fork copied from its parent: the leading entries, in file order, written
/// before the fork itself was (a copy keeps its original timestamp; Pi stamps every new entry
/// when it appends it). Needs no access to the parent file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkCopy {
    /// Number of copied entries.
    pub n_entries: usize,
    /// The last copied entry's handle; the fork's own entries follow it.
    pub last_entry_id: Option<String>,
}

/// Returns the entries a fork copied from its parent (see [`ForkCopy`]); `None` when the
/// header names no parent or has no valid timestamp.
pub fn fork_copy(session: &Transcript) -> Option<ForkCopy> {
    let header = session.header()?;
    header.parent_session.as_ref()?;
    let forked_at = header.timestamp.as_deref().and_then(timestamp::parse)?;
    let n_entries = session
        .entries()
        .iter()
        .take_while(|entry| {
            entry
                .timestamp
                .and_then(timestamp::parse)
                .is_some_and(|instant| instant < forked_at)
        })
        .count();
    Some(ForkCopy {
        n_entries,
        last_entry_id: n_entries
            .checked_sub(1)
            .map(|last| session.entry(last).handle()),
    })
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
            match label.as_deref().filter(|label| !label.is_empty()) {
                Some(label) => labels.insert((*target_id).to_owned(), label.to_owned()),
                None => labels.remove(*target_id),
            };
        }
    }
    labels
}

/// Adds one to the count of `key`, allocating the key only the first time it is seen.
fn count(counts: &mut BTreeMap<String, u64>, key: &str) {
    match counts.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            counts.insert(key.to_owned(), 1);
        }
    }
}

/// Returns the derived facts of `session`; decodes only user messages up to the first with text.
pub fn facts(session: &Transcript) -> Result<SessionFacts, TranscriptError> {
    let mut name = None;
    // Each model's place in order of first use. A hash look-up per entry: a scan of the
    // models seen so far made a file naming many distinct models quadratic.
    let mut model_order: HashMap<String, usize> = HashMap::new();
    let mut n_steps = 0u64;
    let mut messages_by_role = BTreeMap::new();
    let mut entries_by_type = BTreeMap::new();
    let mut first_activity: Option<timestamp::Timestamp> = None;
    let mut last_activity: Option<timestamp::Timestamp> = None;
    for entry in session.entries() {
        n_steps += 1;
        count(&mut entries_by_type, entry.entry_type);
        match &entry.kind {
            EntryKind::SessionInfo { name: entry_name } => {
                // Pi shows the latest name trimmed (`entry.name?.trim() || undefined`), so a
                // blank one clears it.
                name = entry_name
                    .as_deref()
                    .map(pi_retrospect_core::json_text::js_trim)
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned);
            }
            EntryKind::Message(meta) => count(&mut messages_by_role, meta.role.as_str()),
            _ => {}
        }
        if let Some(model) = model_of(&entry.kind).map(|model| model.display()) {
            n_steps += 1;
            let n_models = model_order.len();
            model_order.entry(model).or_insert(n_models);
        }
        if let Some(instant) = entry.timestamp.and_then(timestamp::parse) {
            if first_activity.is_none_or(|first| instant < first) {
                first_activity = Some(instant);
            }
            if last_activity.is_none_or(|last| instant > last) {
                last_activity = Some(instant);
            }
        }
    }
    let mut models = vec![String::new(); model_order.len()];
    for (model, order) in model_order {
        models[order] = model;
    }
    // As in Pi's session list (`buildSessionInfo`), a user message without text (an image
    // alone, say) is passed over for the next one. Usually only the first is decoded.
    // Found with a second pass over the envelopes rather than a list of every user message.
    let mut first_user_message = None;
    for (idx, entry) in session.entries().iter().enumerate() {
        n_steps += 1;
        if !matches!(&entry.kind, EntryKind::Message(meta) if meta.role == Role::User) {
            continue;
        }
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
        first_activity: first_activity.map(|instant| instant.to_string()),
        last_activity: last_activity.map(|instant| instant.to_string()),
        parent_session: session
            .header()
            .and_then(|header| header.parent_session.clone()),
        fork_copy: fork_copy(session),
        leaf_id: session.leaf().map(|leaf| session.entry(leaf).handle()),
        n_leaves,
        n_steps,
    })
}
