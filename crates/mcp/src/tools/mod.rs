//! The tools, one module each, and the table that registers them. A tool is a
//! [`ToolSpec`]: its name, description, input and output schemas and the function that runs
//! it. Adding a tool is a new module with its `TOOL` and one line in [`ALL`].

use std::sync::Arc;

use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};

use crate::error::ToolError;
use crate::output::{MAX_PAGE_BYTES, ToolOutput, error_result};
use crate::server::CallContext;

mod inspect_session;
mod list_sessions;
mod search_sessions;
mod session_entries;
mod session_failures;
mod session_handoff;
mod session_stats;

/// Every tool the server offers, in the order `tools/list` gives them.
pub(crate) const ALL: &[ToolSpec] = &[
    list_sessions::TOOL,
    session_entries::TOOL,
    inspect_session::TOOL,
    search_sessions::TOOL,
    session_stats::TOOL,
    session_handoff::TOOL,
    session_failures::TOOL,
];

/// Returns the tool named `name`.
pub(crate) fn find(name: &str) -> Option<&'static ToolSpec> {
    ALL.iter().find(|tool| tool.name == name)
}

/// One tool: how it is described to clients and how it runs.
#[derive(Debug)]
pub(crate) struct ToolSpec {
    /// The tool's name (`list_sessions`).
    pub name: &'static str,
    /// A short human-readable title.
    pub title: &'static str,
    /// What a caller needs to know that the schemas do not say.
    pub description: &'static str,
    /// The JSON Schema of the arguments.
    pub input_schema: fn() -> Arc<JsonObject>,
    /// The JSON Schema of `structuredContent`.
    pub output_schema: fn() -> Arc<JsonObject>,
    /// Runs the tool.
    pub run: fn(&CallContext, JsonObject) -> Result<ToolOutput, ToolError>,
    /// Whether the tool reads one session: `sessionPath`, required unless the server knows
    /// the calling session (which it then reads).
    pub needs_session: bool,
}

impl ToolSpec {
    /// Returns the tool as `tools/list` describes it: schemas, and annotations saying it only
    /// reads local files (read-only, not destructive, idempotent, closed world). A tool that
    /// reads one session declares `sessionPath` a required string unless `is_session_known`
    /// (the server knows the calling session and reads it when the argument is left out).
    pub(crate) fn describe(&self, is_session_known: bool) -> Tool {
        let annotations = ToolAnnotations::with_title(self.title)
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false);
        let mut input_schema = (self.input_schema)();
        if self.needs_session && !is_session_known {
            input_schema = require_session_path(&input_schema);
        }
        Tool::new(self.name, self.description, input_schema)
            .with_title(self.title)
            .with_raw_output_schema(crate::schema::complete(&(self.output_schema)()))
            .with_annotations(annotations)
    }

    /// Runs the tool; a failure is a tool error result whose text says why.
    pub(crate) fn run(&self, context: &CallContext, arguments: JsonObject) -> CallToolResult {
        match (self.run)(context, arguments) {
            // Every tool bounds its page; this is the last guard that no result, however
            // hostile the store, exceeds the documented size.
            Ok(output) if crate::output::json_len(&output.structured) > MAX_PAGE_BYTES => {
                error_result(&ToolError::Internal(format!(
                    "the result is larger than {MAX_PAGE_BYTES} bytes; ask for fewer results \
                     (limit) or narrow the request"
                )))
            }
            Ok(mut output) => {
                crate::output::add_size_fields(&mut output.structured);
                output.into_result()
            }
            Err(error) => error_result(&error),
        }
    }
}

/// Returns `schema` with `sessionPath` required, a string (not null).
fn require_session_path(schema: &JsonObject) -> Arc<JsonObject> {
    let mut schema = schema.clone();
    if let Some(property) = schema
        .get_mut("properties")
        .and_then(|properties| properties.get_mut("sessionPath"))
        .and_then(serde_json::Value::as_object_mut)
    {
        property.insert("type".to_owned(), serde_json::Value::from("string"));
    }
    let required = schema
        .entry("required")
        .or_insert_with(|| serde_json::Value::Array(Vec::new()));
    if let Some(required) = required.as_array_mut()
        && !required.iter().any(|name| name == "sessionPath")
    {
        required.push(serde_json::Value::from("sessionPath"));
    }
    Arc::new(schema)
}

/// Returns the input schema generated from a parameter type (object at the top, as MCP
/// requires).
pub(crate) fn input_schema<T: schemars::JsonSchema + std::any::Any>() -> Arc<JsonObject> {
    // The parameter types are structs, so the schema is always an object and the check in
    // `schema_for_input` cannot fail; the unchecked schema is the same document.
    rmcp::handler::server::common::schema_for_input::<T>()
        .unwrap_or_else(|_| rmcp::handler::server::common::schema_for_type::<T>())
}

/// Returns a JSON Schema written as text, as an object.
pub(crate) fn schema_from_text(text: &str) -> Arc<JsonObject> {
    // The schemas are constants of this crate; a test parses every one of them.
    Arc::new(serde_json::from_str(text).unwrap_or_default())
}
