//! Entry lines: the envelope every entry shares, messages of each role, content blocks and
//! usage.

use std::fmt;

use crate::{json_string, json_string_or_null, member, object};

/// One entry line after the header: `{"type":…,"id":…,"parentId":…,"timestamp":…,…}`.
///
/// The envelope members are written first, in that order, whatever order they were set in,
/// and each is left out until it is set (Pi always writes them; damaged and old files do
/// not). The kind's own members follow in the order they were added.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    kind: Option<String>,
    id: Option<String>,
    parent: Option<Option<String>>,
    timestamp: Option<String>,
    members: Vec<String>,
}

impl Entry {
    /// Returns an entry of type `kind` with no other member yet.
    pub fn of_type(kind: &str) -> Entry {
        Entry {
            kind: Some(kind.to_owned()),
            ..Entry::untyped()
        }
    }

    /// Returns an entry with no `type` member: one whose type, if any, comes among the
    /// members added later (as some other writers order them).
    pub fn untyped() -> Entry {
        Entry {
            kind: None,
            id: None,
            parent: None,
            timestamp: None,
            members: Vec::new(),
        }
    }

    /// Returns a `message` entry holding `message`.
    pub fn message(message: Message) -> Entry {
        Entry::of_type("message").member("message", &message.to_string())
    }

    /// Returns a `compaction` entry: its summary, the first entry it kept and the context
    /// size before it.
    pub fn compaction(summary: &str, first_kept_entry_id: &str, tokens_before: u64) -> Entry {
        Entry::of_type("compaction")
            .text_member("summary", summary)
            .text_member("firstKeptEntryId", first_kept_entry_id)
            .member("tokensBefore", &tokens_before.to_string())
    }

    /// Returns a `branch_summary` entry: the summary of the branch left at `from_id`.
    pub fn branch_summary(from_id: &str, summary: &str) -> Entry {
        Entry::of_type("branch_summary")
            .text_member("fromId", from_id)
            .text_member("summary", summary)
    }

    /// Returns a `label` entry putting `label` on `target_id` (`None`: removing it).
    pub fn label(target_id: &str, label: Option<&str>) -> Entry {
        let entry = Entry::of_type("label").text_member("targetId", target_id);
        match label {
            Some(label) => entry.text_member("label", label),
            None => entry,
        }
    }

    /// Returns a `session_info` entry naming the session `name`.
    pub fn session_info(name: &str) -> Entry {
        Entry::of_type("session_info").text_member("name", name)
    }

    /// Returns a `model_change` entry to `model_id` of `provider`.
    pub fn model_change(provider: &str, model_id: &str) -> Entry {
        Entry::of_type("model_change")
            .text_member("provider", provider)
            .text_member("modelId", model_id)
    }

    /// Returns a `thinking_level_change` entry to `level`.
    pub fn thinking_level_change(level: &str) -> Entry {
        Entry::of_type("thinking_level_change").text_member("thinkingLevel", level)
    }

    /// Returns a `custom_message` entry of an extension: its type, text content and whether
    /// it is shown.
    pub fn custom_message(custom_type: &str, content: &str, display: bool) -> Entry {
        Entry::of_type("custom_message")
            .text_member("customType", custom_type)
            .text_member("content", content)
            .member("display", &display.to_string())
    }

    /// Returns the entry with id `id`.
    pub fn id(mut self, id: &str) -> Entry {
        self.id = Some(id.to_owned());
        self
    }

    /// Returns the entry with parent `parent` (`None`: `"parentId":null`, a root).
    pub fn parent(mut self, parent: Option<&str>) -> Entry {
        self.parent = Some(parent.map(str::to_owned));
        self
    }

    /// Returns the entry written at `timestamp`.
    pub fn at(mut self, timestamp: &str) -> Entry {
        self.timestamp = Some(timestamp.to_owned());
        self
    }

    /// Returns the entry with the member `key` holding the JSON text `raw`, after the members
    /// added before it.
    pub fn member(mut self, key: &str, raw: &str) -> Entry {
        self.members.push(member(key, raw));
        self
    }

    /// Returns the entry with the string member `key` holding `text`.
    pub fn text_member(self, key: &str, text: &str) -> Entry {
        self.member(key, &json_string(text))
    }

    /// Returns the entry with `raw` (members as JSON text, `"a":1,"b":2`) after the members
    /// added before it.
    pub fn raw_members(mut self, raw: &str) -> Entry {
        self.members.push(raw.to_owned());
        self
    }
}

impl fmt::Display for Entry {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut members = Vec::with_capacity(4 + self.members.len());
        if let Some(kind) = &self.kind {
            members.push(member("type", &json_string(kind)));
        }
        if let Some(id) = &self.id {
            members.push(member("id", &json_string(id)));
        }
        if let Some(parent) = &self.parent {
            members.push(member("parentId", &json_string_or_null(parent.as_deref())));
        }
        if let Some(timestamp) = &self.timestamp {
            members.push(member("timestamp", &json_string(timestamp)));
        }
        members.extend(self.members.iter().cloned());
        formatter.write_str(&object(&members))
    }
}

impl From<Entry> for String {
    fn from(entry: Entry) -> String {
        entry.to_string()
    }
}

/// The `message` of a message entry: its role, then members in the order they are added
/// (Pi's order is `content`, `api`, `provider`, `model`, `usage`, `stopReason`,
/// `errorMessage`, `timestamp` for an assistant).
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    members: Vec<String>,
}

impl Message {
    /// Returns a message of `role` with no other member yet.
    pub fn with_role(role: &str) -> Message {
        Message {
            members: vec![member("role", &json_string(role))],
        }
    }

    /// Returns a user message whose content is the string `text`.
    pub fn user(text: &str) -> Message {
        Message::with_role("user").text_member("content", text)
    }

    /// Returns a user message whose content is `blocks`.
    pub fn user_blocks(blocks: &[Block]) -> Message {
        Message::with_role("user").content(blocks)
    }

    /// Returns an assistant message whose content is `blocks`.
    pub fn assistant(blocks: &[Block]) -> Message {
        Message::with_role("assistant").content(blocks)
    }

    /// Returns the result of tool call `call_id` of tool `tool_name`, one text block `text`.
    pub fn tool_result(call_id: &str, tool_name: &str, text: &str) -> Message {
        Message::with_role("toolResult")
            .text_member("toolCallId", call_id)
            .text_member("toolName", tool_name)
            .content(&[Block::text(text)])
    }

    /// Returns a `!` command the user ran: its command line, output and exit code (`None`:
    /// `"exitCode":null` and cancelled).
    pub fn bash_execution(command: &str, output: &str, exit_code: Option<i64>) -> Message {
        let exit = exit_code.map_or_else(|| "null".to_owned(), |code| code.to_string());
        Message::with_role("bashExecution")
            .text_member("command", command)
            .text_member("output", output)
            .member("exitCode", &exit)
            .member("cancelled", &exit_code.is_none().to_string())
    }

    /// Returns the message with `content` holding `blocks`.
    pub fn content(self, blocks: &[Block]) -> Message {
        let blocks: Vec<String> = blocks.iter().map(Block::to_string).collect();
        self.member("content", &format!("[{}]", blocks.join(",")))
    }

    /// Returns the message with `api` set.
    pub fn api(self, api: &str) -> Message {
        self.text_member("api", api)
    }

    /// Returns the message with `provider` set.
    pub fn provider(self, provider: &str) -> Message {
        self.text_member("provider", provider)
    }

    /// Returns the message with `model` set.
    pub fn model(self, model: &str) -> Message {
        self.text_member("model", model)
    }

    /// Returns the message with `usage` set.
    pub fn usage(self, usage: Usage) -> Message {
        self.member("usage", &usage.to_string())
    }

    /// Returns the message with `stopReason` set.
    pub fn stop_reason(self, stop_reason: &str) -> Message {
        self.text_member("stopReason", stop_reason)
    }

    /// Returns the message with `errorMessage` set.
    pub fn error_message(self, text: &str) -> Message {
        self.text_member("errorMessage", text)
    }

    /// Returns the message with `details` holding the JSON text `raw`.
    pub fn details(self, raw: &str) -> Message {
        self.member("details", raw)
    }

    /// Returns the message with `isError` set.
    pub fn is_error(self, is_error: bool) -> Message {
        self.member("isError", &is_error.to_string())
    }

    /// Returns the message with `truncated` set.
    pub fn truncated(self, truncated: bool) -> Message {
        self.member("truncated", &truncated.to_string())
    }

    /// Returns the message with its own `timestamp` (milliseconds since the epoch, as Pi
    /// writes it inside a message).
    pub fn timestamp(self, milliseconds: u64) -> Message {
        self.member("timestamp", &milliseconds.to_string())
    }

    /// Returns the message with the member `key` holding the JSON text `raw`.
    pub fn member(mut self, key: &str, raw: &str) -> Message {
        self.members.push(member(key, raw));
        self
    }

    /// Returns the message with the string member `key` holding `text`.
    pub fn text_member(self, key: &str, text: &str) -> Message {
        self.member(key, &json_string(text))
    }
}

impl fmt::Display for Message {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&object(&self.members))
    }
}

/// One block of a message's content.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    members: Vec<String>,
}

impl Block {
    /// Returns a text block.
    pub fn text(text: &str) -> Block {
        Block::of_type("text").text_member("text", text)
    }

    /// Returns a thinking block.
    pub fn thinking(text: &str) -> Block {
        Block::of_type("thinking").text_member("thinking", text)
    }

    /// Returns a call `id` of tool `name` with `arguments` (JSON text, an object).
    pub fn tool_call(id: &str, name: &str, arguments: &str) -> Block {
        Block::of_type("toolCall")
            .text_member("id", id)
            .text_member("name", name)
            .member("arguments", arguments)
    }

    /// Returns an image block of `mime_type` holding base64 `data`.
    pub fn image(mime_type: &str, data: &str) -> Block {
        Block::of_type("image")
            .text_member("data", data)
            .text_member("mimeType", mime_type)
    }

    /// Returns a block of type `kind` with no other member yet.
    pub fn of_type(kind: &str) -> Block {
        Block {
            members: vec![member("type", &json_string(kind))],
        }
    }

    /// Returns the block with the member `key` holding the JSON text `raw`.
    pub fn member(mut self, key: &str, raw: &str) -> Block {
        self.members.push(member(key, raw));
        self
    }

    /// Returns the block with the string member `key` holding `text`.
    pub fn text_member(self, key: &str, text: &str) -> Block {
        self.member(key, &json_string(text))
    }
}

impl fmt::Display for Block {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&object(&self.members))
    }
}

/// An assistant message's `usage`, as Pi writes it: token counts, their total and the cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Tokens read from the prompt cache.
    pub cache_read: u64,
    /// Tokens written to the prompt cache.
    pub cache_write: u64,
    /// The cost, if any is written.
    pub cost: Cost,
}

/// How a usage's cost is written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cost {
    /// No `cost` member.
    Absent,
    /// Pi's object: every part 0 and `total` this many dollars.
    Total(f64),
    /// An object holding only `total`, as some older writers left it.
    TotalOnly(f64),
}

impl Usage {
    /// Returns `input` and `output` tokens, nothing cached, no cost.
    pub fn tokens(input: u64, output: u64) -> Usage {
        Usage {
            input,
            output,
            cache_read: 0,
            cache_write: 0,
            cost: Cost::Absent,
        }
    }

    /// Returns the usage with a cost of `total` dollars in Pi's cost object.
    pub fn cost(mut self, total: f64) -> Usage {
        self.cost = Cost::Total(total);
        self
    }

    /// Returns the usage with a cost object holding only `total`.
    pub fn cost_total_only(mut self, total: f64) -> Usage {
        self.cost = Cost::TotalOnly(total);
        self
    }
}

impl fmt::Display for Usage {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total_tokens = self.input + self.output + self.cache_read + self.cache_write;
        write!(
            formatter,
            r#"{{"input":{},"output":{},"cacheRead":{},"cacheWrite":{},"totalTokens":{total_tokens}"#,
            self.input, self.output, self.cache_read, self.cache_write
        )?;
        match self.cost {
            Cost::Absent => {}
            Cost::Total(total) => write!(
                formatter,
                r#","cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":{total}}}"#
            )?,
            Cost::TotalOnly(total) => write!(formatter, r#","cost":{{"total":{total}}}"#)?,
        }
        formatter.write_str("}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_put_the_envelope_first_in_pis_order() {
        let entry = Entry::message(Message::user("hi \"you\"").timestamp(1))
            .at("2026-01-01T00:00:01.000Z")
            .parent(None)
            .id("u1");
        assert_eq!(
            entry.to_string(),
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi \"you\"","timestamp":1}}"#
        );
        assert_eq!(
            Entry::untyped()
                .id("l1")
                .parent(Some("u1"))
                .raw_members(r#""type":"label","targetId":"u1""#)
                .to_string(),
            r#"{"id":"l1","parentId":"u1","type":"label","targetId":"u1"}"#
        );
        assert_eq!(
            Entry::session_info("n").to_string(),
            r#"{"type":"session_info","name":"n"}"#
        );
    }

    #[test]
    fn messages_keep_the_order_members_are_set_in() {
        let assistant = Message::assistant(&[
            Block::thinking("hm"),
            Block::text("ok"),
            Block::tool_call("c1", "bash", r#"{"command":"ls"}"#),
        ])
        .provider("p")
        .model("m")
        .usage(Usage::tokens(10, 5).cost(0.25))
        .stop_reason("toolUse");
        assert_eq!(
            assistant.to_string(),
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ok"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}],"provider":"p","model":"m","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.25}},"stopReason":"toolUse"}"#
        );
        assert_eq!(
            Message::bash_execution("make", "", None).to_string(),
            r#"{"role":"bashExecution","command":"make","output":"","exitCode":null,"cancelled":true}"#
        );
        assert_eq!(
            Message::tool_result("c1", "read", "gone")
                .is_error(true)
                .to_string(),
            r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"gone"}],"isError":true}"#
        );
        assert_eq!(
            Usage::tokens(7, 0).cost_total_only(1.0).to_string(),
            r#"{"input":7,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":7,"cost":{"total":1}}"#
        );
    }
}
