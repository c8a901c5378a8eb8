//! The one rule for which text of an entry is searchable: the kinds of text that exist, which
//! are searched by default, the flag that adds each of the others, how a pattern treats case,
//! and the function that yields an entry's texts with their kind.
//!
//! `search`, `inspect search`, `entries --grep`, the picker's full-text search and the MCP
//! tools all ask this module, so the same pattern with the same flags finds the same entries
//! in each. The README's table of searchable fields is this module's [`KIND_RULES`].
//!
//! Only string values reached through known fields are texts: JSON field names, ids,
//! timestamps, image data, signatures, usage and extension state never are. Tool-call
//! arguments are their string values, at any depth, never their keys.

use std::borrow::Cow;
use std::ops::Range;

use pi_retrospect_core::search::FieldKind;
use serde_json::Value;

mod line;

pub use line::{LineEntry, line_texts};

/// Returns one kind's place in the rule: whether it is searched by default, and the flag (the
/// CLI spelling; MCP arguments are its camelCase form) that adds it when it is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindRule {
    /// The kind.
    pub kind: FieldKind,
    /// Where its text comes from, in words (the README's table says the same).
    pub source: &'static str,
    /// The flag that adds it; `None` for a kind searched by default.
    pub flag: Option<&'static str>,
}

/// Every kind of searchable text, defaults first, with the flag that adds each opt-in kind.
///
/// Thinking and tool output are large, tool-call arguments and the system prompt rarely what a
/// person looks for, so those four are opt-in; an assistant response's API error
/// (`errorMessage`: `429 … rate limit`, `overloaded`) is what `show` prints for a failed
/// response, so it is searched by default.
pub const KIND_RULES: [KindRule; 14] = [
    rule(FieldKind::User, "a user message's text", None),
    rule(
        FieldKind::Assistant,
        "an assistant message's text blocks",
        None,
    ),
    rule(
        FieldKind::ErrorMessage,
        "a failed assistant response's `errorMessage` (the provider's error)",
        None,
    ),
    rule(FieldKind::BashCommand, "a `!` command", None),
    rule(FieldKind::BashOutput, "a `!` command's output", None),
    rule(FieldKind::CompactionSummary, "a compaction's summary", None),
    rule(
        FieldKind::BranchSummary,
        "an abandoned branch's summary",
        None,
    ),
    rule(
        FieldKind::Custom,
        "an extension's message (`custom_message`, role `custom`)",
        None,
    ),
    rule(FieldKind::SessionName, "a session name", None),
    rule(FieldKind::Label, "a label on an entry", None),
    rule(
        FieldKind::Thinking,
        "an assistant's thinking blocks",
        Some("--thinking"),
    ),
    rule(
        FieldKind::ToolArgs,
        "every string value of a tool call's arguments (never the keys)",
        Some("--tool-args"),
    ),
    rule(
        FieldKind::ToolResult,
        "a tool result's text",
        Some("--tool-results"),
    ),
    rule(
        FieldKind::System,
        "the system prompt and its sections",
        Some("--system"),
    ),
];

const fn rule(kind: FieldKind, source: &'static str, flag: Option<&'static str>) -> KindRule {
    KindRule { kind, source, flag }
}

/// Returns the rule of `kind`.
pub fn kind_rule(kind: FieldKind) -> KindRule {
    KIND_RULES
        .into_iter()
        .find(|rule| rule.kind == kind)
        .unwrap_or(rule(kind, "", None))
}

/// Returns whether `kind` is searched when a request adds no kind.
pub fn is_default(kind: FieldKind) -> bool {
    kind_rule(kind).flag.is_none()
}

/// Returns a set of [`FieldKind`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldKinds(u16);

impl FieldKinds {
    /// No kind at all.
    pub const NONE: FieldKinds = FieldKinds(0);

    /// Returns the kinds searched by default (see [`KIND_RULES`]).
    pub fn default_kinds() -> FieldKinds {
        FieldKind::ALL
            .into_iter()
            .filter(|&kind| is_default(kind))
            .collect()
    }

    /// Returns every kind, the opt-in ones included.
    pub fn all() -> FieldKinds {
        FieldKind::ALL.into_iter().collect()
    }

    /// Returns the kinds named in `names` (serialised spellings such as `toolResult`), or the
    /// first name that is not a kind.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<FieldKinds, String> {
        names
            .into_iter()
            .map(|name| FieldKind::from_name(name).ok_or_else(|| name.to_owned()))
            .collect()
    }

    fn bit(kind: FieldKind) -> u16 {
        1 << (kind as u16)
    }

    /// Returns the set with `kind` added.
    pub fn with(self, kind: FieldKind) -> FieldKinds {
        FieldKinds(self.0 | FieldKinds::bit(kind))
    }

    /// Returns whether `kind` is in the set.
    pub fn contains(self, kind: FieldKind) -> bool {
        self.0 & FieldKinds::bit(kind) != 0
    }

    /// Returns the kinds in the set, in [`FieldKind::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = FieldKind> {
        FieldKind::ALL
            .into_iter()
            .filter(move |&kind| self.contains(kind))
    }

    /// Returns the kinds a request with these kinds and the narrowing filters `roles` and
    /// `tools` actually searches. Naming a filter asks for the texts it selects, so `tools`
    /// turns on tool-call arguments and tool results when neither is on, and the roles
    /// `toolResult` and `system` turn on their (opt-in) kinds.
    pub fn with_filters(self, roles: &[String], tools: &[String]) -> FieldKinds {
        let mut kinds = self;
        if !tools.is_empty()
            && !kinds.contains(FieldKind::ToolArgs)
            && !kinds.contains(FieldKind::ToolResult)
        {
            kinds = kinds.with(FieldKind::ToolArgs).with(FieldKind::ToolResult);
        }
        for role in roles {
            match role.as_str() {
                "toolResult" => kinds = kinds.with(FieldKind::ToolResult),
                "system" => kinds = kinds.with(FieldKind::System),
                _ => {}
            }
        }
        kinds
    }
}

impl Default for FieldKinds {
    fn default() -> Self {
        FieldKinds::default_kinds()
    }
}

impl FromIterator<FieldKind> for FieldKinds {
    fn from_iter<I: IntoIterator<Item = FieldKind>>(kinds: I) -> Self {
        kinds.into_iter().fold(FieldKinds::NONE, FieldKinds::with)
    }
}

/// The opt-in kinds a request adds to the defaults: one flag each, spelled the same in every
/// command (`--thinking`, `--tool-args`, `--tool-results`, `--system`) and in the MCP tools
/// (`thinking`, `toolArgs`, `toolResults`, `system`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SearchScope {
    /// Tool results' text.
    pub tool_results: bool,
    /// Tool-call arguments' string values (a `bash` call's command, a `read` call's path).
    pub tool_args: bool,
    /// Thinking blocks.
    pub thinking: bool,
    /// System prompts (sections and appended instructions).
    pub system: bool,
}

impl SearchScope {
    /// Returns the default kinds plus the ones the scope adds.
    pub fn kinds(self) -> FieldKinds {
        let mut kinds = FieldKinds::default_kinds();
        for (is_on, kind) in [
            (self.thinking, FieldKind::Thinking),
            (self.tool_args, FieldKind::ToolArgs),
            (self.tool_results, FieldKind::ToolResult),
            (self.system, FieldKind::System),
        ] {
            if is_on {
                kinds = kinds.with(kind);
            }
        }
        kinds
    }
}

/// Returns what a search leaves out of `kinds`, each named by the MCP argument (the camelCase
/// form of the flag) that adds it: `toolResults`, `toolArgs`, `thinking`, `system`.
pub fn not_searched(kinds: FieldKinds) -> Vec<&'static str> {
    [
        (FieldKind::ToolResult, "toolResults"),
        (FieldKind::ToolArgs, "toolArgs"),
        (FieldKind::Thinking, "thinking"),
        (FieldKind::System, "system"),
    ]
    .into_iter()
    .filter(|&(kind, _)| !kinds.contains(kind))
    .map(|(_, name)| name)
    .collect()
}

/// Returns how letter case is compared. The one default everywhere is [`CaseMode::Smart`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum CaseMode {
    /// Case matters (`-s`, `--case-sensitive`).
    Sensitive,
    /// Case is ignored (`-i`, `--ignore-case`).
    Insensitive,
    /// Case is ignored unless the pattern has an upper-case letter (the default).
    #[default]
    Smart,
}

impl CaseMode {
    /// Returns whether case is ignored for the literal pattern `text`: smart case ignores it
    /// when `text` has at least one character and none of them is upper-case.
    pub fn is_insensitive_for_literal(self, text: &str) -> bool {
        match self {
            CaseMode::Sensitive => false,
            CaseMode::Insensitive => true,
            CaseMode::Smart => !text.is_empty() && !text.chars().any(char::is_uppercase),
        }
    }

    /// Returns the mode the two front-end flags ask for: `-s` sensitive, `-i` insensitive,
    /// neither smart case (when both are given, the caller decides which one won).
    pub fn from_flags(is_case_sensitive: bool, is_ignore_case: bool) -> CaseMode {
        match (is_case_sensitive, is_ignore_case) {
            (true, _) => CaseMode::Sensitive,
            (false, true) => CaseMode::Insensitive,
            (false, false) => CaseMode::Smart,
        }
    }
}

/// Returns a literal pattern compiled with the case rule: what `inspect search` and
/// `entries --grep` match with (the search engine compiles the same literal the same way).
#[derive(Debug, Clone)]
pub struct LiteralMatcher {
    regex: regex::Regex,
}

impl LiteralMatcher {
    /// Returns the matcher of the literal `text` compared as `case` says, or `None` when the
    /// pattern is too large to compile.
    pub fn new(text: &str, case: CaseMode) -> Option<LiteralMatcher> {
        let regex = regex::RegexBuilder::new(&regex::escape(text))
            .case_insensitive(case.is_insensitive_for_literal(text))
            .build()
            .ok()?;
        Some(LiteralMatcher { regex })
    }

    /// Returns the byte range of the first match in `haystack`.
    pub fn find(&self, haystack: &str) -> Option<Range<usize>> {
        self.regex.find(haystack).map(|found| found.range())
    }

    /// Returns whether `haystack` holds a match.
    pub fn is_match(&self, haystack: &str) -> bool {
        self.regex.is_match(haystack)
    }
}

/// Returns the envelope facts of an entry that a hit reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryFacts<'v> {
    /// The stored `type`.
    pub entry_type: &'v str,
    /// The stored id.
    pub id: Option<&'v str>,
    /// The stored timestamp.
    pub timestamp: Option<&'v str>,
    /// The message role in version 3 spelling (`hookMessage` of older files is `custom`).
    pub role: Option<&'v str>,
    /// The assistant message's model.
    pub model: Option<&'v str>,
    /// The assistant message's provider.
    pub provider: Option<&'v str>,
}

/// Returns one searchable text of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<'v> {
    /// Which kind of text it is.
    pub kind: FieldKind,
    /// The decoded text: borrowed from a decoded value, or from a line when it has no
    /// escapes ([`line_texts`]).
    pub text: Cow<'v, str>,
    /// The tool, for tool-call arguments and tool results.
    pub tool_name: Option<&'v str>,
}

/// Returns whether an entry of `entry_type` (with message `role`, version 3 spelling) can
/// hold a text of a kind in `kinds`, so that a reader need not decode one that cannot.
pub fn may_hold_text(entry_type: &str, role: Option<&str>, kinds: FieldKinds) -> bool {
    match entry_type {
        "compaction" | "branch_summary" | "custom_message" | "label" | "session_info" => true,
        "message" => match role {
            Some("toolResult") => kinds.contains(FieldKind::ToolResult),
            Some("system") => kinds.contains(FieldKind::System),
            _ => true,
        },
        _ => false,
    }
}

fn string<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// Collects the texts of kinds in `kinds` from one decoded line into `texts`, in the order
/// they are stored, and returns the entry's facts, or `None` when the line is not an entry
/// (not an object, or no string `type`). `version` is asked for only when a `hookMessage`
/// role needs it.
pub fn entry_texts<'v>(
    value: &'v Value,
    kinds: FieldKinds,
    version: &mut dyn FnMut() -> u64,
    texts: &mut Vec<Text<'v>>,
) -> Option<EntryFacts<'v>> {
    let entry_type = string(value, "type")?;
    let mut facts = EntryFacts {
        entry_type,
        id: string(value, "id"),
        timestamp: string(value, "timestamp"),
        role: None,
        model: None,
        provider: None,
    };
    let mut push = |kind: FieldKind, text: Option<&'v str>, tool_name: Option<&'v str>| {
        if let Some(text) = text
            && kinds.contains(kind)
        {
            texts.push(Text {
                kind,
                text: Cow::Borrowed(text),
                tool_name,
            });
        }
    };
    match entry_type {
        "message" => {
            let message = value.get("message").unwrap_or(&Value::Null);
            let role = match string(message, "role") {
                Some("hookMessage") if version() < 3 => Some("custom"),
                role => role,
            };
            facts.role = role;
            message_texts(message, role, kinds, &mut push);
            if role == Some("assistant") {
                facts.model = string(message, "model");
                facts.provider = string(message, "provider");
            }
        }
        "compaction" => {
            push(FieldKind::CompactionSummary, string(value, "summary"), None);
            if kinds.contains(FieldKind::System)
                && let Some(system) = value.get("systemMessage")
            {
                system_texts(system, &mut push);
            }
        }
        "branch_summary" => push(FieldKind::BranchSummary, string(value, "summary"), None),
        "custom_message" => {
            if let Some(content) = value.get("content") {
                content_texts(content, FieldKind::Custom, None, &mut push);
            }
        }
        "label" => push(FieldKind::Label, string(value, "label"), None),
        "session_info" => push(FieldKind::SessionName, string(value, "name"), None),
        _ => {}
    }
    Some(facts)
}

/// Returns the role a text of `kind` has in the context Pi builds from the session, which
/// every role filter asks (`--role`, MCP `roles`): a message's own role (`message_role`, in
/// version 3 spelling), and for the entries Pi turns into messages the role of that message
/// (a `custom_message` is a `custom` message, a `branch_summary` a `branchSummary`, a
/// `compaction` a `compactionSummary` after its system checkpoint, whose text is `system`).
pub fn context_role<'v>(
    entry_type: &str,
    message_role: Option<&'v str>,
    kind: FieldKind,
) -> Option<&'v str> {
    match (entry_type, kind) {
        ("custom_message", _) => Some("custom"),
        ("branch_summary", _) => Some("branchSummary"),
        ("compaction", FieldKind::System) => Some("system"),
        ("compaction", _) => Some("compactionSummary"),
        _ => message_role,
    }
}

type Push<'p, 'v> = dyn FnMut(FieldKind, Option<&'v str>, Option<&'v str>) + 'p;

fn message_texts<'v>(
    message: &'v Value,
    role: Option<&'v str>,
    kinds: FieldKinds,
    push: &mut Push<'_, 'v>,
) {
    let content = message.get("content");
    match role {
        Some("user") => {
            if let Some(content) = content {
                content_texts(content, FieldKind::User, None, push);
            }
        }
        Some("assistant") => {
            match content {
                Some(Value::Array(blocks)) => {
                    for block in blocks {
                        match string(block, "type") {
                            Some("text") => {
                                push(FieldKind::Assistant, string(block, "text"), None);
                            }
                            Some("thinking") => {
                                push(FieldKind::Thinking, string(block, "thinking"), None);
                            }
                            Some("toolCall") if kinds.contains(FieldKind::ToolArgs) => {
                                if let Some(arguments) = block.get("arguments") {
                                    argument_texts(arguments, string(block, "name"), push);
                                }
                            }
                            _ => {}
                        }
                    }
                }
                Some(Value::String(text)) => push(FieldKind::Assistant, Some(text), None),
                _ => {}
            }
            // Stored after the content, as Pi writes it.
            push(
                FieldKind::ErrorMessage,
                string(message, "errorMessage"),
                None,
            );
        }
        Some("toolResult") => {
            if let Some(content) = content
                && kinds.contains(FieldKind::ToolResult)
            {
                content_texts(
                    content,
                    FieldKind::ToolResult,
                    string(message, "toolName"),
                    push,
                );
            }
        }
        Some("bashExecution") => {
            push(FieldKind::BashCommand, string(message, "command"), None);
            push(FieldKind::BashOutput, string(message, "output"), None);
        }
        Some("branchSummary") => push(FieldKind::BranchSummary, string(message, "summary"), None),
        Some("compactionSummary") => {
            push(
                FieldKind::CompactionSummary,
                string(message, "summary"),
                None,
            );
        }
        Some("system") => {
            if kinds.contains(FieldKind::System) {
                system_texts(message, push);
            }
        }
        // `custom`, and any role Pi does not define (extensions may add roles): the content
        // is an extension's message.
        _ => {
            if let Some(content) = content {
                content_texts(content, FieldKind::Custom, None, push);
            }
        }
    }
}

/// Pushes a content value: a string, or the `text` of each text block (images skipped).
fn content_texts<'v>(
    content: &'v Value,
    kind: FieldKind,
    tool_name: Option<&'v str>,
    push: &mut Push<'_, 'v>,
) {
    match content {
        Value::String(text) => push(kind, Some(text), tool_name),
        Value::Array(blocks) => {
            for block in blocks {
                if string(block, "type") == Some("text") {
                    push(kind, string(block, "text"), tool_name);
                }
            }
        }
        _ => {}
    }
}

/// Pushes a system message's text and the body of each prompt section (never their names).
fn system_texts<'v>(system: &'v Value, push: &mut Push<'_, 'v>) {
    if let Some(content) = system.get("content") {
        content_texts(content, FieldKind::System, None, push);
    }
    if let Some(Value::Object(sections)) = system.get("sections") {
        for body in sections.values() {
            push(FieldKind::System, body.as_str(), None);
        }
    }
}

/// Pushes every string inside a tool call's arguments, at any depth, object members in key
/// order; keys are never texts. serde_json's recursion limit bounds the depth.
fn argument_texts<'v>(arguments: &'v Value, tool_name: Option<&'v str>, push: &mut Push<'_, 'v>) {
    match arguments {
        Value::String(text) => push(FieldKind::ToolArgs, Some(text), tool_name),
        Value::Array(items) => {
            for item in items {
                argument_texts(item, tool_name, push);
            }
        }
        Value::Object(members) => {
            for member in members.values() {
                argument_texts(member, tool_name, push);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks the texts of `line` (all kinds on) as `kind:text[@tool]` strings, and its role.
    fn check(line: &str, version: u64, expected_role: Option<&str>, expected: &[&str]) {
        let value: Value = serde_json::from_str(line).expect("test line is JSON");
        let mut texts = Vec::new();
        let facts =
            entry_texts(&value, FieldKinds::all(), &mut || version, &mut texts).expect("an entry");
        let actual: Vec<String> = texts
            .iter()
            .map(|text| match text.tool_name {
                Some(tool) => format!("{}:{}@{tool}", text.kind.as_str(), text.text),
                None => format!("{}:{}", text.kind.as_str(), text.text),
            })
            .collect();
        assert_eq!(actual, expected, "{line}");
        assert_eq!(facts.role, expected_role, "{line}");
        let may_hold = may_hold_text(facts.entry_type, facts.role, FieldKinds::all());
        assert!(may_hold || expected.is_empty(), "{line}");
    }

    #[test]
    fn every_kind_comes_from_its_field() {
        for (line, version, role, expected) in [
            (
                r#"{"type":"message","message":{"role":"user","content":"hi"}}"#,
                3,
                Some("user"),
                &["user:hi"][..],
            ),
            (
                r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"text","text":"b"}]}}"#,
                3,
                Some("user"),
                &["user:a", "user:b"],
            ),
            (
                r#"{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","thinkingSignature":"sig"},{"type":"text","text":"ok","textSignature":"ts"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.rs","opts":{"n":3,"tags":["x","y"]}},"thoughtSignature":"t"}],"model":"m1","provider":"p"}}"#,
                3,
                Some("assistant"),
                // Object members come in key order (`opts` before `path`).
                &[
                    "thinking:hmm",
                    "assistant:ok",
                    "toolArgs:x@read",
                    "toolArgs:y@read",
                    "toolArgs:a.rs@read",
                ],
            ),
            (
                r#"{"type":"message","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"429 rate limit"}}"#,
                3,
                Some("assistant"),
                &["errorMessage:429 rate limit"],
            ),
            (
                r#"{"type":"message","message":{"role":"toolResult","toolName":"bash","content":[{"type":"text","text":"out"}],"errorMessage":"not searched"}}"#,
                3,
                Some("toolResult"),
                &["toolResult:out@bash"],
            ),
            (
                r#"{"type":"message","message":{"role":"bashExecution","command":"ls","output":"a b"}}"#,
                3,
                Some("bashExecution"),
                &["bashCommand:ls", "bashOutput:a b"],
            ),
            (
                r#"{"type":"message","message":{"role":"system","content":"sys","sections":{"preamble":"P","gone":null}}}"#,
                3,
                Some("system"),
                &["system:sys", "system:P"],
            ),
            (
                r#"{"type":"message","message":{"role":"custom","customType":"x","content":"ext"}}"#,
                3,
                Some("custom"),
                &["custom:ext"],
            ),
            (
                r#"{"type":"message","message":{"role":"hookMessage","content":"old"}}"#,
                2,
                Some("custom"),
                &["custom:old"],
            ),
            (
                r#"{"type":"message","message":{"role":"hookMessage","content":"new"}}"#,
                3,
                Some("hookMessage"),
                &["custom:new"],
            ),
            (
                r#"{"type":"message","message":{"role":"branchSummary","summary":"bs"}}"#,
                3,
                Some("branchSummary"),
                &["branchSummary:bs"],
            ),
            (
                r#"{"type":"message","message":{"role":"compactionSummary","summary":"cs"}}"#,
                3,
                Some("compactionSummary"),
                &["compactionSummary:cs"],
            ),
            (
                r#"{"type":"compaction","summary":"sum","systemMessage":{"role":"system","content":"ck"}}"#,
                3,
                None,
                &["compactionSummary:sum", "system:ck"],
            ),
            (
                r#"{"type":"branch_summary","summary":"left"}"#,
                3,
                None,
                &["branchSummary:left"],
            ),
            (
                r#"{"type":"custom_message","customType":"t","content":[{"type":"text","text":"cm"}],"details":{"k":"v"}}"#,
                3,
                None,
                &["custom:cm"],
            ),
            (
                r#"{"type":"label","targetId":"x","label":"lab"}"#,
                3,
                None,
                &["label:lab"],
            ),
            (
                r#"{"type":"session_info","name":"nm"}"#,
                3,
                None,
                &["sessionName:nm"],
            ),
            (
                r#"{"type":"custom","customType":"t","data":{"k":"state"}}"#,
                3,
                None,
                &[],
            ),
            (
                r#"{"type":"model_change","provider":"p","modelId":"m"}"#,
                3,
                None,
                &[],
            ),
            (r#"{"type":"session","id":"s","cwd":"/p"}"#, 3, None, &[]),
            (r#"{"type":"label","label":7}"#, 3, None, &[]),
        ] {
            check(line, version, role, expected);
        }
    }

    #[test]
    fn lines_that_are_not_entries_give_nothing() {
        for line in ["[1]", r#"{"type":5}"#, r#"{"id":"x"}"#] {
            let value: Value = serde_json::from_str(line).expect("json");
            let mut texts = Vec::new();
            assert!(entry_texts(&value, FieldKinds::all(), &mut || 3, &mut texts).is_none());
        }
    }

    #[test]
    fn defaults_and_flags_come_from_one_table() {
        let defaults: Vec<&str> = FieldKinds::default_kinds()
            .iter()
            .map(FieldKind::as_str)
            .collect();
        assert_eq!(
            defaults,
            [
                "user",
                "assistant",
                "errorMessage",
                "bashCommand",
                "bashOutput",
                "compactionSummary",
                "branchSummary",
                "custom",
                "sessionName",
                "label",
            ]
        );
        assert_eq!(
            KIND_RULES.map(|rule| rule.kind).to_vec(),
            FieldKind::ALL.to_vec()
        );
        let flags: Vec<&str> = KIND_RULES.iter().filter_map(|rule| rule.flag).collect();
        assert_eq!(
            flags,
            ["--thinking", "--tool-args", "--tool-results", "--system"]
        );
        let everything = SearchScope {
            tool_results: true,
            tool_args: true,
            thinking: true,
            system: true,
        };
        assert_eq!(everything.kinds(), FieldKinds::all());
        assert_eq!(not_searched(everything.kinds()), Vec::<&str>::new());
        assert_eq!(
            not_searched(SearchScope::default().kinds()),
            ["toolResults", "toolArgs", "thinking", "system"]
        );
    }

    /// The README's table of searchable text names every kind once, with its flag or as a
    /// default, so the documentation cannot drift from the rule.
    #[test]
    fn the_readme_table_is_the_rule() {
        let readme = include_str!("../../../README.md");
        let table = readme
            .split("### Searchable text")
            .nth(1)
            .and_then(|section| {
                section
                    .split("\n\n")
                    .find(|part| part.starts_with("| kind"))
            })
            .expect("the README has the table");
        for rule in KIND_RULES {
            let name = format!("`{}`", rule.kind.as_str());
            let rows: Vec<&str> = table
                .lines()
                .filter(|row| {
                    row.split('|')
                        .nth(1)
                        .is_some_and(|cell| cell.contains(&name))
                })
                .collect();
            assert_eq!(rows.len(), 1, "{name}: {rows:?}");
            let searched = rows[0].rsplit('|').nth(1).unwrap_or_default();
            match rule.flag {
                Some(flag) => assert!(searched.contains(flag), "{name}: {searched}"),
                None => assert!(searched.contains("by default"), "{name}: {searched}"),
            }
        }
    }

    #[test]
    fn filters_turn_on_the_kinds_they_select() {
        let tools = ["bash".to_owned()];
        let kinds = FieldKinds::default_kinds().with_filters(&[], &tools);
        assert!(kinds.contains(FieldKind::ToolArgs) && kinds.contains(FieldKind::ToolResult));
        let only_results = FieldKinds::NONE
            .with(FieldKind::ToolResult)
            .with_filters(&[], &tools);
        assert_eq!(only_results, FieldKinds::NONE.with(FieldKind::ToolResult));
        let roles = ["system".to_owned(), "toolResult".to_owned()];
        assert_eq!(
            FieldKinds::NONE.with_filters(&roles, &[]),
            FieldKinds::NONE
                .with(FieldKind::ToolResult)
                .with(FieldKind::System)
        );
        assert_eq!(
            FieldKinds::from_names(["thinking", "tool_args"]),
            Err("tool_args".to_owned())
        );
    }

    /// Checks smart case on literal patterns, and that the literal matcher follows it.
    #[test]
    fn smart_case_ignores_case_without_an_upper_case_letter() {
        for (pattern, case, haystack, expected) in [
            (
                "econnrefused",
                CaseMode::Smart,
                "connect ECONNREFUSED",
                true,
            ),
            (
                "ECONNREFUSED",
                CaseMode::Smart,
                "connect econnrefused",
                false,
            ),
            ("Econnrefused", CaseMode::Insensitive, "ECONNREFUSED", true),
            ("econnrefused", CaseMode::Sensitive, "ECONNREFUSED", false),
            ("a.b", CaseMode::Smart, "A.B", true),
            ("a.b", CaseMode::Smart, "axb", false),
            ("123", CaseMode::Smart, "x123", true),
            ("straße", CaseMode::Smart, "STRAßE", true),
        ] {
            let matcher = LiteralMatcher::new(pattern, case).expect("compiles");
            assert_eq!(
                matcher.is_match(haystack),
                expected,
                "{pattern} {case:?} {haystack}"
            );
        }
        assert_eq!(CaseMode::from_flags(false, false), CaseMode::Smart);
        assert_eq!(CaseMode::from_flags(true, false), CaseMode::Sensitive);
        assert_eq!(CaseMode::from_flags(false, true), CaseMode::Insensitive);
    }
}
