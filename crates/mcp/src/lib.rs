//! The MCP server of pi-retrospect: Pi's session history as read-only tools that an agent
//! (Pi's own, through its built-in MCP client, or any other MCP client) calls over stdio.
//!
//! The server is a thin front end over the application layer (`pi-retrospect-app`) and the
//! presentation layer (`pi-retrospect-render`), like the CLI: each tool decodes its JSON
//! arguments into an application request, calls the application layer, and returns the
//! rendered document as `structuredContent` (validating against the tool's declared
//! `outputSchema`) plus readable text as `content`. The stores are resolved again on every
//! call, from the flags the server was started with, the environment and Pi's settings, so a
//! long-running server sees new sessions and changed settings.
//!
//! The tools (one module each under `tools/`):
//!
//! - `list_sessions`: the sessions index; with `{}` exactly `pi-retrospect list --json`.
//! - `session_entries`: one session's stored entries in file order, in bounded pages.
//! - `inspect_session`: checkpoint views over one session (overview, ancestors, children,
//!   search, read), in bounded pages with cursors.
//!
//! Every tool is read-only and annotated so. A tool that takes a session path reads only
//! the session files the walk of the resolved stores lists (top-level sessions and their
//! runs; [`pi_retrospect_app::confine_to_stores`]). Bad arguments
//! and failures inside a tool are tool error results naming the argument or the file; the
//! server keeps serving after either and stops when its input closes.

#![deny(missing_docs)]

mod args;
mod cursor;
mod error;
mod load;
mod output;
mod schema;
mod server;
mod tools;
mod transport;

pub use error::McpError;
pub use load::{DEFAULT_CALL_TIMEOUT, LoadLimits};
pub use server::{Server, ServerOptions, serve_stdio};
