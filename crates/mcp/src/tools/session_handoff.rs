//! `session_handoff`: a bounded, redacted excerpt of where one session stood, to continue the
//! work in a new session. The document is `pi-retrospect handoff --json`'s.

use std::sync::Arc;

use pi_retrospect_app::HandoffOptions;
use pi_retrospect_app::HandoffRequest;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::args::{bounded, parse, session_target};
use crate::error::ToolError;
use crate::output::{ToolOutput, bounded_text, json_from_writer, text_from_writer};
use crate::server::CallContext;
use crate::tools::{ToolSpec, input_schema, schema_from_text};

pub(crate) const TOOL: ToolSpec = ToolSpec {
    name: "session_handoff",
    title: "Hand a session over",
    description: DESCRIPTION,
    input_schema: input_schema::<SessionHandoffParams>,
    output_schema,
    run,
    needs_session: true,
};

/// The largest `maxBytes` a caller may ask for.
const MAX_EXCERPT_BYTES: usize = 64 * 1024;

const DESCRIPTION: &str = "\
Returns a bounded summary of where one session stood, to continue its work in a new session: \
the source (path, id, cwd, name, models, first and last activity), the goal when given, the \
command that resumes it (`pi --session PATH`), the original task (first user message, 2 KiB), \
the latest compaction summary (4 KiB), the files edit and write calls touched (last 50), the \
failures of the last three turns with their error text (failed, aborted or cut-off replies, \
tool errors with their call, failed `!` commands with the exit code; last 8, 1 KiB each), and \
the most recent user and assistant text messages of its active branch, newest last (default \
at most 12 messages, 2 KiB each, 16 KiB in all; maxBytes at most 64 KiB). Every one-line field (name, cwd, each model, ...) is cut \
at 512 bytes ending in `… [cut: N bytes]`; at most 16 models and 20 warnings are kept \
(nModels, nWarnings count all); the whole document stays under 192 KiB, older messages \
dropped first. Never included: images, thinking, system and custom messages, branch \
summaries, other tool calls and results, messages a context edit removed. Common credentials are always replaced \
by `[redacted: KIND]` and counted (by shape: best effort). sessionPath is a `path` from \
list_sessions (a session file of the stores). Never writes.";

/// The arguments of `session_handoff`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SessionHandoffParams {
    /// The session file: an absolute `path` from list_sessions, inside the session stores.
    session_path: Option<String>,
    /// The goal of the work to continue.
    goal: Option<String>,
    /// At most this many messages (default 12).
    #[schemars(range(min = 1, max = 100))]
    max_messages: Option<usize>,
    /// Each message cut at this many bytes (default 2048).
    #[schemars(range(min = 1, max = 65536))]
    max_message_bytes: Option<usize>,
    /// All messages together cut at this many bytes (default 16384, at most 65536).
    #[schemars(range(min = 1, max = 65536))]
    max_bytes: Option<usize>,
}

fn output_schema() -> Arc<JsonObject> {
    schema_from_text(pi_retrospect_render::handoff::HANDOFF_SCHEMA)
}

fn run(context: &CallContext, arguments: JsonObject) -> Result<ToolOutput, ToolError> {
    let params: SessionHandoffParams = parse(arguments)?;
    let defaults = HandoffOptions::default();
    let options = HandoffOptions {
        goal: params.goal,
        max_messages: bounded(
            "maxMessages",
            params.max_messages.map(|value| value as u64),
            defaults.max_messages as u64,
            1,
            100,
        )?,
        max_message_bytes: bounded(
            "maxMessageBytes",
            params.max_message_bytes.map(|value| value as u64),
            defaults.max_message_bytes as u64,
            1,
            MAX_EXCERPT_BYTES as u64,
        )?,
        max_excerpt_bytes: bounded(
            "maxBytes",
            params.max_bytes.map(|value| value as u64),
            defaults.max_excerpt_bytes as u64,
            1,
            MAX_EXCERPT_BYTES as u64,
        )?,
        ..defaults
    };
    let request = HandoffRequest {
        target: session_target(context, params.session_path)?,
        options,
    };
    let handoff = pi_retrospect_app::handoff(&request, &context.env)?;
    let structured =
        json_from_writer(|out| pi_retrospect_render::handoff::write_json(out, &handoff))?;
    let markdown = pi_retrospect_render::handoff::MarkdownOptions {
        zone: context.env.time_zone.clone(),
    };
    let text = text_from_writer(|out| {
        pi_retrospect_render::handoff::write_markdown(out, &handoff, &markdown)
    })?;
    Ok(ToolOutput {
        structured,
        text: bounded_text(text),
    })
}
