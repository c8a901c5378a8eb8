//! Generates a large, realistic, deterministic Pi session file (version 3) for benchmarks:
//! user/assistant messages with text, thinking and tool-call blocks, large tool results,
//! branches with `branch_summary`, compactions with `firstKeptEntryId`, labels, a session
//! name, model changes and extension entries.
//!
//! Output depends only on the seed and the target size. Only std and `serde_json` (for string
//! escaping) are used.

use std::collections::HashSet;
use std::io::{self, Write};

/// The shared deterministic generator of `big_store`, with the draws this generator uses.
struct Rng(crate::big_store::Rng);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(crate::big_store::Rng::new(seed))
    }

    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Returns a value in `low..high` (`high > low`).
    fn range(&mut self, low: u64, high: u64) -> u64 {
        self.0.range(low, high - 1)
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.next().is_multiple_of(one_in)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        self.0.pick(items)
    }
}

const WORDS: &[&str] = &[
    "the",
    "function",
    "returns",
    "error",
    "path",
    "session",
    "parser",
    "tree",
    "branch",
    "context",
    "compaction",
    "value",
    "line",
    "file",
    "test",
    "fix",
    "bug",
    "memory",
    "fast",
    "struct",
    "impl",
    "trait",
    "async",
    "buffer",
    "index",
    "cursor",
    "token",
    "model",
    "label",
    "résumé",
    "naïve",
    "日本語",
    "emoji✓",
    "quote\"d",
    "back\\slash",
    "tab\there",
];

const TOOLS: &[&str] = &["read", "bash", "edit", "write", "grep", "find"];

struct Generator<'a> {
    out: &'a mut dyn Write,
    rng: Rng,
    ids: HashSet<String>,
    written: u64,
    seconds: i64,
    /// The current path from the root, by id: parents for the next entry and compaction kept
    /// boundaries come from here.
    path: Vec<String>,
    /// Ids of user messages on the current path, where branches may start.
    user_ids: Vec<String>,
    n_entries: u64,
}

use crate::big_store::json_quote as quote;

/// Returns the UTC date-time of `seconds` after 2026-01-01T00:00:00Z as ISO 8601.
/// Seconds from the Unix epoch to 2026-01-01T00:00:00Z, where generated sessions start.
const EPOCH_2026: i64 = 20_454 * 86_400;

/// Formats `seconds` after 2026-01-01 plus `millis` as Pi writes timestamps.
fn iso(seconds: i64, millis: u64) -> String {
    let nanos = u32::try_from(millis % 1000).unwrap_or(0) * 1_000_000;
    pi_retrospect_core::Timestamp {
        seconds: EPOCH_2026 + seconds,
        nanos,
    }
    .to_string()
}

impl Generator<'_> {
    fn new_id(&mut self) -> String {
        loop {
            let id = format!("{:08x}", self.rng.next() as u32);
            if self.ids.insert(id.clone()) {
                return id;
            }
        }
    }

    fn words(&mut self, n_words: u64) -> String {
        let mut text = String::new();
        for idx in 0..n_words {
            if idx > 0 {
                text.push(if self.rng.chance(12) { '\n' } else { ' ' });
            }
            text.push_str(self.rng.pick(WORDS));
        }
        if self.rng.chance(50) {
            // Line separators inside strings must not split lines.
            text.push_str(" \u{2028} end");
        }
        text
    }

    /// Returns `n_bytes` of code-like output.
    fn output(&mut self, n_bytes: u64) -> String {
        let mut text = String::with_capacity(n_bytes as usize + 64);
        let mut line_no = 1;
        while (text.len() as u64) < n_bytes {
            text.push_str(&format!("{line_no:5}\t"));
            let n_words = self.rng.range(2, 12);
            text.push_str(&self.words(n_words).replace('\n', " "));
            text.push('\n');
            line_no += 1;
        }
        text
    }

    fn timestamp(&mut self) -> String {
        self.seconds += self.rng.range(1, 40) as i64;
        let millis = self.rng.range(0, 1000);
        iso(self.seconds, millis)
    }

    fn millis(&self) -> i64 {
        (self.seconds + 1_767_225_600) * 1000
    }

    fn parent_json(&self) -> String {
        self.path
            .last()
            .map_or_else(|| "null".to_owned(), |id| quote(id))
    }

    fn write_line(&mut self, line: &str) -> io::Result<()> {
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.written += line.len() as u64 + 1;
        Ok(())
    }

    /// Writes an entry of `kind` with `fields` after the envelope, continuing the path.
    fn entry(&mut self, kind: &str, fields: &str) -> io::Result<String> {
        let id = self.new_id();
        let timestamp = self.timestamp();
        let line = format!(
            r#"{{"type":"{kind}","id":"{id}","parentId":{},"timestamp":"{timestamp}",{fields}}}"#,
            self.parent_json()
        );
        self.write_line(&line)?;
        self.path.push(id.clone());
        self.n_entries += 1;
        Ok(id)
    }

    fn message(&mut self, message: &str) -> io::Result<String> {
        self.entry("message", &format!(r#""message":{message}"#))
    }

    fn user(&mut self) -> io::Result<()> {
        let n_words = self.rng.range(10, 150);
        let text = self.words(n_words);
        let message = format!(
            r#"{{"role":"user","content":[{{"type":"text","text":{}}}],"timestamp":{}}}"#,
            quote(&text),
            self.millis()
        );
        let id = self.message(&message)?;
        self.user_ids.push(id);
        Ok(())
    }

    fn usage(&mut self) -> String {
        let input = self.rng.range(1000, 150_000);
        let output = self.rng.range(50, 4000);
        format!(
            r#"{{"input":{input},"output":{output},"cacheRead":{},"cacheWrite":0,"totalTokens":{},"cost":{{"input":0.01,"output":0.02,"cacheRead":0.001,"cacheWrite":0,"total":0.031}}}}"#,
            input / 2,
            input + output
        )
    }

    fn assistant(&mut self, n_tool_calls: u64) -> io::Result<Vec<(String, String)>> {
        let mut blocks = Vec::new();
        let n_thinking_words = self.rng.range(20, 400);
        let thinking = self.words(n_thinking_words);
        let signature_len = self.rng.range(200, 3000) as usize;
        let signature: String = (0..signature_len)
            .map(|_| {
                char::from(
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                        [(self.rng.next() % 64) as usize],
                )
            })
            .collect();
        blocks.push(format!(
            r#"{{"type":"thinking","thinking":{},"thinkingSignature":"{signature}"}}"#,
            quote(&thinking)
        ));
        let n_words = self.rng.range(5, 300);
        let text = self.words(n_words);
        blocks.push(format!(r#"{{"type":"text","text":{}}}"#, quote(&text)));
        let mut calls = Vec::new();
        for _ in 0..n_tool_calls {
            let call_id = format!("call_{:016x}", self.rng.next());
            let tool = self.rng.pick(TOOLS).to_owned();
            let arguments = match tool.as_str() {
                "bash" => format!(
                    r#"{{"command":{}}}"#,
                    quote("cargo test --workspace 2>&1 | tail -50")
                ),
                "edit" => {
                    let n_words = self.rng.range(20, 200);
                    format!(
                        r#"{{"path":"src/lib.rs","oldText":{},"newText":{}}}"#,
                        quote(&self.words(n_words)),
                        quote(&self.words(n_words))
                    )
                }
                _ => format!(r#"{{"path":"src/module_{}.rs"}}"#, self.rng.range(0, 200)),
            };
            blocks.push(format!(
                r#"{{"type":"toolCall","id":"{call_id}","name":"{tool}","arguments":{arguments}}}"#
            ));
            calls.push((call_id, tool));
        }
        let stop_reason = if n_tool_calls > 0 { "toolUse" } else { "stop" };
        let usage = self.usage();
        let message = format!(
            r#"{{"role":"assistant","content":[{}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{usage},"stopReason":"{stop_reason}","thinkingLevel":"medium","timestamp":{}}}"#,
            blocks.join(","),
            self.millis()
        );
        self.message(&message)?;
        Ok(calls)
    }

    fn tool_result(&mut self, call_id: &str, tool: &str) -> io::Result<()> {
        // Mostly modest outputs with a heavy tail of very large reads.
        let n_bytes = if self.rng.chance(8) {
            self.rng.range(40_000, 200_000)
        } else {
            self.rng.range(200, 12_000)
        };
        let output = self.output(n_bytes);
        let is_error = self.rng.chance(15);
        let message = format!(
            r#"{{"role":"toolResult","toolCallId":"{call_id}","toolName":"{tool}","content":[{{"type":"text","text":{}}}],"isError":{is_error},"timestamp":{}}}"#,
            quote(&output),
            self.millis()
        );
        self.message(&message)?;
        Ok(())
    }

    /// Writes one user request and the agent's turns answering it.
    fn exchange(&mut self) -> io::Result<()> {
        self.user()?;
        let n_steps = self.rng.range(1, 7);
        for _ in 0..n_steps {
            let n_calls = self.rng.range(1, 4);
            let calls = self.assistant(n_calls)?;
            for (call_id, tool) in calls {
                self.tool_result(&call_id, &tool)?;
            }
        }
        self.assistant(0)?;
        Ok(())
    }

    fn branch(&mut self) -> io::Result<()> {
        // Go back to the parent of a recent user message and summarise the abandoned path.
        let back = (self.user_ids.len()).saturating_sub(self.rng.range(1, 4) as usize);
        let Some(target_user) = self.user_ids.get(back).cloned() else {
            return Ok(());
        };
        let Some(position) = self.path.iter().position(|id| *id == target_user) else {
            return Ok(());
        };
        let from_id = self.path.last().cloned().unwrap_or_default();
        self.path.truncate(position);
        self.user_ids.truncate(back);
        let n_words = self.rng.range(50, 300);
        let summary = self.words(n_words);
        self.entry(
            "branch_summary",
            &format!(r#""fromId":"{from_id}","summary":{}"#, quote(&summary)),
        )?;
        Ok(())
    }

    fn compaction(&mut self) -> io::Result<()> {
        let keep = self.rng.range(5, 30) as usize;
        let first_kept = self
            .path
            .len()
            .checked_sub(keep)
            .and_then(|idx| self.path.get(idx))
            .cloned();
        let first_kept = match first_kept {
            Some(id) => id,
            None => return Ok(()),
        };
        let n_words = self.rng.range(200, 800);
        let summary = format!("## Goal\n{}\n## Progress\n- [x] done", self.words(n_words));
        let tokens_before = self.rng.range(100_000, 180_000);
        let millis = self.millis();
        self.entry(
            "compaction",
            &format!(
                r#""summary":{},"firstKeptEntryId":"{first_kept}","tokensBefore":{tokens_before},"systemMessage":{{"role":"system","content":"You are a coding assistant.","toolsAdded":[],"timestamp":{millis}}},"details":{{"readFiles":["src/lib.rs"],"modifiedFiles":[]}}"#,
                quote(&summary)
            ),
        )?;
        Ok(())
    }
}

/// Writes a version 3 Pi session of about `target_bytes` to `out`, deterministic for `seed`.
pub fn write_big_session(out: &mut dyn Write, seed: u64, target_bytes: u64) -> io::Result<()> {
    let mut generator = Generator {
        out,
        rng: Rng::new(seed),
        ids: HashSet::new(),
        written: 0,
        seconds: 0,
        path: Vec::new(),
        user_ids: Vec::new(),
        n_entries: 0,
    };
    let session_id = format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        generator.rng.next() as u32,
        generator.rng.next() as u16,
        generator.rng.next() % 0x1000,
        generator.rng.next() % 0x1000,
        generator.rng.next() % 0x1_0000_0000_0000
    );
    let header = format!(
        r#"{{"type":"session","version":3,"id":"{session_id}","timestamp":"{}","cwd":"/home/dev/project"}}"#,
        iso(0, 0)
    );
    generator.write_line(&header)?;
    let millis = generator.millis();
    generator.message(&format!(
        r#"{{"role":"system","content":"","sections":{{"preamble":"You are an expert coding assistant.","tools":"<tools>read, bash, edit, write</tools>"}},"toolsAdded":[{{"name":"read","description":"Read a file","parameters":{{}}}},{{"name":"bash","description":"Run a command","parameters":{{}}}}],"timestamp":{millis}}}"#
    ))?;
    generator.entry(
        "model_change",
        r#""provider":"anthropic","modelId":"claude-sonnet-4-5""#,
    )?;
    let mut next_compaction = target_bytes / 4;
    let mut n_exchanges = 0u64;
    while generator.written < target_bytes {
        generator.exchange()?;
        n_exchanges += 1;
        if n_exchanges == 3 {
            generator.entry("session_info", r#""name":"Refactor the session parser""#)?;
        }
        if generator.rng.chance(6) {
            let target =
                generator.path[generator.path.len() / 2 + generator.path.len() / 3].clone();
            let label = format!("checkpoint-{n_exchanges}");
            generator.entry(
                "label",
                &format!(r#""targetId":"{target}","label":"{label}""#),
            )?;
        }
        if generator.rng.chance(9) {
            generator.entry(
                "custom",
                &format!(r#""customType":"session-tools","data":{{"exchange":{n_exchanges}}}"#),
            )?;
        }
        if generator.rng.chance(25) {
            generator.entry("thinking_level_change", r#""thinkingLevel":"high""#)?;
        }
        if generator.rng.chance(12) {
            generator.branch()?;
        }
        if generator.written >= next_compaction {
            generator.compaction()?;
            next_compaction += target_bytes / 4;
        }
    }
    // A later name wins; Pi shows this one.
    generator.entry(
        "session_info",
        r#""name":"Session parser: tree, context and views""#,
    )?;
    generator.out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_deterministic_and_near_the_target() {
        let mut first = Vec::new();
        write_big_session(&mut first, 7, 200_000).expect("write");
        let mut second = Vec::new();
        write_big_session(&mut second, 7, 200_000).expect("write");
        assert_eq!(first, second);
        assert!(
            first.len() >= 200_000 && first.len() < 2_000_000,
            "{}",
            first.len()
        );
        for line in first
            .split(|&byte| byte == b'\n')
            .filter(|line| !line.is_empty())
        {
            let value: serde_json::Value = serde_json::from_slice(line).expect("valid JSON line");
            assert!(value["type"].is_string());
        }
        let mut other_seed = Vec::new();
        write_big_session(&mut other_seed, 8, 200_000).expect("write");
        assert_ne!(first, other_seed);
    }
}
