//! The tools, one module each, and the table that registers them. A tool is a
//! [`ToolSpec`]: its name, description, input and output schemas and the function that runs
//! it. Adding a tool is a new module with its `TOOL` and one line in [`ALL`].

use std::sync::Arc;

use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde_json::Value;

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
    let schema = rmcp::handler::server::common::schema_for_input::<T>()
        .unwrap_or_else(|_| rmcp::handler::server::common::schema_for_type::<T>());
    let mut schema = Value::Object((*schema).clone());
    drop_rust_formats(&mut schema);
    match schema {
        Value::Object(object) => Arc::new(object),
        _ => Arc::new(JsonObject::new()),
    }
}

/// Removes the `format`s schemars adds for Rust integer types (`uint64`, `uint`, ...): JSON
/// Schema defines no such format, so strict validators (ajv) refuse the whole schema, and
/// `minimum`/`maximum` already say the range.
fn drop_rust_formats(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| {
                    format.starts_with("int")
                        || format.starts_with("uint")
                        || format == "double"
                        || format == "float"
                })
            {
                object.remove("format");
            }
            object.values_mut().for_each(drop_rust_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_rust_formats),
        _ => {}
    }
}

/// Returns a JSON Schema written as text, as an object.
pub(crate) fn schema_from_text(text: &str) -> Arc<JsonObject> {
    // The schemas are constants of this crate; a test parses every one of them.
    Arc::new(serde_json::from_str(text).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON Schema 2020-12 keywords the schemas may use; anything else is a typo or a
    /// generator's extension that strict validators (ajv) refuse.
    const KEYWORDS: &[&str] = &[
        "$schema",
        "$id",
        "$ref",
        "$defs",
        "$comment",
        "title",
        "description",
        "type",
        "enum",
        "const",
        "default",
        "examples",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "oneOf",
        "anyOf",
        "allOf",
        "not",
        "deprecated",
        "readOnly",
        "unevaluatedProperties",
    ];
    /// The formats JSON Schema defines that the schemas use.
    const FORMATS: &[&str] = &["date-time", "date", "uri"];

    fn has_type(schema: &serde_json::Map<String, Value>, name: &str) -> bool {
        match schema.get("type") {
            Some(Value::String(kind)) => kind == name,
            Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == name),
            _ => false,
        }
    }

    /// Collects what is wrong with `schema` at `at`. A branch of `oneOf`/`anyOf`/`allOf`/`not`
    /// only narrows its parent (which states the type and the properties), so it need not
    /// repeat them.
    fn check(schema: &Value, at: &str, is_branch: bool, problems: &mut Vec<String>) {
        let Value::Object(object) = schema else {
            if !schema.is_boolean() {
                problems.push(format!("{at}: not a schema"));
            }
            return;
        };
        for key in object.keys() {
            if !KEYWORDS.contains(&key.as_str()) {
                problems.push(format!("{at}: unknown keyword {key}"));
            }
        }
        if let Some(Value::String(format)) = object.get("format")
            && !FORMATS.contains(&format.as_str())
        {
            problems.push(format!("{at}: unknown format {format}"));
        }
        let is_reference = object.contains_key("$ref") || object.contains_key("const");
        if !is_branch && !is_reference {
            if object.contains_key("properties") && !has_type(object, "object") {
                problems.push(format!("{at}: properties without type object"));
            }
            if has_type(object, "object") {
                let is_map = object
                    .get("additionalProperties")
                    .is_some_and(Value::is_object);
                if !object.contains_key("properties") && !is_map {
                    problems.push(format!("{at}: an object without properties"));
                }
                if !object.contains_key("additionalProperties")
                    && !object.contains_key("unevaluatedProperties")
                {
                    problems.push(format!("{at}: additionalProperties not stated"));
                }
            }
            if has_type(object, "array") && !object.contains_key("items") {
                problems.push(format!("{at}: an array without items"));
            }
        }
        for (key, value) in object {
            match key.as_str() {
                "properties" | "$defs" => {
                    for (name, item) in value.as_object().into_iter().flatten() {
                        check(item, &format!("{at}/{key}/{name}"), false, problems);
                    }
                }
                "items" | "additionalProperties" => {
                    check(value, &format!("{at}/{key}"), false, problems);
                }
                "not" => check(value, &format!("{at}/not"), true, problems),
                "oneOf" | "anyOf" | "allOf" => {
                    for (idx, item) in value.as_array().into_iter().flatten().enumerate() {
                        check(item, &format!("{at}/{key}/{idx}"), true, problems);
                    }
                }
                _ => {}
            }
        }
    }

    #[test]
    fn every_schema_is_strict() {
        let mut problems = Vec::new();
        for tool in ALL {
            for is_session_known in [false, true] {
                let described = tool.describe(is_session_known);
                let input = Value::Object((*described.input_schema).clone());
                check(
                    &input,
                    &format!("{} input", tool.name),
                    false,
                    &mut problems,
                );
                let output = described
                    .output_schema
                    .map(|schema| Value::Object((*schema).clone()))
                    .unwrap_or(Value::Null);
                check(
                    &output,
                    &format!("{} output", tool.name),
                    false,
                    &mut problems,
                );
            }
        }
        problems.dedup();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
