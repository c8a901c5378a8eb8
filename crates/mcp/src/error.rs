//! The crate's errors: why the server could not run ([`McpError`]), and why one tool call
//! failed ([`ToolError`], which becomes a tool error result, never a crash).

use pi_retrospect_app::{AppError, Input};

/// Why the server could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The async runtime could not be built.
    #[error("cannot start the MCP server's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The client did not complete the MCP handshake (or the connection closed during it).
    #[error("MCP handshake failed: {0}")]
    Handshake(String),
    /// The server's task ended abnormally.
    #[error("the MCP server stopped: {0}")]
    Serve(String),
}

/// Why one tool call failed; its message is the text of the tool error result.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ToolError {
    /// One argument is wrong; the message starts with the argument's name.
    #[error("{name}: {message}")]
    Argument {
        /// The argument as the caller spelled it (`sessionPath`, `search.terms`).
        name: String,
        /// What is wrong with it.
        message: String,
    },
    /// The arguments as a whole are wrong (an unknown or missing argument); the message
    /// names it.
    #[error("invalid arguments: {0}")]
    Arguments(String),
    /// The application layer failed (a session that cannot be read) for a reason that is
    /// about no one argument; one that is becomes [`ToolError::Argument`].
    #[error("{0}")]
    App(AppError),
    /// The result could not be produced for another reason.
    #[error("{0}")]
    Internal(String),
}

impl ToolError {
    /// Returns an error about the argument `name`.
    pub(crate) fn argument(name: impl Into<String>, message: impl Into<String>) -> ToolError {
        ToolError::Argument {
            name: name.into(),
            message: message.into(),
        }
    }
}

impl From<AppError> for ToolError {
    fn from(error: AppError) -> ToolError {
        match error.input {
            Some(input) => ToolError::argument(argument_name(input), error.reason(argument_name)),
            None => ToolError::App(error),
        }
    }
}

/// Returns the argument of the tools that carries `input` (the tools name each input the same
/// way wherever they take it).
pub(crate) fn argument_name(input: Input) -> &'static str {
    match input {
        Input::Session => "sessionPath",
        Input::Since => "startTimestamp",
        Input::Until => "endTimestamp",
        // A search bounds the sessions it reads by activity with the same arguments.
        Input::ActiveSince => "startTimestamp",
        Input::ActiveUntil => "endTimestamp",
        Input::Limit => "limit",
        Input::Pattern => "pattern",
        Input::Query => "query",
        Input::Cursor => "cursor",
        Input::Cwd => "cwds",
        Input::CwdPrefix => "cwdPrefix",
        Input::Id => "id",
        Input::Name => "name",
        Input::Entry => "entryId",
        Input::Parent => "parentIds",
        Input::Lines => "startLineNo",
        Input::Grep => "search.terms",
        Input::TimeZone => "timeZone",
        other => other.name(),
    }
}
