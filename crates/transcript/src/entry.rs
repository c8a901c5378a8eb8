//! Entry envelopes: what the parser keeps of each line, as the views see it.
//!
//! An [`Entry`] is a small, copyable view: the stored ids, the type, the message role and the
//! few fields that the tree, the context and the derived facts need, plus the byte range of its
//! line so that the full content can be decoded on demand. Its strings borrow from the
//! transcript's compact store (see `store.rs`), so handing out an entry allocates nothing.

use serde::{Serialize, Serializer};

use crate::envelope::{Loose, RawEnvelope, RawMessage};

/// Returns a message role as stored in `message.role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role<'a> {
    /// `system`: prompt sections and tool declarations.
    System,
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
    /// `toolResult`.
    ToolResult,
    /// `bashExecution`: a `!` command run by the user.
    BashExecution,
    /// `custom` (named `hookMessage` in version 2 files).
    Custom,
    /// `branchSummary`.
    BranchSummary,
    /// `compactionSummary`.
    CompactionSummary,
    /// Any other role, kept verbatim; an absent role is the empty string.
    Unknown(&'a str),
}

impl<'a> Role<'a> {
    /// Returns the role for a stored role string; `hookMessage` maps to `Custom` in files
    /// older than version 3, as Pi's migration does.
    pub fn from_stored(role: &'a str, version: u64) -> Role<'a> {
        match role {
            "system" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "toolResult" => Role::ToolResult,
            "bashExecution" => Role::BashExecution,
            "custom" => Role::Custom,
            "hookMessage" if version < 3 => Role::Custom,
            "branchSummary" => Role::BranchSummary,
            "compactionSummary" => Role::CompactionSummary,
            other => Role::Unknown(other),
        }
    }

    /// Returns the role's name as Pi writes it (version 3 spelling).
    pub fn as_str(&self) -> &'a str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::ToolResult => "toolResult",
            Role::BashExecution => "bashExecution",
            Role::Custom => "custom",
            Role::BranchSummary => "branchSummary",
            Role::CompactionSummary => "compactionSummary",
            Role::Unknown(other) => other,
        }
    }
}

impl Serialize for Role<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Returns how a message's content is made up, counted while scanning.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentShape {
    /// The content is a plain string rather than an array of blocks.
    pub is_string: bool,
    /// Number of text blocks.
    pub n_text: u32,
    /// Number of thinking blocks.
    pub n_thinking: u32,
    /// Number of tool calls.
    pub n_tool_calls: u32,
    /// Number of images.
    pub n_images: u32,
}

/// Returns the envelope of a `message` entry's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageMeta<'a> {
    /// The message role.
    pub role: Role<'a>,
    /// The content's makeup.
    pub shape: ContentShape,
    /// Assistant: the provider that answered.
    pub provider: Option<&'a str>,
    /// Assistant: the model that answered.
    pub model: Option<&'a str>,
    /// Assistant: why the response stopped (`stop`, `toolUse`, `error`, ...).
    pub stop_reason: Option<&'a str>,
    /// Tool result: the tool's name.
    pub tool_name: Option<&'a str>,
    /// Custom message: the extension's type name.
    pub custom_type: Option<&'a str>,
    /// Bash execution: excluded from model context.
    pub exclude_from_context: bool,
    /// Tool result: the tool failed.
    pub is_error: bool,
}

/// Returns the type-specific part of an entry's envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EntryKind<'a> {
    /// `message`.
    Message(MessageMeta<'a>),
    /// `model_change`.
    ModelChange {
        /// The selected provider.
        provider: Option<&'a str>,
        /// The selected model.
        model_id: Option<&'a str>,
    },
    /// `thinking_level_change`.
    ThinkingLevelChange {
        /// The new level.
        thinking_level: Option<&'a str>,
    },
    /// `usage`: model-attributed usage outside the conversation.
    Usage {
        /// The operation, e.g. `cache_warm`.
        kind: Option<&'a str>,
    },
    /// `compaction`.
    Compaction {
        /// The first entry kept from before the compaction.
        first_kept_entry_id: Option<&'a str>,
        /// Version 1 files: the index (in the file's parsed records, header = 0) of that entry.
        first_kept_entry_index: Option<u64>,
        /// The entry carries a complete system checkpoint.
        has_system_message: bool,
    },
    /// `context_edit`.
    ContextEdit {
        /// The edited entry.
        target_id: Option<&'a str>,
        /// `replacement: null`: the target is omitted from context.
        omits: bool,
    },
    /// `branch_summary`.
    BranchSummary {
        /// The abandoned leaf that was summarised.
        from_id: Option<&'a str>,
        /// The entry has a non-empty `summary`; Pi turns one without into no context message.
        has_summary: bool,
    },
    /// `custom`: extension state, not in context.
    Custom {
        /// The extension's type name.
        custom_type: Option<&'a str>,
    },
    /// `custom_message`: extension message that is in context.
    CustomMessage {
        /// The extension's type name.
        custom_type: Option<&'a str>,
        /// Shown in the terminal.
        display: bool,
    },
    /// `label`.
    Label {
        /// The labelled entry.
        target_id: Option<&'a str>,
        /// The label; `None` clears it.
        label: Option<&'a str>,
    },
    /// `session_info`.
    SessionInfo {
        /// The session's display name.
        name: Option<&'a str>,
    },
    /// Any other type, kept opaque.
    Unknown,
}

/// Returns one stored entry's envelope: a copyable view whose strings borrow from the
/// transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry<'a> {
    /// Physical line number (1-based; line 1 is normally the header).
    pub line_no: u64,
    /// Offset of the line's first byte in the file.
    pub byte_offset: u64,
    /// Length of the line in bytes, without its line ending.
    pub byte_len: u64,
    /// Length of the line in characters (UTF-8 code points), for token estimates.
    #[serde(skip)]
    pub n_chars: u64,
    /// The stored id (`None` in version 1 files or when missing).
    pub id: Option<&'a str>,
    /// The stored parent id (`None` for a root or in version 1 files).
    pub parent_id: Option<&'a str>,
    /// The entry's ISO 8601 timestamp as stored.
    pub timestamp: Option<&'a str>,
    /// The stored `type` string.
    pub entry_type: &'a str,
    /// The type-specific envelope.
    pub kind: EntryKind<'a>,
}

impl<'a> Entry<'a> {
    /// Returns the stable handle of the entry: its id, or `line:N` when it has none.
    pub fn handle(&self) -> String {
        match self.id {
            Some(id) => id.to_owned(),
            None => format!("line:{}", self.line_no),
        }
    }

    /// Returns the message envelope when this is a `message` entry.
    pub fn message(&self) -> Option<MessageMeta<'a>> {
        match self.kind {
            EntryKind::Message(meta) => Some(meta),
            _ => None,
        }
    }

    /// Returns the message role when this is a `message` entry.
    pub fn role(&self) -> Option<Role<'a>> {
        self.message().map(|meta| meta.role)
    }

    /// Returns whether this is a message with `role`.
    pub fn has_role(&self, role: &Role<'_>) -> bool {
        self.role().as_ref() == Some(role)
    }

    /// Returns a rough token estimate of the entry: the characters of its serialised form
    /// divided by four (characters, not bytes, so text outside ASCII is not overcounted).
    pub fn estimated_tokens(&self) -> u64 {
        self.n_chars.div_ceil(4)
    }
}

fn is_true(value: Loose) -> bool {
    value == Loose::Bool(true)
}

fn message_meta<'a>(raw: &'a RawMessage<'_>, version: u64) -> MessageMeta<'a> {
    MessageMeta {
        role: Role::from_stored(raw.role.as_str().unwrap_or_default(), version),
        shape: ContentShape {
            is_string: raw.content.is_string,
            n_text: raw.content.n_text,
            n_thinking: raw.content.n_thinking,
            n_tool_calls: raw.content.n_tool_calls,
            n_images: raw.content.n_images,
        },
        provider: raw.provider.as_str(),
        model: raw.model.as_str(),
        stop_reason: raw.stop_reason.as_str(),
        tool_name: raw.tool_name.as_str(),
        custom_type: raw.custom_type.as_str(),
        exclude_from_context: is_true(raw.exclude_from_context),
        is_error: is_true(raw.is_error),
    }
}

/// Where an entry's line is in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineSpan {
    pub line_no: u64,
    pub byte_offset: u64,
    pub byte_len: u64,
    pub n_chars: u64,
}

/// Returns the entry view of an envelope whose type is `entry_type` (never `session`),
/// borrowing its strings from the envelope.
pub(crate) fn entry_from_envelope<'a>(
    raw: &'a RawEnvelope<'_>,
    entry_type: &'a str,
    version: u64,
    span: LineSpan,
) -> Entry<'a> {
    let kind = match entry_type {
        "message" => EntryKind::Message(match &raw.message.0 {
            Some(message) => message_meta(message, version),
            None => message_meta(&EMPTY_MESSAGE, version),
        }),
        "model_change" => EntryKind::ModelChange {
            provider: raw.provider.as_str(),
            model_id: raw.model_id.as_str(),
        },
        "thinking_level_change" => EntryKind::ThinkingLevelChange {
            thinking_level: raw.thinking_level.as_str(),
        },
        "usage" => EntryKind::Usage {
            kind: raw.usage_kind.as_str(),
        },
        "compaction" => EntryKind::Compaction {
            first_kept_entry_id: raw.first_kept_entry_id.as_str(),
            first_kept_entry_index: match raw.first_kept_entry_index {
                Loose::Unsigned(index) => Some(index),
                _ => None,
            },
            has_system_message: raw.system_message.is_some(),
        },
        "context_edit" => EntryKind::ContextEdit {
            target_id: raw.target_id.as_str(),
            omits: matches!(raw.replacement, Loose::Null | Loose::Absent),
        },
        "branch_summary" => EntryKind::BranchSummary {
            from_id: raw.from_id.as_str(),
            has_summary: raw.has_summary,
        },
        "custom" => EntryKind::Custom {
            custom_type: raw.custom_type.as_str(),
        },
        "custom_message" => EntryKind::CustomMessage {
            custom_type: raw.custom_type.as_str(),
            display: is_true(raw.display),
        },
        "label" => EntryKind::Label {
            target_id: raw.target_id.as_str(),
            label: raw.label.as_str(),
        },
        "session_info" => EntryKind::SessionInfo {
            name: raw.name.as_str(),
        },
        _ => EntryKind::Unknown,
    };
    Entry {
        line_no: span.line_no,
        byte_offset: span.byte_offset,
        byte_len: span.byte_len,
        n_chars: span.n_chars,
        id: raw.id.as_str(),
        parent_id: raw.parent_id.as_str(),
        timestamp: raw.timestamp.as_str(),
        entry_type,
        kind,
    }
}

/// The envelope of a `message` entry whose `message` is missing or not an object.
static EMPTY_MESSAGE: RawMessage<'static> = RawMessage::EMPTY;
