//! The MCP server itself: the handler that lists and dispatches the tools, and the stdio
//! loop that runs it until the client closes its end.

use std::sync::Arc;

use pi_retrospect_app::{Environment, StoreFlags};
use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;

use crate::error::McpError;
use crate::tools;

/// What the server needs to answer calls: where the stores are and the process environment.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The stores named by the `mcp` command's flags (`--sessions-root`, `--session-dir`,
    /// `--include-archive`); resolved again, with the environment and Pi's settings, on
    /// every call.
    pub stores: StoreFlags,
    /// The process environment, read once at start. `now` is taken afresh for every call, so
    /// ages such as `3d` count back from the call.
    pub env: Environment,
    /// Whether to refresh `env.now` on every call (the real server); tests turn it off to
    /// keep a fixed clock.
    pub is_clock_live: bool,
}

impl ServerOptions {
    /// Returns options for a real server over `stores` in `env`, with a live clock.
    pub fn new(stores: StoreFlags, env: Environment) -> ServerOptions {
        ServerOptions {
            stores,
            env,
            is_clock_live: true,
        }
    }
}

/// What one tool call runs with: the server's options, the clock read for this call.
#[derive(Debug, Clone)]
pub(crate) struct CallContext {
    /// The stores the server was started with.
    pub stores: StoreFlags,
    /// The environment, `now` set for this call.
    pub env: Environment,
}

/// The pi-retrospect MCP server: an [`rmcp::ServerHandler`] whose tools are read-only views
/// of Pi's session history.
#[derive(Debug, Clone)]
pub struct Server {
    options: Arc<ServerOptions>,
}

/// The server's self-description; Pi shows its first line next to the server.
const INSTRUCTIONS: &str = "\
Read-only look back over the Pi coding agent's session history: list, read, inspect, \
search, count and hand off sessions.
list_sessions: the sessions of the stores, filtered and sorted (oldest first; key on `path`).
session_entries: one session's stored entries in file order.
inspect_session: checkpoint views of one session (overview, ancestors, children, search, read).
search_sessions: exact search over the text of every session (or one).
session_stats: tokens and cost counted the way Pi counts them, grouped.
session_handoff: a bounded, redacted summary of one session to continue from.
A tool that reads one session takes a `path` from list_sessions as `sessionPath`; only the \
session files of the stores can be read. Pages are bounded: repeat a call with \
`nextStartLineNo`, `nextCursor` or `nextOffset` to continue.";

impl Server {
    /// Returns a server answering with `options`.
    pub fn new(options: ServerOptions) -> Server {
        Server {
            options: Arc::new(options),
        }
    }

    /// Returns the tools the server offers, as `tools/list` describes them: `sessionPath` is
    /// required where a tool reads one session, unless the server knows the calling session.
    pub fn tools(&self) -> Vec<Tool> {
        let is_session_known = self.options.env.session_file.is_some();
        tools::ALL
            .iter()
            .map(|tool| tool.describe(is_session_known))
            .collect()
    }

    /// Runs the tool `name` with `arguments` on the calling thread and returns its result
    /// (a tool error result when the arguments are wrong or the tool fails), or `None` when
    /// there is no such tool.
    pub fn call(&self, name: &str, arguments: JsonObject) -> Option<CallToolResult> {
        let tool = tools::find(name)?;
        Some(tool.run(&self.call_context(), arguments))
    }

    fn call_context(&self) -> CallContext {
        let mut env = self.options.env.clone();
        if self.options.is_clock_live {
            env.now = jiff::Timestamp::now();
        }
        CallContext {
            stores: self.options.stores.clone(),
            env,
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions(INSTRUCTIONS);
        info.server_info = Implementation::new("pi-retrospect", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let is_session_known = self.options.env.session_file.is_some();
        tools::find(name).map(|tool| tool.describe(is_session_known))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = tools::find(&request.name) else {
            let names: Vec<&str> = tools::ALL.iter().map(|tool| tool.name).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool {:?}; this server has {}",
                    request.name,
                    names.join(", ")
                ),
                None,
            ));
        };
        let context = self.call_context();
        let arguments = request.arguments.unwrap_or_default();
        // Tools read files and may use every core: they run on the blocking pool so the
        // runtime keeps reading the connection. A panic in a tool ends only that call.
        let result = tokio::task::spawn_blocking(move || tool.run(&context, arguments)).await;
        Ok(result
            .unwrap_or_else(|error| {
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "internal error in {}: {error}",
                    tool.name
                ))])
            })
            .into())
    }
}

/// Serves MCP on stdin and stdout until the client closes stdin (or the handshake fails).
///
/// Runs its own current-thread runtime; tool calls run on its blocking pool. Nothing but
/// protocol messages is written to stdout.
pub fn serve_stdio(options: ServerOptions) -> Result<(), McpError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(McpError::Runtime)?;
    let result = runtime.block_on(async {
        let service = rmcp::serve_server(Server::new(options), rmcp::transport::stdio())
            .await
            .map_err(|error| McpError::Handshake(error.to_string()))?;
        service
            .waiting()
            .await
            .map_err(|error| McpError::Serve(error.to_string()))?;
        Ok(())
    });
    // A tool call still running when the client went away is abandoned, not waited for.
    runtime.shutdown_background();
    result
}
