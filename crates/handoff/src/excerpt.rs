//! Building a [`Handoff`] from a parsed session: header facts, goal, resume command and the
//! bounded, redacted excerpt of the active branch.

use std::collections::BTreeMap;
use std::path::Path;

use crate::document::{
    Excerpt, ExcerptLimits, Handoff, HandoffMessage, HandoffRole, HandoffSource, HandoffText,
    HandoffWarning, RedactionCounts,
};
use pi_retrospect_core::sanitize::sanitize_for_terminal;
use pi_retrospect_transcript::{Role, Transcript, entry_text, facts};

use crate::error::HandoffError;
use crate::redact::{Redacted, SecretKind, clean};
use crate::shell::resume_command;

/// The default number of messages in an excerpt.
pub const DEFAULT_MAX_MESSAGES: usize = 12;
/// The default limit of one message's text, in bytes (2 KiB).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 2 * 1024;
/// The default limit of all messages' text together, in bytes (16 KiB).
pub const DEFAULT_MAX_EXCERPT_BYTES: usize = 16 * 1024;
/// The default limit of the goal, in bytes (2 KiB).
pub const DEFAULT_MAX_GOAL_BYTES: usize = 2 * 1024;

/// What to put in a handoff and how much of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandoffOptions {
    /// The goal of the work to continue; blank counts as none.
    pub goal: Option<String>,
    /// At most this many messages.
    pub max_messages: usize,
    /// Each message's text cut to at most this many bytes of UTF-8.
    pub max_message_bytes: usize,
    /// All messages' text together at most this many bytes of UTF-8.
    pub max_excerpt_bytes: usize,
    /// The goal cut to at most this many bytes of UTF-8.
    pub max_goal_bytes: usize,
}

impl Default for HandoffOptions {
    fn default() -> Self {
        HandoffOptions {
            goal: None,
            max_messages: DEFAULT_MAX_MESSAGES,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_excerpt_bytes: DEFAULT_MAX_EXCERPT_BYTES,
            max_goal_bytes: DEFAULT_MAX_GOAL_BYTES,
        }
    }
}

/// Returns the handoff of the session stored at `path`, opened read-only.
pub fn handoff_file(path: &Path, options: &HandoffOptions) -> Result<Handoff, HandoffError> {
    let transcript = Transcript::open(path)?;
    handoff(&transcript, path, options)
}

/// Returns the handoff of `transcript`, the session stored at `source_path`.
///
/// `source_path` is made absolute (against the current directory when it is relative,
/// without touching the file system) and must be valid UTF-8. The excerpt holds the most
/// recent `user` and `assistant` messages of the active branch whose content has text,
/// newest last: only their text blocks, never thinking, tool calls, tool results, images,
/// system, custom or bash messages, custom entries, or branch and compaction summaries.
/// Each text is stripped of terminal controls, redacted, then cut: first to
/// `max_message_bytes`, then to what is left of `max_excerpt_bytes` once the newer messages
/// are counted. The message cut by that budget is the oldest shown; older ones are dropped,
/// as they are once `max_messages` are taken. Cuts fall on character boundaries and never
/// inside a redaction marker, so the bounds hold for the redacted text and no cut shows part
/// of a secret the rules found.
///
/// Messages are the stored ones: a `context_edit` changes what the model sees next, not what
/// was said, so it is not applied.
pub fn handoff(
    transcript: &Transcript,
    source_path: &Path,
    options: &HandoffOptions,
) -> Result<Handoff, HandoffError> {
    let absolute = std::path::absolute(source_path).map_err(|source| HandoffError::Absolute {
        path: source_path.to_owned(),
        source,
    })?;
    let Some(path) = absolute.to_str().map(str::to_owned) else {
        return Err(HandoffError::NonUtf8Path { path: absolute });
    };
    let facts = facts(transcript)?;
    let mut counts = BTreeMap::new();

    let name = facts.name.as_deref().map(|name| {
        let cleaned = clean(name);
        add_counts(&mut counts, &cleaned);
        cleaned.text
    });
    let goal = options
        .goal
        .as_deref()
        .map(str::trim)
        .filter(|goal| !goal.is_empty())
        .map(|goal| {
            let cleaned = clean(goal);
            let kept = cleaned.cut(options.max_goal_bytes);
            add_counts(&mut counts, &kept);
            HandoffText {
                is_cut: kept.text.len() < cleaned.text.len(),
                n_bytes: cleaned.text.len(),
                text: kept.text,
            }
        });

    let with_text: Vec<usize> = transcript
        .active_branch()
        .into_iter()
        .filter(|&idx| {
            transcript.entry(idx).message().is_some_and(|meta| {
                matches!(meta.role, Role::User | Role::Assistant)
                    && (meta.shape.is_string || meta.shape.n_text > 0)
            })
        })
        .collect();
    let mut messages = Vec::new();
    let mut n_budget = options.max_excerpt_bytes;
    for &idx in with_text.iter().rev() {
        if messages.len() >= options.max_messages || n_budget == 0 {
            break;
        }
        let entry = transcript.entry(idx);
        let value = transcript.decode(idx)?;
        let Some(text) = entry_text(&entry, &value) else {
            continue;
        };
        let cleaned = clean(&text);
        if cleaned.text.trim().is_empty() {
            continue;
        }
        let limit = options.max_message_bytes.min(n_budget);
        let kept = cleaned.cut(limit);
        if kept.text.is_empty() && limit < options.max_message_bytes {
            // The budget left cannot hold the start of this message.
            break;
        }
        // A message cut to fit what is left of the excerpt is the oldest one shown.
        let is_cut_by_budget =
            limit < options.max_message_bytes && kept.text.len() < cleaned.text.len();
        n_budget -= kept.text.len();
        add_counts(&mut counts, &kept);
        let meta = entry.message();
        let role = match meta.map(|meta| meta.role) {
            Some(Role::Assistant) => HandoffRole::Assistant,
            _ => HandoffRole::User,
        };
        let model = meta
            .filter(|_| role == HandoffRole::Assistant)
            .and_then(|meta| {
                let model = match (&meta.provider, &meta.model) {
                    (Some(provider), Some(model)) => format!("{provider}/{model}"),
                    (None, Some(model)) => (*model).to_owned(),
                    _ => return None,
                };
                Some(sanitize_for_terminal(&model).into_owned())
            });
        messages.push(HandoffMessage {
            entry_id: entry.handle(),
            role,
            timestamp: entry.timestamp.map(str::to_owned),
            model,
            is_cut: kept.text.len() < cleaned.text.len(),
            n_bytes: cleaned.text.len(),
            text: kept.text,
        });
        if is_cut_by_budget {
            break;
        }
    }
    messages.reverse();

    let redactions = RedactionCounts {
        total: counts.values().sum(),
        by_kind: counts
            .into_iter()
            .map(|(kind, count)| (kind.as_str().to_owned(), count))
            .collect(),
    };
    let n_bytes = messages.iter().map(|message| message.text.len()).sum();
    Ok(Handoff {
        source: HandoffSource {
            path: path.clone(),
            session_id: facts.session_id,
            cwd: facts.cwd,
            name,
            models: facts
                .models
                .iter()
                .map(|model| sanitize_for_terminal(model).into_owned())
                .collect(),
            first_activity: facts.first_activity,
            last_activity: facts.last_activity,
        },
        goal,
        resume_command: resume_command(&path),
        redactions,
        excerpt: Excerpt {
            messages,
            n_available: with_text.len(),
            n_bytes,
            limits: ExcerptLimits {
                max_messages: options.max_messages,
                max_message_bytes: options.max_message_bytes,
                max_excerpt_bytes: options.max_excerpt_bytes,
            },
        },
        warnings: transcript
            .warnings()
            .iter()
            .map(|warning| HandoffWarning {
                line_no: warning.line_no,
                message: sanitize_for_terminal(&warning.message).into_owned(),
            })
            .collect(),
    })
}

/// Adds the redactions of `redacted` to `counts`.
fn add_counts(counts: &mut BTreeMap<SecretKind, u64>, redacted: &Redacted) {
    for (kind, count) in redacted.counts() {
        *counts.entry(kind).or_insert(0) += count;
    }
}
