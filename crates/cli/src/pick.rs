//! `pi-retrospect pick`: flags -> `pi_retrospect_pick::pick` -> the chosen path on stdout, or
//! Pi resuming the session.

use std::io::Write;

use clap::Args;
use pi_retrospect_app::{Environment, ListRequest};
use pi_retrospect_pick::{Outcome, PickOptions};

use crate::args::{ColorChoice, StoreArgs};

pub const PICK_HELP: &str = "\
Opens at once on the sessions started in the current directory, the most recently active \
first as in Pi's /resume (Tab lists \
every project's), then reads every session's name and first message in the background. \
Type to filter by name, first message, cwd and id (fuzzy; words must all match; 'exact, \
^prefix, suffix$ and !not as in fzf). A session's subagent runs show under it: → shows \
them, ← hides them. Ctrl-F searches the sessions' full text for what is typed, as `search` \
does by default, in smart case, and shows on each row found the text around its first match \
(Esc leaves the search). The preview shows the session's times, cwd, models, \
message counts, cost when Pi recorded it and its last messages (no thinking, no tool \
output; terminal controls stripped, credentials redacted). Ctrl-O reads the transcript \
(`show`) in $PAGER (default `less -R`; LESS=R is set when LESS is unset, as git does).

Enter resumes the session: `pi --session PATH`. Pi runs a resumed session in the directory \
it recorded, not the current one, so when that is another directory the picker says so and \
asks: y resumes it there, f forks it into the current directory instead (`pi --fork PATH`: \
a new session with the same history, the old one untouched), n goes back. When the \
session's directory no longer exists, Pi is started here and asks what to do itself. With \
--print, Enter prints the path instead, for the shell (an empty path, when you leave, \
starts nothing): p=$(pi-retrospect pick -p) && pi --session \"$p\". Esc or Ctrl-C leaves.

The picker draws on the terminal itself (/dev/tty), so it works inside $( ); without a \
terminal it refuses (exit 1). NO_COLOR (or TERM=dumb) turns colour off. Nothing is ever written to the \
session store.

Exit status: 0 when a path was printed; 130 when you left without choosing (or on SIGINT); \
143 on SIGTERM; 129 on SIGHUP or when the terminal went away; when a session is resumed, Pi replaces the picker and its exit status is Pi's; 1 (Pi could not be started, \
no terminal) or 2 as for every command.

Examples (the picker needs a terminal, so these run by hand):
  p=$(pi-retrospect pick -p --all) && pi --session \"$p\"
  cd ~/repos/app && pi-retrospect pick";

/// The program that resumes a session.
const PI: &str = "pi";

/// Flags of `pick`.
#[derive(Debug, Args)]
pub struct PickArgs {
    #[command(flatten)]
    pub store: StoreArgs,

    /// Print the chosen session's path and exit instead of resuming it in Pi.
    #[arg(long, short = 'p')]
    pub print: bool,

    /// Start with every project's sessions listed (Tab switches).
    #[arg(long, short = 'a')]
    pub all: bool,

    /// When to use colour (auto: unless NO_COLOR is set or TERM=dumb; the picker draws on the
    /// terminal).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// Neither read nor write the summary cache of names and first messages (as
    /// $PI_RETROSPECT_NO_CACHE does): every body is read whole in the background.
    #[arg(long)]
    pub no_cache: bool,
}

/// The picker ended without an error message to show: exit with this status (130 when the
/// person left).
#[derive(Debug)]
pub struct SilentExit(pub u8);

impl std::fmt::Display for SilentExit {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "exit {}", self.0)
    }
}

impl std::error::Error for SilentExit {}

/// Returns the status to exit with, silently, when `error` is a [`SilentExit`].
pub fn silent_exit(error: &anyhow::Error) -> Option<u8> {
    error.downcast_ref::<SilentExit>().map(|exit| exit.0)
}

/// Runs `pick` with `args`, writing the chosen path (with --print) to `out`.
pub fn run(args: &PickArgs, env: &Environment, out: &mut dyn Write) -> anyhow::Result<()> {
    let options = PickOptions {
        list: ListRequest {
            stores: args.store.flags(),
            no_cache: args.no_cache,
            ..ListRequest::default()
        },
        print: args.print,
        all_projects: args.all,
        paint: pi_retrospect_render::Paint {
            is_on: match args.color {
                ColorChoice::Always => true,
                ColorChoice::Never => false,
                // The picker draws on the terminal itself, whatever stdout is.
                ColorChoice::Auto => crate::term::auto_color(true, &|name| std::env::var_os(name)),
            },
        },
        pager: std::env::var("PAGER")
            .ok()
            .filter(|pager| !pager.trim().is_empty()),
        // As git does: less (and lv) show colours only when told to.
        pager_env: [("LESS", "R"), ("LV", "-c")]
            .into_iter()
            .filter(|(name, _)| std::env::var_os(name).is_none())
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect(),
    };
    match pi_retrospect_pick::pick(&options, env)? {
        Outcome::Chosen(path) => writeln!(out, "{path}")?,
        Outcome::Cancelled => return Err(SilentExit(130).into()),
        Outcome::Interrupted { signal } => {
            let status = u8::try_from(128 + signal).unwrap_or(1);
            return Err(SilentExit(status).into());
        }
        Outcome::TerminalLost => return Err(SilentExit(129).into()),
        // Pi takes the process over (and with it the exit status); this returns only when Pi
        // cannot be started.
        Outcome::Resume { path, cwd, is_fork } => {
            return Err(pi_retrospect_pick::resume(PI, &path, &cwd, is_fork).into());
        }
    }
    Ok(())
}
