//! Page cursors: opaque strings naming where the previous page ended by the last item's sort
//! key (never an offset, which a session written between two pages would shift), bound to
//! the tool and to a digest of the call's other arguments, sealed with a keyed hash so that a
//! damaged or made-up cursor is refused instead of read as some other position.

use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;

use rmcp::model::JsonObject;
use serde_json::Value;

use crate::error::ToolError;

/// The arguments that may change between the pages of one walk: the cursor itself and the
/// page size.
const PAGE_ARGUMENTS: [&str; 2] = ["cursor", "limit"];

/// Prefix of every cursor, naming the encoding so a later one can be told apart.
const PREFIX: &str = "c1.";

/// Returns the digest of a call's arguments (all but [`PAGE_ARGUMENTS`]), in a canonical
/// form: object keys sorted, so the same arguments in another order give the same digest.
pub(crate) fn digest(arguments: &JsonObject) -> String {
    let mut canonical = String::new();
    let mut keys: Vec<&String> = arguments
        .keys()
        .filter(|key| !PAGE_ARGUMENTS.contains(&key.as_str()))
        .collect();
    keys.sort();
    for key in keys {
        canonical.push_str(key);
        canonical.push('=');
        write_canonical(&arguments[key], &mut canonical);
        canonical.push(';');
    }
    format!("{:016x}", fnv1a(canonical.as_bytes()))
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(object) => {
            let mut keys: Vec<&String> = object.keys().collect();
            keys.sort();
            out.push('{');
            for key in keys {
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                write_canonical(&object[key], out);
                out.push(',');
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for item in items {
                write_canonical(item, out);
                out.push(',');
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// FNV-1a, 64 bits: the digest of a call's arguments (not a secret: it only tells two
/// queries apart).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Returns the check value of a cursor's payload: SipHash under a random key drawn once per
/// server process, so a client cannot build a cursor the server did not hand out (an
/// unkeyed checksum can be recomputed by anyone who reads one cursor). Cursors therefore
/// continue only within one server process; a restarted server refuses them as made up.
fn seal(bytes: &[u8]) -> u64 {
    static KEY: OnceLock<RandomState> = OnceLock::new();
    KEY.get_or_init(RandomState::new).hash_one(bytes)
}

/// Returns the cursor continuing after `key` in the tool `tool`'s pages for the arguments
/// whose [`digest`] is `digest`.
pub(crate) fn encode(tool: &str, digest: &str, key: &Value) -> String {
    let payload = serde_json::json!({ "t": tool, "q": digest, "k": key }).to_string();
    let mut text = String::with_capacity(PREFIX.len() + payload.len() * 2 + 17);
    text.push_str(PREFIX);
    for byte in payload.as_bytes() {
        text.push_str(&format!("{byte:02x}"));
    }
    text.push('.');
    text.push_str(&format!("{:016x}", seal(payload.as_bytes())));
    text
}

/// Returns the key a cursor of `tool` holds, refusing (as an error about `cursor`) one that is
/// damaged or made up, one of another tool, and one made by a call with other arguments.
pub(crate) fn decode(tool: &str, digest: &str, cursor: &str) -> Result<Value, ToolError> {
    let forged = || {
        ToolError::argument(
            "cursor",
            format!(
                "not a nextCursor of {tool} (damaged, made up, or from an earlier server process); start again without cursor"
            ),
        )
    };
    let body = cursor.strip_prefix(PREFIX).ok_or_else(forged)?;
    let (hex, checksum) = body.rsplit_once('.').ok_or_else(forged)?;
    if hex.len() % 2 != 0 || !hex.is_ascii() {
        return Err(forged());
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|idx| u8::from_str_radix(&hex[idx..idx + 2], 16))
        .collect::<Result<Vec<u8>, _>>()
        .map_err(|_| forged())?;
    if format!("{:016x}", seal(&bytes)) != checksum {
        return Err(forged());
    }
    let payload: Value = serde_json::from_slice(&bytes).map_err(|_| forged())?;
    if payload["t"] != tool {
        return Err(ToolError::argument(
            "cursor",
            format!("a cursor of {}, not of {tool}", payload["t"]),
        ));
    }
    if payload["q"] != digest {
        return Err(ToolError::argument(
            "cursor",
            "made by a call with other arguments: repeat the arguments of the first page \
             (only cursor and limit may change), or start again without cursor",
        ));
    }
    Ok(payload["k"].clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn cursors_round_trip_and_refuse_other_queries_and_forgeries() {
        let arguments = object(serde_json::json!({ "cwds": ["/a"], "sortDirection": "desc" }));
        let reordered =
            object(serde_json::json!({ "sortDirection": "desc", "limit": 3, "cwds": ["/a"] }));
        assert_eq!(digest(&arguments), digest(&reordered));
        let key = serde_json::json!(["", "2026-01-01T00:00:00Z", "/s/a.jsonl"]);
        let cursor = encode("list_sessions", &digest(&arguments), &key);
        assert_eq!(
            decode("list_sessions", &digest(&reordered), &cursor).ok(),
            Some(key)
        );
        let other = object(serde_json::json!({ "cwds": ["/b"], "sortDirection": "desc" }));
        let error = decode("list_sessions", &digest(&other), &cursor).map(|_| ());
        assert!(
            matches!(&error, Err(e) if e.to_string().contains("other arguments")),
            "{error:?}"
        );
        let error = decode("search_sessions", &digest(&arguments), &cursor).map(|_| ());
        assert!(matches!(&error, Err(e) if e.to_string().contains("not of search_sessions")));
        let mut forged = cursor.clone().into_bytes();
        let idx = PREFIX.len() + 10;
        forged[idx] = if forged[idx] == b'0' { b'1' } else { b'0' };
        let forged = String::from_utf8(forged).unwrap_or_default();
        // A payload with other keys, sealed with the unkeyed checksum anyone can compute.
        let payload = serde_json::json!({ "t": "list_sessions", "q": digest(&arguments), "k": ["", "/etc/passwd"] }).to_string();
        let hex: String = payload.bytes().map(|byte| format!("{byte:02x}")).collect();
        let rebuilt = format!("{PREFIX}{hex}.{:016x}", fnv1a(payload.as_bytes()));
        for bad in [
            forged.as_str(),
            rebuilt.as_str(),
            "sessions:3",
            "c1.zz.00",
            "",
        ] {
            let error = decode("list_sessions", &digest(&arguments), bad).map(|_| ());
            assert!(
                matches!(&error, Err(e) if e.to_string().contains("made up")),
                "{bad}"
            );
        }
    }
}
