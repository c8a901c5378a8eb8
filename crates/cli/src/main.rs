//! The `pi-retrospect` binary: parses flags, calls the application layer, renders the result,
//! and maps the outcome to an exit code. The only crate that touches stdout, stderr, the
//! process environment and exit codes.
//!
//! Exit codes: 0 on success (bad session files are warnings, not failures; a closed pipe such
//! as `| head` also exits 0), 1 when the tool itself fails (a session that cannot be found or
//! read, stdout that cannot be written), 2 on a usage error.

#[macro_use]
mod args;
mod completions;
mod entries;
mod failures;
mod handoff;
mod inspect;
mod list;
mod mcp;
mod output;
mod pick;
mod progress;
mod schema;
mod search;
mod show;
mod stats;
mod term;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use pi_retrospect_app::{AppError, Environment, ErrorKind};

use crate::completions::{COMPLETIONS_HELP, CompletionsArgs, ManArgs};
use crate::entries::{ENTRIES_HELP, EntriesArgs};
use crate::failures::{FAILURES_HELP, FailuresArgs};
use crate::handoff::{HANDOFF_HELP, HandoffArgs};
use crate::inspect::{INSPECT_HELP, InspectArgs};
use crate::list::{LIST_HELP, ListArgs};
use crate::mcp::{MCP_HELP, McpArgs};
use crate::pick::{PICK_HELP, PickArgs};
use crate::schema::SchemaArgs;
use crate::search::{SEARCH_HELP, SearchArgs};
use crate::show::{SHOW_HELP, ShowArgs};
use crate::stats::{STATS_HELP, StatsArgs};

/// Look back over the session history of the Pi coding agent.
#[derive(Debug, Parser)]
#[command(name = "pi-retrospect", version, about, long_about = None)]
#[command(
    after_help = "Exit status: 0 on success (unreadable session files are warnings, not \
errors), 1 when the tool itself fails, 2 on a usage error (a SESSION or entry id that names nothing \
included)."
)]
struct Opts {
    /// What to do.
    #[command(subcommand)]
    command: Command,

    /// Write no warnings or notes to stderr (documents still carry theirs); errors still show.
    #[arg(long, short = 'q', global = true)]
    quiet: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// List every session with its subagent runs nested under it.
    #[command(after_long_help = LIST_HELP, after_help = "See --help for ordering, the two kinds of parent, and examples.")]
    List(Box<ListArgs>),
    /// Print the JSON Schema of a command's --json output.
    Schema(SchemaArgs),
    /// Read one session: its active branch as a transcript, or its whole entry tree.
    #[command(after_long_help = SHOW_HELP)]
    Show(Box<ShowArgs>),
    /// Query one session's checkpoints in bounded pages: overview, ancestors, children, search, read.
    #[command(after_long_help = INSPECT_HELP)]
    Inspect(Box<InspectArgs>),
    /// Print the stored entries of one session file in file order, one row each, for scripts.
    #[command(after_long_help = ENTRIES_HELP)]
    Entries(Box<EntriesArgs>),
    /// Search every session's text at the speed of reading it, without an index.
    #[command(after_long_help = SEARCH_HELP)]
    Search(Box<SearchArgs>),
    /// Count tokens and cost as Pi does, by session, project, model, day, week or month.
    #[command(after_long_help = STATS_HELP)]
    Stats(Box<StatsArgs>),
    /// List what failed across sessions: tool errors, provider errors, aborted and cut-off replies, failed ! commands.
    #[command(after_long_help = FAILURES_HELP)]
    Failures(Box<FailuresArgs>),
    /// Print a bounded, redacted summary of where a session stood, to continue it elsewhere.
    #[command(after_long_help = HANDOFF_HELP)]
    Handoff(Box<HandoffArgs>),
    /// Find a session in a terminal picker and resume it in Pi (or print its path).
    #[command(after_long_help = PICK_HELP)]
    Pick(Box<PickArgs>),
    /// Print a completion script for bash, zsh, fish, elvish or powershell.
    #[command(after_long_help = COMPLETIONS_HELP)]
    Completions(CompletionsArgs),
    /// Write the manual pages into a directory (`cargo xtask man` runs it).
    #[command(hide = true)]
    Man(ManArgs),
    /// Serve the read-only tools over MCP on stdio (for Pi's MCP client and others).
    #[command(after_long_help = MCP_HELP)]
    Mcp(McpArgs),
}

fn main() -> ExitCode {
    let opts = match Opts::try_parse() {
        Ok(opts) => opts,
        Err(error) => {
            // clap prints help and version to stdout (exit 0) and usage errors to stderr (exit 2).
            let code = error.exit_code();
            if let Err(print_error) = error.print()
                && print_error.kind() != io::ErrorKind::BrokenPipe
            {
                // The form of every other failed write (`writing to stdout: No space left on
                // device`).
                let stream = if error.use_stderr() {
                    "stderr"
                } else {
                    "stdout"
                };
                let _ = writeln!(
                    io::stderr(),
                    "pi-retrospect: writing to {stream}: {print_error}"
                );
                return ExitCode::from(1);
            }
            return ExitCode::from(u8::try_from(code).unwrap_or(2));
        }
    };
    let stdout = io::stdout();
    // The MCP server writes stdout from its runtime's threads, so it must stay unlocked.
    let mut out: Box<dyn Write> = match opts.command {
        Command::Mcp(_) => Box::new(io::sink()),
        _ => Box::new(io::BufWriter::new(output::Stdout(stdout.lock()))),
    };
    // A searching command exits as ripgrep does: 1 when nothing matched, 2 on any error, so a
    // script tells "none" from "could not look".
    let is_search = match &opts.command {
        Command::Search(_) | Command::Failures(_) => true,
        Command::Entries(args) => !args.grep.is_empty(),
        Command::Inspect(args) => matches!(args.view, inspect::InspectViewArg::Search { .. }),
        _ => false,
    };
    // `inspect` takes its entry and query as positional arguments, the others as flags.
    let is_inspect = matches!(opts.command, Command::Inspect(_));
    let result = Environment::from_process()
        .map_err(anyhow::Error::from)
        .and_then(|env| run(opts, &env, &mut *out))
        .and_then(|code| out.flush().map(|()| code).map_err(anyhow::Error::from));
    match result {
        Ok(code) => ExitCode::from(code),
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        // The picker was left, or Pi failed and said why itself: no message of ours.
        Err(error) if pick::silent_exit(&error).is_some() => {
            ExitCode::from(pick::silent_exit(&error).unwrap_or(1))
        }
        Err(error) => {
            // The message may carry an id, a path or a settings value from a file or an
            // argument: escaped, so it can never drive the terminal.
            let message =
                pi_retrospect_render::text::terminal_message(&error_text(&error, is_inspect))
                    // A note an error carries (`\nnote: …`, from the application layer) is
                    // printed as every note is.
                    .replace("\nnote: ", "\npi-retrospect: note: ");
            let _ = writeln!(io::stderr(), "pi-retrospect: {message}");
            ExitCode::from(if is_search { 2 } else { exit_code(&error) })
        }
    }
}

/// Runs the command; returns the exit code of a success (0, or 1 for a search that matched
/// nothing: `search`, `failures`, `entries --grep` and `inspect … search`).
fn run(opts: Opts, env: &Environment, out: &mut dyn Write) -> anyhow::Result<u8> {
    output::set_quiet(opts.quiet);
    if let Command::Search(args) = &opts.command {
        let outcome = search::run(args, env, out)?;
        return Ok(if outcome.is_match { 0 } else { 1 });
    }
    let is_found = match &opts.command {
        Command::Failures(args) => Some(failures::run(args, env, out)?),
        Command::Inspect(args) => Some(inspect::run(args, env, out)?),
        Command::Entries(args) => Some(entries::run(args, env, out)?),
        _ => None,
    };
    if let Some(is_found) = is_found {
        return Ok(if is_found { 0 } else { 1 });
    }
    match opts.command {
        Command::Search(_) | Command::Failures(_) | Command::Inspect(_) | Command::Entries(_) => {
            Ok(())
        }
        Command::List(args) => list::run(&args, env, out),
        Command::Show(args) => show::run(&args, env, out),
        Command::Handoff(args) => handoff::run(&args, env, out),
        Command::Stats(args) => stats::run(&args, env, out),
        Command::Pick(args) => pick::run(&args, env, out),
        Command::Mcp(args) => mcp::run(&args, env),
        Command::Schema(args) => schema::run(&args, out),
        Command::Completions(args) => completions::run(&args, out),
        Command::Man(args) => completions::run_man(&args),
    }
    .map(|()| 0)
}

/// Returns the exit code of a failure: 2 for a usage error (a SESSION or entry that names
/// nothing included, so that `failures` and `search` keep 1 for "none found"), 1 for anything
/// else. The one place exit codes are decided.
fn exit_code(error: &anyhow::Error) -> u8 {
    let is_usage = error.chain().any(|cause| {
        cause.downcast_ref::<UsageError>().is_some()
            || cause
                .downcast_ref::<AppError>()
                .is_some_and(|error| matches!(error.kind, ErrorKind::Usage | ErrorKind::NotFound))
    });
    if is_usage { 2 } else { 1 }
}

/// Returns the text of `error` as the CLI writes it: an [`AppError`] about one input names
/// it as the command line spells it (`--since`, `SESSION`).
fn error_text(error: &anyhow::Error, is_inspect: bool) -> String {
    let app_error = error.downcast_ref::<AppError>().or_else(|| match error
        .downcast_ref::<pi_retrospect_pick::PickError>(
    ) {
        Some(pi_retrospect_pick::PickError::App(app_error)) => Some(app_error),
        _ => None,
    });
    match app_error {
        Some(app_error) => app_error.describe(|input| args::input_name(input, is_inspect)),
        None => format!("{error:#}"),
    }
}

/// An error in how the tool was called (a bad flag value); exits 2 like clap's own.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Returns whether `error` is, somewhere in its chain, a write to a closed pipe (`| head`),
/// whether it surfaced as an `io::Error` or inside a `serde_json::Error`.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        let kind = match cause.downcast_ref::<io::Error>() {
            Some(io_error) => Some(io_error.kind()),
            None => cause
                .downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind),
        };
        kind == Some(io::ErrorKind::BrokenPipe)
    })
}
