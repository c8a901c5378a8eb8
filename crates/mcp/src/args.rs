//! Tool arguments: decoding a call's JSON arguments into a tool's typed parameters, and the
//! checks several tools share (time bounds, absolute directories, the session path), each
//! failing with an error that names the argument.

use std::path::PathBuf;

use pi_retrospect_app::{SessionRef, SessionTarget, StoreFlags};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::ToolError;
use crate::server::CallContext;

/// Returns the tool parameters `arguments` decode to; a wrong type or value names the
/// argument (`limit: invalid type: string "x", expected a whole number of 0 or more`), an unknown or missing one is
/// named by serde's own message.
pub(crate) fn parse<T: DeserializeOwned + JsonSchema>(
    arguments: JsonObject,
) -> Result<T, ToolError> {
    let mut value = serde_json::Value::Object(arguments);
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    coerce(&mut value, &schema, &schema);
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        let message = plain_type_words(&error.into_inner().to_string());
        if path == "." {
            ToolError::Arguments(message)
        } else {
            ToolError::argument(path, message)
        }
    })
}

/// Returns serde's message with Rust's type names (`expected u64`) in the words of the
/// schema a caller reads (`expected a whole number of 0 or more`).
fn plain_type_words(message: &str) -> String {
    const WORDS: [(&str, &str); 8] = [
        ("expected u64", "expected a whole number of 0 or more"),
        ("expected usize", "expected a whole number of 0 or more"),
        ("expected u32", "expected a whole number of 0 or more"),
        ("expected u16", "expected a whole number of 0 or more"),
        ("expected u8", "expected a whole number of 0 or more"),
        ("expected i64", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
    ];
    let mut message = message.to_owned();
    for (rust, plain) in WORDS {
        if let Some(at) = message.find(rust)
            && !message[at + rust.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
        {
            message.replace_range(at..at + rust.len(), plain);
        }
    }
    message
}

/// Rewrites, in place, the strings of `value` that stand for an integer, a number, a boolean
/// or an array where `schema` does not accept a string there (`"2"`, `"true"`, `"[1,2]"`):
/// many clients (the MCP inspector's CLI among them) send every argument as a string. A
/// string that does not read as the declared type is left alone, so serde's error names the
/// argument and the type it expected.
fn coerce(value: &mut serde_json::Value, schema: &serde_json::Value, root: &serde_json::Value) {
    use serde_json::Value;
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
            .unwrap_or(schema),
        None => schema,
    };
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(alternatives) = schema.get(key).and_then(Value::as_array) {
            for alternative in alternatives {
                coerce(value, alternative, root);
            }
        }
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if let Value::String(text) = value
        && !types.is_empty()
        && !types.contains(&"string")
    {
        let text = text.trim();
        let replacement = if types.contains(&"integer") {
            text.parse::<i64>()
                .ok()
                .map(Value::from)
                .or_else(|| text.parse::<u64>().ok().map(Value::from))
                .or_else(|| {
                    text.parse::<f64>()
                        .ok()
                        .filter(|number| number.fract() == 0.0)
                        .map(Value::from)
                })
        } else {
            None
        }
        .or_else(|| {
            types
                .contains(&"number")
                .then(|| text.parse::<f64>().ok().map(Value::from))
                .flatten()
        })
        .or_else(|| match text {
            "true" if types.contains(&"boolean") => Some(Value::Bool(true)),
            "false" if types.contains(&"boolean") => Some(Value::Bool(false)),
            _ => None,
        })
        .or_else(|| {
            let parsed: Value = serde_json::from_str(text).ok()?;
            let is_wanted = (parsed.is_array() && types.contains(&"array"))
                || (parsed.is_object() && types.contains(&"object"));
            is_wanted.then_some(parsed)
        });
        if let Some(replacement) = replacement {
            *value = replacement;
        }
    }
    // `2.0` (or `"2.0"`, read as a number above) is the whole number 2: models emit it.
    if types.contains(&"integer")
        && !types.contains(&"number")
        && let Some(number) = value.as_f64()
        && !value.is_i64()
        && !value.is_u64()
        && number.fract() == 0.0
        && number.abs() < 9_007_199_254_740_992.0
    {
        // Exact: a whole f64 under 2^53 converts to i64 without loss.
        *value = Value::from(number as i64);
    }
    match value {
        Value::Object(object) => {
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (key, item) in object.iter_mut() {
                    if let Some(property) = properties.get(key) {
                        coerce(item, property, root);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    coerce(item, item_schema, root);
                }
            }
        }
        _ => {}
    }
}

/// One value or an array of values, for arguments that are naturally repeated: strings, or
/// one of a fixed set of names ([`MessageRole`], [`EntryType`], [`Grouping`]).
#[derive(Debug, Clone, JsonSchema)]
#[serde(untagged)]
pub(crate) enum OneOrMany<T = String> {
    /// One value.
    One(T),
    /// Several values (any of them matches).
    Many(Vec<T>),
}

impl<T> Default for OneOrMany<T> {
    fn default() -> OneOrMany<T> {
        OneOrMany::Many(Vec::new())
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Decoded by shape rather than as serde's untagged enum, so that a wrong value keeps
        // its own message (`unknown variant "wizard", expected one of ...`) instead of
        // "did not match any variant".
        let mut value = serde_json::Value::deserialize(deserializer)?;
        // An array sent as one string (JSON array text) is the array.
        if let serde_json::Value::String(text) = &value
            && text.trim_start().starts_with('[')
            && let Ok(parsed @ serde_json::Value::Array(_)) = serde_json::from_str(text)
        {
            value = parsed;
        }
        let decoded = if value.is_array() {
            Vec::<T>::deserialize(value).map(OneOrMany::Many)
        } else {
            match T::deserialize(value.clone()) {
                Ok(one) => Ok(OneOrMany::One(one)),
                // `a,b` is a list only where one value cannot hold a comma (the fixed
                // names); a string value with a comma stays one value.
                Err(error) => match value.as_str().filter(|text| text.contains(',')) {
                    Some(text) => text
                        .split(',')
                        .map(|part| T::deserialize(serde_json::Value::from(part.trim())))
                        .collect::<Result<Vec<T>, _>>()
                        .map(OneOrMany::Many)
                        .map_err(|_| error),
                    None => Err(error),
                },
            }
        };
        decoded.map_err(serde::de::Error::custom)
    }
}

impl<T> OneOrMany<T> {
    /// Returns the values as a slice.
    pub(crate) fn as_slice(&self) -> &[T] {
        match self {
            OneOrMany::One(value) => std::slice::from_ref(value),
            OneOrMany::Many(values) => values,
        }
    }

    /// Returns the values as a list.
    pub(crate) fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::One(value) => vec![value],
            OneOrMany::Many(values) => values,
        }
    }
}

impl<T: serde::Serialize> OneOrMany<T> {
    /// Returns the values as the names they are written with.
    pub(crate) fn into_names(self) -> Vec<String> {
        self.into_vec().iter().map(name_of).collect()
    }
}

/// Returns the name a fixed-value argument is written with (`toolResult`).
pub(crate) fn name_of<T: serde::Serialize>(value: &T) -> String {
    // The fixed-value types serialise to one string each; anything else has no name.
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => String::new(),
    }
}

/// A message role (version 3 spellings): what `entries --role` and `search --role` accept.
#[derive(Debug, Clone, Copy, serde::Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) enum MessageRole {
    System,
    User,
    Assistant,
    ToolResult,
    BashExecution,
    Custom,
    BranchSummary,
    CompactionSummary,
}

/// An entry type: every type Pi 1.6.0 writes, what `entries --type` accepts.
#[derive(Debug, Clone, Copy, serde::Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EntryType {
    Message,
    ModelChange,
    ThinkingLevelChange,
    Compaction,
    BranchSummary,
    Custom,
    CustomMessage,
    Label,
    SessionInfo,
    ContextEdit,
    Usage,
}

/// A grouping of `session_stats`: what `stats --by` accepts.
#[derive(Debug, Clone, Copy, serde::Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Grouping {
    Session,
    Project,
    Model,
    Day,
    Week,
    Month,
}

/// How the directory filters (`cwds`, `cwdPrefix`) match a session's cwd.
#[derive(Debug, Default, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum CwdMatch {
    /// The cwd is the directory (or below it, for `cwdPrefix`).
    #[default]
    Exact,
    /// Also sibling directories named like the directory plus `-<suffix>`.
    SiblingPrefix,
}

impl CwdMatch {
    /// Returns whether the listing's `worktrees` filter is on: `sibling-prefix` widens the
    /// directories given, and without any it means nothing (the CLI's `--worktrees` alone
    /// would mean the current directory, which is the server's, not the caller's).
    pub(crate) fn is_worktrees(self, cwds: &[String], cwd_prefix: &[String]) -> bool {
        matches!(self, CwdMatch::SiblingPrefix) && !(cwds.is_empty() && cwd_prefix.is_empty())
    }
}

/// The session filters `list_sessions`, `search_sessions` and `session_stats` take alike.
pub(crate) struct SessionFilters {
    pub(crate) cwds: OneOrMany,
    pub(crate) cwd_prefix: OneOrMany,
    pub(crate) cwd_match: CwdMatch,
    pub(crate) start_timestamp: Option<String>,
    pub(crate) end_timestamp: Option<String>,
    pub(crate) include_current_session: bool,
    pub(crate) exclude_session_path: Option<String>,
}

impl SessionFilters {
    /// Checks the filters, naming the argument that is wrong, and returns the listing request
    /// they make (the server's stores, directories, worktrees, time bounds, the exclusion)
    /// and the environment whose `session_file` is the session left out.
    pub(crate) fn request(
        self,
        context: &CallContext,
    ) -> Result<
        (
            pi_retrospect_app::ListRequest,
            pi_retrospect_app::Environment,
        ),
        ToolError,
    > {
        let cwds = absolute_dirs("cwds", self.cwds.into_vec())?;
        let cwd_prefix = absolute_dirs("cwdPrefix", self.cwd_prefix.into_vec())?;
        let env = leave_out(
            context,
            self.exclude_session_path,
            self.include_current_session,
        )?;
        let request = pi_retrospect_app::ListRequest {
            stores: stores(context),
            worktrees: self.cwd_match.is_worktrees(&cwds, &cwd_prefix),
            cwd: cwds,
            cwd_prefix,
            since: self.start_timestamp,
            until: self.end_timestamp,
            exclude_current: env.session_file.is_some(),
            ..pi_retrospect_app::ListRequest::default()
        };
        Ok((request, env))
    }
}

/// Returns the environment a call runs in, its `session_file` the session to leave out (with
/// its runs): `excludeSessionPath` when given, else the calling session the server knows of
/// unless `includeCurrentSession`.
pub(crate) fn leave_out(
    context: &CallContext,
    exclude_session_path: Option<String>,
    include_current_session: bool,
) -> Result<pi_retrospect_app::Environment, ToolError> {
    if let Some(path) = &exclude_session_path
        && !is_absolute_text(path)
    {
        return Err(ToolError::argument(
            "excludeSessionPath",
            format!("{path:?} is not an absolute path"),
        ));
    }
    let mut env = context.env.clone();
    env.session_file = match exclude_session_path {
        Some(path) => Some(path),
        None if include_current_session => None,
        None => env.session_file,
    };
    Ok(env)
}

/// Returns `values` after checking that each names an absolute directory (or starts with
/// `~`): the server's working directory is not the caller's, so a relative one is refused.
pub(crate) fn absolute_dirs(name: &str, values: Vec<String>) -> Result<Vec<String>, ToolError> {
    for value in &values {
        if !is_absolute_text(value) {
            return Err(ToolError::argument(
                name,
                format!(
                    "{value:?} is not an absolute path (the server's working directory is not yours)"
                ),
            ));
        }
    }
    Ok(values)
}

/// Returns whether `text` is an absolute path or starts with `~` (`~` or `~/...`).
pub(crate) fn is_absolute_text(text: &str) -> bool {
    text.starts_with('/') || text == "~" || text.starts_with("~/")
}

/// Returns the session a reading tool works on: `sessionPath` when given, else the session
/// the server knows is calling it (`$PI_SESSION_FILE`, which Pi 1.6.0 does not set for MCP
/// servers); either way confined to the resolved stores and to `*.jsonl` files.
pub(crate) fn session_target(
    context: &CallContext,
    session_path: Option<String>,
) -> Result<SessionTarget, ToolError> {
    const NAME: &str = "sessionPath";
    let path = match session_path {
        Some(path) => path,
        None => context.env.session_file.clone().ok_or_else(|| {
            ToolError::argument(
                NAME,
                "required: this server does not know which session is calling it; pass a \
                 `path` from list_sessions",
            )
        })?,
    };
    let confined = confine(context, &path)?;
    let path = confined.to_str().ok_or_else(|| {
        ToolError::argument(NAME, format!("{} is not valid UTF-8", confined.display()))
    })?;
    // Pi's session files all end in `.jsonl`; other files in a store (settings, notes, a
    // custom directory that holds more than sessions) are not read.
    if !path.ends_with(".jsonl") {
        return Err(ToolError::argument(
            NAME,
            format!("{path} is not a session file (*.jsonl)"),
        ));
    }
    Ok(SessionTarget {
        session: SessionRef::Path(path.to_owned()),
        stores: context.stores.clone(),
    })
}

fn confine(context: &CallContext, path: &str) -> Result<PathBuf, ToolError> {
    // Every failure here is about the path the caller gave: refused, missing or unreadable.
    pi_retrospect_app::confine_to_stores(path, &context.stores, &context.env)
        .map_err(ToolError::from)
}

/// Returns the store flags of a call: the ones the server was started with.
pub(crate) fn stores(context: &CallContext) -> StoreFlags {
    context.stores.clone()
}

/// Returns `value` (or `default`) after checking it lies in `min..=max`.
pub(crate) fn bounded(
    name: &str,
    value: Option<u64>,
    default: u64,
    min: u64,
    max: u64,
) -> Result<usize, ToolError> {
    let value = value.unwrap_or(default);
    if !(min..=max).contains(&value) {
        return Err(ToolError::argument(
            name,
            format!("must be between {min} and {max}, not {value}"),
        ));
    }
    Ok(usize::try_from(value).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Returns the values a unit enum's JSON Schema lists.
    fn schema_enum<T: JsonSchema>() -> Vec<String> {
        let schema = serde_json::to_value(schemars::schema_for!(T)).expect("a schema");
        schema["enum"]
            .as_array()
            .expect("an enum schema")
            .iter()
            .map(|value| value.as_str().expect("a name").to_owned())
            .collect()
    }

    /// Strings are read as the declared type only where they spell it; others stay strings.
    #[test]
    fn strings_are_read_as_their_declared_type() {
        #[derive(Debug, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct Params {
            limit: Option<u64>,
            #[serde(default)]
            is_on: bool,
            #[serde(default)]
            by: OneOrMany<Grouping>,
            #[serde(default)]
            names: OneOrMany,
            label: Option<String>,
        }
        let check = |arguments: serde_json::Value| -> Result<Params, String> {
            let serde_json::Value::Object(arguments) = arguments else {
                panic!("an object")
            };
            parse::<Params>(arguments).map_err(|error| error.to_string())
        };
        let params = check(serde_json::json!({
            "limit": "2", "isOn": "true", "by": "session,model", "names": "a,b", "label": "7"
        }))
        .expect("lenient");
        assert_eq!(params.limit, Some(2));
        assert!(params.is_on);
        assert_eq!(params.by.into_names(), ["session", "model"]);
        assert_eq!(params.names.into_vec(), ["a,b"]);
        assert_eq!(params.label.as_deref(), Some("7"));
        let params = check(serde_json::json!({ "names": "[\"a\",\"b\"]" })).expect("array text");
        assert_eq!(params.names.into_vec(), ["a", "b"]);
        for (arguments, name) in [
            (serde_json::json!({ "limit": "2x" }), "limit"),
            (serde_json::json!({ "isOn": "yes" }), "isOn"),
            (serde_json::json!({ "by": "session,year" }), "by"),
        ] {
            let error = check(arguments).expect_err("garbage is refused");
            assert!(error.starts_with(name), "{error}");
        }
    }

    /// The schema enums name exactly the values the CLI's `entries --role/--type` accept.
    #[test]
    fn roles_and_types_are_the_shared_lists() {
        assert_eq!(
            schema_enum::<MessageRole>(),
            pi_retrospect_core::entry_kinds::MESSAGE_ROLES.map(str::to_owned)
        );
        assert_eq!(
            schema_enum::<EntryType>(),
            pi_retrospect_core::entry_kinds::ENTRY_TYPES.map(str::to_owned)
        );
    }
}

/// How a pattern treats case: the `case` argument of every searching tool, smart case when
/// it is not given (as on the command line).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Case {
    /// Exactly as written.
    Sensitive,
    /// Upper and lower case alike.
    Insensitive,
    /// Insensitive unless the pattern holds an upper-case letter (the default).
    Smart,
}

impl Case {
    /// Returns the case rule `case` asks for (smart case when not given).
    pub(crate) fn mode(case: Option<Case>) -> pi_retrospect_app::CaseMode {
        use pi_retrospect_app::CaseMode;
        match case {
            None | Some(Case::Smart) => CaseMode::Smart,
            Some(Case::Sensitive) => CaseMode::Sensitive,
            Some(Case::Insensitive) => CaseMode::Insensitive,
        }
    }
}
