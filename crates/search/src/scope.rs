//! What a search looks at: which kinds of text, and which roles, tools and models.

use pi_retrospect_core::search::FieldKind;

use crate::error::SearchError;

/// Returns a set of [`FieldKind`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldKinds(u16);

impl FieldKinds {
    /// No kind at all.
    pub const NONE: FieldKinds = FieldKinds(0);

    /// Returns the kinds searched by default: user and assistant text, `!` commands and
    /// their output, compaction and branch summaries, custom messages, session names and
    /// labels.
    pub fn default_kinds() -> FieldKinds {
        FieldKind::ALL
            .into_iter()
            .filter(|kind| kind.is_default())
            .collect()
    }

    /// Returns every kind, the opt-in ones included.
    pub fn all() -> FieldKinds {
        FieldKind::ALL.into_iter().collect()
    }

    /// Returns the kinds named in `names` (serialised spellings such as `toolResult`).
    pub fn from_names<'a>(
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<FieldKinds, SearchError> {
        names
            .into_iter()
            .map(|name| {
                FieldKind::from_name(name).ok_or_else(|| SearchError::UnknownFieldKind {
                    name: name.to_owned(),
                    expected: FieldKind::ALL.map(FieldKind::as_str).join(", "),
                })
            })
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

/// Returns where a search looks: kinds of text and the narrowing filters (`--role`, `--tool`,
/// `--model`). An empty filter keeps everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// The kinds of text searched.
    pub kinds: FieldKinds,
    /// Message roles to keep (`user`, `assistant`, `toolResult`, `bashExecution`, `custom`,
    /// `system`, ...). An entry Pi turns into a message has that message's role: a
    /// `custom_message` is `custom`, a `branch_summary` `branchSummary`, a `compaction`
    /// `compactionSummary` (its system checkpoint `system`); labels and session names have
    /// none and are left out.
    pub roles: Vec<String>,
    /// Tools to keep: tool-call arguments and tool results of these tools only.
    pub tools: Vec<String>,
    /// Models to keep: assistant messages (text, thinking, tool-call arguments) whose `model`,
    /// or `provider/model`, is one of these.
    pub models: Vec<String>,
    /// Keep entries written at or after this instant (by each entry's own timestamp; an
    /// entry without a valid one is left out when a bound is set).
    pub since: Option<pi_retrospect_core::Timestamp>,
    /// Keep entries written at or before this instant.
    pub until: Option<pi_retrospect_core::Timestamp>,
}

impl Scope {
    /// Returns the kinds actually searched. Naming a filter asks for the texts it selects,
    /// so `tools` turns on tool-call arguments and tool results when neither is on, and
    /// the roles `toolResult` and `system` turn on their (opt-in) kinds.
    pub fn effective_kinds(&self) -> FieldKinds {
        let mut kinds = self.kinds;
        if !self.tools.is_empty()
            && !kinds.contains(FieldKind::ToolArgs)
            && !kinds.contains(FieldKind::ToolResult)
        {
            kinds = kinds.with(FieldKind::ToolArgs).with(FieldKind::ToolResult);
        }
        for role in &self.roles {
            match role.as_str() {
                "toolResult" => kinds = kinds.with(FieldKind::ToolResult),
                "system" => kinds = kinds.with(FieldKind::System),
                _ => {}
            }
        }
        kinds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(scope: Scope, expected: &[&str]) {
        let actual: Vec<&str> = scope
            .effective_kinds()
            .iter()
            .map(FieldKind::as_str)
            .collect();
        assert_eq!(actual, expected, "{scope:?}");
    }

    #[test]
    fn filters_turn_on_the_kinds_they_select() {
        let defaults = [
            "user",
            "assistant",
            "bashCommand",
            "bashOutput",
            "compactionSummary",
            "branchSummary",
            "custom",
            "sessionName",
            "label",
        ];
        check(Scope::default(), &defaults);
        let mut with_tools = defaults.to_vec();
        with_tools.extend(["toolArgs", "toolResult"]);
        check(
            Scope {
                tools: vec!["bash".into()],
                ..Scope::default()
            },
            &with_tools,
        );
        check(
            Scope {
                kinds: FieldKinds::NONE.with(FieldKind::ToolResult),
                tools: vec!["bash".into()],
                ..Scope::default()
            },
            &["toolResult"],
        );
        check(
            Scope {
                kinds: FieldKinds::NONE,
                roles: vec!["system".into(), "toolResult".into()],
                ..Scope::default()
            },
            &["toolResult", "system"],
        );
    }

    #[test]
    fn kinds_parse_from_names() {
        let kinds = FieldKinds::from_names(["thinking", "toolArgs"]).expect("valid");
        assert_eq!(
            kinds.iter().collect::<Vec<_>>(),
            [FieldKind::Thinking, FieldKind::ToolArgs]
        );
        let error = FieldKinds::from_names(["tool_args"]).expect_err("invalid");
        assert!(error.to_string().contains("\"tool_args\""), "{error}");
        assert_eq!(FieldKinds::all().iter().count(), 13);
    }
}
