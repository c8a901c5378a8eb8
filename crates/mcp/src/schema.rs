//! Output schemas as clients are shown them: every local `$ref` inlined (Pi's `describeTool`
//! and many clients do not follow references, and show a referenced row as an untyped
//! object), and the size fields every page carries.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Map, Value};

/// How many times one definition is inlined inside itself (runs of runs of runs); deeper
/// levels are described as objects of the same shape.
const MAX_RECURSION: usize = 3;

/// Returns `schema` with its local references inlined, `$defs` dropped, and the `bytes` and
/// `sizeClass` properties every tool result has.
pub(crate) fn complete(schema: &JsonObject) -> Arc<JsonObject> {
    let root = Value::Object(schema.clone());
    let mut stack = Vec::new();
    let mut inlined = inline(&root, &root, &mut stack);
    if let Some(object) = inlined.as_object_mut() {
        object.remove("$defs");
        object.remove("definitions");
        let properties = object
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(properties) = properties.as_object_mut() {
            properties.insert(
                "bytes".to_owned(),
                serde_json::json!({ "type": "integer", "minimum": 0, "description": "This document's size as compact JSON, in bytes." }),
            );
            properties.insert(
                "sizeClass".to_owned(),
                serde_json::json!({ "type": "string", "enum": ["small", "medium", "large"], "description": "small: under 8 KiB; medium: under 32 KiB (the default page); large: up to the 256 KiB cap." }),
            );
        }
    }
    match inlined {
        Value::Object(object) => Arc::new(object),
        _ => Arc::new(schema.clone()),
    }
}

fn inline(value: &Value, root: &Value, stack: &mut Vec<String>) -> Value {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get("$ref")
                && let Some(target) = resolve(root, reference)
            {
                let depth = stack.iter().filter(|seen| *seen == reference).count();
                let mut resolved = if depth >= MAX_RECURSION {
                    // Any value, not an untyped object: the levels above are typed in full,
                    // and an object with no properties would tell a client nothing while
                    // strict validators refuse it.
                    serde_json::json!({
                        "description": "Nested deeper: the same shape as its parent (not repeated here).",
                    })
                } else {
                    stack.push(reference.clone());
                    let resolved = inline(target, root, stack);
                    stack.pop();
                    resolved
                };
                // Keywords beside the reference (a description) stay, over the target's.
                if let Some(resolved) = resolved.as_object_mut() {
                    for (key, item) in object {
                        if key != "$ref" {
                            resolved.insert(key.clone(), inline(item, root, stack));
                        }
                    }
                }
                return resolved;
            }
            Value::Object(
                object
                    .iter()
                    .filter(|(key, _)| !matches!(key.as_str(), "$defs" | "definitions"))
                    .map(|(key, item)| (key.clone(), inline(item, root, stack)))
                    .collect(),
            )
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|item| inline(item, root, stack)).collect())
        }
        other => other.clone(),
    }
}

/// Returns what a local reference (`#/$defs/Row`, `#/properties/path`) points at.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_inlined_and_recursion_is_bounded() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": { "rows": { "type": "array", "items": { "$ref": "#/$defs/Node" } } },
            "$defs": { "Node": { "type": "object", "properties": {
                "name": { "type": "string" },
                "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } }
            } } }
        });
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        let completed = Value::Object((*complete(&schema)).clone());
        let text = completed.to_string();
        assert!(!text.contains("$ref") && !text.contains("$defs"), "{text}");
        let node = &completed["properties"]["rows"]["items"];
        assert_eq!(node["properties"]["name"]["type"], "string");
        assert_eq!(
            node["properties"]["children"]["items"]["properties"]["name"]["type"],
            "string"
        );
        assert_eq!(completed["properties"]["sizeClass"]["type"], "string");
    }
}
