//! The one error type every capability returns to a front end.

use std::fmt;

/// What kind of failure an [`AppError`] is; a front end maps it to its exit code or protocol
/// error (the CLI: [`ErrorKind::Usage`] exits 2, everything else 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request itself is wrong: a bad flag value, an empty range, an ambiguous id prefix,
    /// a malformed cursor.
    Usage,
    /// The request names something that does not exist: no session has the id, no entry has
    /// the handle, `latest` finds no session.
    NotFound,
    /// Reading failed: a file could not be opened or read, a session file is not a session.
    Io,
}

/// Which input of a request was wrong. The application layer names the input by this value,
/// never by a front end's spelling of it: the CLI writes [`Input::Since`] as `--since`, the
/// MCP server as `startTimestamp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Input {
    /// The session argument (a path, an id or id prefix, a name, `latest`).
    Session,
    /// The start of a creation-time range.
    Since,
    /// The end of a creation-time range.
    Until,
    /// The start of a last-activity range.
    ActiveSince,
    /// The end of a last-activity range.
    ActiveUntil,
    /// A limit on how many items are returned.
    Limit,
    /// The search pattern.
    Pattern,
    /// The query of an inspect search.
    Query,
    /// A paging cursor or the position a paged request resumes at.
    Cursor,
    /// An exact working directory.
    Cwd,
    /// A working directory that includes its subdirectories.
    CwdPrefix,
    /// A session id prefix filter.
    Id,
    /// A session name filter.
    Name,
    /// An entry handle (an entry id or `line:N`).
    Entry,
    /// A parent entry handle.
    Parent,
    /// A line range.
    Lines,
    /// A term entries are filtered by.
    Grep,
    /// The time zone of calendar groups.
    TimeZone,
    /// Where a document is written.
    Out,
    /// Adding each subagent run into the session row that launched it.
    Rollup,
}

impl Input {
    /// Returns the input's plain name (`since`, `limit`), which [`AppError`]'s `Display` uses;
    /// a front end spells it its own way instead.
    pub fn name(self) -> &'static str {
        match self {
            Input::Session => "session",
            Input::Since => "since",
            Input::Until => "until",
            Input::ActiveSince => "active-since",
            Input::ActiveUntil => "active-until",
            Input::Limit => "limit",
            Input::Pattern => "pattern",
            Input::Query => "query",
            Input::Cursor => "cursor",
            Input::Cwd => "cwd",
            Input::CwdPrefix => "cwd-prefix",
            Input::Id => "id",
            Input::Name => "name",
            Input::Entry => "entry",
            Input::Parent => "parent",
            Input::Lines => "lines",
            Input::Grep => "grep",
            Input::TimeZone => "timezone",
            Input::Out => "out",
            Input::Rollup => "rollup",
        }
    }
}

/// A failure of a capability: its kind, the input it is about (when one input was wrong) and
/// a message that names the path or value and the reason. The message never names the input
/// itself; a front end writes it first in its own spelling ([`AppError::describe`]). The
/// message is raw text; front ends sanitise it before it reaches a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppError {
    /// What kind of failure this is.
    pub kind: ErrorKind,
    /// The input that was wrong, if the failure is about one.
    pub input: Option<Input>,
    /// The reason, without a trailing period and without the input's name. Another input it
    /// mentions is written by its plain name ([`Input::name`]); see [`AppError::describe`].
    pub message: String,
    /// Another input the message mentions, and the byte offset of its plain name there.
    mention: Option<(usize, Input)>,
}

impl AppError {
    /// Returns a usage error with `message`.
    pub fn usage(message: impl Into<String>) -> AppError {
        AppError {
            kind: ErrorKind::Usage,
            input: None,
            message: message.into(),
            mention: None,
        }
    }

    /// Returns a usage error about `input` with `message`.
    pub fn bad_input(input: Input, message: impl Into<String>) -> AppError {
        AppError::usage(message).about(input)
    }

    /// Returns a not-found error with `message`.
    pub fn not_found(message: impl Into<String>) -> AppError {
        AppError {
            kind: ErrorKind::NotFound,
            input: None,
            message: message.into(),
            mention: None,
        }
    }

    /// Returns a read failure with `message`.
    pub fn io(message: impl Into<String>) -> AppError {
        AppError {
            kind: ErrorKind::Io,
            input: None,
            message: message.into(),
            mention: None,
        }
    }

    /// Returns a usage error about `input` whose message mentions `other`:
    /// `{before}{other}{after}`, with `other` spelled as the front end spells it.
    pub fn bad_input_mentioning(input: Input, before: &str, other: Input, after: &str) -> AppError {
        let mut error = AppError::bad_input(input, format!("{before}{}{after}", other.name()));
        error.mention = Some((before.len(), other));
        error
    }

    /// Returns this error marked as being about `input`.
    pub fn about(mut self, input: Input) -> AppError {
        self.input = Some(input);
        self
    }

    /// Returns the whole message with the input (if any) first, as `spell` writes it:
    /// `--since: "x" is not a time…` for the CLI, `startTimestamp: …` for the MCP server.
    pub fn describe(&self, spell: impl Fn(Input) -> &'static str) -> String {
        match self.input {
            Some(input) => format!("{}: {}", spell(input), self.reason(spell)),
            None => self.reason(spell),
        }
    }

    /// Returns the message without the input's name, any other input it mentions spelled by
    /// `spell`.
    pub fn reason(&self, spell: impl Fn(Input) -> &'static str) -> String {
        let mut message = self.message.clone();
        if let Some((at, other)) = self.mention {
            let end = at + other.name().len();
            if message.get(at..end) == Some(other.name()) {
                message.replace_range(at..end, spell(other));
            }
        }
        message
    }
}

impl fmt::Display for AppError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.describe(Input::name))
    }
}

impl std::error::Error for AppError {}

impl From<pi_retrospect_transcript::TranscriptError> for AppError {
    fn from(error: pi_retrospect_transcript::TranscriptError) -> AppError {
        use pi_retrospect_transcript::TranscriptError;
        let kind = match &error {
            TranscriptError::InvalidCursor { .. } | TranscriptError::InvalidArgument { .. } => {
                ErrorKind::Usage
            }
            TranscriptError::UnknownEntry { .. } => ErrorKind::NotFound,
            // A session path that names no file is a SESSION that names nothing, as a name
            // or id that matches none is; a file that exists but cannot be read is I/O.
            TranscriptError::Open(pi_retrospect_read::OpenError::Io { error, .. })
                if error.kind() == std::io::ErrorKind::NotFound =>
            {
                ErrorKind::NotFound
            }
            _ => ErrorKind::Io,
        };
        let input = match &error {
            TranscriptError::UnknownEntry { .. } => Some(Input::Entry),
            _ => None,
        };
        AppError {
            kind,
            input,
            message: error_chain(&error),
            mention: None,
        }
    }
}

impl From<pi_retrospect_walk::WalkError> for AppError {
    fn from(error: pi_retrospect_walk::WalkError) -> AppError {
        AppError::io(error_chain(&error))
    }
}

/// Returns `error` and its sources joined by `: `, as one line.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(input: Input) -> &'static str {
        match input {
            Input::Since => "--since",
            Input::Until => "--until",
            _ => "--other",
        }
    }

    #[test]
    fn each_front_end_spells_the_input_and_the_input_mentioned() {
        let error = AppError::bad_input_mentioning(
            Input::Until,
            "2026-01-01 is before ",
            Input::Since,
            " (2026-02-01): the range is empty",
        );
        assert_eq!(error.kind, ErrorKind::Usage);
        assert_eq!(error.input, Some(Input::Until));
        assert_eq!(
            error.describe(flag),
            "--until: 2026-01-01 is before --since (2026-02-01): the range is empty"
        );
        assert_eq!(
            error.to_string(),
            "until: 2026-01-01 is before since (2026-02-01): the range is empty"
        );
        assert_eq!(
            error.reason(|input| match input {
                Input::Since => "startTimestamp",
                _ => "endTimestamp",
            }),
            "2026-01-01 is before startTimestamp (2026-02-01): the range is empty"
        );
    }

    #[test]
    fn an_error_about_no_input_is_its_message() {
        let error = AppError::io("cannot read /x: permission denied");
        assert_eq!(error.input, None);
        assert_eq!(error.describe(flag), "cannot read /x: permission denied");
    }
}
