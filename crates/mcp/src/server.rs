//! The MCP server itself: the handler that lists and dispatches the tools, and the stdio
//! loop that runs it until the client closes its end.

use std::sync::Arc;

use pi_retrospect_app::Progress;
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
use crate::load::{Load, LoadLimits, NoTurn};
use crate::tools;
use crate::transport::BoundedTransport;

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
    /// Set when the call's time budget is spent or the client cancelled it, so that a
    /// search stops scanning instead of holding its slot until it ends.
    pub interrupt: Arc<Progress>,
}

/// The pi-retrospect MCP server: an [`rmcp::ServerHandler`] whose tools are read-only views
/// of Pi's session history.
#[derive(Debug, Clone)]
pub struct Server {
    options: Arc<ServerOptions>,
    load: Arc<Load>,
}

/// The server's self-description; Pi shows its first line next to the server.
const INSTRUCTIONS: &str = "\
Read-only look back over the Pi coding agent's session history: list, read, inspect, \
search, count, find failures in and hand off sessions.
list_sessions: the sessions of the stores, filtered and sorted (oldest first; key on `path`).
session_entries: one session's stored entries in file order.
inspect_session: checkpoint views of one session (overview, ancestors, children, search, read).
search_sessions: exact search over the text of every session (or one).
session_stats: tokens and cost counted the way Pi counts them, grouped.
session_handoff: a bounded, redacted summary of one session to continue from.
session_failures: what failed (tool errors, provider errors, aborted or cut-off replies, `!` \
commands that exited non-zero), where and how often; by signature groups one failure across \
sessions, repeats finds loops. Start a retrospective with session_failures, then open its \
example handles with inspect_session view read.
A tool that reads one session takes a `path` from list_sessions as `sessionPath`; only the \
session files of the stores can be read. Pages are bounded: repeat a call with \
`nextStartLineNo`, `nextCursor` or `nextOffset` to continue.";

impl Server {
    /// Returns a server answering with `options` within the default [`LoadLimits`].
    pub fn new(options: ServerOptions) -> Server {
        Server::with_limits(options, LoadLimits::default())
    }

    /// Returns a server answering with `options` within `limits`.
    pub fn with_limits(options: ServerOptions, limits: LoadLimits) -> Server {
        let load = Arc::new(Load::new(limits));
        Server {
            options: Arc::new(options),
            load,
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
            interrupt: Arc::new(Progress::default()),
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
        request_context: RequestContext<RoleServer>,
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
        let arguments = request.arguments.unwrap_or_default();
        let limits = self.load.limits();
        let slot = tokio::select! {
            turn = self.load.turn() => turn,
            () = request_context.ct.cancelled() => return Ok(cancelled_result(tool.name).into()),
        };
        let slot = match slot {
            Ok(slot) => slot,
            Err(NoTurn::Busy) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "the server is busy: {} calls are already waiting to run; retry this \
                     call ({}) later",
                    limits.max_waiting, tool.name
                ))])
                .into());
            }
        };
        let context = self.call_context();
        let interrupt = Arc::clone(&context.interrupt);
        // Tools read files and may use every core: they run on the blocking pool so the
        // runtime keeps reading the connection. The slot moves into the task and is given
        // back only when the tool returns, so a call answered early (time budget,
        // cancellation) still counts against the running bound until its work has ended
        // (interrupted then: it stops at its next read of a session file).
        let task = tokio::task::spawn_blocking(move || {
            // The reads of this thread stop with the call, so an answered call gives its
            // slot back soon after (a search's workers also watch the interrupt).
            let interrupt = Arc::clone(&context.interrupt);
            let result =
                pi_retrospect_app::until_interrupted(&interrupt, || tool.run(&context, arguments));
            drop(slot);
            result
        });
        let result = tokio::select! {
            joined = task => joined.unwrap_or_else(|error| {
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "internal error in {}: {error}",
                    tool.name
                ))])
            }),
            () = tokio::time::sleep(limits.call_timeout) => {
                interrupt.interrupt();
                timeout_result(tool.name, limits)
            }
            () = request_context.ct.cancelled() => {
                interrupt.interrupt();
                cancelled_result(tool.name)
            }
        };
        Ok(result.into())
    }
}

/// Returns the tool error of a call stopped by its time budget: what to narrow.
fn timeout_result(name: &str, limits: LoadLimits) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "{name} ran longer than its time budget of {} s (pi-retrospect mcp --call-timeout) \
         and was stopped; narrow the request (sessionPath, startTimestamp/endTimestamp, \
         cwds, or a simpler pattern); a lower limit helps only a call that finds much",
        limits.call_timeout.as_secs_f64()
    ))])
}

/// Returns the result of a call the client cancelled (rmcp does not send it).
fn cancelled_result(name: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "{name} was cancelled by the client"
    ))])
}

/// Serves MCP on stdin and stdout until the client closes stdin (or the handshake fails).
///
/// Runs its own current-thread runtime; tool calls run on its blocking pool, within
/// `limits`, and reading stops while too many answers are unwritten. Nothing
/// but protocol messages is written to stdout.
pub fn serve_stdio(options: ServerOptions, limits: LoadLimits) -> Result<(), McpError> {
    // The blocking pool holds the running calls plus stdin's reader and stdout's writer
    // (tokio runs both on it). Left at its default (512), a call that starts while the last
    // one's thread is still returning gets a new thread, and each new thread gets its own
    // malloc arena that keeps a store-sized working set: memory then grows with time even
    // while no more calls run at once.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(limits.max_running.max(1) + 2)
        .build()
        .map_err(McpError::Runtime)?;
    let result = runtime.block_on(async {
        let server = Server::with_limits(options, limits);
        let (stdin, stdout) = rmcp::transport::stdio();
        let transport = BoundedTransport::new(
            rmcp::transport::async_rw::AsyncRwTransport::new_server(stdin, stdout),
            Arc::clone(&server.load),
        );
        let service = rmcp::serve_server(server, transport)
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
