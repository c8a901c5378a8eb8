//! `pi-retrospect mcp`: serves the tools of `pi-retrospect-mcp` over stdio until the client
//! closes stdin.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use pi_retrospect_app::{Environment, StoreFlags};
use pi_retrospect_mcp::{LoadLimits, ServerOptions};

pub const MCP_HELP: &str = "\
Runs a Model Context Protocol server on stdin and stdout, for Pi's built-in MCP client or any \
other. Register it with Pi:

  pi mcp add retrospect -- pi-retrospect mcp

Tools (all read-only):
  list_sessions    the sessions of the stores, filtered and sorted (`list --json`)
  session_entries  one session's stored entries in file order, in pages
  inspect_session  checkpoint views of one session: overview, ancestors, children, search, read
  search_sessions  exact search over every session's text, in pages (`search`)
  session_stats    tokens and cost counted the way Pi counts them, grouped (`stats`)
  session_handoff  a bounded, redacted summary of one session to continue from (`handoff`)
  session_failures what failed, where and how often, grouped or in pages (`failures`)

A session path argument must be a session file the stores list. The stores are found as `list` finds them (these \
flags, else $PI_CODING_AGENT_SESSION_DIR, Pi's settings and the default root) and are read \
again on every call. The server writes nothing but protocol messages to stdout and stops when \
stdin closes, once every call it read is answered. A line of a session longer than 64 MiB \
($PI_RETROSPECT_MAX_LINE) is skipped with a warning.

Load: as many calls run at once as the machine has threads; up to 512 more wait in order, and \
one past that is answered with a tool error saying to retry. A call is stopped after \
--call-timeout seconds (30 by default) or when the client cancels it. While the client \
leaves answers unread, the server stops reading requests. A request that reuses the id of one \
not yet answered is answered too, under that id.";

/// Flags of `mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve this store in Pi's default layout (`DIR/--<cwd-slug>--/<stem>.jsonl`) only.
    #[arg(long, value_name = "DIR", help_heading = "Stores")]
    pub sessions_root: Option<PathBuf>,

    /// Pi's custom session directory, served with the default root.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with = "sessions_root",
        help_heading = "Stores"
    )]
    pub session_dir: Option<PathBuf>,

    /// Also serve `sessions-archive/` beside the sessions root.
    #[arg(long, help_heading = "Stores")]
    pub include_archive: bool,

    /// Stop a tool call that runs longer than SECS seconds, answering it with a tool error
    /// that says what to narrow.
    #[arg(long, value_name = "SECS", default_value_t = 30.0, value_parser = parse_call_timeout)]
    pub call_timeout: f64,
}

/// Returns `text` as a positive, finite number of seconds.
fn parse_call_timeout(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 && secs <= 86_400.0 => Ok(secs),
        Ok(_) => Err(format!("{text:?} is not between 0 and 86400 seconds")),
        Err(error) => Err(format!("{text:?} is not a number of seconds: {error}")),
    }
}

/// Serves MCP on stdio with the stores of `args` until stdin closes.
pub fn run(args: &McpArgs, env: &Environment) -> anyhow::Result<()> {
    let stores = StoreFlags {
        sessions_root: args.sessions_root.clone(),
        session_dir: args.session_dir.clone(),
        include_archive: args.include_archive,
    };
    let limits = LoadLimits {
        call_timeout: Duration::from_secs_f64(args.call_timeout),
        ..LoadLimits::default()
    };
    pi_retrospect_mcp::serve_stdio(ServerOptions::new(stores, env.clone()), limits)?;
    Ok(())
}
