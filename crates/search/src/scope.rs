//! What a search looks at: which kinds of text, and which roles, tools and models.

pub use pi_retrospect_read::searchable::FieldKinds;

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
        self.kinds.with_filters(&self.roles, &self.tools)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_retrospect_core::search::FieldKind;

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
            "errorMessage",
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
}
