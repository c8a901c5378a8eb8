//! Command-line flags, as clap parses them. Resolution into a configuration happens in the
//! command modules.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Look back over the session history of the Pi coding agent.
#[derive(Debug, Parser)]
#[command(name = "pi-retrospect", version, about, long_about = None)]
#[command(
    after_help = "Exit status: 0 on success (unreadable session files are warnings, not \
errors), 1 when the tool itself fails, 2 on a usage error."
)]
pub struct Opts {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every session with its subagent runs nested under it.
    #[command(after_long_help = LIST_HELP)]
    List(ListArgs),
}

const LIST_HELP: &str = "\
Ordering: oldest first. Sessions are sorted by the instant their header timestamp denotes, \
ties broken by path, at every nesting level, so the newest session is the last one and a \
session's subagent runs appear in launch order.

Two meanings of \"parent\": nesting (a subagent run listed under the session that launched it) \
comes only from where the file sits on disk; `parentSessionPath` in --json is the header's \
fork/clone lineage, copied verbatim, and says nothing about nesting.

Files that cannot be read or have no valid session header are never fatal: each is skipped \
with one warning naming its path and the reason, and the exit status stays 0.

Examples:
  pi-retrospect list
  pi-retrospect list --json | jq '.sessions[-1].path'
  pi-retrospect list --sessions-root ~/.pi/agent/sessions";

/// Flags of `list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Sessions root in Pi's default layout (`<root>/--<cwd-slug>--/<stem>.jsonl`).
    /// Default: `$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`.
    #[arg(long, value_name = "DIR")]
    pub sessions_root: Option<PathBuf>,

    /// Print the contract's JSON document `{ "sessions": [...], "warnings": [...] }`.
    #[arg(long)]
    pub json: bool,

    /// Worker threads for the walk (default: one per core).
    #[arg(long, value_name = "N", default_value_t = 0, hide_default_value = true)]
    pub threads: usize,
}
