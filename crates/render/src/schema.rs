//! The JSON Schema (draft 2020-12) of `list --json`'s document.

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
        };
        let parent = Session {
            subagent_sessions: vec![child.clone()],
            path: "/s/a.jsonl".into(),
            parent_session_path: None,
            ..child
        };
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
