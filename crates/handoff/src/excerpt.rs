//! Building a [`Handoff`] from a parsed session: header facts, goal, resume command and the
//! bounded, redacted excerpt of the active branch.

use std::collections::BTreeMap;
use std::path::Path;

use crate::document::{
    Excerpt, ExcerptLimits, Handoff, HandoffMessage, HandoffRole, HandoffSource, HandoffText,
    HandoffWarning, RedactionCounts,
};
use pi_retrospect_core::sanitize::sanitize_for_terminal;
use pi_retrospect_transcript::{EntryKind, Role, Transcript, facts};

use crate::error::HandoffError;
use crate::redact::{Redacted, SecretKind, clean, clean_blocks};
use crate::shell::resume_command;
use crate::work::read_work;

/// The default number of messages in an excerpt.
pub const DEFAULT_MAX_MESSAGES: usize = 12;
/// The default limit of one message's text, in bytes (2 KiB).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 2 * 1024;
/// The default limit of all messages' text together, in bytes (16 KiB).
pub const DEFAULT_MAX_EXCERPT_BYTES: usize = 16 * 1024;
/// The default limit of the goal, in bytes (2 KiB).
pub const DEFAULT_MAX_GOAL_BYTES: usize = 2 * 1024;
/// The limit of every one-line field (session id, cwd, name, each model, timestamps, entry
/// ids, warning messages), in bytes; a longer field is cut and ends in [`FIELD_CUT_MARKER`]
/// and the number of bytes cut.
pub const MAX_FIELD_BYTES: usize = 512;
/// The marker that ends a one-line field cut to [`MAX_FIELD_BYTES`]: `… [cut: N bytes]`.
pub const FIELD_CUT_MARKER: &str = "… [cut: ";
/// At most this many models are named in the source (`nModels` counts all).
pub const MAX_MODELS: usize = 16;
/// At most this many warnings are kept (`nWarnings` counts all).
pub const MAX_WARNINGS: usize = 20;
/// The default limit of the whole document, as compact JSON, in bytes (192 KiB): when the
/// header fields, the goal and the messages together would be longer, the oldest messages
/// are dropped until it fits.
pub const DEFAULT_MAX_DOCUMENT_BYTES: usize = 192 * 1024;

/// Returns `text` cut to at most [`MAX_FIELD_BYTES`] on a character boundary, ending in
/// `… [cut: N bytes]` when anything was cut.
pub fn cut_field(text: &str) -> String {
    if text.len() <= MAX_FIELD_BYTES {
        return text.to_owned();
    }
    // Room for the marker with a number of up to 20 digits.
    let mut end = MAX_FIELD_BYTES - FIELD_CUT_MARKER.len() - 28;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}{FIELD_CUT_MARKER}{} bytes]",
        &text[..end],
        text.len() - end
    )
}

/// Returns the cleaned one-line field `cleaned` cut to [`MAX_FIELD_BYTES`] outside every
/// redaction marker, with the redactions kept counted into `counts`.
pub(crate) fn cut_redacted_field(
    cleaned: &Redacted,
    counts: &mut BTreeMap<SecretKind, u64>,
) -> String {
    if cleaned.text.len() <= MAX_FIELD_BYTES {
        add_counts(counts, cleaned);
        return cleaned.text.clone();
    }
    let kept = cleaned.cut(MAX_FIELD_BYTES - FIELD_CUT_MARKER.len() - 28);
    add_counts(counts, &kept);
    format!(
        "{}{FIELD_CUT_MARKER}{} bytes]",
        kept.text,
        cleaned.text.len() - kept.text.len()
    )
}

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
    /// The whole document, as compact JSON, at most this many bytes: the oldest messages are
    /// dropped until it fits (the other parts are bounded by the field and count limits).
    pub max_document_bytes: usize,
}

impl Default for HandoffOptions {
    fn default() -> Self {
        HandoffOptions {
            goal: None,
            max_messages: DEFAULT_MAX_MESSAGES,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_excerpt_bytes: DEFAULT_MAX_EXCERPT_BYTES,
            max_goal_bytes: DEFAULT_MAX_GOAL_BYTES,
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
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
/// system, custom or bash messages, custom entries, or branch summaries.
/// Each text is stripped of terminal controls, redacted, then cut: first to
/// `max_message_bytes`, then to what is left of `max_excerpt_bytes` once the newer messages
/// are counted. The message cut by that budget is the oldest shown; older ones are dropped,
/// as they are once `max_messages` are taken. Cuts fall on character boundaries and never
/// inside a redaction marker, so the bounds hold for the redacted text and no cut shows part
/// of a secret the rules found.
///
/// Beside the excerpt, the document carries the work (each part cleaned and redacted the
/// same way, and bounded on its own): the original task (the first user message with text,
/// cut to [`MAX_TASK_BYTES`](crate::MAX_TASK_BYTES)), the latest compaction's summary (cut to
/// [`MAX_SUMMARY_BYTES`](crate::MAX_SUMMARY_BYTES)), the files `edit` and `write` calls
/// touched (the last [`MAX_FILES`](crate::MAX_FILES)), and the failures of the last
/// [`FAILURE_TURNS`](crate::FAILURE_TURNS) turns with their error text: failed, aborted and
/// cut-off replies (kept even when they have no text, which the excerpt skips), tool errors
/// with the call that failed, and `!` commands that failed (the last
/// [`MAX_FAILURES`](crate::MAX_FAILURES), each text cut to
/// [`MAX_FAILURE_BYTES`](crate::MAX_FAILURE_BYTES)).
///
/// A message that the latest `context_edit` on the active branch omits (`replacement: null`)
/// is left out everywhere, as Pi leaves it out of the model's context: people do that to
/// drop a pasted secret. A replaced message is shown as stored.
///
/// Every one-line field is cut to [`MAX_FIELD_BYTES`] with a marker, at most [`MAX_MODELS`]
/// models and [`MAX_WARNINGS`] warnings are kept (with their counts), and while the compact
/// JSON document exceeds `max_document_bytes` the least recently touched files are dropped,
/// then the oldest messages, then the oldest failures.
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

    let name = facts
        .name
        .as_deref()
        .map(|name| cut_redacted_field(&clean(name), &mut counts));
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

    let branch = transcript.active_branch();
    let omitted = omitted_by_context_edits(transcript, &branch);
    let work = read_work(transcript, &branch, &omitted)?;
    for (kind, count) in &work.counts {
        *counts.entry(*kind).or_insert(0) += count;
    }
    let (file_counts, failure_counts) = (work.file_counts, work.failure_counts);
    let with_text: Vec<usize> = branch
        .into_iter()
        .filter(|&idx| {
            let entry = transcript.entry(idx);
            if entry.id.is_some_and(|id| omitted.contains(id)) {
                return false;
            }
            entry.message().is_some_and(|meta| {
                matches!(meta.role, Role::User | Role::Assistant)
                    && (meta.shape.is_string || meta.shape.n_text > 0)
            })
        })
        .collect();
    let mut messages = Vec::new();
    let mut message_counts = Vec::new();
    let mut n_budget = options.max_excerpt_bytes;
    for &idx in with_text.iter().rev() {
        if messages.len() >= options.max_messages || n_budget == 0 {
            break;
        }
        let entry = transcript.entry(idx);
        let value = transcript.decode(idx)?;
        let Some(blocks) = message_text_blocks(&value) else {
            continue;
        };
        let cleaned = clean_blocks(&blocks);
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
        message_counts.push(kept.counts());
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
                Some(cut_field(&sanitize_for_terminal(&model)))
            });
        messages.push(HandoffMessage {
            entry_id: cut_field(&sanitize_for_terminal(&entry.handle())),
            role,
            timestamp: entry
                .timestamp
                .map(|timestamp| cut_field(&sanitize_for_terminal(timestamp))),
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
    message_counts.reverse();
    let redactions_of = |dropped: Dropped| {
        let mut counts = counts.clone();
        for kept in message_counts[dropped.n_messages..]
            .iter()
            .chain(&file_counts[dropped.n_files..])
            .chain(&failure_counts[dropped.n_failures..])
        {
            for (kind, count) in kept {
                *counts.entry(*kind).or_insert(0) += count;
            }
        }
        RedactionCounts {
            total: counts.values().sum(),
            by_kind: counts
                .into_iter()
                .map(|(kind, count)| (kind.as_str().to_owned(), count))
                .collect(),
        }
    };
    let redactions = redactions_of(Dropped::default());
    let n_bytes = messages.iter().map(|message| message.text.len()).sum();
    let field = |text: Option<String>| text.map(|text| cut_field(&text));
    let all_warnings = transcript.warnings();
    let mut handoff = Handoff {
        source: HandoffSource {
            path: path.clone(),
            session_id: field(facts.session_id),
            cwd: field(facts.cwd),
            name,
            n_models: facts.models.len(),
            models: facts
                .models
                .iter()
                .take(MAX_MODELS)
                .map(|model| cut_field(&sanitize_for_terminal(model)))
                .collect(),
            first_activity: field(facts.first_activity),
            last_activity: field(facts.last_activity),
        },
        goal,
        resume_command: resume_command(&path),
        redactions,
        task: work.task,
        compaction: work.compaction,
        files_touched: work.files_touched,
        n_files_touched: work.n_files_touched,
        failures: work.failures,
        n_failures: work.n_failures,
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
        n_warnings: usize::try_from(transcript.warning_counts().total())
            .unwrap_or(usize::MAX)
            .max(all_warnings.len()),
        warnings: all_warnings
            .iter()
            .take(MAX_WARNINGS)
            .map(|warning| HandoffWarning {
                line_no: warning.line_no,
                message: cut_field(&sanitize_for_terminal(&warning.message)),
            })
            .collect(),
    };
    let dropped = fit_document(&mut handoff, options.max_document_bytes);
    if dropped != Dropped::default() {
        handoff.redactions = redactions_of(dropped);
    }
    Ok(handoff)
}

/// How many of each list [`fit_document`] dropped from the front.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Dropped {
    n_messages: usize,
    n_files: usize,
    n_failures: usize,
}

/// Returns how many leading items of `items` to drop, each `len(item)` bytes of JSON long (a
/// separating comma included), to bring `n_bytes` down to `max_bytes`, and lowers `n_bytes`
/// by what they weigh.
fn n_to_drop<T: serde::Serialize>(items: &[T], n_bytes: &mut usize, max_bytes: usize) -> usize {
    let mut n_dropped = 0;
    while *n_bytes > max_bytes && n_dropped < items.len() {
        *n_bytes -= json_len(&items[n_dropped]) + 1;
        n_dropped += 1;
    }
    n_dropped
}

/// Drops, while the compact JSON of `handoff` is longer than `max_bytes`, the least recently
/// touched files, then the oldest messages, then the oldest failures, and returns how many it
/// dropped of each: the list of files is the easiest to read again from the session, the
/// failures of the last turns the hardest to do without.
fn fit_document(handoff: &mut Handoff, max_bytes: usize) -> Dropped {
    let mut n_bytes = json_len(handoff);
    let n_files = n_to_drop(&handoff.files_touched, &mut n_bytes, max_bytes);
    let n_messages = n_to_drop(&handoff.excerpt.messages, &mut n_bytes, max_bytes);
    let n_failures = n_to_drop(&handoff.failures, &mut n_bytes, max_bytes);
    let dropped = Dropped {
        n_messages,
        n_files,
        n_failures,
    };
    if dropped.n_messages > 0 {
        handoff.excerpt.messages.drain(..dropped.n_messages);
        handoff.excerpt.n_bytes = handoff
            .excerpt
            .messages
            .iter()
            .map(|message| message.text.len())
            .sum();
    }
    handoff.files_touched.drain(..dropped.n_files);
    handoff.failures.drain(..dropped.n_failures);
    dropped
}

/// Returns the length of `value` as compact JSON.
fn json_len(value: &impl serde::Serialize) -> usize {
    serde_json::to_vec(value).map_or(0, |bytes| bytes.len())
}

/// Returns the ids of the messages the latest `context_edit` for each target on `branch`
/// omits from the model's context (Pi's `buildSessionProjection`; version 1 files, which have
/// no ids to target, have none).
fn omitted_by_context_edits<'a>(
    transcript: &'a Transcript,
    branch: &[usize],
) -> std::collections::HashSet<&'a str> {
    let mut latest: BTreeMap<&str, bool> = BTreeMap::new();
    if transcript.is_linear() {
        return std::collections::HashSet::new();
    }
    for &idx in branch {
        if let EntryKind::ContextEdit {
            target_id: Some(target_id),
            omits,
        } = transcript.entry(idx).kind
        {
            latest.insert(target_id, omits);
        }
    }
    latest
        .into_iter()
        .filter_map(|(id, omits)| omits.then_some(id))
        .collect()
}

/// Adds the redactions of `redacted` to `counts`.
fn add_counts(counts: &mut BTreeMap<SecretKind, u64>, redacted: &Redacted) {
    for (kind, count) in redacted.counts() {
        *counts.entry(kind).or_insert(0) += count;
    }
}

/// Returns the text blocks of a message entry's content (a string is one block), or `None`
/// when it has none. The blocks are kept apart so that redaction can see a token split
/// between two of them.
pub(crate) fn message_text_blocks(value: &serde_json::Value) -> Option<Vec<&str>> {
    pi_retrospect_transcript::content_text_blocks(value.get("message")?.get("content")?)
}
