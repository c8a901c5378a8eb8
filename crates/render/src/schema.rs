//! The JSON Schemas (draft 2020-12) of the `--json` documents of `list`, `show`, `inspect` and
//! `entries`, printed by `pi-retrospect schema`. Tests validate every fixture's output
//! against them.

/// The schema of the `{ "sessions": [...], "warnings": [...] }` document, as JSON text.
pub const LIST_SCHEMA: &str = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://pi-retrospect.invalid/schema/list.json",
  "title": "pi-retrospect list --json",
  "description": "Every discoverable Pi session, oldest first (timestamp instant ascending, ties by path, at every level), with subagent runs nested by on-disk containment, plus one warning per skipped file.",
  "type": "object",
  "additionalProperties": false,
  "required": ["sessions", "warnings"],
  "properties": {
    "sessions": {
      "type": "array",
      "items": { "$ref": "#/$defs/SessionMetadata" }
    },
    "warnings": {
      "type": "array",
      "description": "Sorted by path, then reason.",
      "items": { "$ref": "#/$defs/Warning" }
    }
  },
  "$defs": {
    "SessionMetadata": {
      "type": "object",
      "additionalProperties": false,
      "required": ["id", "path", "timestamp", "cwd", "subagentSessions"],
      "properties": {
        "id": { "type": "string", "minLength": 1, "description": "Session id from the file header; not unique across rows." },
        "path": { "type": "string", "description": "Absolute path of the session .jsonl file; the handle to key on." },
        "timestamp": { "type": "string", "format": "date-time", "description": "Header timestamp as written, validated as a real instant." },
        "cwd": { "type": "string", "minLength": 1, "description": "Absolute working directory from the header (POSIX, Windows drive or UNC)." },
        "parentSessionPath": { "type": "string", "minLength": 1, "description": "Header parentSession, verbatim: fork/clone lineage, not nesting. Absent when the header has none." },
        "subagentSessions": {
          "type": "array",
          "description": "Subagent runs launched under this session, oldest first; always present.",
          "items": { "$ref": "#/$defs/SessionMetadata" }
        }
      }
    },
    "Warning": {
      "type": "object",
      "additionalProperties": false,
      "required": ["path", "reason"],
      "properties": {
        "path": { "type": "string", "description": "Absolute path of the skipped file or directory." },
        "reason": { "type": "string", "description": "Why it was skipped; free-form text." }
      }
    }
  }
}
"##;

/// Definitions every reading command's schema shares, spliced into each of them.
macro_rules! shared_defs {
    () => {
        r##"
    "Warning": {
      "type": "object",
      "additionalProperties": false,
      "required": ["lineNo", "kind", "message"],
      "properties": {
        "lineNo": { "type": ["integer", "null"], "minimum": 1, "description": "The physical line the problem is on." },
        "kind": { "$ref": "#/$defs/WarningKind" },
        "message": { "type": "string" },
        "omitted": {
          "type": "object",
          "additionalProperties": false,
          "required": ["kind", "count"],
          "description": "Only on an `omitted` warning, where a bounded list (an MCP page) stands for more: the warnings of one kind beyond the first 20, counted but not listed. The CLI's `--json` lists every warning and has none.",
          "properties": {
            "kind": { "$ref": "#/$defs/WarningKind" },
            "count": { "type": "integer", "minimum": 1 }
          }
        }
      }
    },
    "WarningKind": {
      "enum": ["missing_header", "unknown_version", "version1_ids", "byte_order_mark", "crlf_line_endings", "malformed_line", "over_long_line", "not_an_entry", "partial_final_line", "missing_final_newline", "extra_header", "missing_id", "duplicate_id", "missing_parent", "cycle", "first_kept_not_on_branch", "changed_while_read", "too_many_entries", "omitted"]
    },
    "Timestamp": {
      "type": ["string", "null"],
      "description": "UTC RFC 3339 with milliseconds (as stored when the file's value is not a real instant)."
    },
    "Status": {
      "description": "How a message ended; each member only when the file records it.",
      "type": "object",
      "properties": {
        "stopReason": { "type": "string", "description": "Assistant: stop, toolUse, length (cut off at the output limit), error, aborted, ..." },
        "errorMessage": { "type": "string", "description": "Assistant: the provider's or Pi's error." },
        "isError": { "type": "boolean", "description": "Tool result: the tool failed." },
        "exitCode": { "type": "integer", "description": "! command: the exit code." },
        "cancelled": { "const": true, "description": "! command: cancelled by the user." },
        "truncated": { "const": true, "description": "! command: Pi kept only part of the output." },
        "fullOutputPath": { "type": "string", "description": "Where Pi saved the whole output it cut." },
        "excludeFromContext": { "const": true, "description": "!! command: not sent to the model." }
      }
    },
    "Omission": {
      "type": "object",
      "additionalProperties": false,
      "required": ["at", "nLines", "nBytes"],
      "properties": {
        "at": { "type": "integer", "minimum": 0 },
        "nLines": { "type": "integer", "minimum": 0 },
        "nBytes": { "type": "integer", "minimum": 0 }
      }
    },
    "Ids": { "type": "array", "items": { "type": "string" } }"##
    };
}

/// The schema of `show --json`: the active branch as `items`, or with `--tree` every entry as
/// `tree`; `$defs/JsonlRow` is one `show --jsonl` row.
pub const SHOW_SCHEMA: &str = concat!(
    r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://pi-retrospect.invalid/schema/show.json",
  "title": "pi-retrospect show --json",
  "description": "One session: its heading facts and its active branch (items) or its whole entry tree (tree). Nothing is cut.",
  "type": "object",
  "additionalProperties": false,
  "required": ["path", "sessionId", "name", "cwd", "runs", "firstActivity", "lastActivity", "leafId", "warnings"],
  "oneOf": [{ "required": ["items"] }, { "required": ["tree"] }],
  "properties": {
    "path": { "type": "string", "description": "Absolute path of the session file." },
    "sessionId": { "type": ["string", "null"] },
    "name": { "type": ["string", "null"], "description": "The latest session_info name, trimmed." },
    "cwd": { "type": ["string", "null"] },
    "parentSession": { "type": "string", "description": "The header's parentSession: the session this one was forked from." },
    "parentSessionExists": { "type": "boolean" },
    "forkCopy": {
      "type": "object",
      "additionalProperties": false,
      "required": ["nEntries", "lastEntryId"],
      "description": "The entries a fork copied from its parent: those written before the fork's header timestamp.",
      "properties": {
        "nEntries": { "type": "integer", "minimum": 0 },
        "lastEntryId": { "type": ["string", "null"] }
      }
    },
    "launchedBy": { "type": "string", "description": "For a subagent run: the session whose container holds it." },
    "runs": {
      "type": "array",
      "description": "Subagent runs this session launched, oldest first.",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["path", "id", "timestamp", "name", "firstTask", "nRuns"],
        "properties": {
          "path": { "type": "string" },
          "id": { "type": "string" },
          "timestamp": { "type": "string" },
          "name": { "type": ["string", "null"], "description": "The run's name (Pi's /name), which titles it when set." },
          "firstTask": { "type": ["string", "null"], "description": "The run's first user message: the task it was given." },
          "nRuns": { "type": "integer", "minimum": 0 }
        }
      }
    },
    "firstActivity": { "$ref": "#/$defs/Timestamp" },
    "lastActivity": { "$ref": "#/$defs/Timestamp" },
    "leafId": { "type": ["string", "null"] },
    "items": { "type": "array", "items": { "$ref": "#/$defs/Item" } },
    "tree": { "type": "array", "items": { "$ref": "#/$defs/TreeRow" } },
    "warnings": { "type": "array", "items": { "$ref": "#/$defs/Warning" } }
  },
  "$defs": {
    "JsonlRow": {
      "description": "One `show --jsonl` row: first a session row, then the active branch's items (or with --tree one treeRow row per entry), then one warning row per warning.",
      "oneOf": [
        { "$ref": "#/$defs/SessionRow" },
        { "$ref": "#/$defs/Item" },
        {
          "type": "object", "additionalProperties": false, "required": ["kind", "row"],
          "properties": { "kind": { "const": "treeRow" }, "row": { "$ref": "#/$defs/TreeRow" } }
        },
        {
          "type": "object", "additionalProperties": false, "required": ["kind", "warning"],
          "properties": { "kind": { "const": "warning" }, "warning": { "$ref": "#/$defs/Warning" } }
        }
      ]
    },
    "SessionRow": {
      "type": "object", "additionalProperties": false,
      "description": "The first `show --jsonl` row: the document's heading fields.",
      "required": ["kind", "path", "sessionId", "name", "cwd", "runs", "firstActivity", "lastActivity", "leafId"],
      "properties": {
        "kind": { "const": "session" },
        "path": { "$ref": "#/properties/path" }, "sessionId": { "$ref": "#/properties/sessionId" },
        "name": { "$ref": "#/properties/name" }, "cwd": { "$ref": "#/properties/cwd" },
        "parentSession": { "$ref": "#/properties/parentSession" },
        "parentSessionExists": { "$ref": "#/properties/parentSessionExists" },
        "forkCopy": { "$ref": "#/properties/forkCopy" }, "launchedBy": { "$ref": "#/properties/launchedBy" },
        "runs": { "$ref": "#/properties/runs" },
        "firstActivity": { "$ref": "#/properties/firstActivity" },
        "lastActivity": { "$ref": "#/properties/lastActivity" }, "leafId": { "$ref": "#/properties/leafId" }
      }
    },
    "Item": {
      "oneOf": [
        { "$ref": "#/$defs/User" }, { "$ref": "#/$defs/Assistant" }, { "$ref": "#/$defs/Thinking" },
        { "$ref": "#/$defs/ToolCall" }, { "$ref": "#/$defs/ToolResult" }, { "$ref": "#/$defs/Bash" },
        { "$ref": "#/$defs/System" }, { "$ref": "#/$defs/Compaction" }, { "$ref": "#/$defs/BranchSummary" },
        { "$ref": "#/$defs/ContextEdit" }, { "$ref": "#/$defs/Label" }, { "$ref": "#/$defs/Note" }
      ]
    },
    "User": {
      "type": "object", "additionalProperties": false,
      "required": ["kind", "entryId", "timestamp", "text", "nImages"],
      "properties": {
        "kind": { "const": "user" }, "entryId": { "type": "string" }, "timestamp": { "$ref": "#/$defs/Timestamp" },
        "text": { "type": "string" }, "nImages": { "type": "integer", "minimum": 0 }
      }
    },
    "Assistant": {
      "type": "object", "unevaluatedProperties": false,
      "allOf": [{ "$ref": "#/$defs/Status" }],
      "required": ["kind", "entryId", "timestamp", "text", "model", "nHiddenThinking"],
      "properties": {
        "kind": { "const": "assistant" }, "entryId": { "type": "string" }, "timestamp": { "$ref": "#/$defs/Timestamp" },
        "text": { "type": "string", "description": "Empty for a response that failed or only thought." },
        "model": { "type": ["string", "null"] },
        "nHiddenThinking": { "type": "integer", "minimum": 0 }
      }
    },
    "Thinking": {
      "type": "object", "additionalProperties": false,
      "required": ["kind", "entryId", "timestamp", "text"],
      "properties": {
        "kind": { "const": "thinking" }, "entryId": { "type": "string" }, "timestamp": { "$ref": "#/$defs/Timestamp" },
        "text": { "type": "string" }
      }
    },
    "ToolCall": {
      "type": "object", "additionalProperties": false,
      "required": ["kind", "entryId", "timestamp", "toolCallId", "name", "arguments", "argumentSummary"],
      "properties": {
        "kind": { "const": "toolCall" }, "entryId": { "type": "string" }, "timestamp": { "$ref": "#/$defs/Timestamp" },
        "toolCallId": { "type": ["string", "null"] }, "name": { "type": "string" },
        "arguments": { "description": "The arguments exactly as stored." },
        "argumentSummary": { "type": "string" }
      }
    },
    "ToolResult": {
      "type": "object", "unevaluatedProperties": false,
      "allOf": [{ "$ref": "#/$defs/Status" }],
      "required": ["kind", "entryId", "timestamp", "toolCallId", "toolName", "text", "nImages"],
      "properties": {
        "kind": { "const": "toolResult" }, "entryId": { "type": "string" }, "timestamp": { "$ref": "#/$defs/Timestamp" },
        "toolCallId": { "type": ["string", "null"] }, "toolName": { "type": ["string", "null"] },
        "text": { "type": "string" }, "omitted": { "$ref": "#/$defs/Omission" },
        "nImages": { "type": "integer", "minimum": 0 }
      }
    },
    "Bash": {
      "type": "object", "unevaluatedProperties": false,
      "allOf": [{ "$ref": "#/$defs/Status" }],
      "required": ["kind", "entryId", "timestamp", "command", "output"],
      "properties": {
        "kind": { "const": "bash" }, "entryId": { "type": "string" }, "timestamp": { "$ref": "#/$defs/Timestamp" },
        "command": { "type": "string" }, "output": { "type": "string" }, "omitted": { "$ref": "#/$defs/Omission" }
      }
    },
    "System": {
      "type": "object", "additionalProperties": false,
      "required": ["kind", "entryId", "timestamp", "text", "sections", "removedSections", "toolsAdded", "toolsRemoved"],
      "properties": {
        "kind": { "const": "system" }, "entryId": { "type": "string" }, "timestamp": { "$ref": "#/$defs/Timestamp" },
        "text": { "type": "string" }, "sections": { "$ref": "#/$defs/Ids" }, "removedSections": { "$ref": "#/$defs/Ids" },
        "toolsAdded": { "$ref": "#/$defs/Ids" }, "toolsRemoved": { "$ref": "#/$defs/Ids" }
      }
    },
    "Compaction": {
      "type": "object", "additionalProperties": false,
      "required": ["kind", "entryId", "timestamp", "summary", "tokensBefore", "firstKeptEntryId"],
      "properties": {
        "kind": { "const": "compaction" }, "entryId": { "type": "string" }, "timestamp": { "$ref": "#/$defs/Timestamp" },
        "summary": { "type": "string" }, "omitted": { "$ref": "#/$defs/Omission" },
        "tokensBefore": { "type": ["integer", "null"], "minimum": 0 },
        "firstKeptEntryId": { "type": ["string", "null"] }
      }
    },
    "BranchSummary": {
      "type": "object", "additionalProperties": false,
      "required": ["kind", "entryId", "timestamp", "summary", "fromId"],
      "properties": {
        "kind": { "const": "branchSummary" }, "entryId": { "type": "string" }, "timestamp": { "$ref": "#/$defs/Timestamp" },
        "summary": { "type": "string", "description": "Without Pi's fixed opening sentence." },
        "omitted": { "$ref": "#/$defs/Omission" }, "fromId": { "type": ["string", "null"] }
      }
    },
    "ContextEdit": {
      "type": "object", "additionalProperties": false,
      "required": ["kind", "entryId", "timestamp", "targetId", "omits", "replacement"],
      "properties": {
        "kind": { "const": "contextEdit" }, "entryId": { "type": "string" }, "timestamp": { "$ref": "#/$defs/Timestamp" },
        "targetId": { "type": ["string", "null"] }, "omits": { "type": "boolean" },
        "replacement": { "type": ["string", "null"] }, "omitted": { "$ref": "#/$defs/Omission" }
      }
    },
    "Label": {
      "type": "object", "additionalProperties": false,
      "required": ["kind", "entryId", "timestamp", "targetId", "label"],
      "properties": {
        "kind": { "const": "label" }, "entryId": { "type": "string" }, "timestamp": { "$ref": "#/$defs/Timestamp" },
        "targetId": { "type": ["string", "null"] }, "label": { "type": ["string", "null"], "description": "null clears the label." }
      }
    },
    "Note": {
      "type": "object", "additionalProperties": false,
      "required": ["kind", "entryId", "timestamp", "entryType", "role", "customType", "text"],
      "properties": {
        "kind": { "const": "note" }, "entryId": { "type": "string" }, "timestamp": { "$ref": "#/$defs/Timestamp" },
        "entryType": { "type": "string" }, "role": { "type": ["string", "null"] },
        "customType": { "type": ["string", "null"] }, "text": { "type": "string" },
        "omitted": { "$ref": "#/$defs/Omission" }
      }
    },
    "TreeRow": {
      "type": "object", "unevaluatedProperties": false,
      "allOf": [{ "$ref": "#/$defs/Status" }],
      "required": ["entryId", "parentId", "lineNo", "depth", "type", "role", "label", "nChildren", "isBranchPoint", "isOnActivePath", "isLeaf", "isBranchStart", "timestamp", "preview"],
      "properties": {
        "entryId": { "type": "string" }, "parentId": { "type": ["string", "null"] },
        "lineNo": { "type": "integer", "minimum": 1 },
        "depth": { "type": "integer", "minimum": 0, "description": "0 on the active path; one more per branch point away from it." },
        "type": { "type": "string" }, "role": { "type": ["string", "null"] }, "label": { "type": ["string", "null"] },
        "nChildren": { "type": "integer", "minimum": 0 }, "isBranchPoint": { "type": "boolean" },
        "isOnActivePath": { "type": "boolean" }, "isLeaf": { "type": "boolean" },
        "isBranchStart": { "type": "boolean" }, "branchSize": { "type": "integer", "minimum": 1 },
        "timestamp": { "$ref": "#/$defs/Timestamp" }, "preview": { "type": ["string", "null"] }
      }
    },"##,
    shared_defs!(),
    r##"
  }
}
"##
);

/// The schema of `inspect --json`: one page of a view.
pub const INSPECT_SCHEMA: &str = concat!(
    r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://pi-retrospect.invalid/schema/inspect.json",
  "title": "pi-retrospect inspect --json",
  "description": "One page of an inspect view over one session: checkpoints, search hits or one entry with its neighbours.",
  "type": "object",
  "additionalProperties": false,
  "required": ["path", "sessionId", "view", "activeEntryId", "nTotal", "nextCursor", "snapshot", "tokenEstimate", "warnings"],
  "properties": {
    "path": { "type": "string" },
    "sessionId": { "type": ["string", "null"] },
    "view": { "enum": ["overview", "ancestors", "children", "search", "read"] },
    "activeEntryId": { "type": ["string", "null"] },
    "checkpoints": { "type": "array", "items": { "$ref": "#/$defs/Checkpoint" } },
    "hits": { "type": "array", "items": { "$ref": "#/$defs/Hit" } },
    "notSearched": { "type": "array", "items": { "enum": ["toolResults", "toolArgs", "thinking", "system"] } },
    "read": { "$ref": "#/$defs/Read" },
    "nTotal": { "type": "integer", "minimum": 0, "description": "Results across all pages; for read, characters of the entry's text." },
    "nextCursor": { "type": ["string", "null"] },
    "snapshot": {
      "type": "object", "additionalProperties": false, "required": ["bytes", "nLines"],
      "properties": { "bytes": { "type": "integer", "minimum": 0 }, "nLines": { "type": "integer", "minimum": 0 } }
    },
    "tokenEstimate": { "type": "string" },
    "warnings": { "type": "array", "items": { "$ref": "#/$defs/Warning" } }
  },
  "$defs": {
    "Checkpoint": {
      "type": "object", "unevaluatedProperties": false,
      "allOf": [{ "$ref": "#/$defs/Status" }],
      "required": ["entryId", "assistantEntryId", "parentCheckpointId", "childCheckpointIds", "labels", "timestamp", "requestPreview", "preview", "nThinking", "toolNames", "toolResults", "isOnActiveBranch", "estimatedContextTokens"],
      "properties": {
        "entryId": { "type": "string" }, "assistantEntryId": { "type": "string" },
        "parentCheckpointId": { "type": ["string", "null"] }, "childCheckpointIds": { "$ref": "#/$defs/Ids" },
        "labels": { "$ref": "#/$defs/Ids" }, "timestamp": { "$ref": "#/$defs/Timestamp" },
        "requestPreview": { "type": ["string", "null"] }, "preview": { "type": ["string", "null"] },
        "nThinking": { "type": "integer", "minimum": 0 },
        "toolNames": { "$ref": "#/$defs/Ids" },
        "toolResults": {
          "type": "array",
          "items": {
            "type": "object", "additionalProperties": false, "required": ["entryId", "toolName", "isError"],
            "properties": { "entryId": { "type": "string" }, "toolName": { "type": ["string", "null"] }, "isError": { "type": "boolean" } }
          }
        },
        "toolOutputPreviews": { "$ref": "#/$defs/Ids" },
        "isOnActiveBranch": { "type": "boolean" },
        "estimatedContextTokens": { "type": "integer", "minimum": 0 }
      }
    },
    "Hit": {
      "type": "object", "unevaluatedProperties": false,
      "allOf": [{ "$ref": "#/$defs/Status" }],
      "required": ["entryId", "field", "snippet", "checkpointId", "timestamp", "isOnActiveBranch"],
      "properties": {
        "entryId": { "type": "string" },
        "field": { "enum": ["user", "assistant", "errorMessage", "bashCommand", "bashOutput", "compactionSummary", "branchSummary", "custom", "sessionName", "label", "thinking", "toolArgs", "toolResult", "system"], "description": "Which kind of text matched, as in search (the README's table of searchable fields)." },
        "snippet": { "type": "string" }, "checkpointId": { "type": ["string", "null"] },
        "timestamp": { "$ref": "#/$defs/Timestamp" }, "isOnActiveBranch": { "type": "boolean" }
      }
    },
    "Read": {
      "type": "object", "additionalProperties": false,
      "required": ["entry", "before", "after", "branchPoint"],
      "properties": {
        "entry": { "$ref": "#/$defs/ReadItem" },
        "before": { "type": "array", "items": { "$ref": "#/$defs/ReadItem" } },
        "after": { "type": "array", "items": { "$ref": "#/$defs/ReadItem" } },
        "branchPoint": {
          "type": ["object", "null"], "additionalProperties": false, "required": ["entryId", "childIds"],
          "properties": { "entryId": { "type": "string" }, "childIds": { "$ref": "#/$defs/Ids" } }
        }
      }
    },
    "ReadItem": {
      "type": "object", "unevaluatedProperties": false,
      "allOf": [{ "$ref": "#/$defs/Status" }],
      "required": ["entryId", "parentId", "type", "role", "timestamp", "labels", "text", "textOffset", "nTextChars", "isTextTruncated", "isToolOutputHidden", "toolCalls", "toolName", "nImages", "nThinking", "toolsAdded", "toolsRemoved", "isCheckpoint", "checkpointId", "isOnActiveBranch", "nChildren", "estimatedTokens"],
      "properties": {
        "entryId": { "type": "string" }, "parentId": { "type": ["string", "null"] },
        "type": { "type": "string" }, "role": { "type": ["string", "null"] },
        "timestamp": { "$ref": "#/$defs/Timestamp" }, "labels": { "$ref": "#/$defs/Ids" },
        "text": { "type": ["string", "null"] },
        "textOffset": { "type": "integer", "minimum": 0 }, "nTextChars": { "type": "integer", "minimum": 0 },
        "isTextTruncated": { "type": "boolean" }, "isToolOutputHidden": { "type": "boolean" },
        "toolCalls": { "$ref": "#/$defs/Ids" }, "toolName": { "type": ["string", "null"] },
        "nImages": { "type": "integer", "minimum": 0 }, "nThinking": { "type": "integer", "minimum": 0 },
        "toolsAdded": { "$ref": "#/$defs/Ids" }, "toolsRemoved": { "$ref": "#/$defs/Ids" },
        "isCheckpoint": { "type": "boolean" }, "checkpointId": { "type": ["string", "null"] },
        "isOnActiveBranch": { "type": "boolean" }, "nChildren": { "type": "integer", "minimum": 0 },
        "estimatedTokens": { "type": "integer", "minimum": 0 }
      }
    },"##,
    shared_defs!(),
    r##"
  }
}
"##
);

/// The schema of `entries --json` (and of each `--jsonl` row, as `$defs/Row`).
pub const ENTRIES_SCHEMA: &str = concat!(
    r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://pi-retrospect.invalid/schema/entries.json",
  "title": "pi-retrospect entries --json",
  "description": "The stored entries of one session file in file order, one row each, filtered.",
  "type": "object",
  "additionalProperties": false,
  "required": ["path", "sessionId", "version", "entries", "warnings"],
  "properties": {
    "path": { "type": "string" },
    "sessionId": { "type": ["string", "null"] },
    "version": { "type": "integer", "minimum": 1, "maximum": 3 },
    "entries": { "type": "array", "items": { "$ref": "#/$defs/Row" } },
    "warnings": { "type": "array", "items": { "$ref": "#/$defs/Warning" } }
  },
  "$defs": {
    "Row": {
      "type": "object", "unevaluatedProperties": false,
      "allOf": [{ "$ref": "#/$defs/Status" }],
      "required": ["lineNo", "id", "parentId", "timestamp", "type", "messageRole", "text"],
      "properties": {
        "lineNo": { "type": "integer", "minimum": 1, "description": "The physical line: the stable handle." },
        "id": { "type": ["string", "null"] }, "parentId": { "type": ["string", "null"] },
        "timestamp": { "$ref": "#/$defs/Timestamp" },
        "type": { "type": "string" }, "messageRole": { "type": ["string", "null"] },
        "text": { "type": ["string", "null"], "description": "The human-readable body: never thinking, tool-call arguments or images." },
        "toolCalls": { "$ref": "#/$defs/Ids" },
        "nImages": { "type": "integer", "minimum": 1 },
        "nThinking": { "type": "integer", "minimum": 1 },
        "raw": { "description": "The line's JSON as stored (--raw)." }
      }
    },"##,
    shared_defs!(),
    r##"
  }
}
"##
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Checks `value` against the schema's object rules (required, additionalProperties).
    fn conforms(schema: &Value, definition: &Value, value: &Value) {
        if let Some(reference) = definition.get("$ref").and_then(Value::as_str) {
            let name = reference.trim_start_matches("#/$defs/");
            return conforms(schema, &schema["$defs"][name], value);
        }
        match definition["type"].as_str() {
            Some("object") => {
                let object = value.as_object().expect("an object");
                for required in definition["required"].as_array().expect("required") {
                    assert!(
                        object.contains_key(required.as_str().expect("name")),
                        "missing {required}"
                    );
                }
                let properties = definition["properties"].as_object().expect("properties");
                for (key, member) in object {
                    let property = properties
                        .get(key)
                        .unwrap_or_else(|| panic!("unexpected {key}"));
                    conforms(schema, property, member);
                }
            }
            Some("array") => {
                for item in value.as_array().expect("an array") {
                    conforms(schema, &definition["items"], item);
                }
            }
            Some("string") => assert!(value.is_string(), "{value} is not a string"),
            other => panic!("unhandled schema type {other:?}"),
        }
    }

    #[test]
    fn every_schema_is_json() {
        for schema in [LIST_SCHEMA, SHOW_SCHEMA, INSPECT_SCHEMA, ENTRIES_SCHEMA] {
            let value: Value = serde_json::from_str(schema).expect("schema is JSON");
            assert_eq!(
                value["$schema"],
                "https://json-schema.org/draft/2020-12/schema"
            );
        }
    }

    #[test]
    fn the_writer_output_conforms_and_the_schema_is_strict() {
        use pi_retrospect_core::{Listing, Session, Warning, timestamp};
        let child = Session {
            id: "c".into(),
            path: "/s/a/L/run-0/session.jsonl".into(),
            timestamp: "2026-01-01T00:00:01Z".into(),
            cwd: "/w".into(),
            parent_session_path: Some("/p.jsonl".into()),
            subagent_sessions: vec![],
            instant: timestamp::parse("2026-01-01T00:00:01Z").unwrap_or_default(),
            n_pruned_runs: 0,
            summary: None,
        };
        // `Session` has a `Drop`, so the parent is the child changed rather than built with
        // `..child`.
        let mut parent = child.clone();
        parent.path = "/s/a.jsonl".into();
        parent.parent_session_path = None;
        parent.subagent_sessions = vec![child];
        let listing = Listing {
            sessions: vec![parent],
            warnings: vec![Warning::new("/x", "y")],
        };
        let mut out = Vec::new();
        crate::write_json(&mut out, &listing).expect("write");
        let document: Value = serde_json::from_slice(&out).expect("json");
        let schema: Value = serde_json::from_str(LIST_SCHEMA).expect("schema is JSON");
        conforms(&schema, &schema, &document);
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(
            schema["$defs"]["SessionMetadata"]["additionalProperties"],
            false
        );
    }
}
