//! The names of Pi's entry types and message roles, as the filters of every front end
//! (`entries --type/--role`, `search --role`, the MCP tools' `types`/`messageRoles`) accept
//! them: one list, so a front end cannot accept what another refuses.

/// Every entry type Pi 1.6.0 writes.
pub const ENTRY_TYPES: [&str; 11] = [
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "context_edit",
    "usage",
];

/// Every message role, in the spellings of session version 3.
pub const MESSAGE_ROLES: [&str; 8] = [
    "system",
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "branchSummary",
    "compactionSummary",
];
